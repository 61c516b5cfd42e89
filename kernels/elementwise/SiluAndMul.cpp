#include "elementwise/SiluAndMul.h"

#include "DeviceMath.h"
#include "Params.h"
#include "elementwise/Common.h"

#include <cmath>
#include <vector>

namespace tilec::kernels {

namespace {

using namespace dsl;
using elementwise::divisibilityFor;
using elementwise::subnormalHalfUlp;
using elementwise::unitRoundoff;

} // namespace

std::string siluAndMulKernelName(const SiluAndMulConfig &c) {
  return std::string("silu_and_mul_") + dtypeName(c.dtype) + "_i" + std::to_string(c.intermediate) + "_r" +
         std::to_string(c.rows) + "_c" + std::to_string(c.chunk) + "_w" + std::to_string(c.waves);
}

Result<Kernel> buildSiluAndMul(const SiluAndMulConfig &c) {
  const int64_t I = c.intermediate;
  KernelBuilder kb(siluAndMulKernelName(c), {.numWaves = c.waves});
  Tensor X = kb.tensor("X", c.dtype, 2, {.divisibility = divisibilityFor(2 * I, c.dtype)});
  Tensor out = kb.tensor("out", c.dtype, 2, {.divisibility = divisibilityFor(I, c.dtype)});
  kb.grid({GridExtent::ceilDiv(out, 0, c.rows)});
  Index r0 = kb.blockId(0) * c.rows;
  Tile g = kb.regTile("gate", {c.rows, c.chunk}, c.dtype), u = kb.regTile("up", {c.rows, c.chunk}, c.dtype);
  Tile y = kb.regTile("y", {c.rows, c.chunk}, DType::f32);
  // Columns of the last chunk past I read the up half (gate) or zeros (up);
  // their results lie outside `out` and are dropped.
  kb.forLoop(0, (I + c.chunk - 1) / c.chunk, 1, {.name = "c"}, [&](Index ci) {
    Index col = ci * c.chunk;
    kb.load(X, {r0, col}, g);
    kb.load(X, {r0, col + I}, u);
    kb.silu(y, g);
    kb.mul(y, y, u);
    kb.store(y, out, {r0, col});
  });
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

Problem siluAndMulProblem(const SiluAndMulConfig &c, int64_t tokens) {
  const int64_t I = c.intermediate;
  Problem p;
  p.tensors.push_back({"X", c.dtype, {tokens, 2 * I}});
  p.tensors.push_back({"out", c.dtype, {tokens, I}, /*output=*/true});
  // silu(g) within kSilu u relative plus (1 + |g|) 2^-126 absolute
  // (kernels/DeviceMath.h), the product with u one more rounding, and the
  // result rounded to dtype: u_t relative of the f32 value.
  const double ut = unitRoundoff(c.dtype), u = 0x1p-24;
  p.toleranceRule = "|out - ref| <= u_t |ref| + (1 + u_t) ((kSilu + 1) u |ref| + (1 + |g|) 2^-126 |up|) + half the dtype's subnormal spacing";
  p.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                    std::vector<std::vector<double>> &tolerance) {
    std::vector<double> y(tokens * I), tol(tokens * I);
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t j = 0; j < I; ++j) {
        const double gv = v[0][t * 2 * I + j], uv = v[0][t * 2 * I + I + j];
        const double ref = gv / (1 + std::exp(-gv)) * uv;
        y[t * I + j] = ref;
        tol[t * I + j] = ut * std::fabs(ref) + (1 + ut) * ((devicemath::kSilu + 1) * u * std::fabs(ref) +
                                                           (1 + std::fabs(gv)) * devicemath::kSubnormal * std::fabs(uv)) +
                         subnormalHalfUlp(c.dtype);
      }
    expected = {std::move(y)};
    tolerance = {std::move(tol)};
  };
  return p;
}

KernelInfo siluAndMulKernelInfo() {
  KernelInfo info;
  info.name = "silu_and_mul";
  info.summary = "SwiGLU activation: out = silu(X[:, :I]) * X[:, I:] (vLLM's silu_and_mul)";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 24)},
      {"intermediate", "14336", "I: out has I columns, X 2 I", ParamSpec::integer(1, int64_t(1) << 20)},
      {"dtype", "bf16", "bf16 | f16 | f32", ParamSpec::dtype({DType::bf16, DType::f16, DType::f32})},
  };
  for (KernelParam &p : elementwise::blockingParams("rows", "tokens"))
    info.params.push_back(std::move(p));
  elementwise::bindKernel<SiluAndMulConfig, int64_t>(
      info,
      [](ParamReader &p, SiluAndMulConfig &c, int64_t &tokens) -> std::string {
        tokens = p.integer("tokens");
        c.intermediate = p.integer("intermediate");
        c.dtype = p.dtype("dtype");
        return elementwise::readBlocking(p, "silu_and_mul", "rows", c.rows, c.chunk, c.waves);
      },
      buildSiluAndMul, [](const SiluAndMulConfig &c, const int64_t &tokens) { return siluAndMulProblem(c, tokens); });
  return info;
}

} // namespace tilec::kernels
