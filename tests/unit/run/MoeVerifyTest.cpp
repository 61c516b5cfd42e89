// The MoE kernels (kernels/moe/Moe.cpp), run in the CPU wavefront emulator on
// every target and verified against double-precision references with the
// tolerances their problems derive (moeGateProblem: ids exact, weights within
// (2 X + 6 + E + K) 2^-24 relative). Experts 8 and 64 (and 128), top-k 1, 2
// and 8, tokens 1, 7, 64 and 333, ties broken to the lowest expert, every
// token routed to one expert. Zero out-of-bounds accesses and races each time.
#include "moe/Moe.h"
#include "moe/MoeReference.h"
#include "Run.h"
#include "RunChecks.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

using runcheck::Case;
using runcheck::caseNames;
using runcheck::overTargets;

const Case kGateCases[] = {
    {"Tokens1E8K2", {{"tokens", "1"}}},
    {"Tokens7E8K1NoRenorm", {{"tokens", "7"}, {"topk", "1"}, {"renormalize", "0"}}},
    {"Tokens64E64K8", {{"tokens", "64"}, {"experts", "64"}, {"topk", "8"}}},
    {"Tokens333E64K2F16", {{"tokens", "333"}, {"experts", "64"}, {"topk", "2"}, {"dtype", "f16"}}},
    {"Tokens333E8K8F32", {{"tokens", "333"}, {"topk", "8"}, {"dtype", "f32"}, {"renormalize", "0"}}},
    {"Tokens100E128K8", {{"tokens", "100"}, {"experts", "128"}, {"topk", "8"}}},
};

/// A multi-kernel problem verified, every kernel launched without scratch.
void expectChainVerified(const char *kernel, const KernelParams &p, const std::string &arch, size_t kernels) {
  Result<RunResult> r = runAndVerify(*findKernel(kernel), p, runcheck::emulatorOn(arch, 5));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  ASSERT_EQ(r->kernels.size(), kernels);
  for (const CompiledKernel &k : r->kernels)
    EXPECT_EQ(k.report.scratchBytes, 0) << k.name;
}

void expectVerified(const KernelInfo &info, const KernelParams &p, const std::string &arch) {
  Result<RunResult> r = runAndVerify(info, p, runcheck::emulatorOn(arch, 11));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  // No scratch, except 128 experts on gfx1151: wave32 lanes hold twice the
  // values of wave64 ones, and the five 64x128 tiles then exceed 256 VGPRs.
  auto e = p.find("experts");
  if (!(arch == "gfx1151" && e != p.end() && e->second == "128"))
    EXPECT_EQ(r->kernel.report.scratchBytes, 0);
}

class MoeGateVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(MoeGateVerify, MatchesReference) {
  const auto &[arch, index] = GetParam();
  expectVerified(*findKernel("moe_gate"), kGateCases[index].params, arch);
}

INSTANTIATE_TEST_SUITE_P(Emulator, MoeGateVerify, overTargets(kGateCases), caseNames(kGateCases));

/// moe_gate's registry entry with fixed logits instead of random ones.
KernelInfo gateWithLogits(const MoeGateConfig &c, int64_t tokens, std::vector<double> logits) {
  KernelInfo info = *findKernel("moe_gate");
  info.problem = [=](const KernelParams &) -> Result<Problem> { return moeGateProblem(c, tokens, logits); };
  return info;
}

KernelParams paramsOf(const MoeGateConfig &c, int64_t tokens) {
  return {{"tokens", std::to_string(tokens)},
          {"experts", std::to_string(c.experts)},
          {"topk", std::to_string(c.topk)},
          {"renormalize", c.renormalize ? "1" : "0"},
          {"dtype", dtypeName(c.dtype)}};
}

// Equal logits: the lowest experts win. Token t has its maximum on experts
// t % 5, t % 5 + 3 and t % 5 + 7 (three-way tie), the rest are equal too.
TEST(MoeGateTies, LowestExpertWins) {
  MoeGateConfig c;
  c.experts = 16;
  c.topk = 4;
  const int64_t tokens = 37;
  std::vector<double> x(tokens * c.experts, 0.25);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t e : {t % 5, t % 5 + 3, t % 5 + 7})
      x[t * c.experts + e] = 0.75;
  for (const char *arch : {"gfx942", "gfx1151"})
    expectVerified(gateWithLogits(c, tokens, x), paramsOf(c, tokens), arch);
}

// Every token prefers expert 5 by far (the case that sends every token to one
// expert downstream).
TEST(MoeGateSkew, EveryTokenPicksOneExpertFirst) {
  MoeGateConfig c;
  c.experts = 64;
  c.topk = 2;
  const int64_t tokens = 64;
  std::vector<double> x(tokens * c.experts);
  for (int64_t i = 0; i < tokens * c.experts; ++i)
    x[i] = static_cast<double>((i * 37) % 101) / 128.0 - 0.5;  // exact in bf16
  for (int64_t t = 0; t < tokens; ++t)
    x[t * c.experts + 5] = 8.0;
  expectVerified(gateWithLogits(c, tokens, x), paramsOf(c, tokens), "gfx942");
}

// The check can fail: a kernel that does not renormalise, verified against the
// renormalising reference, must mismatch (the k weights sum to less than 1).
TEST(MoeGateNegative, UnnormalisedKernelFailsRenormalisedReference) {
  MoeGateConfig renorm, plain;
  plain.renormalize = false;
  const KernelInfo &info = *findKernel("moe_gate");
  KernelInfo mixed = info;
  mixed.build = [&](const KernelParams &) { return buildMoeGate(plain); };
  Result<RunResult> r = runAndVerify(mixed, paramsOf(renorm, 40), runcheck::emulatorOn("gfx942", 3));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GT(r->mismatches, 0);
  EXPECT_FALSE(r->passed());
}

// ---- Expert GEMMs and combine (moe_experts: gate_up, down, combine) ------------

const Case kExpertCases[] = {
    {"Tokens1E8K2", {{"tokens", "1"}}},
    {"Tokens7E64K8F16", {{"tokens", "7"}, {"experts", "64"}, {"topk", "8"}, {"dtype", "f16"}}},  // most experts empty
    {"Tokens64E8K1", {{"tokens", "64"}, {"topk", "1"}}},
    {"Tokens333E64AllToOneExpert", {{"tokens", "333"}, {"experts", "64"}, {"topk", "1"}, {"routing", "one"}}},
};

class MoeExpertsVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(MoeExpertsVerify, MatchesReference) {
  const auto &[arch, index] = GetParam();
  expectChainVerified("moe_experts", kExpertCases[index].params, arch, 3);  // gate_up, down, combine
}

INSTANTIATE_TEST_SUITE_P(Emulator, MoeExpertsVerify, overTargets(kExpertCases), caseNames(kExpertCases));

// The larger case: hidden 512, intermediate 1024, 333 tokens over 8 experts, top-2.
TEST(MoeExpertsVerifyLarge, Hidden512Intermediate1024) {
  expectChainVerified("moe_experts", {{"tokens", "333"}, {"hidden", "512"}, {"intermediate", "1024"}}, "gfx942", 3);
}

// The alignment the kernels consume: segments in expert order, pairs in pair
// order inside each, padded to block_m with the sentinel; empty experts take
// no block; every pair's position points back at its token.
TEST(MoeAlignment, SegmentsPaddedPerExpert) {
  // 5 tokens, top-2 over 4 experts; expert 1 gets nothing.
  const std::vector<int64_t> ids = {0, 2, 2, 0, 3, 0, 2, 3, 0, 2};
  MoeAlignment a = alignTokens(ids, 5, 2, 4, 4);
  // In (j, t) order: expert 0: (j0: t0, t4), (j1: t1, t2); expert 2:
  // (j0: t1, t3), (j1: t0, t4); expert 3: (j0: t2), (j1: t3) + 2 sentinels.
  const std::vector<int64_t> sorted = {0, 4, 1, 2, 1, 3, 0, 4, 2, 3, 5, 5};
  EXPECT_EQ(a.paddedTotal, 12);
  ASSERT_GE(a.sortedTokenIds.size(), sorted.size());
  EXPECT_EQ(std::vector<int64_t>(a.sortedTokenIds.begin(), a.sortedTokenIds.begin() + 12), sorted);
  for (size_t i = 12; i < a.sortedTokenIds.size(); ++i)
    EXPECT_EQ(a.sortedTokenIds[i], 5);
  EXPECT_EQ(a.sortedTokenIds.size(), 24u);  // the bound: 10 pairs + 4 experts * 3 padding, rounded up to 4
  EXPECT_EQ(a.blockExperts, (std::vector<int64_t>{0, 2, 3, -1, -1, -1}));
  for (int64_t p = 0; p < 10; ++p)
    EXPECT_EQ(a.sortedTokenIds[a.positions[(p % 2) * 5 + p / 2]], p / 2) << "pair " << p;
}

// ---- Token alignment as a kernel (moe_align): exact against alignTokens -------

const Case kAlignCases[] = {
    {"Tokens1E8K2", {{"tokens", "1"}}},
    {"Tokens7E64K8", {{"tokens", "7"}, {"experts", "64"}, {"topk", "8"}}},  // most experts empty
    {"Tokens64E8K1", {{"tokens", "64"}, {"topk", "1"}}},
    {"Tokens333E64K8", {{"tokens", "333"}, {"experts", "64"}, {"topk", "8"}}},
    {"Tokens333AllToOneExpert", {{"tokens", "333"}, {"experts", "64"}, {"topk", "1"}, {"routing", "one"}}},
    {"Tokens200E5K3Block16", {{"tokens", "200"}, {"experts", "5"}, {"topk", "3"}, {"block_m", "16"}}},
};

class MoeAlignVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(MoeAlignVerify, MatchesHostAlignment) {
  const auto &[arch, index] = GetParam();
  expectVerified(*findKernel("moe_align"), kAlignCases[index].params, arch);
}

INSTANTIATE_TEST_SUITE_P(Emulator, MoeAlignVerify, overTargets(kAlignCases), caseNames(kAlignCases));

// ---- The whole layer (moe: gate, align, gate_up, down, combine) ---------------

const Case kLayerCases[] = {
    {"Tokens1E8K2", {{"tokens", "1"}}},
    {"Tokens7E64K8F16", {{"tokens", "7"}, {"experts", "64"}, {"topk", "8"}, {"dtype", "f16"}}},
    {"Tokens64E8K1NoRenorm", {{"tokens", "64"}, {"topk", "1"}, {"renormalize", "0"}}},
    {"Tokens333E64K2AllToOneExpert", {{"tokens", "333"}, {"experts", "64"}, {"topk", "2"}, {"routing", "one"}}},
    // Rows that are not 16-byte multiples: hidden 100 loads and gathers runs
    // of 4 elements, intermediate 90 of 2 (and Y's f32 rows of 4); one
    // pipelining stage, then three.
    {"Tokens7Hidden100Inter90Stages1", {{"tokens", "7"}, {"hidden", "100"}, {"intermediate", "90"}, {"stages", "1"}}},
    {"Tokens33Hidden72Inter129Stages3", {{"tokens", "33"}, {"hidden", "72"}, {"intermediate", "129"}, {"stages", "3"}}},
};

class MoeLayerVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(MoeLayerVerify, MatchesReference) {
  const auto &[arch, index] = GetParam();
  expectChainVerified("moe", kLayerCases[index].params, arch, 5);  // gate, align, gate_up, down, combine
}

INSTANTIATE_TEST_SUITE_P(Emulator, MoeLayerVerify, overTargets(kLayerCases), caseNames(kLayerCases));

// The larger case: 333 tokens, hidden 512, intermediate 1024, 8 experts, top-2.
TEST(MoeLayerVerifyLarge, Hidden512Intermediate1024) {
  expectChainVerified("moe", {{"tokens", "333"}, {"hidden", "512"}, {"intermediate", "1024"}}, "gfx942", 5);
}

// sm_90a with warpgroup tiles: the gate and up products of the expert loop are
// both left running (wgmma), one step of them in flight into the next with 4
// stages (two groups), while the next steps' weights and gathered rows copy.
TEST(MoeLayerVerifyWgmma, GateAndUpInFlight) {
  expectChainVerified("moe",
                      {{"tokens", "200"}, {"hidden", "256"}, {"intermediate", "512"}, {"block_m", "64"},
                       {"block_n", "128"}, {"block_k", "64"}, {"waves", "4"}, {"stages", "4"}},
                      "sm_90a", 5);
}

// Deterministic mode is the only mode: the combine adds each token's k rows in
// a fixed order, no atomics anywhere; two runs give the same bits.
TEST(MoeLayerDeterminism, TwoRunsAgreeBitwise) {
  Result<RunResult> a = runAndVerify(*findKernel("moe"), {{"tokens", "50"}, {"topk", "4"}}, runcheck::emulatorOn("gfx942", 4));
  Result<RunResult> b = runAndVerify(*findKernel("moe"), {{"tokens", "50"}, {"topk", "4"}}, runcheck::emulatorOn("gfx942", 4));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->passed() && b->passed());
  ASSERT_EQ(a->outputBytes.size(), 1u);
  EXPECT_FALSE(a->outputBytes[0].empty());
  EXPECT_TRUE(a->outputBytes == b->outputBytes);
}

// The check can fail: a combine that adds only each token's first expert,
// verified against the top-2 reference, must mismatch.
TEST(MoeExpertsNegative, CombineOfFirstExpertOnlyFails) {
  const KernelInfo &info = *findKernel("moe_experts");
  KernelInfo mixed = info;
  mixed.build = [&](const KernelParams &p) -> Result<Kernel> {
    KernelParams q = p;
    if (q["part"] == "combine")
      q["topk"] = "1";
    return info.build(q);
  };
  Result<RunResult> r = runAndVerify(mixed, {{"tokens", "40"}}, runcheck::emulatorOn("gfx942", 5));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GT(r->mismatches, 0);
  EXPECT_FALSE(r->passed());
}

} // namespace
