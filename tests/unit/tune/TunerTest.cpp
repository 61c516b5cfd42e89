// Real tunes: candidates compile (in-process clang), the best has no scratch,
// a second tune of the same shape class hits the cache, the CLI prints the
// chosen -p flags.
#include "gemm/GemmEntry.h"
#include "TuneCli.h"
#include "Tuning.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace tilec;
using namespace tilec::tune;
using kernels::runTuneCommand;
using kernels::tuneShippedKernel;
using kernels::TuneCliOptions;
namespace fs = std::filesystem;

namespace {

std::string freshDir(const std::string &name) {
  fs::path d = fs::path(::testing::TempDir()) / ("tilec-tuner-" + name + "-" + std::to_string(std::random_device{}()));
  fs::remove_all(d);
  return d.string();
}

/// A restricted space: 2 x 2 x 2 x 2 x 2 = 32 points.
GemmSpace smallSpace() {
  GemmSpace s;
  s.blockM = {64, 128};
  s.blockN = {64, 128};
  s.blockK = {16, 32};
  s.waves = {2, 4};
  s.stages = {1, 2};
  return s;
}

TuneOptions options(const std::string &dir) {
  TuneOptions o;
  o.arch = "gfx942";
  o.cacheDir = dir;
  o.device = DeviceKind::Emulator;  // rank with the cost model
  o.space = smallSpace();
  return o;
}

kernels::KernelParams shape(int M, int N, int K) {
  return {{"M", std::to_string(M)}, {"N", std::to_string(N)}, {"K", std::to_string(K)}};
}

} // namespace

TEST(Tuner, PredictedInstructionIsTheCompilersChoice_gfx942) {
  // Candidates the pruner keeps compile, with the instruction and wave grid
  // the pruner predicted (checked through TuneStats::instrMismatch).
  GemmSpace s;
  s.blockM = {32, 128};
  s.blockN = {64, 256};
  s.blockK = {16};
  s.waves = {1, 4, 8};
  s.stages = {1};
  TuneOptions o = options(freshDir("predict"));
  o.space = s;
  o.useTuneCache = false;
  Result<TuneResult> r = tuneShippedKernel(kernels::gemmKernelInfo(), shape(4096, 4096, 4096), o);
  ASSERT_TRUE(r) << r.error();
  EXPECT_GT(r->stats.compiled, 5u);
  EXPECT_EQ(r->stats.compileFailed, 0u) << r->stats.firstCompileError;
  EXPECT_EQ(r->stats.instrMismatch, 0u);
}

TEST(Tuner, SmallGemmPicksACleanConfig_gfx942) {
  std::string dir = freshDir("small");
  std::vector<size_t> progress;
  TuneOptions o = options(dir);
  o.onProgress = [&](const TuneProgress &p) { progress.push_back(p.compiled); };
  Result<TuneResult> r = tuneShippedKernel(kernels::gemmKernelInfo(), shape(512, 512, 512), o);
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->fromCache);
  EXPECT_EQ(r->shapeClass, "512x512x512");
  EXPECT_EQ(r->record.method, "cost model");
  EXPECT_EQ(r->stats.spaceSize, 32u);
  EXPECT_EQ(r->stats.compileFailed, 0u) << r->stats.firstCompileError;
  EXPECT_EQ(progress.size(), r->stats.compiled + r->stats.compileFailed);
  ASSERT_FALSE(r->record.ranking.empty());
  EXPECT_LE(r->record.ranking.size(), 5u);
  for (size_t i = 1; i < r->record.ranking.size(); ++i)
    EXPECT_LE(r->record.ranking[i - 1].seconds, r->record.ranking[i].seconds);

  // The winner compiles with no scratch, as the -p flags the CLI prints.
  const RankedCandidate &best = r->record.ranking.front();
  kernels::KernelParams ps = shape(512, 512, 512);
  for (auto &[k, v] : best.tile.params())
    ps[k] = v;
  Result<Kernel> k = kernels::gemmKernelInfo().build(ps);
  ASSERT_TRUE(k) << k.error();
  Result<CompiledKernel> ck = compile(*k, {.arch = "gfx942", .cacheDir = dir});
  ASSERT_TRUE(ck) << ck.error();
  EXPECT_EQ(ck->report.scratchBytes, 0);
  EXPECT_EQ(ck->name, best.kernelName);
  EXPECT_GT(ck->report.matrixInstructions, 0);
  // The tiling read back from the compiled tile IR (what instrMismatch and
  // the ranking use) is the gemm's #tile.matrix layout.
  std::optional<ChosenTiling> chosen = chosenTiling(ck->tileIR);
  ASSERT_TRUE(chosen) << ck->tileIR;
  EXPECT_NE(lookupTarget("gfx942")->findInstr(chosen->instr), nullptr) << chosen->instr;
  EXPECT_EQ(int64_t(chosen->wm) * chosen->wn, best.tile.waves);

  // Same shape class (500 -> 512): a cache hit that compiles nothing.
  Result<TuneResult> again = tuneShippedKernel(kernels::gemmKernelInfo(), shape(500, 512, 300), options(dir));
  ASSERT_TRUE(again) << again.error();
  EXPECT_TRUE(again->fromCache);
  EXPECT_EQ(again->stats.compiled, 0u);
  EXPECT_EQ(again->record.ranking.front().tile, best.tile);
  EXPECT_EQ(again->record.M, 512);

  // Another class is not.
  Result<TuneResult> other = tuneShippedKernel(kernels::gemmKernelInfo(), shape(1024, 512, 512), options(dir));
  ASSERT_TRUE(other) << other.error();
  EXPECT_FALSE(other->fromCache);
}

// What the tuner searches is what the gemm kernel's parameter schema marks
// as tuning parameters, in -p order.
TEST(Tuner, GemmSchemaTuningParametersAreTheSpaces) {
  std::vector<std::string> tuning;
  for (const kernels::KernelParam &kp : kernels::gemmKernelInfo().params)
    if (kp.role == kernels::ParamRole::Tuning)
      tuning.push_back(kp.name);
  EXPECT_EQ(tuning, gemmTuningParams());
}

// The cache key's code part holds every gemm parameter (given or defaulted)
// but the problem's sizes and scales, which the shape class and the kernel's
// arguments carry, and the tuning parameters; a given one is pinned instead.
TEST(Tuner, CodeKeyHoldsTheSchemasCodeParameters) {
  kernels::KernelParams ps = shape(500, 512, 300);
  ps["dtype"] = "f16";
  ps["block_m"] = "64";
  Result<TunableGemm> g = kernels::tunableGemm(kernels::gemmKernelInfo(), ps);
  ASSERT_TRUE(g) << g.error();
  std::map<std::string, std::string> key;
  std::stringstream ss(g->codeKey);
  for (std::string item; std::getline(ss, item, ';');)
    key[item.substr(0, item.find('='))] = item.substr(item.find('=') + 1);
  const std::set<std::string> notInKey = {"M",     "N",       "K",      "scale_a", "scale_b", "block_m",
                                           "block_n", "block_k", "waves", "stages",  "split_k"};
  for (const kernels::KernelParam &kp : kernels::gemmKernelInfo().params)
    EXPECT_EQ(key.count(kp.name), notInKey.count(kp.name) ? 0u : 1u) << kp.name;
  EXPECT_EQ(key["dtype"], "f16");
  EXPECT_EQ(key["out"], "f32");  // a default
  EXPECT_EQ(g->pinned, (std::map<std::string, int64_t>{{"block_m", 64}}));
}

TEST(Tuner, GivenTuningParametersArePinned) {
  TuneOptions o = options(freshDir("pinned"));
  kernels::KernelParams ps = shape(512, 512, 512);
  ps["waves"] = "4";
  ps["block_k"] = "32";
  Result<TuneResult> r = tuneShippedKernel(kernels::gemmKernelInfo(), ps, o);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->stats.spaceSize, 8u);
  for (const RankedCandidate &c : r->record.ranking) {
    EXPECT_EQ(c.tile.waves, 4);
    EXPECT_EQ(c.tile.blockK, 32);
  }
}

TEST(Tuner, Errors) {
  TuneOptions o = options(freshDir("errors"));
  kernels::KernelParams bad = shape(512, 512, 512);
  bad["dtype"] = "f64";
  Result<TuneResult> r = tuneShippedKernel(kernels::gemmKernelInfo(), bad, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("dtype"), std::string::npos) << r.error();

  kernels::KernelParams badPin = shape(512, 512, 512);
  badPin["waves"] = "many";
  EXPECT_FALSE(tuneShippedKernel(kernels::gemmKernelInfo(), badPin, o));

  kernels::KernelInfo notTunable = kernels::gemmKernelInfo();
  notTunable.name = "softmax";
  Result<TuneResult> n = tuneShippedKernel(notTunable, shape(1, 1, 1), o);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().find("no tuning space"), std::string::npos) << n.error();

  o.arch = "gfx000";
  EXPECT_FALSE(tuneShippedKernel(kernels::gemmKernelInfo(), shape(1, 1, 1), o));
}

TEST(TuneCli, PrintsTheBestConfigAndACacheHit_gfx942) {
  TuneCliOptions cli;
  cli.cacheDir = freshDir("cli");
  cli.device = DeviceKind::Emulator;
  kernels::KernelParams ps = shape(256, 256, 256);
  ps["waves"] = "4";
  ps["stages"] = "2";
  ps["block_k"] = "32";
  std::ostringstream out, err;
  ASSERT_EQ(runTuneCommand(kernels::gemmKernelInfo(), ps, cli, out, err), 0) << err.str();
  std::string text = out.str();
  EXPECT_NE(text.find("best: -p block_m="), std::string::npos) << text;
  EXPECT_NE(text.find("-p waves=4 -p stages=2 (v_mfma_"), std::string::npos) << text;
  EXPECT_NE(text.find("% of peak)"), std::string::npos) << text;
  EXPECT_NE(text.find("  #  block_m"), std::string::npos) << text;
  EXPECT_EQ(err.str(), "");  // not a TTY: no progress line

  std::ostringstream out2, err2;
  ASSERT_EQ(runTuneCommand(kernels::gemmKernelInfo(), ps, cli, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("cache hit"), std::string::npos) << out2.str();
  EXPECT_EQ(out2.str().substr(out2.str().find("best:")), text.substr(text.find("best:")));

  kernels::KernelParams bad = ps;
  bad["block_m"] = "0";
  std::ostringstream out3, err3;
  EXPECT_EQ(runTuneCommand(kernels::gemmKernelInfo(), bad, cli, out3, err3), 1);
  EXPECT_NE(err3.str().find("block_m"), std::string::npos) << err3.str();
}
