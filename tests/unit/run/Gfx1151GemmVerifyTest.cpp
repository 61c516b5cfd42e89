// The shipped GEMM on gfx1151 (RDNA 3.5, wave32 WMMA 16x16x16, docs/hardware.md
// section 2), run in the CPU wavefront emulator and verified against the CPU
// reference on the ragged shapes of GemmVerifyTest.cpp, for both input types
// and both output types. The emulator checks that lanes l and l+16 hold
// identical WMMA operands (an invalid instruction otherwise, which fails
// passed()); the tolerance is the GEMM problem's own (kernels/gemm/GemmReference.cpp).
#include "Run.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

struct Shape {
  int64_t m, n, k;
};

// The shapes of GemmVerifyTest.cpp: every size of {1, 7, 31, 64, 100, 257} in
// every position; none a multiple of the 128x128x32 block except 64.
const Shape kShapes[] = {{1, 1, 1},     {7, 31, 64},   {31, 257, 7},  {64, 64, 64},
                         {100, 7, 257}, {257, 100, 31}, {1, 257, 100}, {257, 1, 1}};

using Case = std::tuple<std::string, std::string>;  // dtype, out

class GemmVerifyGfx1151 : public ::testing::TestWithParam<Case> {};

KernelParams params(const Shape &s, const Case &c) {
  return {{"M", std::to_string(s.m)},
          {"N", std::to_string(s.n)},
          {"K", std::to_string(s.k)},
          {"dtype", std::get<0>(c)},
          {"out", std::get<1>(c)}};
}

void expectVerified(const KernelParams &p) {
  RunOptions o;
  o.compile.arch = "gfx1151";
  o.device = DeviceKind::Emulator;
  o.seed = 42;
  Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->kernel.waveSize, 32);
  EXPECT_EQ(r->mismatches, 0) << r->verifiedLine() << "\n" << (r->firstMismatches.empty() ? "" : r->firstMismatches[0]);
  EXPECT_EQ(r->elements, std::stoll(p.at("M")) * std::stoll(p.at("N")));
  EXPECT_TRUE(r->stats.checked);
  EXPECT_EQ(r->stats.outOfBounds, 0) << r->stats.checksLine();
  EXPECT_EQ(r->stats.races, 0) << r->stats.checksLine();
  EXPECT_FALSE(r->stats.deadlock);
  EXPECT_TRUE(r->stats.messages.empty()) << r->stats.messages[0];  // e.g. an invalid WMMA
  EXPECT_TRUE(r->passed());
}

TEST_P(GemmVerifyGfx1151, RaggedShapes) {
  for (const Shape &s : kShapes) {
    SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
    expectVerified(params(s, GetParam()));
  }
}

TEST_P(GemmVerifyGfx1151, Square512) { expectVerified(params({512, 512, 512}, GetParam())); }

INSTANTIATE_TEST_SUITE_P(Emulator, GemmVerifyGfx1151,
                         ::testing::Combine(::testing::Values("bf16", "f16"), ::testing::Values("f32", "bf16")),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return "gfx1151_" + std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

} // namespace
