// Shared helpers of the emulator tests: an Emulator per target, kernel
// loading and launching, the calculator's layout tables, 16-bit encodings and
// the prelude's fp8 conversions run on the emulator.
#pragma once

#include "Emu/Emulator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tilec::emu::test {

inline std::unique_ptr<Emulator> makeEmulator(const char *arch) {
  const TargetInfo *t = lookupTarget(arch);
  EXPECT_NE(t, nullptr) << arch;
  return std::make_unique<Emulator>(*t);
}

/// Loads `source` (which must include "tilec_prelude.h") or fails the test.
inline std::shared_ptr<KernelImage> loadOrFail(Emulator &emu, const std::string &source, const std::string &name) {
  auto image = emu.load(source, name);
  if (!image) {
    ADD_FAILURE() << llvm::toString(image.takeError());
    return nullptr;
  }
  return *image;
}

inline LaunchReport launchOrFail(Emulator &emu, const KernelImage &k, LaunchConfig cfg, const std::vector<Arg> &args) {
  auto r = emu.launch(k, cfg, args);
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return {};
  }
  return *r;
}

/// cells[lane][element] = (row, col) of the matrix element held there.
struct LayoutTable {
  std::vector<std::vector<std::pair<int, int>>> cells;
};

/// The layout table at `relPath` under tests/data/matrix-layouts: a header
/// line, then per lane its number and cells "A[row][col]" (or B, D). A missing
/// file or a bad cell fails the test.
inline LayoutTable readLayout(const std::string &relPath) {
  std::string path = std::string(TILEC_MATRIX_LAYOUTS_DIR) + "/" + relPath;
  std::ifstream in(path);
  LayoutTable t;
  if (!in) {
    ADD_FAILURE() << "missing layout table " << path << " (tests/data/matrix-layouts)";
    return t;
  }
  std::string line;
  std::getline(in, line);  // header
  std::regex cell(R"(([ABD])\[(\d+)\]\[(\d+)\])");
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    std::stringstream ss(line);
    std::string field;
    std::getline(ss, field, ',');
    int lane = std::stoi(field);
    if ((int)t.cells.size() <= lane)
      t.cells.resize(lane + 1);
    while (std::getline(ss, field, ',')) {
      std::smatch m;
      if (!std::regex_search(field, m, cell)) {
        ADD_FAILURE() << "bad cell '" << field << "' in " << path;
        return t;
      }
      t.cells[lane].push_back({std::stoi(m[2]), std::stoi(m[3])});
    }
  }
  return t;
}

/// The bf16 bits of x, truncated (exact for the values the tests use).
inline uint16_t bf16Bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return (uint16_t)(u >> 16);
}
inline uint16_t f16Bits(float x) {
  _Float16 h = (_Float16)x;
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}

struct Fp8Conversion {
  std::vector<uint8_t> encoded;  ///< from_f32 of each input
  std::vector<float> decoded;    ///< to_f32 of codes 0..255
};

/// Runs the prelude's tl::from_f32<tl::`type`> on `inputs` and tl::to_f32 on
/// every code of `type` (an fp8 type of the prelude, e.g. "fp8e4m3fnuz") on
/// `arch`'s emulator, one wave.
inline Fp8Conversion convertFp8OnEmulator(const char *arch, const std::string &type,
                                          const std::vector<float> &inputs) {
  auto emu = makeEmulator(arch);
  const std::string lanes = std::to_string(lookupTarget(arch)->waveSize);
  const std::string source =
      "#include \"tilec_prelude.h\"\n"
      "extern \"C\" __global__ void cvt(const float *in, unsigned char *out, float *dec, int n) {\n"
      "  for (int i = tl::hw::thread_id(); i < n; i += " + lanes + ") out[i] = tl::from_f32<tl::" + type +
      ">(in[i]).bits;\n"
      "  for (int i = tl::hw::thread_id(); i < 256; i += " + lanes + ") dec[i] = tl::to_f32(tl::" + type +
      "{(unsigned char)i});\n}\n";
  auto k = loadOrFail(*emu, source, "cvt");
  Fp8Conversion r;
  if (!k)
    return r;
  const int n = (int)inputs.size();
  auto *in = (float *)emu->allocate(n * 4);
  auto *out = (uint8_t *)emu->allocate(n);
  auto *dec = (float *)emu->allocate(256 * 4);
  std::copy(inputs.begin(), inputs.end(), in);
  launchOrFail(*emu, *k, {{1, 1, 1}, lookupTarget(arch)->waveSize},
               {Arg::pointer(in), Arg::pointer(out), Arg::pointer(dec), Arg::integer(n)});
  r.encoded.assign(out, out + n);
  r.decoded.assign(dec, dec + 256);
  return r;
}

} // namespace tilec::emu::test
