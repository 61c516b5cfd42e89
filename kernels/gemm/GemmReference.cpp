// The CPU reference of the GEMM problems (gemmProblem, gemmFp8Problem) with
// their error analysis: each tolerance bounds the kernel's f32 accumulation,
// the targets' subnormal flushing and C's rounding.
#include "gemm/GemmReference.h"

#include "gemm/Gemm.h"

#include <algorithm>
#include <cmath>

namespace tilec::kernels {

namespace {
/// Element (i, k) of A and (k, j) of B as `layout` stores them.
struct OperandIndex {
  int64_t M, N, K;
  GemmLayout layout;
  int64_t a(int64_t i, int64_t k) const { return layout.transA ? k * M + i : i * K + k; }
  int64_t b(int64_t k, int64_t j) const { return layout.transB ? j * K + k : k * N + j; }
};
} // namespace

Problem gemmProblem(int64_t M, int64_t N, int64_t K, DType in, DType out, GemmLayout layout) {
  Problem prob;
  prob.tensors = {{"A", in, layout.transA ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}},
                  {"B", in, layout.transB ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}},
                  {"C", out, {M, N}, /*output=*/true}};
  const OperandIndex at{M, N, K, layout};
  // Inputs are exact in their type and their products are exact in f32
  // (8- or 11-bit significands), so the only error is f32 accumulation over K
  // terms, at most K * 2^-24 * sum|a||b| in any summation order, then the
  // rounding of the result to C's type: unit roundoff u = 2^-24 (f32),
  // 2^-8 (bf16).
  // gfx90a's f16/bf16 MFMAs flush subnormal inputs to zero (lib/Target:
  // TargetInfo::matrixFlushes16BitSubnormals), which drops each product with a
  // subnormal factor whole (sum'|a||b| over those), and flush subnormal f32
  // partial sums and results, which moves each of the at most K accumulations
  // by less than 2^-126. On other targets both terms are slack. So
  //   |C - ref| <= (1+u) * (K*2^-24*sum|a||b| + sum'|a||b| + K*2^-126) + u*|ref|.
  const double uOut = out == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
  const double gamma = double(K) * std::ldexp(1.0, -24);
  const double subnormalBelow = in == DType::f16 ? std::ldexp(1.0, -14) : std::ldexp(1.0, -126);
  const double flushedSums = double(K) * std::ldexp(1.0, -126);
  prob.toleranceRule = "|C - ref| <= (1+u)*(K*2^-24*sum|a||b| + sum'|a||b| + K*2^-126) + u*|ref|, sum' over "
                       "products with a subnormal factor (gfx90a flushes them), u = " +
                       std::string(out == DType::bf16 ? "2^-8 (bf16 out)" : "2^-24 (f32 out)");
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &a = v[0], &b = v[1];
    std::vector<double> c(M * N, 0.0), tol(M * N, 0.0), mag(N), flushable(N);
    for (int64_t i = 0; i < M; ++i) {
      double *row = &c[i * N];
      std::fill(mag.begin(), mag.end(), 0.0);
      std::fill(flushable.begin(), flushable.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double aik = a[at.a(i, k)];
        const bool aSubnormal = std::fabs(aik) < subnormalBelow;
        for (int64_t j = 0; j < N; ++j) {
          const double bkj = b[at.b(k, j)], p = aik * bkj;
          row[j] += p;
          mag[j] += std::fabs(p);
          if (aSubnormal || std::fabs(bkj) < subnormalBelow)
            flushable[j] += std::fabs(p);
        }
      }
      for (int64_t j = 0; j < N; ++j)
        tol[i * N + j] = (1 + uOut) * (gamma * mag[j] + flushable[j] + flushedSums) + uOut * std::fabs(row[j]);
    }
    expected = {std::move(c)};
    tolerance = {std::move(tol)};
  };
  return prob;
}

Problem gemmFp8Problem(int64_t M, int64_t N, int64_t K, DType out, float scaleA, float scaleB, DType in,
                       GemmLayout layout) {
  Problem prob = gemmProblem(M, N, K, in, out, layout);
  const OperandIndex at{M, N, K, layout};
  // Kernel arguments: A, B, C, then scale_a, scale_b (buildGemm's order).
  prob.scalars = {{"scale_a", scaleA, 3}, {"scale_b", scaleB, 4}};
  // Inputs are exact in their type and their products are exact in f32:
  // e4m3 formats have 4-bit significands (8-bit products), e5m2 ones 3-bit
  // ones (6-bit products), and every nonzero product lies far inside f32's
  // normal range (e5m2fnuz: 2^-34 <= |a*b| <= 57344^2 < 2^32; OCP e5m2:
  // 2^-32..57344^2; e4m3fnuz: 2^-20..240^2; OCP e4m3: 2^-18..448^2), so
  // accumulation over K terms errs by at most K * 2^-24 * sum|a||b| as for
  // bf16, whichever of the two formats. The kernel then multiplies by scale_a
  // and by scale_b (one f32 rounding each, u = 2^-24) and rounds to C's type
  // (uOut); the three roundings scale everything by at most
  // 1 + eta, eta = (1+u)^2 (1+uOut) - 1, so with S = |scale_a * scale_b|:
  //   |C - S*ref| <= (1+eta) * S * K*2^-24*sum|a||b| + eta * |scale_a*scale_b*ref|.
  const double u = std::ldexp(1.0, -24);
  const double uOut = out == DType::bf16 ? std::ldexp(1.0, -8) : u;
  const double eta = (1 + u) * (1 + u) * (1 + uOut) - 1;
  const double gamma = double(K) * u;
  const double s = double(scaleA) * double(scaleB);
  prob.toleranceRule = "|C - s*ref| <= (1+e)*|s|*K*2^-24*sum|a||b| + e*|s*ref|, s = scale_a*scale_b, "
                       "e = (1+2^-24)^2*(1+u)-1, u = " +
                       std::string(out == DType::bf16 ? "2^-8 (bf16 out)" : "2^-24 (f32 out)");
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &a = v[0], &b = v[1];
    std::vector<double> c(M * N, 0.0), tol(M * N, 0.0), mag(N);
    for (int64_t i = 0; i < M; ++i) {
      double *row = &c[i * N];
      std::fill(mag.begin(), mag.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double aik = a[at.a(i, k)];
        for (int64_t j = 0; j < N; ++j) {
          const double p = aik * b[at.b(k, j)];
          row[j] += p;
          mag[j] += std::fabs(p);
        }
      }
      for (int64_t j = 0; j < N; ++j) {
        row[j] *= s;
        tol[i * N + j] = (1 + eta) * std::fabs(s) * gamma * mag[j] + eta * std::fabs(row[j]);
      }
    }
    expected = {std::move(c)};
    tolerance = {std::move(tol)};
  };
  return prob;
}

Problem gemmBlockScaledProblem(int64_t M, int64_t N, int64_t K, DType out, DType in, GemmLayout layout) {
  constexpr int64_t S = kGemmScaleBlock;
  const int64_t kBlocks = (K + S - 1) / S, nBlocks = (N + S - 1) / S;
  Problem prob = gemmProblem(M, N, K, in, out, layout);
  prob.tensors.push_back({"scale_a", DType::f32, {M, kBlocks}});
  prob.tensors.push_back({"scale_b", DType::f32, {nBlocks, kBlocks}});
  const OperandIndex at{M, N, K, layout};
  // Per k block b the kernel forms P_b = A_b @ B_b in f32 (exact products, so
  // it errs by at most n_b*u*mag_b, n_b <= 128 terms, mag_b = sum|a||b| over
  // the block, u = 2^-24, as gemmProblem's bound), the scale s_b = fl(sa*sb)
  // and adds s_b * P_b to the accumulator in one fused multiply-add: with the
  // scale's rounding at most two roundings per term, (1+u)^2, and the f32 sum
  // of the nb = ceil(K/128) terms errs by at most nb*u*sum_b|term_b| (the
  // bound of a multiply, then an add, so it covers the fused form), and C's
  // rounding by uOut. So, with s_b = scale_a[i,b] * scale_b[j/128,b] exact:
  //   |C - ref| <= (1+uOut) * ((1+u)^2 (1+nb u) * sum_b |s_b| 128 u mag_b
  //                            + ((1+u)^2 (1+nb u) - 1) * sum_b |s_b P_b|) + uOut*|ref|.
  const double u = std::ldexp(1.0, -24);
  const double uOut = out == DType::bf16 ? std::ldexp(1.0, -8) : u;
  const double grow = (1 + u) * (1 + u) * (1 + double(kBlocks) * u);
  prob.toleranceRule = "|C - ref| <= (1+u_C)*((1+u)^2(1+nb u)*sum_b|s_b|*128u*sum_b|a||b| + ((1+u)^2(1+nb u)-1)*"
                       "sum_b|s_b P_b|) + u_C*|ref|, s_b = scale_a*scale_b of k block b, nb = ceil(K/128), u = 2^-24, "
                       "u_C = " + std::string(out == DType::bf16 ? "2^-8 (bf16 out)" : "2^-24 (f32 out)");
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &a = v[0], &b = v[1], &sa = v[3], &sb = v[4];
    std::vector<double> c(M * N, 0.0), tol(M * N, 0.0), blockSum(N), blockMag(N), scaledMag(N), scaledAbs(N);
    for (int64_t i = 0; i < M; ++i) {
      std::fill(scaledMag.begin(), scaledMag.end(), 0.0);
      std::fill(scaledAbs.begin(), scaledAbs.end(), 0.0);
      for (int64_t kb = 0; kb < kBlocks; ++kb) {
        std::fill(blockSum.begin(), blockSum.end(), 0.0);
        std::fill(blockMag.begin(), blockMag.end(), 0.0);
        for (int64_t k = kb * S; k < std::min(K, kb * S + S); ++k) {
          const double aik = a[at.a(i, k)];
          for (int64_t j = 0; j < N; ++j) {
            const double p = aik * b[at.b(k, j)];
            blockSum[j] += p;
            blockMag[j] += std::fabs(p);
          }
        }
        for (int64_t j = 0; j < N; ++j) {
          const double s = sa[i * kBlocks + kb] * sb[(j / S) * kBlocks + kb];
          c[i * N + j] += s * blockSum[j];
          scaledMag[j] += std::fabs(s) * blockMag[j];
          scaledAbs[j] += std::fabs(s * blockSum[j]);
        }
      }
      for (int64_t j = 0; j < N; ++j)
        tol[i * N + j] = (1 + uOut) * (grow * double(S) * u * scaledMag[j] + (grow - 1) * scaledAbs[j]) +
                         uOut * std::fabs(c[i * N + j]);
    }
    expected = {std::move(c)};
    tolerance = {std::move(tol)};
  };
  return prob;
}

} // namespace tilec::kernels
