// The shipped attention kernels (kernels/attention/), run in the CPU
// wavefront emulator on every target and verified against the double-precision
// reference with the tolerance the problem derives from the data type and the
// sequence length (attentionProblem: P rounded to Q's type dominates, 2^-8
// relative for bf16, 2^-11 for f16). Covers the lengths 1, 17, 128, 257 and one
// 1024 case, 8 heads with 8, 2 and 1 kv heads, head_dim 64 and 128, causal and
// not, sliding windows, ragged packed batches and seq_q != seq_k (rows that see
// no key: O = 0, LSE = -inf); the other head sizes (80, 96, 192, 256 and
// DeepSeek's 192 for Q and K with 128 for V) on short sequences, with each
// target's default tiles for them. Zero out-of-bounds accesses and races each time.
#include "attention/Attention.h"
#include "Run.h"
#include "RunChecks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

using runcheck::Case;
using runcheck::caseNames;
using runcheck::overTargets;

const Case kCases[] = {
    {"Seq1", {{"seq_q", "1"}, {"head_dim", "128"}}},
    {"Seq17CausalGqa2D64", {{"seq_q", "17"}, {"causal", "1"}, {"kv_heads", "2"}, {"head_dim", "64"}}},
    {"Seq128MqaD128", {{"seq_q", "128"}, {"kv_heads", "1"}}},
    {"Seq257CausalD64", {{"seq_q", "257"}, {"causal", "1"}, {"head_dim", "64"}}},
    {"Seq257NonCausalGqa2", {{"seq_q", "257"}, {"kv_heads", "2"}}},
    {"VarlenCausalGqa2",
     {{"batch", "3"}, {"varlen", "1"}, {"seq_q", "130"}, {"causal", "1"}, {"kv_heads", "2"}}},
    {"VarlenNonCausalMqaD64",
     {{"batch", "4"}, {"varlen", "1"}, {"seq_q", "77"}, {"seq_k", "90"}, {"kv_heads", "1"}, {"head_dim", "64"}}},
    {"OneQueryLongContextF16", {{"seq_q", "1"}, {"seq_k", "257"}, {"dtype", "f16"}, {"kv_heads", "1"}, {"head_dim", "64"}}},
    {"SlidingWindowCausal", {{"seq_q", "200"}, {"causal", "1"}, {"window", "37"}, {"kv_heads", "2"}, {"head_dim", "64"}}},
    {"CausalMoreQueriesThanKeys", {{"seq_q", "130"}, {"seq_k", "47"}, {"causal", "1"}, {"head_dim", "64"}}},
    {"ScaleParameterF16", {{"seq_q", "66"}, {"scale", "0.3"}, {"dtype", "f16"}, {"causal", "1"}}},
    // The key loop pipelined 2 stages deep (NVIDIA: cp.async into the other
    // buffer; AMD: prefetch through registers), ragged so that the last step
    // prefetches past the sequence (zeros, never read as keys).
    {"PipelinedKeys32VarlenCausalGqa2",
     {{"batch", "3"}, {"varlen", "1"}, {"seq_q", "130"}, {"causal", "1"}, {"kv_heads", "2"}, {"block_n", "32"},
      {"stages", "2"}}},
    // Head sizes that are not a multiple of the 32- and 64-wide tiles (80, 96)
    // and those whose tiles need smaller key blocks (192, 256: the LDS).
    {"Seq40CausalGqa2D80", {{"seq_q", "40"}, {"heads", "4"}, {"kv_heads", "2"}, {"causal", "1"}, {"head_dim", "80"}}},
    {"VarlenD96F16", {{"batch", "2"}, {"varlen", "1"}, {"seq_q", "45"}, {"seq_k", "50"}, {"heads", "2"},
                      {"kv_heads", "2"}, {"head_dim", "96"}, {"dtype", "f16"}}},
    {"Seq70CausalMqaD192", {{"seq_q", "70"}, {"heads", "2"}, {"kv_heads", "1"}, {"causal", "1"}, {"head_dim", "192"}}},
    {"Seq50WindowD256",
     {{"seq_q", "50"}, {"heads", "2"}, {"kv_heads", "1"}, {"window", "20"}, {"causal", "1"}, {"head_dim", "256"}}},
    {"DeepSeekPrefillD192V128Varlen", {{"batch", "2"}, {"varlen", "1"}, {"seq_q", "40"}, {"causal", "1"},
                                       {"heads", "2"}, {"kv_heads", "2"}, {"head_dim", "192"}, {"head_dim_v", "128"}}},
};

RunOptions emulatorOn(const std::string &arch) { return runcheck::emulatorOn(arch, 7); }

void expectVerified(const KernelParams &p, const std::string &arch) {
  Result<RunResult> r = runAndVerify(*findKernel("attention"), p, emulatorOn(arch));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  EXPECT_EQ(r->kernel.report.scratchBytes, 0);
}

class AttentionVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(AttentionVerify, MatchesReference) {
  const auto &[arch, index] = GetParam();
  expectVerified(kCases[index].params, arch);
}

INSTANTIATE_TEST_SUITE_P(Emulator, AttentionVerify, overTargets(kCases), caseNames(kCases));

// The one long case: 1024 tokens, causal, GQA (16 query blocks, most of the
// causal key blocks skipped by the loop bounds).
TEST(AttentionVerifyLong, Seq1024CausalGqa) {
  expectVerified({{"seq_q", "1024"}, {"causal", "1"}, {"kv_heads", "2"}}, "gfx942");
}

// NVIDIA's other candidate shape: 128 query rows over 8 warps, 64-key steps,
// pipelined, P read from registers by mma.sync.
TEST(AttentionVerifyNvidia, Pipelined128x64W8Varlen) {
  expectVerified({{"batch", "3"}, {"varlen", "1"}, {"seq_q", "200"}, {"causal", "1"}, {"kv_heads", "2"},
                  {"block_m", "128"}, {"block_n", "64"}, {"waves", "8"}, {"stages", "2"}},
                 "sm_90a");
}

// The check can fail: a non-causal kernel against the causal reference must
// mismatch (every row but the last sees keys it should not).
TEST(AttentionVerifyNegative, NonCausalKernelFailsCausalReference) {
  KernelParams causal{{"seq_q", "40"}, {"causal", "1"}, {"head_dim", "64"}};
  KernelParams plain{{"seq_q", "40"}, {"causal", "0"}, {"head_dim", "64"}};
  const KernelInfo &info = *findKernel("attention");
  KernelInfo mixed = info;
  mixed.build = [&](const KernelParams &) { return info.build(plain); };
  Result<RunResult> r = runAndVerify(mixed, causal, emulatorOn("gfx942"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GT(r->mismatches, 0) << r->verifiedLine();
}

// ---- Decode over a paged KV cache (paged_decode): shuffled, non-contiguous
// block tables, context lengths that are not multiples of the block size (the
// sequences get lengths descending from seq_k), GQA groups sharing a K/V
// block read, several query tokens per sequence (causal among them).
const Case kDecodeCases[] = {
    {"Default", {}},
    {"Gqa2Block32Ctx257", {{"kv_heads", "2"}, {"block_size", "32"}, {"seq_k", "257"}}},
    {"MqaThreeQueriesD64", {{"kv_heads", "1"}, {"q_per_seq", "3"}, {"head_dim", "64"}, {"seq_k", "100"}, {"batch", "5"}}},
    // 32 query heads on one kv head: a 32-row tile, over 2 waves (one wave32
    // would hold the 32x128 f32 O alone in 128 VGPRs and spill on gfx1151).
    {"Heads32Mqa1TokenContextF16",
     {{"heads", "32"}, {"kv_heads", "1"}, {"dtype", "f16"}, {"seq_k", "1"}, {"batch", "2"}, {"waves", "2"}}},
    {"FourQueriesBlock32", {{"q_per_seq", "4"}, {"seq_k", "35"}, {"block_size", "32"}, {"batch", "3"}}},
    {"Context1024Gqa2", {{"kv_heads", "2"}, {"seq_k", "1024"}, {"batch", "2"}, {"splits", "1"}}},
    // No splits given: 4 workgroups for a 64-block context split 2 ways on
    // every target (PagedDecodeSplits below checks the choice).
    {"Context1024Gqa2AutoSplit", {{"kv_heads", "2"}, {"seq_k", "1024"}, {"batch", "2"}}},
    // Split-KV: partial results in f32, combined through their log-sum-exps;
    // with 8 splits of short contexts most splits see no block (lse = -inf).
    {"Split4", {{"splits", "4"}, {"seq_k", "300"}}},
    {"Split3Gqa2Context1024", {{"splits", "3"}, {"kv_heads", "2"}, {"seq_k", "1024"}, {"batch", "2"}}},
    {"Split8ShortContextsTwoQueries", {{"splits", "8"}, {"seq_k", "40"}, {"q_per_seq", "2"}, {"batch", "3"}}},
    // The block loop pipelined 2 deep: the next blocks' rows read from the
    // table ahead (cp.async on sm_90a, registers on AMD), splits whose last
    // prefetch reads past their share.
    {"Pipelined2Split4Gqa2", {{"stages", "2"}, {"splits", "4"}, {"kv_heads", "2"}, {"seq_k", "300"}}},
};

class PagedDecodeVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(PagedDecodeVerify, MatchesReference) {
  const auto &[arch, index] = GetParam();
  Result<RunResult> r = runAndVerify(*findKernel("paged_decode"), kDecodeCases[index].params, emulatorOn(arch));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  for (const CompiledKernel &k : r->kernels)
    EXPECT_EQ(k.report.scratchBytes, 0) << k.name;
}

INSTANTIATE_TEST_SUITE_P(Emulator, PagedDecodeVerify, overTargets(kDecodeCases), caseNames(kDecodeCases));

/// The splits paged_decode's target defaults choose for `given` on `arch`.
std::string defaultSplits(KernelParams given, const std::string &arch) {
  return withTargetDefaults(*findKernel("paged_decode"), given, arch).at("splits");
}

// Split-KV by default only where one workgroup per (token, kv head) leaves
// most of the device idle and the context is long enough to share.
TEST(PagedDecodeSplits, FollowTheDeviceAndTheContext) {
  const KernelParams b64 = {{"batch", "64"}, {"heads", "32"}, {"kv_heads", "8"}, {"seq_k", "8192"}};
  EXPECT_EQ(defaultSplits(b64, "gfx942"), "2");   // 512 workgroups, 1,216 SIMDs
  EXPECT_EQ(defaultSplits(b64, "gfx90a"), "1");   // 440 SIMDs: half of them filled
  EXPECT_EQ(defaultSplits(b64, "sm_90a"), "1");   // 528 sub-partitions
  EXPECT_EQ(defaultSplits({{"batch", "1"}, {"kv_heads", "8"}, {"seq_k", "8192"}}, "sm_90a"), "16");  // 512 blocks
  EXPECT_EQ(defaultSplits({{"batch", "1"}, {"kv_heads", "8"}, {"seq_k", "1000"}}, "gfx942"), "1");  // 63 blocks
  EXPECT_EQ(defaultSplits({{"splits", "5"}}, "gfx942"), "5");  // given: kept
  EXPECT_EQ(defaultSplits({}, "gfx942"), "1");  // the defaults: batch 4, context 300
}

// The other head sizes: verified and clean on every target (gfx1151's single
// wave over a 16-token block spills a few registers at 80 and 256, so no
// zero-scratch check here).
const Case kDecodeHeadCases[] = {
    {"D80Gqa2", {{"kv_heads", "2"}, {"head_dim", "80"}, {"seq_k", "40"}, {"batch", "2"}}},
    {"D192TwoQueries",
     {{"head_dim", "192"}, {"q_per_seq", "2"}, {"seq_k", "30"}, {"batch", "2"}, {"heads", "2"}, {"kv_heads", "1"}}},
    {"D256Split2",
     {{"head_dim", "256"}, {"splits", "2"}, {"seq_k", "50"}, {"batch", "2"}, {"heads", "2"}, {"kv_heads", "2"}}},
};

class PagedDecodeHeadSizes : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(PagedDecodeHeadSizes, MatchesReference) {
  const auto &[arch, index] = GetParam();
  Result<RunResult> r = runAndVerify(*findKernel("paged_decode"), kDecodeHeadCases[index].params, emulatorOn(arch));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
}

INSTANTIATE_TEST_SUITE_P(Emulator, PagedDecodeHeadSizes, overTargets(kDecodeHeadCases), caseNames(kDecodeHeadCases));

// The kernel follows the block table: pointing a sequence's first block at a
// spare block of the cache in the table the kernel reads (the reference keeps
// the original) must mismatch. (Swapping two of its blocks would not: with
// every key visible, attention does not depend on the keys' order.)
TEST(PagedDecodeNegative, RedirectedBlockTableEntryIsSeen) {
  const KernelInfo &info = *findKernel("paged_decode");
  KernelInfo redirected = info;
  redirected.problem = [&](const KernelParams &p) -> Result<Problem> {
    Result<Problem> prob = info.problem(p);
    if (!prob)
      return prob;
    TensorSpec &table = prob->tensors[5];
    EXPECT_EQ(table.name, "block_tables");
    const int64_t numBlocks = prob->tensors[1].shape[0] / 16;  // block_size 16
    for (int64_t b = 0; b < numBlocks; ++b)
      if (std::find(table.values.begin(), table.values.end(), double(b)) == table.values.end()) {
        table.values[0] = double(b);  // a block no sequence owns
        break;
      }
    return prob;
  };
  Result<RunResult> r = runAndVerify(redirected, {{"seq_k", "40"}, {"batch", "1"}}, emulatorOn("gfx942"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GT(r->mismatches, 0) << r->verifiedLine();
}

// ---- Backward (attention_bwd): the forward, dq and dkdv kernels in order;
// O, LSE, dQ, dK and dV are each checked against the double-precision
// reference with the tolerances attentionBwdProblem derives.
const Case kBwdCases[] = {
    {"Seq17Gqa2D64", {{"seq_q", "17"}, {"heads", "4"}, {"kv_heads", "2"}, {"head_dim", "64"}}},
    {"Seq128CausalD128", {{"seq_q", "128"}, {"heads", "2"}, {"kv_heads", "2"}, {"causal", "1"}}},
    {"Seq257CausalMqaD64", {{"seq_q", "257"}, {"heads", "4"}, {"kv_heads", "1"}, {"causal", "1"}, {"head_dim", "64"}}},
    {"VarlenNonCausalGqa", {{"batch", "3"}, {"varlen", "1"}, {"seq_q", "77"}, {"seq_k", "90"}, {"heads", "4"},
                            {"kv_heads", "2"}, {"head_dim", "64"}}},
    {"SlidingWindowCausal",
     {{"seq_q", "100"}, {"window", "20"}, {"causal", "1"}, {"heads", "2"}, {"kv_heads", "1"}, {"head_dim", "64"}}},
    {"CausalMoreQueriesThanKeysF16", {{"seq_q", "70"}, {"seq_k", "33"}, {"causal", "1"}, {"dtype", "f16"},
                                      {"heads", "2"}, {"kv_heads", "2"}, {"head_dim", "64"}}},
    // Keys seen by few queries get gradients of about 1e-6, subnormal in f16:
    // their rounding errs by half the smallest subnormal, not by 2^-11 relative.
    {"SlidingWindow9F16SubnormalGradients", {{"seq_q", "33"}, {"seq_k", "45"}, {"window", "9"}, {"dtype", "f16"},
                                             {"heads", "2"}, {"kv_heads", "2"}}},
    // The other head sizes, with each target's default blocks and waves for them.
    {"Seq30CausalD80", {{"seq_q", "30"}, {"heads", "2"}, {"kv_heads", "1"}, {"causal", "1"}, {"head_dim", "80"}}},
    {"Seq25D96F16",
     {{"seq_q", "25"}, {"seq_k", "40"}, {"heads", "2"}, {"kv_heads", "2"}, {"head_dim", "96"}, {"dtype", "f16"}}},
    {"Seq37CausalD192", {{"seq_q", "37"}, {"heads", "2"}, {"kv_heads", "1"}, {"causal", "1"}, {"head_dim", "192"}}},
    {"Seq20D256", {{"seq_q", "20"}, {"seq_k", "35"}, {"heads", "1"}, {"kv_heads", "1"}, {"head_dim", "256"}}},
    {"DeepSeekPrefillD192V128Causal", {{"seq_q", "40"}, {"heads", "2"}, {"kv_heads", "1"}, {"causal", "1"},
                                       {"head_dim", "192"}, {"head_dim_v", "128"}}},
};

class AttentionBwdVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(AttentionBwdVerify, MatchesReference) {
  const auto &[arch, index] = GetParam();
  Result<RunResult> r = runAndVerify(*findKernel("attention_bwd"), kBwdCases[index].params, emulatorOn(arch));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  ASSERT_EQ(r->kernels.size(), 3u);  // forward, dq, dkdv (zero scratch: tests/lit/tilec/cli-attention.test)
}

INSTANTIATE_TEST_SUITE_P(Emulator, AttentionBwdVerify, overTargets(kBwdCases), caseNames(kBwdCases));

// The gradient checks can fail: a dkdv kernel built without the causal mask
// against the causal reference must mismatch.
TEST(AttentionBwdNegative, NonCausalGradientsFailCausalReference) {
  const KernelInfo &info = *findKernel("attention_bwd");
  KernelInfo mixed = info;
  mixed.build = [&](const KernelParams &p) {
    KernelParams q = p;
    if (q["part"] == "dkdv")
      q["causal"] = "0";
    return info.build(q);
  };
  Result<RunResult> r = runAndVerify(mixed, {{"seq_q", "40"}, {"causal", "1"}, {"heads", "2"}, {"kv_heads", "2"}, {"head_dim", "64"}},
                                     emulatorOn("gfx942"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GT(r->mismatches, 0) << r->verifiedLine();
}

// kv_heads must divide heads; the message names both.
TEST(AttentionParams, KvHeadsMustDivideHeads) {
  Result<Kernel> k = findKernel("attention")->build({{"heads", "8"}, {"kv_heads", "3"}});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error(), "kernel 'attention': kv_heads (3) must divide heads (8)");
}

} // namespace
