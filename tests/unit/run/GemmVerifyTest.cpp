// The shipped GEMM, run in the CPU wavefront emulator and verified against
// the CPU reference (kernels/Run.h) on ragged shapes, for both CDNA targets,
// both input types and both output types. The tolerance is the GEMM
// problem's own (kernels/gemm/GemmReference.cpp): f32 accumulation error K*2^-24*sum|a||b|,
// the products gfx90a's subnormal flush may drop, plus the output type's
// rounding.
#include "Run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

struct Shape {
  int64_t m, n, k;
};

// Every size of {1, 7, 31, 64, 100, 257} appears in every position at least
// once; none is a multiple of the 128x128x32 block except 64 (a partial tile).
const Shape kShapes[] = {{1, 1, 1},     {7, 31, 64},   {31, 257, 7},  {64, 64, 64},
                         {100, 7, 257}, {257, 100, 31}, {1, 257, 100}, {257, 1, 1}};

using Case = std::tuple<std::string, std::string, std::string>;  // arch, dtype, out

class GemmVerify : public ::testing::TestWithParam<Case> {};

KernelParams params(const Shape &s, const Case &c) {
  return {{"M", std::to_string(s.m)},
          {"N", std::to_string(s.n)},
          {"K", std::to_string(s.k)},
          {"dtype", std::get<1>(c)},
          {"out", std::get<2>(c)}};
}

RunOptions emulatorOn(const std::string &arch) {
  RunOptions o;
  o.compile.arch = arch;
  o.device = DeviceKind::Emulator;
  o.seed = 42;
  return o;
}

void expectVerified(const KernelParams &p, const std::string &arch) {
  Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, emulatorOn(arch));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->mismatches, 0) << r->verifiedLine() << "\n" << (r->firstMismatches.empty() ? "" : r->firstMismatches[0]);
  EXPECT_EQ(r->elements, std::stoll(p.at("M")) * std::stoll(p.at("N")));
  EXPECT_TRUE(r->stats.checked);
  EXPECT_EQ(r->stats.outOfBounds, 0) << r->stats.checksLine();
  EXPECT_EQ(r->stats.races, 0) << r->stats.checksLine();
  EXPECT_FALSE(r->stats.deadlock);
  EXPECT_TRUE(r->passed());
}

TEST_P(GemmVerify, RaggedShapes) {
  for (const Shape &s : kShapes) {
    SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
    expectVerified(params(s, GetParam()), std::get<0>(GetParam()));
  }
}

TEST_P(GemmVerify, Square512) { expectVerified(params({512, 512, 512}, GetParam()), std::get<0>(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Emulator, GemmVerify,
                         ::testing::Combine(::testing::Values("gfx942", "gfx90a", "sm_90a"), ::testing::Values("bf16", "f16"),
                                            ::testing::Values("f32", "bf16")),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::get<2>(info.param);
                         });

// Software pipelining (tilec-pipeline-loops): every stage count gives the same
// verified result with no races (its barriers are placed by analysis, and the
// emulator's race checker would see a missing one) and no out-of-bounds
// accesses (the prefetch past the last k step reads zeros through the buffer
// bounds check).
TEST(GemmPipelined, EveryStageCountVerifies) {
  for (const char *arch : {"gfx942", "gfx90a"})
    for (int stages = 1; stages <= 4; ++stages) {
      SCOPED_TRACE(std::string(arch) + " stages=" + std::to_string(stages));
      KernelParams p = {{"M", "300"}, {"N", "200"}, {"K", "333"}, {"stages", std::to_string(stages)}};
      expectVerified(p, arch);
    }
}

// Grouped tile order and the XCD remap (KernelBuilder::tileOrder) visit every
// C tile exactly once: an unvisited tile stays NaN and a tile visited twice
// cannot hide one unvisited. Tile counts here are not multiples of the group
// or of the 8 chiplets (15 x 11 = 165 tiles; 3 x 1; 1 x 7).
TEST(GemmTileOrder, EveryTileOnce) {
  const Shape shapes[] = {{900, 700, 40}, {150, 20, 9}, {5, 420, 33}};
  const std::pair<const char *, const char *> orders[] = {{"4", "1"}, {"1", "8"}, {"4", "8"}, {"16", "8"}, {"3", "5"}};
  for (const Shape &s : shapes)
    for (auto [group, xcds] : orders) {
      SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " group_m=" + group + " xcds=" + xcds);
      expectVerified({{"M", std::to_string(s.m)}, {"N", std::to_string(s.n)}, {"K", std::to_string(s.k)},
                      {"block_m", "64"}, {"block_n", "64"}, {"group_m", group}, {"xcds", xcds}},
                     "gfx942");
    }
}

/// A gfx942 emulator device with 1 MiB of zeroed memory at `base` (null,
/// with `error` saying why, when it could not be had).
struct EmulatedGfx942 {
  std::unique_ptr<Device> device;
  char *base = nullptr;
  std::string error;
  EmulatedGfx942() {
    Result<std::unique_ptr<Device>> dev = Device::open(DeviceKind::Emulator, "gfx942");
    if (!dev.ok()) {
      error = dev.error();
      return;
    }
    device = std::move(*dev);
    Result<void *> mem = device->allocate(size_t(1) << 20);
    if (!mem.ok()) {
      error = mem.error();
      return;
    }
    std::memset(*mem, 0, size_t(1) << 20);
    base = static_cast<char *>(*mem);
  }
};

// A kernel compiled for K and N that are multiples of 8 (the default 4096)
// moves 16 bytes per load; launched on K = 100 it would read across rows, so
// the launch refuses it with the argument and the requirement named, and a
// misaligned pointer likewise. The matching sizes launch.
TEST(GemmDivisibility, LaunchRefusesTensorsTheKernelWasNotCompiledFor) {
  Result<Kernel> k = findKernel("gemm")->build({});
  ASSERT_TRUE(k.ok()) << k.error();
  Result<CompiledKernel> c = compile(*k, {.arch = "gfx942"});
  ASSERT_TRUE(c.ok()) << c.error();
  ASSERT_EQ(c->params.size(), 3u);
  EXPECT_EQ(c->params[0].divisibility, 8);
  EXPECT_EQ(c->params[1].divisibility, 8);
  EXPECT_EQ(c->params[2].divisibility, 1);
  EmulatedGfx942 emu;
  ASSERT_TRUE(emu.base) << emu.error;
  char *base = emu.base;
  auto launch = [&](int64_t K, size_t skew) {
    return emu.device->launch(*c, {LaunchArg::tensor(base + skew, {64, K}), LaunchArg::tensor(base + 262144, {K, 64}),
                               LaunchArg::tensor(base + 524288, {64, 64})});
  };
  Result<LaunchStats> ragged = launch(100, 0);
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.error().find("argument 0 ('A'): innermost extent 100 is not a multiple of 8"), std::string::npos)
      << ragged.error();
  Result<LaunchStats> skewed = launch(64, 2);
  ASSERT_FALSE(skewed.ok());
  EXPECT_NE(skewed.error().find("argument 0 ('A'): data is not aligned to 16 bytes"), std::string::npos)
      << skewed.error();
  Result<LaunchStats> fine = launch(64, 0);
  ASSERT_TRUE(fine.ok()) << fine.error();
  EXPECT_TRUE(fine->clean()) << fine->checksLine();
}

// The strided kernel for sizes and leading dimensions of multiples of 8
// carries the sizes' divisibility on its i32 arguments (K bounds A's rows and
// N B's, layout nn); a launch with a K that breaks it is refused by name.
TEST(GemmDivisibility, LaunchRefusesSizesTheStridedKernelWasNotCompiledFor) {
  Result<Kernel> k = findKernel("gemm")->build({{"M", "64"}, {"N", "64"}, {"K", "64"}, {"lda", "72"}});
  ASSERT_TRUE(k.ok()) << k.error();
  Result<CompiledKernel> c = compile(*k, {.arch = "gfx942"});
  ASSERT_TRUE(c.ok()) << c.error();
  ASSERT_EQ(c->params.size(), 10u);  // A, B, C, M, N, K, batch, batch_stride_a/b/c
  EXPECT_EQ(c->params[0].divisibility, 8);
  EXPECT_EQ(c->params[3].name, "M");
  EXPECT_EQ(c->params[3].divisibility, 1);
  EXPECT_EQ(c->params[4].divisibility, 8);
  EXPECT_EQ(c->params[5].name, "K");
  EXPECT_EQ(c->params[5].divisibility, 8);
  EmulatedGfx942 emu;
  ASSERT_TRUE(emu.base) << emu.error;
  char *base = emu.base;
  auto launch = [&](int K) {
    return emu.device->launch(*c, {LaunchArg::tensor(base, {64, 72}), LaunchArg::tensor(base + 262144, {72, 64}),
                               LaunchArg::tensor(base + 524288, {64, 64}), LaunchArg::i32(64), LaunchArg::i32(64),
                               LaunchArg::i32(K), LaunchArg::i32(1), LaunchArg::i32(64), LaunchArg::i32(72),
                               LaunchArg::i32(64)});
  };
  Result<LaunchStats> ragged = launch(60);
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.error().find("('K'): 60 is not a multiple of 8"), std::string::npos) << ragged.error();
  Result<LaunchStats> fine = launch(64);
  ASSERT_TRUE(fine.ok()) << fine.error();
  EXPECT_TRUE(fine->clean()) << fine->checksLine();
}

// A reference that disagrees with the kernel must be caught, element by
// element, with the first differing elements listed.
TEST(GemmVerifyHarness, WrongReferenceIsAMismatch) {
  KernelInfo info = *findKernel("gemm");
  auto real = info.problem;
  info.problem = [real](const KernelParams &p) -> Result<Problem> {
    Result<Problem> prob = real(p);
    auto ref = prob->reference;
    prob->reference = [ref](const auto &v, auto &expected, auto &tolerance) {
      ref(v, expected, tolerance);
      expected[0][5] += 1.0;  // one wrong element
    };
    return prob;
  };
  Result<RunResult> r = runAndVerify(info, {{"M", "9"}, {"N", "11"}, {"K", "13"}}, emulatorOn("gfx942"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->mismatches, 1);
  EXPECT_FALSE(r->passed());
  ASSERT_EQ(r->firstMismatches.size(), 1u);
  EXPECT_NE(r->firstMismatches[0].find("C[0,5] (of 9x11)"), std::string::npos) << r->firstMismatches[0];
  EXPECT_EQ(r->verifiedLine().rfind("MISMATCH:", 0), 0u);
}

// gfx90a's f16 MFMAs flush subnormal inputs to zero (TargetInfo::
// matrixFlushes16BitSubnormals), dropping their products; gfx942's keep them.
// With K = 4 the accumulation tolerance is about 1e-6, far below a dropped
// product 2^-20..2^-15 x 0.5..1; the GEMM's tolerance covers exactly those
// products, so both targets verify, and their outputs differ (the flush
// happened).
TEST(GemmSubnormals, Gfx90aFlushOfSubnormalInputsIsWithinTheTolerance) {
  const int64_t M = 64, N = 32, K = 4;
  KernelInfo info = *findKernel("gemm");
  auto real = info.problem;
  info.problem = [real](const KernelParams &p) -> Result<Problem> {
    Result<Problem> prob = real(p);
    std::vector<double> &a = prob->tensors[0].values, &b = prob->tensors[1].values;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) {
        const double normal = (i + k) % 2 ? -(0.25 + double((i * K + k) % 13) / 16) : 0.25 + double(k) / 8;
        const bool subnormal = i % 5 == 0 && k == 2;  // 2^-20, 2^-19 or 3 * 2^-20, exact in f16
        a.push_back(subnormal ? double(1 + i % 3) * std::ldexp(1.0, -20 + (i % 9 == 0 ? 5 : 0)) : normal);
      }
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        b.push_back(0.5 + double((k * N + n) % 9) / 16);
    return prob;
  };
  const KernelParams p = {{"M", std::to_string(M)}, {"N", std::to_string(N)}, {"K", std::to_string(K)},
                          {"dtype", "f16"}};
  Result<RunResult> flushed = runAndVerify(info, p, emulatorOn("gfx90a"));
  Result<RunResult> kept = runAndVerify(info, p, emulatorOn("gfx942"));
  ASSERT_TRUE(flushed.ok()) << flushed.error();
  ASSERT_TRUE(kept.ok()) << kept.error();
  EXPECT_TRUE(flushed->passed()) << flushed->verifiedLine() << "\n"
                                 << (flushed->firstMismatches.empty() ? "" : flushed->firstMismatches[0]);
  EXPECT_TRUE(kept->passed()) << kept->verifiedLine();
  ASSERT_EQ(flushed->outputBytes.size(), 1u);
  ASSERT_EQ(kept->outputBytes.size(), 1u);
  EXPECT_NE(flushed->outputBytes[0], kept->outputBytes[0]);
}

// A NaN on either side never lies within a tolerance (outputs start as NaN,
// so an element the kernel never writes cannot pass either).
TEST(GemmVerifyHarness, NaNIsAMismatch) {
  KernelInfo info = *findKernel("gemm");
  auto real = info.problem;
  info.problem = [real](const KernelParams &p) -> Result<Problem> {
    Result<Problem> prob = real(p);
    auto ref = prob->reference;
    prob->reference = [ref](const auto &v, auto &expected, auto &tolerance) {
      ref(v, expected, tolerance);
      for (double &x : expected[0])
        x = std::nan("");
    };
    return prob;
  };
  Result<RunResult> r = runAndVerify(info, {{"M", "5"}, {"N", "6"}, {"K", "7"}}, emulatorOn("gfx90a"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->mismatches, 30);
}

} // namespace
