// Attention in the tilec DSL: FlashAttention-2 style forward (prefill) over a
// packed, variable-length batch (kernels/attention/Forward.cpp), its backward
// (Backward.cpp), decode over a paged KV cache (PagedDecode.cpp), split-KV
// decoding's combine kernel, shared with mla_decode (SplitKv.cpp), and the
// double-precision reference they share (Reference.cpp).
#pragma once

#include "Registry.h"

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tilec::kernels {

/// One compiled attention-forward variant. Sequence lengths and the batch are
/// run-time values (cumulative offsets, as inference engines pack prefill).
struct AttentionConfig {
  DType dtype = DType::bf16;  ///< Q, K, V and O (bf16 or f16); scores, softmax and LSE in f32
  int64_t heads = 8;          ///< query heads
  int64_t kvHeads = 8;        ///< key/value heads (divides heads: GQA, MQA when 1)
  int64_t headDim = 128;      ///< Q and K head size: 64, 80, 96, 128, 192 or 256
  int64_t headDimV = 0;       ///< V and O head size (DeepSeek prefill: 192 / 128); 0: headDim
  bool causal = false;        ///< causal mask, aligned to the bottom right when seq_q != seq_k
  int64_t window = 0;         ///< > 0: sliding window of this many keys (the query's own included)
  int64_t blockM = 64;        ///< query rows per workgroup
  int64_t blockN = 64;        ///< keys per step of the key loop
  int waves = 4;              ///< wavefronts per workgroup
  int stages = 1;             ///< software-pipelining depth of the key loop (K and V of the next blocks prefetched)
  bool vTransposed = false;   ///< V's LDS tile holds V^T [Dv, BN] (transposed on the way in)

  int64_t valueDim() const { return headDimV > 0 ? headDimV : headDim; }
};

/// "attn_fwd_bf16_h8_kv2_d128_causal_64x64_w4" (and "_s2" with 2 stages,
/// "_vt" with V transposed in LDS, "_d192v128" where V's head size differs
/// from Q's and K's).
std::string attentionKernelName(const AttentionConfig &config);

/// Kernel arguments, in order: Q [total_q, heads*D], K [total_k, kv_heads*D],
/// V [total_k, kv_heads*Dv], O [total_q, heads*Dv] (output, Q's type), LSE [total_q, heads]
/// (output, f32, natural log), cu_seqlens_q and cu_seqlens_k [batch+1] (i32),
/// softmax_scale (f32), max_seqlen_q (i32: sizes the grid), batch (i32).
Result<Kernel> buildAttention(const AttentionConfig &config);

/// The problem for a batch with these per-sequence lengths, with its CPU
/// reference in double precision. `scale` is the softmax scale.
Problem attentionProblem(const AttentionConfig &config, const std::vector<int64_t> &seqQ,
                         const std::vector<int64_t> &seqK, double scale);

/// The registry entry (`tilec --kernel=attention -p heads=... -p causal=1`).
KernelInfo attentionKernelInfo();

/// The backward pass of `attention` (dQ, dK, dV). Three kernels, launched in
/// order on the same buffers: the forward (O and LSE, as a training step has
/// them), `dq` (Delta = rowsum(dO * O) and dQ, one workgroup per query block
/// looping over keys) and `dkdv` (one workgroup per key block and kv head,
/// looping over the query blocks of every query head that shares it). Every
/// gradient is a sum inside one workgroup in a fixed order: no atomics, the
/// results are bitwise reproducible run to run (deterministic by construction).
struct AttentionBwdConfig {
  AttentionConfig attn;      ///< shapes, dtype, masks (attn.blockM/N: the forward's blocks)
  enum class Part { Forward, DQ, DKDV } part = Part::DQ;
  int64_t blockM = 32;       ///< query rows per block in dq and dkdv
  int64_t blockN = 32;       ///< keys per block in dq and dkdv
};

/// "attn_bwd_dq_bf16_h8_kv8_d128_32x64_w4" (the forward part: attentionKernelName).
std::string attentionBwdKernelName(const AttentionBwdConfig &config);

/// dO, like O, is [total_q, heads*Dv]; dV like V, dQ like Q, dK like K.
/// dq arguments: Q, K, V, O, LSE, dO, cu_seqlens_q, cu_seqlens_k, dQ, Delta
/// [total_q, heads] f32 (written), softmax_scale, max_seqlen_q, batch.
/// dkdv arguments: Q, K, V, LSE, dO, Delta, cu_seqlens_q, cu_seqlens_k, dK, dV,
/// softmax_scale, max_seqlen_k, batch. Gradients are in Q's type.
Result<Kernel> buildAttentionBwd(const AttentionBwdConfig &config);

/// The registry entry (`tilec --kernel=attention_bwd -p part=dq|dkdv|fwd`);
/// `--run` launches all three and checks O, LSE, dQ, dK and dV.
KernelInfo attentionBwdKernelInfo();

/// Decode over a paged KV cache: a few new query tokens per sequence attend
/// to their sequence's context, read block by block through a block table.
struct PagedDecodeConfig {
  DType dtype = DType::bf16;  ///< Q, the KV cache and O (bf16 or f16)
  int64_t heads = 8;
  int64_t kvHeads = 8;        ///< divides heads; the heads sharing a kv head are one tile's rows
  int64_t headDim = 128;      ///< 64, 80, 96, 128, 192 or 256 (one size for Q, K and V)
  int64_t blockSize = 16;     ///< tokens per cache block: 16 or 32
  int64_t qPerSeq = 1;        ///< new query tokens per sequence (the last ones of its context; causal among them)
  int waves = 1;
  /// Software-pipelining depth of the block loop: with 2 or more, the next
  /// blocks' K and V (through the block table) are copied during a step.
  int stages = 1;
  /// Split-KV (flash-decoding): each sequence's blocks are shared among this
  /// many workgroups, whose partial results (f32 O and LSE) a second kernel
  /// combines through their log-sum-exps. 1: one kernel, no partials.
  int64_t splits = 1;
  /// With splits > 1, which of the two kernels to build.
  enum class Part { Attend, Combine } part = Part::Attend;
};

/// "paged_decode_bf16_h8_kv8_d128_bs16_q1_w1" (+ "_split4" / "_combine4").
std::string pagedDecodeKernelName(const PagedDecodeConfig &config);

/// Kernel arguments, in order: Q [tokens*heads, D] (token t of sequence
/// t / q_per_seq), K_cache and V_cache [num_blocks*block_size, kv_heads*D]
/// (the [num_blocks, block_size, kv_heads, D] cache inference engines keep),
/// O [tokens*heads, D], LSE [tokens*heads, 1] f32, block_tables
/// [num_seqs, max_blocks] i32, context_lens [num_seqs] i32, softmax_scale f32.
/// With splits > 1, O and LSE are the f32 partials [splits*tokens*heads, D]
/// and [splits*tokens*heads, 1] (split s at rows s*tokens*heads ..), and the
/// combine kernel takes (O_part, LSE_part, O, LSE).
Result<Kernel> buildPagedDecode(const PagedDecodeConfig &config);

/// A paged KV cache's block table for these context lengths (blocks of
/// `blockSize` rows): every sequence's blocks scattered over the cache by a
/// shuffle from `seed`, with 3 spare blocks nobody owns. Shared by the paged
/// decode and MLA decode problems.
struct ShuffledBlockTable {
  int64_t numBlocks = 0, maxBlocks = 1;
  std::vector<std::vector<int64_t>> tables;  ///< per sequence, its cache blocks in order
  std::vector<double> tableValues;           ///< block_tables [seqs, maxBlocks], -1 past the end
  std::vector<double> contextValues;         ///< context_lens [seqs]
};
ShuffledBlockTable shuffledBlockTable(const std::vector<int64_t> &contextLens, int64_t blockSize, uint64_t seed);

/// The problem for these context lengths, with a shuffled (non-contiguous)
/// block table from `seed`, and its double-precision reference.
Problem pagedDecodeProblem(const PagedDecodeConfig &config, const std::vector<int64_t> &contextLens, double scale,
                           uint64_t seed);

/// The registry entry (`tilec --kernel=paged_decode`).
KernelInfo pagedDecodeKernelInfo();

/// The split-KV combine (flash-decoding's second kernel), shared by the decode
/// kernels: arguments O_part [splits*rows, D] f32, LSE_part [splits*rows, 1]
/// f32 (split s at rows s*rows ..), O [rows, D] of `outType`, LSE [rows, 1]
/// f32. Row by row, m = max_s lse_s, O = sum_s e^(lse_s - m) O_s / sum_s
/// e^(lse_s - m), LSE = m + log sum_s e^(lse_s - m), the splits in a fixed
/// order (deterministic); a split with lse_s = -inf has weight 0. 16 rows per
/// wave; `columns` > 0 (dividing headDim): a second grid axis over blocks of
/// that many columns, so that wide rows (MLA's 512) fit the registers.
Result<Kernel> buildSplitKvCombine(const std::string &name, DType outType, int64_t headDim, int64_t splits, int waves,
                                   int64_t columns = 0);

/// Makes `prob` (tensors and scalars in the attend kernel's argument order,
/// O [rows, cols] at `oTensor` and LSE [rows, 1] at `lseTensor`) a split-KV
/// problem: appends the partials O_part [splits*rows, cols] and LSE_part
/// [splits*rows, 1] (f32, scratch) and two launches: part=attend with every
/// tensor in order, the partials in place of O and LSE, and the scalars, then
/// part=combine with (O_part, LSE_part, O, LSE).
void addSplitKvLaunches(Problem &prob, int64_t splits, size_t oTensor, size_t lseTensor);

/// The decode kernels' `-p part=attend|combine`: which of the two kernels of a
/// split-KV decode to compile.
KernelParam splitKvPartParam();

// ---- The double-precision reference the attention kernels share.

/// The keys one query row attends to.
struct RowKeys {
  int64_t count = 0;
  std::function<bool(int64_t)> visible;          ///< not masked out
  std::function<const double *(int64_t)> k, v;   ///< key j's K and V rows
};

/// How the tolerance of attendRow is derived, printed with every --run.
extern const char *const kToleranceRule;

/// The unit roundoff of a 16-bit type: 2^-8 (bf16), 2^-11 (f16).
double unitRoundoff(DType t);

/// One query row of attention in double precision with its derived tolerance
/// (the rule in Attention.cpp): scores over `D` values of q and k_j, `out` and
/// `outTol` get `valueDim` values (0: D) of softmax-weighted V; a row that sees
/// no key gives O = 0, LSE = -inf. `splits`: split-KV partials combined by
/// LSE. `extraRoundings`: f32 scalings of S or O beyond the kernel's two.
void attendRow(const double *q, int64_t D, double scale, double uIn, int64_t blockN, const RowKeys &keys,
               double *out, double *outTol, double &lse, double &lseTol, int64_t splits = 1, int64_t valueDim = 0,
               int64_t extraRoundings = 0);

} // namespace tilec::kernels
