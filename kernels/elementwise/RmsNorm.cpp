#include "elementwise/RmsNorm.h"

#include "DeviceMath.h"
#include "Params.h"
#include "elementwise/Common.h"

#include <cmath>
#include <optional>
#include <random>
#include <vector>

namespace tilec::kernels {

namespace {

using namespace dsl;
using elementwise::divisibilityFor;
using elementwise::unitRoundoff;
using elementwise::roundTo;
using elementwise::subnormalHalfUlp;

} // namespace

std::string rmsNormKernelName(const RmsNormConfig &c) {
  return std::string(c.residual ? "fused_add_rms_norm_" : "rms_norm_") + dtypeName(c.dtype) +
         (c.fp8Out ? elementwise::Fp8Output{c.fp8Type}.nameSuffix() + std::to_string(divisibilityFor(c.hidden, c.fp8Type))
                   : "") +
         (!c.fp8Out || c.fp8Scale == Fp8Scale::Static ? ""
          : c.fp8Scale == Fp8Scale::Token             ? "_tokscale"
                                                      : "_g" + std::to_string(kFp8ScaleGroup) + "scale") +
         "_r" +
         std::to_string(c.rows) + "_c" + std::to_string(c.chunk) + "_d" +
         std::to_string(divisibilityFor(c.hidden, c.dtype)) + "_w" + std::to_string(c.waves);
}

Result<Kernel> buildRmsNorm(const RmsNormConfig &c) {
  KernelBuilder kb(rmsNormKernelName(c), {.numWaves = c.waves});
  const TensorOptions runs{.divisibility = divisibilityFor(c.hidden, c.dtype)};
  Tensor X = kb.tensor("X", c.dtype, 2, runs);
  Tensor R = c.residual ? kb.tensor("R", c.dtype, 2, runs) : X;
  Tensor W = kb.tensor("W", c.dtype, 2, runs);
  Tensor Y = kb.tensor("Y", c.fp8Out ? c.fp8Type : c.dtype, 2,
                       {.divisibility = divisibilityFor(c.hidden, c.fp8Out ? c.fp8Type : c.dtype)});
  const Fp8Scale scaling = c.fp8Out ? c.fp8Scale : Fp8Scale::Static;
  std::optional<Tensor> scales;
  if (scaling != Fp8Scale::Static)
    scales = kb.tensor(scaling == Fp8Scale::Token ? "token_scale" : "group_scale", DType::f32, 2);
  Scalar eps = kb.scalarF32("eps"), invH = kb.scalarF32("inv_h");
  std::optional<Scalar> invScale;
  if (c.fp8Out && scaling == Fp8Scale::Static)
    invScale = kb.scalarF32("inv_scale");
  kb.grid({GridExtent::ceilDiv(X, 0, c.rows)});
  Index r0 = kb.blockId(0) * c.rows, chunks = cdiv(X.dim(1), c.chunk);

  // Loaded tiles have the tensors' type; arithmetic is f32 (docs/dsl-elementwise.md).
  Tile x = kb.regTile("x", {c.rows, c.chunk}, c.dtype);
  Tile w = kb.regTile("w", {1, c.chunk}, c.dtype);
  Tile y = kb.regTile("y", {c.rows, c.chunk}, DType::f32);
  Tile ss = kb.regTile("ss", {c.rows, 1}, DType::f32);  // sum of squares, then 1 / rms
  std::optional<Tile> r;
  if (c.residual)
    r = kb.regTile("r", {c.rows, c.chunk}, c.dtype);
  // X's chunk at `col` into x (with the residual: S = X + R, stored to R
  // and normalised as stored, rounded to dtype), its squares summed into ss.
  auto sumSquares = [&](Index col) {
    kb.load(X, {r0, col}, x);
    if (c.residual) {
      kb.load(R, {r0, col}, *r);
      kb.add(y, x, *r);
      kb.convert(x, y);
      kb.store(x, R, {r0, col});
    }
    kb.mul(y, x, x);
    kb.reduce(ReduceKind::sum, y, ss, {.axis = 1, .accumulate = true});
  };
  // Y's chunk at `col` from x and w.
  auto normalise = [&](Index col) {
    kb.mul(y, x, ss);
    kb.mul(y, y, w);
    if (invScale)
      kb.scale(y, y, *invScale);  // the store rounds to fp8 and saturates
    kb.store(y, Y, {r0, col});
  };
  // ss (the row's sum of squares) -> 1 / rms = rsqrt(ss / hidden + eps).
  auto inverseRms = [&]() {
    kb.scale(ss, ss, invH);
    kb.addScalar(ss, ss, eps);
    kb.rsqrt(ss, ss);
  };
  kb.fill(ss, 0.0);
  Index last = chunks - 1, lastCol = last * c.chunk;
  // The sum of squares over every chunk, the last (the whole row where
  // hidden <= chunk) left in x and its W in w for the pass after; W's chunk
  // is loaded before the reduction so that its latency overlaps X's.
  auto sumSquaresKeepingLast = [&]() {
    kb.forLoop(0, last, 1, {.name = "c"}, [&](Index ci) { sumSquares(ci * c.chunk); });
    kb.load(W, {0, lastCol}, w);
    sumSquares(lastCol);
    inverseRms();
  };
  const elementwise::Fp8Output fp8{c.fp8Type};
  // From each row's max |y| (amax) the scale, stored at `col` of the scales,
  // and its inverse into inv.
  auto dynamicScale = [&](const Tile &amax, const Tile &inv, Index col) {
    kb.scale(amax, amax, 1.0 / fp8.max());
    kb.fill(inv, fp8.minDynamicScale());
    kb.max(amax, amax, inv);
    kb.store(amax, *scales, {r0, col});
    kb.recip(inv, amax);
  };
  if (scaling == Fp8Scale::Group) {
    // Two passes: the sum of squares, then per group of 128 columns its max
    // |y|, its scale and its output.
    const int64_t g = kFp8ScaleGroup;
    Tile xg = kb.regTile("xg", {c.rows, g}, c.dtype), wg = kb.regTile("wg", {1, g}, c.dtype);
    Tile yg = kb.regTile("yg", {c.rows, g}, DType::f32), ag = kb.regTile("ag", {c.rows, g}, DType::f32);
    Tile amax = kb.regTile("amax", {c.rows, 1}, DType::f32);   // max |y|, then the scale
    Tile inv = kb.regTile("inv_scale", {c.rows, 1}, DType::f32);
    kb.forLoop(0, chunks, 1, {.name = "c"}, [&](Index ci) { sumSquares(ci * c.chunk); });
    // The [rows, 128] steps spread a row over other threads than the chunks
    // did: they read sums of the residual that other threads stored.
    if (c.residual)
      kb.barrier();
    inverseRms();
    kb.forLoop(0, cdiv(X.dim(1), g), 1, {.name = "g"}, [&](Index gi) {
      Index col = gi * g;
      kb.load(c.residual ? R : X, {r0, col}, xg);
      kb.load(W, {0, col}, wg);
      kb.mul(yg, xg, ss);
      kb.mul(yg, yg, wg);
      kb.abs(ag, yg);
      kb.reduce(ReduceKind::max, ag, amax, {.axis = 1});
      dynamicScale(amax, inv, gi);
      kb.mul(yg, yg, inv);   // the store rounds to fp8 and saturates
      kb.store(yg, Y, {r0, col});
    });
    Kernel k = kb.finish();
    if (!k.ok())
      return Error{k.error()};
    return k;
  }
  if (scaling == Fp8Scale::Token) {
    // Three passes: the sum of squares (the last chunk kept in x), each row's
    // max |y| (the last chunk's y kept in registers), then Y = y / scale.
    Tile yc = kb.regTile("yc", {c.rows, c.chunk}, DType::f32);
    Tile amax = kb.regTile("amax", {c.rows, 1}, DType::f32);   // max |y|, then the scale
    Tile inv = kb.regTile("inv_scale", {c.rows, 1}, DType::f32);
    auto normalised = [&](const Tile &dst) {
      kb.mul(dst, x, ss);
      kb.mul(dst, dst, w);
    };
    auto rowMax = [&](const Tile &src) {
      kb.abs(yc, src);
      kb.reduce(ReduceKind::max, yc, amax, {.axis = 1, .accumulate = true});
    };
    sumSquaresKeepingLast();
    kb.fill(amax, 0.0);   // |y| >= 0; columns past hidden load as 0
    normalised(y);
    rowMax(y);
    kb.forLoop(0, last, 1, {.name = "c"}, [&](Index ci) {
      Index col = ci * c.chunk;
      kb.load(c.residual ? R : X, {r0, col}, x);
      kb.load(W, {0, col}, w);
      normalised(yc);
      rowMax(yc);
    });
    dynamicScale(amax, inv, Index(0));
    kb.mul(y, y, inv);   // the store rounds to fp8 and saturates
    kb.store(y, Y, {r0, lastCol});
    kb.forLoop(0, last, 1, {.name = "c"}, [&](Index ci) {
      Index col = ci * c.chunk;
      kb.load(c.residual ? R : X, {r0, col}, x);
      kb.load(W, {0, col}, w);
      normalised(yc);
      kb.mul(yc, yc, inv);
      kb.store(yc, Y, {r0, col});
    });
    Kernel k = kb.finish();
    if (!k.ok())
      return Error{k.error()};
    return k;
  }
  sumSquaresKeepingLast();
  normalise(lastCol);
  kb.forLoop(0, last, 1, {.name = "c"}, [&](Index ci) {
    Index col = ci * c.chunk;
    // Each thread reads back the sums it wrote itself (same layout): no barrier.
    kb.load(c.residual ? R : X, {r0, col}, x);
    kb.load(W, {0, col}, w);
    normalise(col);
  });
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

Problem rmsNormProblem(const RmsNormConfig &c, int64_t tokens, double eps, double scale) {
  const int64_t H = c.hidden;
  Problem p;
  p.tensors.push_back({"X", c.dtype, {tokens, H}});
  if (c.residual) {
    // Read and written: its initial contents are fixed (uniform in [-1, 1),
    // rounded to dtype, from a fixed seed), not the unwritten-output poison.
    std::mt19937_64 rng(12345);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> r(tokens * H);
    for (double &e : r)
      e = roundTo(c.dtype, dist(rng));
    p.tensors.push_back({"R", c.dtype, {tokens, H}, /*output=*/true, std::move(r)});
  }
  p.tensors.push_back({"W", c.dtype, {1, H}});
  const DType out = c.fp8Out ? c.fp8Type : c.dtype;
  p.tensors.push_back({"Y", out, {tokens, H}, /*output=*/true});
  const Fp8Scale scaling = c.fp8Out ? c.fp8Scale : Fp8Scale::Static;
  // Columns per scale (dynamic scales), and scales per token.
  const int64_t groupCols = scaling == Fp8Scale::Group ? kFp8ScaleGroup : H;
  const int64_t groups = scaling == Fp8Scale::Static ? 0 : H / groupCols;
  if (scaling != Fp8Scale::Static)
    p.tensors.push_back({scaling == Fp8Scale::Token ? "token_scale" : "group_scale", DType::f32, {tokens, groups},
                         /*output=*/true});
  const size_t nt = p.tensors.size();
  p.scalars.push_back({"eps", static_cast<float>(eps), nt});
  p.scalars.push_back({"inv_h", static_cast<float>(1.0 / double(H)), nt + 1});
  // The kernel multiplies by inv_scale as rounded to f32.
  const double invScale = double(static_cast<float>(1.0 / scale));
  if (c.fp8Out && scaling == Fp8Scale::Static)
    p.scalars.push_back({"inv_scale", static_cast<float>(invScale), nt + 2});
  // Y = s r w, r = 1 / sqrt(sum(s^2) / H + eps), s = x (or x + r rounded to
  // dtype). In f32 (u = 2^-24): the sum of H non-negative terms errs by at
  // most (H - 1) u relative in any order; the squares, the product with 1/H
  // (itself rounded) and the sum with eps add 4 u; the square root halves
  // that; rsqrt adds kRsqrt u (kernels/DeviceMath.h), the two products 2 u.
  // Rounding to dtype adds u_t relative (of the f32 value: the (1 + u_t)).
  // With the residual, S = X + R rounds once in f32 and once to dtype (u_t +
  // 2 u relative); where that double rounding differs from the reference's
  // single one by an ulp of dtype, Y moves by as much (u_t more).
  // fp8 out: the product with inv_scale is one more f32 rounding, then
  // e4m3fnuz rounds to 3 mantissa bits (u_t = 2^-4) above 2^-7 and to a grid
  // of 2^-10 below, and saturates to +-240 (OCP e4m3: 3 bits above 2^-6, a
  // grid of 2^-9 below, +-448): the reference clamps too (a clamp never
  // widens a difference).
  const elementwise::Fp8Output fp8{c.fp8Type};
  const double ut = c.fp8Out ? fp8.unitRoundoff : unitRoundoff(c.dtype), u = 0x1p-24;
  const double k = (double(H) + 3) / 2 + devicemath::kRsqrt + 2 + (c.fp8Out ? 1 : 0);
  const bool ocp = fp8.ocp();
  const double fp8Max = fp8.max();
  const double halfSpacing = c.fp8Out ? fp8.subnormalHalfSpacing() : subnormalHalfUlp(c.dtype);
  p.toleranceRule = "|Y - ref| <= u_t |ref| + (1 + u_t) ((H + 3) / 2 + " + std::to_string(devicemath::kRsqrt) +
                    " + 2" + (c.fp8Out ? " + 1" : "") + ") u |ref|" +
                    (c.residual ? " + u_t |ref|; |R - (x + r)| <= (u_t + 2u) |x + r|" : "") +
                    ", u = 2^-24, u_t the output's (fp8: 2^-4, ref = clamp(y inv_scale, +-" +
                    (ocp ? "448" : "240") + ")); plus half its subnormal spacing";
  // Per-token (or per-group) scales: y (without inv_scale) errs by eY
  // relative, and so does the row's (group's) max |y|; the product with 1 / fp8 max (a rounded constant) adds
  // 2 u, the lower limit nothing: eS for the scale. Y = y * inv with inv =
  // 1 / scale (recip: kRecip u) and the product (u): relative to the exact
  // y / scale, (1 + eY)(1 + eS)(1 + (kRecip + 1) u) - 1, then one fp8
  // rounding step as above; the reference clamps y / scale (its largest
  // element is fp8 max exactly, which the kernel may overshoot by eY + eS and
  // saturate).
  const double eY = ((double(H) + 3) / 2 + devicemath::kRsqrt + 2) * u +
                    (c.residual ? unitRoundoff(c.dtype) : 0);
  const double eS = eY + 2 * u;
  const double eQ = (1 + eY) * (1 + eS) * (1 + (devicemath::kRecip + 1) * u) - 1;
  if (scaling != Fp8Scale::Static)
    p.toleranceRule = std::string(scaling == Fp8Scale::Token ? "token_scale" : "group_scale (per 128 columns)") +
                      " = max(max|y| / " + std::string(ocp ? "448" : "240") +
                      ", 1 / (512 fp8 max)) within eS = eY + 2u relative, eY = ((H + 3) / 2 + kRsqrt + 2) u" +
                      (c.residual ? " + u_dtype" : "") +
                      "; |Y - ref| <= 2^-4 |ref| + (1 + 2^-4) ((1 + eY)(1 + eS)(1 + (kRecip + 1) u) - 1) |y / scale| "
                      "+ half the fp8 subnormal spacing, ref = clamp(y / scale, +-fp8 max)" +
                      (c.residual ? "; |R - (x + r)| <= (u_t + 2u) |x + r|" : "");
  const RmsNormConfig cfg = c;
  p.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                    std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &x = v[0], &w = v[cfg.residual ? 2 : 1];
    std::vector<double> s(tokens * H), sTol(tokens * H), y(tokens * H), yTol(tokens * H);
    for (int64_t i = 0; i < tokens * H; ++i) {
      const double exact = cfg.residual ? x[i] + v[1][i] : x[i];
      s[i] = cfg.residual ? roundTo(cfg.dtype, exact) : exact;
      sTol[i] = (ut + 2 * u) * std::fabs(exact) + subnormalHalfUlp(cfg.dtype);
    }
    std::vector<double> scales(tokens * groups), scaleTol(scales.size());
    for (int64_t t = 0; t < tokens; ++t) {
      double ss = 0;
      for (int64_t h = 0; h < H; ++h)
        ss += s[t * H + h] * s[t * H + h];
      const double r = 1 / std::sqrt(ss / double(H) + eps);
      for (int64_t gi = 0; gi < groups; ++gi) {
        const int64_t h0 = gi * groupCols;
        double amax = 0;
        for (int64_t h = h0; h < h0 + groupCols; ++h)
          amax = std::max(amax, std::fabs(s[t * H + h] * r * w[h]));
        const double scale = std::max(amax / fp8Max, fp8.minDynamicScale());
        scales[t * groups + gi] = scale;
        scaleTol[t * groups + gi] = eS * scale;
        for (int64_t h = h0; h < h0 + groupCols; ++h) {
          const double exact = s[t * H + h] * r * w[h] / scale;
          const double ref = std::clamp(exact, -fp8Max, fp8Max);
          y[t * H + h] = ref;
          yTol[t * H + h] = ut * std::fabs(ref) + (1 + ut) * eQ * std::fabs(exact) + halfSpacing;
        }
      }
      if (groups > 0)
        continue;
      for (int64_t h = 0; h < H; ++h) {
        const double exact = s[t * H + h] * r * w[h] * (cfg.fp8Out ? invScale : 1.0);
        const double ref = cfg.fp8Out ? std::clamp(exact, -fp8Max, fp8Max) : exact;
        y[t * H + h] = ref;
        yTol[t * H + h] = ut * std::fabs(ref) + ((1 + ut) * k * u + (cfg.residual ? unitRoundoff(cfg.dtype) : 0)) * std::fabs(exact) +
                          halfSpacing;
      }
    }
    expected.clear();
    tolerance.clear();
    if (cfg.residual) {
      expected.push_back(std::move(s));
      tolerance.push_back(std::move(sTol));
    }
    expected.push_back(std::move(y));
    tolerance.push_back(std::move(yTol));
    if (groups > 0) {
      expected.push_back(std::move(scales));
      tolerance.push_back(std::move(scaleTol));
    }
  };
  return p;
}

KernelInfo rmsNormKernelInfo() {
  KernelInfo info;
  info.name = "rms_norm";
  info.summary = "RMSNorm over the rows of X with a [1, hidden] weight; residual=1: vLLM's fused_add_rms_norm "
                 "(R = X + R, normalised)";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 24)},
      {"hidden", "4096", "row length (its divisibility sets the access width)",
       ParamSpec::integer(1, int64_t(1) << 20)},
      {"dtype", "bf16", "bf16 | f16 | f32", ParamSpec::dtype({DType::bf16, DType::f16, DType::f32})},
      {"residual", "0", "1: add R first and write the sum to R", ParamSpec::integer(0, 1)},
      {"eps", "1e-6", "added to the mean square", ParamSpec::real()},
  };
  for (KernelParam &p : elementwise::fp8OutputParams("Y"))
    info.params.push_back(std::move(p));
  info.params.push_back({"fp8_scale", "static",
                         "fp8_out's scale: static (the inv_scale argument) | token (each token's max |Y| / fp8 max, "
                         "written to token_scale [tokens, 1]: vLLM's dynamic per-token quant) | group (the same per "
                         "1 x 128 group, to group_scale [tokens, hidden / 128]; hidden a multiple of 128)",
                         ParamSpec::oneOf({"static", "token", "group"})});
  for (KernelParam &p : elementwise::blockingParams("rows", "tokens"))
    info.params.push_back(std::move(p));
  struct RunTime {
    int64_t tokens = 0;
    double eps = 0, scale = 0;
  };
  elementwise::bindKernel<RmsNormConfig, RunTime>(
      info,
      [](ParamReader &p, RmsNormConfig &c, RunTime &run) -> std::string {
        run.tokens = p.integer("tokens");
        c.hidden = p.integer("hidden");
        c.dtype = p.dtype("dtype");
        c.residual = p.integer("residual") == 1;
        run.eps = p.real("eps");
        if (std::string bad = elementwise::readFp8Output(p, "rms_norm", c.fp8Out, c.fp8Type, run.scale); !bad.empty())
          return bad;
        const std::string scaling = p.choice("fp8_scale");
        c.fp8Scale = scaling == "token" ? Fp8Scale::Token : scaling == "group" ? Fp8Scale::Group : Fp8Scale::Static;
        if (p.ok() && c.fp8Scale != Fp8Scale::Static && !c.fp8Out)
          return "kernel 'rms_norm': fp8_scale=" + scaling + " scales an fp8 output: give fp8_out=1 too";
        if (p.ok() && c.fp8Out && c.fp8Scale == Fp8Scale::Group && c.hidden % kFp8ScaleGroup != 0)
          return "kernel 'rms_norm': fp8_scale=group takes groups of " + std::to_string(kFp8ScaleGroup) +
                 " columns, so hidden must be a multiple of " + std::to_string(kFp8ScaleGroup) + ", got " +
                 std::to_string(c.hidden);
        if (std::string bad = elementwise::readBlocking(p, "rms_norm", "rows", c.rows, c.chunk, c.waves); !bad.empty())
          return bad;
        return p.ok() && run.eps < 0 ? "kernel 'rms_norm': eps must not be negative" : "";
      },
      buildRmsNorm, [](const RmsNormConfig &c, const RunTime &run) { return rmsNormProblem(c, run.tokens, run.eps, run.scale); });
  // Per-group scales step through [rows, 128] tiles: by default enough rows
  // that every thread holds one 16-byte run of a step (128 / run threads a
  // row). Other rows are read once (rowBlocking); NVIDIA targets store OCP fp8.
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    auto scaling = p.find("fp8_scale");
    if (scaling != p.end() && scaling->second == "group") {
      auto dtype = p.find("dtype");
      const int64_t run = dtype != p.end() && dtype->second == "f32" ? 4 : 8;
      const int64_t threads = givenInteger(p, "waves", 4) * t.waveSize;
      p.try_emplace("rows", std::to_string(std::clamp<int64_t>(threads * run / kFp8ScaleGroup, 1, 64)));
      p.try_emplace("chunk", "1024");
    }
    elementwise::rowBlocking(p, "rows", givenInteger(p, "hidden", 4096));
    if (t.vendor == Vendor::NVIDIA)
      elementwise::nvidiaFp8Output(p);
  };
  return info;
}

} // namespace tilec::kernels
