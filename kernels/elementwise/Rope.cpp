#include "elementwise/Rope.h"

#include "Params.h"
#include "elementwise/Common.h"

#include <cmath>
#include <random>
#include <vector>

namespace tilec::kernels {

namespace {

using namespace dsl;
using elementwise::divisibilityFor;
using elementwise::roundTo;
using elementwise::subnormalHalfUlp;
using elementwise::unitRoundoff;

/// The rotation of one pair of tiles by cosines c and sines s (tiles of the
/// pair's shape, or rows broadcast down its columns): x1 <- x1 c - x2 s,
/// x2 <- x2 c + x1 s, into a1 and a2 (f32 tiles of the pair's shape).
void rotate(KernelBuilder &kb, const Tile &x1, const Tile &x2, const Tile &c, const Tile &s, const Tile &a1,
            const Tile &a2, const Tile &tmp) {
  kb.mul(a1, x1, c);
  kb.mul(tmp, x2, s);
  kb.sub(a1, a1, tmp);
  kb.mul(a2, x2, c);
  kb.mul(tmp, x1, s);
  kb.add(a2, a2, tmp);
}

} // namespace

std::string ropeKernelName(const RopeConfig &c) {
  return std::string("rope_") + (c.neox ? "neox_" : "gptj_") + dtypeName(c.dtype) + "_h" + std::to_string(c.heads) +
         "_kv" + std::to_string(c.kvHeads) + "_d" + std::to_string(c.headDim) + "_t" +
         std::to_string(c.tokensPerGroup) + "_w" + std::to_string(c.waves);
}

Result<Kernel> buildRope(const RopeConfig &c) {
  const int64_t D = c.headDim, half = D / 2;
  KernelBuilder kb(ropeKernelName(c), {.numWaves = c.waves});
  Tensor positions = kb.tensor("positions", DType::i32, 1);
  // neox: rows of head_dim elements, rotated by halves (runs as wide as
  // head_dim / 2 allows). gptj: columns of (even, odd) pairs, one element per
  // access.
  const TensorOptions runs{.divisibility = c.neox ? divisibilityFor(half, c.dtype) : 1};
  Tensor Q = kb.tensor("Q", c.dtype, 2, runs), K = kb.tensor("K", c.dtype, 2, runs);
  Tensor cache = kb.tensor("cos_sin_cache", c.dtype, 2, runs);
  kb.grid({GridExtent::ceilDiv(positions, 0, c.tokensPerGroup)});
  Index t0 = kb.blockId(0) * c.tokensPerGroup;

  // One tile set per tensor: Q's and K's have different head counts, and
  // tiles that never meet keep layouts fitted to their own shapes.
  auto rotateHeads = [&](const Tensor &X, int64_t heads, const std::string &name, const Index &t, const Index &p) {
    if (c.neox) {
      // All heads of token t at once: [heads, D / 2] halves, the cosines and
      // sines a [1, D / 2] row broadcast down them.
      Tile x1 = kb.regTile(name + "1", {heads, half}, c.dtype), x2 = kb.regTile(name + "2", {heads, half}, c.dtype);
      Tile cs = kb.regTile(name + "_cos", {1, half}, c.dtype), sn = kb.regTile(name + "_sin", {1, half}, c.dtype);
      Tile a1 = kb.regTile(name + "_a1", {heads, half}, DType::f32), a2 = kb.regTile(name + "_a2", {heads, half}, DType::f32);
      Tile tmp = kb.regTile(name + "_tmp", {heads, half}, DType::f32);
      Index row = t * heads;
      kb.load(X, {row, 0}, x1);
      kb.load(X, {row, half}, x2);
      kb.load(cache, {p, 0}, cs);
      kb.load(cache, {p, half}, sn);
      rotate(kb, x1, x2, cs, sn, a1, a2, tmp);
      kb.store(a1, X, {row, 0});
      kb.store(a2, X, {row, half});
      return;
    }
    // One head at a time: its D / 2 pairs as two [D / 2, 1] columns of the
    // [tokens * heads * D / 2, 2] view, the cosines and sines as columns of
    // the cache's [max_position * D, 1] view.
    Tile x1 = kb.regTile(name + "1", {half, 1}, c.dtype), x2 = kb.regTile(name + "2", {half, 1}, c.dtype);
    Tile cs = kb.regTile(name + "_cos", {half, 1}, c.dtype), sn = kb.regTile(name + "_sin", {half, 1}, c.dtype);
    Tile a1 = kb.regTile(name + "_a1", {half, 1}, DType::f32), a2 = kb.regTile(name + "_a2", {half, 1}, DType::f32);
    Tile tmp = kb.regTile(name + "_tmp", {half, 1}, DType::f32);
    kb.load(cache, {p * D, 0}, cs);
    kb.load(cache, {p * D + half, 0}, sn);
    kb.forLoop(0, heads, 1, {.name = name + "_head"}, [&](Index h) {
      Index row = (t * heads + h) * half;
      kb.load(X, {row, 0}, x1);
      kb.load(X, {row, 1}, x2);
      rotate(kb, x1, x2, cs, sn, a1, a2, tmp);
      kb.store(a1, X, {row, 0});
      kb.store(a2, X, {row, 1});
    });
  };
  // Tokens past the end read position 0 and rows of zeros; their stores are
  // dropped. Each element is loaded and stored by the thread that owns it
  // (threads holding copies never store), so rotating in place needs no
  // barrier.
  kb.forLoop(0, c.tokensPerGroup, 1, {.name = "token"}, [&](Index j) {
    Index t = t0 + j;
    Index p = kb.loadIndex(positions, t);
    rotateHeads(Q, c.heads, "q", t, p);
    rotateHeads(K, c.kvHeads, "k", t, p);
  });
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

Problem ropeProblem(const RopeConfig &c, int64_t tokens, int64_t maxPosition) {
  const int64_t D = c.headDim, half = D / 2, H = c.heads, KH = c.kvHeads;
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> anyPosition(0, maxPosition - 1);
  std::vector<double> pos(tokens), q(tokens * H * D), k(tokens * KH * D), cache(maxPosition * D);
  for (double &p : pos)
    p = double(anyPosition(rng));
  // Read and written: fixed contents (uniform in [-1, 1), rounded to dtype).
  for (double &e : q)
    e = roundTo(c.dtype, unit(rng));
  for (double &e : k)
    e = roundTo(c.dtype, unit(rng));
  // The angles of vLLM's RotaryEmbedding: p / 10000^(2 i / D), in dtype.
  for (int64_t p = 0; p < maxPosition; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = double(p) * std::pow(10000.0, -2.0 * double(i) / double(D));
      cache[p * D + i] = roundTo(c.dtype, std::cos(angle));
      cache[p * D + half + i] = roundTo(c.dtype, std::sin(angle));
    }
  // The kernel's views of the same memory (Rope.h).
  auto view = [&](int64_t rows) -> std::vector<int64_t> {
    return c.neox ? std::vector<int64_t>{rows, D} : std::vector<int64_t>{rows * half, 2};
  };
  Problem prob;
  prob.tensors.push_back({"positions", DType::i32, {tokens}, false, pos});
  prob.tensors.push_back({"Q", c.dtype, view(tokens * H), /*output=*/true, std::move(q)});
  prob.tensors.push_back({"K", c.dtype, view(tokens * KH), /*output=*/true, std::move(k)});
  prob.tensors.push_back({"cos_sin_cache", c.dtype,
                          c.neox ? std::vector<int64_t>{maxPosition, D} : std::vector<int64_t>{maxPosition * D, 1}, false,
                          std::move(cache)});
  // y1 = x1 c - x2 s in f32 (u = 2^-24): the two products and the difference
  // each round once, within u (|x1 c| + |x2 s|) + u |y1| <= 2 u (|x1 c| +
  // |x2 s|) plus second-order terms (3 u covers them; a fused multiply-add
  // rounds less); likewise y2. Rounding to dtype adds u_t relative of the f32
  // value, and half the subnormal spacing below the smallest normal.
  const double ut = unitRoundoff(c.dtype), u = 0x1p-24;
  prob.toleranceRule = "|y - ref| <= u_t |ref| + (1 + u_t) 3 u (|x1 c| + |x2 s|) + half the dtype's subnormal spacing, "
                       "u = 2^-24, u_t the dtype's";
  const RopeConfig cfg = c;
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &cs = v[3];
    expected.clear();
    tolerance.clear();
    for (int which = 0; which < 2; ++which) {
      const std::vector<double> &x = v[1 + which];
      const int64_t heads = which == 0 ? H : KH;
      std::vector<double> y(x.size()), tol(x.size());
      for (int64_t t = 0; t < tokens; ++t) {
        const int64_t p = int64_t(v[0][t]);
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t i = 0; i < half; ++i) {
            const int64_t base = (t * heads + h) * D;
            // Element indices of pair i: halves (neox) or neighbours (gptj).
            const int64_t i1 = base + (cfg.neox ? i : 2 * i), i2 = base + (cfg.neox ? i + half : 2 * i + 1);
            const double c1 = cs[p * D + i], s1 = cs[p * D + half + i];
            const double y1 = x[i1] * c1 - x[i2] * s1, y2 = x[i2] * c1 + x[i1] * s1;
            const double e1 = 3 * u * (std::fabs(x[i1] * c1) + std::fabs(x[i2] * s1));
            const double e2 = 3 * u * (std::fabs(x[i2] * c1) + std::fabs(x[i1] * s1));
            y[i1] = y1;
            y[i2] = y2;
            tol[i1] = ut * std::fabs(y1) + (1 + ut) * e1 + subnormalHalfUlp(cfg.dtype);
            tol[i2] = ut * std::fabs(y2) + (1 + ut) * e2 + subnormalHalfUlp(cfg.dtype);
          }
      }
      expected.push_back(std::move(y));
      tolerance.push_back(std::move(tol));
    }
  };
  return prob;
}

KernelInfo ropeKernelInfo() {
  KernelInfo info;
  info.name = "rope";
  info.summary = "rotary position embedding on Q and K in place, from a cos/sin cache and positions "
                 "(vLLM's rotary_embedding; neox or gptj style)";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 24)},
      {"max_position", "4096", "rows of the cos/sin cache (run-time; used by --run)",
       ParamSpec::integer(1, int64_t(1) << 20)},
      {"heads", "32", "query heads", ParamSpec::integer(1, 256)},
      {"kv_heads", "8", "key heads", ParamSpec::integer(1, 256)},
      {"head_dim", "128", "head size, even, 2..512 (rotary over all of it)", ParamSpec::integer(2, 512)},
      {"style", "neox", "neox (rotate halves) | gptj (rotate interleaved pairs)", ParamSpec::oneOf({"neox", "gptj"})},
      {"dtype", "bf16", "bf16 | f16 | f32", ParamSpec::dtype({DType::bf16, DType::f16, DType::f32})},
      {"tokens_per_group", "4", "tokens per workgroup, 1..64", ParamSpec::integer(1, 64)},
      {"waves", "4", "wavefronts per workgroup", ParamSpec::integer(1, 16)},
  };
  struct RunTime {
    int64_t tokens = 0, maxPosition = 0;
  };
  elementwise::bindKernel<RopeConfig, RunTime>(
      info,
      [](ParamReader &p, RopeConfig &c, RunTime &run) -> std::string {
        run.tokens = p.integer("tokens");
        run.maxPosition = p.integer("max_position");
        c.heads = p.integer("heads");
        c.kvHeads = p.integer("kv_heads");
        c.headDim = p.integer("head_dim");
        c.neox = p.choice("style") == "neox";
        c.dtype = p.dtype("dtype");
        c.tokensPerGroup = p.integer("tokens_per_group");
        c.waves = static_cast<int>(p.integer("waves"));
        if (p.ok() && c.headDim % 2 != 0)
          return "kernel 'rope': head_dim must be even, got " + std::to_string(c.headDim);
        return "";
      },
      buildRope,
      [](const RopeConfig &c, const RunTime &run) { return ropeProblem(c, run.tokens, run.maxPosition); });
  return info;
}

} // namespace tilec::kernels
