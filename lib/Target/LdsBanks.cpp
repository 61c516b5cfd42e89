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
  // The dwords each phase touches (at most 8 phases). One access per lane of
  // at most 16 bytes (5 dwords when unaligned) fits the fixed arrays; anything
  // else takes the heap.
  constexpr size_t kPhases = 8, kFixed = 64 * 5;
  uint32_t fixed[kPhases][kFixed];
  size_t count[kPhases] = {};
  std::vector<uint32_t> spill[kPhases];
  const bool useFixed = n <= 64 && width <= 16;
  for (size_t i = 0; i < n; ++i) {
    int p = ldsPhaseOf(acc[i].lane, width, waveSize);
    uint32_t first = acc[i].offset / 4, last = (acc[i].offset + static_cast<uint32_t>(acc[i].bytes) - 1) / 4;
    for (uint32_t d = first; d <= last; ++d) {
      if (useFixed)
        fixed[p][count[p]++] = d;
      else
        spill[p].push_back(d);
    }
  }
  int64_t extra = 0;
  int perBankFixed[64];
  std::vector<int> perBankHeap(banks > 64 ? banks : 0);
  int *perBank = banks > 64 ? perBankHeap.data() : perBankFixed;
  for (size_t p = 0; p < kPhases; ++p) {
    uint32_t *ds = useFixed ? fixed[p] : spill[p].data();
    size_t m = useFixed ? count[p] : spill[p].size();
    if (m == 0)
      continue;
    std::sort(ds, ds + m);
    m = static_cast<size_t>(std::unique(ds, ds + m) - ds);
    std::fill(perBank, perBank + banks, 0);
    int worst = 0;
    for (size_t i = 0; i < m; ++i)
      worst = std::max(worst, ++perBank[ds[i] % static_cast<uint32_t>(banks)]);
    extra += worst - 1;
  }
  return extra;
}

} // namespace tilec
