// OCP fp8 GEMM on sm_90a: -p dtype=e4m3 and -p dtype=e5m2 (docs/hardware.md
// section 8) through mma.sync.aligned.m16n8k32, run in the CPU wavefront
// emulator on ragged shapes in every layout with non-trivial per-tensor
// scales, C = scale_a * scale_b * (A @ B), against the fp8 problem's derived
// tolerance (kernels/gemm/GemmReference.cpp, gemmFp8Problem). The kernel's name says which
// instruction type it was built for; its matrix instructions are counted.
#include "gemm/GemmReference.h"
#include "Run.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

struct Shape {
  int64_t m, n, k;
};

const Shape kShapes[] = {{1, 1, 1}, {7, 31, 64}, {31, 257, 7}, {100, 7, 257}, {130, 65, 96}};

using Case = std::tuple<std::string, std::string, std::string>;  // dtype, out, layout

class GemmVerifyOcpFp8 : public ::testing::TestWithParam<Case> {};

TEST_P(GemmVerifyOcpFp8, RaggedShapesWithScales) {
  const auto &[dtype, out, layout] = GetParam();
  RunOptions o;
  o.compile.arch = "sm_90a";
  o.device = DeviceKind::Emulator;
  o.seed = 11;
  for (const Shape &s : kShapes) {
    SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
    const KernelParams p = {{"M", std::to_string(s.m)}, {"N", std::to_string(s.n)}, {"K", std::to_string(s.k)},
                            {"dtype", dtype},           {"out", out},               {"layout", layout},
                            {"scale_a", "0.375"},       {"scale_b", "-2.5"}};
    Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, o);
    ASSERT_TRUE(r.ok()) << r.error();
    const std::string prefix = "gemm_" + (layout == "nn" ? std::string() : layout + "_") + dtype + "_" + out + "_";
    EXPECT_EQ(r->kernel.name.rfind(prefix, 0), 0u) << r->kernel.name;
    EXPECT_GT(r->kernel.report.matrixInstructions, 0);
    EXPECT_EQ(r->mismatches, 0) << r->verifiedLine() << "\n"
                                << (r->firstMismatches.empty() ? "" : r->firstMismatches[0]);
    EXPECT_EQ(r->elements, s.m * s.n);
    EXPECT_EQ(r->stats.outOfBounds, 0) << r->stats.checksLine();
    EXPECT_EQ(r->stats.races, 0) << r->stats.checksLine();
    EXPECT_TRUE(r->stats.messages.empty()) << r->stats.messages[0];
    EXPECT_TRUE(r->passed());
  }
}

INSTANTIATE_TEST_SUITE_P(Emulator, GemmVerifyOcpFp8,
                         ::testing::Values(Case{"e4m3", "f32", "nn"}, Case{"e4m3", "bf16", "nt"},
                                           Case{"e5m2", "f32", "tn"}, Case{"e5m2", "bf16", "tt"}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return "sm_90a_" + std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::get<2>(info.param);
                         });

} // namespace
