// The double-precision reference of one attention row, with its derived
// tolerance, shared by the forward, backward and decode problems.
#include "attention/Attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tilec::kernels {

// Tolerance, per output row (u = 2^-24, uIn = unit roundoff of Q's type:
// 2^-8 bf16, 2^-11 f16). Inputs are exact; the kernel's errors are
//  - each score s_j = scale * q.k_j in f32: |ds_j| <= scale * (D + 3) * u * sum|q||k_j|
//    (dot product, then two scalings; each further f32 scaling of S or O, e.g. by
//    an fp8 cache's scale, adds u here and to gamma), and the base-2 exponent adds at most
//    2^-20 * (1 + |s_j - m| * log2(e)) for the subtraction of m and v_exp_f32's
//    error; call the largest over the row's keys E. A shift common to every
//    key (the row maximum, the alpha rescalings) cancels between O and l.
//  - P rounded to Q's type before P @ V: relative uIn per term;
//  - f32 accumulation of l and of P @ V over at most seq_k terms plus the
//    per-block rescalings: gamma = (seq_k + 2 * key blocks + 8) * u, relative
//    (the 8 covers the final O / l, a division within 3u: kernels/DeviceMath.h).
// With weights w_j = p_j / l and A = sum_j w_j |v_j|:
//   |O - ref| <= rel * A + uIn * (|ref| + rel * A),
//   rel = (1 + uIn) * exp(2E) * (1 + gamma) - 1   (the last term: O rounded to Q's type);
//   |LSE - ref| <= E + (exp(E) - 1) + gamma + 2^-21 * (|m| + |log l| + |lse|) (log and sums).
const char *const kToleranceRule =
    "per row: |O-ref| <= rel*A + uIn*(|ref|+rel*A), A = sum_j w_j|v_j|, rel = (1+uIn)e^(2E)(1+g)-1, "
    "E = max_j scale*(D+3)*2^-24*sum|q||k_j| + 2^-20*(1+|s_j-m|*log2 e), g = (seq_k+2*blocks+8)*2^-24; "
    "|LSE-ref| <= E + e^E-1 + g + 2^-21*(|m|+|log l|+|lse|)";

/// One query row of attention in double precision, with the tolerance above:
/// out/outTol get head_dim values; a row that sees no key gives O = 0, LSE = -inf.
void attendRow(const double *q, int64_t D, double scale, double uIn, int64_t blockN, const RowKeys &keys,
               double *out, double *outTol, double &lse, double &lseTol, int64_t splits, int64_t valueDim,
               int64_t extraRoundings) {
  const int64_t Dv = valueDim > 0 ? valueDim : D;
  const double u = std::ldexp(1.0, -24), log2e = 1.4426950408889634;
  std::vector<double> score(keys.count, -INFINITY), mag(keys.count, 0.0);
  double mx = -INFINITY;
  for (int64_t j = 0; j < keys.count; ++j) {
    if (!keys.visible(j))
      continue;
    const double *kj = keys.k(j);
    double dot = 0, abs = 0;
    for (int64_t d = 0; d < D; ++d) {
      dot += q[d] * kj[d];
      abs += std::fabs(q[d] * kj[d]);
    }
    score[j] = scale * dot;
    mag[j] = std::fabs(scale) * abs;
    mx = std::max(mx, score[j]);
  }
  if (mx == -INFINITY) {  // no key visible
    std::fill(out, out + Dv, 0.0);
    std::fill(outTol, outTol + Dv, 0.0);
    lse = -INFINITY;
    lseTol = 0;
    return;
  }
  const double gamma = double(keys.count + 2 * ((keys.count + blockN - 1) / blockN) + 8 + extraRoundings) * u;
  double sum = 0, E = 0;
  for (int64_t j = 0; j < keys.count; ++j)
    if (score[j] != -INFINITY) {
      sum += std::exp(score[j] - mx);
      E = std::max(E, double(D + 3 + extraRoundings) * u * mag[j] + std::ldexp(1.0, -20) * (1 + std::fabs(score[j] - mx) * log2e));
    }
  lse = mx + std::log(sum);
  lseTol = E + (std::exp(E) - 1) + gamma +
           std::ldexp(1.0, -21) * (std::fabs(mx * log2e) + std::fabs(std::log(sum)) + std::fabs(lse));
  double rel = (1 + uIn) * std::exp(2 * E) * (1 + gamma) - 1;
  if (splits > 1) {
    // Split-KV: each split's O is exact up to rel but kept in f32, and the
    // combine weighs the splits by e^(lse_s - m): each weight is off by at most
    // lseTol (relative, to first order) plus the combine's own f32 steps, and
    // a weighted mean with relative weight errors delta errs by <= 2 delta A.
    rel += 2 * (lseTol + double(splits + 4) * u) * (1 + rel);
    lseTol += double(splits + 4) * std::ldexp(1.0, -22) * (1 + std::fabs(lse));
  }
  for (int64_t d = 0; d < Dv; ++d) {
    double acc = 0, a = 0;
    for (int64_t j = 0; j < keys.count; ++j)
      if (score[j] != -INFINITY) {
        const double w = std::exp(score[j] - mx) / sum, vj = keys.v(j)[d];
        acc += w * vj;
        a += w * std::fabs(vj);
      }
    out[d] = acc;
    outTol[d] = rel * a + uIn * (std::fabs(acc) + rel * a);
  }
}

double unitRoundoff(DType t) { return t == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11); }

} // namespace tilec::kernels
