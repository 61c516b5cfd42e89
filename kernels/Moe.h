// Mixture-of-experts kernels, written in the DSL (docs/moe.md).
#pragma once

#include "Registry.h"

#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <cstdint>
#include <string>

namespace tilec::kernels {

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
/// `tilec --run`'s problem: `logits` fixed (empty: random in [-1, 1), rounded
/// to the dtype, so that equal logits, and ties, occur).
Problem moeGateProblem(const MoeGateConfig &config, int64_t tokens, std::vector<double> logits = {});

KernelInfo moeGateKernelInfo();

} // namespace tilec::kernels
