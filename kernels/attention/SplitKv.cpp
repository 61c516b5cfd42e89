// Split-KV decoding's second kernel, the combine, in the tilec DSL, and the
// problem plumbing the decode kernels (paged_decode, mla_decode) share for it.
#include "attention/Common.h"

#include <limits>

namespace tilec::kernels {

using namespace attention;

// The split-KV combine: for each row (token, head), the partial results of
// the splits merge as O = sum_s e^(lse_s - m) O_s / sum_s e^(lse_s - m),
// LSE = m + log(sum_s e^(lse_s - m)), m = max_s lse_s (in base 2 inside). A
// split that saw no key has lse_s = -inf and weight 0. 16 rows per wave.
Result<Kernel> buildSplitKvCombine(const std::string &name, DType outType, int64_t D, int64_t splits, int waves,
                                   int64_t columns) {
  using namespace dsl;
  const int64_t R = 16 * waves, DC = columns > 0 ? columns : D;
  const bool columnBlocks = DC < D;
  const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
  KernelBuilder kb(name, {.numWaves = waves});
  const dsl::TensorOptions headRowOpts = headRows(outType);
  Tensor Op = kb.tensor("O_part", DType::f32, 2);
  Tensor Lp = kb.tensor("LSE_part", DType::f32, 2);
  Tensor O = kb.tensor("O", outType, 2, headRowOpts);
  Tensor LSE = kb.tensor("LSE", DType::f32, 2);
  if (columnBlocks)
    kb.grid({GridExtent::ceilDiv(O, 0, R), GridExtent::fixed((D + DC - 1) / DC)});
  else
    kb.grid({GridExtent::ceilDiv(O, 0, R)});
  Index r0 = kb.blockId(0) * R, rows = O.dim(0), c0 = 0;
  Tensor Lout = LSE;
  if (columnBlocks) {
    Index cb = kb.blockId(1);
    c0 = cb * DC;
    Lout = kb.window(LSE, {0, 0}, {rows * (1 - min(cb, 1)), 1});  // column block 0 writes LSE
  }
  Tile acc = kb.regTile("acc", {R, DC}, DType::f32);
  Tile part = kb.regTile("part", {R, DC}, DType::f32);
  Tile m = kb.regTile("m", {R}, DType::f32), mNew = kb.regTile("m_new", {R}, DType::f32);
  Tile x = kb.regTile("x", {R}, DType::f32), l = kb.regTile("l", {R}, DType::f32);
  Tile alpha = kb.regTile("alpha", {R}, DType::f32), beta = kb.regTile("beta", {R}, DType::f32);
  kb.fill(acc, 0.0);
  kb.fill(m, -std::numeric_limits<double>::infinity());
  kb.fill(l, 0.0);
  kb.forLoop(0, splits, 1, {.name = "split"}, [&](Index s) {
    kb.load(kb.window(Op, {s * rows, 0}, {rows, D}), {r0, c0}, part);
    kb.load(kb.window(Lp, {s * rows, 0}, {rows, 1}), {r0, 0}, x);
    kb.scale(x, x, log2e);
    kb.max(mNew, m, x);
    kb.subExp2(alpha, m, mNew);  // rescales what was merged so far
    kb.subExp2(beta, x, mNew);   // this split's weight
    kb.mul(acc, acc, alpha);
    kb.mul(part, part, beta);
    kb.add(acc, acc, part);
    kb.mul(l, l, alpha);
    kb.add(l, l, beta);
    kb.convert(m, mNew);
  });
  kb.safeDiv(acc, acc, l);
  kb.store(acc, O, {r0, c0});
  kb.log(x, l);
  kb.scale(m, m, ln2);
  kb.add(x, x, m);
  kb.store(x, Lout, {r0, 0});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

void addSplitKvLaunches(Problem &prob, int64_t splits, size_t oTensor, size_t lseTensor) {
  const int64_t rows = prob.tensors[oTensor].shape[0], cols = prob.tensors[oTensor].shape[1];
  const size_t oPart = prob.tensors.size(), lsePart = oPart + 1;
  prob.tensors.push_back({"O_part", DType::f32, {splits * rows, cols}, false, {}, /*scratch=*/true});
  prob.tensors.push_back({"LSE_part", DType::f32, {splits * rows, 1}, false, {}, /*scratch=*/true});
  std::vector<size_t> attend;
  for (size_t i = 0; i < oPart; ++i)
    attend.push_back(i == oTensor ? oPart : i == lseTensor ? lsePart : i);
  prob.launches = {{{{"part", "attend"}}, attend, prob.scalars},
                   {{{"part", "combine"}}, {oPart, lsePart, oTensor, lseTensor}, {}}};
}

KernelParam splitKvPartParam() {
  return {"part", "attend", "with splits > 1: attend | combine (the kernel to compile; --run runs both)",
          ParamSpec::oneOf({"attend", "combine"})};
}

} // namespace tilec::kernels
