// The compiled-code cost model (lib/Model) on the shipped default GEMM as
// compiled for gfx942: what it reads from the code agrees with what the
// kernel must do, and its terms are consistent with its total.
#include "Model/AsmModel.h"
#include "Registry.h"

#include "tilec/tilec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

using namespace tilec;

namespace {

TEST(AsmModelGemm, TermsAreConsistentForTheDefaultGemm_gfx942) {
  const int64_t M = 4096, N = 4096, K = 4096;
  Result<Kernel> k = kernels::buildKernel("gemm", {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}});
  ASSERT_TRUE(k) << k.error();
  Result<CompiledKernel> ck = compile(*k, {.arch = "gfx942"});
  ASSERT_TRUE(ck) << ck.error();
  const TargetInfo &target = *lookupTarget("gfx942");
  const model::DeviceFacts &device = *model::deviceFacts("gfx942");
  model::CodeCost code = model::analyzeAmdAssembly(disassemble(*ck), target, device);
  ASSERT_TRUE(code.error.empty()) << code.error;
  ASSERT_GE(code.mainLoop, 0);
  const model::IterationCost &loop = code.loops[size_t(code.mainLoop)].cost;

  // The defaults: 128x128x32 tiles over 4 waves (kernels/gemm/Gemm.cpp),
  // pipelined over 2 LDS buffers; the AMD k loop is emitted once per buffer
  // (each copy's buffer offsets then constants), so one pass does 2 k steps.
  const int64_t bm = 128, bn = 128, bk = 32, stepsPerPass = 2;
  const int waves = ck->numWaves;
  ASSERT_EQ(waves, 4);
  // The main loop holds the kernel's matrix instructions (the report counts
  // them in the whole code) and does its k steps' matrix work per pass.
  EXPECT_GT(loop.matrixInstructions, 0);
  EXPECT_LE(loop.matrixInstructions, ck->report.matrixInstructions);
  EXPECT_DOUBLE_EQ(loop.matrixFlops * waves, 2.0 * bm * bn * bk * stepsPerPass);
  // Its loads bring those k steps' A and B tiles (bf16), at full width.
  EXPECT_DOUBLE_EQ(loop.globalLoadBytes * waves, double(bm * bk + bk * bn) * 2 * stepsPerPass);
  EXPECT_GT(loop.ldsCycles, 0);
  EXPECT_GE(loop.chainCycles, loop.exposedLatencyCycles);

  model::LaunchShape launch;
  launch.workgroups = (M / bm) * (N / bn);
  launch.wavesPerWorkgroup = waves;
  launch.matrixFlopsPerWorkgroup = 2.0 * bm * bn * K;
  launch.hbmBytes = 2.0 * (M * K + K * N) + 4.0 * M * N;
  launch.occupancy = ck->report.occupancy;
  model::KernelEstimate e = model::estimateKernel(code, launch, device);
  ASSERT_TRUE(e.error.empty()) << e.error;
  EXPECT_DOUBLE_EQ(e.loopTrips, double(K / bk / stepsPerPass));
  // The time is the largest term (the loop's per-round maximum summed is at
  // least each term summed over the rounds, and the code outside the loop
  // adds to it), and the bound names a term no smaller than any other.
  double largest = 0, bound = -1;
  for (const model::Term &t : e.terms) {
    EXPECT_GE(t.seconds, 0) << t.name;
    if (t.name != "outside-loop")
      EXPECT_LE(t.seconds, e.seconds * (1 + 1e-12)) << t.name;
    largest = std::max(largest, t.seconds);
    if (t.name == e.bound)
      bound = t.seconds;
  }
  EXPECT_DOUBLE_EQ(bound, largest);
  // The matrix term is at least the kernel's matrix cycles spread evenly over
  // every SIMD (equal when every SIMD has the same work; the last round's
  // tail makes it larger).
  double ideal = double(launch.workgroups) * waves * e.loopTrips * loop.matrixCycles /
                 (double(device.units) * device.simdsPerUnit * device.clockHz);
  double matrix = 0;
  for (const model::Term &t : e.terms)
    if (t.name == "matrix")
      matrix = t.seconds;
  EXPECT_GE(matrix, ideal * (1 - 1e-12));
  EXPECT_LE(matrix, ideal * 2);  // at most two rounds for 1024 workgroups at 2 per CU: the tail at most doubles it
}

} // namespace

// sm_90a's default GEMM issues warpgroup wgmma: each of a warpgroup's 4 warps
// carries a quarter of an instruction's work, so the loop's matrix work per
// pass is still one k step of the tile.
TEST(AsmModelGemm, WarpgroupInstructionsCountOnceAcrossTheirWarps) {
  const kernels::KernelInfo *gemm = kernels::findKernel("gemm");
  ASSERT_NE(gemm, nullptr);
  const kernels::KernelParams params = kernels::withTargetDefaults(*gemm, {}, "sm_90a");
  Result<Kernel> k = gemm->build(params);
  ASSERT_TRUE(k) << k.error();
  Result<CompiledKernel> ck = compile(*k, {.arch = "sm_90a"});
  ASSERT_TRUE(ck) << ck.error();
  ASSERT_NE(ck->assembly.find("wgmma.mma_async"), std::string::npos);
  model::CodeCost code = model::analyzePtx(ck->assembly, *lookupTarget("sm_90a"), *model::deviceFacts("sm_90a"));
  ASSERT_TRUE(code.error.empty()) << code.error;
  ASSERT_GE(code.mainLoop, 0);
  const model::IterationCost &loop = code.loops[size_t(code.mainLoop)].cost;
  // One k step of the NVIDIA default tile (128 x 256 x 64 at the default 4096^3).
  auto value = [&](const std::string &name) {  // given or defaulted by the target, else the kernel's default
    if (auto it = params.find(name); it != params.end())
      return std::stod(it->second);
    for (const kernels::KernelParam &p : gemm->params)
      if (p.name == name)
        return std::stod(p.defaultValue);
    ADD_FAILURE() << "gemm has no parameter " << name;
    return 0.0;
  };
  const double tile = value("block_m") * value("block_n") * value("block_k");
  EXPECT_EQ(tile, 128.0 * 256 * 64);
  EXPECT_DOUBLE_EQ(loop.matrixFlops * ck->numWaves, 2.0 * tile);
}
