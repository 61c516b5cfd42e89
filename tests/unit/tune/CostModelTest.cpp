// Properties of the cost model (docs/autotuning.md, "Cost model"): one TEST
// per property.
#include "Tune/CostModel.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::tune;

namespace {

const TargetInfo &gfx942() { return *lookupTarget("gfx942"); }
const DevicePeaks &mi300x() { return *devicePeaks("gfx942"); }

CostEstimate modelOf(GemmProblem p, GemmTile t, int perUnit = 1) {
  std::optional<MatrixTiling> tiling = selectMatrixTiling(gfx942(), p.in, t.blockM, t.blockN, t.blockK, t.waves);
  EXPECT_TRUE(tiling);
  return modelGemm(CostInputs{p, t, *tiling, perUnit}, gfx942(), mi300x());
}

GemmProblem gemm(int64_t M, int64_t N, int64_t K) { return {M, N, K, ElemType::BF16, ElemType::F32}; }

} // namespace

TEST(CostModel, PeakMatchesTheDataSheet_gfx942) {
  // docs/hardware.md section 7: 1307.4 TFLOP/s dense bf16 on MI300X.
  EXPECT_NEAR(peakFlops(gfx942(), mi300x(), ElemType::BF16) / 1e12, 1307.4, 0.5);
  EXPECT_NEAR(peakFlops(gfx942(), mi300x(), ElemType::FP8E4M3FNUZ) / 1e12, 2614.9, 1.0);
  EXPECT_NEAR(peakFlops(*lookupTarget("gfx1151"), *devicePeaks("gfx1151"), ElemType::F16) / 1e12, 59.4, 0.1);
}

TEST(CostModel, TimeScalesLinearlyWithK) {
  GemmTile t{128, 128, 32, 4, 2};
  double a = modelOf(gemm(4096, 4096, 4096), t, 2).seconds;
  double b = modelOf(gemm(4096, 4096, 8192), t, 2).seconds;
  EXPECT_NEAR(b / a, 2.0, 0.02);
}

TEST(CostModel, NeverBeatsPeak) {
  for (int64_t s : {64, 512, 4096, 16384})
    for (GemmTile t : {GemmTile{32, 32, 16, 1, 1}, GemmTile{128, 128, 32, 4, 2}, GemmTile{256, 256, 64, 4, 2}}) {
      CostEstimate e = modelOf(gemm(s, s, s), t, 1);
      EXPECT_GT(e.seconds, 0);
      EXPECT_LE(e.pctOfPeak, 100.0);
    }
}

TEST(CostModel, MemoryBoundShapeRunsAtBandwidth) {
  // A skinny GEMM (N = 32) streams all of A once: bandwidth bound.
  GemmProblem p = gemm(65536, 32, 8192);
  GemmTile t{128, 32, 64, 4, 2};
  CostEstimate e = modelOf(p, t, 2);
  EXPECT_TRUE(e.memoryBound);
  const double bytes = double(p.M) * p.K * 2 + double(p.K) * p.N * 2 + double(p.M) * p.N * 4;
  EXPECT_GE(e.seconds, bytes / mi300x().hbmBytesPerSec * 0.999);
  EXPECT_LE(e.seconds, bytes / mi300x().hbmBytesPerSec * 1.5);
  // 2 FLOP per 2-byte element of A for each of N = 32 columns: 32 FLOP/B
  // at 5.3 TB/s is 13% of 1307 TFLOP/s.
  EXPECT_LT(e.pctOfPeak, 15.0);
}

TEST(CostModel, ComputeBoundShapeIsLimitedByMatrixCores) {
  // Large tiles of a large square GEMM: matrix cycles dominate each round.
  CostEstimate e = modelOf(gemm(8192, 8192, 8192), {256, 256, 64, 4, 2}, 1);
  EXPECT_FALSE(e.memoryBound);
  EXPECT_GT(e.computeSeconds, e.memorySeconds);
}

TEST(CostModel, TileThatLeavesUnitsIdleIsPenalised) {
  // M = N = 512: 256x256 tiles give 4 workgroups for 304 CUs, 64x64 give 64.
  GemmProblem p = gemm(512, 512, 4096);
  CostEstimate large = modelOf(p, {256, 256, 32, 4, 2});
  CostEstimate small = modelOf(p, {64, 64, 32, 4, 2});
  EXPECT_EQ(large.workgroups, 4);
  EXPECT_EQ(small.workgroups, 64);
  EXPECT_GT(large.seconds, 2 * small.seconds);
}

TEST(CostModel, OneMoreWorkgroupThanFitsCostsARound) {
  // 304 CUs x 1 resident workgroup: 16 x 19 = 304 tiles run in one round,
  // 5 x 61 = 305 in two.
  GemmTile t{128, 128, 32, 4, 2};
  CostEstimate fits = modelOf(gemm(128 * 16, 128 * 19, 4096), t, 1);
  CostEstimate tail = modelOf(gemm(128 * 5, 128 * 61, 4096), t, 1);
  EXPECT_EQ(fits.rounds, 1);
  EXPECT_EQ(tail.rounds, 2);
  EXPECT_GT(tail.seconds, 1.9 * fits.seconds);
}

TEST(CostModel, MoreResidentWorkgroupsShortenATailHeavyLaunch) {
  GemmTile t{128, 128, 32, 4, 2};
  GemmProblem p = gemm(128 * 608, 128, 4096);
  EXPECT_EQ(modelOf(p, t, 1).rounds, 2);
  EXPECT_EQ(modelOf(p, t, 2).rounds, 1);
}

TEST(CostModel, PipeliningNeverSlowsDown) {
  GemmProblem p = gemm(4096, 4096, 4096);
  for (int waves : {1, 4})
    EXPECT_LE(modelOf(p, {128, 128, 32, waves, 2}).seconds, modelOf(p, {128, 128, 32, waves, 1}).seconds);
}

TEST(CostModel, FewerWavesThanSimdsLeaveMatrixCoresIdle) {
  // One resident 1-wave workgroup uses one of a CU's 4 SIMDs.
  GemmProblem p = gemm(304 * 128, 128, 16384);
  EXPECT_GT(modelOf(p, {128, 128, 32, 1, 2}).computeSeconds, 3.5 * modelOf(p, {128, 128, 32, 4, 2}).computeSeconds);
}

TEST(CostModel, ResidentWorkgroupsFollowRegistersAndLds_gfx942) {
  // 64 VGPR + 64 AGPR: 4 waves/SIMD = 16 waves per CU = 4 workgroups of 4.
  EXPECT_EQ(residentWorkgroups(gfx942(), mi300x(), 64, 64, 0, 4), 4);
  // 40 KiB of LDS: one workgroup per CU.
  EXPECT_EQ(residentWorkgroups(gfx942(), mi300x(), 64, 64, 40960, 4), 1);
  // 512 registers: one wave per SIMD, an 8-wave workgroup does not fit.
  EXPECT_EQ(residentWorkgroups(gfx942(), mi300x(), 256, 256, 0, 8), 0);
}
