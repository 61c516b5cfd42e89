// Attention forward (prefill), FlashAttention-2 style, in the tilec DSL.
//
// Layout (packed variable-length batch, as inference engines pack prefill):
//   Q, O   [total_q, heads * D]      sequence b is rows cu_seqlens_q[b] .. cu_seqlens_q[b+1]
//   K, V   [total_k, kv_heads * D]   likewise with cu_seqlens_k; head h reads kv head
//                                     h / (heads / kv_heads) (GQA; MQA with one kv head)
//   LSE    [total_q, heads] f32       log-sum-exp of each query row's scores (natural log),
//                                     for the backward pass and split-KV combining
// Grid: ceil(max_seqlen_q / BM) x heads x batch; one workgroup computes BM query rows of
// one head of one sequence. Windows (tile.window) cut that sequence's rows and that head's
// columns out of the packed tensors, so ragged lengths need no padding: loads past the
// sequence read 0 and stores past it are dropped.
//
// Per workgroup (default BM = BN = 64, D = 128, 4 waves, bf16):
//   q_lds [BM, D]        the query block, loaded once               16 KiB
//   k_lds, v_lds [BN, D] one key/value block per step (per stage)    32 KiB
//   p.lds [BM, BN]       the probabilities, rounded to Q's type       8 KiB
//                        (only where S's accumulator layout is not the
//                        operand layout of P @ V: AMD; NVIDIA's mma.sync
//                        reads P from registers, tilec-infer-layouts)
//   registers: S [BM, BN] and O [BM, D] f32 accumulators, row vectors m, l (f32)
// Online softmax in base 2: S is scaled by softmax_scale * log2(e), so P = exp2(S - m)
// and LSE = (m + log2(l)) * ln(2). Causal and sliding-window blocks that are wholly
// masked are skipped by the key loop's bounds; the blocks on the diagonal are masked
// (tile.mask). Causal masks align to the bottom right (query i sees keys up to
// i + seq_k - seq_q), as FlashAttention does when seq_q != seq_k.
#include "Attention.h"

#include "Params.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

namespace tilec::kernels {

/// "<who>: kv_heads (3) must divide heads (8)", or nothing when it does.
static std::optional<Error> kvHeadsError(const std::string &who, int64_t heads, int64_t kvHeads) {
  if (kvHeads >= 1 && heads % kvHeads == 0)
    return std::nullopt;
  return Error{who + ": kv_heads (" + std::to_string(kvHeads) + ") must divide heads (" + std::to_string(heads) + ")"};
}

/// The head sizes the attention kernels take (those of Llama, Phi, Gemma,
/// DeepSeek's prefill ...), preceded by `keywords` (head_dim_v's "head_dim").
static ParamSpec headDimSpec(std::vector<std::string> keywords = {}) {
  for (const char *d : {"64", "80", "96", "128", "192", "256"})
    keywords.push_back(d);
  return ParamSpec::oneOf(std::move(keywords));
}

/// The value of -p `name` if given as a number, else `fallback` (also for a
/// malformed value: the entry's ParamReader reports that one).
static int64_t givenInteger(const KernelParams &p, const std::string &name, int64_t fallback) {
  auto it = p.find(name);
  if (it == p.end())
    return fallback;
  int64_t v = 0;
  const char *end = it->second.data() + it->second.size();
  auto [ptr, ec] = std::from_chars(it->second.data(), end, v);
  return ec == std::errc() && ptr == end ? v : fallback;
}

/// The head sizes -p asks for: head_dim (default 128) and head_dim_v (default head_dim).
static std::pair<int64_t, int64_t> givenHeadDims(const KernelParams &p) {
  const int64_t d = givenInteger(p, "head_dim", 128);
  return {d, givenInteger(p, "head_dim_v", d)};
}

/// The widest key block, halving from `widest` down to 16, whose attention
/// forward fits an AMD workgroup's LDS: Q [BM, D], K [BN, D] and V [BN, Dv]
/// per stage, and P [BM, BN] (AMD stores P through LDS), 16-bit elements.
static int64_t keyBlockForLds(const TargetInfo &t, int64_t BM, int64_t BN, int64_t D, int64_t Dv, int64_t stages) {
  auto bytes = [&](int64_t bn) { return 2 * (BM * D + stages * bn * (D + Dv) + BM * bn); };
  while (BN > 16 && bytes(BN) > t.ldsBytesPerWorkgroup)
    BN /= 2;
  return BN;
}

/// The parameters every attention entry reads the same way.
struct HeadParams {
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  DType dtype = DType::bf16;
  double scale = 0;  ///< the softmax scale (scale=auto: 1/sqrt(head_dim))
};

/// Reads heads, kv_heads, head_dim, dtype and scale; once `p` is ok(),
/// applyHeads() validates them together.
static HeadParams readHeads(ParamReader &p) {
  HeadParams h;
  h.heads = p.integer("heads");
  h.kvHeads = p.integer("kv_heads");
  h.headDim = std::stoll(p.choice("head_dim"));
  h.dtype = p.dtype("dtype");
  h.scale = p.raw("scale") == "auto" ? 0 : p.real("scale");
  return h;
}

/// Validates `h` (kv_heads divides heads), resolves scale=auto and copies the
/// heads, kv heads, head dimension and dtype into the entry's configuration.
template <class Config>
static std::optional<Error> applyHeads(const std::string &kernel, HeadParams &h, Config &c) {
  if (auto e = kvHeadsError("kernel '" + kernel + "'", h.heads, h.kvHeads))
    return e;
  if (h.scale == 0)
    h.scale = 1.0 / std::sqrt(double(h.headDim));
  c.heads = h.heads;
  c.kvHeads = h.kvHeads;
  c.headDim = h.headDim;
  c.dtype = h.dtype;
  return std::nullopt;
}

/// "d128", or "d192v128" where V's head size differs from Q's and K's.
static std::string headDimsName(const AttentionConfig &c) {
  return "d" + std::to_string(c.headDim) + (c.valueDim() != c.headDim ? "v" + std::to_string(c.valueDim()) : "");
}

std::string attentionKernelName(const AttentionConfig &c) {
  return "attn_fwd_" + std::string(dtypeName(c.dtype)) + "_h" + std::to_string(c.heads) + "_kv" +
         std::to_string(c.kvHeads) + "_" + headDimsName(c) + (c.causal ? "_causal" : "") +
         (c.window > 0 ? "_win" + std::to_string(c.window) : "") + "_" + std::to_string(c.blockM) + "x" +
         std::to_string(c.blockN) + "_w" + std::to_string(c.waves) +
         (c.stages > 1 ? "_s" + std::to_string(c.stages) : "");
}

namespace {

/// The tiles and steps of FlashAttention's online softmax, shared by the
/// prefill and decode kernels: the caller loads Q into `q` once and each key
/// block into `k` and `v`, then calls step(). Q and K rows have D values, V
/// and O rows Dv.
struct OnlineSoftmax {
  dsl::KernelBuilder &kb;
  dsl::Tile q, k, v, s, p, o, m, mNew, l, alpha, lse;

  OnlineSoftmax(dsl::KernelBuilder &b, int64_t BM, int64_t BN, int64_t D, int64_t Dv, DType t)
      : kb(b), q(b.ldsTile("q_lds", {BM, D}, t)), k(b.ldsTile("k_lds", {BN, D}, t)),
        v(b.ldsTile("v_lds", {BN, Dv}, t)), s(b.regTile("s", {BM, BN}, DType::f32)), p(b.regTile("p", {BM, BN}, DType::f32)),
        o(b.regTile("o", {BM, Dv}, DType::f32)),
        m(b.regTile("m", {BM}, DType::f32)),          // running row maximum (log2 units)
        mNew(b.regTile("m_new", {BM}, DType::f32)),
        l(b.regTile("l", {BM}, DType::f32)),          // running row sum of P
        alpha(b.regTile("alpha", {BM}, DType::f32)),  // rescaling of the old O and l
        lse(b.regTile("lse", {BM}, DType::f32)) {}

  void init() {
    kb.fill(o, 0.0);
    kb.fill(m, -std::numeric_limits<double>::infinity());
    kb.fill(l, 0.0);
  }

  /// One key block: S = Q K^T * scale * log2(e), masked (query row 0 at key
  /// position `maskRow`, keys from `k0`, none at or past `keyEnd`), folded into
  /// m, l and O.
  void step(const dsl::Scalar &scale, const dsl::Index &maskRow, const dsl::Index &k0, const dsl::Index &keyEnd,
            dsl::MaskOptions mask) {
    using namespace dsl;
    const double log2e = 1.4426950408889634;
    // ---- S[BM,BN] = Q K^T * softmax_scale * log2(e), masked
    kb.fill(s, 0.0);
    kb.gemm(q, k, s, {.transposeB = true});
    kb.scale(s, s, scale);
    kb.scale(s, s, log2e);
    kb.mask(s, maskRow, k0, keyEnd, mask);
    // ---- online softmax: m' = max(m, rowmax S); P = exp2(S - m'); l = l*exp2(m - m') + rowsum P
    kb.reduce(ReduceKind::max, s, mNew);
    kb.max(mNew, mNew, m);
    kb.subExp2(p, s, mNew);
    kb.subExp2(alpha, m, mNew);
    kb.mul(l, l, alpha);
    kb.reduce(ReduceKind::sum, p, l, {.accumulate = true});
    kb.convert(m, mNew);
    // ---- O[BM,Dv] = O * alpha + P V
    kb.mul(o, o, alpha);
    kb.gemm(p, v, o);  // P rounded to V's type for the matrix instruction
  }

  /// O /= l (rows that saw no key give 0) and LSE = m*ln2 + ln(l) (-inf for
  /// those rows), stored at row `row0` of the windows `out` and `lseOut`.
  void finish(const dsl::Tensor &out, const dsl::Tensor &lseOut, const dsl::Index &row0) {
    const double ln2 = 0.6931471805599453;
    kb.safeDiv(o, o, l);
    kb.store(o, out, {row0, 0});
    kb.log(lse, l);
    kb.scale(m, m, ln2);
    kb.add(lse, lse, m);
    kb.store(lse, lseOut, {row0, 0});
  }
};

} // namespace

namespace {

/// One sequence of a packed batch: rows [qStart, qStart + lq) of Q/O and
/// [kStart, kStart + lk) of K/V. (max(end, start) - start: a malformed offset
/// pair gives an empty sequence.)
struct Sequence {
  dsl::Index qStart, kStart, lq, lk;
};

Sequence sequenceOf(dsl::KernelBuilder &kb, const dsl::Tensor &cuQ, const dsl::Tensor &cuK, const dsl::Index &b) {
  using namespace dsl;
  Index qStart = kb.loadIndex(cuQ, b), kStart = kb.loadIndex(cuK, b);
  return {qStart, kStart, max(kb.loadIndex(cuQ, b + 1), qStart) - qStart,
          max(kb.loadIndex(cuK, b + 1), kStart) - kStart};
}

/// The keys [begin, end) that the query rows [q0, q0 + BM) see: query row q
/// sees keys up to q + lk - lq (causal) and from q + lk - lq - window + 1
/// (window). Empty when the block starts past the sequence. Index arithmetic
/// is unsigned: terms are arranged to stay non-negative.
std::pair<dsl::Index, dsl::Index> keysSeenBy(const AttentionConfig &c, const Sequence &sq, const dsl::Index &q0,
                                             int64_t BM) {
  using namespace dsl;
  Index active = min(sq.lq - min(sq.lq, q0), 1);
  Index end = sq.lk;
  if (c.causal)
    end = min(sq.lk, max(q0 + BM + sq.lk, sq.lq) - sq.lq);
  Index begin = 0;
  if (c.window > 0)
    begin = max(q0 + sq.lk + 1, sq.lq + c.window) - (sq.lq + c.window);
  return {begin, end * active};
}

/// The query rows [begin, end) that see some key of [k0, k0 + BN): the
/// converse of keysSeenBy, for the backward pass's loop over queries.
std::pair<dsl::Index, dsl::Index> queriesSeeing(const AttentionConfig &c, const Sequence &sq, const dsl::Index &k0,
                                                int64_t BN) {
  using namespace dsl;
  Index active = min(sq.lk - min(sq.lk, k0), 1);
  Index begin = 0;
  if (c.causal)  // query q sees key k0 once q >= k0 - (lk - lq)
    begin = max(k0 + sq.lq, sq.lk) - sq.lk;
  Index end = sq.lq;
  if (c.window > 0)  // query q sees the block's last key while q < k0 + BN - 1 - lk + lq + window
    end = min(sq.lq, max(k0 + BN - 1 + sq.lq + c.window, sq.lk) - sq.lk);
  return {min(begin, end), end * active};
}

} // namespace

/// Q, K, V and O (their gradients, the KV cache) are [tokens, heads * head_dim]
/// with every head size a multiple of 8: rows of whole heads, so loads of 16
/// bytes stay inside a row and aligned (launches check the innermost extent
/// and the alignment).
dsl::TensorOptions headRows(DType t) { return {.divisibility = 16 / dtypeBytes(t)}; }

Result<Kernel> buildAttention(const AttentionConfig &c) {
  using namespace dsl;
  if (auto e = kvHeadsError("attention", c.heads, c.kvHeads))
    return *e;
  const int64_t BM = c.blockM, BN = c.blockN, D = c.headDim, Dv = c.valueDim();

  KernelBuilder kb(attentionKernelName(c), {.numWaves = c.waves});

  const dsl::TensorOptions headRowOpts = headRows(c.dtype);
  Tensor Q = kb.tensor("Q", c.dtype, 2, headRowOpts);
  Tensor K = kb.tensor("K", c.dtype, 2, headRowOpts);
  Tensor V = kb.tensor("V", c.dtype, 2, headRowOpts);
  Tensor O = kb.tensor("O", c.dtype, 2, headRowOpts);
  Tensor LSE = kb.tensor("LSE", DType::f32, 2);
  Tensor cuQ = kb.tensor("cu_seqlens_q", DType::i32, 1);
  Tensor cuK = kb.tensor("cu_seqlens_k", DType::i32, 1);
  Scalar scale = kb.scalarF32("softmax_scale");
  Index maxSeqQ = kb.scalarI32("max_seqlen_q");
  Index batch = kb.scalarI32("batch");

  kb.grid({GridExtent::ceilDiv(maxSeqQ, BM), GridExtent::fixed(c.heads), GridExtent::ceilDiv(batch, 1)});
  Index qb = kb.blockId(0), h = kb.blockId(1), b = kb.blockId(2);
  Index kvh = h / (c.heads / c.kvHeads);

  Sequence sq = sequenceOf(kb, cuQ, cuK, b);
  Tensor Qs = kb.window(Q, {sq.qStart, h * D}, {sq.lq, D});
  Tensor Ks = kb.window(K, {sq.kStart, kvh * D}, {sq.lk, D});
  Tensor Vs = kb.window(V, {sq.kStart, kvh * Dv}, {sq.lk, Dv});
  Tensor Os = kb.window(O, {sq.qStart, h * Dv}, {sq.lq, Dv});
  Tensor Ls = kb.window(LSE, {sq.qStart, h}, {sq.lq, 1});
  Index q0 = qb * BM;
  auto [keyBegin, keyEnd] = keysSeenBy(c, sq, q0, BM);
  Index maskRow = q0 + sq.lk - sq.lq;  // query row q0 in key coordinates (may be negative)
  Index lk = sq.lk;

  OnlineSoftmax sm(kb, BM, BN, D, Dv, c.dtype);
  kb.load(Qs, {q0, 0}, sm.q);
  sm.init();
  // With stages >= 2, tilec-pipeline-loops loads the K and V blocks of the
  // next steps while this one computes (past the end they read zeros).
  kb.forLoop(keyBegin / BN, cdiv(keyEnd, BN), 1, {.numStages = c.stages, .name = "kb"}, [&](Index j) {
    Index k0 = j * BN;
    kb.load(Ks, {k0, 0}, sm.k);
    kb.load(Vs, {k0, 0}, sm.v);
    sm.step(scale, maskRow, k0, lk, {.causal = c.causal, .window = c.window});
  });
  sm.finish(Os, Ls, q0);

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

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

Problem attentionProblem(const AttentionConfig &c, const std::vector<int64_t> &seqQ,
                         const std::vector<int64_t> &seqK, double scale) {
  const int64_t batch = static_cast<int64_t>(seqQ.size()), H = c.heads, KH = c.kvHeads, D = c.headDim;
  const int64_t Dv = c.valueDim();
  std::vector<double> cuQ{0}, cuK{0};
  for (int64_t b = 0; b < batch; ++b) {
    cuQ.push_back(cuQ.back() + static_cast<double>(seqQ[b]));
    cuK.push_back(cuK.back() + static_cast<double>(seqK[b]));
  }
  const int64_t totalQ = static_cast<int64_t>(cuQ.back()), totalK = static_cast<int64_t>(cuK.back());
  const int64_t maxQ = *std::max_element(seqQ.begin(), seqQ.end());

  Problem prob;
  prob.tensors = {
      {"Q", c.dtype, {totalQ, H * D}},
      {"K", c.dtype, {totalK, KH * D}},
      {"V", c.dtype, {totalK, KH * Dv}},
      {"O", c.dtype, {totalQ, H * Dv}, /*output=*/true},
      {"LSE", DType::f32, {totalQ, H}, /*output=*/true},
      {"cu_seqlens_q", DType::i32, {batch + 1}, false, cuQ},
      {"cu_seqlens_k", DType::i32, {batch + 1}, false, cuK},
  };
  // Arguments: Q, K, V, O, LSE, cu_seqlens_q, cu_seqlens_k, then the scalars.
  prob.scalars = {{"softmax_scale", static_cast<float>(scale), 7},
                  {"max_seqlen_q", static_cast<float>(maxQ), 8, true},
                  {"batch", static_cast<float>(batch), 9, true}};

  const double uIn = unitRoundoff(c.dtype);
  const AttentionConfig cfg = c;
  prob.toleranceRule = std::string(kToleranceRule) + ", uIn = " + (c.dtype == DType::bf16 ? "2^-8 (bf16)" : "2^-11 (f16)");
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &q = v[0], &k = v[1], &val = v[2];
    std::vector<double> out(totalQ * H * Dv, 0.0), outTol(totalQ * H * Dv, 0.0);
    std::vector<double> lse(totalQ * H, 0.0), lseTol(totalQ * H, 0.0);
    const int64_t group = H / cfg.kvHeads;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t lq = seqQ[b], lk = seqK[b], q0 = static_cast<int64_t>(cuQ[b]), k0 = static_cast<int64_t>(cuK[b]);
      for (int64_t h = 0; h < H; ++h) {
        const int64_t kh = h / group;
        for (int64_t i = 0; i < lq; ++i) {
          const int64_t pos = i + lk - lq;  // the query's position in key coordinates
          RowKeys keys;
          keys.count = lk;
          keys.visible = [&](int64_t j) {
            return !((cfg.causal && j > pos) || (cfg.window > 0 && j <= pos - cfg.window));
          };
          keys.k = [&](int64_t j) { return &k[(k0 + j) * KH * D + kh * D]; };
          keys.v = [&](int64_t j) { return &val[(k0 + j) * KH * Dv + kh * Dv]; };
          const int64_t row = (q0 + i) * H + h;
          attendRow(&q[row * D], D, scale, uIn, cfg.blockN, keys, &out[row * Dv], &outTol[row * Dv], lse[row],
                    lseTol[row], /*splits=*/1, Dv);
        }
      }
    }
    expected = {std::move(out), std::move(lse)};
    tolerance = {std::move(outTol), std::move(lseTol)};
  };
  return prob;
}

namespace {

/// The sequence lengths `--run` uses: all equal, or (varlen) descending from
/// the longest so that the batch is ragged; key lengths keep seq_k - seq_q.
void runLengths(int64_t batch, int64_t seqQ, int64_t seqK, bool varlen, std::vector<int64_t> &lq,
                std::vector<int64_t> &lk) {
  lq.clear();
  lk.clear();
  for (int64_t b = 0; b < batch; ++b) {
    int64_t q = varlen ? std::max<int64_t>(1, seqQ - (b * (2 * seqQ + 7)) / (2 * batch + 1)) : seqQ;
    int64_t k = varlen ? std::max<int64_t>(1, seqK - (seqQ - q)) : seqK;
    lq.push_back(q);
    lk.push_back(k);
  }
}

struct AttentionParams {
  AttentionConfig config;
  int64_t batch = 1, seqQ = 1, seqK = 1;
  bool varlen = false;
  double scale = 0;
};

Result<AttentionParams> readParams(const std::string &name, const std::vector<KernelParam> &params,
                                   const KernelParams &given) {
  ParamReader p(name, params, given);
  AttentionParams a;
  AttentionConfig &c = a.config;
  a.batch = p.integer("batch");
  HeadParams h = readHeads(p);
  a.seqQ = p.integer("seq_q");
  a.seqK = p.raw("seq_k") == "seq_q" ? a.seqQ : p.integer("seq_k");
  const std::string headDimV = p.choice("head_dim_v");
  c.causal = p.integer("causal") == 1;
  c.window = p.integer("window");
  a.varlen = p.integer("varlen") == 1;
  c.blockM = p.integer("block_m");
  c.blockN = p.integer("block_n");
  c.waves = static_cast<int>(p.integer("waves"));
  c.stages = static_cast<int>(p.integer("stages"));
  if (!p.ok())
    return p.error();
  if (auto e = applyHeads(name, h, c))
    return *e;
  c.headDimV = headDimV == "head_dim" ? 0 : std::stoll(headDimV);
  a.scale = h.scale;
  return a;
}

} // namespace

KernelInfo attentionKernelInfo() {
  KernelInfo info;
  info.name = "attention";
  info.summary = "FlashAttention-2 forward: O = softmax(Q K^T * scale) V and LSE over a packed varlen batch; "
                 "bf16/f16, causal, sliding window, GQA/MQA";
  info.params = {
      {"batch", "1", "sequences in the batch (run-time; used by --run)", ParamSpec::integer(1, 4096)},
      {"heads", "8", "query heads", ParamSpec::integer(1, 256)},
      {"kv_heads", "8", "key/value heads; divides heads (GQA; 1: MQA)", ParamSpec::integer(1, 256)},
      {"seq_q", "128", "query length, the longest with varlen=1 (run-time; used by --run)",
       ParamSpec::integer(1, int64_t(1) << 20)},
      {"seq_k", "seq_q", "key length (run-time; used by --run); causal masks align to the bottom right",
       ParamSpec::integer(1, int64_t(1) << 20, {"seq_q"})},
      {"head_dim", "128", "Q and K head size: 64 | 80 | 96 | 128 | 192 | 256", headDimSpec()},
      {"head_dim_v", "head_dim", "V and O head size (DeepSeek prefill: head_dim=192, head_dim_v=128)",
       headDimSpec({"head_dim"})},
      {"causal", "0", "1: causal mask", ParamSpec::integer(0, 1)},
      {"window", "0", "sliding window: each query sees this many keys up to its own (0: off)",
       ParamSpec::integer(0, int64_t(1) << 20)},
      {"dtype", "bf16", "bf16 | f16 (Q, K, V, O; LSE is f32)", ParamSpec::dtype({DType::bf16, DType::f16})},
      {"varlen", "0", "--run: 1 gives the sequences different lengths up to seq_q (packed, no padding)",
       ParamSpec::integer(0, 1)},
      {"scale", "auto", "softmax scale, a kernel argument (auto: 1/sqrt(head_dim))", ParamSpec::real({"auto"})},
      {"block_m", "64", "query rows per workgroup", ParamSpec::integer(16, 256)},
      {"block_n", "64", "keys per step of the key loop", ParamSpec::integer(16, 256)},
      {"waves", "4", "wavefronts per workgroup (gfx1151: block_n=32)", ParamSpec::integer(1, 16)},
      {"stages", "1",
       "software-pipelining depth of the key loop: 2 loads the next K and V blocks during a step (NVIDIA targets: 2)",
       ParamSpec::integer(1, 4)},
  };
  info.build = [name = info.name, params = info.params](const KernelParams &given) -> Result<Kernel> {
    Result<AttentionParams> a = readParams(name, params, given);
    if (!a)
      return Error{a.error()};
    return buildAttention(a->config);
  };
  // NVIDIA: FlashAttention-2's 64 x 64 blocks over 4 warps with the key loop
  // pipelined 2 stages deep (cp.async) and P read from registers: on the H200
  // (B4 H32 S4096 D128, docs/perf/h200/2026-12-01-attention-pipelined.json)
  // 195/223 TFLOP/s causal/not, ahead of 128 x 64 over 8 warps (187/212) and
  // 128 x 32 (158/179 pipelined, 123/133 not). 252 registers, no local memory.
  // gfx1151 (wave32 WMMA): 32 keys per step; with 16-byte K/V loads a 64-key
  // step takes 247-256 of its 256 VGPRs and spills with GQA. AMD keeps one
  // stage: two of 64 x 64 need 88 KiB of LDS (P goes through LDS there).
  // Head sizes above 128: AMD halves the key block until Q, K, V and P fit
  // the 64 KiB of LDS (D = 192: 32 keys, 52 KiB; D = 256: 16 keys, 50 KiB; the
  // registers then hold O [64, 256] in 64 of wave64's VGPRs, 128 of wave32's);
  // NVIDIA spreads O [64, D] over 8 warps (D/4 registers a thread; over 4
  // warps D = 192 spills) with 32-key steps (64 spill at D = 256).
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    const auto [d, dv] = givenHeadDims(p);
    if (t.vendor == Vendor::NVIDIA) {
      p.try_emplace("stages", "2");
      if (std::max(d, dv) > 128) {
        p.try_emplace("waves", "8");
        p.try_emplace("block_n", "32");
      }
    } else {
      const int64_t bm = givenInteger(p, "block_m", 64), stages = givenInteger(p, "stages", 1);
      const int64_t bn = givenInteger(p, "block_n", t.waveSize == 32 ? 32 : 64);
      p.try_emplace("block_n", std::to_string(keyBlockForLds(t, bm, bn, d, dv, stages)));
    }
  };
  info.problem = [name = info.name, params = info.params](const KernelParams &given) -> Result<Problem> {
    Result<AttentionParams> a = readParams(name, params, given);
    if (!a)
      return Error{a.error()};
    std::vector<int64_t> lq, lk;
    runLengths(a->batch, a->seqQ, a->seqK, a->varlen, lq, lk);
    return attentionProblem(a->config, lq, lk, a->scale);
  };
  return info;
}

// ---- Backward ---------------------------------------------------------------
//
// With P = exp(S - LSE) recomputed from the forward's LSE (S = Q K^T * scale),
// Delta_i = rowsum(dO_i * O_i):
//   dV = P^T dO,   dP = dO V^T,   dS = P * (dP - Delta),   dK = scale * dS^T Q,   dQ = scale * dS K.
// dq: one workgroup per (query block, head, sequence) loops over the key
// blocks its rows see (the forward's bounds), writes Delta for dkdv.
// dkdv: one workgroup per (key block, kv head, sequence) loops over the query
// heads sharing the kv head and, for each, over the query blocks that see its
// keys; P^T and dS^T reach the matrix instructions through transposing copies
// into LDS. Both accumulate in f32 registers and store once.

std::string attentionBwdKernelName(const AttentionBwdConfig &b) {
  const AttentionConfig &c = b.attn;
  if (b.part == AttentionBwdConfig::Part::Forward)
    return attentionKernelName(c);
  return std::string("attn_bwd_") + (b.part == AttentionBwdConfig::Part::DQ ? "dq_" : "dkdv_") +
         dtypeName(c.dtype) + "_h" + std::to_string(c.heads) + "_kv" + std::to_string(c.kvHeads) + "_" +
         headDimsName(c) + (c.causal ? "_causal" : "") +
         (c.window > 0 ? "_win" + std::to_string(c.window) : "") + "_" + std::to_string(b.blockM) + "x" +
         std::to_string(b.blockN) + "_w" + std::to_string(c.waves);
}

static Result<Kernel> buildAttentionDQ(const AttentionBwdConfig &bc) {
  using namespace dsl;
  const AttentionConfig &c = bc.attn;
  const int64_t BM = bc.blockM, BN = bc.blockN, D = c.headDim, Dv = c.valueDim();
  const double log2e = 1.4426950408889634;
  KernelBuilder kb(attentionBwdKernelName(bc), {.numWaves = c.waves});
  const dsl::TensorOptions headRowOpts = headRows(c.dtype);
  Tensor Q = kb.tensor("Q", c.dtype, 2, headRowOpts), K = kb.tensor("K", c.dtype, 2, headRowOpts), V = kb.tensor("V", c.dtype, 2, headRowOpts);
  Tensor O = kb.tensor("O", c.dtype, 2, headRowOpts), LSE = kb.tensor("LSE", DType::f32, 2), dO = kb.tensor("dO", c.dtype, 2, headRowOpts);
  Tensor cuQ = kb.tensor("cu_seqlens_q", DType::i32, 1), cuK = kb.tensor("cu_seqlens_k", DType::i32, 1);
  Tensor dQ = kb.tensor("dQ", c.dtype, 2, headRowOpts), Delta = kb.tensor("Delta", DType::f32, 2);
  Scalar scale = kb.scalarF32("softmax_scale");
  Index maxSeqQ = kb.scalarI32("max_seqlen_q"), batch = kb.scalarI32("batch");
  kb.grid({GridExtent::ceilDiv(maxSeqQ, BM), GridExtent::fixed(c.heads), GridExtent::ceilDiv(batch, 1)});
  Index qb = kb.blockId(0), h = kb.blockId(1), b = kb.blockId(2);
  Index kvh = h / (c.heads / c.kvHeads);
  Sequence sq = sequenceOf(kb, cuQ, cuK, b);
  Tensor Qs = kb.window(Q, {sq.qStart, h * D}, {sq.lq, D}), dOs = kb.window(dO, {sq.qStart, h * Dv}, {sq.lq, Dv});
  Tensor Os = kb.window(O, {sq.qStart, h * Dv}, {sq.lq, Dv}), dQs = kb.window(dQ, {sq.qStart, h * D}, {sq.lq, D});
  Tensor Ls = kb.window(LSE, {sq.qStart, h}, {sq.lq, 1}), Ds = kb.window(Delta, {sq.qStart, h}, {sq.lq, 1});
  Tensor Ks = kb.window(K, {sq.kStart, kvh * D}, {sq.lk, D}), Vs = kb.window(V, {sq.kStart, kvh * Dv}, {sq.lk, Dv});
  Index q0 = qb * BM;
  auto keys = keysSeenBy(c, sq, q0, BM);
  Index maskRow = q0 + sq.lk - sq.lq, lk = sq.lk;

  Tile qT = kb.ldsTile("q_lds", {BM, D}, c.dtype), doT = kb.ldsTile("do_lds", {BM, Dv}, c.dtype);
  Tile kT = kb.ldsTile("k_lds", {BN, D}, c.dtype), vT = kb.ldsTile("v_lds", {BN, Dv}, c.dtype);
  Tile dsT = kb.ldsTile("ds_lds", {BM, BN}, c.dtype);
  Tile s = kb.regTile("s", {BM, BN}, DType::f32), dp = kb.regTile("dp", {BM, BN}, DType::f32);
  Tile dq = kb.regTile("dq", {BM, D}, DType::f32);
  Tile o = kb.regTile("o", {BM, Dv}, c.dtype), dor = kb.regTile("do", {BM, Dv}, c.dtype);  // as loaded
  Tile prod = kb.regTile("o_do", {BM, Dv}, DType::f32);
  Tile lse = kb.regTile("lse", {BM}, DType::f32), delta = kb.regTile("delta", {BM}, DType::f32);

  kb.load(Qs, {q0, 0}, qT);
  kb.load(dOs, {q0, 0}, doT);
  // ---- Delta = rowsum(dO * O), kept for dkdv
  kb.load(Os, {q0, 0}, o);
  kb.load(dOs, {q0, 0}, dor);
  kb.mul(prod, o, dor);
  kb.reduce(ReduceKind::sum, prod, delta);
  kb.store(delta, Ds, {q0, 0});
  kb.load(Ls, {q0, 0}, lse);
  kb.scale(lse, lse, log2e);  // base 2, as S below
  kb.fill(dq, 0.0);
  kb.forLoop(keys.first / BN, cdiv(keys.second, BN), 1, {.name = "kb"}, [&](Index j) {
    Index k0 = j * BN;
    kb.load(Ks, {k0, 0}, kT);
    kb.load(Vs, {k0, 0}, vT);
    // ---- P = exp2(S * scale * log2(e) - LSE * log2(e)), masked
    kb.fill(s, 0.0);
    kb.gemm(qT, kT, s, {.transposeB = true});
    kb.scale(s, s, scale);
    kb.scale(s, s, log2e);
    kb.mask(s, maskRow, k0, lk, {.causal = c.causal, .window = c.window});
    kb.subExp2(s, s, lse);
    // ---- dS = P * (dO V^T - Delta);  dQ += dS K
    kb.fill(dp, 0.0);
    kb.gemm(doT, vT, dp, {.transposeB = true});
    kb.sub(dp, dp, delta);
    kb.mul(dp, dp, s);
    kb.copy(dp, dsT);
    kb.gemm(dsT, kT, dq);
  });
  kb.scale(dq, dq, scale);
  kb.store(dq, dQs, {q0, 0});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

static Result<Kernel> buildAttentionDKDV(const AttentionBwdConfig &bc) {
  using namespace dsl;
  const AttentionConfig &c = bc.attn;
  const int64_t BM = bc.blockM, BN = bc.blockN, D = c.headDim, Dv = c.valueDim(), G = c.heads / c.kvHeads;
  const double log2e = 1.4426950408889634;
  KernelBuilder kb(attentionBwdKernelName(bc), {.numWaves = c.waves});
  const dsl::TensorOptions headRowOpts = headRows(c.dtype);
  Tensor Q = kb.tensor("Q", c.dtype, 2, headRowOpts), K = kb.tensor("K", c.dtype, 2, headRowOpts), V = kb.tensor("V", c.dtype, 2, headRowOpts);
  Tensor LSE = kb.tensor("LSE", DType::f32, 2), dO = kb.tensor("dO", c.dtype, 2, headRowOpts);
  Tensor Delta = kb.tensor("Delta", DType::f32, 2);
  Tensor cuQ = kb.tensor("cu_seqlens_q", DType::i32, 1), cuK = kb.tensor("cu_seqlens_k", DType::i32, 1);
  Tensor dK = kb.tensor("dK", c.dtype, 2, headRowOpts), dV = kb.tensor("dV", c.dtype, 2, headRowOpts);
  Scalar scale = kb.scalarF32("softmax_scale");
  Index maxSeqK = kb.scalarI32("max_seqlen_k"), batch = kb.scalarI32("batch");
  kb.grid({GridExtent::ceilDiv(maxSeqK, BN), GridExtent::fixed(c.kvHeads), GridExtent::ceilDiv(batch, 1)});
  Index kbk = kb.blockId(0), kvh = kb.blockId(1), b = kb.blockId(2);
  Sequence sq = sequenceOf(kb, cuQ, cuK, b);
  Tensor Ks = kb.window(K, {sq.kStart, kvh * D}, {sq.lk, D}), Vs = kb.window(V, {sq.kStart, kvh * Dv}, {sq.lk, Dv});
  Tensor dKs = kb.window(dK, {sq.kStart, kvh * D}, {sq.lk, D}), dVs = kb.window(dV, {sq.kStart, kvh * Dv}, {sq.lk, Dv});
  Index k0 = kbk * BN;
  auto queries = queriesSeeing(c, sq, k0, BN);
  Index lk = sq.lk, lq = sq.lq;

  Tile kT = kb.ldsTile("k_lds", {BN, D}, c.dtype), vT = kb.ldsTile("v_lds", {BN, Dv}, c.dtype);
  Tile qT = kb.ldsTile("q_lds", {BM, D}, c.dtype), doT = kb.ldsTile("do_lds", {BM, Dv}, c.dtype);
  Tile ptT = kb.ldsTile("pt_lds", {BN, BM}, c.dtype), dstT = kb.ldsTile("dst_lds", {BN, BM}, c.dtype);
  Tile s = kb.regTile("s", {BM, BN}, DType::f32), dp = kb.regTile("dp", {BM, BN}, DType::f32);
  Tile dk = kb.regTile("dk", {BN, D}, DType::f32), dv = kb.regTile("dv", {BN, Dv}, DType::f32);
  Tile lse = kb.regTile("lse", {BM}, DType::f32), delta = kb.regTile("delta", {BM}, DType::f32);

  kb.load(Ks, {k0, 0}, kT);
  kb.load(Vs, {k0, 0}, vT);
  kb.fill(dk, 0.0);
  kb.fill(dv, 0.0);
  kb.forLoop(0, G, 1, {.name = "g"}, [&](Index g) {
    Index h = kvh * G + g;
    Tensor Qs = kb.window(Q, {sq.qStart, h * D}, {lq, D}), dOs = kb.window(dO, {sq.qStart, h * Dv}, {lq, Dv});
    Tensor Ls = kb.window(LSE, {sq.qStart, h}, {lq, 1}), Ds = kb.window(Delta, {sq.qStart, h}, {lq, 1});
    kb.forLoop(queries.first / BM, cdiv(queries.second, BM), 1, {.name = "qb"}, [&](Index i) {
      Index q0 = i * BM;
      kb.load(Qs, {q0, 0}, qT);
      kb.load(dOs, {q0, 0}, doT);
      kb.load(Ls, {q0, 0}, lse);
      kb.load(Ds, {q0, 0}, delta);
      kb.scale(lse, lse, log2e);
      // ---- P = exp2(S * scale * log2(e) - LSE * log2(e)), masked;  dV += P^T dO
      kb.fill(s, 0.0);
      kb.gemm(qT, kT, s, {.transposeB = true});
      kb.scale(s, s, scale);
      kb.scale(s, s, log2e);
      kb.mask(s, q0 + lk - lq, k0, lk, {.causal = c.causal, .window = c.window});
      kb.subExp2(s, s, lse);
      kb.copy(s, ptT, {.transpose = true});
      kb.gemm(ptT, doT, dv);
      // ---- dS = P * (dO V^T - Delta);  dK += dS^T Q
      kb.fill(dp, 0.0);
      kb.gemm(doT, vT, dp, {.transposeB = true});
      kb.sub(dp, dp, delta);
      kb.mul(dp, dp, s);
      kb.copy(dp, dstT, {.transpose = true});
      kb.gemm(dstT, qT, dk);
    });
  });
  kb.scale(dk, dk, scale);
  kb.store(dk, dKs, {k0, 0});
  kb.store(dv, dVs, {k0, 0});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

Result<Kernel> buildAttentionBwd(const AttentionBwdConfig &b) {
  if (auto e = kvHeadsError("attention_bwd", b.attn.heads, b.attn.kvHeads))
    return *e;
  switch (b.part) {
  case AttentionBwdConfig::Part::Forward: return buildAttention(b.attn);
  case AttentionBwdConfig::Part::DQ: return buildAttentionDQ(b);
  case AttentionBwdConfig::Part::DKDV: return buildAttentionDKDV(b);
  }
  return Error{"attention_bwd: unknown part"};
}

namespace {

/// The attention backward problem: the forward's outputs and the three
/// gradients, checked against a double-precision reference.
///
/// Tolerances (u = 2^-24, uIn = unit roundoff of Q's type). The forward's O
/// and LSE carry the forward's tolerances (attendRow: outTol, lseTol). Then,
/// for query row i and key j, with A_ij = |dP_ij - Delta_i|:
///   P: relative error eP_i = exp(E_i + lseTol_i) - 1 (recomputed scores as in
///      the forward, minus the kernel's LSE);
///   dP = dO.V_j in f32 over Dv values: eDP_ij = (Dv + 2) u sum|dO||V_j|;
///   Delta = dO.O in f32 from the kernel's O: eDelta_i = sum_d |dO_id| outTol_id + (Dv + 2) u sum|dO||O|;
///   dS, rounded to Q's type for the matrix instruction:
///      edS_ij = P_ij [(1 + eP)(1 + uIn)(1 + 2u)(A_ij + eDP_ij + eDelta_i) - A_ij] + sub(dS_ij, edS_ij);
///   sums over n terms in f32: gamma_n = (n + 8) u;
///   dV_jd: sum_i |dO_id| (P_ij [(1 + eP_i)(1 + uIn)(1 + gamma) - 1] + sub(P_ij, P_ij eP_i)),
///   dK_jd: |scale| sum_i (edS_ij + |dS_ij| gamma) |Q_id| (1 + 2u),
///   dQ_id: |scale| sum_j (edS_ij + |dS_ij| gamma) |K_jd| (1 + 2u),
///   each then rounded to Q's type: + uIn (|ref| + bound) + h.
/// Rounding to Q's type errs by uIn relative only in its normal range; below
/// it by up to h, half the smallest subnormal (2^-25 f16, 2^-134 bf16). And
/// gfx90a's MFMAs flush an operand below the smallest normal n (2^-14 f16,
/// 2^-126 bf16) to zero (TargetInfo::matrixFlushes16BitSubnormals), losing it
/// whole. So an operand x known to within e adds sub(x, e) = h + (|x| - e < n ? |x| : 0).
Problem attentionBwdProblem(const AttentionConfig &c, const std::vector<int64_t> &seqQ,
                            const std::vector<int64_t> &seqK, double scale) {
  Problem prob = attentionProblem(c, seqQ, seqK, scale);
  const int64_t batch = static_cast<int64_t>(seqQ.size()), H = c.heads, KH = c.kvHeads, D = c.headDim;
  const int64_t Dv = c.valueDim();
  const int64_t totalQ = prob.tensors[0].shape[0], totalK = prob.tensors[1].shape[0];
  const int64_t maxQ = *std::max_element(seqQ.begin(), seqQ.end());
  const int64_t maxK = *std::max_element(seqK.begin(), seqK.end());
  // Tensors 0..6 as the forward's (Q, K, V, O, LSE, cu_seqlens_q, cu_seqlens_k).
  prob.tensors.push_back({"dO", c.dtype, {totalQ, H * Dv}});
  prob.tensors.push_back({"dQ", c.dtype, {totalQ, H * D}, /*output=*/true});
  prob.tensors.push_back({"dK", c.dtype, {totalK, KH * D}, /*output=*/true});
  prob.tensors.push_back({"dV", c.dtype, {totalK, KH * Dv}, /*output=*/true});
  prob.tensors.push_back({"Delta", DType::f32, {totalQ, H}, false, {}, /*scratch=*/true});
  auto f32 = [](const char *n, double v, size_t pos) { return ScalarSpec{n, static_cast<float>(v), pos}; };
  auto i32 = [](const char *n, int64_t v, size_t pos) { return ScalarSpec{n, static_cast<float>(v), pos, true}; };
  prob.launches = {
      {{{"part", "fwd"}}, {0, 1, 2, 3, 4, 5, 6}, {f32("softmax_scale", scale, 7), i32("max_seqlen_q", maxQ, 8), i32("batch", batch, 9)}},
      {{{"part", "dq"}}, {0, 1, 2, 3, 4, 7, 5, 6, 8, 11}, {f32("softmax_scale", scale, 10), i32("max_seqlen_q", maxQ, 11), i32("batch", batch, 12)}},
      {{{"part", "dkdv"}}, {0, 1, 2, 4, 7, 11, 5, 6, 9, 10}, {f32("softmax_scale", scale, 10), i32("max_seqlen_k", maxK, 11), i32("batch", batch, 12)}},
  };
  prob.scalars.clear();
  prob.toleranceRule += "; gradients: P error e^(E+lseTol)-1, dP and Delta f32 dot products (Delta from the kernel's O), "
                        "dS rounded to Q's type, f32 sums (n+8)*2^-24, outputs rounded to Q's type; "
                        "below Q's normal range a rounding errs by half its smallest subnormal and P and dS may be "
                        "flushed to 0 (gfx90a)";
  auto forward = prob.reference;
  const double u = std::ldexp(1.0, -24), uIn = unitRoundoff(c.dtype), log2e = 1.4426950408889634;
  const double halfSubnormal = std::ldexp(1.0, c.dtype == DType::bf16 ? -134 : -25);
  const double minNormal = std::ldexp(1.0, c.dtype == DType::bf16 ? -126 : -14);
  auto sub = [=](double x, double e) {
    return halfSubnormal + (std::fabs(x) - e < minNormal ? std::fabs(x) : 0.0);
  };
  const AttentionConfig cfg = c;
  std::vector<double> cuQ = prob.tensors[5].values, cuK = prob.tensors[6].values;
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    forward(v, expected, tolerance);  // O, LSE and their tolerances
    const std::vector<double> &q = v[0], &k = v[1], &val = v[2], &dO = v[7];
    const std::vector<double> &O = expected[0], &L = expected[1], &Otol = tolerance[0], &Ltol = tolerance[1];
    std::vector<double> dQ(totalQ * H * D, 0.0), dK(totalK * KH * D, 0.0), dV(totalK * KH * Dv, 0.0);
    std::vector<double> tQ(dQ.size(), 0.0), tK(dK.size(), 0.0), tV(dV.size(), 0.0);
    const int64_t group = H / cfg.kvHeads;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t lq = seqQ[b], lk = seqK[b], q0 = static_cast<int64_t>(cuQ[b]), k0 = static_cast<int64_t>(cuK[b]);
      const double gQ = double(lk + 8) * u, gK = double(lq * group + 8) * u;
      for (int64_t h = 0; h < H; ++h) {
        const int64_t kh = h / group;
        for (int64_t i = 0; i < lq; ++i) {
          const int64_t row = (q0 + i) * H + h, pos = i + lk - lq;
          if (L[row] == -INFINITY)
            continue;  // no key visible: P = 0
          const double *qi = &q[row * D], *doi = &dO[row * Dv], *oi = &O[row * Dv], *oti = &Otol[row * Dv];
          double delta = 0, eDelta = 0;
          for (int64_t d = 0; d < Dv; ++d) {
            delta += doi[d] * oi[d];
            eDelta += std::fabs(doi[d]) * oti[d] + double(Dv + 2) * u * std::fabs(doi[d] * oi[d]);
          }
          for (int64_t j = 0; j < lk; ++j) {
            if ((cfg.causal && j > pos) || (cfg.window > 0 && j <= pos - cfg.window))
              continue;
            const double *kj = &k[((k0 + j) * KH + kh) * D], *vj = &val[((k0 + j) * KH + kh) * Dv];
            double dot = 0, mag = 0, dp = 0, eDP = 0;
            for (int64_t d = 0; d < D; ++d) {
              dot += qi[d] * kj[d];
              mag += std::fabs(qi[d] * kj[d]);
            }
            for (int64_t d = 0; d < Dv; ++d) {
              dp += doi[d] * vj[d];
              eDP += std::fabs(doi[d] * vj[d]);
            }
            eDP *= double(Dv + 2) * u;
            const double sij = scale * dot, P = std::exp(sij - L[row]);
            const double E = double(D + 3) * u * std::fabs(scale) * mag +
                             std::ldexp(1.0, -20) * (1 + std::fabs(sij - L[row]) * log2e);
            const double eP = std::exp(E + Ltol[row]) - 1;
            const double A = std::fabs(dp - delta), dS = P * (dp - delta);
            const double edSRel = P * ((1 + eP) * (1 + uIn) * (1 + 2 * u) * (A + eDP + eDelta) - A);
            // dS and P as the matrix instructions' operands, in Q's type
            const double edS = edSRel + sub(dS, edSRel), ePOperand = sub(P, P * eP);
            double *dkj = &dK[((k0 + j) * KH + kh) * D], *dvj = &dV[((k0 + j) * KH + kh) * Dv];
            double *tkj = &tK[((k0 + j) * KH + kh) * D], *tvj = &tV[((k0 + j) * KH + kh) * Dv];
            for (int64_t d = 0; d < Dv; ++d) {
              dvj[d] += P * doi[d];
              tvj[d] += std::fabs(doi[d]) * (P * ((1 + eP) * (1 + uIn) * (1 + gK) - 1) + ePOperand);
            }
            for (int64_t d = 0; d < D; ++d) {
              dkj[d] += scale * dS * qi[d];
              tkj[d] += std::fabs(scale) * (edS + std::fabs(dS) * gK) * std::fabs(qi[d]) * (1 + 2 * u);
              dQ[row * D + d] += scale * dS * kj[d];
              tQ[row * D + d] += std::fabs(scale) * (edS + std::fabs(dS) * gQ) * std::fabs(kj[d]) * (1 + 2 * u);
            }
          }
        }
      }
    }
    for (std::vector<double> *ref : {&dQ, &dK, &dV}) {
      std::vector<double> &t = ref == &dQ ? tQ : ref == &dK ? tK : tV;
      for (size_t x = 0; x < ref->size(); ++x)
        t[x] += uIn * (std::fabs((*ref)[x]) + t[x]) + halfSubnormal;
    }
    expected.push_back(std::move(dQ));
    expected.push_back(std::move(dK));
    expected.push_back(std::move(dV));
    tolerance.push_back(std::move(tQ));
    tolerance.push_back(std::move(tK));
    tolerance.push_back(std::move(tV));
  };
  return prob;
}

} // namespace

KernelInfo attentionBwdKernelInfo() {
  KernelInfo info = attentionKernelInfo();
  info.name = "attention_bwd";
  info.summary = "attention backward: dQ, dK, dV for the attention forward (causal, window, GQA, varlen); "
                 "deterministic (no atomics); --run launches fwd, dq, dkdv";
  for (KernelParam &p : info.params) {
    if (p.name == "block_m")
      p = {"block_m", "32", "query rows per block of dq and dkdv", p.spec};
    else if (p.name == "block_n")  // 32: dkdv's dK and dV accumulators fit gfx1151's registers
      p = {"block_n", "32", "keys per block of dq and dkdv", p.spec};
  }
  info.params.push_back({"part", "dq", "the kernel to compile: fwd (the forward, for O and LSE) | dq | dkdv",
                         ParamSpec::oneOf({"fwd", "dq", "dkdv"})});
  info.params.push_back({"fwd_block_n", "64",
                         "keys per step of the forward that computes O and LSE (NVIDIA targets: 32; AMD with "
                         "head_dim 192: 32, 256: 16)",
                         ParamSpec::oneOf({"16", "32", "64"})});
  // NVIDIA: 8 warps (dK and dV of a 32-key block in 4 warps spill), and the
  // forward over 32-key steps (64 spill; head sizes above 128 pipelined 2
  // deep, one stage spills at 256). AMD: the forward's key block as the
  // forward entry picks it for the LDS, and dq's and dkdv's halved until their
  // tiles fit it too (dkdv's: K, V [BN, D + Dv], Q, dO [BM, D + Dv] and the
  // transposed P and dS [BN, BM]; head_dim 256: 16 keys). The waves split a
  // 32 x 32 block's tiles as a grid of 2 x 2 (AMD) or 2 x 4 (NVIDIA): a 16-key
  // block or a head size that is not a multiple of 32 (80) takes 2 waves on
  // AMD, 4 warps on NVIDIA. gfx1151 spills a few registers from head_dim 96
  // up (--emit=report), the price of its 256 VGPRs.
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    const auto [d, dv] = givenHeadDims(p);
    const bool oddHeads = d % 32 != 0 || dv % 32 != 0;
    if (t.vendor == Vendor::NVIDIA) {
      p.try_emplace("waves", oddHeads ? "4" : "8");
      p.try_emplace("fwd_block_n", "32");
      if (std::max(d, dv) > 128)
        p.try_emplace("stages", "2");
      return;
    }
    p.try_emplace("fwd_block_n", std::to_string(keyBlockForLds(t, 64, 64, d, dv, 1)));
    int64_t bm = givenInteger(p, "block_m", 32), bn = givenInteger(p, "block_n", 32);
    while (bn > 16 && 2 * ((bm + bn) * (d + dv) + 2 * bm * bn) > t.ldsBytesPerWorkgroup)
      bn /= 2;
    p.try_emplace("block_n", std::to_string(bn));
    if (bn < 32 || oddHeads)
      p.try_emplace("waves", "2");
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<std::pair<AttentionBwdConfig, AttentionParams>> {
    ParamReader own(name, params, given);  // part and fwd_block_n are the backward's own
    const std::string part = own.choice("part"), fwdBlockN = own.choice("fwd_block_n");
    if (!own.ok())
      return own.error();
    KernelParams rest = given;
    rest.erase("part");
    rest.erase("fwd_block_n");
    std::vector<KernelParam> attnParams;
    for (const KernelParam &p : params)
      if (p.name != "part" && p.name != "fwd_block_n")
        attnParams.push_back(p);
    Result<AttentionParams> a = readParams(name, attnParams, rest);
    if (!a)
      return Error{a.error()};
    AttentionBwdConfig b;
    b.attn = a->config;
    b.blockM = a->config.blockM;
    b.blockN = a->config.blockN;
    b.attn.blockM = 64;  // the forward's own blocks
    b.attn.blockN = std::stoll(fwdBlockN);
    if (part == "fwd")
      b.part = AttentionBwdConfig::Part::Forward;
    else if (part == "dq")
      b.part = AttentionBwdConfig::Part::DQ;
    else
      b.part = AttentionBwdConfig::Part::DKDV;
    return std::pair{b, *a};
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    auto r = read(given);
    if (!r)
      return Error{r.error()};
    return buildAttentionBwd(r->first);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    auto r = read(given);
    if (!r)
      return Error{r.error()};
    const AttentionParams &a = r->second;
    std::vector<int64_t> lq, lk;
    runLengths(a.batch, a.seqQ, a.seqK, a.varlen, lq, lk);
    return attentionBwdProblem(r->first.attn, lq, lk, a.scale);
  };
  return info;
}

std::string pagedDecodeKernelName(const PagedDecodeConfig &c) {
  return "paged_decode_" + std::string(dtypeName(c.dtype)) + "_h" + std::to_string(c.heads) + "_kv" +
         std::to_string(c.kvHeads) + "_d" + std::to_string(c.headDim) + "_bs" + std::to_string(c.blockSize) +
         "_q" + std::to_string(c.qPerSeq) + "_w" + std::to_string(c.waves) +
         (c.splits > 1 ? (c.part == PagedDecodeConfig::Part::Combine ? "_combine" : "_split") + std::to_string(c.splits)
                       : "");
}

/// Rows of the query tile: the heads sharing one kv head, at least one
/// 16-row matrix-instruction block.
static int64_t decodeRows(const PagedDecodeConfig &c) {
  int64_t g = c.heads / c.kvHeads;
  return std::max<int64_t>(16, (g + 15) / 16 * 16);
}

// Decode over a paged KV cache. Grid: tokens x kv_heads. A workgroup takes one
// query token and the G = heads / kv_heads query heads that share one kv head
// (GQA): Q's rows t*heads + kvh*G .. + G are one [G, D] tile (rows past G read 0
// and are not stored), so each K/V block is read once for the whole group.
// The token sees keys [0, context_len - q_per_seq + t % q_per_seq]; the key
// loop walks the sequence's block table, cutting block `phys` out of the cache
// with a window (rows phys*block_size .., the kv head's columns).
// The split-KV combine: for each row (token, head), the partial results of
// the splits merge as O = sum_s e^(lse_s - m) O_s / sum_s e^(lse_s - m),
// LSE = m + log(sum_s e^(lse_s - m)), m = max_s lse_s (in base 2 inside). A
// split that saw no key has lse_s = -inf and weight 0. 16 rows per wave.
Result<Kernel> buildSplitKvCombine(const std::string &name, DType outType, int64_t D, int64_t splits, int waves,
                                   int64_t columns) {
  using namespace dsl;
  const int64_t R = 16 * waves, DC = columns > 0 ? columns : D;
  const bool columnBlocks = DC < D;
  const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
  KernelBuilder kb(name, {.numWaves = waves});
  const dsl::TensorOptions headRowOpts = headRows(outType);
  Tensor Op = kb.tensor("O_part", DType::f32, 2);
  Tensor Lp = kb.tensor("LSE_part", DType::f32, 2);
  Tensor O = kb.tensor("O", outType, 2, headRowOpts);
  Tensor LSE = kb.tensor("LSE", DType::f32, 2);
  if (columnBlocks)
    kb.grid({GridExtent::ceilDiv(O, 0, R), GridExtent::fixed((D + DC - 1) / DC)});
  else
    kb.grid({GridExtent::ceilDiv(O, 0, R)});
  Index r0 = kb.blockId(0) * R, rows = O.dim(0), c0 = 0;
  Tensor Lout = LSE;
  if (columnBlocks) {
    Index cb = kb.blockId(1);
    c0 = cb * DC;
    Lout = kb.window(LSE, {0, 0}, {rows * (1 - min(cb, 1)), 1});  // column block 0 writes LSE
  }
  Tile acc = kb.regTile("acc", {R, DC}, DType::f32);
  Tile part = kb.regTile("part", {R, DC}, DType::f32);
  Tile m = kb.regTile("m", {R}, DType::f32), mNew = kb.regTile("m_new", {R}, DType::f32);
  Tile x = kb.regTile("x", {R}, DType::f32), l = kb.regTile("l", {R}, DType::f32);
  Tile alpha = kb.regTile("alpha", {R}, DType::f32), beta = kb.regTile("beta", {R}, DType::f32);
  kb.fill(acc, 0.0);
  kb.fill(m, -std::numeric_limits<double>::infinity());
  kb.fill(l, 0.0);
  kb.forLoop(0, splits, 1, {.name = "split"}, [&](Index s) {
    kb.load(kb.window(Op, {s * rows, 0}, {rows, D}), {r0, c0}, part);
    kb.load(kb.window(Lp, {s * rows, 0}, {rows, 1}), {r0, 0}, x);
    kb.scale(x, x, log2e);
    kb.max(mNew, m, x);
    kb.subExp2(alpha, m, mNew);  // rescales what was merged so far
    kb.subExp2(beta, x, mNew);   // this split's weight
    kb.mul(acc, acc, alpha);
    kb.mul(part, part, beta);
    kb.add(acc, acc, part);
    kb.mul(l, l, alpha);
    kb.add(l, l, beta);
    kb.convert(m, mNew);
  });
  kb.safeDiv(acc, acc, l);
  kb.store(acc, O, {r0, c0});
  kb.log(x, l);
  kb.scale(m, m, ln2);
  kb.add(x, x, m);
  kb.store(x, Lout, {r0, 0});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

Result<Kernel> buildPagedDecode(const PagedDecodeConfig &c) {
  using namespace dsl;
  if (auto e = kvHeadsError("paged_decode", c.heads, c.kvHeads))
    return *e;
  if (c.splits < 1)
    return Error{"paged_decode: splits must be >= 1"};
  if (c.part == PagedDecodeConfig::Part::Combine)
    return c.splits > 1 ? buildSplitKvCombine(pagedDecodeKernelName(c), c.dtype, c.headDim, c.splits, c.waves)
                        : Result<Kernel>(Error{"paged_decode: part=combine needs splits > 1 (one split writes O directly)"});
  const int64_t G = c.heads / c.kvHeads, BM = decodeRows(c), BS = c.blockSize, D = c.headDim;
  const bool split = c.splits > 1;

  KernelBuilder kb(pagedDecodeKernelName(c), {.numWaves = c.waves});

  const dsl::TensorOptions headRowOpts = headRows(c.dtype);
  Tensor Q = kb.tensor("Q", c.dtype, 2, headRowOpts);
  Tensor Kc = kb.tensor("K_cache", c.dtype, 2, headRowOpts);
  Tensor Vc = kb.tensor("V_cache", c.dtype, 2, headRowOpts);
  Tensor O = kb.tensor(split ? "O_part" : "O", split ? DType::f32 : c.dtype, 2, split ? dsl::TensorOptions{} : headRowOpts);
  Tensor LSE = kb.tensor(split ? "LSE_part" : "LSE", DType::f32, 2);
  Tensor table = kb.tensor("block_tables", DType::i32, 2);
  Tensor ctxLens = kb.tensor("context_lens", DType::i32, 1);
  Scalar scale = kb.scalarF32("softmax_scale");

  kb.grid({GridExtent::ceilDiv(Q, 0, c.heads), GridExtent::fixed(c.kvHeads), GridExtent::fixed(c.splits)});
  Index t = kb.blockId(0), kvh = kb.blockId(1);
  Index seq = t / c.qPerSeq;
  Index ctx = kb.loadIndex(ctxLens, seq);
  Index keyEnd = max(ctx + t % c.qPerSeq + 1, c.qPerSeq) - c.qPerSeq;  // keys [0, keyEnd)
  Index row0 = t * c.heads + kvh * G;
  // This split's blocks: [first, last) of the sequence's cdiv(keyEnd, BS).
  Index blocks = cdiv(keyEnd, BS), first = 0, last = blocks, outRow = row0;
  if (split) {
    Index s = kb.blockId(2), per = cdiv(blocks, c.splits);
    first = min(s * per, blocks);
    last = min(first + per, blocks);
    outRow = s * Q.dim(0) + row0;
  }
  Tensor Qs = kb.window(Q, {row0, 0}, {G, D});
  Tensor Os = kb.window(O, {outRow, 0}, {G, D});
  Tensor Ls = kb.window(LSE, {outRow, 0}, {G, 1});

  OnlineSoftmax sm(kb, BM, BS, D, D, c.dtype);
  kb.load(Qs, {0, 0}, sm.q);
  sm.init();
  kb.forLoop(first, last, 1, {.name = "blk"}, [&](Index j) {
    Index phys = kb.loadIndex(table, {seq, j});
    Tensor Kb = kb.window(Kc, {phys * BS, kvh * D}, {BS, D});
    Tensor Vb = kb.window(Vc, {phys * BS, kvh * D}, {BS, D});
    kb.load(Kb, {0, 0}, sm.k);
    kb.load(Vb, {0, 0}, sm.v);
    sm.step(scale, 0, j * BS, keyEnd, {});
  });
  sm.finish(Os, Ls, 0);

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

ShuffledBlockTable shuffledBlockTable(const std::vector<int64_t> &contextLens, int64_t blockSize, uint64_t seed) {
  const int64_t seqs = static_cast<int64_t>(contextLens.size()), BS = blockSize;
  ShuffledBlockTable bt;
  int64_t needed = 0;
  for (int64_t len : contextLens) {
    needed += (len + BS - 1) / BS;
    bt.maxBlocks = std::max(bt.maxBlocks, (len + BS - 1) / BS);
  }
  bt.numBlocks = needed + 3;
  std::vector<int64_t> perm(bt.numBlocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  bt.tableValues.assign(seqs * bt.maxBlocks, -1.0);
  bt.tables.resize(seqs);
  int64_t next = 0;
  for (int64_t s = 0; s < seqs; ++s) {
    bt.contextValues.push_back(static_cast<double>(contextLens[s]));
    for (int64_t b = 0; b < (contextLens[s] + BS - 1) / BS; ++b) {
      bt.tables[s].push_back(perm[next++]);
      bt.tableValues[s * bt.maxBlocks + b] = static_cast<double>(bt.tables[s].back());
    }
  }
  return bt;
}

Problem pagedDecodeProblem(const PagedDecodeConfig &c, const std::vector<int64_t> &contextLens, double scale,
                           uint64_t seed) {
  const int64_t seqs = static_cast<int64_t>(contextLens.size()), H = c.heads, KH = c.kvHeads, D = c.headDim;
  const int64_t BS = c.blockSize, tokens = seqs * c.qPerSeq;
  ShuffledBlockTable bt = shuffledBlockTable(contextLens, BS, seed);
  const int64_t numBlocks = bt.numBlocks, maxBlocks = bt.maxBlocks;
  const std::vector<std::vector<int64_t>> &tables = bt.tables;

  Problem prob;
  prob.tensors = {
      {"Q", c.dtype, {tokens * H, D}},
      {"K_cache", c.dtype, {numBlocks * BS, KH * D}},
      {"V_cache", c.dtype, {numBlocks * BS, KH * D}},
      {"O", c.dtype, {tokens * H, D}, /*output=*/true},
      {"LSE", DType::f32, {tokens * H, 1}, /*output=*/true},
      {"block_tables", DType::i32, {seqs, maxBlocks}, false, bt.tableValues},
      {"context_lens", DType::i32, {seqs}, false, bt.contextValues},
  };
  prob.scalars = {{"softmax_scale", static_cast<float>(scale), 7}};
  if (c.splits > 1) {
    // Split-KV: the attend kernel writes f32 partials (tensors 7, 8), the
    // combine kernel reads them and writes O and LSE.
    prob.tensors.push_back({"O_part", DType::f32, {c.splits * tokens * H, D}, false, {}, /*scratch=*/true});
    prob.tensors.push_back({"LSE_part", DType::f32, {c.splits * tokens * H, 1}, false, {}, /*scratch=*/true});
    prob.launches = {{{{"part", "attend"}}, {0, 1, 2, 7, 8, 5, 6}, prob.scalars}, {{{"part", "combine"}}, {7, 8, 3, 4}, {}}};
  }
  const double uIn = unitRoundoff(c.dtype);
  prob.toleranceRule = std::string(kToleranceRule) + ", uIn = " + (c.dtype == DType::bf16 ? "2^-8 (bf16)" : "2^-11 (f16)");
  const PagedDecodeConfig cfg = c;
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &q = v[0], &kc = v[1], &vc = v[2];
    std::vector<double> out(tokens * H * D, 0.0), outTol(tokens * H * D, 0.0);
    std::vector<double> lse(tokens * H, 0.0), lseTol(tokens * H, 0.0);
    const int64_t group = H / cfg.kvHeads;
    for (int64_t t = 0; t < tokens; ++t) {
      const int64_t s = t / cfg.qPerSeq;
      const int64_t visibleEnd = std::max<int64_t>(contextLens[s] - cfg.qPerSeq + t % cfg.qPerSeq + 1, 0);
      for (int64_t h = 0; h < H; ++h) {
        const int64_t kh = h / group;
        auto cacheRow = [&, s](int64_t j) { return tables[s][j / BS] * BS + j % BS; };
        RowKeys keys;
        keys.count = contextLens[s];
        keys.visible = [&](int64_t j) { return j < visibleEnd; };
        keys.k = [&](int64_t j) { return &kc[cacheRow(j) * KH * D + kh * D]; };
        keys.v = [&](int64_t j) { return &vc[cacheRow(j) * KH * D + kh * D]; };
        const int64_t row = t * H + h;
        attendRow(&q[row * D], D, scale, uIn, BS, keys, &out[row * D], &outTol[row * D], lse[row], lseTol[row],
                  cfg.splits);
      }
    }
    expected = {std::move(out), std::move(lse)};
    tolerance = {std::move(outTol), std::move(lseTol)};
  };
  return prob;
}

KernelInfo pagedDecodeKernelInfo() {
  KernelInfo info;
  info.name = "paged_decode";
  info.summary = "attention decode over a paged KV cache [blocks, block_size, kv_heads, D] through a block table; "
                 "GQA heads share each K/V block read";
  info.params = {
      {"batch", "4", "sequences (run-time; used by --run)", ParamSpec::integer(1, 1024)},
      {"heads", "8", "query heads", ParamSpec::integer(1, 256)},
      {"kv_heads", "8", "key/value heads; divides heads (GQA; 1: MQA)", ParamSpec::integer(1, 256)},
      {"seq_k", "300", "the longest context length; --run gives the sequences different lengths up to it "
                       "and a shuffled block table (run-time)", ParamSpec::integer(1, int64_t(1) << 17)},
      {"head_dim", "128", "64 | 80 | 96 | 128 | 192 | 256", headDimSpec()},
      {"block_size", "16", "tokens per KV-cache block: 16 | 32", ParamSpec::oneOf({"16", "32"})},
      {"q_per_seq", "1", "new query tokens per sequence (causal among them)", ParamSpec::integer(1, 8)},
      {"dtype", "bf16", "bf16 | f16 (Q, KV cache, O; LSE is f32)", ParamSpec::dtype({DType::bf16, DType::f16})},
      {"scale", "auto", "softmax scale, a kernel argument (auto: 1/sqrt(head_dim))", ParamSpec::real({"auto"})},
      {"waves", "1", "wavefronts per workgroup (wave32 targets with block_size=32: 2)", ParamSpec::integer(1, 16)},
      {"splits", "1", "split-KV: workgroups per (token, kv head), each over a share of the blocks, then a "
                      "combine kernel (1: none)", ParamSpec::integer(1, 64)},
      {"part", "attend", "with splits > 1: attend | combine (the kernel to compile; --run runs both)",
       ParamSpec::oneOf({"attend", "combine"})},
  };
  struct Read {
    PagedDecodeConfig config;
    int64_t batch = 1, seqK = 1;
    double scale = 0;
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<Read> {
    ParamReader p(name, params, given);
    Read r;
    PagedDecodeConfig &c = r.config;
    // --run builds the whole block table on the host: at most 1024 x 8192 blocks.
    r.batch = p.integer("batch");
    HeadParams h = readHeads(p);
    r.seqK = p.integer("seq_k");
    c.blockSize = std::stoll(p.choice("block_size"));
    c.qPerSeq = p.integer("q_per_seq");
    c.waves = static_cast<int>(p.integer("waves"));
    c.splits = p.integer("splits");
    c.part = p.choice("part") == "combine" ? PagedDecodeConfig::Part::Combine
                                           : PagedDecodeConfig::Part::Attend;
    if (!p.ok())
      return Error{p.error()};
    if (c.part == PagedDecodeConfig::Part::Combine && c.splits == 1)
      return Error{"kernel '" + name + "': part=combine needs splits > 1"};
    if (auto e = applyHeads(name, h, c))
      return *e;
    r.scale = h.scale;
    if (r.seqK < c.qPerSeq)
      return Error{"kernel '" + name + "': seq_k (" + std::to_string(r.seqK) + ") must be at least q_per_seq (" +
                   std::to_string(c.qPerSeq) + ")"};
    return r;
  };
  // Wave32 targets with 32-token blocks: two waves share the 16-byte loads of
  // a K/V block (one wave holds 16 loads of each in flight and spills).
  // NVIDIA with head sizes above 128: two warps share O [16, D] (one spills).
  // gfx1151 with 16-token blocks keeps one wave (a 16 x 16 S does not split)
  // and spills a few registers at head_dim 80 and 256 (--emit=report).
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    auto bs = p.find("block_size");
    if (t.waveSize == 32 && bs != p.end() && bs->second == "32")
      p.try_emplace("waves", "2");
    if (t.vendor == Vendor::NVIDIA && givenHeadDims(p).first > 128)
      p.try_emplace("waves", "2");
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    return buildPagedDecode(r->config);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    // Context lengths descending from seq_k, most not a multiple of the block size.
    std::vector<int64_t> lens;
    for (int64_t s = 0; s < r->batch; ++s)
      lens.push_back(std::max(r->config.qPerSeq, r->seqK - (s * (2 * r->seqK + 7)) / (2 * r->batch + 1)));
    return pagedDecodeProblem(r->config, lens, r->scale, /*seed=*/r->batch * 1000 + r->seqK);
  };
  return info;
}

} // namespace tilec::kernels
