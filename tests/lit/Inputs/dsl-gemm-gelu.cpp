// A DSL program for `tilec FILE.cpp`: C[M,N] = gelu_tanh(A[M,K] @ B[K,N]): the epilogue is the prelude's math (exp2, rcp), no library call.
//   workgroup tile 64 x 64 x 32, 4 waves; LDS: A 64x32 f16 + B 32x64 f16 (+16 B per row).
#include "tilec/dsl.hpp"

tilec::Kernel kernel() {
  using namespace tilec;
  using namespace tilec::dsl;
  constexpr int64_t BM = 64, BN = 64, BK = 32;
  KernelBuilder kb("gemm_gelu_64x64x32", {.numWaves = 4});
  Tensor A = kb.tensor("A", DType::f16, 2);
  Tensor B = kb.tensor("B", DType::f16, 2);
  Tensor C = kb.tensor("C", DType::f32, 2);
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
  kb.geluTanh(acc, acc);
  kb.store(acc, C, {row, col});
  return kb.finish();
}
