// Layout conversions chosen by tilec-infer-layouts, run in the CPU emulator
// on every target and compared with double precision: a GEMM whose
// accumulator (a matrix instruction's layout) takes a [64, 1] row scale and a
// [1, 64] bias loaded as plain tiles, each read into the accumulator's layout
// through LDS, and is summed down its columns into a blocked tile, read into
// that layout through LDS (tests/lit/Inputs/dsl-gemm-bias.cpp). M, N and K
// are not multiples of the tiles, so the conversions see rows and columns
// past the end too.
#include "Registry.h"
#include "Run.h"
#include "RunChecks.h"

#include "tilec/dsl.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

namespace gemm_bias {
#include "../../lit/Inputs/dsl-gemm-bias.cpp"
} // namespace gemm_bias

using namespace tilec;
using namespace tilec::kernels;

namespace {

constexpr double kU = 0x1p-24;  // f32 unit roundoff

const char *const kTargets[] = {"gfx942", "gfx90a", "gfx1151", "sm_90a"};

KernelInfo gemmBiasInfo(int64_t M, int64_t N, int64_t K) {
  KernelInfo info;
  info.name = "gemm_scale_bias";
  info.build = [](const KernelParams &) -> Result<Kernel> {
    Kernel k = gemm_bias::kernel();
    if (!k.ok())
      return Error{k.error()};
    return k;
  };
  info.problem = [M, N, K](const KernelParams &) -> Result<Problem> {
    Problem p;
    p.tensors.push_back({"A", DType::f16, {M, K}});
    p.tensors.push_back({"B", DType::f16, {K, N}});
    p.tensors.push_back({"C", DType::f32, {M, N}, /*output=*/true});
    p.tensors.push_back({"row_scale", DType::f32, {M, 1}});
    p.tensors.push_back({"bias", DType::f32, {1, N}});
    p.tensors.push_back({"colsum", DType::f32, {(M + 63) / 64, N}, /*output=*/true});
    // P = (sum_k a b) s, C = P + bias. f16 products are exact in f32; K of
    // them summed in any order err by at most (K - 1) u sum |a b| (first
    // order), the product with s adds u and the sum with the bias u of the
    // result. A column sum adds at most 63 u of the sum of |P| over its 64
    // rows (rows past M hold 0) to the K u of each term.
    p.toleranceRule = "|C - ref| <= (K + 1) u |s| sum_k |a b| + u (|ref| + |bias|); "
                      "|colsum - ref| <= (K + 64) u sum_rows |s| sum_k |a b|";
    p.reference = [M, N, K](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                            std::vector<std::vector<double>> &tolerance) {
      const std::vector<double> &a = v[0], &b = v[1], &s = v[3], &bias = v[4];
      const int64_t blocks = (M + 63) / 64;
      std::vector<double> c(M * N), tol(M * N), sums(blocks * N, 0.0), sumTol(blocks * N, 0.0);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double sum = 0, mag = 0;
          for (int64_t k = 0; k < K; ++k) {
            sum += a[i * K + k] * b[k * N + j];
            mag += std::fabs(a[i * K + k] * b[k * N + j]);
          }
          const double ref = sum * s[i] + bias[j];
          c[i * N + j] = ref;
          sums[(i / 64) * N + j] += sum * s[i];
          sumTol[(i / 64) * N + j] += double(K + 64) * kU * std::fabs(s[i]) * mag;
          tol[i * N + j] = double(K + 1) * kU * std::fabs(s[i]) * mag + kU * (std::fabs(ref) + std::fabs(bias[j]));
        }
      expected = {std::move(c), std::move(sums)};
      tolerance = {std::move(tol), std::move(sumTol)};
    };
    return p;
  };
  return info;
}

class LayoutConversion : public ::testing::TestWithParam<int> {};

TEST_P(LayoutConversion, ConvertsThroughLdsAndVerifies) {
  const char *arch = kTargets[GetParam()];
  const int64_t M = 100, N = 90, K = 70;
  Result<RunResult> r = runAndVerify(gemmBiasInfo(M, N, K), {}, runcheck::emulatorOn(arch, /*seed=*/5));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  EXPECT_EQ(r->elements, M * N + (M + 63) / 64 * N);
  // The three conversions go through their own LDS tiles, named for the report.
  int conversions = 0;
  for (const LdsTileReport &t : r->kernel.report.ldsTiles)
    conversions += t.role == "conversion";
  EXPECT_EQ(conversions, 3);
  EXPECT_NE(r->kernel.hip.find("tl::copy_from_lds(t_bias_r_as_acc, t_bias_r_cvt)"), std::string::npos) << r->kernel.hip;
}

INSTANTIATE_TEST_SUITE_P(Targets, LayoutConversion, ::testing::Range(0, int(std::size(kTargets))),
                         [](const ::testing::TestParamInfo<int> &info) { return std::string(kTargets[info.param]); });

} // namespace
