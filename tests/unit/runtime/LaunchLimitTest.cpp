// Launch arguments are checked on their sizes before anything runs: a tensor
// must fit the 32-bit byte offsets of the kernels' buffer accesses
// (tilec::kMaxTensorBytes). The checks need no memory: the tensors here are
// never allocated.
#include "tilec/runtime.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

/// A kernel of one rank-2 tensor argument 'A' of `elemType`.
tilec::CompiledKernel oneTensorKernel(const std::string &elemType) {
  tilec::CompiledKernel k;
  k.name = "k";
  k.arch = "gfx942";
  k.numWaves = 4;
  k.waveSize = 64;
  k.grid = {tilec::GridDim{0, 0, 64}};
  tilec::KernelParamInfo a;
  a.kind = tilec::KernelParamInfo::Tensor;
  a.elemType = elemType;
  a.rank = 2;
  a.name = "A";
  k.params = {a};
  return k;
}

std::string launchError(const std::string &elemType, std::vector<int64_t> shape) {
  tilec::Status s = tilec::checkLaunchArgs(oneTensorKernel(elemType), {tilec::LaunchArg::tensor(nullptr, shape)});
  return s.ok() ? "" : s.error();
}

TEST(LaunchLimit, ATensorOfTwoGiBIsRefusedNamingTheArgument) {
  // 32768 x 32768 f16: 2^31 bytes, each extent far below 2^31.
  EXPECT_EQ(launchError("f16", {32768, 32768}),
            "launch of k: argument 0 ('A'): 2147483648 bytes; tensors are limited to 2^31 - 4 bytes (32-bit buffer "
            "offsets)");
}

TEST(LaunchLimit, TheLimitIsTheOffsetOfElementsOutsideTheTensor) {
  // kMaxTensorBytes bytes pass and one more is refused, for 1-byte elements
  // (where every byte count is possible) and 2-byte ones.
  EXPECT_EQ(launchError("f8E4M3FNUZ", {1, tilec::kMaxTensorBytes}), "");
  EXPECT_NE(launchError("f8E4M3FNUZ", {1, tilec::kMaxTensorBytes + 1}), "");
  EXPECT_EQ(launchError("bf16", {2, tilec::kMaxTensorBytes / 4}), "");
  EXPECT_NE(launchError("bf16", {2, tilec::kMaxTensorBytes / 4 + 1}), "");
  EXPECT_EQ(tilec::kMaxTensorBytes, 0x7fffffff & ~3) << "tl::Global::outside in lib/Emit/prelude/tilec_global.h";
}

TEST(LaunchLimit, AByteCountPastInt64IsRefusedToo) {
  EXPECT_EQ(launchError("f32", {2147483647, 2147483647}),
            "launch of k: argument 0 ('A'): more than 2^63 bytes; tensors are limited to 2^31 - 4 bytes (32-bit "
            "buffer offsets)");
}

TEST(LaunchLimit, TheEmulatorRefusesTheLaunchBeforeRunningIt) {
  tilec::Result<std::unique_ptr<tilec::Device>> dev = tilec::Device::open(tilec::DeviceKind::Emulator, "gfx942");
  ASSERT_TRUE(dev.ok()) << dev.error();
  // No HIP text and no memory: the sizes alone decide.
  tilec::Result<tilec::LaunchStats> s =
      (*dev)->launch(oneTensorKernel("f32"), {tilec::LaunchArg::tensor(nullptr, {16384, 32768})});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "launch of k: argument 0 ('A'): 2147483648 bytes; tensors are limited to 2^31 - 4 bytes "
                       "(32-bit buffer offsets)");
}

} // namespace
