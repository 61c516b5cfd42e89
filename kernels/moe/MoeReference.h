// The MoE problems with their CPU references in double and error bounds
// (MoeReference.cpp): what `tilec --run` and the tests check the kernels of
// Moe.h against, and the host token alignment.
#pragma once

#include "moe/Moe.h"

#include "Registry.h"

#include <cstdint>
#include <random>
#include <vector>

namespace tilec::kernels {

/// `tilec --run`'s problem: `logits` fixed (empty: random in [-1, 1), rounded
/// to the dtype, so that equal logits, and ties, occur).
Problem moeGateProblem(const MoeGateConfig &config, int64_t tokens, std::vector<double> logits = {});

/// The token alignment the expert kernels consume, computed on the host from
/// topk ids [tokens * k] (row-major [tokens, k]).
struct MoeAlignment {
  std::vector<int64_t> sortedTokenIds;  ///< [maxPadded]: token of each sorted position, `tokens` for padding
  std::vector<int64_t> blockExperts;    ///< [maxPadded / blockM]: expert of each block, -1 past the total
  std::vector<int64_t> positions;       ///< [k * tokens]: sorted position of pair (t, j) at j * tokens + t
  int64_t paddedTotal = 0;              ///< sum over experts of their pair counts rounded up to blockM
};
/// Pairs grouped by expert, in (j, t) order inside a group (choice j of every
/// token, then choice j + 1: the order the alignment kernel visits), each expert's segment
/// padded to a multiple of blockM; maxPadded = tokens * k + experts * (blockM - 1),
/// rounded up to blockM (the bound inference engines allocate).
MoeAlignment alignTokens(const std::vector<int64_t> &topkIds, int64_t tokens, int64_t topk, int64_t experts,
                         int64_t blockM);

/// The gate in double: top-k by logit (ties: lowest index), softmax weights
/// (renormalised if asked) and their tolerances (moeGateProblem derives them).
struct GateReference {
  std::vector<int64_t> ids;
  std::vector<double> weights, weightTol;
};
GateReference gateReference(const MoeGateConfig &c, int64_t tokens, const std::vector<double> &x);

/// Top-k ids for `tokens`: k distinct experts each, uniformly, or (one) every
/// token's first choice expert experts/2.
std::vector<int64_t> routeTokens(int64_t tokens, int64_t experts, int64_t topk, bool oneExpert, std::mt19937_64 &rng);

/// The experts' shapes, for expertsReference.
struct ExpertShape {
  int64_t tokens, topk, hidden, intermediate;
  DType dtype;
};

/// out[t] = sum_j w[t, j] expert_{ids[t, j]}(x[t]) in double, and the error
/// bound of the three kernels (moeExpertsProblem derives it); weightTol bounds
/// the error of the weights (0 when they are exact inputs).
void expertsReference(const ExpertShape &s, const std::vector<double> &x, const std::vector<double> &w13,
                      const std::vector<double> &w2, const std::vector<int64_t> &ids,
                      const std::vector<double> &weights, const std::vector<double> &weightTol,
                      std::vector<double> &out, std::vector<double> &tol);

/// The tolerance rule of expertsReference's bound, as `tilec --run` prints it.
std::string expertsToleranceRule(DType dtype);

/// The expert kernels' problem: `tokens` routed to `experts` (Routing), the
/// hidden and intermediate sizes, and the kernels' configuration.
struct MoeExpertsProblemConfig {
  MoeExpertsConfig kernels;
  int64_t tokens = 64, experts = 8, hidden = 128, intermediate = 256;
  enum class Routing { Random, OneExpert } routing = Routing::Random;
};
Problem moeExpertsProblem(const MoeExpertsProblemConfig &c, uint64_t seed);

} // namespace tilec::kernels
