// fp8 GEMM on gfx942 (issue 4, "Data types"): -p dtype=fp8 (e4m3fnuz A and B,
// docs/hardware.md section 8) through v_mfma_f32_32x32x16_fp8_fp8, run in the CPU
// wavefront emulator on the ragged shapes of GemmVerifyTest.cpp with
// non-trivial per-tensor scales, C = scale_a * scale_b * (A @ B). The
// tolerance is the fp8 problem's (kernels/gemm/GemmReference.cpp, gemmFp8Problem). Also: the
// host fp8 conversions of the run harness, and that the scalar arguments reach
// the kernel.
#include "gemm/GemmReference.h"
#include "Run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

struct Shape {
  int64_t m, n, k;
};

// The shapes of GemmVerifyTest.cpp.
const Shape kShapes[] = {{1, 1, 1},     {7, 31, 64},   {31, 257, 7},  {64, 64, 64},
                         {100, 7, 257}, {257, 100, 31}, {1, 257, 100}, {257, 1, 1}};

using Case = std::tuple<std::string, std::string, std::string>;  // out, scale_a, scale_b

class GemmVerifyFp8 : public ::testing::TestWithParam<Case> {};

KernelParams params(const Shape &s, const Case &c) {
  return {{"M", std::to_string(s.m)},         {"N", std::to_string(s.n)},       {"K", std::to_string(s.k)},
          {"dtype", "fp8"},                   {"out", std::get<0>(c)},          {"scale_a", std::get<1>(c)},
          {"scale_b", std::get<2>(c)}};
}

RunOptions emulatorOnGfx942() {
  RunOptions o;
  o.compile.arch = "gfx942";
  o.device = DeviceKind::Emulator;
  o.seed = 7;
  return o;
}

void expectVerified(const KernelParams &p) {
  Result<RunResult> r = runAndVerify(*findKernel("gemm"), p, emulatorOnGfx942());
  ASSERT_TRUE(r.ok()) << r.error();
  // Ragged K and N give kernels that assume less of them ("_div4x1"); see
  // GemmKernel.SpecialisedOnWhatKAndNAreMultiplesOf.
  EXPECT_EQ(r->kernel.name.rfind("gemm_fp8e4m3fnuz_" + p.at("out") + "_128x128x32_w4_s2", 0), 0u) << r->kernel.name;
  EXPECT_EQ(r->mismatches, 0) << r->verifiedLine() << "\n" << (r->firstMismatches.empty() ? "" : r->firstMismatches[0]);
  EXPECT_EQ(r->elements, std::stoll(p.at("M")) * std::stoll(p.at("N")));
  EXPECT_TRUE(r->stats.checked);
  EXPECT_EQ(r->stats.outOfBounds, 0) << r->stats.checksLine();
  EXPECT_EQ(r->stats.races, 0) << r->stats.checksLine();
  EXPECT_TRUE(r->stats.messages.empty()) << r->stats.messages[0];
  EXPECT_TRUE(r->passed());
}

TEST_P(GemmVerifyFp8, RaggedShapes) {
  for (const Shape &s : kShapes) {
    SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
    expectVerified(params(s, GetParam()));
  }
}

TEST_P(GemmVerifyFp8, Square512) { expectVerified(params({512, 512, 512}, GetParam())); }

INSTANTIATE_TEST_SUITE_P(Emulator, GemmVerifyFp8,
                         ::testing::Values(Case{"f32", "0.375", "-2.5"}, Case{"bf16", "0.375", "-2.5"},
                                           Case{"f32", "1", "1"}, Case{"f32", "3.1e-3", "17.25"}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::string s = "gfx942_fp8_" + std::get<0>(info.param) + "_scales_" +
                                           std::get<1>(info.param) + "_" + std::get<2>(info.param);
                           for (char &ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return s;
                         });

// The scales are kernel arguments: a kernel given scale_b = 1 while the
// reference expects -2.5 must mismatch everywhere the product is not 0.
TEST(GemmVerifyFp8Harness, ScalarArgumentsReachTheKernel) {
  KernelInfo info = *findKernel("gemm");
  auto real = info.problem;
  info.problem = [real](const KernelParams &p) -> Result<Problem> {
    Result<Problem> prob = real(p);
    if (prob.ok()) {
      EXPECT_EQ(prob->scalars.size(), 2u);
      EXPECT_EQ(prob->scalars[1].name, "scale_b");
      EXPECT_EQ(prob->scalars[1].position, 4u);
      prob->scalars[1].value = 1.0f;  // what the kernel receives
    }
    return prob;
  };
  Result<RunResult> r = runAndVerify(
      info, {{"M", "9"}, {"N", "11"}, {"K", "13"}, {"dtype", "fp8"}, {"scale_a", "0.5"}, {"scale_b", "-2.5"}},
      emulatorOnGfx942());
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GT(r->mismatches, 90) << r->verifiedLine();
  EXPECT_FALSE(r->passed());
}

// --- host conversions of the run harness (section 8) ------------------------------------

double fp8Value(int c) {
  int e = (c >> 3) & 15, m = c & 7;
  double v = e == 0 ? m / 1024.0 : (1.0 + m / 8.0) * std::pow(2.0, e - 8);
  return (c & 0x80) ? -v : v;
}

uint8_t encode(double v) {
  uint8_t b = 0xaa;
  storeElement(DType::fp8e4m3fnuz, &b, 0, v);
  return b;
}

TEST(Fp8HostConversions, DecodeEveryCode) {
  for (int c = 0; c < 256; ++c) {
    uint8_t b = static_cast<uint8_t>(c);
    double v = loadElement(DType::fp8e4m3fnuz, &b, 0);
    if (c == 0x80)
      EXPECT_TRUE(std::isnan(v));
    else
      EXPECT_EQ(v, fp8Value(c)) << c;
  }
}

// Round to nearest even against a brute-force search, at every value, every
// midpoint (tie) and next to it; saturation; NaN; no -0.
TEST(Fp8HostConversions, EncodeIsNearestEvenSaturating) {
  auto nearest = [](double x) {
    int best = 0;
    double bestErr = INFINITY;
    for (int c = 0; c < 256; ++c) {
      if (c == 0x80)
        continue;
      double err = std::fabs(fp8Value(c) - x);
      if (err < bestErr || (err == bestErr && (c & 1) == 0 && (best & 1) == 1)) {
        best = c;
        bestErr = err;
      }
    }
    return static_cast<uint8_t>((best & 0x7f) == 0 ? 0 : best);
  };
  for (int c = 0; c < 0x7f; ++c) {
    double lo = fp8Value(c), hi = fp8Value(c + 1), mid = (lo + hi) / 2;
    for (double sgn : {1.0, -1.0})
      for (double x : {lo, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), hi})
        EXPECT_EQ(encode(sgn * x), nearest(sgn * x)) << sgn * x;
  }
  EXPECT_EQ(encode(240), 0x7f);
  EXPECT_EQ(encode(1e9), 0x7f);
  EXPECT_EQ(encode(-INFINITY), 0xff);
  EXPECT_EQ(encode(NAN), 0x80);
  EXPECT_EQ(encode(-0.0), 0x00);
  EXPECT_EQ(encode(-1e-9), 0x00);
}

} // namespace
