// GEMM C = A @ B in the tilec DSL: its configuration and builder (Gemm.cpp
// gives the tile configuration). Its problems and CPU references are in
// GemmReference.h, its registry entry in GemmEntry.h.
#pragma once

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <string>

namespace tilec::kernels {

/// One compiled GEMM variant. Problem sizes (M, N, K) are not part of it: they
/// are read from the tensors at run time.
struct GemmConfig {
  /// How A and B are stored (`-p layout=nn|nt|tn|tt`, A's letter first): n
  /// row-major as written, A [M, K] and B [K, N]; t transposed, A stored
  /// [K, M] and B [N, K] (nn.Linear's weight: C = A @ W^T is layout nt).
  bool transA = false;
  bool transB = false;
  /// B's LDS tile: N x K (k contiguous, where every target reads the operand
  /// with wide LDS reads; B stored [K, N] is transposed on the way in) or
  /// K x N (as B [K, N] is stored; NVIDIA reads it with ldmatrix.trans, and
  /// cp.async can move it). A's tile is always M x K.
  enum class BTile { NK, KN } bTile = BTile::NK;
  DType dtype = DType::bf16; ///< A and B (bf16, f16, fp8e4m3fnuz, fp8e5m2fnuz, e4m3 or e5m2)
  DType out = DType::f32;    ///< C (f32 or bf16); accumulation is always f32
  int64_t blockM = 128;      ///< rows of C per workgroup
  int64_t blockN = 128;      ///< columns of C per workgroup
  int64_t blockK = 32;       ///< depth of one k step
  int waves = 4;             ///< wavefronts per workgroup
  int stages = 2;            ///< software-pipelining depth of the k loop
  /// LDS layout of the A and B tiles: the compiler's choice (bank-conflict
  /// free where its model finds one) or plain row-major (for comparison).
  enum class LdsLayoutChoice { Auto, Naive } ldsLayout = LdsLayoutChoice::Auto;
  /// Wavefront schedule of the k loop (tilec-schedule-waves); all off by default.
  /// pingPong needs an even wave count and stages >= 3.
  dsl::Schedule schedule = {};
  /// Order of the output tiles over the workgroups (grouped rows for L2
  /// reuse; XCD remap for gfx942's chiplets).
  int64_t groupM = 1;
  int64_t xcds = 1;
  /// What the kernel may assume of the inner (contiguous) extent of A (K for
  /// layout n, M for t) and of B (N for n, K for t), and strided of their
  /// leading dimensions
  /// (dsl::TensorOptions::divisibility): a power of two; 0 = 16 bytes' worth
  /// of elements (8 for bf16/f16, 16 for fp8), which lets the A and B tiles
  /// move 16 bytes per global load. Launches refuse tensors that break it.
  int64_t divisibilityA = 0;
  int64_t divisibilityB = 0;
  /// How an 8-bit A and B are scaled (`-p scaling`): Tensor, one f32 per
  /// operand (the arguments scale_a, scale_b); Block, the DeepSeek-V3 recipe:
  /// tensors scale_a [M, ceil(K/128)] (one f32 per 1 x 128 group of A's rows)
  /// and scale_b [ceil(N/128), ceil(K/128)] (one per 128 x 128 block of B, as
  /// B [N, K] is indexed whatever its storage), both row-major, after C. Each
  /// k step's product is scaled before it joins the f32 accumulator, so
  /// block_k divides 128 and block_n divides 128 (one scale of B per
  /// workgroup and k step).
  enum class Scaling { Tensor, Block } scaling = Scaling::Tensor;
  /// Split-K (`-p split_k=S`, S > 1; for skinny problems, M <= 64): a grid of
  /// S workgroups per C tile, slice s summing its share of the k steps into
  /// f32 `partials` [S * M, N] (part Partial); then part Reduce sums the S
  /// slices in the fixed order s = 0, 1, ... (deterministic: the same bits
  /// every run, no atomics), applies the fp8 scales and writes C.
  int64_t splitK = 1;
  enum class Part { Partial, Reduce } part = Part::Partial;
  /// Matrix instructions: the compiler's choice (sm_90a: warpgroup wgmma where
  /// the tile allows), wave-level only (mma.sync, for comparison) or wgmma only.
  dsl::MatrixScope instr = dsl::MatrixScope::Auto;
  /// Operands with leading-dimension strides and a batch (`-p strided`): A,
  /// B and C are the row-major buffers that hold them, [rows, lda], [rows,
  /// ldb], [rows, ldc] (a buffer's inner extent is its operand's leading
  /// dimension, in elements), followed by the i32 arguments M, N, K, batch,
  /// batch_stride_a, batch_stride_b, batch_stride_c (batch strides in rows of
  /// the buffer; 0 shares one matrix over the batch). Matrix b of the batch
  /// is the window at row b * batch_stride; grid axis 2 runs over the batch.
  /// Loads and stores stay inside each window, so padding columns are neither
  /// read nor written. divisibilityA and B cover the buffers' inner extents
  /// (the leading dimensions) and the i32 sizes bounding the windows' rows
  /// (K for A of layout n, M for t; N for B of layout n, K for t): the
  /// launch checks both, and 1 takes any strides and alignment.
  bool strided = false;
};

/// The divisibility a GEMM kernel for an inner extent `extent` of A or B may
/// assume: the largest power of two dividing it, up to 16 bytes of `dtype`.
int64_t gemmDivisibility(int64_t extent, DType dtype);

/// What an operand's rows are known multiples of (pass it to
/// gemmDivisibility): its inner extent; strided, the gcd with its leading
/// dimension `ld` (0: tight); at most `cap` (-p divisibility; 0: auto).
int64_t gemmRowMultiple(int64_t inner, int64_t ld, int64_t cap);

/// "gemm_bf16_f32_128x128x32_w4_s2": the kernel symbol encodes the configuration.
std::string gemmKernelName(const GemmConfig &config);

/// LDS the A and B tiles take once the k loop is pipelined `stages` deep.
int64_t gemmLdsBytes(const GemmConfig &config);

/// The k extent one block scale covers (GemmConfig::Scaling::Block), in both
/// operands: 1 x 128 groups of A's rows, 128 x 128 blocks of B.
inline constexpr int64_t kGemmScaleBlock = 128;

/// Why scaling=block does not apply to these operands ("" where it does): it
/// needs 8-bit ones, contiguous and without split-K. The build and the
/// problem of `gemm` both refuse with it.
std::string gemmBlockScalingRefusal(DType dtype, bool splitK, bool strided);

Result<Kernel> buildGemm(const GemmConfig &config);

} // namespace tilec::kernels
