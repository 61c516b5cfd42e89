// IR-level proofs of what attention kernels need from the DSL: online-softmax
// rescaling and a causal loop whose trip count depends on the block index.
#include "TileIR.h"

#include "Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::dsl;

namespace {

constexpr int64_t kBlockM = 64;  // query rows per workgroup
constexpr int64_t kBlockN = 64;  // keys per step
constexpr int64_t kHeadDim = 128;

// One attention head: O = softmax(Q K^T * scale) V, flash-style (one pass over
// K/V with a running row max m and row sum l).
Kernel onlineSoftmaxKernel() {
  KernelBuilder kb("attn_fwd_probe", {.numWaves = 4});
  Tensor Q = kb.tensor("Q", DType::bf16, 2); // [seq_q, D]
  Tensor K = kb.tensor("K", DType::bf16, 2); // [seq_k, D]
  Tensor V = kb.tensor("V", DType::bf16, 2); // [seq_k, D]
  Tensor O = kb.tensor("O", DType::f32, 2);  // [seq_q, D]
  Scalar scaleLog2e = kb.scalarF32("scale_log2e");
  kb.grid({GridExtent::ceilDiv(Q, 0, kBlockM)});
  Index row = kb.blockId(0) * kBlockM;

  Tile q = kb.ldsTile("q", {kBlockM, kHeadDim}, DType::bf16);
  Tile k = kb.ldsTile("k", {kBlockN, kHeadDim}, DType::bf16);
  Tile v = kb.ldsTile("v", {kBlockN, kHeadDim}, DType::bf16);
  Tile p = kb.ldsTile("p", {kBlockM, kBlockN}, DType::bf16);
  Tile s = kb.regTile("s", {kBlockM, kBlockN}, DType::f32);
  Tile acc = kb.regTile("acc", {kBlockM, kHeadDim}, DType::f32);
  Tile m = kb.regTile("m", {kBlockM}, DType::f32);
  Tile mOld = kb.regTile("m_old", {kBlockM}, DType::f32);
  Tile l = kb.regTile("l", {kBlockM}, DType::f32);
  Tile alpha = kb.regTile("alpha", {kBlockM}, DType::f32);

  kb.fill(m, -INFINITY);
  kb.fill(l, 0.0);
  kb.fill(acc, 0.0);
  kb.load(Q, {row, 0}, q);
  kb.forLoop(0, cdiv(K.dim(0), kBlockN), 1, {.numStages = 2, .name = "j"}, [&](Index j) {
    Index key = j * kBlockN;
    kb.load(K, {key, 0}, k);
    kb.load(V, {key, 0}, v);
    // S[64,64] = Q[64,128] @ K[64,128]^T * scale*log2(e)
    kb.fill(s, 0.0);
    kb.gemm(q, k, s, {.transposeB = true});
    kb.scale(s, s, scaleLog2e);
    // m_new = max(m_old, rowmax(S))
    kb.copy(m, mOld);
    kb.reduce(ReduceKind::max, s, m, {.axis = 1, .accumulate = true});
    // P = exp2(S - m_new)                       (m broadcast along each row)
    kb.subExp2(s, s, m);
    // l = l * exp2(m_old - m_new) + rowsum(P)
    kb.subExp2(alpha, mOld, m);
    kb.mul(l, l, alpha);
    kb.reduce(ReduceKind::sum, s, l, {.accumulate = true});
    // acc[64,128] = acc * alpha (per row) + P[64,64] @ V[64,128]
    kb.mul(acc, acc, alpha);
    kb.copy(s, p);
    kb.gemm(p, v, acc);
  });
  // O = acc / l (per row)
  kb.div(acc, acc, l);
  kb.store(acc, O, {row, 0});
  return kb.finish();
}

TEST(AttentionPatterns, OnlineSoftmaxRescalingVerifies) {
  Kernel k = onlineSoftmaxKernel();
  ASSERT_TRUE(test::verifies(k));
  // Values in the printed IR: %1 q, %2 k, %3 v, %4 p, %5 s, %6 acc, %7 m,
  // %8 m_old, %9 l, %10 alpha; %arg3 O, %arg4 scale_log2e.
  const std::string ir = test::text(k);
  EXPECT_TRUE(test::containsInOrder(
      ir, {"tile.fill %7, 0xFFF0000000000000 : !tile.tile<64xf32, reg>", // -inf
           "scf.for %arg5 = ",
           "tile.gemm %1, %2, %5 {transpose_b} : !tile.tile<64x128xbf16, lds>, "
           "!tile.tile<64x128xbf16, lds>, !tile.tile<64x64xf32, reg>",
           "tile.map scale %5, %5 scalar(%arg4) : !tile.tile<64x64xf32, reg>, "
           "!tile.tile<64x64xf32, reg>",
           "tile.copy %7 -> %8",
           "tile.reduce max %5 -> %7 {accumulate, axis = 1 : i64} : !tile.tile<64x64xf32, reg>, "
           "!tile.tile<64xf32, reg>",
           "tile.map sub_exp2 %5, %5, %7 : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, "
           "!tile.tile<64xf32, reg>",
           "tile.map sub_exp2 %10, %8, %7 : !tile.tile<64xf32, reg>, "
           "!tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>",
           "tile.map mul %9, %9, %10",
           "tile.reduce sum %5 -> %9 {accumulate, axis = 1 : i64}",
           "tile.map mul %6, %6, %10 : !tile.tile<64x128xf32, reg>, "
           "!tile.tile<64x128xf32, reg>, !tile.tile<64xf32, reg>",
           "tile.copy %5 -> %4 : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xbf16, lds>",
           "tile.gemm %4, %3, %6 : ",
           "} {tile.num_stages = 2 : i64}",
           "tile.map div %6, %6, %9",
           "tile.store %6 -> %arg3["}));
  // Row broadcasts: no broadcast_cols anywhere.
  EXPECT_EQ(test::count(ir, "broadcast_cols"), 0);
}

TEST(AttentionPatterns, RowRescaleIsARowBroadcastInTheVerifiedIR) {
  Kernel k = onlineSoftmaxKernel();
  test::TileIR ir;
  auto module = ir.build(k);
  ASSERT_TRUE(module) << ir.diagnostics();
  int rowBroadcasts = 0;
  module->walk([&](tile::MapOp op) {
    auto dst = mlir::cast<tile::TileType>(op.getDest().getType());
    if (op.getInputs().size() == 2 && dst.getRank() == 2 &&
        mlir::cast<tile::TileType>(op.getInputs()[1].getType()).getRank() == 1) {
      EXPECT_FALSE(op.getBroadcastCols());
      ++rowBroadcasts;
    }
  });
  EXPECT_EQ(rowBroadcasts, 3); // P = exp2(S - m), acc *= alpha, acc /= l
}

// ub = min(cdiv(seq_k, BN), cdiv((bid + 1) * BM, BN)): a query block sees only
// the key blocks at or before its last row.
Kernel causalKernel() {
  KernelBuilder kb("causal_probe");
  Tensor Q = kb.tensor("Q", DType::bf16, 2);
  Tensor K = kb.tensor("K", DType::bf16, 2);
  Tensor O = kb.tensor("O", DType::f32, 2);
  kb.grid({GridExtent::ceilDiv(Q, 0, kBlockM)});
  Index bid = kb.blockId(0);
  Tile q = kb.ldsTile("q", {kBlockM, kHeadDim}, DType::bf16);
  Tile k = kb.ldsTile("k", {kBlockN, kHeadDim}, DType::bf16);
  Tile s = kb.regTile("s", {kBlockM, kBlockN}, DType::f32);
  Tile rowSum = kb.regTile("row_sum", {kBlockM}, DType::f32);
  kb.load(Q, {bid * kBlockM, 0}, q);
  kb.fill(rowSum, 0.0);
  Index numKeyBlocks = min(cdiv(K.dim(0), kBlockN), cdiv((bid + 1) * kBlockM, kBlockN));
  kb.forLoop(0, numKeyBlocks, 1, [&](Index j) {
    kb.load(K, {j * kBlockN, 0}, k);
    kb.fill(s, 0.0);
    kb.gemm(q, k, s, {.transposeB = true});
    kb.reduce(ReduceKind::sum, s, rowSum, {.accumulate = true});
  });
  kb.store(rowSum, O, {bid * kBlockM, 0});
  return kb.finish();
}

TEST(AttentionPatterns, CausalLoopBoundDependsOnTheBlockIndex) {
  Kernel k = causalKernel();
  ASSERT_TRUE(test::verifies(k));
  EXPECT_TRUE(test::containsInOrder(
      // %arg1 is K, %0 the block id.
      test::text(k), {"%dim = memref.dim %arg1, %c0", "arith.ceildivui %dim, %c64",
                      "arith.addi %0, %c1", "arith.muli", "arith.ceildivui", "arith.minui",
                      "scf.for %arg3 = %c0 to %"}));

  // The loop's upper bound, traced through the verified IR.
  test::TileIR ir;
  auto module = ir.build(k);
  ASSERT_TRUE(module) << ir.diagnostics();
  mlir::scf::ForOp loop;
  module->walk([&](mlir::scf::ForOp f) { loop = f; });
  ASSERT_TRUE(loop);
  EXPECT_FALSE(loop->hasAttr(tile::attr::kNumStages)); // numStages = 1 is the default
  auto minOp = loop.getUpperBound().getDefiningOp<mlir::arith::MinUIOp>();
  ASSERT_TRUE(minOp);
  auto keyBlocks = minOp.getLhs().getDefiningOp<mlir::arith::CeilDivUIOp>();
  auto causalBlocks = minOp.getRhs().getDefiningOp<mlir::arith::CeilDivUIOp>();
  ASSERT_TRUE(keyBlocks && causalBlocks);
  EXPECT_TRUE(keyBlocks.getLhs().getDefiningOp<mlir::memref::DimOp>());
  auto lastRow = causalBlocks.getLhs().getDefiningOp<mlir::arith::MulIOp>();
  ASSERT_TRUE(lastRow);
  auto next = lastRow.getLhs().getDefiningOp<mlir::arith::AddIOp>();
  ASSERT_TRUE(next);
  EXPECT_TRUE(next.getLhs().getDefiningOp<tile::BlockIdOp>());
}

} // namespace
