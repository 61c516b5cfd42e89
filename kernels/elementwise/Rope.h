// Rotary position embedding (RoPE) on the queries and keys, in place, written
// in the DSL with register tiles in the blocked layout
// (docs/dsl-elementwise.md).
#pragma once

#include "Registry.h"

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <string>

namespace tilec::kernels {

/// vLLM's rotary_embedding with rot_dim = head_dim: Q [tokens, heads *
/// head_dim] and K [tokens, kv_heads * head_dim] are rotated in place by the
/// angles of each token's position, read from a cache [max_position,
/// head_dim] whose row p holds cos(p theta_i) for i < head_dim / 2, then
/// sin(p theta_i). With c = cos, s = sin of pair i:
///   neox (rotate halves):   x[i], x[i + D/2]  ->  x[i] c - x[i + D/2] s, x[i + D/2] c + x[i] s
///   gptj (rotate pairs):    x[2i], x[2i + 1]  ->  x[2i] c - x[2i + 1] s, x[2i + 1] c + x[2i] s
/// The kernel sees Q and K as [tokens * heads, head_dim] (the same memory),
/// the cache as [max_position, head_dim] and, for gptj, every one of them as
/// a column of pairs. Each workgroup takes `tokens_per_group` tokens, one
/// after the other. Arguments: positions (i32 [tokens]), Q, K, cache.
struct RopeConfig {
  DType dtype = DType::bf16;  ///< Q, K and the cache; arithmetic in f32
  int64_t heads = 32;
  int64_t kvHeads = 8;
  int64_t headDim = 128;      ///< even; rotary over all of it
  bool neox = true;           ///< false: GPT-J's interleaved pairs
  int64_t tokensPerGroup = 4;
  int waves = 4;
};

std::string ropeKernelName(const RopeConfig &config);
Result<Kernel> buildRope(const RopeConfig &config);
Problem ropeProblem(const RopeConfig &config, int64_t tokens, int64_t maxPosition);
KernelInfo ropeKernelInfo();

} // namespace tilec::kernels
