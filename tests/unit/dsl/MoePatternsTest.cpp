// IR-level proof of what mixture-of-experts kernels need: rows gathered through
// an index tensor (the token permutation), a constant grid axis, and an i32
// scalar argument used as an index.
#include "TileIR.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::dsl;

namespace {

constexpr int64_t kBlockTokens = 64;
constexpr int64_t kBlockK = 32;
constexpr int64_t kBlockN = 128;

// Y[sorted rows] = X[sorted_ids[...]] @ W[expert]: one expert's up-projection over
// the tokens routed to it, read in place through the permutation.
Kernel moeGatherKernel() {
  KernelBuilder kb("moe_gather_probe");
  Tensor X = kb.tensor("X", DType::bf16, 2);          // [tokens, hidden]
  Tensor ids = kb.tensor("sorted_ids", DType::i32, 1); // [routed rows]
  Tensor W = kb.tensor("W", DType::bf16, 2);          // [hidden, inter]
  Tensor Y = kb.tensor("Y", DType::bf16, 2);          // [routed rows, inter]
  Index firstExpertRow = kb.scalarI32("expert_offset");
  kb.grid({GridExtent::ceilDiv(ids, 0, kBlockTokens), GridExtent::ceilDiv(W, 1, kBlockN),
           GridExtent::fixed(8)});
  Index rows = firstExpertRow + kb.blockId(0) * kBlockTokens;
  Index col = kb.blockId(1) * kBlockN;
  Tile x = kb.ldsTile("x", {kBlockTokens, kBlockK}, DType::bf16);
  Tile w = kb.ldsTile("w", {kBlockK, kBlockN}, DType::bf16);
  Tile acc = kb.regTile("acc", {kBlockTokens, kBlockN}, DType::f32);
  kb.fill(acc, 0.0);
  kb.forLoop(0, cdiv(X.dim(1), kBlockK), 1, {.numStages = 2}, [&](Index kt) {
    Index k = kt * kBlockK;
    // x[64,32] = X[sorted_ids[rows + r], k + j]
    kb.gather(X, ids, rows, k, x);
    kb.load(W, {k, col}, w);
    kb.gemm(x, w, acc);
  });
  kb.store(acc, Y, {rows, col});
  return kb.finish();
}

TEST(MoePatterns, RowGatherThroughAnIndexTensorVerifies) {
  Kernel k = moeGatherKernel();
  ASSERT_TRUE(test::verifies(k));
  EXPECT_TRUE(test::containsInOrder(
      test::text(k),
      // %arg0..4 are X, sorted_ids, W, Y, expert_offset; %3, %4, %5 the tiles x, w, acc.
      {"func.func @moe_gather_probe(%arg0: memref<?x?xbf16> {tile.name = \"X\"}, "
       "%arg1: memref<?xi32> {tile.name = \"sorted_ids\"}, %arg2: memref<?x?xbf16> {tile.name = \"W\"}, "
       "%arg3: memref<?x?xbf16> {tile.name = \"Y\"}, %arg4: i32 {tile.name = \"expert_offset\"})",
       "tile.grid = [array<i64: 1, 0, 64>, array<i64: 2, 1, 128>, array<i64: -1, 0, 8>]",
       "%0 = arith.index_cast %arg4 : i32 to index",
       "scf.for %arg5 = %c0 to ",
       "tile.gather %arg0[%arg1[%", "] -> %3 : memref<?x?xbf16>, memref<?xi32>, "
                                   "!tile.tile<64x32xbf16, lds>",
       "tile.load %arg2[", "tile.gemm %3, %4, %5", "tile.store %5 -> %arg3["}));
  ASSERT_EQ(k.args().size(), 5u);
  EXPECT_EQ(k.args()[1].kind, ArgKind::Tensor);
  EXPECT_EQ(k.args()[1].dtype, DType::i32);
  EXPECT_EQ(k.args()[1].rank, 1);
  EXPECT_EQ(k.args()[4].kind, ArgKind::I32);
  ASSERT_EQ(k.grid().size(), 3u);
  EXPECT_EQ(k.grid()[2].arg, -1);
  EXPECT_EQ(k.grid()[2].tile, 8);
}

} // namespace
