// The shipped GEMM over its operand layouts (-p layout=nn|nt|tn|tt) x input
// type x target, run in the CPU wavefront emulator and verified against the
// CPU reference in double precision (kernels/gemm/GemmReference.cpp: gemmProblem's
// derived tolerance, f32 accumulation error K*2^-24*sum|a||b| plus the
// output's rounding; fp8/bf8 add the two scale roundings).
//
// Each case runs two small shapes: one whose inner extents are all multiples
// of 16 bytes' worth of elements but not of the 128 x 128 x 32 block (the
// kernel moves 16-byte runs and transposes blocks of them on the way into
// LDS, partial tiles at every edge), and one of odd sizes (element-wise
// global loads, ragged everywhere), plus a skinny problem under split-K.
// Output types alternate with the input type so that both appear on every
// target and layout.
#include "gemm/GemmReference.h"
#include "RunChecks.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

struct Shape {
  int64_t m, n, k, splitK = 1;
};
// The third is a skinny problem under split-K: 7 k steps of 32 over 3 slices
// (3, 3 and 1 steps), partial sums in f32, then the fixed-order reduction.
const Shape kShapes[] = {{48, 80, 64}, {37, 21, 45}, {16, 40, 200, 3}};

using Case = std::tuple<std::string, std::string, std::string>;  // arch, layout, dtype

class GemmLayoutVerify : public ::testing::TestWithParam<Case> {};

TEST_P(GemmLayoutVerify, SmallShapes) {
  const auto &[arch, layout, dtype] = GetParam();
  const bool eightBit = dtype == "fp8" || dtype == "bf8";
  const std::string out = dtype == "bf16" || dtype == "bf8" ? "bf16" : "f32";
  for (const Shape &s : kShapes) {
    KernelParams p = {{"M", std::to_string(s.m)}, {"N", std::to_string(s.n)}, {"K", std::to_string(s.k)},
                      {"layout", layout},         {"dtype", dtype},            {"out", out}};
    if (s.splitK > 1)
      p["split_k"] = std::to_string(s.splitK);
    if (eightBit) {
      p["scale_a"] = "0.5";
      p["scale_b"] = "3";
    }
    SCOPED_TRACE("M=" + p["M"] + " N=" + p["N"] + " K=" + p["K"] + " split_k=" + std::to_string(s.splitK));
    Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, runcheck::emulatorOn(arch, 17));
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->elements, s.m * s.n);
    runcheck::expectVerifiedAndClean(*r);
  }
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + std::get<2>(info.param);
}

const auto kLayouts = ::testing::Values("nn", "nt", "tn", "tt");

INSTANTIATE_TEST_SUITE_P(Gfx942, GemmLayoutVerify,
                         ::testing::Combine(::testing::Values("gfx942"), kLayouts,
                                            ::testing::Values("bf16", "f16", "fp8", "bf8")),
                         caseName);
INSTANTIATE_TEST_SUITE_P(Others, GemmLayoutVerify,
                         ::testing::Combine(::testing::Values("gfx90a", "gfx1151", "sm_90a"), kLayouts,
                                            ::testing::Values("bf16", "f16")),
                         caseName);

}  // namespace
