// The configuration space and the matrix-instruction tiling it predicts.
#include "Tune/Space.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::tune;

TEST(Space, FullSpaceHasEveryPointOnce) {
  GemmSpace s;
  std::vector<GemmTile> pts = s.enumerate();
  EXPECT_EQ(pts.size(), 4u * 4 * 3 * 4 * 3);
  EXPECT_EQ(pts.size(), s.size());
  for (size_t i = 0; i < pts.size(); ++i)
    for (size_t j = i + 1; j < pts.size(); ++j)
      ASSERT_FALSE(pts[i] == pts[j]);
}

TEST(Space, PinRestrictsOneParameter) {
  GemmSpace s;
  EXPECT_TRUE(s.pin("waves", 4));
  EXPECT_FALSE(s.pin("M", 4));
  for (const GemmTile &t : s.enumerate())
    EXPECT_EQ(t.waves, 4);
  EXPECT_NE(s.signature(), GemmSpace{}.signature());
}

TEST(Space, FlagsNameTheRegistryParameters) {
  GemmTile t{128, 64, 32, 4, 2};
  EXPECT_EQ(t.flags(), "-p block_m=128 -p block_n=64 -p block_k=32 -p waves=4 -p stages=2");
  EXPECT_EQ(t.params().at("block_n"), "64");
}

TEST(Space, ShapeClassRoundsUpToPowersOfTwo) {
  EXPECT_EQ(shapeClass({100, 512, 513}), "128x512x1024");
  EXPECT_EQ(shapeClass({1, 2, 3}), "1x2x4");
  EXPECT_EQ(nextPowerOfTwo(4096), 4096);
}

// The rules of lib/Transforms/SelectMatrixInstr.cpp (design.md section 3.1).
TEST(Space, SelectsLargestInstructionThatTiles_gfx942) {
  const TargetInfo &t = *lookupTarget("gfx942");
  auto a = selectMatrixTiling(t, ElemType::BF16, 128, 128, 32, 4);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->instr->name, "v_mfma_f32_32x32x8_bf16");
  EXPECT_EQ(a->wm, 2);
  EXPECT_EQ(a->wn, 2);
  // 32x32 over 4 waves: 32x32 MFMAs cannot, 16x16 ones can (2x2).
  auto b = selectMatrixTiling(t, ElemType::BF16, 32, 32, 16, 4);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->instr->name, "v_mfma_f32_16x16x16_bf16");
  // 32x32 over 8 waves: no grid tiles it.
  EXPECT_FALSE(selectMatrixTiling(t, ElemType::BF16, 32, 32, 32, 8));
  // k = 8 only fits the 32x32x8 instruction, whose tile 32x32 divides.
  auto c = selectMatrixTiling(t, ElemType::BF16, 64, 64, 8, 4);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->instr->m, 32);
}

TEST(Space, NoInstructionForTheTypeGivesNone_gfx90a) {
  EXPECT_FALSE(selectMatrixTiling(*lookupTarget("gfx90a"), ElemType::FP8E4M3FNUZ, 128, 128, 32, 4));
}
