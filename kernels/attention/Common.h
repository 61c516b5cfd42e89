// What the attention kernels (forward, backward, paged decode) share: the
// parameters they read alike, the target defaults' LDS arithmetic, the online
// softmax of FlashAttention, a packed sequence's bounds, the --run lengths.
#pragma once

#include "attention/Attention.h"

#include "Params.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilec::kernels::attention {

/// "<who>: kv_heads (3) must divide heads (8)", or nothing when it does.
std::optional<Error> kvHeadsError(const std::string &who, int64_t heads, int64_t kvHeads);

/// The head sizes the attention kernels take (those of Llama, Phi, Gemma,
/// DeepSeek's prefill ...), preceded by `keywords` (head_dim_v's "head_dim").
ParamSpec headDimSpec(std::vector<std::string> keywords = {});


/// The head sizes -p asks for: head_dim (default 128) and head_dim_v (default head_dim).
std::pair<int64_t, int64_t> givenHeadDims(const KernelParams &p);

/// The widest key block, halving from BN down to 16, whose attention
/// forward fits an AMD workgroup's LDS: Q [BM, D], K [BN, D] and V [BN, Dv]
/// per stage, and P [BM, BN] (AMD stores P through LDS), 16-bit elements.
int64_t keyBlockForLds(const TargetInfo &t, int64_t BM, int64_t BN, int64_t D, int64_t Dv, int64_t stages);

/// The parameters every attention entry reads the same way.
struct HeadParams {
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  DType dtype = DType::bf16;
  double scale = 0;  ///< the softmax scale (scale=auto: 1/sqrt(head_dim))
};

/// Reads heads, kv_heads, head_dim, dtype and scale; once `p` is ok(),
/// applyHeads() validates them together.
HeadParams readHeads(ParamReader &p);

/// Validates `h` (kv_heads divides heads), resolves scale=auto and copies the
/// heads, kv heads, head dimension and dtype into the entry's configuration.
template <class Config>
std::optional<Error> applyHeads(const std::string &kernel, HeadParams &h, Config &c) {
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
std::string headDimsName(const AttentionConfig &c);

/// The tiles and steps of FlashAttention's online softmax, shared by the
/// prefill and decode kernels: the caller loads Q into `q` once and each key
/// block into `k` and `v` (with loadV()), then calls step(). Q and K rows have
/// D values, V and O rows Dv. With `vTransposed`, `v` holds V^T [Dv, BN]:
/// P V's B operand is then read along its k (key) rows of V^T, which AMD's
/// matrix instructions read 16 bytes at a time instead of one element at a
/// time down V's columns; the load transposes on the way in.
struct OnlineSoftmax {
  dsl::KernelBuilder &kb;
  bool vTransposed;
  dsl::Tile q, k, v, s, p, o, m, mNew, l, alpha, lse;

  OnlineSoftmax(dsl::KernelBuilder &b, int64_t BM, int64_t BN, int64_t D, int64_t Dv, DType t, bool vTransposed)
      : kb(b), vTransposed(vTransposed), q(b.ldsTile("q_lds", {BM, D}, t)), k(b.ldsTile("k_lds", {BN, D}, t)),
        v(vTransposed ? b.ldsTile("vt_lds", {Dv, BN}, t) : b.ldsTile("v_lds", {BN, Dv}, t)),
        s(b.regTile("s", {BM, BN}, DType::f32)), p(b.regTile("p", {BM, BN}, DType::f32)),
        o(b.regTile("o", {BM, Dv}, DType::f32)),
        m(b.regTile("m", {BM}, DType::f32)),          // running row maximum (log2 units)
        mNew(b.regTile("m_new", {BM}, DType::f32)),
        l(b.regTile("l", {BM}, DType::f32)),          // running row sum of P
        alpha(b.regTile("alpha", {BM}, DType::f32)),  // rescaling of the old O and l
        lse(b.regTile("lse", {BM}, DType::f32)) {}

  /// Loads the key block's V rows from `values` at row `k0` into `v`.
  void loadV(const dsl::Tensor &values, const dsl::Index &k0) { kb.load(values, {k0, 0}, v, {.transpose = vTransposed}); }

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
    kb.scale(s, s, scale, log2e);
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
    kb.gemm(p, v, o, {.transposeB = vTransposed});  // P rounded to V's type for the matrix instruction
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

/// One sequence of a packed batch: rows [qStart, qStart + lq) of Q/O and
/// [kStart, kStart + lk) of K/V. (max(end, start) - start: a malformed offset
/// pair gives an empty sequence.)
struct Sequence {
  dsl::Index qStart, kStart, lq, lk;
};

Sequence sequenceOf(dsl::KernelBuilder &kb, const dsl::Tensor &cuQ, const dsl::Tensor &cuK, const dsl::Index &b);

/// The keys [begin, end) that the query rows [q0, q0 + BM) see: query row q
/// sees keys up to q + lk - lq (causal) and from q + lk - lq - window + 1
/// (window). Empty when the block starts past the sequence. Index arithmetic
/// is unsigned: terms are arranged to stay non-negative.
std::pair<dsl::Index, dsl::Index> keysSeenBy(const AttentionConfig &c, const Sequence &sq, const dsl::Index &q0,
                                             int64_t BM);

/// The query rows [begin, end) that see some key of [k0, k0 + BN): the
/// converse of keysSeenBy, for the backward pass's loop over queries.
std::pair<dsl::Index, dsl::Index> queriesSeeing(const AttentionConfig &c, const Sequence &sq, const dsl::Index &k0,
                                                int64_t BN);

/// Q, K, V and O (their gradients, the KV cache) are [tokens, heads * head_dim]
/// with every head size a multiple of 8: rows of whole heads, so loads of 16
/// bytes stay inside a row and aligned (launches check the innermost extent
/// and the alignment).
dsl::TensorOptions headRows(DType t);

/// The sequence lengths `--run` uses: all equal, or (varlen) descending from
/// the longest so that the batch is ragged; key lengths keep seq_k - seq_q.
void runLengths(int64_t batch, int64_t seqQ, int64_t seqK, bool varlen, std::vector<int64_t> &lq,
                std::vector<int64_t> &lk);

/// The -p values of `attention` (and of `attention_bwd` but for its own
/// part and fwd_block_n): the forward's configuration and the --run sizes.
struct AttentionParams {
  AttentionConfig config;
  int64_t batch = 1, seqQ = 1, seqK = 1;
  bool varlen = false;
  double scale = 0;
};

Result<AttentionParams> readParams(const std::string &name, const std::vector<KernelParam> &params,
                                   const KernelParams &given);

} // namespace tilec::kernels::attention
