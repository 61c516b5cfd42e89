// libtilec_rt against the CUDA stub (stub_cuda.c, found as libcuda.so.1
// through LD_LIBRARY_PATH): what reaches cuLaunchKernel, and the errors of
// bad launches. Links libtilec_rt only (and GoogleTest).
#include "tilec/rt.hpp"
#include "tilec/runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;
using tilec::rt::Arg;

const std::string kGemm = "gemm_bf16_f32_128x128x32_w4_s2";

/// The stub's record of its last launch and its call counts.
struct Stub {
  Stub() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
      lib = dlopen("libcuda.so.1", RTLD_NOW);
    lastLaunch = reinterpret_cast<const char *(*)()>(dlsym(lib, "tilec_stub_last_launch"));
    calls = reinterpret_cast<int (*)(const char *)>(dlsym(lib, "tilec_stub_calls"));
    lastTensorMap = reinterpret_cast<const char *(*)()>(dlsym(lib, "tilec_stub_last_tensor_map"));
  }
  const char *(*lastLaunch)() = nullptr;
  const char *(*lastTensorMap)() = nullptr;
  int (*calls)(const char *) = nullptr;
};

const Stub &stub() {
  static Stub s;
  return s;
}

/// "entry=... params=..." as the stub writes it (stub_cuda.c).
std::string record(const std::string &entry, const int64_t grid[3], int block, int64_t shared, const void *stream,
                   const std::vector<uint64_t> &params) {
  char head[512];
  std::snprintf(head, sizeof head, "entry=%s grid=%lld,%lld,%lld block=%d,1,1 shared=%lld stream=%p params=",
                entry.c_str(), (long long)grid[0], (long long)grid[1], (long long)grid[2], block, (long long)shared,
                stream);
  std::string s = head;
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? "," : "") + std::to_string(params[i]);
  return s;
}

uint64_t address(const void *p) { return reinterpret_cast<uintptr_t>(p); }
void *fakePointer(uintptr_t a) { return reinterpret_cast<void *>(a); }

class Runtime : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(stub().lastLaunch && stub().calls) << "libcuda.so.1 is not the test stub (LD_LIBRARY_PATH)";
    ASSERT_TRUE(bundle.open(TILEC_RT_INPUTS "/sm90a-bundle")) << tilec_last_error();
  }
  tilec::rt::Bundle bundle;
};

TEST_F(Runtime, ListsTheDistinctKernelNames) {
  EXPECT_EQ(bundle.kernels(), (std::vector<std::string>{kGemm, "scaled_rows", "tma_rows"}));
}

TEST_F(Runtime, PicksSm90aOnComputeCapability90) {
  std::string target;
  ASSERT_TRUE(bundle.deviceTarget(target));
  EXPECT_EQ(target, "sm_90a");
}

TEST_F(Runtime, GemmLaunchPassesPointerThenExtentsPerTensor) {
  const int64_t M = 256, N = 384, K = 64;
  void *a = fakePointer(0x10000), *b = fakePointer(0x20000), *c = fakePointer(0x30000);
  void *stream = fakePointer(0x1234);
  tilec::rt::Status s = bundle.launch(
      kGemm, {Arg::tensor(a, "bf16", {M, K}), Arg::tensor(b, "bf16", {K, N}), Arg::tensor(c, "f32", {M, N})}, stream);
  ASSERT_TRUE(s) << s.message;
  // The manifest's grid: ceil(C.shape[0] / 128) x ceil(C.shape[1] / 128);
  // block 128 threads; 32 KiB of dynamic shared memory.
  const int64_t grid[3] = {(M + 127) / 128, (N + 127) / 128, 1};
  EXPECT_EQ(stub().lastLaunch(),
            record(kGemm + "_sm_90a", grid, 128, 32768, stream,
                   {address(a), uint64_t(M), uint64_t(K), address(b), uint64_t(K), uint64_t(N), address(c),
                    uint64_t(M), uint64_t(N)}));
}

TEST_F(Runtime, TensorMapIsEncodedPerLaunchFromTheTensorAndTheManifest) {
  const int encodesBefore = stub().calls("cuTensorMapEncodeTiled");
  const int64_t rows = 300, cols = 128;
  void *x = fakePointer(0x50000);
  tilec::rt::Status s = bundle.launch("tma_rows", {Arg::tensor(x, "bf16", {rows, cols})});
  ASSERT_TRUE(s) << s.message;
  EXPECT_EQ(stub().calls("cuTensorMapEncodeTiled"), encodesBefore + 1);
  // cuda.h: UINT16 (bf16 moved as bytes), innermost dimension first, the row
  // pitch in bytes, the manifest's box [64, 64] as (cols, rows), SWIZZLE_128B,
  // L2 promotion 128 B, zeros outside.
  char expected[256];
  std::snprintf(expected, sizeof expected,
                "type=1 rank=2 address=%p dims=128,300 strides=256 box=64,64 element_strides=1,1 interleave=0 "
                "swizzle=3 l2=2 oob=0",
                x);
  EXPECT_EQ(std::string(stub().lastTensorMap()), expected);
  // The map follows the extents; the stub's map starts with the address.
  const int64_t grid[3] = {(rows + 63) / 64, 1, 1};
  EXPECT_EQ(stub().lastLaunch(), record("tma_rows_sm_90a", grid, 128, 16448, nullptr,
                                        {address(x), uint64_t(rows), uint64_t(cols), address(x)}));
}

TEST_F(Runtime, EmptyTensorGetsNoTensorMap) {
  const int encodesBefore = stub().calls("cuTensorMapEncodeTiled");
  void *x = fakePointer(0x50000);
  // 0 columns: the grid is not empty, but no box of the tensor is ever copied.
  tilec::rt::Status s = bundle.launch("tma_rows", {Arg::tensor(x, "bf16", {64, 0})});
  ASSERT_TRUE(s) << s.message;
  EXPECT_EQ(stub().calls("cuTensorMapEncodeTiled"), encodesBefore);
  const int64_t grid[3] = {1, 1, 1};
  EXPECT_EQ(stub().lastLaunch(), record("tma_rows_sm_90a", grid, 128, 16448, nullptr, {address(x), 64, 0, 0}));
}

TEST_F(Runtime, ScalarsAndAScalarSizedGridAndLargeSharedMemory) {
  const int setAttributeBefore = stub().calls("cuFuncSetAttribute");
  const int64_t n = 1024;
  const float scale = 0.5f;
  const int32_t rows = 130;
  void *x = fakePointer(0x40000);
  tilec::rt::Status s = bundle.launch("scaled_rows", {Arg::tensor(x, "f16", {n}), Arg::f32(scale), Arg::i32(rows)});
  ASSERT_TRUE(s) << s.message;
  uint32_t scaleBits;
  std::memcpy(&scaleBits, &scale, sizeof scaleBits);
  // Grid ceil(rows / 64) x 2 x ceil(X.shape[0] / 256); 64 KiB of shared
  // memory needs the opt-in above 48 KiB, once per loaded function.
  const int64_t grid[3] = {(rows + 63) / 64, 2, (n + 255) / 256};
  EXPECT_EQ(stub().lastLaunch(),
            record("scaled_rows_sm_90a", grid, 256, 65536, nullptr, {address(x), uint64_t(n), scaleBits, uint64_t(rows)}));
  EXPECT_EQ(stub().calls("cuFuncSetAttribute"), setAttributeBefore + 1);
}

// scaled_rows's `rows` is declared a multiple of 2 (manifest.json).
TEST_F(Runtime, AnI32ArgumentBreakingItsDivisibilityIsRefused) {
  const int launchesBefore = stub().calls("cuLaunchKernel");
  tilec::rt::Status s =
      bundle.launch("scaled_rows", {Arg::tensor(fakePointer(0x40000), "f16", {256}), Arg::f32(1), Arg::i32(129)});
  EXPECT_EQ(s.code, TILEC_ERROR_DIVISIBILITY) << tilec_status_name(s.code) << " " << s.message;
  EXPECT_NE(s.message.find("argument 2 ('rows'): 129 is not a multiple of 2"), std::string::npos) << s.message;
  EXPECT_EQ(stub().calls("cuLaunchKernel"), launchesBefore);
}

TEST_F(Runtime, ModulesLoadOncePerBundleAndDeviceAcrossThreads) {
  const int loadsBefore = stub().calls("cuModuleLoadData");
  const int launchesBefore = stub().calls("cuLaunchKernel");
  const int unloadsBefore = stub().calls("cuModuleUnload");
  constexpr int kThreads = 8, kLaunches = 50;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLaunches; ++i)
        failures[t] += !bundle.launch("scaled_rows", {Arg::tensor(fakePointer(0x40000), "f16", {256}), Arg::f32(1),
                                                      Arg::i32(64)});
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures, std::vector<int>(kThreads, 0));
  EXPECT_EQ(stub().calls("cuLaunchKernel"), launchesBefore + kThreads * kLaunches);
  EXPECT_EQ(stub().calls("cuModuleLoadData"), loadsBefore + 1);
  bundle = tilec::rt::Bundle();  // closes: unloads the one module
  EXPECT_EQ(stub().calls("cuModuleUnload"), unloadsBefore + 1);
}

TEST_F(Runtime, EmptyGridLaunchesNothing) {
  const int launchesBefore = stub().calls("cuLaunchKernel");
  // No rows: a null pointer is fine for a tensor without elements.
  tilec::rt::Status s = bundle.launch(
      kGemm, {Arg::tensor(nullptr, "bf16", {0, 64}), Arg::tensor(fakePointer(0x20000), "bf16", {64, 128}),
              Arg::tensor(nullptr, "f32", {0, 128})});
  ASSERT_TRUE(s) << s.message;
  EXPECT_EQ(stub().calls("cuLaunchKernel"), launchesBefore);
}

/// One bad launch of the GEMM: its status and a fragment of its message.
struct BadLaunch {
  const char *what;
  std::vector<Arg> args;
  tilec_status status;
  const char *message;
};

TEST_F(Runtime, BadLaunchesGetTheirErrors) {
  void *a = fakePointer(0x10000), *b = fakePointer(0x20000), *c = fakePointer(0x30000);
  auto A = [&](std::vector<int64_t> s) { return Arg::tensor(a, "bf16", std::move(s)); };
  auto B = Arg::tensor(b, "bf16", {64, 128});
  auto C = Arg::tensor(c, "f32", {128, 128});
  const BadLaunch cases[] = {
      {"too few", {A({128, 64}), B}, TILEC_ERROR_ARG_COUNT, "2 arguments given, the kernel takes 3"},
      {"too many", {A({128, 64}), B, C, Arg::i32(1)}, TILEC_ERROR_ARG_COUNT, "4 arguments given"},
      {"scalar for tensor", {Arg::f32(1), B, C}, TILEC_ERROR_ARG_KIND, "argument 0 ('A') must be a tensor of rank 2"},
      {"dtype", {Arg::tensor(a, "f16", {128, 64}), B, C}, TILEC_ERROR_DTYPE, "element type f16 given, bf16 expected"},
      {"rank", {A({8192}), B, C}, TILEC_ERROR_RANK, "tensor of rank 1 given, rank 2 expected"},
      {"divisibility", {A({128, 60}), B, C}, TILEC_ERROR_DIVISIBILITY, "innermost extent 60 is not a multiple of 8"},
      // bf16 with divisibility 8: 16-byte alignment.
      {"alignment", {Arg::tensor(fakePointer(0x10008), "bf16", {128, 64}), B, C}, TILEC_ERROR_ALIGNMENT,
       "not aligned to 16 bytes"},
      {"null pointer", {Arg::tensor(nullptr, "bf16", {128, 64}), B, C}, TILEC_ERROR_NULL_POINTER, "null data pointer"},
      {"extent", {A({int64_t(1) << 31, 64}), B, C}, TILEC_ERROR_TOO_LARGE, "extent 2147483648 of dimension 0"},
      {"negative extent", {A({-1, 64}), B, C}, TILEC_ERROR_TOO_LARGE, "extent -1"},
      // 2^31 bytes of f32.
      {"bytes", {A({128, 64}), B, Arg::tensor(c, "f32", {32768, 16384})}, TILEC_ERROR_TOO_LARGE, "2^31 bytes or more"},
  };
  const int launchesBefore = stub().calls("cuLaunchKernel");
  for (const BadLaunch &bad : cases) {
    tilec::rt::Status s = bundle.launch(kGemm, bad.args);
    EXPECT_EQ(s.code, bad.status) << bad.what << ": " << tilec_status_name(s.code) << " " << s.message;
    EXPECT_NE(s.message.find(bad.message), std::string::npos) << bad.what << ": " << s.message;
    EXPECT_NE(s.message.find("launch of " + kGemm + " (sm_90a)"), std::string::npos) << s.message;
  }
  EXPECT_EQ(stub().calls("cuLaunchKernel"), launchesBefore);
}

TEST_F(Runtime, GridAxisBeyondCudaLimit) {
  // Axis 2 is ceil(X.shape[0] / 256): 2^24 f16 elements give 65536 blocks,
  // one more than CUDA allows on y and z.
  tilec::rt::Status s = bundle.launch(
      "scaled_rows", {Arg::tensor(fakePointer(0x40000), "f16", {int64_t(1) << 24}), Arg::f32(1), Arg::i32(64)});
  EXPECT_EQ(s.code, TILEC_ERROR_TOO_LARGE) << s.message;
  EXPECT_NE(s.message.find("grid axis 2 (ceil(X.shape[0] / 256)) is 65536 blocks, more than 65535"), std::string::npos)
      << s.message;
}

TEST_F(Runtime, UnknownKernel) {
  tilec::rt::Status s = bundle.launch("gemm", {});
  EXPECT_EQ(s.code, TILEC_ERROR_UNKNOWN_KERNEL);
  EXPECT_NE(s.message.find("no kernel 'gemm' in bundle"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("it has: " + kGemm + ", scaled_rows"), std::string::npos) << s.message;
}

TEST_F(Runtime, ArchitectureNotInBundle) {
  // The stub reads TILEC_STUB_CC at each query; the runtime asks at each launch.
  setenv("TILEC_STUB_CC", "8.0", 1);
  tilec::rt::Status s = bundle.launch(kGemm, {});
  unsetenv("TILEC_STUB_CC");
  EXPECT_EQ(s.code, TILEC_ERROR_ARCH_NOT_IN_BUNDLE);
  EXPECT_NE(s.message.find("for sm_90a, gfx942, not for sm_80a or sm_80 (this device: compute capability 8.0)"),
            std::string::npos)
      << s.message;
}

TEST_F(Runtime, AlteredCodeObjectIsRefused) {
  fs::path dir = fs::path(testing::TempDir()) / "altered-bundle";
  fs::remove_all(dir);
  fs::copy(TILEC_RT_INPUTS "/sm90a-bundle", dir);
  std::ofstream(dir / "scaled_rows_sm_90a.cubin", std::ios::app) << " ";
  tilec::rt::Bundle altered;
  ASSERT_TRUE(altered.open(dir.string()));
  tilec::rt::Status s =
      altered.launch("scaled_rows", {Arg::tensor(fakePointer(0x40000), "f16", {256}), Arg::f32(1), Arg::i32(64)});
  EXPECT_EQ(s.code, TILEC_ERROR_BUNDLE);
  EXPECT_NE(s.message.find("scaled_rows_sm_90a.cubin does not match its SHA-256"), std::string::npos) << s.message;
  fs::remove_all(dir);
}

TEST(RuntimeOpen, MissingAndMalformedBundles) {
  tilec_bundle *b = nullptr;
  EXPECT_EQ(tilec_bundle_open("/nonexistent/bundle", &b), TILEC_ERROR_BUNDLE);
  EXPECT_EQ(b, nullptr);
  EXPECT_NE(std::string(tilec_last_error()).find("cannot read /nonexistent/bundle/manifest.json"), std::string::npos);
  EXPECT_EQ(tilec_bundle_open(nullptr, &b), TILEC_ERROR_INVALID_ARGUMENT);

  fs::path dir = fs::path(testing::TempDir()) / "malformed-bundle";
  fs::create_directories(dir);
  std::ofstream(dir / "manifest.json") << R"({"format": "tilec-bundle", "format_version": 1, "tilec_version": "0",
      "kernels": [{"name": 3}]})";
  EXPECT_EQ(tilec_bundle_open(dir.c_str(), &b), TILEC_ERROR_BUNDLE);
  EXPECT_NE(std::string(tilec_last_error()).find("manifest.json: kernels[0].name: expected a string"),
            std::string::npos)
      << tilec_last_error();
  fs::remove_all(dir);
}

// The bundle `tilec --emit=bundle` exported at build time (gfx942 only).
const std::string kAttention = "attn_fwd_bf16_h8_kv8_d128_128x32_w8_s2_vt";

TEST(RuntimeExported, ChecksLaunchesOfTheExportedGemm) {
  tilec::rt::Bundle b;
  ASSERT_TRUE(b.open(TILEC_RT_GEMM_BUNDLE)) << tilec_last_error();
  ASSERT_EQ(b.kernels(), (std::vector<std::string>{kGemm, kAttention}));
  const int64_t M = 256, N = 256, K = 64;
  tilec_launch_dims dims;
  std::vector<Arg> args = {Arg::tensor(fakePointer(0x10000), "bf16", {M, K}),
                           Arg::tensor(fakePointer(0x20000), "bf16", {K, N}),
                           Arg::tensor(fakePointer(0x30000), "f32", {M, N})};
  tilec::rt::Status s = b.check(kGemm, "gfx942", args, dims);
  ASSERT_TRUE(s) << s.message;
  // 4 waves of 64 lanes; LDS is static in AMD code objects.
  EXPECT_EQ(dims.grid[0], (M + 127) / 128);
  EXPECT_EQ(dims.grid[1], (N + 127) / 128);
  EXPECT_EQ(dims.grid[2], 1);
  EXPECT_EQ(dims.block[0], 256);
  EXPECT_EQ(dims.shared_bytes, 0);
  args[0] = Arg::tensor(fakePointer(0x10000), "bf16", {M, 12});
  EXPECT_EQ(b.check(kGemm, "gfx942", args, dims).code, TILEC_ERROR_DIVISIBILITY);

  // On the stub's sm_90 device, the gfx942-only bundle has nothing to run.
  s = b.launch(kGemm, args);
  EXPECT_EQ(s.code, TILEC_ERROR_ARCH_NOT_IN_BUNDLE);
  EXPECT_NE(s.message.find("for gfx942, not for sm_90a or sm_90"), std::string::npos) << s.message;
}

TEST(RuntimeExported, ScalarSizedGridOfTheExportedAttention) {
  tilec::rt::Bundle b;
  ASSERT_TRUE(b.open(TILEC_RT_GEMM_BUNDLE)) << tilec_last_error();
  // A packed batch of 3 sequences, the longest 130 queries; 8 heads of 128.
  const int64_t tokens = 300, width = 8 * 128;
  const int32_t batch = 3, maxSeqlenQ = 130;
  std::vector<Arg> args = {Arg::tensor(fakePointer(0x10000), "bf16", {tokens, width}),
                           Arg::tensor(fakePointer(0x20000), "bf16", {tokens, width}),
                           Arg::tensor(fakePointer(0x30000), "bf16", {tokens, width}),
                           Arg::tensor(fakePointer(0x40000), "bf16", {tokens, width}),
                           Arg::tensor(fakePointer(0x50000), "f32", {8, tokens}),
                           Arg::tensor(fakePointer(0x60000), "i32", {batch + 1}),
                           Arg::tensor(fakePointer(0x70000), "i32", {batch + 1}),
                           Arg::f32(0.088f),
                           Arg::i32(maxSeqlenQ),
                           Arg::i32(batch)};
  tilec_launch_dims dims;
  tilec::rt::Status s = b.check(kAttention, "gfx942", args, dims);
  ASSERT_TRUE(s) << s.message;
  // The manifest's grid: ceil(max_seqlen_q / block_m) x heads x batch
  // (gfx942's default block_m: 128).
  EXPECT_EQ(dims.grid[0], (maxSeqlenQ + 127) / 128);
  EXPECT_EQ(dims.grid[1], 8);
  EXPECT_EQ(dims.grid[2], batch);
  args[9] = Arg::f32(3);
  s = b.check(kAttention, "gfx942", args, dims);
  EXPECT_EQ(s.code, TILEC_ERROR_ARG_KIND);
  EXPECT_NE(s.message.find("argument 9 ('batch') must be an i32 scalar"), std::string::npos) << s.message;
}

} // namespace
