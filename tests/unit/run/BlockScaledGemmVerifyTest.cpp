// Block-scaled fp8 GEMM (-p scaling=block, the DeepSeek-V3 recipe): one f32
// scale per 1 x 128 group of A's rows and per 128 x 128 block of B, applied
// to each k block's product before it joins the f32 accumulator. Run in the
// CPU wavefront emulator on gfx942 (fnuz fp8) and sm_90a (OCP fp8), on token
// counts 1, 7 and 333 with K and N ragged against the 128 of a scale block,
// against gemmBlockScaledProblem's derived tolerance (random scales in
// [-1, 1), so a scale read from the wrong block shows); and the combinations
// the kernel refuses, each with its reason.
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

// Tokens 1, 7, 333; N and K within one scale block, across blocks, ragged.
const Shape kShapes[] = {{1, 1, 1}, {7, 31, 64}, {333, 200, 300}, {130, 256, 384}};

using Case = std::tuple<std::string, std::string, std::string, std::string>;  // arch, dtype, out, layout

class GemmVerifyBlockScaled : public ::testing::TestWithParam<Case> {};

TEST_P(GemmVerifyBlockScaled, RaggedShapes) {
  const auto &[arch, dtype, out, layout] = GetParam();
  RunOptions o;
  o.compile.arch = arch;
  o.device = DeviceKind::Emulator;
  o.seed = 5;
  for (const Shape &s : kShapes) {
    SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
    const KernelParams p = {{"M", std::to_string(s.m)}, {"N", std::to_string(s.n)}, {"K", std::to_string(s.k)},
                            {"dtype", dtype},           {"out", out},               {"layout", layout},
                            {"scaling", "block"}};
    Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, o);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_NE(r->kernel.name.find("_blockscaled"), std::string::npos) << r->kernel.name;
    EXPECT_GT(r->kernel.report.matrixInstructions, 0);
    EXPECT_EQ(r->kernel.report.scratchBytes, 0);
    EXPECT_EQ(r->mismatches, 0) << r->verifiedLine() << "\n"
                                << (r->firstMismatches.empty() ? "" : r->firstMismatches[0]);
    EXPECT_EQ(r->elements, s.m * s.n);
    EXPECT_EQ(r->stats.outOfBounds, 0) << r->stats.checksLine();
    EXPECT_EQ(r->stats.races, 0) << r->stats.checksLine();
    EXPECT_TRUE(r->passed());
  }
}

INSTANTIATE_TEST_SUITE_P(Emulator, GemmVerifyBlockScaled,
                         ::testing::Values(Case{"gfx942", "fp8", "bf16", "nt"}, Case{"gfx942", "bf8", "f32", "nn"},
                                           Case{"sm_90a", "e4m3", "bf16", "nt"},
                                           Case{"sm_90a", "e5m2", "f32", "tn"}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::get<2>(info.param) + "_" + std::get<3>(info.param);
                         });

/// The build's error for `extra` laid over a block-scaled e4m3 GEMM on sm_90a.
std::string buildError(const KernelParams &extra) {
  KernelParams p = {{"dtype", "e4m3"}, {"scaling", "block"}, {"layout", "nt"}};
  for (const auto &[k, v] : extra)
    p[k] = v;
  const KernelInfo &info = *findKernel("gemm");
  Result<Kernel> k = info.build(withTargetDefaults(info, p, "sm_90a"));
  return k.ok() ? std::string("(built)") : k.error();
}

TEST(GemmBlockScaled, RefusesWhatItCannotScale) {
  EXPECT_NE(buildError({{"dtype", "bf16"}}).find("scaling=block needs 8-bit operands"), std::string::npos);
  EXPECT_NE(buildError({{"block_n", "256"}}).find("block_k and block_n dividing 128"), std::string::npos);
  EXPECT_NE(buildError({{"block_k", "96"}}).find("block_k and block_n dividing 128"), std::string::npos);
  EXPECT_NE(buildError({{"split_k", "2"}, {"M", "16"}}).find("without split-K"), std::string::npos);
  EXPECT_NE(buildError({{"lda", "5000"}}).find("contiguous operands"), std::string::npos);
  const Result<Problem> withScalars =
      findKernel("gemm")->problem({{"dtype", "e4m3"}, {"scaling", "block"}, {"scale_a", "2"}});
  ASSERT_FALSE(withScalars.ok());
  EXPECT_NE(withScalars.error().find("scale_a and scale_b are tensors"), std::string::npos) << withScalars.error();
}

TEST(GemmBlockScaled, ScaleTensorsFollowC) {
  const Result<Problem> p = findKernel("gemm")->problem(
      {{"dtype", "e4m3"}, {"scaling", "block"}, {"M", "333"}, {"N", "200"}, {"K", "300"}});
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_EQ(p->tensors.size(), 5u);
  EXPECT_EQ(p->tensors[3].name, "scale_a");
  EXPECT_EQ(p->tensors[3].shape, (std::vector<int64_t>{333, 3}));
  EXPECT_EQ(p->tensors[4].name, "scale_b");
  EXPECT_EQ(p->tensors[4].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(p->scalars.empty());
}

} // namespace
