// Row softmax, written in the DSL with register tiles in the blocked layout
// (docs/dsl-elementwise.md).
#pragma once

#include "Registry.h"

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <string>

namespace tilec::kernels {

/// Y[r, :] = softmax(X[r, :]) over rows of any length: each workgroup takes
/// `rows` rows and walks their columns in chunks of `chunk`, keeping a running
/// maximum m and sum l (online softmax: l is rescaled by 2^(m_old - m_new)
/// when the maximum grows), then a second pass writes exp2(s - m) / l,
/// s = x log2(e). Columns past the row's end are masked to -inf.
struct SoftmaxConfig {
  DType dtype = DType::bf16;  ///< bf16, f16 or f32; arithmetic in f32
  int64_t cols = 4096;        ///< sets the tensors' divisibility (16-byte runs where it allows)
  int64_t rows = 4;
  int64_t chunk = 512;
  int waves = 4;
};

std::string softmaxKernelName(const SoftmaxConfig &config);
Result<Kernel> buildSoftmax(const SoftmaxConfig &config);
Problem softmaxProblem(const SoftmaxConfig &config, int64_t rows);
KernelInfo softmaxKernelInfo();

} // namespace tilec::kernels
