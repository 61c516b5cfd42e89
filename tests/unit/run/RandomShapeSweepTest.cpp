// The emulator safety net (issue 8): every shipped kernel, on every target,
// on seeded random shapes: zero out-of-bounds accesses, zero races, results
// within the kernel's own derived tolerance. The shapes come from a fixed
// seed per (kernel, target), so a failure reproduces with the printed -p flags:
//   tilec --kernel=K --offload-arch=A --run -p ...
// A kernel added to the registry without a shape generator here fails the
// EveryShippedKernelIsSwept test.
#include "Registry.h"
#include "Run.h"
#include "RunChecks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

using Rng = std::mt19937_64;

int64_t uniform(Rng &rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
template <class T> const T &pick(Rng &rng, std::initializer_list<T> xs) {
  return *(xs.begin() + uniform(rng, 0, static_cast<int64_t>(xs.size()) - 1));
}

/// Random -p values for one kernel: sizes that are rarely multiples of the
/// blocks, the kernel's dtypes and options; small enough for the emulator.
using Generator = std::function<KernelParams(Rng &, const std::string &arch)>;

KernelParams gemmParams(Rng &rng, const std::string &arch) {
  KernelParams p{{"M", std::to_string(uniform(rng, 1, 300))},
                 {"N", std::to_string(uniform(rng, 1, 300))},
                 {"K", std::to_string(uniform(rng, 1, 200))},
                 {"out", pick(rng, {"f32", "bf16"})}};
  p["dtype"] = arch == "gfx942"   ? pick(rng, {"bf16", "f16", "fp8", "bf8"})
               : arch == "sm_90a" ? pick(rng, {"bf16", "f16", "e4m3", "e5m2"})
                                  : pick(rng, {"bf16", "f16"});
  p["stages"] = pick(rng, {"1", "2", "3"});
  // One in three: strided operands in any layout, rows padded by 0..9
  // elements, a batch of up to 3 with B shared or not.
  if (uniform(rng, 0, 2) == 0) {
    const std::string layout = pick(rng, {"nn", "nt", "tn", "tt"});
    const int64_t M = std::stoll(p["M"]), N = std::stoll(p["N"]), K = std::stoll(p["K"]);
    p["layout"] = layout;
    p["lda"] = std::to_string((layout[0] == 't' ? M : K) + uniform(rng, 0, 9));
    p["ldb"] = std::to_string((layout[1] == 't' ? K : N) + uniform(rng, 0, 9));
    p["ldc"] = std::to_string(N + uniform(rng, 0, 9));
    p["batch"] = std::to_string(uniform(rng, 1, 3));
    p["batch_stride_b"] = pick(rng, {"tight", "0"});
  }
  return p;
}

void attentionShape(Rng &rng, KernelParams &p) {
  int64_t kv = pick<int64_t>(rng, {1, 2, 4});
  p["heads"] = std::to_string(kv * pick<int64_t>(rng, {1, 2}));
  p["kv_heads"] = std::to_string(kv);
  p["head_dim"] = pick(rng, {"64", "128"});
  p["dtype"] = pick(rng, {"bf16", "f16"});
  p["causal"] = pick(rng, {"0", "1"});
}

/// attentionShape with any of the prefill kernels' head sizes, one time in
/// four DeepSeek's V head size of 128 under Q and K's 192.
void prefillHeadSizes(Rng &rng, KernelParams &p) {
  p["head_dim"] = pick(rng, {"64", "80", "96", "128", "192", "256"});
  if (uniform(rng, 0, 3) == 0) {
    p["head_dim"] = "192";
    p["head_dim_v"] = "128";
  }
}

/// A batch of up to maxBatch sequences (ragged or not) of 1..maxSeq queries and keys.
void sequences(Rng &rng, KernelParams &p, int64_t maxBatch, int64_t maxSeq) {
  p["batch"] = std::to_string(uniform(rng, 1, maxBatch));
  p["varlen"] = pick(rng, {"0", "1"});
  p["seq_q"] = std::to_string(uniform(rng, 1, maxSeq));
  p["seq_k"] = std::to_string(uniform(rng, 1, maxSeq));
}

KernelParams attentionParams(Rng &rng, const std::string &) {
  KernelParams p;
  attentionShape(rng, p);
  prefillHeadSizes(rng, p);
  sequences(rng, p, 3, 150);
  if (uniform(rng, 0, 3) == 0)
    p["window"] = std::to_string(uniform(rng, 1, 64));
  return p;
}

KernelParams attentionBwdParams(Rng &rng, const std::string &) {
  KernelParams p;
  attentionShape(rng, p);
  prefillHeadSizes(rng, p);
  // Emulating dq and dkdv costs time in proportion to the head size: the
  // widest heads (192, 256) get shorter sequences.
  sequences(rng, p, 2, std::stoll(p["head_dim"]) > 128 ? 48 : 90);
  return p;
}

KernelParams pagedDecodeParams(Rng &rng, const std::string &) {
  KernelParams p;
  attentionShape(rng, p);
  p.erase("causal");
  p["batch"] = std::to_string(uniform(rng, 1, 4));
  p["q_per_seq"] = std::to_string(uniform(rng, 1, 3));
  p["seq_k"] = std::to_string(uniform(rng, 3, 400));
  p["block_size"] = pick(rng, {"16", "32"});
  p["splits"] = pick(rng, {"1", "1", "2", "5"});
  return p;
}

KernelParams mlaDecodeParams(Rng &rng, const std::string &arch) {
  KernelParams p;
  const bool heads32 = pick(rng, {false, true});
  p["heads"] = heads32 ? "32" : "16";
  // Every target's default key step (up to 64 tokens; 32 with 32 heads) divides the block.
  p["block_size"] = heads32 ? pick(rng, {"32", "64"}) : "64";
  p["batch"] = std::to_string(uniform(rng, 1, 3));
  p["seq_k"] = std::to_string(uniform(rng, 1, 150));
  p["splits"] = pick(rng, {"1", "1", "2", "5"});
  if (arch == "gfx942" && pick(rng, {false, true})) {
    p["kv_dtype"] = "fp8";
    p["kv_scale"] = pick(rng, {"0.25", "3"});
  }
  return p;
}

KernelParams moeGateParams(Rng &rng, const std::string &) {
  int64_t experts = pick<int64_t>(rng, {1, 3, 8, 20, 64});
  return {{"tokens", std::to_string(uniform(rng, 1, 200))},
          {"experts", std::to_string(experts)},
          {"topk", std::to_string(uniform(rng, 1, std::min<int64_t>(8, experts)))},
          {"renormalize", pick(rng, {"0", "1"})},
          {"dtype", pick(rng, {"bf16", "f16", "f32"})}};
}

KernelParams moeExpertsParams(Rng &rng, const std::string &) {
  int64_t experts = pick<int64_t>(rng, {1, 5, 8, 64});
  return {{"tokens", std::to_string(uniform(rng, 1, 120))},
          {"experts", std::to_string(experts)},
          {"topk", std::to_string(uniform(rng, 1, std::min<int64_t>(8, experts)))},
          {"hidden", std::to_string(uniform(rng, 1, 160))},
          {"intermediate", std::to_string(uniform(rng, 1, 200))},
          {"routing", pick(rng, {"random", "random", "one"})},
          {"dtype", pick(rng, {"bf16", "f16"})}};
}

KernelParams moeAlignParams(Rng &rng, const std::string &) {
  int64_t experts = pick<int64_t>(rng, {1, 3, 8, 33, 64});
  return {{"tokens", std::to_string(uniform(rng, 1, 300))},
          {"experts", std::to_string(experts)},
          {"topk", std::to_string(uniform(rng, 1, std::min<int64_t>(8, experts)))},
          {"block_m", pick(rng, {"16", "32", "64"})},
          {"routing", pick(rng, {"random", "random", "one"})}};
}

KernelParams moeParams(Rng &rng, const std::string &arch) {
  KernelParams p = moeExpertsParams(rng, arch);
  p["renormalize"] = pick(rng, {"0", "1"});
  return p;
}

KernelParams rmsNormParams(Rng &rng, const std::string &) {
  KernelParams p = {{"tokens", std::to_string(uniform(rng, 1, 200))},
          {"hidden", std::to_string(uniform(rng, 1, 1200))},
          {"residual", pick(rng, {"0", "1"})},
          {"fp8_out", pick(rng, {"0", "0", "1"})},
          {"dtype", pick(rng, {"bf16", "f16", "f32"})}};
  if (p.at("fp8_out") == "1")
    p["fp8_scale"] = pick(rng, {"static", "token", "group"});
  if (p.count("fp8_scale") && p.at("fp8_scale") == "group")   // whole groups of 128 columns
    p["hidden"] = std::to_string(128 * uniform(rng, 1, 9));
  return p;
}

KernelParams siluAndMulParams(Rng &rng, const std::string &) {
  return {{"tokens", std::to_string(uniform(rng, 1, 200))},
          {"intermediate", std::to_string(uniform(rng, 1, 1200))},
          {"fp8_out", pick(rng, {"0", "0", "1"})},
          {"dtype", pick(rng, {"bf16", "f16", "f32"})}};
}

KernelParams softmaxParams(Rng &rng, const std::string &) {
  return {{"rows", std::to_string(uniform(rng, 1, 200))},
          {"cols", std::to_string(uniform(rng, 1, 3000))},
          {"dtype", pick(rng, {"bf16", "f16", "f32"})}};
}

KernelParams ropeParams(Rng &rng, const std::string &) {
  return {{"tokens", std::to_string(uniform(rng, 1, 100))},
          {"max_position", std::to_string(uniform(rng, 1, 500))},
          {"heads", std::to_string(uniform(rng, 1, 16))},
          {"kv_heads", std::to_string(uniform(rng, 1, 8))},
          {"head_dim", std::to_string(2 * uniform(rng, 1, 80))},
          {"style", pick(rng, {"neox", "gptj"})},
          {"dtype", pick(rng, {"bf16", "f16", "f32"})}};
}

const std::map<std::string, Generator> &generators() {
  static const std::map<std::string, Generator> g = {
      {"gemm", gemmParams},
      {"attention", attentionParams},
      {"attention_bwd", attentionBwdParams},
      {"paged_decode", pagedDecodeParams},
      {"mla_decode", mlaDecodeParams},
      {"moe_gate", moeGateParams},
      {"moe_experts", moeExpertsParams},
      {"moe_align", moeAlignParams},
      {"moe", moeParams},
      {"rms_norm", rmsNormParams},
      {"silu_and_mul", siluAndMulParams},
      {"softmax", softmaxParams},
      {"rope", ropeParams},
  };
  return g;
}

/// Shapes per (kernel, target): 8 on each of the three targets, 24 per kernel.
constexpr int kShapesPerTarget = 8;

std::string flags(const KernelParams &p) {
  std::string s;
  for (const auto &[k, v] : p)
    s += " -p " + k + "=" + v;
  return s;
}

class RandomShapeSweep : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(RandomShapeSweep, VerifiedWithoutOutOfBoundsOrRaces) {
  const auto &[kernel, arch] = GetParam();
  const KernelInfo *info = findKernel(kernel);
  ASSERT_NE(info, nullptr);
  auto gen = generators().find(kernel);
  ASSERT_NE(gen, generators().end());
  // The seed depends on the kernel and target only (FNV-1a of "kernel/arch"):
  // the same shapes on every run and every machine.
  uint64_t seed = 0xcbf29ce484222325ull;
  for (char ch : kernel + "/" + arch)
    seed = (seed ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
  Rng rng(seed);
  for (int i = 0; i < kShapesPerTarget; ++i) {
    KernelParams p = gen->second(rng, arch);
    SCOPED_TRACE("tilec --kernel=" + kernel + " --offload-arch=" + arch + " --run" + flags(p));
    Result<RunResult> r = runAndVerify(*info, p, runcheck::emulatorOn(arch, 1000 + i));
    ASSERT_TRUE(r.ok()) << r.error();
    runcheck::expectVerifiedAndClean(*r);
  }
}

std::vector<std::tuple<std::string, std::string>> sweepCases() {
  std::vector<std::tuple<std::string, std::string>> out;
  for (const auto &[kernel, gen] : generators())
    for (const char *arch : {"gfx942", "gfx1151", "gfx90a", "sm_90a"})
      out.emplace_back(kernel, arch);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Emulator, RandomShapeSweep, ::testing::ValuesIn(sweepCases()),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, std::string>> &info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

TEST(RandomShapeSweepCoverage, EveryShippedKernelIsSwept) {
  for (const KernelInfo &k : shippedKernels())
    EXPECT_TRUE(generators().count(k.name)) << "shipped kernel '" << k.name << "' has no random-shape generator";
}

} // namespace
