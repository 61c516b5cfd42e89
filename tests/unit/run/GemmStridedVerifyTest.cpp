// The strided, batched GEMM (GemmConfig::strided: operands with leading
// dimensions, a batch with batch strides) over layout x target, run in the
// CPU wavefront emulator and verified against the CPU reference in double
// precision: each matrix of the batch within gemmProblem's derived tolerance
// (f32 accumulation error K*2^-24*sum|a||b| plus the output's rounding; fp8
// adds the two scale roundings), and C's padding columns and the rows between
// the batch's matrices unchanged, exactly (tolerance 0: the kernel must not
// write them).
//
// Sizes are ragged (not multiples of the tile or of a vector), the leading
// dimensions pad each row by an odd count, and the batch strides leave gaps;
// B shared over the batch (batch stride 0, a weight) and a tight operand next
// to padded ones are covered too.
#include "gemm/Gemm.h"
#include "gemm/GemmReference.h"
#include "RunChecks.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

struct Strides {
  const char *name;
  KernelParams params;  // over M=37 N=21 K=45
  int64_t batch;
};
const Strides kStrides[] = {
    // A in rows of 51 elements, B of 50, C of 24: slices of bigger matrices.
    {"padded", {{"lda", "51"}, {"ldb", "50"}, {"ldc", "24"}}, 1},
    // Three matrices, gaps of 2 rows between them (A, C), B one weight for the batch.
    {"batched",
     {{"batch", "3"}, {"lda", "47"}, {"ldc", "23"}, {"batch_stride_a", "47"}, {"batch_stride_b", "0"},
      {"batch_stride_c", "39"}},
     3},
};

using Case = std::tuple<std::string, std::string, int>;  // arch, layout, strides case

class GemmStridedVerify : public ::testing::TestWithParam<Case> {};

TEST_P(GemmStridedVerify, RaggedPaddedBatched) {
  const auto &[arch, layout, which] = GetParam();
  const Strides &s = kStrides[which];
  KernelParams p = s.params;
  p.insert({{"M", "37"}, {"N", "21"}, {"K", "45"}, {"layout", layout}, {"out", which ? "bf16" : "f32"}});
  Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, runcheck::emulatorOn(arch, 23));
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_NE(r->kernel.name.find("_strided"), std::string::npos) << r->kernel.name;
  // Every element of C's buffer is checked: the products and the untouched rest.
  const int64_t ldc = std::stoll(p.at("ldc")), rows = s.batch == 1 ? 37 : 2 * 39 + 37;
  EXPECT_EQ(r->elements, rows * ldc);
  runcheck::expectVerifiedAndClean(*r);
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + kStrides[std::get<2>(info.param)].name;
}

INSTANTIATE_TEST_SUITE_P(AllTargets, GemmStridedVerify,
                         ::testing::Combine(::testing::Values("gfx942", "gfx90a", "gfx1151", "sm_90a"),
                                            ::testing::Values("nn", "nt", "tn", "tt"), ::testing::Values(0, 1)),
                         caseName);

// Sizes and leading dimensions that are multiples of 8 elements (16 bytes of
// bf16): the kernel assumes it (no `_div` in its name), so the operands'
// windows are read with 16-byte loads, which the emulator checks are inside
// the windows and aligned. K = 72 ends in a partial k step and M, N are below
// one tile: the loads at the windows' edges are still bounded by them.
class GemmStridedVectorVerify : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(GemmStridedVectorVerify, AlignedPaddedBatched) {
  const auto &[arch, layout] = GetParam();
  KernelParams p = {{"M", "40"},  {"N", "48"},  {"K", "72"},  {"layout", layout},    {"lda", "88"},
                    {"ldb", "104"}, {"ldc", "56"}, {"batch", "2"}, {"batch_stride_a", "75"}, {"batch_stride_b", "0"}};
  Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, runcheck::emulatorOn(arch, 31));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NE(r->kernel.name.find("_strided"), std::string::npos) << r->kernel.name;
  EXPECT_EQ(r->kernel.name.find("_div"), std::string::npos) << r->kernel.name;
  runcheck::expectVerifiedAndClean(*r);
}

INSTANTIATE_TEST_SUITE_P(AllTargets, GemmStridedVectorVerify,
                         ::testing::Combine(::testing::Values("gfx942", "gfx90a", "gfx1151", "sm_90a"),
                                            ::testing::Values("nn", "nt", "tn", "tt")),
                         [](const auto &info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// fp8 with its scales, batched and padded (gfx942 only has fp8).
TEST(GemmStridedVerifyFp8, BatchedPaddedWithScales) {
  KernelParams p = {{"M", "19"},         {"N", "33"},        {"K", "70"},          {"layout", "nt"},
                    {"dtype", "fp8"},    {"out", "bf16"},    {"scale_a", "0.5"},   {"scale_b", "3"},
                    {"batch", "2"},      {"lda", "75"},      {"ldb", "73"},        {"ldc", "40"},
                    {"batch_stride_c", "21"}};
  Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, runcheck::emulatorOn("gfx942", 29));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
}

// Bad strides get one clear error before anything runs.
TEST(GemmStridedParams, Rejected) {
  const KernelInfo &gemm = *findKernel("gemm");
  auto problemError = [&](KernelParams p) {
    p.insert({{"M", "8"}, {"N", "8"}, {"K", "8"}});
    Result<Problem> prob = gemm.problem(p);
    return prob ? std::string() : prob.error();
  };
  EXPECT_NE(problemError({{"lda", "7"}}).find("parameter 'lda' must be an integer in [8,"), std::string::npos);
  EXPECT_NE(problemError({{"batch", "2"}, {"batch_stride_c", "7"}}).find("would overlap"), std::string::npos);
  EXPECT_NE(problemError({{"batch", "2"}, {"split_k", "2"}}).find("split_k=1"), std::string::npos);
  EXPECT_NE(problemError({{"ldb", "9"}, {"strided", "0"}}).find("strided=0"), std::string::npos);
  Result<Kernel> k = gemm.build({{"batch", "2"}, {"split_k", "2"}});
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().find("split_k=1"), std::string::npos) << k.error();
}

// Tight operands keep the contiguous kernel (same name, so the same code).
TEST(GemmStridedParams, TightIsTheContiguousKernel) {
  const KernelInfo &gemm = *findKernel("gemm");
  Result<Kernel> tight = gemm.build({{"lda", "tight"}, {"batch", "1"}});
  ASSERT_TRUE(tight.ok()) << tight.error();
  EXPECT_EQ(tight->name(), "gemm_bf16_f32_128x128x32_w4_s2");
  Result<Kernel> strided = gemm.build({{"strided", "1"}});
  ASSERT_TRUE(strided.ok()) << strided.error();
  EXPECT_EQ(strided->name(), "gemm_bf16_f32_128x128x32_w4_s2_strided");
}

// The strided kernel assumes what the sizes and leading dimensions given are
// multiples of (up to 16 bytes), at most `divisibility`; the sizes bounding
// its windows are i32 arguments that carry it, and the launch checks them.
TEST(GemmStridedParams, DivisibilityFromSizesAndStrides) {
  const KernelInfo &gemm = *findKernel("gemm");
  auto name = [&](KernelParams p) {
    Result<Kernel> k = gemm.build(p);
    return k.ok() ? k->name() : k.error();
  };
  // A's rows pitched by 4100 (a multiple of 4), B tight with N = 4096.
  EXPECT_EQ(name({{"lda", "4100"}}), "gemm_bf16_f32_128x128x32_w4_s2_strided_div4x8");
  EXPECT_EQ(name({{"lda", "4101"}}), "gemm_bf16_f32_128x128x32_w4_s2_strided_div1x8");
  EXPECT_EQ(name({{"strided", "1"}, {"divisibility", "2"}}), "gemm_bf16_f32_128x128x32_w4_s2_strided_div2x2");
  EXPECT_EQ(name({{"divisibility", "1"}}), "gemm_bf16_f32_128x128x32_w4_s2_div1x1");
  // Layout nn: K bounds A's rows, N B's; M bounds neither.
  Result<Kernel> k = gemm.build({{"lda", "4104"}, {"N", "4092"}});
  ASSERT_TRUE(k.ok()) << k.error();
  EXPECT_EQ(k->name(), "gemm_bf16_f32_128x128x32_w4_s2_strided_div8x4");
  Result<std::string> ir = tileIR(*k);
  ASSERT_TRUE(ir.ok()) << ir.error();
  EXPECT_NE(ir->find(": i32 {tile.name = \"M\"}"), std::string::npos) << ir->substr(0, 800);
  EXPECT_NE(ir->find(": i32 {tile.divisibility = 4 : i64, tile.name = \"N\"}"), std::string::npos);
  EXPECT_NE(ir->find(": i32 {tile.divisibility = 8 : i64, tile.name = \"K\"}"), std::string::npos);
}

}  // namespace
