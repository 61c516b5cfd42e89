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

std::string moeExpertsKernelName(const MoeExpertsConfig &c) {
  const char *part = c.part == MoeExpertsConfig::Part::GateUp ? "gate_up"
                     : c.part == MoeExpertsConfig::Part::Down ? "down"
                                                               : "combine";
  std::string name = "moe_" + std::string(part) + "_" + dtypeName(c.dtype) + "_" + std::to_string(c.blockM) + "x" +
                     std::to_string(c.blockN);
  if (c.part == MoeExpertsConfig::Part::Combine)
    return "moe_combine_" + std::string(dtypeName(c.dtype)) + "_" + std::to_string(16 * c.waves) + "x" +
           std::to_string(c.blockN) + "_k" + std::to_string(c.topk) + "_w" + std::to_string(c.waves);
  return name + "x" + std::to_string(c.blockK) + "_w" + std::to_string(c.waves);
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
  Tensor A = kb.tensor(gateUp ? "X" : "H", c.dtype, 2);     // [tokens, hidden] or [P, I]
  Tensor W = kb.tensor(gateUp ? "W13" : "W2", c.dtype, 2);  // [E * 2I, hidden] or [E * hidden, I]
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
    kb.forLoop(0, numK, 1, {.name = "kt"}, [&](Index kt) {
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
    kb.forLoop(0, numK, 1, {.name = "kt"}, [&](Index kt) {
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
  Tensor Y = kb.tensor("Y", DType::f32, 2);               // [P, hidden]
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
    for (int64_t p = 0; p < pairs; ++p)
      if (topkIds[p] == e) {
        a.sortedTokenIds[next] = p / topk;
        a.positions[(p % topk) * tokens + p / topk] = next;
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

Problem moeExpertsProblem(const MoeExpertsProblemConfig &c, uint64_t seed) {
  const int64_t T = c.tokens, E = c.experts, K = c.kernels.topk, Hd = c.hidden, I = c.intermediate;
  const int64_t BM = c.kernels.blockM;
  // The routing: k distinct experts per token and positive weights summing to 1.
  std::mt19937_64 rng(seed ^ 0x6d6f65ull);
  std::vector<int64_t> ids(T * K);
  std::vector<double> weights(T * K);
  std::vector<int64_t> order(E);
  for (int64_t t = 0; t < T; ++t) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    if (c.routing == MoeExpertsProblemConfig::Routing::OneExpert)
      std::swap(order[0], *std::find(order.begin(), order.end(), E / 2));  // every token's first choice
    double sum = 0;
    for (int64_t j = 0; j < K; ++j) {
      ids[t * K + j] = order[j];
      weights[t * K + j] = std::uniform_real_distribution<double>(0.05, 1.0)(rng);
      sum += weights[t * K + j];
    }
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
  //  h = silu(g) v in f32 (silu: a division and an exp, 4u; the product u),
  //    rounded to the dtype: |dh| <= 1.1 |v| |dg| + |silu g| |dv| + (5u + uIn) |h|;
  //  y = h W2^T in f32: |dy| <= sum |w2| |dh| + I u sum |h w2|;
  //  out = sum_j w_j y_j in f32 (w exact f32), rounded to the dtype:
  //    |dout| <= sum_j w_j |dy_j| + k u sum_j w_j |y_j| + uIn |out|.
  const double u = std::ldexp(1.0, -24), uIn = unitRoundoffOf(c.kernels.dtype);
  prob.toleranceRule = "error bound followed through gate_up (H u sum|xw|, silu slope 1.1, 5u + uIn rounding of h), "
                       "down (I u sum|h w2|) and combine (k u sum|w y| + uIn |out|), u = 2^-24, uIn = " +
                       std::string(c.kernels.dtype == DType::bf16 ? "2^-8 (bf16)" : "2^-11 (f16)");
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &x = v[0], &w13 = v[1], &w2 = v[2];
    std::vector<double> out(T * Hd, 0.0), tol(T * Hd, 0.0), h(I), dh(I), y(Hd), dy(Hd), mag(Hd, 0.0);
    for (int64_t t = 0; t < T; ++t) {
      std::fill(mag.begin(), mag.end(), 0.0);
      for (int64_t j = 0; j < K; ++j) {
        const int64_t e = ids[t * K + j];
        const double wj = weights[t * K + j];
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
                  (5 * u + uIn) * std::fabs(h[i]);
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
          tol[t * Hd + n] += wj * dy[n];
          mag[n] += wj * (std::fabs(y[n]) + dy[n]);
        }
      }
      for (int64_t n = 0; n < Hd; ++n)
        tol[t * Hd + n] += double(K) * u * mag[n] + uIn * (std::fabs(out[t * Hd + n]) + tol[t * Hd + n]);
    }
    expected = {std::move(out)};
    tolerance = {std::move(tol)};
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
      {"part", "gate_up", "gate_up | down | combine: the kernel --emit compiles (--run runs all three)"},
      {"tokens", "64", "tokens (run-time; used by --run)"},
      {"experts", "8", "experts (run-time; used by --run)"},
      {"topk", "2", "experts per token, 1..8 (combine)"},
      {"hidden", "128", "hidden size (run-time; used by --run)"},
      {"intermediate", "256", "intermediate size (run-time; used by --run)"},
      {"routing", "random", "--run: random | one (every token's first choice is expert experts/2)"},
      {"dtype", "bf16", "bf16 | f16"},
      {"block_m", "32", "sorted rows per block (the alignment's padding)"},
      {"block_n", "64", "output columns per workgroup"},
      {"block_k", "32", "k step"},
      {"waves", "4", "wavefronts per workgroup"},
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<MoeExpertsProblemConfig> {
    ParamReader p(name, params, given);
    MoeExpertsProblemConfig c;
    MoeExpertsConfig &k = c.kernels;
    std::string part = p.choice("part", {"gate_up", "down", "combine"});
    k.part = part == "gate_up" ? MoeExpertsConfig::Part::GateUp
             : part == "down"  ? MoeExpertsConfig::Part::Down
                               : MoeExpertsConfig::Part::Combine;
    c.tokens = p.integer("tokens", 1, int64_t(1) << 20);
    c.experts = p.integer("experts", 1, 512);
    k.topk = p.integer("topk", 1, 8);
    c.hidden = p.integer("hidden", 1, int64_t(1) << 16);
    c.intermediate = p.integer("intermediate", 1, int64_t(1) << 16);
    c.routing = p.choice("routing", {"random", "one"}) == "one" ? MoeExpertsProblemConfig::Routing::OneExpert
                                                                : MoeExpertsProblemConfig::Routing::Random;
    k.dtype = p.dtype("dtype", {DType::bf16, DType::f16});
    k.blockM = p.integer("block_m", 16, 256);
    k.blockN = p.integer("block_n", 16, 256);
    k.blockK = p.integer("block_k", 16, 128);
    k.waves = static_cast<int>(p.integer("waves", 1, 16));
    if (!p.ok())
      return p.error();
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

} // namespace tilec::kernels
