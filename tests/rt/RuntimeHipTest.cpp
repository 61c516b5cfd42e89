// libtilec_rt on HIP: the stand-in libamdhip64.so of tests/unit/runtime
// (StubHip.cpp, found through LD_LIBRARY_PATH, with no CUDA driver beside it)
// runs the gfx942 bundle that `tilec --emit=bundle` exported at build time.
// The runtime picks the bundle's entry from the device's gcnArchName and
// loads its code object once; what reaches hipModuleLaunchKernel is the
// entry, the manifest's grid and block, and each tensor as its pointer and
// extents. Links libtilec_rt only (and GoogleTest).
#include "tilec/rt.hpp"
#include "tilec/runtime.h"

#include "StubHip.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <string>

namespace {

using tilec::rt::Arg;

const std::string kGemm = "gemm_bf16_f32_128x128x32_w4_s2";

/// The stub's controls (StubHip.h), looked up on the loaded library.
struct Stub {
  Stub() {
    void *lib = dlopen("libamdhip64.so", RTLD_NOW);
    trace = lib ? reinterpret_cast<const char *(*)()>(dlsym(lib, "tilecStubHipTrace")) : nullptr;
    setParamBytes = lib ? reinterpret_cast<void (*)(const char *)>(dlsym(lib, "tilecStubHipSetParamBytes")) : nullptr;
  }
  const char *(*trace)() = nullptr;
  void (*setParamBytes)(const char *) = nullptr;
};

const Stub &stub() {
  static Stub s;
  return s;
}

void *fakePointer(uintptr_t a) { return reinterpret_cast<void *>(a); }

/// How many lines of the stub's trace start with `prefix`.
int countLines(const std::string &trace, const std::string &prefix) {
  int n = 0;
  for (size_t at = 0; at < trace.size();) {
    size_t end = trace.find('\n', at);
    n += trace.compare(at, prefix.size(), prefix) == 0;
    at = end == std::string::npos ? trace.size() : end + 1;
  }
  return n;
}

std::string lastLine(const std::string &trace, const std::string &prefix) {
  std::string found;
  for (size_t at = 0; at < trace.size();) {
    size_t end = trace.find('\n', at);
    std::string line = trace.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.compare(0, prefix.size(), prefix) == 0)
      found = line;
    at = end == std::string::npos ? trace.size() : end + 1;
  }
  return found;
}

class RuntimeHip : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(stub().trace && stub().setParamBytes) << "libamdhip64.so is not the test stub (LD_LIBRARY_PATH)";
    ASSERT_TRUE(bundle.open(TILEC_RT_GEMM_BUNDLE)) << tilec_last_error();
  }
  tilec::rt::Bundle bundle;
};

TEST_F(RuntimeHip, PicksTheTargetFromTheDevicesArchName) {
  std::string target;
  ASSERT_TRUE(bundle.deviceTarget(target)) << tilec_last_error();
  EXPECT_EQ(target, "gfx942");  // of "gfx942:sramecc+:xnack-"
}

TEST_F(RuntimeHip, GemmLaunchReachesHipModuleLaunchKernel) {
  const int loadsBefore = countLines(stub().trace(), "hipModuleLoadData");
  const int64_t M = 256, N = 384, K = 64;
  stub().setParamBytes("8,4,4,8,4,4,8,4,4");  // A, B, C: a pointer and two int32 extents each
  for (int i = 0; i < 3; ++i) {
    tilec::rt::Status s = bundle.launch(kGemm, {Arg::tensor(fakePointer(0x10000), "bf16", {M, K}),
                                                Arg::tensor(fakePointer(0x20000), "bf16", {K, N}),
                                                Arg::tensor(fakePointer(0x30000), "f32", {M, N})});
    ASSERT_TRUE(s) << s.message;
  }
  stub().setParamBytes("");
  const std::string trace = stub().trace();
  // The manifest's grid ceil(M / 128) x ceil(N / 128), 256 threads (4 waves
  // of 64), LDS static in the code object (no dynamic shared memory).
  const std::string launch = lastLine(trace, "hipModuleLaunchKernel");
  EXPECT_NE(launch.find(" " + kGemm + "_gfx942 grid=2x3x1 block=256x1x1 params=65536,256,64,131072,64,384,196608,256,384"),
            std::string::npos)
      << launch;
  EXPECT_EQ(launch.find(" -> "), std::string::npos) << launch;  // the stub accepted it
  // One code object load for the bundle and device, whatever the launches.
  EXPECT_EQ(countLines(trace, "hipModuleLoadData"), loadsBefore + 1) << trace;
}

TEST_F(RuntimeHip, BadLaunchesAreRefusedBeforeHip) {
  const int launchesBefore = countLines(stub().trace(), "hipModuleLaunchKernel");
  tilec::rt::Status s = bundle.launch(kGemm, {Arg::tensor(fakePointer(0x10000), "f16", {128, 64}),
                                              Arg::tensor(fakePointer(0x20000), "bf16", {64, 128}),
                                              Arg::tensor(fakePointer(0x30000), "f32", {128, 128})});
  EXPECT_EQ(s.code, TILEC_ERROR_DTYPE) << s.message;
  EXPECT_NE(s.message.find("launch of " + kGemm + " (gfx942)"), std::string::npos) << s.message;
  s = bundle.launch(kGemm, {Arg::tensor(fakePointer(0x10000), "bf16", {128, 60}),
                            Arg::tensor(fakePointer(0x20000), "bf16", {60, 128}),
                            Arg::tensor(fakePointer(0x30000), "f32", {128, 128})});
  EXPECT_EQ(s.code, TILEC_ERROR_DIVISIBILITY) << s.message;
  EXPECT_EQ(countLines(stub().trace(), "hipModuleLaunchKernel"), launchesBefore);
}

} // namespace
