// bf8 GEMM on gfx942 (issue 4, "Data types"): -p dtype=bf8 (e5m2fnuz A and B,
// docs/hardware.md section 8; AMD's builtins call the format "bf8") through
// v_mfma_f32_32x32x16_bf8_bf8 (section 1: the fp8 instruction's lane layout),
// run in the CPU wavefront emulator on the ragged shapes of GemmVerifyTest.cpp
// with non-trivial per-tensor scales, C = scale_a * scale_b * (A @ B). The
// tolerance is the fp8 problem's (kernels/gemm/GemmReference.cpp, gemmFp8Problem): e5m2
// products are exact in f32 (3-bit significands), so the same bound holds.
// Also: the spelling fp8e5m2fnuz, the host e5m2 conversions of the run
// harness, and that a bf8 kernel is not an fp8 one.
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

class GemmVerifyBf8 : public ::testing::TestWithParam<Case> {};

KernelParams params(const Shape &s, const Case &c, const std::string &dtype = "bf8") {
  return {{"M", std::to_string(s.m)},         {"N", std::to_string(s.n)},       {"K", std::to_string(s.k)},
          {"dtype", dtype},                   {"out", std::get<0>(c)},          {"scale_a", std::get<1>(c)},
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
  EXPECT_EQ(r->kernel.name.rfind("gemm_fp8e5m2fnuz_" + p.at("out") + "_128x128x32_w4_s2", 0), 0u) << r->kernel.name;
  EXPECT_EQ(r->mismatches, 0) << r->verifiedLine() << "\n" << (r->firstMismatches.empty() ? "" : r->firstMismatches[0]);
  EXPECT_EQ(r->elements, std::stoll(p.at("M")) * std::stoll(p.at("N")));
  EXPECT_TRUE(r->stats.checked);
  EXPECT_EQ(r->stats.outOfBounds, 0) << r->stats.checksLine();
  EXPECT_EQ(r->stats.races, 0) << r->stats.checksLine();
  EXPECT_TRUE(r->stats.messages.empty()) << r->stats.messages[0];
  EXPECT_TRUE(r->passed());
}

TEST_P(GemmVerifyBf8, RaggedShapes) {
  for (const Shape &s : kShapes) {
    SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
    expectVerified(params(s, GetParam()));
  }
}

TEST_P(GemmVerifyBf8, Square512) { expectVerified(params({512, 512, 512}, GetParam())); }

INSTANTIATE_TEST_SUITE_P(Emulator, GemmVerifyBf8,
                         ::testing::Values(Case{"f32", "0.375", "-2.5"}, Case{"bf16", "0.375", "-2.5"},
                                           Case{"f32", "1", "1"}, Case{"f32", "3.1e-3", "17.25"}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::string s = "gfx942_bf8_" + std::get<0>(info.param) + "_scales_" +
                                           std::get<1>(info.param) + "_" + std::get<2>(info.param);
                           for (char &ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return s;
                         });

// The long spelling selects the same kernel.
TEST(GemmVerifyBf8Spelling, Fp8e5m2fnuzIsBf8) {
  expectVerified(params({100, 70, 33}, Case{"f32", "0.375", "-2.5"}, "fp8e5m2fnuz"));
}

// The kernel really multiplies e5m2: a reference that reads the inputs as
// e4m3fnuz (the other fp8 format) must mismatch almost everywhere.
TEST(GemmVerifyBf8Harness, ReferenceInAnotherFormatMismatches) {
  KernelInfo info = *findKernel("gemm");
  auto real = info.problem;
  info.problem = [real](const KernelParams &p) -> Result<Problem> {
    Result<Problem> prob = real(p);
    if (prob.ok()) {
      EXPECT_EQ(prob->tensors[0].dtype, DType::fp8e5m2fnuz);
      EXPECT_EQ(prob->tensors[1].dtype, DType::fp8e5m2fnuz);
      EXPECT_EQ(prob->scalars.size(), 2u);
      auto ref = prob->reference;
      prob->reference = [ref](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                              std::vector<std::vector<double>> &tolerance) {
        std::vector<std::vector<double>> w = v;
        for (int t = 0; t < 2; ++t)
          for (double &x : w[t]) {  // the e5m2 value's bits read as e4m3
            uint8_t b = 0;
            storeElement(DType::fp8e5m2fnuz, &b, 0, x);
            x = loadElement(DType::fp8e4m3fnuz, &b, 0);
            if (std::isnan(x))
              x = 0;
          }
        ref(w, expected, tolerance);
      };
    }
    return prob;
  };
  Result<RunResult> r = runAndVerify(
      info, {{"M", "9"}, {"N", "11"}, {"K", "13"}, {"dtype", "bf8"}, {"scale_a", "0.5"}, {"scale_b", "-2.5"}},
      emulatorOnGfx942());
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GT(r->mismatches, 90) << r->verifiedLine();
  EXPECT_FALSE(r->passed());
}

// --- host conversions of the run harness (section 8) ------------------------------------

/// e5m2fnuz: bias 16, subnormals m/4 * 2^-15, max 57344 (0x80 is the NaN).
double bf8Value(int c) {
  int e = (c >> 2) & 31, m = c & 3;
  double v = e == 0 ? (m / 4.0) * std::pow(2.0, -15) : (1.0 + m / 4.0) * std::pow(2.0, e - 16);
  return (c & 0x80) ? -v : v;
}

uint8_t encode(double v) {
  uint8_t b = 0xaa;
  storeElement(DType::fp8e5m2fnuz, &b, 0, v);
  return b;
}

TEST(Bf8HostConversions, DecodeEveryCode) {
  for (int c = 0; c < 256; ++c) {
    uint8_t b = static_cast<uint8_t>(c);
    double v = loadElement(DType::fp8e5m2fnuz, &b, 0);
    if (c == 0x80)
      EXPECT_TRUE(std::isnan(v));
    else
      EXPECT_EQ(v, bf8Value(c)) << c;
  }
  uint8_t max = 0x7f, minNormal = 0x04, minSub = 0x01;
  EXPECT_EQ(loadElement(DType::fp8e5m2fnuz, &max, 0), 57344.0);
  EXPECT_EQ(loadElement(DType::fp8e5m2fnuz, &minNormal, 0), std::ldexp(1.0, -15));
  EXPECT_EQ(loadElement(DType::fp8e5m2fnuz, &minSub, 0), std::ldexp(1.0, -17));
}

// Round to nearest even against a brute-force search, at every value, every
// midpoint (tie) and next to it; saturation; NaN; no -0.
TEST(Bf8HostConversions, EncodeIsNearestEvenSaturating) {
  auto nearest = [](double x) {
    int best = 0;
    double bestErr = INFINITY;
    for (int c = 0; c < 256; ++c) {
      if (c == 0x80)
        continue;
      double err = std::fabs(bf8Value(c) - x);
      if (err < bestErr || (err == bestErr && (c & 1) == 0 && (best & 1) == 1)) {
        best = c;
        bestErr = err;
      }
    }
    return static_cast<uint8_t>((best & 0x7f) == 0 ? 0 : best);
  };
  for (int c = 0; c < 0x7f; ++c) {
    double lo = bf8Value(c), hi = bf8Value(c + 1), mid = (lo + hi) / 2;
    for (double sgn : {1.0, -1.0})
      for (double x : {lo, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), hi})
        EXPECT_EQ(encode(sgn * x), nearest(sgn * x)) << sgn * x;
  }
  EXPECT_EQ(encode(57344), 0x7f);
  EXPECT_EQ(encode(61440), 0x7f);  // the midpoint to 65536 would round up: saturates
  EXPECT_EQ(encode(1e9), 0x7f);
  EXPECT_EQ(encode(-INFINITY), 0xff);
  EXPECT_EQ(encode(NAN), 0x80);
  EXPECT_EQ(encode(-0.0), 0x00);
  EXPECT_EQ(encode(-1e-9), 0x00);
  EXPECT_EQ(encode(std::ldexp(1.0, -18)), 0x00);     // half the smallest subnormal: tie, to even
  EXPECT_EQ(encode(3 * std::ldexp(1.0, -18)), 0x02);  // 1.5 * 2^-17: tie, to even
  EXPECT_EQ(encode(1.125), 0x40);                     // tie between m=0 and m=1
  EXPECT_EQ(encode(1.375), 0x42);                     // tie between m=1 and m=2
}

} // namespace
