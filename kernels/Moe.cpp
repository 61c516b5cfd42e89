// Mixture-of-experts kernels in the DSL (docs/moe.md).
#include "Moe.h"

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
  // division u, the renormalising sum K u and its division u. With
  // X = max|x| of the row, each weight is within
  //   rel = (2 X log2e ln2 + 6 + E + K) u
  // relative (ln2: a change d of the exponent changes 2^y by a factor 2^d,
  // about 1 + d ln2).
  const double u = std::ldexp(1.0, -24);
  prob.toleranceRule = "ids exact; |w - ref| <= (2*X + 6 + E + K) * 2^-24 * |ref|, X = max|logit| of the token";
  const MoeGateConfig cfg = c;
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &x = v[0];
    std::vector<double> w(tokens * K), id(tokens * K), wTol(tokens * K), idTol(tokens * K, 0.0);
    std::vector<int64_t> order(E);
    for (int64_t t = 0; t < tokens; ++t) {
      const double *row = &x[t * E];
      double mx = *std::max_element(row, row + E), X = 0, denom = 0;
      for (int64_t e = 0; e < E; ++e) {
        denom += std::exp(row[e] - mx);
        X = std::max(X, std::fabs(row[e]));
      }
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
      double selected = 0;
      for (int64_t j = 0; j < K; ++j)
        selected += std::exp(row[order[j]] - mx) / denom;
      const double rel = (2 * X * std::log2(std::exp(1.0)) * std::log(2.0) + 6 + double(E) + double(K)) * u;
      for (int64_t j = 0; j < K; ++j) {
        double p = std::exp(row[order[j]] - mx) / denom;
        if (cfg.renormalize)
          p /= selected;
        w[t * K + j] = p;
        wTol[t * K + j] = rel * p;
        id[t * K + j] = static_cast<double>(order[j]);
      }
    }
    expected = {std::move(w), std::move(id)};
    tolerance = {std::move(wTol), std::move(idTol)};
  };
  return prob;
}

KernelInfo moeGateKernelInfo() {
  KernelInfo info;
  info.name = "moe_gate";
  info.summary = "MoE gating: softmax over the experts' logits, top-k experts per token (ties: lowest index), "
                 "optionally renormalised weights";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run)"},
      {"experts", "8", "experts, 1..128"},
      {"topk", "2", "experts per token, 1..8"},
      {"renormalize", "1", "1: the k weights are divided by their sum"},
      {"dtype", "bf16", "bf16 | f16 | f32 (logits)"},
      {"waves", "4", "wavefronts per workgroup (16 tokens each)"},
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given, int64_t *tokens)
      -> Result<MoeGateConfig> {
    ParamReader p(name, params, given);
    MoeGateConfig c;
    *tokens = p.integer("tokens", 1, int64_t(1) << 24);
    c.experts = p.integer("experts", 1, 128);
    c.topk = p.integer("topk", 1, 8);
    c.renormalize = p.integer("renormalize", 0, 1) == 1;
    c.dtype = p.dtype("dtype", {DType::bf16, DType::f16, DType::f32});
    c.waves = static_cast<int>(p.integer("waves", 1, 16));
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

} // namespace tilec::kernels
