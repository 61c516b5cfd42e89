// Pruning against the target's budgets, before compiling.
#include "Tune/Prune.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::tune;

namespace {
const TargetInfo &gfx942() { return *lookupTarget("gfx942"); }
const DevicePeaks &mi300x() { return *devicePeaks("gfx942"); }
GemmProblem big() { return {4096, 4096, 4096, ElemType::BF16, ElemType::F32}; }
PruneReason verdict(GemmTile t, GemmProblem p = big()) {
  return prune(t, p, GemmSpace{}, gfx942(), mi300x()).reason;
}
} // namespace

TEST(Prune, KeepsTheDefaultGemm_gfx942) {
  PruneVerdict v = prune({128, 128, 32, 4, 2}, big(), GemmSpace{}, gfx942(), mi300x());
  EXPECT_EQ(v.reason, PruneReason::Kept) << v.detail;
  ASSERT_TRUE(v.tiling);
  EXPECT_EQ(v.tiling->instr->name, "v_mfma_f32_32x32x8_bf16");
  EXPECT_GE(v.estimatedWorkgroupsPerUnit, 1);
}

TEST(Prune, LdsBoundAllowsPaddingPerRow) {
  // 128x32 + 32x128 bf16 = 16 KiB; 160 rows x 16 B padding; 2 stages.
  EXPECT_EQ(ldsBytesBound({128, 128, 32, 4, 2}, ElemType::BF16), (16384 + 160 * 16) * 2);
}

TEST(Prune, RemovesOverLdsBudget_gfx942) {
  // 256x64 + 64x256 bf16 = 64 KiB per stage: two stages cannot fit.
  EXPECT_EQ(verdict({256, 256, 64, 8, 2}), PruneReason::Lds);
  EXPECT_EQ(verdict({256, 128, 64, 8, 3}), PruneReason::Lds);
  // 256x32 + 32x256 bf16 over 2 stages is exactly 64 KiB without padding
  // (and compiles in 65,536 bytes): kept, for the compiled report to judge.
  EXPECT_EQ(ldsBytesLowerBound({256, 256, 32, 8, 2}, ElemType::BF16), 65536);
  EXPECT_EQ(verdict({256, 256, 32, 8, 2}), PruneReason::Kept);
  // The same tile with fewer stages fits.
  EXPECT_EQ(verdict({256, 128, 32, 8, 1}), PruneReason::Kept);
}

TEST(Prune, RemovesOverRegisterBudget_gfx942) {
  // 256x256 f32 over one wave of 64 lanes: 1024 accumulators per lane.
  EXPECT_EQ(accumulatorsPerLane({256, 256, 16, 1, 1}, gfx942()), 1024);
  EXPECT_EQ(verdict({256, 256, 16, 1, 1}), PruneReason::Registers);
  // 256 per lane leaves no room (measured: it spills on gfx942); 128 fits.
  EXPECT_EQ(verdict({256, 256, 16, 4, 1}), PruneReason::Registers);
  EXPECT_EQ(verdict({256, 256, 16, 8, 1}), PruneReason::Kept);
}

TEST(Prune, RegisterRoomIsSmallerWithoutAgprs_gfx1151) {
  // wave32: 128x128 over 2 waves = 256 per lane; no AGPRs leaves 256 - 32.
  PruneVerdict v = prune({128, 128, 32, 2, 1}, big(), GemmSpace{}, *lookupTarget("gfx1151"),
                         *devicePeaks("gfx1151"));
  EXPECT_EQ(v.reason, PruneReason::Registers) << v.detail;
}

TEST(Prune, RemovesTilesNoInstructionCanTile_gfx942) {
  EXPECT_EQ(verdict({32, 32, 32, 8, 1}), PruneReason::MatrixTiling);
}

TEST(Prune, RemovesTilesMuchLargerThanTheProblem) {
  GemmProblem small{100, 4096, 4096, ElemType::BF16, ElemType::F32};
  EXPECT_EQ(verdict({256, 128, 32, 4, 2}, small), PruneReason::ProblemShape);
  EXPECT_EQ(verdict({128, 128, 32, 4, 2}, small), PruneReason::Kept);
  // The smallest block the space offers always stays, however small the problem.
  GemmProblem tiny{4, 4, 4, ElemType::BF16, ElemType::F32};
  EXPECT_EQ(verdict({32, 32, 16, 4, 1}, tiny), PruneReason::Kept);
  EXPECT_EQ(verdict({64, 32, 16, 4, 1}, tiny), PruneReason::ProblemShape);
}

TEST(Prune, EveryKeptPointFitsEveryBudget_gfx942) {
  GemmSpace s;
  size_t kept = 0;
  for (const GemmTile &t : s.enumerate()) {
    PruneVerdict v = prune(t, big(), s, gfx942(), mi300x());
    if (v.reason != PruneReason::Kept)
      continue;
    ++kept;
    EXPECT_LE(ldsBytesLowerBound(t, ElemType::BF16), gfx942().ldsBytesPerWorkgroup);
    EXPECT_LE(accumulatorsPerLane(t, gfx942()) + kRegisterReserve, 256);
    EXPECT_TRUE(v.tiling);
  }
  EXPECT_GT(kept, 50u);
  EXPECT_LT(kept, s.size());
}
