// The strided, batched GEMM problem (GemmConfig::strided): padded operand
// buffers, a batch, and a CPU reference that solves each matrix of the batch
// as the tight problem of GemmReference.cpp.
#include "gemm/GemmReference.h"

namespace tilec::kernels {

Result<Problem> gemmStridedProblem(int64_t M, int64_t N, int64_t K, DType in, DType out, GemmLayout layout,
                                   const GemmStrides &strides, std::optional<std::pair<float, float>> scales) {
  const int64_t rowsA = layout.transA ? K : M, innerA = layout.transA ? M : K;
  const int64_t rowsB = layout.transB ? N : K, innerB = layout.transB ? K : N;
  const int64_t lda = strides.lda ? strides.lda : innerA, ldb = strides.ldb ? strides.ldb : innerB,
                ldc = strides.ldc ? strides.ldc : N, batch = strides.batch;
  auto rowsOr = [](int64_t stride, int64_t rows) { return stride == GemmStrides::tight ? rows : stride; };
  const int64_t sa = rowsOr(strides.batchStrideA, rowsA), sb = rowsOr(strides.batchStrideB, rowsB),
                sc = rowsOr(strides.batchStrideC, M);
  if (lda < innerA || ldb < innerB || ldc < N)
    return Error{"kernel 'gemm': a leading dimension is less than its operand's inner extent (lda " +
                 std::to_string(lda) + " for " + std::to_string(innerA) + ", ldb " + std::to_string(ldb) + " for " +
                 std::to_string(innerB) + ", ldc " + std::to_string(ldc) + " for " + std::to_string(N) + ")"};
  if (batch > 1 && sc < M)
    return Error{"kernel 'gemm': batch_stride_c " + std::to_string(sc) + " is less than M = " + std::to_string(M) +
                 ": the batch's C matrices would overlap"};
  // --run passes the i32 arguments through ScalarSpec's float: exact up to 2^24.
  for (int64_t v : {M, N, K, batch, sa, sb, sc})
    if (v > (int64_t(1) << 24))
      return Error{"kernel 'gemm': --run of the strided kernel takes sizes and batch strides up to 2^24, got " +
                   std::to_string(v)};
  Problem base = scales ? gemmFp8Problem(M, N, K, out, scales->first, scales->second, in)
                        : gemmProblem(M, N, K, in, out);  // one tight nn matrix of the batch
  Problem prob;
  auto bufRows = [&](int64_t rows, int64_t stride) { return (batch - 1) * stride + rows; };
  prob.tensors = {{"A", in, {bufRows(rowsA, sa), lda}},
                  {"B", in, {bufRows(rowsB, sb), ldb}},
                  {"C", out, {bufRows(M, sc), ldc}, /*output=*/true}};
  // C starts as small integers (exact in f32 and bf16), which its padding and
  // the rows between the batch's matrices must keep.
  std::vector<double> &c0 = prob.tensors[2].values;
  c0.resize(bufRows(M, sc) * ldc);
  for (size_t i = 0; i < c0.size(); ++i)
    c0[i] = double(int64_t(i % 7) - 3);
  prob.scalars = base.scalars;  // the fp8 scales at 3 and 4
  size_t position = 3 + prob.scalars.size();
  for (auto [name, value] : {std::pair{"M", M}, {"N", N}, {"K", K}, {"batch", batch}, {"batch_stride_a", sa},
                             {"batch_stride_b", sb}, {"batch_stride_c", sc}})
    prob.scalars.push_back({name, float(value), position++, /*i32=*/true});
  prob.toleranceRule = base.toleranceRule + "; C's padding unchanged (tolerance 0)";
  prob.reference = [=, reference = base.reference](const std::vector<std::vector<double>> &v,
                                                    std::vector<std::vector<double>> &expected,
                                                    std::vector<std::vector<double>> &tolerance) {
    expected = {v[2]};
    tolerance = {std::vector<double>(v[2].size(), 0.0)};
    for (int64_t b = 0; b < batch; ++b) {
      // Matrix b as one tight nn problem: gather, solve, scatter.
      std::vector<std::vector<double>> one = {std::vector<double>(M * K), std::vector<double>(K * N),
                                              std::vector<double>(M * N, 0.0)};
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k)
          one[0][i * K + k] = v[0][b * sa * lda + (layout.transA ? k * lda + i : i * lda + k)];
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j)
          one[1][k * N + j] = v[1][b * sb * ldb + (layout.transB ? j * ldb + k : k * ldb + j)];
      std::vector<std::vector<double>> e, t;
      reference(one, e, t);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          expected[0][(b * sc + i) * ldc + j] = e[0][i * N + j];
          tolerance[0][(b * sc + i) * ldc + j] = t[0][i * N + j];
        }
    }
  };
  return prob;
}

} // namespace tilec::kernels
