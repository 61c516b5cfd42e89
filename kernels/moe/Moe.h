// Mixture-of-experts kernels, written in the DSL (docs/moe.md): their
// configurations and builders. Their problems and CPU references are in
// MoeReference.h, their registry entries in MoeEntry.h.
#pragma once

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <string>

namespace tilec::kernels {

/// x rounded up to a multiple of m (the padded sizes of the token alignment).
inline int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }


/// Gating: per token, a softmax over the experts' router logits and the top-k
/// experts (ties: the lowest index), their weights optionally renormalised to
/// sum to 1. Arguments: logits [tokens, experts] (dtype), weights [tokens, k]
/// (f32), ids [tokens, k] (i32); column j holds the j-th largest.
struct MoeGateConfig {
  DType dtype = DType::bf16;  ///< logits: bf16, f16 or f32; softmax in f32
  int64_t experts = 8;        ///< 1..256
  int64_t topk = 2;           ///< 1..8, at most experts
  bool renormalize = true;    ///< weights / sum of the k selected
  int waves = 4;              ///< 16 tokens per wave
};

std::string moeGateKernelName(const MoeGateConfig &config);
Result<Kernel> buildMoeGate(const MoeGateConfig &config);

/// The expert computation of an MoE layer, three kernels over the token
/// alignment (sorted token ids padded per expert to block_m with the sentinel
/// `tokens`, one expert id per block, -1 for blocks past the padded total):
///  - gate_up: H[p] = silu(X[s_p] Wg_e^T) * (X[s_p] Wu_e^T) for each sorted
///    position p of a block of expert e, s_p its token (rows of X gathered
///    through the sorted ids, no copy of X); W13 = [experts * 2I, hidden]
///    (per expert: I gate rows, then I up rows); H [P, I] in dtype;
///  - down: Y[p] = H[p] W2_e^T; W2 = [experts * hidden, I]; Y [P, hidden] f32;
///  - combine: out[t] = sum_j w[t, j] Y[pos(t, j)], j = 0..k-1 in order (no
///    atomics: bitwise reproducible); pos = [k * tokens] (pair (t, j) at
///    j * tokens + t), w = [tokens, k] f32; out [tokens, hidden] in dtype.
struct MoeExpertsConfig {
  enum class Part { GateUp, Down, Combine } part = Part::GateUp;
  DType dtype = DType::bf16;  ///< X, W13, W2, H, out (bf16 or f16)
  int64_t topk = 2;           ///< combine: experts per token
  int64_t blockM = 32;        ///< sorted rows per block (the alignment's block size)
  int64_t blockN = 64;
  int64_t blockK = 32;
  int waves = 4;
  /// k-loop pipelining depth of gate_up and down (1: none).
  int stages = 2;
  /// What hidden and intermediate are multiples of, in elements (powers of
  /// two up to 16 bytes; moeDivisibility): the rows of X, W13, W2, H and Y
  /// are then loaded and gathered in runs of that many elements.
  int64_t divisibilityHidden = 1;
  int64_t divisibilityInter = 1;
};

/// The divisibility an expert kernel for a hidden (or intermediate) size of
/// `extent` elements of `dtype` may assume: the largest power of two dividing
/// it, at most 16 bytes of elements.
int64_t moeDivisibility(int64_t extent, DType dtype);

std::string moeExpertsKernelName(const MoeExpertsConfig &config);
Result<Kernel> buildMoeExperts(const MoeExpertsConfig &config);

/// Token alignment as a kernel (one workgroup): from topk ids [tokens, k]
/// (i32) it writes what alignTokens computes: sorted_token_ids [P],
/// block_experts [P / block_m], positions [k * tokens] and total_padded [1]
/// (all i32), P = tokens * k + experts * (block_m - 1) rounded up to block_m.
/// A counting sort: per-expert counts, their block-padded offsets (an
/// exclusive prefix sum over the experts), then each pair's slot = its
/// expert's offset + the pairs of that expert before it, scattered.
struct MoeAlignConfig {
  int64_t experts = 8;  ///< 1..64
  int64_t blockM = 32;  ///< the expert GEMMs' block_m
  int waves = 4;        ///< 16 pairs per wave per step
};

std::string moeAlignKernelName(const MoeAlignConfig &config);
Result<Kernel> buildMoeAlign(const MoeAlignConfig &config);

} // namespace tilec::kernels
