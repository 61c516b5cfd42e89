// tilec::Device's HIP path against the stub HIP runtime (StubHip.cpp), which
// ctest puts first on LD_LIBRARY_PATH so that Device's dlopen("libamdhip64.so")
// finds it: devices are chosen by architecture, a code object is loaded once
// per device and unloaded when the device closes, and a launch's time is what
// the GPU's events measured. Each test runs in a process of its own (ctest),
// so each starts with a fresh stub.
#include "StubHip.h"

#include "tilec/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <dlfcn.h>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// The stub's control functions, from the library Device will load.
struct StubControl {
  decltype(&tilecStubHipSetDevices) setDevices = nullptr;
  decltype(&tilecStubHipSetEventMilliseconds) setEventMilliseconds = nullptr;
  decltype(&tilecStubHipTrace) trace = nullptr;
};

const StubControl &stubControl() {
  static StubControl c = [] {
    StubControl s;
    if (void *lib = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL)) {
      s.setDevices = reinterpret_cast<decltype(s.setDevices)>(dlsym(lib, "tilecStubHipSetDevices"));
      s.setEventMilliseconds =
          reinterpret_cast<decltype(s.setEventMilliseconds)>(dlsym(lib, "tilecStubHipSetEventMilliseconds"));
      s.trace = reinterpret_cast<decltype(s.trace)>(dlsym(lib, "tilecStubHipTrace"));
    }
    return s;
  }();
  return c;
}

/// The stub's trace lines that start with `prefix`.
std::vector<std::string> calls(const std::string &prefix) {
  std::vector<std::string> out;
  std::istringstream in(stubControl().trace());
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, prefix.size(), prefix) == 0)
      out.push_back(line);
  return out;
}

/// The index in the trace of the first line that starts with `prefix` at or
/// after line `from`; -1 when there is none.
long traceIndex(const std::string &prefix, long from = 0) {
  std::istringstream in(stubControl().trace());
  long i = 0;
  for (std::string line; std::getline(in, line); ++i)
    if (i >= from && line.compare(0, prefix.size(), prefix) == 0)
      return i;
  return -1;
}

/// A kernel of one f32 tensor argument 'A' ([M, 64]), one workgroup of 4
/// wave64 waves per 64 rows. Its code object is an ELF header and `tag`: the
/// stub reads only the ELF magic, and different tags make different code objects.
tilec::CompiledKernel stubKernel(const std::string &name, char tag = 'a', const std::string &arch = "gfx942") {
  tilec::CompiledKernel k;
  k.name = name;
  k.arch = arch;
  k.codeObject = {'\x7f', 'E', 'L', 'F', tag};
  k.numWaves = 4;
  k.waveSize = 64;
  k.grid = {tilec::GridDim{0, 0, 64}};
  tilec::KernelParamInfo a;
  a.kind = tilec::KernelParamInfo::Tensor;
  a.elemType = "f32";
  a.rank = 2;
  a.name = "A";
  k.params = {a};
  return k;
}

class HipDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(stubControl().setDevices && stubControl().setEventMilliseconds && stubControl().trace)
        << "the libamdhip64.so on the library path is not the test's stub (tests/unit/runtime/StubHip.cpp): "
           "run this test through ctest, which sets LD_LIBRARY_PATH";
  }

  /// Opens `dev`, the HIP device of `arch` among the stub's `devices`.
  bool open(const char *devices, const std::string &arch = "gfx942") {
    stubControl().setDevices(devices);
    tilec::Result<std::unique_ptr<tilec::Device>> d = tilec::Device::open(tilec::DeviceKind::Hip, arch);
    EXPECT_TRUE(d.ok()) << d.error();
    if (d.ok())
      dev = std::move(*d);
    return dev != nullptr;
  }

  /// A buffer of `dev` for 128 x 64 f32 and the argument list over it.
  std::vector<tilec::LaunchArg> args() {
    tilec::Result<void *> p = dev->allocate(128 * 64 * sizeof(float));
    EXPECT_TRUE(p.ok()) << p.error();
    buffers.push_back(p.ok() ? *p : nullptr);
    return {tilec::LaunchArg::tensor(buffers.back(), {128, 64})};
  }

  /// Releases the buffers, then closes the device.
  void close() {
    for (void *p : buffers)
      dev->release(p);
    buffers.clear();
    dev.reset();
  }

  void TearDown() override {
    if (dev)
      close();
  }

  std::unique_ptr<tilec::Device> dev;
  std::vector<void *> buffers;
};

TEST_F(HipDeviceTest, RepeatedLaunchesOfOneCodeObjectLoadOneModule) {
  ASSERT_TRUE(open("gfx942:sramecc+:xnack-"));
  const tilec::CompiledKernel k = stubKernel("k");
  const std::vector<tilec::LaunchArg> a = args();
  constexpr int kLaunches = 5;
  for (int i = 0; i < kLaunches; ++i) {
    tilec::Result<tilec::LaunchStats> s = dev->launch(k, a);
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(s->grid, (std::array<int64_t, 3>{2, 1, 1}));
  }
  // The same bytes in another CompiledKernel (another address) are the same code object.
  const tilec::CompiledKernel copy = stubKernel("k");
  ASSERT_TRUE(dev->launch(copy, a).ok());
  EXPECT_EQ(calls("hipModuleLoadData").size(), 1u) << stubControl().trace();
  EXPECT_EQ(calls("hipModuleGetFunction").size(), 1u) << stubControl().trace();
  EXPECT_EQ(calls("hipModuleLaunchKernel device=0 module=1 k grid=2x1x1 block=256x1x1").size(), kLaunches + 1u)
      << stubControl().trace();
  EXPECT_EQ(calls("hipModuleUnload").size(), 0u) << stubControl().trace();

  // Another code object is a module of its own.
  ASSERT_TRUE(dev->launch(stubKernel("k", 'b'), a).ok());
  EXPECT_EQ(calls("hipModuleLoadData").size(), 2u) << stubControl().trace();
}

TEST_F(HipDeviceTest, ClosingTheDeviceUnloadsItsModulesAndEvents) {
  ASSERT_TRUE(open("gfx942:sramecc+:xnack-"));
  const std::vector<tilec::LaunchArg> a = args();
  ASSERT_TRUE(dev->launch(stubKernel("k", 'a'), a).ok());
  ASSERT_TRUE(dev->launch(stubKernel("k", 'b'), a).ok());
  ASSERT_TRUE(dev->launch(stubKernel("k", 'a'), a).ok());
  close();
  std::vector<std::string> loads = calls("hipModuleLoadData"), unloads = calls("hipModuleUnload");
  ASSERT_EQ(loads.size(), 2u) << stubControl().trace();
  ASSERT_EQ(unloads.size(), 2u) << stubControl().trace();
  // Each loaded module unloaded once, without an error (the stub appends one).
  std::vector<std::string> loaded, unloaded;
  for (const std::string &l : loads)
    loaded.push_back(l.substr(l.find("module=")));
  for (const std::string &u : unloads)
    unloaded.push_back(u.substr(u.find("module=")));
  std::sort(loaded.begin(), loaded.end());
  std::sort(unloaded.begin(), unloaded.end());
  EXPECT_EQ(loaded, unloaded) << stubControl().trace();
  EXPECT_EQ(calls("hipEventCreate").size(), calls("hipEventDestroy event=").size()) << stubControl().trace();
}

TEST_F(HipDeviceTest, OpensTheDeviceOfTheRequestedArch) {
  ASSERT_TRUE(open("gfx90a:sramecc+:xnack-,gfx942:sramecc+:xnack-"));
  EXPECT_EQ(dev->description(), "hip (gfx942, device 1)");
  const std::vector<tilec::LaunchArg> a = args();
  tilec::Result<tilec::LaunchStats> s = dev->launch(stubKernel("k"), a);
  ASSERT_TRUE(s.ok()) << s.error();
  // Loaded and launched on device 1 (the stub rejects a launch on a device
  // other than its module's).
  EXPECT_EQ(calls("hipModuleLoadData device=1 ").size(), 1u) << stubControl().trace();
  EXPECT_EQ(calls("hipModuleLaunchKernel device=1 module=").size(), 1u) << stubControl().trace();
  EXPECT_EQ(calls("hipModuleLaunchKernel device=0").size(), 0u) << stubControl().trace();
}

TEST_F(HipDeviceTest, NoDeviceOfTheRequestedArchIsAClearError) {
  stubControl().setDevices("gfx90a:sramecc+:xnack-,gfx1100");
  tilec::Result<std::unique_ptr<tilec::Device>> d = tilec::Device::open(tilec::DeviceKind::Hip, "gfx942");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), "tilec: error: --device=hip: no HIP device with arch gfx942: found "
                       "gfx90a:sramecc+:xnack- (device 0), gfx1100 (device 1)");
  // Auto falls back to the emulator, which runs any known arch.
  tilec::Result<std::unique_ptr<tilec::Device>> a = tilec::Device::open(tilec::DeviceKind::Auto, "gfx942");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ((*a)->kind(), tilec::DeviceKind::Emulator);
  EXPECT_EQ(calls("hipModuleLoadData").size(), 0u);
}

TEST_F(HipDeviceTest, AKernelCompiledForAnotherArchIsRefused) {
  ASSERT_TRUE(open("gfx942:sramecc+:xnack-"));
  tilec::Result<tilec::LaunchStats> s = dev->launch(stubKernel("k", 'a', "gfx90a"), args());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "launch of k: compiled for gfx90a, hip (gfx942, device 0) runs gfx942");
  EXPECT_EQ(calls("hipModuleLoadData").size(), 0u) << stubControl().trace();
}

TEST_F(HipDeviceTest, TheLaunchTimeIsWhatTheEventsMeasured) {
  // 125 ms is exact in float and far above the host time of the stub's
  // launch, which does nothing: a host clock around it would read microseconds.
  constexpr float kEventMs = 125.0f;
  stubControl().setEventMilliseconds(kEventMs);
  ASSERT_TRUE(open("gfx942:sramecc+:xnack-"));
  const std::vector<tilec::LaunchArg> a = args();
  for (int i = 0; i < 2; ++i) {
    tilec::Result<tilec::LaunchStats> s = dev->launch(stubKernel("k"), a);
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_DOUBLE_EQ(s->seconds, kEventMs / 1e3);
  }
  // The events bracket the launch: start recorded, launch, stop recorded,
  // stop waited for, then the interval read (the stub refuses it otherwise).
  const long launch = traceIndex("hipModuleLaunchKernel");
  ASSERT_GE(launch, 0) << stubControl().trace();
  const long startRecord = traceIndex("hipEventRecord");
  const long stopRecord = traceIndex("hipEventRecord", launch);
  const long stopSync = traceIndex("hipEventSynchronize", launch);
  const long elapsed = traceIndex("hipEventElapsedTime", launch);
  EXPECT_TRUE(0 <= startRecord && startRecord < launch && launch < stopRecord && stopRecord < stopSync &&
              stopSync < elapsed)
      << stubControl().trace();
  EXPECT_EQ(calls("hipEventElapsedTime").size(), 2u);
  EXPECT_EQ(calls("hipEventCreate").size(), 2u) << "two events, reused by every launch\n" << stubControl().trace();
}

TEST_F(HipDeviceTest, ATensorOfTwoGiBIsRefusedBeforeAnyHipCall) {
  ASSERT_TRUE(open("gfx942:sramecc+:xnack-"));
  // 16384 x 32768 f32 = 2^31 bytes; refused on its sizes, so no memory is needed.
  tilec::Result<tilec::LaunchStats> s = dev->launch(stubKernel("k"), {tilec::LaunchArg::tensor(nullptr, {16384, 32768})});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "launch of k: argument 0 ('A'): 2147483648 bytes; tensors are limited to 2^31 - 4 bytes "
                       "(32-bit buffer offsets)");
  EXPECT_EQ(calls("hipModuleLoadData").size(), 0u) << stubControl().trace();
  EXPECT_EQ(calls("hipModuleLaunchKernel").size(), 0u) << stubControl().trace();
}

} // namespace
