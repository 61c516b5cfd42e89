// Mixture-of-experts kernels in the DSL (docs/moe.md).
#include "moe/Moe.h"
#include "DeviceMath.h"

#include "Params.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace tilec::kernels {

namespace {

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

} // namespace

// ---- Gating -------------------------------------------------------------------
//
// One workgroup holds 16 tokens per wave, all experts as columns (padded to a
// multiple of 16 and masked to -inf). Softmax: p = exp2((x - max) log2 e) / sum.
// Top-k runs on the logits, not on p: the logits are exact inputs, so the
// selection is the reference's exactly (p could round two different logits to
// one value). Step j: m = rowmax(x); the lowest column holding m is
// rowmin(col + 1024 * (x != m)) (1024 > any column; every value an exact
// integer in f32); its weight is rowsum(p * onehot) (one nonzero term, exact);
// x becomes -inf there for the next step.

std::string moeGateKernelName(const MoeGateConfig &c) {
  return "moe_gate_" + std::string(dtypeName(c.dtype)) + "_e" + std::to_string(c.experts) + "_k" +
         std::to_string(c.topk) + (c.renormalize ? "_renorm" : "") + "_w" + std::to_string(c.waves);
}

Result<Kernel> buildMoeGate(const MoeGateConfig &c) {
  using namespace dsl;
  if (c.experts < 1 || c.experts > 128)
    return Error{"moe_gate: experts must be in [1, 128], got " + std::to_string(c.experts)};
  if (c.topk < 1 || c.topk > 8 || c.topk > c.experts)
    return Error{"moe_gate: topk must be in [1, min(8, experts)], got " + std::to_string(c.topk) +
                 " with " + std::to_string(c.experts) + " experts"};
  const int64_t BM = 16 * c.waves, EC = roundUp(c.experts, 16);
  const double log2e = 1.4426950408889634, notHit = 1024;

  KernelBuilder kb(moeGateKernelName(c), {.numWaves = c.waves});
  Tensor logits = kb.tensor("logits", c.dtype, 2);
  Tensor weights = kb.tensor("topk_weights", DType::f32, 2);
  Tensor ids = kb.tensor("topk_ids", DType::i32, 2);
  kb.grid({GridExtent::ceilDiv(logits, 0, BM)});
  Index r0 = kb.blockId(0) * BM;

  Tile x = kb.regTile("x", {BM, EC}, DType::f32);
  Tile p = kb.regTile("p", {BM, EC}, DType::f32);
  Tile col = kb.regTile("col", {BM, EC}, DType::f32);
  Tile hit = kb.regTile("hit", {BM, EC}, DType::f32);
  Tile m = kb.regTile("m", {BM}, DType::f32), l = kb.regTile("l", {BM}, DType::f32);
  Tile idx = kb.regTile("idx", {BM}, DType::f32), sum = kb.regTile("sum", {BM}, DType::f32);
  std::vector<Tile> w;
  for (int64_t j = 0; j < c.topk; ++j)
    w.push_back(kb.regTile("w" + std::to_string(j), {BM}, DType::f32));

  if (c.dtype == DType::f32) {
    kb.load(logits, {r0, 0}, x);
  } else {
    Tile in = kb.regTile("logits_in", {BM, EC}, c.dtype);
    kb.load(logits, {r0, 0}, in);
    kb.convert(x, in);
  }
  kb.mask(x, 0, 0, logits.dim(1));  // the padding columns: -inf

  // Softmax over the experts.
  kb.reduce(ReduceKind::max, x, m);
  kb.scale(p, x, log2e);
  kb.scale(l, m, log2e);
  kb.subExp2(p, p, l);
  kb.reduce(ReduceKind::sum, p, l);
  kb.safeDiv(p, p, l);

  // Top-k on the logits, ties to the lowest expert.
  kb.iota(col, 1);
  kb.fill(sum, 0.0);
  for (int64_t j = 0; j < c.topk; ++j) {
    kb.reduce(ReduceKind::max, x, m);
    kb.eq(hit, x, m);
    kb.scale(hit, hit, -notHit);
    kb.addScalar(hit, hit, notHit);
    kb.add(hit, hit, col);
    kb.reduce(ReduceKind::min, hit, idx);
    kb.store(idx, ids, {r0, Index(j)});
    kb.eq(hit, col, idx);  // one-hot of the chosen expert
    kb.negInfWhere(x, x, hit);
    kb.mul(hit, hit, p);
    kb.reduce(ReduceKind::sum, hit, w[j]);
    kb.add(sum, sum, w[j]);
  }
  for (int64_t j = 0; j < c.topk; ++j) {
    if (c.renormalize)
      kb.div(w[j], w[j], sum);
    kb.store(w[j], weights, {r0, Index(j)});
  }

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

namespace {

/// The gate in double: top-k by logit (ties: lowest index), softmax weights
/// (renormalised if asked) and their tolerances (moeGateProblem derives them).
struct GateReference {
  std::vector<int64_t> ids;
  std::vector<double> weights, weightTol;
};
GateReference gateReference(const MoeGateConfig &c, int64_t tokens, const std::vector<double> &x) {
  const int64_t E = c.experts, K = c.topk;
  const double u = std::ldexp(1.0, -24);
  GateReference g{std::vector<int64_t>(tokens * K), std::vector<double>(tokens * K), std::vector<double>(tokens * K)};
  std::vector<int64_t> order(E);
  for (int64_t t = 0; t < tokens; ++t) {
    const double *row = &x[t * E];
    double mx = *std::max_element(row, row + E), X = 0, denom = 0;
    for (int64_t e = 0; e < E; ++e) {
      denom += std::exp(row[e] - mx);
      X = std::max(X, std::fabs(row[e]));
    }
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    double selected = 0;
    for (int64_t j = 0; j < K; ++j)
      selected += std::exp(row[order[j]] - mx) / denom;
    const double rel =
        (2 * X * std::log2(std::exp(1.0)) * std::log(2.0) + 4 + 2 * devicemath::kDiv + double(E) + double(K)) * u;
    for (int64_t j = 0; j < K; ++j) {
      double p = std::exp(row[order[j]] - mx) / denom;
      if (c.renormalize)
        p /= selected;
      g.weights[t * K + j] = p;
      g.weightTol[t * K + j] = rel * p;
      g.ids[t * K + j] = order[j];
    }
  }
  return g;
}

} // namespace

Problem moeGateProblem(const MoeGateConfig &c, int64_t tokens, std::vector<double> logits) {
  const int64_t E = c.experts, K = c.topk;
  Problem prob;
  prob.tensors = {
      {"logits", c.dtype, {tokens, E}, false, std::move(logits)},
      {"topk_weights", DType::f32, {tokens, K}, /*output=*/true},
      {"topk_ids", DType::i32, {tokens, K}, /*output=*/true},
  };
  // The ids match exactly: the selection compares the exact input logits.
  // A weight is p_e = 2^(x_e log2e - m log2e) / sum_i 2^(x_i log2e - m log2e)
  // in f32 (u = 2^-24): each product x log2e rounds (|error| <= u |x| log2e in
  // the exponent, twice: x and m), the subtraction and exp2 round (2u; libm's
  // exp2 in the emulator is correctly rounded, the hardware's v_exp_f32 is
  // within 1 ulp: 2u), the sum of E terms errs by at most E u relative, the
  // division kDiv u (3u: v_rcp_f32 within 1 ulp, then a product;
  // kernels/DeviceMath.h), the renormalising sum K u and its division kDiv u.
  // With X = max|x| of the row, each weight is within
  //   rel = (2 X log2e ln2 + 4 + 2 kDiv + E + K) u
  // relative (ln2: a change d of the exponent changes 2^y by a factor 2^d,
  // about 1 + d ln2).
  static_assert(4 + 2 * devicemath::kDiv == 10, "the rule below states the sum");
  prob.toleranceRule = "ids exact; |w - ref| <= (2*X + 10 + E + K) * 2^-24 * |ref|, X = max|logit| of the token";
  const MoeGateConfig cfg = c;
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    GateReference g = gateReference(cfg, tokens, v[0]);
    expected = {std::move(g.weights), std::vector<double>(g.ids.begin(), g.ids.end())};
    tolerance = {std::move(g.weightTol), std::vector<double>(tokens * cfg.topk, 0.0)};
  };
  return prob;
}

KernelInfo moeGateKernelInfo() {
  KernelInfo info;
  info.name = "moe_gate";
  info.summary = "MoE gating: softmax over the experts' logits, top-k experts per token (ties: lowest index), "
                 "optionally renormalised weights";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 24)},
      {"experts", "8", "experts, 1..128", ParamSpec::integer(1, 128)},
      {"topk", "2", "experts per token, 1..8", ParamSpec::integer(1, 8)},
      {"renormalize", "1", "1: the k weights are divided by their sum", ParamSpec::integer(0, 1)},
      {"dtype", "bf16", "bf16 | f16 | f32 (logits)", ParamSpec::dtype({DType::bf16, DType::f16, DType::f32})},
      {"waves", "4", "wavefronts per workgroup (16 tokens each)", ParamSpec::integer(1, 16)},
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given, int64_t *tokens)
      -> Result<MoeGateConfig> {
    ParamReader p(name, params, given);
    MoeGateConfig c;
    *tokens = p.integer("tokens");
    c.experts = p.integer("experts");
    c.topk = p.integer("topk");
    c.renormalize = p.integer("renormalize") == 1;
    c.dtype = p.dtype("dtype");
    c.waves = static_cast<int>(p.integer("waves"));
    if (!p.ok())
      return p.error();
    if (c.topk > c.experts)
      return Error{"kernel 'moe_gate': topk (" + std::to_string(c.topk) + ") exceeds experts (" +
                   std::to_string(c.experts) + ")"};
    return c;
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    int64_t tokens = 0;
    Result<MoeGateConfig> c = read(given, &tokens);
    if (!c)
      return Error{c.error()};
    return buildMoeGate(*c);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    int64_t tokens = 0;
    Result<MoeGateConfig> c = read(given, &tokens);
    if (!c)
      return Error{c.error()};
    return moeGateProblem(*c, tokens);
  };
  return info;
}


// ---- Expert GEMMs and combine ------------------------------------------------
//
// gate_up and down: one workgroup per (block of block_m sorted positions,
// block_n output columns). The block's expert comes from block_experts; a
// block past the padded total (-1) runs no k step and writes zeros. A's rows
// are gathered through the sorted token ids (the sentinel `tokens` reads as 0),
// B is the expert's slice of the weights, a window into W13 or W2 given as
// N x K (transposed operand). combine: one workgroup per (block_m tokens,
// block_n columns) gathers each token's j-th expert row of Y through the
// positions, scales it by the weight and adds, j in order.

int64_t moeDivisibility(int64_t extent, DType dtype) {
  int64_t d = 1;
  while (d < 16 / dtypeBytes(dtype) && extent % (2 * d) == 0)
    d *= 2;
  return d;
}

std::string moeExpertsKernelName(const MoeExpertsConfig &c) {
  const char *part = c.part == MoeExpertsConfig::Part::GateUp ? "gate_up"
                     : c.part == MoeExpertsConfig::Part::Down ? "down"
                                                               : "combine";
  std::string name = "moe_" + std::string(part) + "_" + dtypeName(c.dtype) + "_" + std::to_string(c.blockM) + "x" +
                     std::to_string(c.blockN);
  // What the rows are assumed to be multiples of: the hidden size's, then
  // the intermediate size's (none: rows of any length).
  const std::string div = c.divisibilityHidden > 1 || c.divisibilityInter > 1
                              ? "_div" + std::to_string(c.divisibilityHidden) + "x" + std::to_string(c.divisibilityInter)
                              : "";
  if (c.part == MoeExpertsConfig::Part::Combine)
    return "moe_combine_" + std::string(dtypeName(c.dtype)) + "_" + std::to_string(16 * c.waves) + "x" +
           std::to_string(c.blockN) + "_k" + std::to_string(c.topk) + "_w" + std::to_string(c.waves) + div;
  return name + "x" + std::to_string(c.blockK) + "_w" + std::to_string(c.waves) +
         (c.stages > 1 ? "_s" + std::to_string(c.stages) : "") + div;
}

namespace {

/// The block's expert e (-1: no block), the expert clamped to 0 for window
/// origins, and 1 when the block is active (e >= 0), else 0.
struct BlockExpert {
  dsl::Index expert, safe, active;
};
BlockExpert blockExpert(dsl::KernelBuilder &kb, const dsl::Tensor &blockExperts, const dsl::Index &block) {
  dsl::Index e = kb.loadIndex(blockExperts, block);
  return {e, max(e, 0), min(e + 1, 1)};
}

Result<Kernel> buildExpertGemm(const MoeExpertsConfig &c) {
  using namespace dsl;
  const bool gateUp = c.part == MoeExpertsConfig::Part::GateUp;
  const int64_t BM = c.blockM, BN = c.blockN, BK = c.blockK;
  KernelBuilder kb(moeExpertsKernelName(c), {.numWaves = c.waves});
  // The k extent (hidden for gate_up, intermediate for down) is a multiple of
  // dk: A's and W's rows load (and gather) dk elements at a time.
  const TensorOptions rowsOfK{.divisibility = gateUp ? c.divisibilityHidden : c.divisibilityInter};
  Tensor A = kb.tensor(gateUp ? "X" : "H", c.dtype, 2, rowsOfK);     // [tokens, hidden] or [P, I]
  Tensor W = kb.tensor(gateUp ? "W13" : "W2", c.dtype, 2, rowsOfK);  // [E * 2I, hidden] or [E * hidden, I]
  std::optional<Tensor> sorted;
  if (gateUp)
    sorted = kb.tensor("sorted_token_ids", DType::i32, 1);
  Tensor blockExperts = kb.tensor("block_experts", DType::i32, 1);
  Tensor Out = gateUp ? kb.tensor("H", c.dtype, 2) : kb.tensor("Y", DType::f32, 2);  // [P, I] or [P, hidden]
  kb.grid({GridExtent::ceilDiv(Out, 0, BM), GridExtent::ceilDiv(Out, 1, BN)});
  Index block = kb.blockId(0), row = block * BM, col = kb.blockId(1) * BN;
  BlockExpert be = blockExpert(kb, blockExperts, block);
  Index K = A.dim(1), N = Out.dim(1);
  Index numK = cdiv(K, BK) * be.active;

  Tile a = kb.ldsTile("a_lds", {BM, BK}, c.dtype);
  Tile acc = kb.regTile("acc", {BM, BN}, DType::f32);
  kb.fill(acc, 0.0);
  if (gateUp) {
    // The expert's I gate rows, then its I up rows.
    Tensor Wg = kb.window(W, {be.safe * 2 * N, 0}, {N, K});
    Tensor Wu = kb.window(W, {be.safe * 2 * N + N, 0}, {N, K});
    Tile bg = kb.ldsTile("wg_lds", {BN, BK}, c.dtype), bu = kb.ldsTile("wu_lds", {BN, BK}, c.dtype);
    Tile up = kb.regTile("up", {BM, BN}, DType::f32);
    kb.fill(up, 0.0);
    kb.forLoop(0, numK, 1, {.numStages = c.stages, .name = "kt"}, [&](Index kt) {
      Index k = kt * BK;
      kb.gather(A, *sorted, row, k, a);
      kb.load(Wg, {col, k}, bg);
      kb.load(Wu, {col, k}, bu);
      kb.gemm(a, bg, acc, {.transposeB = true});
      kb.gemm(a, bu, up, {.transposeB = true});
    });
    kb.silu(acc, acc);
    kb.mul(acc, acc, up);
  } else {
    Tensor We = kb.window(W, {be.safe * N, 0}, {N, K});
    Tile b = kb.ldsTile("w_lds", {BN, BK}, c.dtype);
    kb.forLoop(0, numK, 1, {.numStages = c.stages, .name = "kt"}, [&](Index kt) {
      Index k = kt * BK;
      kb.load(A, {row, k}, a);
      kb.load(We, {col, k}, b);
      kb.gemm(a, b, acc, {.transposeB = true});
    });
  }
  kb.store(acc, Out, {row, col});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

Result<Kernel> buildCombine(const MoeExpertsConfig &c) {
  using namespace dsl;
  // 16 tokens per wave: the weights are row vectors of the tokens' rows.
  const int64_t BM = 16 * c.waves, BN = c.blockN;
  KernelBuilder kb(moeExpertsKernelName(c), {.numWaves = c.waves});
  // Y's rows (hidden f32 elements) gather in runs of what hidden is a multiple of, up to 16 bytes.
  Tensor Y = kb.tensor("Y", DType::f32, 2, {.divisibility = std::min<int64_t>(c.divisibilityHidden, 4)});  // [P, hidden]
  Tensor pos = kb.tensor("positions", DType::i32, 1);     // [k * tokens]
  Tensor weights = kb.tensor("topk_weights", DType::f32, 2);  // [tokens, k]
  Tensor Out = kb.tensor("out", c.dtype, 2);              // [tokens, hidden]
  kb.grid({GridExtent::ceilDiv(Out, 0, BM), GridExtent::ceilDiv(Out, 1, BN)});
  Index t0 = kb.blockId(0) * BM, col = kb.blockId(1) * BN, tokens = Out.dim(0);
  Tile y = kb.ldsTile("y_lds", {BM, BN}, DType::f32);
  Tile yr = kb.regTile("y", {BM, BN}, DType::f32), acc = kb.regTile("acc", {BM, BN}, DType::f32);
  Tile w = kb.regTile("w", {BM}, DType::f32);
  kb.fill(acc, 0.0);
  // A loop rather than k unrolled copies: clang would hoist all k gathers and
  // spill (gfx1151, k = 8).
  kb.forLoop(0, c.topk, 1, {.name = "j"}, [&](Index j) {
    kb.gather(Y, pos, tokens * j + t0, col, y);
    kb.copy(y, yr);
    kb.load(weights, {t0, j}, w);
    kb.mul(yr, yr, w);
    kb.add(acc, acc, yr);
  });
  kb.store(acc, Out, {t0, col});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

} // namespace

Result<Kernel> buildMoeExperts(const MoeExpertsConfig &c) {
  if (c.dtype != DType::bf16 && c.dtype != DType::f16)
    return Error{"moe_experts: dtype must be bf16 or f16"};
  return c.part == MoeExpertsConfig::Part::Combine ? buildCombine(c) : buildExpertGemm(c);
}

MoeAlignment alignTokens(const std::vector<int64_t> &topkIds, int64_t tokens, int64_t topk, int64_t experts,
                         int64_t blockM) {
  MoeAlignment a;
  const int64_t pairs = tokens * topk;
  const int64_t maxPadded = roundUp(pairs + experts * (blockM - 1), blockM);
  a.sortedTokenIds.assign(maxPadded, tokens);
  a.blockExperts.assign(maxPadded / blockM, -1);
  a.positions.assign(pairs, -1);
  int64_t next = 0;
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t start = next;
    for (int64_t j = 0; j < topk; ++j)
      for (int64_t t = 0; t < tokens; ++t)
        if (topkIds[t * topk + j] == e) {
          a.sortedTokenIds[next] = t;
          a.positions[j * tokens + t] = next;
          ++next;
        }
    next = start + roundUp(next - start, blockM);
    for (int64_t b = start / blockM; b < next / blockM; ++b)
      a.blockExperts[b] = e;
  }
  a.paddedTotal = next;
  return a;
}

namespace {

struct MoeExpertsProblemConfig {
  MoeExpertsConfig kernels;
  int64_t tokens = 64, experts = 8, hidden = 128, intermediate = 256;
  enum class Routing { Random, OneExpert } routing = Routing::Random;
};

double unitRoundoffOf(DType t) { return t == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11); }

/// |silu'(x)| = |s(x) (1 + x (1 - s(x)))| <= 1.0999 for every x (s: sigmoid).
constexpr double kSiluSlope = 1.1;
/// The relative error of h = silu(g) v in f32, in units of 2^-24: the
/// prelude's silu (kernels/DeviceMath.h) and the product.
constexpr double kSiluRounding = devicemath::kSilu + 1;

/// Top-k ids for `tokens`: k distinct experts each, uniformly, or (one) every
/// token's first choice expert experts/2.
std::vector<int64_t> routeTokens(int64_t tokens, int64_t experts, int64_t topk, bool oneExpert, std::mt19937_64 &rng) {
  std::vector<int64_t> ids(tokens * topk), order(experts);
  for (int64_t t = 0; t < tokens; ++t) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    if (oneExpert)
      std::swap(order[0], *std::find(order.begin(), order.end(), experts / 2));
    for (int64_t j = 0; j < topk; ++j)
      ids[t * topk + j] = order[j];
  }
  return ids;
}


/// The experts' shapes, for expertsReference.
struct ExpertShape {
  int64_t tokens, topk, hidden, intermediate;
  DType dtype;
};

/// out[t] = sum_j w[t, j] expert_{ids[t, j]}(x[t]) in double, and the error
/// bound of the three kernels (moeExpertsProblem derives it); weightTol bounds
/// the error of the weights (0 when they are exact inputs).
void expertsReference(const ExpertShape &s, const std::vector<double> &x, const std::vector<double> &w13,
                      const std::vector<double> &w2, const std::vector<int64_t> &ids,
                      const std::vector<double> &weights, const std::vector<double> &weightTol,
                      std::vector<double> &out, std::vector<double> &tol) {
  const int64_t T = s.tokens, K = s.topk, Hd = s.hidden, I = s.intermediate;
  const double u = std::ldexp(1.0, -24), uIn = unitRoundoffOf(s.dtype);
  out.assign(T * Hd, 0.0);
  tol.assign(T * Hd, 0.0);
  std::vector<double> h(I), dh(I), y(Hd), dy(Hd), mag(Hd, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    std::fill(mag.begin(), mag.end(), 0.0);
    for (int64_t j = 0; j < K; ++j) {
      const int64_t e = ids[t * K + j];
      const double wj = weights[t * K + j], dwj = weightTol[t * K + j];
      const double *xt = &x[t * Hd];
      for (int64_t i = 0; i < I; ++i) {
        const double *wg = &w13[(e * 2 * I + i) * Hd], *wu = &w13[(e * 2 * I + I + i) * Hd];
        double g = 0, gv = 0, mg = 0, mv = 0;
        for (int64_t k = 0; k < Hd; ++k) {
          g += xt[k] * wg[k];
          gv += xt[k] * wu[k];
          mg += std::fabs(xt[k] * wg[k]);
          mv += std::fabs(xt[k] * wu[k]);
        }
        const double silu = g / (1 + std::exp(-g));
        h[i] = silu * gv;
        dh[i] = kSiluSlope * std::fabs(gv) * double(Hd) * u * mg + std::fabs(silu) * double(Hd) * u * mv +
                (kSiluRounding * u + uIn) * std::fabs(h[i]);
      }
      for (int64_t n = 0; n < Hd; ++n) {
        const double *w2n = &w2[(e * Hd + n) * I];
        double acc = 0, err = 0, m = 0;
        for (int64_t i = 0; i < I; ++i) {
          acc += h[i] * w2n[i];
          err += std::fabs(w2n[i]) * dh[i];
          m += (std::fabs(h[i]) + dh[i]) * std::fabs(w2n[i]);
        }
        y[n] = acc;
        dy[n] = err + double(I) * u * m;
        out[t * Hd + n] += wj * y[n];
        tol[t * Hd + n] += wj * dy[n] + dwj * (std::fabs(y[n]) + dy[n]);
        mag[n] += (wj + dwj) * (std::fabs(y[n]) + dy[n]);
      }
    }
    for (int64_t n = 0; n < Hd; ++n)
      tol[t * Hd + n] += double(K) * u * mag[n] + uIn * (std::fabs(out[t * Hd + n]) + tol[t * Hd + n]);
  }
}

std::string expertsToleranceRule(DType dtype) {
  static_assert(kSiluRounding <= 10.6, "the rule below states the bound");
  return "error bound followed through gate_up (H u sum|xw|, silu slope 1.1, 10.6u + uIn rounding of h), "
         "down (I u sum|h w2|) and combine (k u sum|w y| + uIn |out|), u = 2^-24, uIn = " +
         std::string(dtype == DType::bf16 ? "2^-8 (bf16)" : "2^-11 (f16)");
}

Problem moeExpertsProblem(const MoeExpertsProblemConfig &c, uint64_t seed) {
  const int64_t T = c.tokens, E = c.experts, K = c.kernels.topk, Hd = c.hidden, I = c.intermediate;
  const int64_t BM = c.kernels.blockM;
  // The routing: k distinct experts per token and positive weights summing to 1.
  std::mt19937_64 rng(seed ^ 0x6d6f65ull);
  std::vector<int64_t> ids = routeTokens(T, E, K, c.routing == MoeExpertsProblemConfig::Routing::OneExpert, rng);
  std::vector<double> weights(T * K);
  for (int64_t t = 0; t < T; ++t) {
    double sum = 0;
    for (int64_t j = 0; j < K; ++j)
      sum += (weights[t * K + j] = std::uniform_real_distribution<double>(0.05, 1.0)(rng));
    for (int64_t j = 0; j < K; ++j)
      weights[t * K + j] = static_cast<double>(static_cast<float>(weights[t * K + j] / sum));
  }
  MoeAlignment al = alignTokens(ids, T, K, E, BM);
  const int64_t P = static_cast<int64_t>(al.sortedTokenIds.size());
  auto doubles = [](const std::vector<int64_t> &v) { return std::vector<double>(v.begin(), v.end()); };

  Problem prob;
  prob.tensors = {
      {"X", c.kernels.dtype, {T, Hd}},
      {"W13", c.kernels.dtype, {E * 2 * I, Hd}},
      {"W2", c.kernels.dtype, {E * Hd, I}},
      {"sorted_token_ids", DType::i32, {P}, false, doubles(al.sortedTokenIds)},
      {"block_experts", DType::i32, {P / BM}, false, doubles(al.blockExperts)},
      {"positions", DType::i32, {K * T}, false, doubles(al.positions)},
      {"topk_weights", DType::f32, {T, K}, false, weights},
      {"H", c.kernels.dtype, {P, I}, false, {}, /*scratch=*/true},
      {"Y", DType::f32, {P, Hd}, false, {}, /*scratch=*/true},
      {"out", c.kernels.dtype, {T, Hd}, /*output=*/true},
  };
  prob.launches = {
      {{{"part", "gate_up"}}, {0, 1, 3, 4, 7}, {}},
      {{{"part", "down"}}, {7, 2, 4, 8}, {}},
      {{{"part", "combine"}}, {8, 5, 6, 9}, {}},
  };
  // Error bound, per output element, followed through the three kernels
  // (u = 2^-24, uIn = the dtype's unit roundoff; inputs exact in their type):
  //  g, v = x Wg^T, x Wu^T: f32 sums of H exact products: |dg| <= H u sum|x w|;
  //  h = silu(g) v in f32 (silu: devicemath::kSilu; the product u),
  //    rounded to the dtype: |dh| <= 1.1 |v| |dg| + |silu g| |dv| + (kSilu u + u + uIn) |h|;
  //  y = h W2^T in f32: |dy| <= sum |w2| |dh| + I u sum |h w2|;
  //  out = sum_j w_j y_j in f32 (w exact f32), rounded to the dtype:
  //    |dout| <= sum_j w_j |dy_j| + k u sum_j w_j |y_j| + uIn |out|.
  prob.toleranceRule = expertsToleranceRule(c.kernels.dtype);
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    expected.assign(1, {});
    tolerance.assign(1, {});
    expertsReference({T, K, Hd, I, c.kernels.dtype}, v[0], v[1], v[2], ids, weights,
                     std::vector<double>(weights.size(), 0.0), expected[0], tolerance[0]);
  };
  return prob;
}

} // namespace

KernelInfo moeExpertsKernelInfo() {
  KernelInfo info;
  info.name = "moe_experts";
  info.summary = "MoE expert GEMMs over the token alignment: gate_up (gathered rows, fused SwiGLU), down, "
                 "and the deterministic weighted combine (three kernels; --run routes on the host)";
  info.params = {
      {"part", "gate_up", "gate_up | down | combine: the kernel --emit compiles (--run runs all three)",
       ParamSpec::oneOf({"gate_up", "down", "combine"})},
      {"tokens", "64", "tokens (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 20)},
      {"experts", "8", "experts (run-time; used by --run)", ParamSpec::integer(1, 512)},
      {"topk", "2", "experts per token, 1..8 (combine)", ParamSpec::integer(1, 8)},
      {"hidden", "128", "hidden size (run-time; the expert kernels assume the powers of two dividing it, up to 16 bytes)",
       ParamSpec::integer(1, int64_t(1) << 16)},
      {"intermediate", "256", "intermediate size (run-time; the expert kernels assume the powers of two dividing it, up to 16 bytes)",
       ParamSpec::integer(1, int64_t(1) << 16)},
      {"routing", "random", "--run: random | one (every token's first choice is expert experts/2)",
       ParamSpec::oneOf({"random", "one"})},
      {"dtype", "bf16", "bf16 | f16", ParamSpec::dtype({DType::bf16, DType::f16})},
      {"block_m", "32", "sorted rows per block (the alignment's padding)", ParamSpec::integer(16, 256)},
      {"block_n", "64", "output columns per workgroup", ParamSpec::integer(16, 256)},
      {"block_k", "32", "k step", ParamSpec::integer(16, 128)},
      {"waves", "4", "wavefronts per workgroup", ParamSpec::integer(1, 16)},
      {"stages", "2", "software-pipelining depth of the gate_up and down k loops (1..4)", ParamSpec::integer(1, 4)},
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<MoeExpertsProblemConfig> {
    ParamReader p(name, params, given);
    MoeExpertsProblemConfig c;
    MoeExpertsConfig &k = c.kernels;
    std::string part = p.choice("part");
    k.part = part == "gate_up" ? MoeExpertsConfig::Part::GateUp
             : part == "down"  ? MoeExpertsConfig::Part::Down
                               : MoeExpertsConfig::Part::Combine;
    c.tokens = p.integer("tokens");
    c.experts = p.integer("experts");
    k.topk = p.integer("topk");
    c.hidden = p.integer("hidden");
    c.intermediate = p.integer("intermediate");
    c.routing = p.choice("routing") == "one" ? MoeExpertsProblemConfig::Routing::OneExpert
                                                                : MoeExpertsProblemConfig::Routing::Random;
    k.dtype = p.dtype("dtype");
    k.blockM = p.integer("block_m");
    k.blockN = p.integer("block_n");
    k.blockK = p.integer("block_k");
    k.waves = static_cast<int>(p.integer("waves"));
    k.stages = static_cast<int>(p.integer("stages"));
    if (!p.ok())
      return p.error();
    k.divisibilityHidden = moeDivisibility(c.hidden, k.dtype);
    k.divisibilityInter = moeDivisibility(c.intermediate, k.dtype);
    if (k.topk > c.experts)
      return Error{"kernel 'moe_experts': topk (" + std::to_string(k.topk) + ") exceeds experts (" +
                   std::to_string(c.experts) + ")"};
    return c;
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<MoeExpertsProblemConfig> c = read(given);
    if (!c)
      return Error{c.error()};
    return buildMoeExperts(c->kernels);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<MoeExpertsProblemConfig> c = read(given);
    if (!c)
      return Error{c.error()};
    return moeExpertsProblem(*c, 0);
  };
  return info;
}


// ---- Token alignment ------------------------------------------------------------
//
// One workgroup, R = 16 * waves pairs per step: step (j, c) takes choice j of
// tokens [c R, c R + R). Experts are the rows of [EC, R] tiles (EC = experts
// rounded up to R), pairs their columns:
//   onehot[e][i] = (ids[t0 + i][j] == e), 0 past the last token
// (the ids, a row vector of an [R, EC] tile, are broadcast along its rows and
// transposed through LDS). Three passes:
//  1. counts[e] = sum of onehot over all steps (row sums);
//  2. blocks = ceil(counts / block_m); offsets = (strictly lower triangular
//     ones) @ blocks, a matrix product in f16 (integers below 2048 are exact:
//     up to 65536 tokens with block_m 32), times block_m;
//  3. per step, the pair's rank within its expert so far:
//     rank = onehot @ U (U[i'][i] = i' <= i) + the expert's count in earlier
//     steps, slot = offset + rank - 1, scattered as the token id; the slots
//     of the pairs are stored as the positions. The sentinel (tokens) fills
//     sorted_token_ids first, a barrier orders the two kinds of store.
//  4. block b's expert = the number of experts whose segment ends at or before
//     b block_m (-1 when all do: past the total).
// Every value is an integer held exactly in f32.

std::string moeAlignKernelName(const MoeAlignConfig &c) {
  return "moe_align_e" + std::to_string(c.experts) + "_bm" + std::to_string(c.blockM) + "_w" + std::to_string(c.waves);
}

Result<Kernel> buildMoeAlign(const MoeAlignConfig &c) {
  using namespace dsl;
  if (c.experts < 1 || c.experts > 64)
    return Error{"moe_align: experts must be in [1, 64], got " + std::to_string(c.experts)};
  const int64_t R = 16 * c.waves, EC = roundUp(c.experts, R), BM = c.blockM, E = c.experts;
  KernelBuilder kb(moeAlignKernelName(c), {.numWaves = c.waves});
  Tensor ids = kb.tensor("topk_ids", DType::i32, 2);
  Tensor sorted = kb.tensor("sorted_token_ids", DType::i32, 1);
  Tensor blockExperts = kb.tensor("block_experts", DType::i32, 1);
  Tensor positions = kb.tensor("positions", DType::i32, 1);
  Tensor total = kb.tensor("total_padded", DType::i32, 1);
  kb.grid({GridExtent::fixed(1)});
  Index T = ids.dim(0), K = ids.dim(1), chunks = cdiv(T, R);

  // The one-hot matrix of step (j, t0).
  Tile idsRows = kb.regTile("ids", {R}, DType::i32);
  Tile z = kb.regTile("ids_bcast", {R, EC}, DType::f32);
  Tile zT = kb.ldsTile("ids_t_lds", {EC, R}, DType::f32);
  Tile idsT = kb.regTile("ids_t", {EC, R}, DType::f32);
  Tile expertOf = kb.regTile("expert_of_row", {EC, R}, DType::f32);
  Tile onehot = kb.regTile("onehot", {EC, R}, DType::f32);
  kb.iota(expertOf, 0);
  auto onehotOf = [&](const Index &j, const Index &t0) {
    kb.load(ids, {t0, j}, idsRows);
    kb.fill(z, 0.0);
    kb.add(z, z, idsRows);
    kb.copy(z, zT, {.transpose = true});
    kb.copy(zT, idsT);
    kb.eq(onehot, idsT, expertOf);
    kb.mask(onehot, 0, t0, T);  // tokens past the end: -inf, then 0
    kb.relu(onehot, onehot);
  };

  // 1. counts per expert.
  Tile counts = kb.regTile("counts", {EC}, DType::f32);
  kb.fill(counts, 0.0);
  kb.forLoop(0, K, 1, {.name = "j"}, [&](Index j) {
    kb.forLoop(0, chunks, 1, {.name = "c"}, [&](Index ch) {
      onehotOf(j, ch * R);
      kb.reduce(ReduceKind::sum, onehot, counts, {.axis = 1, .accumulate = true});
    });
  });

  // 2. block-padded offsets: an exclusive prefix sum over the experts.
  Tile blocks = kb.regTile("blocks", {EC}, DType::f32);
  kb.scale(blocks, counts, 1.0 / double(BM));
  kb.ceil(blocks, blocks);
  Tile lower = kb.regTile("lower", {EC, EC}, DType::f32);
  kb.fill(lower, 1.0);
  kb.mask(lower, -1, 0, EC, {.causal = true});  // keeps column < row
  kb.relu(lower, lower);
  Tile lowerLds = kb.ldsTile("lower_lds", {EC, EC}, DType::f16);
  kb.copy(lower, lowerLds);
  Tile blocksMat = kb.regTile("blocks_mat", {EC, 16}, DType::f32);
  kb.fill(blocksMat, 0.0);
  kb.add(blocksMat, blocksMat, blocks);
  Tile blocksLds = kb.ldsTile("blocks_lds", {EC, 16}, DType::f16);
  kb.copy(blocksMat, blocksLds);
  Tile offsetsMat = kb.regTile("offsets_mat", {EC, 16}, DType::f32);
  kb.fill(offsetsMat, 0.0);
  kb.gemm(lowerLds, blocksLds, offsetsMat);
  Tile offset = kb.regTile("offset", {EC}, DType::f32), segEnd = kb.regTile("seg_end", {EC}, DType::f32);
  kb.reduce(ReduceKind::max, offsetsMat, offset);
  kb.scale(offset, offset, double(BM));
  kb.scale(segEnd, blocks, double(BM));
  kb.add(segEnd, segEnd, offset);

  // 3. sentinels, then every pair's slot.
  Tile val = kb.regTile("slots", {R, EC}, DType::f32);
  Tile pos = kb.regTile("pos", {R}, DType::f32), tok = kb.regTile("token", {R}, DType::f32);
  Tile sentinel = kb.regTile("sentinel", {R}, DType::f32);
  kb.iota(tok, 0);
  kb.iota(sentinel, 0, T);
  kb.sub(sentinel, sentinel, tok);  // = tokens in every row
  kb.forLoop(0, cdiv(sorted.dim(0), R), 1, {.name = "p"}, [&](Index p) { kb.store(sentinel, sorted, {p * R}); });
  kb.barrier();

  Tile upper = kb.regTile("upper", {R, R}, DType::f32);
  kb.fill(upper, 1.0);
  kb.mask(upper, 0, 0, R, {.causal = true});  // L[i][i'] = i' <= i
  kb.relu(upper, upper);
  Tile upperLds = kb.ldsTile("upper_lds", {R, R}, DType::f16);
  kb.copy(upper, upperLds, {.transpose = true});  // U[i'][i] = i' <= i
  Tile onehotLds = kb.ldsTile("onehot_lds", {EC, R}, DType::f16);
  Tile rank = kb.regTile("rank", {EC, R}, DType::f32);
  Tile valT = kb.ldsTile("slots_t_lds", {R, EC}, DType::f32);
  Tile seen = kb.regTile("seen", {EC}, DType::f32), base = kb.regTile("base", {EC}, DType::f32);
  kb.fill(seen, 0.0);
  kb.forLoop(0, K, 1, {.name = "j"}, [&](Index j) {
    kb.forLoop(0, chunks, 1, {.name = "c"}, [&](Index ch) {
      Index t0 = ch * R;
      onehotOf(j, t0);
      kb.copy(onehot, onehotLds);
      kb.fill(rank, 0.0);
      kb.gemm(onehotLds, upperLds, rank);  // pairs of the expert up to this one, in this step
      kb.add(base, offset, seen);
      kb.add(rank, rank, base);
      kb.mul(rank, rank, onehot);  // slot + 1 on the pair's expert, 0 elsewhere
      kb.copy(rank, valT, {.transpose = true});
      kb.copy(valT, val);
      kb.reduce(ReduceKind::sum, val, pos);
      kb.addScalar(pos, pos, -1.0);  // -1: no pair (past the last token)
      kb.iota(tok, 0, t0);
      kb.scatter(tok, pos, sorted);
      kb.store(pos, kb.window(positions, {j * T}, {T}), {t0});
      kb.reduce(ReduceKind::sum, onehot, seen, {.axis = 1, .accumulate = true});
    });
  });

  // 4. the expert of every block, and the padded total.
  Tile se = kb.regTile("seg_end_bcast", {EC, R}, DType::f32);
  kb.fill(se, 0.0);
  kb.add(se, se, segEnd);
  Tile seT = kb.ldsTile("seg_end_t_lds", {R, EC}, DType::f32);
  kb.copy(se, seT, {.transpose = true});
  Tile ends = kb.regTile("ends", {R, EC}, DType::f32);  // ends[b][e] = segment end of expert e
  Tile start = kb.regTile("block_start", {R}, DType::f32), count = kb.regTile("count", {R}, DType::f32);
  Tile flag = kb.regTile("past_total", {R}, DType::f32);
  kb.copy(seT, ends);
  kb.mask(ends, 0, 0, E);  // padding experts: -inf
  kb.reduce(ReduceKind::max, ends, count);
  kb.store(count, total, {0});  // the padded total (one element lands)
  kb.forLoop(0, cdiv(blockExperts.dim(0), R), 1, {.name = "b"}, [&](Index b) {
    kb.copy(seT, ends);
    kb.iota(start, 0, b * R);
    kb.scale(start, start, double(BM));
    kb.le(ends, ends, start);
    kb.mask(ends, 0, 0, E);
    kb.relu(ends, ends);
    kb.reduce(ReduceKind::sum, ends, count);  // experts that end at or before the block
    kb.addScalar(flag, count, -double(E));
    kb.scale(start, count, 0.0);
    kb.eq(flag, flag, start);  // 1: every expert ends before (past the total)
    kb.scale(flag, flag, -double(E + 1));
    kb.add(count, count, flag);
    kb.store(count, blockExperts, {b * R});
  });

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

KernelInfo moeAlignKernelInfo() {
  KernelInfo info;
  info.name = "moe_align";
  info.summary = "MoE token alignment: (token, expert) pairs sorted by expert into block-padded segments "
                 "(sorted token ids, block experts, positions, padded total)";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run), at most 65536", ParamSpec::integer(1, 65536)},
      {"experts", "8", "experts, 1..64", ParamSpec::integer(1, 64)},
      {"topk", "2", "experts per token (run-time; used by --run)", ParamSpec::integer(1, 8)},
      {"routing", "random", "--run: random | one (every token's first choice is expert experts/2)",
       ParamSpec::oneOf({"random", "one"})},
      {"block_m", "32", "the expert GEMMs' block_m: segments are padded to it", ParamSpec::integer(16, 256)},
      {"waves", "4", "wavefronts per workgroup", ParamSpec::integer(1, 16)},
      {"stages", "2", "software-pipelining depth of the expert GEMMs' k loops (1..4)", ParamSpec::integer(1, 4)},
  };
  struct Read {
    MoeAlignConfig config;
    int64_t tokens = 0, topk = 0;
    bool one = false;
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<Read> {
    ParamReader p(name, params, given);
    Read r;
    r.tokens = p.integer("tokens");
    r.config.experts = p.integer("experts");
    r.topk = p.integer("topk");
    r.one = p.choice("routing") == "one";
    r.config.blockM = p.integer("block_m");
    r.config.waves = static_cast<int>(p.integer("waves"));
    if (!p.ok())
      return p.error();
    if (r.topk > r.config.experts)
      return Error{"kernel 'moe_align': topk (" + std::to_string(r.topk) + ") exceeds experts (" +
                   std::to_string(r.config.experts) + ")"};
    return r;
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    return buildMoeAlign(r->config);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    std::mt19937_64 rng(0x616c69676eull);
    const int64_t T = r->tokens, K = r->topk, E = r->config.experts, BM = r->config.blockM;
    std::vector<int64_t> ids = routeTokens(T, E, K, r->one, rng);
    MoeAlignment a = alignTokens(ids, T, K, E, BM);
    const int64_t P = static_cast<int64_t>(a.sortedTokenIds.size());
    Problem prob;
    prob.tensors = {
        {"topk_ids", DType::i32, {T, K}, false, std::vector<double>(ids.begin(), ids.end())},
        {"sorted_token_ids", DType::i32, {P}, true},
        {"block_experts", DType::i32, {P / BM}, true},
        {"positions", DType::i32, {K * T}, true},
        {"total_padded", DType::i32, {1}, true},
    };
    prob.toleranceRule = "exact (integers)";
    prob.reference = [a](const std::vector<std::vector<double>> &, std::vector<std::vector<double>> &expected,
                         std::vector<std::vector<double>> &tolerance) {
      auto d = [](const std::vector<int64_t> &v) { return std::vector<double>(v.begin(), v.end()); };
      expected = {d(a.sortedTokenIds), d(a.blockExperts), d(a.positions), {double(a.paddedTotal)}};
      tolerance.clear();
      for (const std::vector<double> &e : expected)
        tolerance.emplace_back(e.size(), 0.0);
    };
    return prob;
  };
  return info;
}


// ---- The whole layer --------------------------------------------------------------

KernelInfo moeKernelInfo() {
  KernelInfo info;
  info.name = "moe";
  info.summary = "MoE layer: gate (softmax, top-k) -> token alignment -> gate_up (gathered, SwiGLU) -> down -> "
                 "combine, five kernels";
  info.params = {
      {"part", "gate_up", "gate | align | gate_up | down | combine: the kernel --emit compiles (--run runs all five)",
       ParamSpec::oneOf({"gate", "align", "gate_up", "down", "combine"})},
      {"tokens", "64", "tokens (run-time; used by --run), at most 65536", ParamSpec::integer(1, 65536)},
      {"experts", "8", "experts, 1..64", ParamSpec::integer(1, 64)},
      {"topk", "2", "experts per token, 1..8", ParamSpec::integer(1, 8)},
      {"hidden", "128", "hidden size (run-time; the expert kernels assume the powers of two dividing it, up to 16 bytes)",
       ParamSpec::integer(1, int64_t(1) << 16)},
      {"intermediate", "256", "intermediate size (run-time; the expert kernels assume the powers of two dividing it, up to 16 bytes)",
       ParamSpec::integer(1, int64_t(1) << 16)},
      {"renormalize", "1", "1: the k weights are divided by their sum", ParamSpec::integer(0, 1)},
      {"routing", "random", "--run: random logits | one (expert experts/2 has the largest logit of every token)",
       ParamSpec::oneOf({"random", "one"})},
      {"dtype", "bf16", "bf16 | f16 (logits, activations, weights, output)",
       ParamSpec::dtype({DType::bf16, DType::f16})},
      {"block_m", "32", "sorted rows per expert-GEMM block (the alignment's padding)", ParamSpec::integer(16, 256)},
      {"block_n", "64", "output columns per workgroup of the expert GEMMs and the combine",
       ParamSpec::integer(16, 256)},
      {"block_k", "32", "k step of the expert GEMMs", ParamSpec::integer(16, 128)},
      {"waves", "4", "wavefronts per workgroup", ParamSpec::integer(1, 16)},
      {"stages", "2", "software-pipelining depth of the expert GEMMs' k loops (1..4)", ParamSpec::integer(1, 4)},
  };
  struct Read {
    std::string part;
    MoeGateConfig gate;
    MoeAlignConfig align;
    MoeExpertsConfig experts;
    int64_t tokens = 0, hidden = 0, intermediate = 0;
    bool oneExpert = false;
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<Read> {
    ParamReader p(name, params, given);
    Read r;
    r.part = p.choice("part");
    r.oneExpert = p.choice("routing") == "one";
    r.tokens = p.integer("tokens");
    const int64_t E = p.integer("experts"), K = p.integer("topk");
    r.hidden = p.integer("hidden");
    r.intermediate = p.integer("intermediate");
    const bool renorm = p.integer("renormalize") == 1;
    const DType dtype = p.dtype("dtype");
    const int64_t BM = p.integer("block_m"), BN = p.integer("block_n"),
                  BK = p.integer("block_k");
    const int waves = static_cast<int>(p.integer("waves"));
    const int stages = static_cast<int>(p.integer("stages"));
    if (!p.ok())
      return p.error();
    if (K > E)
      return Error{"kernel 'moe': topk (" + std::to_string(K) + ") exceeds experts (" + std::to_string(E) + ")"};
    r.gate = {dtype, E, K, renorm, waves};
    r.align = {E, BM, waves};
    r.experts.dtype = dtype;
    r.experts.topk = K;
    r.experts.blockM = BM;
    r.experts.blockN = BN;
    r.experts.blockK = BK;
    r.experts.waves = waves;
    r.experts.stages = stages;
    // The expert kernels assume what hidden and intermediate are multiples
    // of (specialised on that, not on the sizes).
    r.experts.divisibilityHidden = moeDivisibility(r.hidden, dtype);
    r.experts.divisibilityInter = moeDivisibility(r.intermediate, dtype);
    r.experts.part = r.part == "down"      ? MoeExpertsConfig::Part::Down
                     : r.part == "combine" ? MoeExpertsConfig::Part::Combine
                                           : MoeExpertsConfig::Part::GateUp;
    return r;
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    if (r->part == "gate")
      return buildMoeGate(r->gate);
    if (r->part == "align")
      return buildMoeAlign(r->align);
    return buildMoeExperts(r->experts);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    const int64_t T = r->tokens, E = r->gate.experts, K = r->gate.topk, Hd = r->hidden, I = r->intermediate;
    const int64_t BM = r->align.blockM;
    const int64_t P = roundUp(T * K + E * (BM - 1), BM);
    const DType dt = r->gate.dtype;
    // routing=one: logits k/64 (exact in bf16 and f16) with expert E/2 at 4
    // for every token; otherwise random inputs.
    std::vector<double> logits;
    if (r->oneExpert) {
      std::mt19937_64 rng(0x6c6f67ull);
      for (int64_t i = 0; i < T * E; ++i)
        logits.push_back(i % E == E / 2 ? 4.0 : double(std::uniform_int_distribution<int>(-64, 63)(rng)) / 64.0);
    }
    Problem prob;
    prob.tensors = {
        {"logits", dt, {T, E}, false, logits},                               // 0
        {"X", dt, {T, Hd}},                                                  // 1
        {"W13", dt, {E * 2 * I, Hd}},                                        // 2
        {"W2", dt, {E * Hd, I}},                                             // 3
        {"topk_weights", DType::f32, {T, K}, false, {}, /*scratch=*/true},   // 4
        {"topk_ids", DType::i32, {T, K}, false, {}, true},                   // 5
        {"sorted_token_ids", DType::i32, {P}, false, {}, true},              // 6
        {"block_experts", DType::i32, {P / BM}, false, {}, true},            // 7
        {"positions", DType::i32, {K * T}, false, {}, true},                 // 8
        {"total_padded", DType::i32, {1}, false, {}, true},                  // 9
        {"H", dt, {P, I}, false, {}, true},                                  // 10
        {"Y", DType::f32, {P, Hd}, false, {}, true},                         // 11
        {"out", dt, {T, Hd}, /*output=*/true},                               // 12
    };
    prob.launches = {
        {{{"part", "gate"}}, {0, 4, 5}, {}},
        {{{"part", "align"}}, {5, 6, 7, 8, 9}, {}},
        {{{"part", "gate_up"}}, {1, 2, 6, 7, 10}, {}},
        {{{"part", "down"}}, {10, 3, 7, 11}, {}},
        {{{"part", "combine"}}, {11, 8, 4, 12}, {}},
    };
    // The gate's choices are exact (the reference picks the same experts from
    // the same logits); its weights carry the gate's tolerance into the
    // experts' bound.
    prob.toleranceRule = "gate weights within (2X + 6 + E + K) 2^-24 relative, then " + expertsToleranceRule(dt);
    const MoeGateConfig gate = r->gate;
    prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                         std::vector<std::vector<double>> &tolerance) {
      GateReference g = gateReference(gate, T, v[0]);
      expected.assign(1, {});
      tolerance.assign(1, {});
      expertsReference({T, K, Hd, I, dt}, v[1], v[2], v[3], g.ids, g.weights, g.weightTol, expected[0],
                       tolerance[0]);
    };
    return prob;
  };
  return info;
}

} // namespace tilec::kernels
