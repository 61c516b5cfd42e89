#include "elementwise/SiluAndMul.h"

#include "DeviceMath.h"
#include "Params.h"
#include "elementwise/Common.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace tilec::kernels {

namespace {

using namespace dsl;
using elementwise::divisibilityFor;
using elementwise::subnormalHalfUlp;
using elementwise::unitRoundoff;

} // namespace

std::string siluAndMulKernelName(const SiluAndMulConfig &c) {
  return std::string("silu_and_mul_") + dtypeName(c.dtype) +
         (c.fp8Out ? elementwise::Fp8Output{c.fp8Type}.nameSuffix() : "") + "_i" + std::to_string(c.intermediate) +
         "_r" +
         std::to_string(c.rows) + "_c" + std::to_string(c.chunk) + "_w" + std::to_string(c.waves);
}

Result<Kernel> buildSiluAndMul(const SiluAndMulConfig &c) {
  const int64_t I = c.intermediate;
  KernelBuilder kb(siluAndMulKernelName(c), {.numWaves = c.waves});
  Tensor X = kb.tensor("X", c.dtype, 2, {.divisibility = divisibilityFor(2 * I, c.dtype)});
  const DType outType = c.fp8Out ? c.fp8Type : c.dtype;
  Tensor out = kb.tensor("out", outType, 2, {.divisibility = divisibilityFor(I, outType)});
  std::optional<Scalar> invScale;
  if (c.fp8Out)
    invScale = kb.scalarF32("inv_scale");
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
    if (invScale)
      kb.scale(y, y, *invScale);  // the store rounds to fp8 and saturates
    kb.store(y, out, {r0, col});
  });
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

Problem siluAndMulProblem(const SiluAndMulConfig &c, int64_t tokens, double scale) {
  const int64_t I = c.intermediate;
  Problem p;
  p.tensors.push_back({"X", c.dtype, {tokens, 2 * I}});
  p.tensors.push_back({"out", c.fp8Out ? c.fp8Type : c.dtype, {tokens, I}, /*output=*/true});
  // The kernel multiplies by inv_scale as rounded to f32.
  const double invScale = c.fp8Out ? double(static_cast<float>(1.0 / scale)) : 1.0;
  if (c.fp8Out)
    p.scalars.push_back({"inv_scale", static_cast<float>(invScale), 2});
  // silu(g) within kSilu u relative plus (1 + |g|) 2^-126 absolute
  // (kernels/DeviceMath.h), the product with up one more rounding, and the
  // result rounded to the output type: u_t relative of the f32 value, plus
  // half its subnormal spacing below the smallest normal. fp8 out: the
  // product with inv_scale is one more f32 rounding (kSilu + 2), then one
  // rounding step to fp8, which is all fp8 adds: the store converts the f32
  // value once (to nearest even: u_t = 2^-4 relative for 3 mantissa bits,
  // or half the subnormal grid), and saturates. The reference saturates the
  // exact value too (ref = clamp(exact, +-max)); a clamp never widens a
  // difference, so the f32 errors stay relative to the unclamped value.
  const elementwise::Fp8Output fp8{c.fp8Type};
  const double ut = c.fp8Out ? fp8.unitRoundoff : unitRoundoff(c.dtype), u = 0x1p-24;
  const double k = devicemath::kSilu + (c.fp8Out ? 2 : 1);
  const double halfSpacing = c.fp8Out ? fp8.subnormalHalfSpacing() : subnormalHalfUlp(c.dtype);
  const double outMax = c.fp8Out ? fp8.max() : INFINITY;
  p.toleranceRule = std::string("|out - ref| <= u_t |ref| + (1 + u_t) ((kSilu + ") + (c.fp8Out ? "2" : "1") +
                    ") u |exact| + (1 + |g|) 2^-126 |up|" + (c.fp8Out ? " inv_scale" : "") +
                    ") + half the output's subnormal spacing, u = 2^-24, u_t the output's" +
                    (c.fp8Out ? std::string(" (fp8: 2^-4), exact = silu(g) up inv_scale, ref = clamp(exact, +-") +
                                    (fp8.ocp() ? "448" : "240") + ")"
                              : std::string(", ref = exact = silu(g) up"));
  p.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                    std::vector<std::vector<double>> &tolerance) {
    std::vector<double> y(tokens * I), tol(tokens * I);
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t j = 0; j < I; ++j) {
        const double gv = v[0][t * 2 * I + j], uv = v[0][t * 2 * I + I + j];
        const double exact = gv / (1 + std::exp(-gv)) * uv * invScale;
        const double ref = std::clamp(exact, -outMax, outMax);
        y[t * I + j] = ref;
        tol[t * I + j] = ut * std::fabs(ref) +
                         (1 + ut) * (k * u * std::fabs(exact) +
                                     (1 + std::fabs(gv)) * devicemath::kSubnormal * std::fabs(uv) * invScale) +
                         halfSpacing;
      }
    expected = {std::move(y)};
    tolerance = {std::move(tol)};
  };
  return p;
}

KernelInfo siluAndMulKernelInfo() {
  KernelInfo info;
  info.name = "silu_and_mul";
  info.summary = "SwiGLU activation: out = silu(X[:, :I]) * X[:, I:] (vLLM's silu_and_mul); fp8_out=1: out in fp8 "
                 "times 1 / scale (vLLM's static fp8 quant, fused)";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 24)},
      {"intermediate", "14336", "I: out has I columns, X 2 I", ParamSpec::integer(1, int64_t(1) << 20)},
      {"dtype", "bf16", "bf16 | f16 | f32", ParamSpec::dtype({DType::bf16, DType::f16, DType::f32})},
  };
  for (KernelParam &p : elementwise::fp8OutputParams("out"))
    info.params.push_back(std::move(p));
  for (KernelParam &p : elementwise::blockingParams("rows", "tokens"))
    info.params.push_back(std::move(p));
  struct RunTime {
    int64_t tokens = 0;
    double scale = 0;
  };
  elementwise::bindKernel<SiluAndMulConfig, RunTime>(
      info,
      [](ParamReader &p, SiluAndMulConfig &c, RunTime &run) -> std::string {
        run.tokens = p.integer("tokens");
        c.intermediate = p.integer("intermediate");
        c.dtype = p.dtype("dtype");
        if (std::string bad = elementwise::readFp8Output(p, "silu_and_mul", c.fp8Out, c.fp8Type, run.scale);
            !bad.empty())
          return bad;
        return elementwise::readBlocking(p, "silu_and_mul", "rows", c.rows, c.chunk, c.waves);
      },
      buildSiluAndMul,
      [](const SiluAndMulConfig &c, const RunTime &run) { return siluAndMulProblem(c, run.tokens, run.scale); });
  // NVIDIA targets store OCP fp8.
  // A row to a workgroup (rowBlocking). On the H200 chunks of 1024 measured
  // best or within 3% at every shape of docs/perf/h200/2026-12-03-h200-run25-elementwise.json
  // (4096 x 14336: 0.100 ms, 4 rows of 512 0.101, one chunk of 4096 0.113;
  // 16 x 8192: 0.0214, 0.0220, 0.0215); the AMD targets take the longer chunk
  // the model prefers at 16 x 8192 (MI300X: 2.8 us against 8.0).
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    elementwise::rowBlocking(p, "rows", givenInteger(p, "intermediate", 4096), t.vendor == Vendor::NVIDIA ? 1024 : 4096);
    if (t.vendor == Vendor::NVIDIA)
      elementwise::nvidiaFp8Output(p);
  };
  return info;
}

} // namespace tilec::kernels
