// Loads through a window of a tensor that declares divisibility move 16 bytes
// when the window's column origin and width are multiples of 8 elements
// (tilec-allocate-lds follows tile.window to the tensor): O = X_h @ W per head
// h of a [rows, heads * 64] bf16 tensor, one head per workgroup column. Run in
// the emulator (whose vector buffer load rejects a misaligned access) on
// ragged row counts, against a CPU reference.
#include "Registry.h"
#include "Run.h"
#include "RunChecks.h"

#include "tilec/dsl.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

using namespace tilec;
using namespace tilec::kernels;
using namespace tilec::dsl;

namespace {

constexpr int64_t BM = 64, D = 64, N = 64, kHeads = 3;

Result<Kernel> buildHeadGemm() {
  KernelBuilder kb("head_gemm", {.numWaves = 4});
  Tensor X = kb.tensor("X", DType::bf16, 2, {.divisibility = 8});  // [rows, heads * D]
  Tensor W = kb.tensor("W", DType::bf16, 2, {.divisibility = 8});  // [D, N]
  Tensor O = kb.tensor("O", DType::f32, 2);                        // [rows, heads * N]
  kb.grid({GridExtent::ceilDiv(X, 0, BM), GridExtent::fixed(kHeads)});
  Index row = kb.blockId(0) * BM, h = kb.blockId(1);
  Tensor Xh = kb.window(X, {Index(0), h * D}, {X.dim(0), Index(D)});
  Tensor Oh = kb.window(O, {Index(0), h * N}, {O.dim(0), Index(N)});
  Tile x = kb.ldsTile("x", {BM, D}, DType::bf16);
  Tile w = kb.ldsTile("w", {D, N}, DType::bf16);
  Tile o = kb.regTile("o", {BM, N}, DType::f32);
  kb.load(Xh, {row, 0}, x);
  kb.load(W, {0, 0}, w);
  kb.fill(o, 0.0);
  kb.gemm(x, w, o);
  kb.store(o, Oh, {row, 0});
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

Problem headGemmProblem(int64_t rows) {
  Problem prob;
  prob.tensors = {{"X", DType::bf16, {rows, kHeads * D}},
                  {"W", DType::bf16, {D, N}},
                  {"O", DType::f32, {rows, kHeads * N}, /*output=*/true}};
  // bf16 inputs are exact in f32; the only error is f32 accumulation over D
  // products: at most D * 2^-24 * sum |x w|.
  prob.toleranceRule = "D*2^-24*sum_k|x_k w_k|";
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const auto &x = v[0], &w = v[1];
    std::vector<double> out(rows * kHeads * N), tol(rows * kHeads * N);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t h = 0; h < kHeads; ++h)
        for (int64_t n = 0; n < N; ++n) {
          double s = 0, mag = 0;
          for (int64_t k = 0; k < D; ++k) {
            double p = x[r * kHeads * D + h * D + k] * w[k * N + n];
            s += p;
            mag += std::fabs(p);
          }
          out[r * kHeads * N + h * N + n] = s;
          tol[r * kHeads * N + h * N + n] = double(D) * std::ldexp(1.0, -24) * mag;
        }
    expected = {std::move(out)};
    tolerance = {std::move(tol)};
  };
  return prob;
}

TEST(WindowVectorLoad, HeadWindowsLoadSixteenBytes) {
  KernelInfo info;
  info.name = "head_gemm";
  info.build = [](const KernelParams &) { return buildHeadGemm(); };
  for (const char *arch : {"gfx942", "gfx1151"})
    for (int64_t rows : {1, 100, 128}) {
      SCOPED_TRACE(std::string(arch) + " rows=" + std::to_string(rows));
      info.problem = [rows](const KernelParams &) -> Result<Problem> { return headGemmProblem(rows); };
      Result<RunResult> r = runAndVerify(info, {}, runcheck::emulatorOn(arch, /*seed=*/7));
      ASSERT_TRUE(r.ok()) << r.error();
      runcheck::expectVerifiedAndClean(*r);
      // Both tiles load 16 bytes per lane: X through its head window.
      const std::string &ir = r->kernel.tileIR;
      for (const char *tile : {"x", "w"})
        EXPECT_TRUE(std::regex_search(
            ir, std::regex(std::string(R"(tile\.alloc \{access = #tile\.access<load = 8[,>][^\n]*name = ")") + tile + "\"")))
            << tile << "\n" << ir;
      EXPECT_NE(r->kernel.hip.find(", 8>(t_x, "), std::string::npos) << r->kernel.hip;
    }
}

} // namespace
