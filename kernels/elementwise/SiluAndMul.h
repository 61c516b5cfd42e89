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
/// wide as I's divisibility allows). With `fp8Out`, vLLM's fused
/// silu_and_mul and static fp8 quantisation: out is fp8 (`fp8Type`: AMD's
/// e4m3fnuz, or OCP e4m3 on NVIDIA), the product times inv_scale, rounded to
/// nearest even and saturated to +-240 (OCP: +-448). Each workgroup takes
/// `rows` tokens, the columns in chunks of `chunk`.
/// Arguments: X (dtype), out (dtype or fp8), [inv_scale] (f32).
struct SiluAndMulConfig {
  DType dtype = DType::bf16;   ///< bf16, f16 or f32; arithmetic in f32
  int64_t intermediate = 14336;
  bool fp8Out = false;         ///< out in fp8, scaled by the inv_scale argument
  DType fp8Type = DType::fp8e4m3fnuz;  ///< fp8Out's format: fp8e4m3fnuz or e4m3 (OCP)
  int64_t rows = 4;
  int64_t chunk = 512;
  int waves = 4;
};

std::string siluAndMulKernelName(const SiluAndMulConfig &config);
Result<Kernel> buildSiluAndMul(const SiluAndMulConfig &config);
/// `scale`: the fp8 output's (ignored without fp8Out).
Problem siluAndMulProblem(const SiluAndMulConfig &config, int64_t tokens, double scale = 1.0);
KernelInfo siluAndMulKernelInfo();

} // namespace tilec::kernels
