#include "Target/LdsBanks.h"

#include <algorithm>
#include <vector>

namespace tilec {

int ldsPhaseOf(int l, int bytes, int waveSize) {
  // b128 groups within each 32 lanes: {0-3,20-23} {4-7,16-19} {8-11,28-31} {12-15,24-27}.
  auto b128Group = [](int q) { return q < 16 ? q / 4 : ((q - 16) / 4) ^ 1; };
  if (waveSize == 64) {
    if (bytes <= 4)
      return l / 32;                        // 2 x 32
    if (bytes <= 8)
      return l / 16;                        // 4 x 16, contiguous
    return 2 * b128Group(l % 32) + l / 32;  // 8 x 8
  }
  if (bytes <= 4)
    return 0;                // 1 x 32
  if (bytes <= 8)
    return l / 16;           // 2 x 16
  return b128Group(l % 32);  // 4 x 8
}

int64_t ldsConflictCycles(const LdsLaneAccess *acc, size_t n, int waveSize, int banks) {
  int width = 0;
  for (size_t i = 0; i < n; ++i)
    width = std::max(width, acc[i].bytes);
  // dwords touched per phase (at most 8 phases)
  std::vector<uint32_t> dwords[8];
  for (size_t i = 0; i < n; ++i) {
    int p = ldsPhaseOf(acc[i].lane, width, waveSize);
    uint32_t first = acc[i].offset / 4, last = (acc[i].offset + static_cast<uint32_t>(acc[i].bytes) - 1) / 4;
    for (uint32_t d = first; d <= last; ++d)
      dwords[p].push_back(d);
  }
  int64_t extra = 0;
  std::vector<int> perBank(banks);
  for (auto &ds : dwords) {
    if (ds.empty())
      continue;
    std::sort(ds.begin(), ds.end());
    ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
    std::fill(perBank.begin(), perBank.end(), 0);
    int worst = 0;
    for (uint32_t d : ds)
      worst = std::max(worst, ++perBank[d % banks]);
    extra += worst - 1;
  }
  return extra;
}

} // namespace tilec
