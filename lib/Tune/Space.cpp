#include "Tune/Space.h"

#include <algorithm>
#include <cmath>

namespace tilec::tune {

std::map<std::string, std::string> GemmTile::params() const {
  std::map<std::string, std::string> p = {{"block_m", std::to_string(blockM)},
                                          {"block_n", std::to_string(blockN)},
                                          {"block_k", std::to_string(blockK)},
                                          {"waves", std::to_string(waves)},
                                          {"stages", std::to_string(stages)}};
  if (splitK > 1)
    p["split_k"] = std::to_string(splitK);
  return p;
}

std::string GemmTile::flags() const {
  return "-p block_m=" + std::to_string(blockM) + " -p block_n=" + std::to_string(blockN) +
         " -p block_k=" + std::to_string(blockK) + " -p waves=" + std::to_string(waves) +
         " -p stages=" + std::to_string(stages) + (splitK > 1 ? " -p split_k=" + std::to_string(splitK) : "");
}

const std::vector<std::string> &gemmTuningParams() {
  static const std::vector<std::string> names = {"block_m", "block_n", "block_k", "waves", "stages", "split_k"};
  return names;
}

std::vector<GemmTile> GemmSpace::enumerate() const {
  std::vector<GemmTile> out;
  out.reserve(size());
  for (int64_t bm : blockM)
    for (int64_t bn : blockN)
      for (int64_t bk : blockK)
        for (int w : waves)
          for (int s : stages)
            for (int sk : splitK)
              out.push_back(GemmTile{bm, bn, bk, w, s, sk});
  return out;
}

size_t GemmSpace::size() const {
  return blockM.size() * blockN.size() * blockK.size() * waves.size() * stages.size() * splitK.size();
}

std::string GemmSpace::signature() const {
  std::string s;
  auto list = [&](const char *name, const auto &values) {
    s += (s.empty() ? "" : ";") + std::string(name) + "=";
    for (size_t i = 0; i < values.size(); ++i)
      s += (i ? "," : "") + std::to_string(values[i]);
  };
  list("block_m", blockM);
  list("block_n", blockN);
  list("block_k", blockK);
  list("waves", waves);
  list("stages", stages);
  if (splitK != std::vector<int>{1})
    list("split_k", splitK);
  return s;
}

bool GemmSpace::pin(const std::string &name, int64_t value) {
  if (name == "block_m") blockM = {value};
  else if (name == "block_n") blockN = {value};
  else if (name == "block_k") blockK = {value};
  else if (name == "waves") waves = {static_cast<int>(value)};
  else if (name == "stages") stages = {static_cast<int>(value)};
  else if (name == "split_k") splitK = {static_cast<int>(value)};
  else return false;
  return true;
}

int64_t nextPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

std::string shapeClass(const GemmProblem &p) {
  return std::to_string(nextPowerOfTwo(p.M)) + "x" + std::to_string(nextPowerOfTwo(p.N)) + "x" +
         std::to_string(nextPowerOfTwo(p.K));
}

} // namespace tilec::tune
