// The shipped mla_decode kernel (kernels/mla/MlaDecode.cpp), run in the CPU
// wavefront emulator on every target and verified against the double-precision
// reference with its derived tolerance (attention's, over 576-wide scores and
// 512-wide values; an fp8 cache adds two f32 scalings). Shuffled block tables
// with spare blocks, batches of mixed context lengths that are mostly not
// multiples of the block (descending from seq_k), 16 and 128 heads, split-KV
// with empty splits, a bf16 and an fp8 cache. Zero out-of-bounds accesses and
// races each time; a redirected block-table entry must be seen.
#include "Run.h"
#include "RunChecks.h"
#include "mla/MlaDecode.h"

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
    {"Default", {}},  // 4 sequences of 300 down to ~20 tokens, 16 heads, 64-token blocks
    {"Heads128Ctx70", {{"heads", "128"}, {"seq_k", "70"}, {"batch", "2"}}},
    {"Split4MixedLengths", {{"splits", "4"}, {"seq_k", "260"}, {"batch", "3"}}},
    // Short contexts over 8 splits: most splits get no key step (lse = -inf).
    {"Split8ShortContextsBlock32Heads32",
     {{"splits", "8"}, {"seq_k", "45"}, {"block_size", "32"}, {"heads", "32"}, {"batch", "3"}}},
    {"OneTokenContextBlock16OneWave",
     {{"seq_k", "1"}, {"block_size", "16"}, {"block_h", "16"}, {"block_n", "16"}, {"waves", "1"}, {"batch", "2"}}},
    // Four workgroups share a head group's value columns (chunks taken in rotated order).
    {"ValueSplit4Chunk64", {{"value_split", "4"}, {"latent_chunk", "64"}, {"seq_k", "90"}, {"batch", "2"}}},
    {"ScaleParameterFiveSequences", {{"scale", "0.3"}, {"seq_k", "200"}, {"batch", "5"}}},
    {"Fp8CacheScaled", {{"kv_dtype", "fp8"}, {"kv_scale", "0.37"}, {"seq_k", "130"}, {"batch", "3"}}},
    {"Fp8CacheSplit2Heads32", {{"kv_dtype", "fp8"}, {"kv_scale", "2.5"}, {"heads", "32"}, {"splits", "2"},
                               {"seq_k", "99"}, {"batch", "2"}}},
    // The key loop pipelined 2 deep (rows of the next steps read through the
    // table ahead; on gfx942 two stages exceed 64 KiB of LDS and one is kept).
    {"Pipelined2Split2", {{"stages", "2"}, {"splits", "2"}, {"seq_k", "150"}, {"batch", "2"}}},
};

RunOptions emulatorOn(const std::string &arch) { return runcheck::emulatorOn(arch, 11); }

class MlaDecodeVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(MlaDecodeVerify, MatchesReference) {
  const auto &[arch, index] = GetParam();
  // An fp8 cache is in the target's 8-bit format: AMD's e4m3fnuz, NVIDIA's OCP e4m3.
  KernelParams params = kCases[index].params;
  if (arch == "sm_90a" && params.count("kv_dtype") && params["kv_dtype"] == "fp8")
    params["kv_dtype"] = "e4m3";
  Result<RunResult> r = runAndVerify(*findKernel("mla_decode"), params, emulatorOn(arch));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
}

INSTANTIATE_TEST_SUITE_P(Emulator, MlaDecodeVerify, overTargets(kCases), caseNames(kCases));

// The kernel follows the block table: pointing a sequence's first block at a
// spare block in the table the kernel reads (the reference keeps the
// original) must mismatch.
TEST(MlaDecodeNegative, RedirectedBlockTableEntryIsSeen) {
  const KernelInfo &info = *findKernel("mla_decode");
  KernelInfo redirected = info;
  redirected.problem = [&](const KernelParams &p) -> Result<Problem> {
    Result<Problem> prob = info.problem(p);
    if (!prob)
      return prob;
    TensorSpec &table = prob->tensors[4];
    EXPECT_EQ(table.name, "block_tables");
    const int64_t numBlocks = prob->tensors[1].shape[0] / 64;  // block_size 64
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

// Bad parameters give one error naming the kernel and the parameter.
TEST(MlaDecodeParams, RejectsBadCombinations) {
  const KernelInfo &info = *findKernel("mla_decode");
  auto error = [&](const KernelParams &p) {
    Result<Kernel> k = info.build(p);
    return k.ok() ? std::string() : k.error();
  };
  EXPECT_NE(error({{"heads", "24"}}).find("block_h (16) must be a multiple of 16 that divides heads (24)"),
            std::string::npos);
  EXPECT_NE(error({{"kv_dtype", "f16"}}).find("parameter 'kv_dtype' must be one of bf16, fp8"), std::string::npos);
  EXPECT_NE(error({{"kv_scale", "2"}}).find("'kv_scale' applies to kv_dtype=fp8 or e4m3 only"), std::string::npos);
  EXPECT_NE(error({{"block_n", "48"}}).find("block_n (48)"), std::string::npos);
  EXPECT_NE(error({{"part", "combine"}}).find("part=combine needs splits > 1"), std::string::npos);
  EXPECT_NE(error({{"kv_dtype", "fp8"}, {"stages", "2"}}).find("stages (2) above 1 needs a bf16 cache"),
            std::string::npos);
  EXPECT_EQ(error({}), "");
}

} // namespace
