// The CPU references of the MoE kernels in double, with their error bounds:
// the gate's top-k and weights, the host token alignment, and the expert
// computation followed through gate_up, down and combine (docs/moe.md).
#include "moe/MoeReference.h"
#include "DeviceMath.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tilec::kernels {

namespace {

double unitRoundoffOf(DType t) { return t == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11); }

/// |silu'(x)| = |s(x) (1 + x (1 - s(x)))| <= 1.0999 for every x (s: sigmoid).
constexpr double kSiluSlope = 1.1;
/// The relative error of h = silu(g) v in f32, in units of 2^-24: the
/// prelude's silu (kernels/DeviceMath.h) and the product.
constexpr double kSiluRounding = devicemath::kSilu + 1;

} // namespace

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

} // namespace tilec::kernels
