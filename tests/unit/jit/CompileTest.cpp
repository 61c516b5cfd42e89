// End-to-end compiles through both JITs: code objects, disassembly, reports,
// diagnostics, virtual headers and concurrent use.

#include "JIT/JIT.h"

#include <gtest/gtest.h>

#include <thread>

using namespace tilec;
using namespace tilec::jit;

namespace {

/// One 32x32x8 bf16 MFMA per wave, with A staged through LDS.
/// LDS budget: 512 x bf16x4 = 4096 bytes.
constexpr int kMfmaLdsBytes = 4096;
constexpr const char *kMfmaKernel = R"(
typedef short tilec_bf16x4 __attribute__((ext_vector_type(4)));
typedef float tilec_f32x16 __attribute__((ext_vector_type(16)));

extern "C" __attribute__((global)) void mfma_bf16(const tilec_bf16x4 *a,
                                                  const tilec_bf16x4 *b,
                                                  tilec_f32x16 *c) {
  __attribute__((shared)) tilec_bf16x4 tileA[512];
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  tileA[lane] = a[lane];
  __builtin_amdgcn_s_barrier();
  // C[32,32] += A[32,8] @ B[8,32]
  c[lane] = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(tileA[lane ^ 1], b[lane], c[lane], 0, 0, 0);
}
)";

/// One 16x16x16 f16 WMMA per wave32.
constexpr const char *kWmmaKernel = R"(
typedef _Float16 tilec_f16x16 __attribute__((ext_vector_type(16)));
typedef float tilec_f32x8 __attribute__((ext_vector_type(8)));

extern "C" __attribute__((global)) void wmma_f16(const tilec_f16x16 *a, const tilec_f16x16 *b,
                                                 tilec_f32x8 *c) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  // C[16,16] += A[16,16] @ B[16,16]
  c[lane] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[lane], b[lane], c[lane]);
}
)";

/// 18 live 32x32 accumulators (288 registers) in a 64-lane workgroup: the
/// accumulators go to AGPRs and the rest spills.
constexpr const char *kAgprKernel = R"(
typedef short tilec_bf16x4 __attribute__((ext_vector_type(4)));
typedef float tilec_f32x16 __attribute__((ext_vector_type(16)));
constexpr int kAccumulators = 18;

extern "C" __attribute__((global, amdgpu_flat_work_group_size(64, 64)))
void many_accumulators(const tilec_bf16x4 *a, const tilec_bf16x4 *b, tilec_f32x16 *c, int n) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  tilec_f32x16 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j)
    acc[j] = c[lane + 64 * j];
  for (int i = 0; i < n; ++i) {
    tilec_bf16x4 x = a[lane + 64 * i];
#pragma unroll
    for (int j = 0; j < kAccumulators; ++j)
      acc[j] = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(x, b[lane + 64 * (i + j)], acc[j], 0, 0, 0);
  }
  for (int j = 0; j < kAccumulators; ++j)
    c[lane + 64 * j] = acc[j];
}
)";

CacheOptions noCache() {
  CacheOptions options;
  options.enabled = false;
  return options;
}

CompileRequest request(const char *source, const char *kernel, const char *arch,
                       JitPreference preference = JitPreference::Clang) {
  CompileRequest r;
  r.source = source;
  r.kernelName = kernel;
  r.target = lookupTarget(arch);
  r.preference = preference;
  return r;
}

bool isElf(const std::vector<char> &bytes) {
  return bytes.size() > 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' &&
         bytes[3] == 'F';
}

TEST(ClangJIT, MfmaKernelForGfx942) {
  const TargetInfo &gfx942 = *lookupTarget("gfx942");
  llvm::Expected<CodeObject> code = compile(request(kMfmaKernel, "mfma_bf16", "gfx942"), noCache());
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
  EXPECT_TRUE(isElf(code->elf));
  EXPECT_EQ(code->compiler, JitKind::Clang);
  EXPECT_EQ(code->compilerIdentity, clangIdentity());
  EXPECT_FALSE(code->fromCache);

  std::string disassembly = disassemble(code->elf, gfx942);
  EXPECT_NE(disassembly.find("v_mfma_f32_32x32x8"), std::string::npos) << disassembly;
  EXPECT_NE(disassembly.find("<mfma_bf16>:"), std::string::npos) << disassembly;

  llvm::Expected<Report> report = readReport(*code, gfx942, /*wavesPerWorkgroup=*/1);
  ASSERT_TRUE(!!report) << llvm::toString(report.takeError());
  EXPECT_EQ(report->kernel, "mfma_bf16");
  EXPECT_EQ(report->target, "gfx942");
  EXPECT_EQ(report->jit, "clang");
  EXPECT_GE(report->matrixInstructions, 1);
  EXPECT_EQ(report->scratchBytes, 0);
  EXPECT_EQ(report->ldsBytes, kMfmaLdsBytes);
  EXPECT_EQ(report->waveSize, 64);
  EXPECT_GT(report->vgpr, 0);
  EXPECT_GT(report->sgpr, 0);
  EXPECT_EQ(report->codeObjectBytes, static_cast<int64_t>(code->elf.size()));
  EXPECT_EQ(report->occupancy,
            gfx942.occupancy(report->vgpr, report->agpr, report->ldsBytes, 1));
}

TEST(ClangJIT, AgprsAndSpillsAreReported) {
  // llc-19 -Rpass-analysis=kernel-resource-usage on this kernel: VGPRs 256,
  // AGPRs 256, VGPRs Spill 58, ScratchSize 172, Occupancy 1. The metadata's
  // .vgpr_count (512) counts both register files.
  const TargetInfo &gfx942 = *lookupTarget("gfx942");
  llvm::Expected<CodeObject> code =
      compile(request(kAgprKernel, "many_accumulators", "gfx942"), noCache());
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
  llvm::Expected<Report> report = readReport(*code, gfx942, 1);
  ASSERT_TRUE(!!report) << llvm::toString(report.takeError());
  EXPECT_EQ(report->vgpr, 256);
  EXPECT_EQ(report->agpr, 256);
  EXPECT_GT(report->vgprSpills, 0);
  EXPECT_GT(report->scratchBytes, 0);
  EXPECT_EQ(report->occupancy, 1);
  EXPECT_EQ(report->matrixInstructions, 18);
}

TEST(HipRTCJIT, MfmaKernelForGfx90a) {
  if (hipRTCIdentity().empty())
    GTEST_SKIP() << "no hipRTC library on this machine";
  const TargetInfo &gfx90a = *lookupTarget("gfx90a");
  ASSERT_TRUE(hipRTCSupports(gfx90a)) << hipRTCIdentity();
  llvm::Expected<CodeObject> code =
      compile(request(kMfmaKernel, "mfma_bf16", "gfx90a", JitPreference::Auto), noCache());
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
  EXPECT_TRUE(isElf(code->elf));
  EXPECT_EQ(code->compiler, JitKind::HipRTC);
  EXPECT_NE(code->compilerIdentity.find("hipRTC (ROCm "), std::string::npos);

  std::string disassembly = disassemble(code->elf, gfx90a);
  EXPECT_NE(disassembly.find("v_mfma"), std::string::npos) << disassembly;
  llvm::Expected<Report> report = readReport(*code, gfx90a, 1);
  ASSERT_TRUE(!!report) << llvm::toString(report.takeError());
  EXPECT_EQ(report->jit, "hipRTC");
  EXPECT_EQ(report->kernel, "mfma_bf16");
  EXPECT_GE(report->matrixInstructions, 1);
  EXPECT_EQ(report->waveSize, 64);
  EXPECT_EQ(report->ldsBytes, kMfmaLdsBytes);
}

TEST(HipRTCJIT, NotClaimedForArchsItsLLVMPredates) {
  // ROCm 5.x hipRTC crashes on gfx942/gfx1151 instead of failing: Auto must
  // pick clang there.
  if (hipRTCIdentity().find("ROCm 5.") == std::string::npos)
    GTEST_SKIP() << "hipRTC is not ROCm 5.x: " << hipRTCIdentity();
  EXPECT_FALSE(hipRTCSupports(*lookupTarget("gfx942")));
  EXPECT_FALSE(hipRTCSupports(*lookupTarget("gfx1151")));
  llvm::Expected<CodeObject> code =
      compile(request(kMfmaKernel, "mfma_bf16", "gfx942", JitPreference::Auto), noCache());
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
  EXPECT_EQ(code->compiler, JitKind::Clang);
}

TEST(HipRTCJIT, VirtualHeadersAreIncludable) {
  if (!hipRTCSupports(*lookupTarget("gfx90a")))
    GTEST_SKIP() << "no hipRTC for gfx90a on this machine";
  CompileRequest r = request(R"(
#include "tilec_prelude.h"
extern "C" __attribute__((global)) void uses_prelude(float *p) { p[0] = kTilecValue; }
)",
                             "uses_prelude", "gfx90a", JitPreference::HipRTC);
  r.headers = {{"tilec_prelude.h", "#pragma once\nconstexpr float kTilecValue = 42.0f;\n"}};
  llvm::Expected<CodeObject> code = compile(r, noCache());
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
  EXPECT_EQ(code->compiler, JitKind::HipRTC);
  EXPECT_NE(disassemble(code->elf, *r.target).find("0x42280000"), std::string::npos);
}

TEST(HipRTCJIT, CompileErrorCarriesTheLog) {
  if (!hipRTCSupports(*lookupTarget("gfx90a")))
    GTEST_SKIP() << "no hipRTC for gfx90a on this machine";
  llvm::Expected<CodeObject> code = compile(
      request("extern \"C\" __attribute__((global)) void broken(float *p) {\n  p[0] = 1.0f\n}\n",
              "broken", "gfx90a", JitPreference::HipRTC),
      noCache());
  ASSERT_FALSE(!!code);
  std::string message = llvm::toString(code.takeError());
  EXPECT_NE(message.find("expected ';'"), std::string::npos) << message;
}

TEST(ClangJIT, WmmaKernelForGfx1151) {
  const TargetInfo &gfx1151 = *lookupTarget("gfx1151");
  llvm::Expected<CodeObject> code =
      compile(request(kWmmaKernel, "wmma_f16", "gfx1151", JitPreference::Auto), noCache());
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
  EXPECT_EQ(code->compiler, JitKind::Clang);
  std::string disassembly = disassemble(code->elf, gfx1151);
  EXPECT_NE(disassembly.find("v_wmma_f32_16x16x16_f16"), std::string::npos) << disassembly;
  llvm::Expected<Report> report = readReport(*code, gfx1151, 1);
  ASSERT_TRUE(!!report) << llvm::toString(report.takeError());
  EXPECT_EQ(report->waveSize, 32);
  EXPECT_GE(report->matrixInstructions, 1);
  EXPECT_EQ(report->agpr, 0);
}

TEST(ClangJIT, SyntaxErrorCarriesTheDiagnostic) {
  llvm::Expected<CodeObject> code = compile(
      request("extern \"C\" __attribute__((global)) void broken(float *p) {\n  p[0] = 1.0f\n}\n",
              "broken", "gfx942"),
      noCache());
  ASSERT_FALSE(!!code);
  std::string message = llvm::toString(code.takeError());
  EXPECT_NE(message.find("broken.hip:2:14: error: expected ';' after expression"),
            std::string::npos)
      << message;
}

TEST(ClangJIT, BadFlagIsAnError) {
  CompileRequest r = request(kMfmaKernel, "mfma_bf16", "gfx942");
  r.options = {"--no-such-flag"};
  llvm::Expected<CodeObject> code = compile(r, noCache());
  ASSERT_FALSE(!!code);
  std::string message = llvm::toString(code.takeError());
  EXPECT_NE(message.find("--no-such-flag"), std::string::npos) << message;
}

TEST(ClangJIT, VirtualHeadersAreIncludable) {
  CompileRequest r = request(R"(
#include "tilec_prelude.h"
#include "detail/values.h"
extern "C" __attribute__((global)) void uses_prelude(float *p) { p[0] = tilec_value(); }
)",
                             "uses_prelude", "gfx942");
  r.headers = {{"tilec_prelude.h", "#pragma once\n#include \"detail/values.h\"\n"
                                   "__attribute__((device)) inline float tilec_value() "
                                   "{ return kTilecValue; }\n"},
               {"detail/values.h", "#pragma once\nconstexpr float kTilecValue = 42.0f;\n"}};
  llvm::Expected<CodeObject> code = compile(r, noCache());
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
  EXPECT_NE(disassemble(code->elf, *r.target).find("0x42280000"), std::string::npos);
}

TEST(ClangJIT, BuiltinHeadersResolve) {
  llvm::Expected<CodeObject> code = compile(request(R"(
#include <stdint.h>
extern "C" __attribute__((global)) void uses_stdint(uint32_t *p) { p[0] = UINT32_MAX; }
)",
                                                    "uses_stdint", "gfx942"),
                                            noCache());
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
}

TEST(ClangJIT, ConcurrentCompiles) {
  constexpr int kThreads = 4;
  std::vector<std::string> errors(kThreads);
  std::vector<std::vector<char>> objects(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      CompileRequest r = i % 2 ? request(kWmmaKernel, "wmma_f16", "gfx1151")
                               : request(kMfmaKernel, "mfma_bf16", "gfx942");
      llvm::Expected<CodeObject> code = compile(r, noCache());
      if (code)
        objects[i] = std::move(code->elf);
      else
        errors[i] = llvm::toString(code.takeError());
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(errors[i], "");
    EXPECT_TRUE(isElf(objects[i]));
  }
  // The same request gives the same bytes, whichever thread compiled it.
  EXPECT_EQ(objects[0], objects[2]);
  EXPECT_EQ(objects[1], objects[3]);
}

} // namespace
