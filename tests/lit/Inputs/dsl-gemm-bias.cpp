// A DSL program that mixes layouts: P = (A[M,K] @ B[K,N]) * s[M,1],
// C[M,N] = P + bias[1,N], and the column sums of P over each block of 64 rows,
// colsum[M / 64, N]. The accumulator has a matrix instruction's layout; the
// [1, 64] bias and the [64, 1] row scales are loaded as plain tiles (a blocked
// layout, which holds one-row and one-column tiles) and broadcast onto it, and
// the column sums (a reduction across rows, which accumulator layouts do not
// have) go to a blocked [1, 64] tile: tilec-infer-layouts reads each input in
// the other layout through LDS (a remark says so; the report names the LDS
// tiles' role "conversion").
#include "tilec/dsl.hpp"

tilec::Kernel kernel() {
  using namespace tilec;
  using namespace tilec::dsl;
  constexpr int64_t BM = 64, BN = 64, BK = 32;
  KernelBuilder kb("gemm_scale_bias_64x64x32", {.numWaves = 4});
  Tensor A = kb.tensor("A", DType::f16, 2);
  Tensor B = kb.tensor("B", DType::f16, 2);
  Tensor C = kb.tensor("C", DType::f32, 2);
  Tensor S = kb.tensor("row_scale", DType::f32, 2);  // [M, 1]
  Tensor Bias = kb.tensor("bias", DType::f32, 2);    // [1, N]
  Tensor ColSum = kb.tensor("colsum", DType::f32, 2); // [ceil(M / 64), N]
  kb.grid({GridExtent::ceilDiv(C, 0, BM), GridExtent::ceilDiv(C, 1, BN)});
  Index row = kb.blockId(0) * BM;
  Index col = kb.blockId(1) * BN;
  Tile a = kb.ldsTile("a_lds", {BM, BK}, DType::f16);
  Tile b = kb.ldsTile("b_lds", {BK, BN}, DType::f16);
  Tile acc = kb.regTile("acc", {BM, BN}, DType::f32);
  kb.fill(acc, 0.0);
  kb.forLoop(0, cdiv(A.dim(1), BK), 1, {.numStages = 1, .name = "kt"}, [&](Index kt) {
    kb.load(A, {row, kt * BK}, a);
    kb.load(B, {kt * BK, col}, b);
    kb.gemm(a, b, acc);
  });
  Tile s = kb.regTile("s", {BM, 1}, DType::f32);
  Tile bias = kb.regTile("bias_r", {1, BN}, DType::f32);
  kb.load(S, {row, 0}, s);
  kb.load(Bias, {0, col}, bias);
  Tile sums = kb.regTile("sums", {1, BN}, DType::f32);
  kb.mul(acc, acc, s);
  kb.reduce(ReduceKind::sum, acc, sums, {.axis = 0});
  kb.store(sums, ColSum, {kb.blockId(0), col});
  kb.add(acc, acc, bias);
  kb.store(acc, C, {row, col});
  return kb.finish();
}
