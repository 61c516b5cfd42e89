#include "elementwise/Softmax.h"

#include "DeviceMath.h"
#include "Params.h"
#include "elementwise/Common.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tilec::kernels {

namespace {

using namespace dsl;
using elementwise::divisibilityFor;
using elementwise::subnormalHalfUlp;
using elementwise::unitRoundoff;

constexpr double kLog2e = 1.4426950408889634;

} // namespace

std::string softmaxKernelName(const SoftmaxConfig &c) {
  return std::string("softmax_") + dtypeName(c.dtype) + "_r" + std::to_string(c.rows) + "_c" +
         std::to_string(c.chunk) + "_d" + std::to_string(divisibilityFor(c.cols, c.dtype)) + "_w" +
         std::to_string(c.waves);
}

Result<Kernel> buildSoftmax(const SoftmaxConfig &c) {
  KernelBuilder kb(softmaxKernelName(c), {.numWaves = c.waves});
  const TensorOptions runs{.divisibility = divisibilityFor(c.cols, c.dtype)};
  Tensor X = kb.tensor("X", c.dtype, 2, runs);
  Tensor Y = kb.tensor("Y", c.dtype, 2, runs);
  kb.grid({GridExtent::ceilDiv(X, 0, c.rows)});
  Index r0 = kb.blockId(0) * c.rows, cols = X.dim(1), chunks = cdiv(cols, c.chunk);
  Tile x = kb.regTile("x", {c.rows, c.chunk}, c.dtype);
  Tile s = kb.regTile("s", {c.rows, c.chunk}, DType::f32);
  Tile m = kb.regTile("m", {c.rows, 1}, DType::f32), mc = kb.regTile("m_chunk", {c.rows, 1}, DType::f32);
  Tile l = kb.regTile("l", {c.rows, 1}, DType::f32), a = kb.regTile("alpha", {c.rows, 1}, DType::f32);
  // The chunk at `col`: s = 2^(x log2(e) - m_chunk), the running maximum m and
  // sum l updated (online softmax).
  auto onlineStep = [&](Index col) {
    kb.load(X, {r0, col}, x);
    kb.scale(s, x, kLog2e);
    kb.mask(s, 0, col, cols);  // columns past the row's end: -inf
    kb.reduce(ReduceKind::max, s, mc, {.axis = 1});
    kb.max(mc, mc, m);          // the new running maximum
    kb.subExp2(a, m, mc);       // l's rescaling, 0 while m was -inf
    kb.mul(l, l, a);
    kb.subExp2(s, s, mc);
    kb.reduce(ReduceKind::sum, s, l, {.axis = 1, .accumulate = true});
    kb.convert(m, mc);
  };
  kb.fill(m, -INFINITY);
  kb.fill(l, 0.0);
  Index last = chunks - 1, lastCol = last * c.chunk;
  kb.forLoop(0, last, 1, {.name = "c"}, [&](Index ci) { onlineStep(ci * c.chunk); });
  onlineStep(lastCol);
  kb.recip(l, l);
  // The last chunk (the whole row where cols <= chunk) is still in s, as
  // 2^(x log2(e) - m) with m final: X is read once there.
  kb.mul(s, s, l);
  kb.store(s, Y, {r0, lastCol});
  kb.forLoop(0, last, 1, {.name = "c"}, [&](Index ci) {
    Index col = ci * c.chunk;
    kb.load(X, {r0, col}, x);
    kb.scale(s, x, kLog2e);
    kb.subExp2(s, s, m);
    kb.mul(s, s, l);
    kb.store(s, Y, {r0, col});
  });
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

Problem softmaxProblem(const SoftmaxConfig &c, int64_t rows) {
  const int64_t C = c.cols, nc = (C + c.chunk - 1) / c.chunk;
  Problem p;
  p.tensors.push_back({"X", c.dtype, {rows, C}});
  p.tensors.push_back({"Y", c.dtype, {rows, C}, /*output=*/true});
  // In f32 (u = 2^-24), with X = max |x| of the row: s = x log2(e) and the
  // maximum m round (u X log2 e each, log2(e) itself rounded adds as much),
  // s - m rounds (at most 2 u X log2 e): an exponent off by 6 u X log2 e,
  // a relative 6 X u in 2^(s - m). Each exp2 adds kExp2 u (kernels/DeviceMath.h):
  // p within kp = 6 X + kExp2. The running sum l: its terms within kp, the sum
  // of C terms C u, each of the nc rescalings kp + 2 (the product, the sum).
  // Y = p * (1 / l): kp + kl + kRecip + 1, then rounded to dtype (u_t relative
  // of the f32 value).
  const double ut = unitRoundoff(c.dtype), u = 0x1p-24;
  p.toleranceRule = "|Y - ref| <= u_t |ref| + (1 + u_t) (2 kp + C + nc (kp + 2) + kRecip + 1) u |ref|, "
                    "kp = 6 X + kExp2, X = max|x| of the row; plus half the dtype's subnormal spacing";
  p.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                    std::vector<std::vector<double>> &tolerance) {
    std::vector<double> y(rows * C), tol(rows * C);
    for (int64_t r = 0; r < rows; ++r) {
      const double *x = &v[0][r * C];
      double mx = -INFINITY, X = 0, sum = 0;
      for (int64_t j = 0; j < C; ++j) {
        mx = std::max(mx, x[j]);
        X = std::max(X, std::fabs(x[j]));
      }
      for (int64_t j = 0; j < C; ++j)
        sum += std::exp(x[j] - mx);
      const double kp = 6 * X + devicemath::kExp2;
      const double k = 2 * kp + double(C) + double(nc) * (kp + 2) + devicemath::kRecip + 1;
      for (int64_t j = 0; j < C; ++j) {
        const double ref = std::exp(x[j] - mx) / sum;
        y[r * C + j] = ref;
        tol[r * C + j] = ut * ref + (1 + ut) * k * u * ref + subnormalHalfUlp(c.dtype);
      }
    }
    expected = {std::move(y)};
    tolerance = {std::move(tol)};
  };
  return p;
}

KernelInfo softmaxKernelInfo() {
  KernelInfo info;
  info.name = "softmax";
  info.summary = "softmax over the rows of X, online over chunks for rows longer than a tile";
  info.params = {
      {"rows", "64", "rows of X (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 24)},
      {"cols", "4096", "row length (its divisibility sets the access width)", ParamSpec::integer(1, int64_t(1) << 20)},
      {"dtype", "bf16", "bf16 | f16 | f32", ParamSpec::dtype({DType::bf16, DType::f16, DType::f32})},
  };
  for (KernelParam &p : elementwise::blockingParams("block_rows", "rows"))
    info.params.push_back(std::move(p));
  elementwise::bindKernel<SoftmaxConfig, int64_t>(
      info,
      [](ParamReader &p, SoftmaxConfig &c, int64_t &rows) -> std::string {
        rows = p.integer("rows");
        c.cols = p.integer("cols");
        c.dtype = p.dtype("dtype");
        return elementwise::readBlocking(p, "softmax", "block_rows", c.rows, c.chunk, c.waves);
      },
      buildSoftmax, [](const SoftmaxConfig &c, const int64_t &rows) { return softmaxProblem(c, rows); });
  info.targetDefaults = [](KernelParams &p, const TargetInfo &) {
    elementwise::rowBlocking(p, "block_rows", givenInteger(p, "cols", 4096));
  };
  return info;
}

} // namespace tilec::kernels
