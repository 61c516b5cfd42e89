// The emulator's model of NVIDIA's warpgroup matrix instruction
// wgmma.mma_async (sm_90a; lib/Emu/Wgmma.h, tilec_hw_emu.h): kernels lay A
// and B out in LDS with tilec_lds.h's Lds::index (an XOR of the 16-byte
// chunk index with the row, written independently of the emulator's
// descriptor decoding, which XORs address bits), describe them with
// matrix descriptors and multiply with tl::gemm's wgmma path. Results are
// checked against a CPU matmul and the accumulator layout lane by lane
// against tests/data/matrix-layouts/ptx; the asynchronous semantics (a read
// of an accumulator, or a write of an operand, before wgmma.wait_group; a
// missing wgmma.fence or wait) against the reports.
#include "EmuTestUtil.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

using namespace tilec::emu;
using namespace tilec::emu::test;

namespace {

constexpr const char *kArch = "sm_90a";

bool anyMessageHas(const LaunchReport &r, const std::string &needle) {
  for (const auto &m : r.messages)
    if (m.find(needle) != std::string::npos)
      return true;
  return false;
}

struct Case {
  int swizzleBytes;  // 128, 64 or 32: a row of the K-major A (and of B) holds that many bytes
  int n;             // wgmma N
  bool bKMajor;      // B in LDS as N x K (TransposeB) instead of K x N
  bool f16;
  int warpgroups;    // 1, or 2 stacked along M (block of 128 rows)
};

std::string caseName(const Case &c) {
  return "sw" + std::to_string(c.swizzleBytes) + "_n" + std::to_string(c.n) + (c.bKMajor ? "_bk" : "_bmn") +
         (c.f16 ? "_f16" : "_bf16") + "_wg" + std::to_string(c.warpgroups);
}

/// C[M x N] = A[M x K] * B (global K x N, or N x K when bKMajor) through LDS
/// tiles in the canonical swizzled layouts (tilec_atoms.h wgmma_layout) and
/// tl::gemm; K = the swizzle row in elements.
std::string gemmKernel(const Case &c) {
  const int k = c.swizzleBytes / 2, m = 64 * c.warpgroups, perPhase = 128 / c.swizzleBytes,
            maxPhase = c.swizzleBytes / 16;
  const std::string in = c.f16 ? "tl::f16" : "tl::bf16";
  const std::string la = "tl::Lds<" + in + ", " + std::to_string(m) + ", " + std::to_string(k) + ", " +
                         std::to_string(k) + ", 8, " + std::to_string(perPhase) + ", " + std::to_string(maxPhase) + ">";
  const std::string lb =
      c.bKMajor ? "tl::Lds<" + in + ", " + std::to_string(c.n) + ", " + std::to_string(k) + ", " + std::to_string(k) +
                      ", 8, " + std::to_string(perPhase) + ", " + std::to_string(maxPhase) + ">"
                : "tl::Lds<" + in + ", " + std::to_string(k) + ", " + std::to_string(c.n) + ", " + std::to_string(k) +
                      ", 8, " + std::to_string(perPhase) + ", " + std::to_string(maxPhase) + ", 1, 1, " +
                      std::to_string(k) + ">";
  const int aBytes = m * k * 2, bBytes = c.n * k * 2;
  std::ostringstream s;
  s << "#include \"tilec_prelude.h\"\n"
    << "extern \"C\" __global__ void wg(const " << in << " *A, const " << in << " *B, float *C) {\n"
    << "  TL_LDS(lds, " << aBytes + bBytes << ");\n"
    << "  const " << la << " a{(" << in << " *)lds};\n"
    << "  const " << lb << " b{(" << in << " *)(lds + " << aBytes << ")};\n"
    << "  const tl::Global<" << in << ", 0u> A_g(A, " << m << ", " << k << ");\n"
    << "  const tl::Global<" << in << ", 0u> B_g(B, " << (c.bKMajor ? c.n : k) << ", " << (c.bKMajor ? k : c.n)
    << ");\n"
    << "  const tl::Global<float, 0u> C_g(C, " << m << ", " << c.n << ");\n"
    << "  tl::load_tile<" << 128 * c.warpgroups << ">(a, A_g, 0, 0);\n"
    << "  tl::load_tile<" << 128 * c.warpgroups << ">(b, B_g, 0, 0);\n"
    << "  tl::Acc<tl::Wgmma64xNx16<" << in << ", " << c.n << ">, " << m << ", " << c.n << ", " << c.warpgroups
    << ", 1> acc;\n"
    << "  tl::fill(acc, 0.5f);\n"
    << "  tl::barrier();\n"
    << "  tl::gemm<tl::Wgmma64xNx16<" << in << ", " << c.n << ">, " << (c.bKMajor ? "true" : "false")
    << ">(acc, a, b);\n"
    << "  tl::store_tile(acc, C_g, 0, 0);\n"
    << "}\n";
  return s.str();
}

class WgmmaGemm : public ::testing::TestWithParam<Case> {};

// Small integers (|x| <= 4) as A and B: every product and every partial sum of
// up to 64 terms plus the 0.5 start is exact in f32, so the emulator must
// match the CPU matmul exactly whatever order it sums in.
TEST_P(WgmmaGemm, MatchesCpuMatmulThroughSwizzledDescriptors) {
  const Case c = GetParam();
  const int k = c.swizzleBytes / 2, m = 64 * c.warpgroups, n = c.n;
  auto emu = makeEmulator(kArch);
  auto kern = loadOrFail(*emu, gemmKernel(c), "wg");
  ASSERT_TRUE(kern);
  auto *A = (uint16_t *)emu->allocate((size_t)m * k * 2), *B = (uint16_t *)emu->allocate((size_t)k * n * 2);
  auto *C = (float *)emu->allocate((size_t)m * n * 4);
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> val(-4, 4);
  std::vector<float> a(m * k), b(k * n);  // b[kk * n + j] = B[kk][j]
  for (auto &x : a)
    x = (float)val(rng);
  for (auto &x : b)
    x = (float)val(rng);
  auto enc = [&](float f) { return c.f16 ? f16Bits(f) : bf16Bits(f); };
  for (int i = 0; i < m * k; ++i)
    A[i] = enc(a[i]);
  for (int kk = 0; kk < k; ++kk)
    for (int j = 0; j < n; ++j)
      B[c.bKMajor ? j * k + kk : kk * n + j] = enc(b[kk * n + j]);
  LaunchReport rep = launchOrFail(*emu, *kern, {{1, 1, 1}, 128 * c.warpgroups},
                                  {Arg::pointer(A), Arg::pointer(B), Arg::pointer(C)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  int bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0.5f;
      for (int kk = 0; kk < k; ++kk)
        want += a[i * k + kk] * b[kk * n + j];
      if (C[i * n + j] != want && ++bad <= 5)
        ADD_FAILURE() << "C[" << i << "][" << j << "] = " << C[i * n + j] << ", want " << want;
    }
  EXPECT_EQ(bad, 0);
}

std::vector<Case> gemmCases() {
  std::vector<Case> out;
  for (int sw : {128, 64, 32})
    for (bool bk : {false, true})
      out.push_back({sw, 128, bk, false, 1});
  for (int n : {64, 256})
    out.push_back({128, n, false, false, 1});
  out.push_back({128, 128, false, true, 1});
  out.push_back({64, 64, true, true, 1});
  out.push_back({128, 64, false, false, 2});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Layouts, WgmmaGemm, ::testing::ValuesIn(gemmCases()),
                         [](const ::testing::TestParamInfo<Case> &info) { return caseName(info.param); });

// A[m][0] = m, A[m][1] = 1, B[0][n] = 256, B[1][n] = n, zeros elsewhere: D[m][n]
// = 256 m + n (exact), so each lane's register r names the element it holds.
TEST(WgmmaFragment, AccumulatorMatchesThePtxTable) {
  for (int n : {64, 128, 256}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    auto emu = makeEmulator(kArch);
    std::ostringstream s;
    s << "#include \"tilec_prelude.h\"\n"
      << "extern \"C\" __global__ void frag(const tl::bf16 *A, const tl::bf16 *B, float *out) {\n"
      << "  TL_LDS(lds, " << 64 * 128 + n * 128 << ");\n"
      << "  const tl::Lds<tl::bf16, 64, 64, 64, 8, 1, 8> a{(tl::bf16 *)lds};\n"
      << "  const tl::Lds<tl::bf16, 64, " << n << ", 64, 8, 1, 8, 1, 1, 64> b{(tl::bf16 *)(lds + 8192)};\n"
      << "  tl::load_tile<128>(a, tl::Global<tl::bf16, 0u>(A, 64, 64), 0, 0);\n"
      << "  tl::load_tile<128>(b, tl::Global<tl::bf16, 0u>(B, 64, " << n << "), 0, 0);\n"
      << "  tl::hw::barrier();\n"
      << "  tl::hw::wgmma_frag<" << n / 2 << "> d;\n"
      << "  tl::hw::wgmma_fence();\n"
      << "  using W = tl::wgmma_layout<decltype(a)>;\n"
      << "  using WB = tl::wgmma_layout<decltype(b)>;\n"
      << "  tl::hw::wgmma_m64k16<tl::hw::wgmma_type::bf16, " << n
      << ", true>(d, W::k_major_desc(a, 0, 0), WB::mn_major_desc(b, 0, 0), 0);\n"
      << "  tl::hw::wgmma_commit();\n"
      << "  tl::hw::wgmma_wait<0>();\n"
      << "  for (int r = 0; r < " << n / 2 << "; ++r)\n"
      << "    out[tl::hw::thread_id() * " << n / 2 << " + r] = d[r];\n"
      << "}\n";
    auto kern = loadOrFail(*emu, s.str(), "frag");
    ASSERT_TRUE(kern);
    auto *A = (uint16_t *)emu->allocate(64 * 64 * 2), *B = (uint16_t *)emu->allocate(64 * n * 2);
    auto *out = (float *)emu->allocate(128 * n / 2 * 4);
    for (int i = 0; i < 64 * 64; ++i)
      A[i] = bf16Bits(i % 64 == 0 ? (float)(i / 64) : i % 64 == 1 ? 1.0f : 0.0f);
    for (int i = 0; i < 64 * n; ++i)
      B[i] = bf16Bits(i / n == 0 ? 256.0f : i / n == 1 ? (float)(i % n) : 0.0f);
    LaunchReport rep = launchOrFail(*emu, *kern, {{1, 1, 1}, 128}, {Arg::pointer(A), Arg::pointer(B), Arg::pointer(out)});
    EXPECT_TRUE(rep.clean()) << rep.summary();
    auto table = readLayout("ptx/wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32.bf16.bf16.D.csv").cells;
    ASSERT_EQ(table.size(), 128u);
    for (int l = 0; l < 128; ++l) {
      ASSERT_EQ((int)table[l].size(), n / 2);
      for (int r = 0; r < n / 2; ++r) {
        auto [tm, tn] = table[l][r];
        EXPECT_EQ(out[l * n / 2 + r], 256.0f * tm + tn) << "lane " << l << " register " << r;
      }
    }
  }
}

// One warpgroup: A = ones (64 x 64), B = ones (64 x 64, MN-major), a wgmma
// (k 0..15) on an accumulator of 1s; `mode` picks what the kernel does wrong.
const char *kAsyncKernel = R"(#include "tilec_prelude.h"
extern "C" __global__ void async(const tl::bf16 *A, float *out, int mode) {
  TL_LDS(lds, 16384);
  const tl::Lds<tl::bf16, 64, 64, 64, 8, 1, 8> a{(tl::bf16 *)lds};
  const tl::Lds<tl::bf16, 64, 64, 64, 8, 1, 8, 1, 1, 64> b{(tl::bf16 *)(lds + 8192)};
  tl::load_tile<128>(a, tl::Global<tl::bf16, 0u>(A, 64, 64), 0, 0);
  tl::load_tile<128>(b, tl::Global<tl::bf16, 0u>(A, 64, 64), 0, 0);
  tl::hw::barrier();
  using WA = tl::wgmma_layout<decltype(a)>;
  using WB = tl::wgmma_layout<decltype(b)>;
  tl::hw::wgmma_frag<32> d;
  for (int r = 0; r < 32; ++r)
    d[r] = 1.0f;
  if (mode != 1)
    tl::hw::wgmma_fence();
  tl::hw::wgmma_m64k16<tl::hw::wgmma_type::bf16, 64, true>(d, WA::k_major_desc(a, 0, 0), WB::mn_major_desc(b, 0, 0), 1);
  if (mode == 4)  // chained on the same accumulator, k 16..31
    tl::hw::wgmma_m64k16<tl::hw::wgmma_type::bf16, 64, true>(d, WA::k_major_desc(a, 0, 16), WB::mn_major_desc(b, 16, 0), 1);
  tl::hw::wgmma_commit();
  if (mode == 2)
    out[tl::hw::thread_id()] = d[0];
  if (mode == 3 && tl::hw::thread_id() == 0)
    a.store(0, 0, tl::from_f32<tl::bf16>(2.0f));
  if (mode == 5)
    return;
  tl::hw::wgmma_wait<0>();
  out[128 + tl::hw::thread_id()] = d[0];
}
)";

struct AsyncRun {
  LaunchReport rep;
  std::vector<float> after;  // d[0] of each lane after the wait
};

AsyncRun runAsync(int mode) {
  auto emu = makeEmulator(kArch);
  auto k = loadOrFail(*emu, kAsyncKernel, "async");
  if (!k)
    return {};
  auto *A = (uint16_t *)emu->allocate(64 * 64 * 2);
  auto *out = (float *)emu->allocate(256 * 4);
  for (int i = 0; i < 64 * 64; ++i)
    A[i] = bf16Bits(1.0f);
  for (int i = 0; i < 256; ++i)
    out[i] = -1.0f;
  AsyncRun r;
  r.rep = launchOrFail(*emu, *k, {{1, 1, 1}, 128}, {Arg::pointer(A), Arg::pointer(out), Arg::integer(mode)});
  r.after.assign(out + 128, out + 256);
  return r;
}

TEST(WgmmaAsync, WaitedResultIsVisible) {
  AsyncRun r = runAsync(0);
  EXPECT_TRUE(r.rep.clean()) << r.rep.summary();
  for (int l = 0; l < 128; ++l)
    EXPECT_EQ(r.after[l], 17.0f) << "lane " << l;  // 1 + 16 products of 1
}

TEST(WgmmaAsync, ChainedInstructionsAccumulateInOrder) {
  AsyncRun r = runAsync(4);
  EXPECT_TRUE(r.rep.clean()) << r.rep.summary();
  for (int l = 0; l < 128; ++l)
    EXPECT_EQ(r.after[l], 33.0f) << "lane " << l;
}

TEST(WgmmaAsync, MissingFenceAfterAccumulatorWritesIsReported) {
  AsyncRun r = runAsync(1);
  EXPECT_GE(r.rep.invalidInstructions, 1);
  EXPECT_TRUE(anyMessageHas(r.rep, "no wgmma.fence in between")) << r.rep.summary();
}

TEST(WgmmaAsync, AccumulatorReadBeforeWaitIsARace) {
  AsyncRun r = runAsync(2);
  EXPECT_GE(r.rep.races, 128);  // every lane reads its d[0]
  EXPECT_TRUE(anyMessageHas(r.rep, "accumulator register that a wgmma.mma_async in flight writes")) << r.rep.summary();
}

TEST(WgmmaAsync, OperandWrittenBeforeWaitIsARace) {
  AsyncRun r = runAsync(3);
  EXPECT_GE(r.rep.races, 1);
  EXPECT_TRUE(anyMessageHas(r.rep, "operands of a wgmma.mma_async changed")) << r.rep.summary();
}

TEST(WgmmaAsync, ReturningWithInstructionsInFlightIsReported) {
  AsyncRun r = runAsync(5);
  EXPECT_GE(r.rep.invalidInstructions, 128);
  EXPECT_TRUE(anyMessageHas(r.rep, "returned with wgmma.mma_async in flight")) << r.rep.summary();
}

} // namespace
