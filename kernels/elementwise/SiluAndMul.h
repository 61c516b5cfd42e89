// SiLU-and-multiply (the gated activation of SwiGLU MLPs), written in the DSL
// with register tiles in the blocked layout (docs/dsl-elementwise.md).
#pragma once

#include "Registry.h"

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <string>

namespace tilec::kernels {

/// vLLM's silu_and_mul: out[t, j] = silu(X[t, j]) * X[t, I + j] for X
/// [tokens, 2 I] (gate half, then up half) and out [tokens, I]. I is part of
/// the kernel (the up half's column offset: a constant keeps its loads as
/// wide as I's divisibility allows). Each workgroup takes `rows` tokens, the
/// columns in chunks of `chunk`.
struct SiluAndMulConfig {
  DType dtype = DType::bf16;   ///< bf16, f16 or f32; arithmetic in f32
  int64_t intermediate = 14336;
  int64_t rows = 4;
  int64_t chunk = 512;
  int waves = 4;
};

std::string siluAndMulKernelName(const SiluAndMulConfig &config);
Result<Kernel> buildSiluAndMul(const SiluAndMulConfig &config);
Problem siluAndMulProblem(const SiluAndMulConfig &config, int64_t tokens);
KernelInfo siluAndMulKernelInfo();

} // namespace tilec::kernels
