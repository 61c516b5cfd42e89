// The emulator's checkers as a caller of the device API sees them: a kernel
// that reads LDS no lane wrote, writes LDS misaligned or issues a misaligned
// b128 buffer load (an invalid instruction) gets its findings counted in
// LaunchStats, printed in the checks line (what `tilec --run` prints), and
// fails LaunchStats::clean() and RunResult::passed() (what makes `tilec --run`
// exit non-zero).
#include "Run.h"

#include "tilec/runtime.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace tilec;
using namespace tilec::kernels;

namespace {

/// Lanes 0..31 fill their LDS slot, every lane reads its own: lanes 32..63
/// read poison. Each lane also writes 8 bytes at 8 * lane + skew.
CompiledKernel ldsCheckKernel() {
  CompiledKernel k;
  k.name = "lds_checks";
  k.arch = "gfx942";
  k.numWaves = 1;
  k.waveSize = 64;
  k.params = {{KernelParamInfo::Tensor, "f32", 1, "out"}, {KernelParamInfo::I32, "", 0, "skew"}};
  k.paramTypes = {"float *", "int", "int"};
  k.hip = R"(#include "tilec_prelude.h"
extern "C" __global__ void lds_checks(float *out, int n, int skew) {
  __shared__ __attribute__((aligned(16))) float buf[256];
  int t = tl::hw::thread_id();
  if (t < 32) tl::hw::lds_write(buf + t, 2.0f);
  out[t] = tl::hw::lds_read(buf + t);
  tl::uint2_t zero = {0u, 0u};
  tl::hw::lds_write((tl::uint2_t *)((unsigned char *)(buf + 64) + 8 * t + skew), zero);
}
)";
  return k;
}

TEST(LaunchChecks, LdsFindingsReachTheStatsTheChecksLineAndTheVerdict) {
  Result<std::unique_ptr<Device>> dev = Device::open(DeviceKind::Emulator, "gfx942");
  ASSERT_TRUE(dev.ok()) << dev.error();
  Result<void *> out = (*dev)->allocate(64 * sizeof(float));
  ASSERT_TRUE(out.ok()) << out.error();
  const CompiledKernel k = ldsCheckKernel();
  Result<LaunchStats> stats = (*dev)->launch(k, {LaunchArg::tensor(*out, {64}), LaunchArg::i32(4)});
  ASSERT_TRUE(stats.ok()) << stats.error();
  EXPECT_TRUE(stats->checked);
  EXPECT_EQ(stats->uninitializedLdsReads, 32);
  EXPECT_EQ(stats->misalignedLdsAccesses, 64);
  EXPECT_FALSE(stats->clean());
  EXPECT_NE(stats->checksLine().find("uninitialized_lds=32 misaligned_lds=64"), std::string::npos)
      << stats->checksLine();
  int uninitialized = 0, misaligned = 0;
  for (const std::string &m : stats->messages) {
    uninitialized += m.rfind("uninitialized LDS read: kernel lds_checks", 0) == 0;
    misaligned += m.rfind("misaligned LDS access: kernel lds_checks", 0) == 0;
  }
  EXPECT_GT(uninitialized, 0);
  EXPECT_GT(misaligned, 0);
  std::vector<float> host(64);
  ASSERT_TRUE((*dev)->copyToHost(host.data(), *out, host.size() * sizeof(float)));
  EXPECT_EQ(host[31], 2.0f);
  EXPECT_TRUE(std::isnan(host[32])) << host[32];  // the poison

  RunResult verdict;
  verdict.elements = 64;
  verdict.stats = *stats;
  EXPECT_FALSE(verdict.passed());

  Result<LaunchStats> fine = (*dev)->launch(k, {LaunchArg::tensor(*out, {64}), LaunchArg::i32(0)});
  ASSERT_TRUE(fine.ok()) << fine.error();
  EXPECT_EQ(fine->misalignedLdsAccesses, 0);
  EXPECT_EQ(fine->uninitializedLdsReads, 32);
}

TEST(LaunchChecks, InvalidInstructionsReachTheStatsTheChecksLineAndTheVerdict) {
  Result<std::unique_ptr<Device>> dev = Device::open(DeviceKind::Emulator, "gfx942");
  ASSERT_TRUE(dev.ok()) << dev.error();
  Result<void *> data = (*dev)->allocate(64 * 16 + 16);
  ASSERT_TRUE(data.ok()) << data.error();
  CompiledKernel k;
  k.name = "skewed_load";
  k.arch = "gfx942";
  k.numWaves = 1;
  k.waveSize = 64;
  k.params = {{KernelParamInfo::Tensor, "f32", 1, "data"}, {KernelParamInfo::I32, "", 0, "skew"}};
  k.paramTypes = {"float *", "int", "int"};
  k.hip = R"(#include "tilec_prelude.h"
extern "C" __global__ void skewed_load(float *data, int n, int skew) {
  int t = tl::hw::thread_id();
  tl::hw::rsrc_t r = tl::hw::make_rsrc(data, 4 * n, 0x00020000u);
  tl::uint4_t v = tl::hw::buffer_load_b128(r, 16 * t + skew);
  tl::hw::buffer_store_b32(v[0], r, 16 * t);
}
)";
  auto launch = [&](int skew) {
    return (*dev)->launch(k, {LaunchArg::tensor(*data, {64 * 4 + 4}), LaunchArg::i32(skew)});
  };
  Result<LaunchStats> skewed = launch(4);
  ASSERT_TRUE(skewed.ok()) << skewed.error();
  EXPECT_EQ(skewed->invalidInstructions, 64);
  EXPECT_FALSE(skewed->clean());
  EXPECT_NE(skewed->checksLine().find(" invalid_instructions=64"), std::string::npos) << skewed->checksLine();
  RunResult verdict;
  verdict.stats = *skewed;
  EXPECT_FALSE(verdict.passed());
  Result<LaunchStats> aligned = launch(0);
  ASSERT_TRUE(aligned.ok()) << aligned.error();
  EXPECT_TRUE(aligned->clean()) << aligned->checksLine();
  EXPECT_EQ(aligned->checksLine().find("invalid_instructions"), std::string::npos) << aligned->checksLine();
}

} // namespace
