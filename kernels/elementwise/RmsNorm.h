// RMSNorm, written in the DSL with register tiles in the
// blocked layout (docs/dsl-elementwise.md).
#pragma once

#include "Registry.h"

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <string>

namespace tilec::kernels {

/// RMSNorm over the rows of X [tokens, hidden]:
///   Y[t, :] = X[t, :] / sqrt(mean(X[t, :]^2) + eps) * W[0, :]
/// with W a [1, hidden] tensor; with `residual`, vLLM's fused_add_rms_norm:
/// S = X + R is written back to R (rounded to dtype) and normalised instead
/// of X. With `fp8Out`, vLLM's rms_norm_static_fp8_quant: Y is fp8 (`fp8Type`:
/// AMD's e4m3fnuz, or OCP e4m3 on NVIDIA), the normalised value times
/// inv_scale, rounded to nearest even and saturated to +-240 (OCP: +-448). Each workgroup takes `rows` tokens, the hidden dimension in
/// chunks of `chunk` columns (two passes: the sum of squares, then the output).
/// With `fp8Scale` Token (and fp8Out), vLLM's rms_norm_dynamic_per_token_quant
/// instead of the static scale: each token's scale is max |y| / fp8 max (at
/// least 1 / (512 fp8 max), so that a row of zeros divides by no zero),
/// written to token_scale [tokens, 1] (f32), and Y = y / scale in fp8; rows
/// longer than a chunk take three passes (the sum of squares, the row's
/// maximum, the output). With Group, the same per 1 x 128 group of a row
/// (DeepSeek-style block quantisation; hidden a multiple of 128): scales in
/// group_scale [tokens, hidden / 128], the output in a second pass of
/// 128-column steps.
/// Arguments: X, [R,] W (dtype), Y (dtype or fp8), [token_scale |
/// group_scale (f32),] eps, inv_h = 1 / hidden, [inv_scale] (f32, static
/// scales).
/// Where an fp8 output's scale comes from: the inv_scale argument, or the
/// kernel computes one per token or per 1 x 128 group (and writes them).
enum class Fp8Scale { Static, Token, Group };

/// The columns that share a scale with Fp8Scale::Group.
inline constexpr int64_t kFp8ScaleGroup = 128;

struct RmsNormConfig {
  DType dtype = DType::bf16;  ///< bf16, f16 or f32; arithmetic in f32
  int64_t hidden = 4096;      ///< sets the tensors' divisibility (16-byte runs where it allows)
  bool residual = false;
  bool fp8Out = false;        ///< Y in fp8, scaled by the inv_scale argument
  DType fp8Type = DType::fp8e4m3fnuz;  ///< fp8Out's format: fp8e4m3fnuz or e4m3 (OCP)
  Fp8Scale fp8Scale = Fp8Scale::Static;  ///< fp8Out's scales: the argument, or computed
  int64_t rows = 4;           ///< tokens per workgroup
  int64_t chunk = 512;        ///< columns per step
  int waves = 4;
};

std::string rmsNormKernelName(const RmsNormConfig &config);
Result<Kernel> buildRmsNorm(const RmsNormConfig &config);
/// `scale`: the fp8 output's (ignored without fp8Out).
Problem rmsNormProblem(const RmsNormConfig &config, int64_t tokens, double eps, double scale = 1.0);
KernelInfo rmsNormKernelInfo();

} // namespace tilec::kernels
