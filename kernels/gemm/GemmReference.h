// The GEMM problems with their CPU references in double and error bounds
// (GemmReference.cpp, GemmStrided.cpp): what `tilec --run` and the tests
// check the kernels of Gemm.h against.
#pragma once

#include "Registry.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace tilec::kernels {

/// Leading dimensions and batch of a strided GEMM problem (GemmConfig::strided),
/// in elements and rows; 0 for a leading dimension means tight (the operand's
/// inner extent), and `tight` batch strides are one matrix's rows.
struct GemmStrides {
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t batch = 1;
  static constexpr int64_t tight = -1;
  int64_t batchStrideA = tight, batchStrideB = tight, batchStrideC = tight;
};

/// How a GEMM problem's operands are stored (GemmConfig::transA, transB).
struct GemmLayout {
  bool transA = false, transB = false;
};

/// The problem C[M,N] = A[M,K] @ B[K,N] with its CPU reference (double); A
/// and B stored as `layout` says.
Problem gemmProblem(int64_t M, int64_t N, int64_t K, DType in, DType out, GemmLayout layout = {});

/// The batched problem C[b] = A[b] @ B[b] of GemmConfig::strided: the
/// tensors are the padded buffers (filled at random, padding included; C's
/// padding starts as a pattern the reference expects unchanged), then the
/// i32 scalars M, N, K, batch and the batch strides after the `firstScalar`
/// arguments before them. With fp8 scales (`scales`), the scales come first.
Result<Problem> gemmStridedProblem(int64_t M, int64_t N, int64_t K, DType in, DType out, GemmLayout layout,
                                   const GemmStrides &strides, std::optional<std::pair<float, float>> scales);

/// The fp8 problem C[M,N] = scale_a * scale_b * (A[M,K] @ B[K,N]), A and B
/// of type `in`: e4m3fnuz (dtype=fp8), e5m2fnuz (dtype=bf8) or the OCP e4m3
/// and e5m2; the scales are f32 kernel arguments 3 and 4 (after C).
Problem gemmFp8Problem(int64_t M, int64_t N, int64_t K, DType out, float scaleA, float scaleB,
                       DType in = DType::fp8e4m3fnuz, GemmLayout layout = {});

/// The block-scaled fp8 problem (GemmConfig::Scaling::Block):
/// C[i,j] = sum over k blocks b of scale_a[i,b] * scale_b[j/128,b] *
/// (A[i, 128b : 128b+128] @ B[128b : 128b+128, j]), A and B of type `in`;
/// the scale tensors scale_a [M, ceil(K/128)] and scale_b [ceil(N/128),
/// ceil(K/128)] follow C, filled at random like the operands.
Problem gemmBlockScaledProblem(int64_t M, int64_t N, int64_t K, DType out, DType in, GemmLayout layout = {});

} // namespace tilec::kernels
