// A register tile as a gemm operand (the shape of attention's P @ V):
// O = bf16(A @ B) @ W. The second gemm's A operand is a bf16 register tile in
// the first gemm's accumulator layout; tilec-infer-layouts converts it
// through LDS. Run in the emulator on ragged shapes and compared with a CPU
// reference that rounds A @ B to bf16 the same way.
#include "Registry.h"
#include "Run.h"

#include "tilec/dsl.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace tilec;
using namespace tilec::kernels;
using namespace tilec::dsl;

namespace {

constexpr int64_t BM = 64, BK = 32, N1 = 64, N2 = 64;

Result<Kernel> buildChained() {
  KernelBuilder kb("chained_gemm", {.numWaves = 4});
  Tensor A = kb.tensor("A", DType::bf16, 2);  // [M, K]
  Tensor B = kb.tensor("B", DType::bf16, 2);  // [K, N1]
  Tensor W = kb.tensor("W", DType::bf16, 2);  // [N1, N2]
  Tensor O = kb.tensor("O", DType::f32, 2);   // [M, N2]
  kb.grid({GridExtent::ceilDiv(O, 0, BM)});
  Index row = kb.blockId(0) * BM;
  Tile a = kb.ldsTile("a", {BM, BK}, DType::bf16);
  Tile b = kb.ldsTile("b", {BK, N1}, DType::bf16);
  Tile w = kb.ldsTile("w", {N1, N2}, DType::bf16);
  Tile s = kb.regTile("s", {BM, N1}, DType::f32);
  Tile p = kb.regTile("p", {BM, N1}, DType::bf16);
  Tile o = kb.regTile("o", {BM, N2}, DType::f32);
  // S[64,64] = A[64,K] @ B[K,64]
  kb.fill(s, 0.0);
  kb.forLoop(0, cdiv(A.dim(1), BK), 1, {.numStages = 2}, [&](Index kt) {
    kb.load(A, {row, kt * BK}, a);
    kb.load(B, {kt * BK, 0}, b);
    kb.gemm(a, b, s);
  });
  // P = bf16(S); O[64,64] = P[64,64] @ W[64,64]
  kb.copy(s, p);
  kb.load(W, {0, 0}, w);
  kb.fill(o, 0.0);
  kb.gemm(p, w, o);
  kb.store(o, O, {row, 0});
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

double bf16Round(double x) {
  uint16_t bits;
  storeElement(DType::bf16, &bits, 0, x);
  return loadElement(DType::bf16, &bits, 0);
}

Problem chainedProblem(int64_t M, int64_t K) {
  Problem prob;
  prob.tensors = {{"A", DType::bf16, {M, K}},
                  {"B", DType::bf16, {K, N1}},
                  {"W", DType::bf16, {N1, N2}},
                  {"O", DType::f32, {M, N2}, /*output=*/true}};
  // S is exact in the reference; the kernel's S carries f32 accumulation
  // error e <= K*2^-24*sum|a||b|, which can move its bf16 rounding by one ulp
  // (2^-7 relative) plus e. The second gemm adds N1*2^-24*sum|p||w|.
  prob.toleranceRule = "sum_j (2^-7|S_j| + 2 e_j)|W_jn| + N1*2^-24*sum_j|P_j W_jn| + 2^-24|O|";
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const auto &a = v[0], &b = v[1], &w = v[2];
    std::vector<double> out(M * N2), tol(M * N2);
    for (int64_t i = 0; i < M; ++i) {
      std::vector<double> S(N1, 0), E(N1, 0), P(N1);
      for (int64_t j = 0; j < N1; ++j) {
        double mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          S[j] += a[i * K + k] * b[k * N1 + j];
          mag += std::fabs(a[i * K + k] * b[k * N1 + j]);
        }
        E[j] = double(K) * std::ldexp(1.0, -24) * mag;
        P[j] = bf16Round(S[j]);
      }
      for (int64_t n = 0; n < N2; ++n) {
        double o = 0, t = 0, mag = 0;
        for (int64_t j = 0; j < N1; ++j) {
          o += P[j] * w[j * N2 + n];
          t += (std::ldexp(std::fabs(S[j]), -7) + 2 * E[j]) * std::fabs(w[j * N2 + n]);
          mag += std::fabs(P[j] * w[j * N2 + n]);
        }
        out[i * N2 + n] = o;
        tol[i * N2 + n] = t + double(N1) * std::ldexp(1.0, -24) * mag + std::ldexp(std::fabs(o), -24);
      }
    }
    expected = {std::move(out)};
    tolerance = {std::move(tol)};
  };
  return prob;
}

TEST(ChainedGemm, RegisterOperandThroughLds) {
  KernelInfo info;
  info.name = "chained_gemm";
  info.build = [](const KernelParams &) { return buildChained(); };
  for (const char *arch : {"gfx942", "gfx90a", "gfx1151"})
    for (auto [M, K] : {std::pair<int64_t, int64_t>{1, 1}, {100, 33}, {129, 64}}) {
      SCOPED_TRACE(std::string(arch) + " M=" + std::to_string(M) + " K=" + std::to_string(K));
      info.problem = [M = M, K = K](const KernelParams &) -> Result<Problem> { return chainedProblem(M, K); };
      RunOptions o;
      o.compile.arch = arch;
      o.device = DeviceKind::Emulator;
      Result<RunResult> r = runAndVerify(info, {}, o);
      ASSERT_TRUE(r.ok()) << r.error();
      EXPECT_TRUE(r->passed()) << r->verifiedLine() << "\n"
                               << (r->firstMismatches.empty() ? "" : r->firstMismatches[0]) << "\n"
                               << r->stats.checksLine();
      // The conversion: an LDS tile for P and a copy into it before the gemm.
      EXPECT_NE(r->kernel.tileIR.find("name = \"p.lds\""), std::string::npos) << r->kernel.tileIR;
    }
}

} // namespace
