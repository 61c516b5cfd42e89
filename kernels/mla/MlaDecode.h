// Multi-head latent attention (MLA, DeepSeek-V2/V3) at decode time over a
// paged latent cache, in the tilec DSL (see MlaDecode.cpp and docs/mla.md).
#pragma once

#include "Registry.h"

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tilec::kernels {

/// The latent cache's widths (DeepSeek-V2/V3): kv_lora_rank values of the
/// compressed latent, which are also the values, then the RoPE part of the key.
inline constexpr int64_t kMlaLatentDim = 512;
inline constexpr int64_t kMlaRopeDim = 64;
inline constexpr int64_t kMlaKeyDim = kMlaLatentDim + kMlaRopeDim;  ///< 576: the width of a score's dot product

/// One compiled mla_decode variant. Batch, context lengths and the block table
/// are run-time values.
struct MlaDecodeConfig {
  DType dtype = DType::bf16;    ///< Q and O (bf16); scores, softmax, LSE and partials in f32
  DType kvDtype = DType::bf16;  ///< the latent cache: bf16, or fp8e4m3fnuz with a per-tensor scale (gfx942)
  int64_t heads = 16;           ///< query heads, all sharing the one latent per token
  int64_t blockH = 16;          ///< query heads per workgroup: the M side of the matrix instructions
  int64_t blockN = 32;          ///< tokens per key step (divides blockSize)
  int64_t blockSize = 64;       ///< tokens per cache block
  int waves = 1;                ///< wavefronts per workgroup
  int64_t valueSplit = 1;       ///< workgroups sharing the 512 value columns of one head group (each computes S)
  int64_t latentChunk = 128;    ///< latent columns per LDS tile, O accumulator and matrix product (divides 512)
  /// Software-pipelining depth of the key loop: with 2 or more, the next
  /// steps' cache rows (through the block table) are copied during a step
  /// (a bf16 cache; an fp8 one is converted through registers on its way).
  int stages = 1;
  /// Split-KV: each sequence's key steps are shared among this many workgroups,
  /// whose f32 partials buildSplitKvCombine merges. 1: one kernel, no partials.
  int64_t splits = 1;
  enum class Part { Attend, Combine } part = Part::Attend;  ///< with splits > 1, the kernel to build
};

/// "mla_decode_bf16_kvbf16_h16_bh16_bn32_bs64_w1" (+ "_split4" / "_combine4").
std::string mlaDecodeKernelName(const MlaDecodeConfig &config);

/// LDS bytes of one workgroup of the attend kernel (before the allocator's row
/// padding): the query heads' latent and RoPE rows, one key step of the cache
/// in Q's type, and P.
int64_t mlaDecodeLdsBytes(const MlaDecodeConfig &config);

/// Kernel arguments, in order: Q [batch*heads, 576] (the absorbed query: 512
/// latent values, then 64 RoPE values; row b*heads + h), KV_cache
/// [num_blocks*block_size, 576] (vLLM's [num_blocks, block_size, 576] MLA
/// cache), O [batch*heads, 512], LSE [batch*heads, 1] f32, block_tables
/// [batch, max_blocks] i32, context_lens [batch] i32, softmax_scale f32, and
/// with an fp8 cache kv_scale f32 (the cache holds latent / kv_scale). With
/// splits > 1, O and LSE are the f32 partials [splits*batch*heads, 512] and
/// [splits*batch*heads, 1], and part=combine builds buildSplitKvCombine.
Result<Kernel> buildMlaDecode(const MlaDecodeConfig &config);

/// The problem for these context lengths with a shuffled block table from
/// `seed`, and its double-precision reference.
Problem mlaDecodeProblem(const MlaDecodeConfig &config, const std::vector<int64_t> &contextLens, double scale,
                         double kvScale, uint64_t seed);

/// The registry entry (`tilec --kernel=mla_decode`).
KernelInfo mlaDecodeKernelInfo();

} // namespace tilec::kernels
