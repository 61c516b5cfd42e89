// RMSNorm as a user writes it in the DSL (docs/dsl-elementwise.md):
//   Y[t, :] = X[t, :] / sqrt(mean(X[t, :]^2) + eps) * W[0, :]
// 16 rows (tokens) per workgroup, columns in chunks of 256, the weight a
// [1, H] tensor. X, W and Y are bf16 with H a multiple of 8 (16-byte runs);
// the scalars are eps and 1 / H. Rows past the end read 0 and are not
// written; so are columns past H in the last chunk.
#include "tilec/dsl.hpp"

tilec::Kernel kernel() {
  using namespace tilec;
  using namespace tilec::dsl;
  constexpr int64_t kRows = 16, kChunk = 256;
  KernelBuilder kb("rms_norm_user", {.numWaves = 4});
  Tensor X = kb.tensor("X", DType::bf16, 2, {.divisibility = 8});
  Tensor W = kb.tensor("W", DType::bf16, 2, {.divisibility = 8});
  Tensor Y = kb.tensor("Y", DType::bf16, 2, {.divisibility = 8});
  Scalar eps = kb.scalarF32("eps");
  Scalar invH = kb.scalarF32("inv_h");
  kb.grid({GridExtent::ceilDiv(X, 0, kRows)});
  Index r0 = kb.blockId(0) * kRows;
  Index chunks = cdiv(X.dim(1), kChunk);

  // Tiles loaded from a tensor have its element type; arithmetic is f32.
  Tile xr = kb.regTile("xr", {kRows, kChunk}, DType::bf16);
  Tile wr = kb.regTile("wr", {1, kChunk}, DType::bf16);
  Tile yr = kb.regTile("yr", {kRows, kChunk}, DType::f32);
  Tile ss = kb.regTile("ss", {kRows, 1}, DType::f32);  // sum of squares, then 1 / rms
  kb.fill(ss, 0.0);
  kb.forLoop(0, chunks, 1, [&](Index c) {
    kb.load(X, {r0, c * kChunk}, xr);
    kb.mul(yr, xr, xr);
    kb.reduce(ReduceKind::sum, yr, ss, {.axis = 1, .accumulate = true});
  });
  kb.scale(ss, ss, invH);
  kb.addScalar(ss, ss, eps);
  kb.rsqrt(ss, ss);
  kb.forLoop(0, chunks, 1, [&](Index c) {
    kb.load(X, {r0, c * kChunk}, xr);
    kb.load(W, {0, c * kChunk}, wr);
    kb.mul(yr, xr, ss);  // [16, 1] broadcast along each row
    kb.mul(yr, yr, wr);  // [1, 256] broadcast down the columns
    kb.store(yr, Y, {r0, c * kChunk});
  });
  return kb.finish();
}
