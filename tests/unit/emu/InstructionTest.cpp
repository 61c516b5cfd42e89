// Instruction semantics of the emulator, each against a reference computed
// element by element: MFMA (docs/hardware.md section 1) and WMMA (section 2)
// with operands placed and results read through the calculator's layout
// tables, buffer out-of-range rules (section 4), ds_bpermute (section 5),
// bf16 round-to-nearest-even, barriers.
#include "EmuTestUtil.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

using namespace tilec::emu;
using namespace tilec::emu::test;

namespace {

/// Distinct values exact in bf16 and f16: +-(1 + j/128) * 2^e.
float distinctValue(int idx, int salt) {
  int j = (idx * 37 + salt) % 128;
  int e = (idx / 128) % 4 - 1;
  float v = std::ldexp(1.0f + j / 128.0f, e);
  return (idx + salt) % 3 == 0 ? -v : v;
}

struct MatrixCase {
  const char *arch;
  const char *table;    ///< e.g. "cdna3/v_mfma_f32_32x32x8_bf16"
  const char *builtin;  ///< tl::hw function
  const char *abType;   ///< short4_t, half16_t, ...
  const char *accType;  ///< float16_t, ...
  int m, n, k, kPerLane, accPerLane, lanes;
  bool bf16;
};

std::string matrixKernel(const MatrixCase &c) {
  std::string ab = c.abType;
  std::string bits = ab.rfind("half", 0) == 0 ? "short" + ab.substr(4) : ab;  // raw-bits vector type
  return std::string("#include \"tilec_prelude.h\"\n"
                     "extern \"C\" __global__ void matrix_op(const unsigned short *a, const unsigned short *b, "
                     "const float *c, float *d) {\n"
                     "  int l = tl::hw::thread_id();\n"
                     "  tl::") + bits + " av, bv;\n  tl::" + c.accType + " cv;\n" +
         "  for (int e = 0; e < " + std::to_string(c.kPerLane) + "; ++e) { av[e] = (short)a[l * " +
         std::to_string(c.kPerLane) + " + e]; bv[e] = (short)b[l * " + std::to_string(c.kPerLane) + " + e]; }\n" +
         "  for (int r = 0; r < " + std::to_string(c.accPerLane) + "; ++r) cv[r] = c[l * " +
         std::to_string(c.accPerLane) + " + r];\n" + "  tl::" + c.accType + " dv = tl::hw::" + c.builtin +
         "(__builtin_bit_cast(tl::" + ab + ", av), __builtin_bit_cast(tl::" + ab + ", bv), cv);\n" +
         "  for (int r = 0; r < " + std::to_string(c.accPerLane) + "; ++r) d[l * " + std::to_string(c.accPerLane) +
         " + r] = dv[r];\n}\n";
}

class MatrixInstr : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(MatrixInstr, MatchesReferenceThroughLayoutTables) {
  const MatrixCase &c = GetParam();
  LayoutTable ta = readLayout(std::string(c.table) + ".A.csv"), tb = readLayout(std::string(c.table) + ".B.csv"),
              td = readLayout(std::string(c.table) + ".D.csv");
  ASSERT_EQ((int)ta.cells.size(), c.lanes);
  ASSERT_EQ((int)tb.cells.size(), c.lanes);
  ASSERT_EQ((int)td.cells.size(), c.lanes);

  std::vector<float> A(c.m * c.k), B(c.k * c.n), C(c.m * c.n);
  for (int i = 0; i < c.m * c.k; ++i)
    A[i] = distinctValue(i, 1);
  for (int i = 0; i < c.k * c.n; ++i)
    B[i] = distinctValue(i, 5);
  for (int i = 0; i < c.m * c.n; ++i)
    C[i] = 0.5f * i - 7.25f;

  auto emu = makeEmulator(c.arch);
  auto *ra = (uint16_t *)emu->allocate(c.lanes * c.kPerLane * 2);
  auto *rb = (uint16_t *)emu->allocate(c.lanes * c.kPerLane * 2);
  auto *rc = (float *)emu->allocate(c.lanes * c.accPerLane * 4);
  auto *rd = (float *)emu->allocate(c.lanes * c.accPerLane * 4);
  auto bits = [&](float v) { return c.bf16 ? bf16Bits(v) : f16Bits(v); };
  for (int l = 0; l < c.lanes; ++l) {
    ASSERT_EQ((int)ta.cells[l].size(), c.kPerLane);
    ASSERT_EQ((int)td.cells[l].size(), c.accPerLane);
    for (int e = 0; e < c.kPerLane; ++e) {
      auto [m, k] = ta.cells[l][e];
      auto [kb, n] = tb.cells[l][e];
      ra[l * c.kPerLane + e] = bits(A[m * c.k + k]);
      rb[l * c.kPerLane + e] = bits(B[kb * c.n + n]);
    }
    for (int r = 0; r < c.accPerLane; ++r) {
      auto [m, n] = td.cells[l][r];
      rc[l * c.accPerLane + r] = C[m * c.n + n];
    }
  }
  auto k = loadOrFail(*emu, matrixKernel(c), "matrix_op");
  ASSERT_TRUE(k);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, c.lanes},
                                  {Arg::pointer(ra), Arg::pointer(rb), Arg::pointer(rc), Arg::pointer(rd)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  int checked = 0;
  for (int l = 0; l < c.lanes; ++l)
    for (int r = 0; r < c.accPerLane; ++r) {
      auto [m, n] = td.cells[l][r];
      double ref = C[m * c.n + n];
      for (int kk = 0; kk < c.k; ++kk)
        ref += (double)A[m * c.k + kk] * (double)B[kk * c.n + n];
      // One f32 rounding of the exact result (section "Not verified": compare with a tolerance).
      EXPECT_NEAR(rd[l * c.accPerLane + r], ref, 1e-6 * (std::fabs(ref) + 1)) << "lane " << l << " elem " << r;
      ++checked;
    }
  EXPECT_EQ(checked, c.lanes * c.accPerLane);
}

INSTANTIATE_TEST_SUITE_P(
    Section1And2, MatrixInstr,
    ::testing::Values(
        MatrixCase{"gfx942", "cdna3/v_mfma_f32_32x32x8_bf16", "mfma_f32_32x32x8bf16_1k", "short4_t", "float16_t", 32,
                   32, 8, 4, 16, 64, true},
        MatrixCase{"gfx942", "cdna3/v_mfma_f32_16x16x16_bf16", "mfma_f32_16x16x16bf16_1k", "short4_t", "float4_t",
                   16, 16, 16, 4, 4, 64, true},
        MatrixCase{"gfx942", "cdna3/v_mfma_f32_32x32x8_f16", "mfma_f32_32x32x8f16", "half4_t", "float16_t", 32, 32,
                   8, 4, 16, 64, false},
        MatrixCase{"gfx942", "cdna3/v_mfma_f32_16x16x16_f16", "mfma_f32_16x16x16f16", "half4_t", "float4_t", 16, 16,
                   16, 4, 4, 64, false},
        MatrixCase{"gfx90a", "cdna2/v_mfma_f32_32x32x8bf16_1k", "mfma_f32_32x32x8bf16_1k", "short4_t", "float16_t",
                   32, 32, 8, 4, 16, 64, true},
        MatrixCase{"gfx90a", "cdna2/v_mfma_f32_16x16x16bf16_1k", "mfma_f32_16x16x16bf16_1k", "short4_t",
                   "float4_t", 16, 16, 16, 4, 4, 64, true},
        MatrixCase{"gfx90a", "cdna2/v_mfma_f32_32x32x8f16", "mfma_f32_32x32x8f16", "half4_t", "float16_t", 32, 32, 8,
                   4, 16, 64, false},
        MatrixCase{"gfx90a", "cdna2/v_mfma_f32_16x16x16f16", "mfma_f32_16x16x16f16", "half4_t", "float4_t", 16, 16,
                   16, 4, 4, 64, false},
        MatrixCase{"gfx1151", "rdna3/v_wmma_f32_16x16x16_f16", "wmma_f32_16x16x16_f16_w32", "half16_t", "float8_t",
                   16, 16, 16, 16, 8, 32, false},
        MatrixCase{"gfx1151", "rdna3/v_wmma_f32_16x16x16_bf16", "wmma_f32_16x16x16_bf16_w32", "short16_t",
                   "float8_t", 16, 16, 16, 16, 8, 32, true}),
    [](const auto &info) {
      std::string s = std::string(info.param.arch) + "_" + (strrchr(info.param.table, '/') + 1);
      for (char &ch : s)
        if (!isalnum((unsigned char)ch))
          ch = '_';
      return s;
    });

// --- subnormals in the f16/bf16 matrix instructions ----------------------------------------

// gfx90a's (CDNA2) f16/bf16 MFMAs flush subnormal inputs and outputs to zero;
// gfx942's MFMAs and gfx1151's WMMAs keep them (TargetInfo::
// matrixFlushes16BitSubnormals). Every lane holds the same A and B element
// in every slot and the same C, so each D element is c + 16 * a * b, exact in
// f32 for the powers of two below (the check is exact equality).
struct SubnormalCase {
  const char *what;
  bool bf16;
  float a, b, c;
  float kept;     ///< D where subnormals are kept
  float flushed;  ///< D where they are flushed
};

const SubnormalCase kSubnormalCases[] = {
    {"f16 subnormal A", false, 0x1p-20f, 1.0f, 0.0f, 0x1p-16f, 0.0f},
    {"f16 subnormal B", false, 1.0f, -0x1p-24f, 0.0f, -0x1p-20f, 0.0f},
    {"bf16 subnormal A", true, 0x1p-130f, 0x1p100f, 0.0f, 0x1p-26f, 0.0f},
    {"bf16 normal A, B; subnormal f32 D", true, 0x1p-70f, 0x1p-64f, 0.0f, 0x1p-130f, 0.0f},
    {"bf16 normal A, B; subnormal f32 C", true, 0x1p-62f, 0x1p-62f, 0x1p-130f, 0x1p-120f + 0x1p-130f, 0x1p-120f},
};

struct SubnormalTarget {
  const char *arch;
  bool flushes;
  const char *f16Builtin, *bf16Builtin, *f16Type, *accType;
  int kPerLane, accPerLane, lanes;
};

TEST(MatrixSubnormals, Gfx90aFlushesF16AndBf16SubnormalsOthersKeepThem) {
  const SubnormalTarget targets[] = {
      {"gfx942", false, "mfma_f32_16x16x16f16", "mfma_f32_16x16x16bf16_1k", "half4_t", "float4_t", 4, 4, 64},
      {"gfx90a", true, "mfma_f32_16x16x16f16", "mfma_f32_16x16x16bf16_1k", "half4_t", "float4_t", 4, 4, 64},
      {"gfx1151", false, "wmma_f32_16x16x16_f16_w32", "wmma_f32_16x16x16_bf16_w32", "half16_t", "float8_t", 16, 8,
       32},
  };
  for (const SubnormalTarget &t : targets) {
    EXPECT_EQ(tilec::lookupTarget(t.arch)->matrixFlushes16BitSubnormals, t.flushes) << t.arch;
    auto emu = makeEmulator(t.arch);
    for (bool bf16 : {false, true}) {
      const std::string kp = std::to_string(t.kPerLane), acc = std::to_string(t.accPerLane);
      const std::string raw = "short" + kp + "_t", ab = bf16 ? raw : t.f16Type;
      const std::string src =
          std::string("#include \"tilec_prelude.h\"\n"
                      "extern \"C\" __global__ void sub(const unsigned short *ab, const float *c, float *d) {\n"
                      "  tl::") +
          raw + " av, bv;\n  tl::" + t.accType + " cv;\n  for (int e = 0; e < " + kp +
          "; ++e) { av[e] = (short)ab[0]; bv[e] = (short)ab[1]; }\n  for (int r = 0; r < " + acc +
          "; ++r) cv[r] = c[0];\n  tl::" + t.accType + " dv = tl::hw::" + (bf16 ? t.bf16Builtin : t.f16Builtin) +
          "(__builtin_bit_cast(tl::" + ab + ", av), __builtin_bit_cast(tl::" + ab + ", bv), cv);\n" +
          "  for (int r = 0; r < " + acc + "; ++r) d[tl::hw::thread_id() * " + acc + " + r] = dv[r];\n}\n";
      auto k = loadOrFail(*emu, src, "sub");
      ASSERT_TRUE(k);
      auto *abBits = (uint16_t *)emu->allocate(4);
      auto *c = (float *)emu->allocate(4);
      auto *d = (float *)emu->allocate(t.lanes * t.accPerLane * 4);
      for (const SubnormalCase &sc : kSubnormalCases) {
        if (sc.bf16 != bf16)
          continue;
        SCOPED_TRACE(std::string(t.arch) + ": " + sc.what);
        abBits[0] = bf16 ? bf16Bits(sc.a) : f16Bits(sc.a);
        abBits[1] = bf16 ? bf16Bits(sc.b) : f16Bits(sc.b);
        c[0] = sc.c;
        LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, t.lanes},
                                        {Arg::pointer(abBits), Arg::pointer(c), Arg::pointer(d)});
        EXPECT_TRUE(rep.clean()) << rep.summary();
        const float want = t.flushes ? sc.flushed : sc.kept;
        for (int i = 0; i < t.lanes * t.accPerLane; ++i)
          ASSERT_EQ(d[i], want) << "element " << i;
      }
    }
  }
}

// --- fp8 MFMA on gfx942 (sections 1 and 8) ------------------------------------------------

/// Bits of an fp8 e4m3fnuz value, for tests: sign, biased exponent (0..15), mantissa (0..7).
uint8_t fp8Code(bool neg, int e, int m) { return (uint8_t)((neg ? 0x80 : 0) | (e << 3) | m); }
/// Exact value of a code (independent of the emulator's and prelude's decoders).
double fp8Value(uint8_t c) {
  if (c == 0x80)
    return NAN;
  int e = (c >> 3) & 15, m = c & 7;
  double v = e == 0 ? m / 1024.0 : (1.0 + m / 8.0) * std::pow(2.0, e - 8);
  return (c & 0x80) ? -v : v;
}
/// Varied fp8 codes: normals of magnitude 2^-2..2^1 with every mantissa, some
/// subnormals and zeros.
uint8_t variedFp8(int idx, int salt) {
  int h = idx * 37 + salt;
  if (h % 11 == 0)
    return fp8Code(h % 2, 0, h % 8);  // subnormal (or zero when h % 8 == 0)
  return fp8Code(h % 3 == 0, (idx / 8) % 4 + 6, h % 8);
}

struct Fp8MatrixCase {
  const char *table;    ///< e.g. "cdna3/v_mfma_f32_32x32x16_fp8_fp8"
  const char *builtin;  ///< tl::hw function
  const char *accType;
  int m, n, k, accPerLane;
};

class Fp8MatrixInstr : public ::testing::TestWithParam<Fp8MatrixCase> {};

TEST_P(Fp8MatrixInstr, MatchesReferenceThroughLayoutTables) {
  const Fp8MatrixCase &c = GetParam();
  const int lanes = 64, kPerLane = 8;
  LayoutTable ta = readLayout(std::string(c.table) + ".A.csv"), tb = readLayout(std::string(c.table) + ".B.csv"),
              td = readLayout(std::string(c.table) + ".D.csv");
  ASSERT_EQ((int)ta.cells.size(), lanes);
  ASSERT_EQ((int)tb.cells.size(), lanes);
  ASSERT_EQ((int)td.cells.size(), lanes);

  std::vector<uint8_t> A(c.m * c.k), B(c.k * c.n);
  std::vector<float> C(c.m * c.n);
  for (int i = 0; i < c.m * c.k; ++i)
    A[i] = variedFp8(i, 1);
  for (int i = 0; i < c.k * c.n; ++i)
    B[i] = variedFp8(i, 5);
  for (int i = 0; i < c.m * c.n; ++i)
    C[i] = 0.5f * i - 7.25f;

  auto emu = makeEmulator("gfx942");
  // One lane's operand is 8 bytes (a `long`): byte j = bits 8j..8j+7, the table's column j.
  auto *ra = (uint8_t *)emu->allocate(lanes * kPerLane);
  auto *rb = (uint8_t *)emu->allocate(lanes * kPerLane);
  auto *rc = (float *)emu->allocate(lanes * c.accPerLane * 4);
  auto *rd = (float *)emu->allocate(lanes * c.accPerLane * 4);
  for (int l = 0; l < lanes; ++l) {
    ASSERT_EQ((int)ta.cells[l].size(), kPerLane);
    ASSERT_EQ((int)td.cells[l].size(), c.accPerLane);
    for (int j = 0; j < kPerLane; ++j) {
      auto [m, k] = ta.cells[l][j];
      auto [kb, n] = tb.cells[l][j];
      ra[l * kPerLane + j] = A[m * c.k + k];
      rb[l * kPerLane + j] = B[kb * c.n + n];
    }
    for (int r = 0; r < c.accPerLane; ++r) {
      auto [m, n] = td.cells[l][r];
      rc[l * c.accPerLane + r] = C[m * c.n + n];
    }
  }
  std::string acc = std::to_string(c.accPerLane);
  std::string src = std::string("#include \"tilec_prelude.h\"\n"
                                "extern \"C\" __global__ void fp8_mfma(const long *a, const long *b, const float *c, "
                                "float *d) {\n"
                                "  int l = tl::hw::thread_id();\n  tl::") +
                    c.accType + " cv;\n  for (int r = 0; r < " + acc + "; ++r) cv[r] = c[l * " + acc + " + r];\n" +
                    "  tl::" + c.accType + " dv = tl::hw::" + c.builtin + "(a[l], b[l], cv);\n" +
                    "  for (int r = 0; r < " + acc + "; ++r) d[l * " + acc + " + r] = dv[r];\n}\n";
  auto k = loadOrFail(*emu, src, "fp8_mfma");
  ASSERT_TRUE(k);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, lanes},
                                  {Arg::pointer(ra), Arg::pointer(rb), Arg::pointer(rc), Arg::pointer(rd)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  int checked = 0;
  for (int l = 0; l < lanes; ++l)
    for (int r = 0; r < c.accPerLane; ++r) {
      auto [m, n] = td.cells[l][r];
      double ref = C[m * c.n + n];
      for (int kk = 0; kk < c.k; ++kk)
        ref += fp8Value(A[m * c.k + kk]) * fp8Value(B[kk * c.n + n]);
      // Products of fp8 values are exact; one f32 rounding of the exact sum.
      EXPECT_NEAR(rd[l * c.accPerLane + r], ref, 1e-6 * (std::fabs(ref) + 1)) << "lane " << l << " elem " << r;
      ++checked;
    }
  EXPECT_EQ(checked, lanes * c.accPerLane);
}

INSTANTIATE_TEST_SUITE_P(
    Section1And8, Fp8MatrixInstr,
    ::testing::Values(Fp8MatrixCase{"cdna3/v_mfma_f32_32x32x16_fp8_fp8", "mfma_f32_32x32x16_fp8_fp8", "float16_t", 32,
                                    32, 16, 16},
                      Fp8MatrixCase{"cdna3/v_mfma_f32_16x16x32_fp8_fp8", "mfma_f32_16x16x32_fp8_fp8", "float4_t", 16,
                                    16, 32, 4}),
    [](const auto &info) {
      std::string s = strrchr(info.param.table, '/') + 1;
      for (char &ch : s)
        if (!isalnum((unsigned char)ch))
          ch = '_';
      return s;
    });

// The fp8 MFMA is gfx942's: on a wave32 target it is reported, not run.
TEST(Section1Mfma, Fp8MfmaOnWave32IsReported) {
  auto emu = makeEmulator("gfx1151");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void fp8_w32(float *d) {
  tl::float4_t c = {1, 1, 1, 1};
  d[tl::hw::thread_id()] = tl::hw::mfma_f32_16x16x32_fp8_fp8(0x3838383838383838L, 0x3838383838383838L, c)[0];
}
)", "fp8_w32");
  ASSERT_TRUE(k);
  auto *d = (float *)emu->allocate(32 * 4);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 32}, {Arg::pointer(d)});
  EXPECT_EQ(rep.invalidInstructions, 1);
}

// --- bf8 (e5m2fnuz) MFMA on gfx942 (sections 1 and 8) ------------------------------------
// The calculator tables in tests/data/matrix-layouts/cdna3 cover only the
// fp8_fp8 forms. Section 1 gives v_mfma_f32_{32x32x16,16x16x32}_bf8_bf8 the
// same lane layout as the fp8 ones, so these tests place operands and read
// results through the fp8_fp8 tables and check the bf8 instructions'
// arithmetic (e5m2fnuz decode, f32 accumulation) against a reference.

/// Bits of an fp8 e5m2fnuz value, for tests: sign, biased exponent (0..31), mantissa (0..3).
uint8_t bf8Code(bool neg, int e, int m) { return (uint8_t)((neg ? 0x80 : 0) | (e << 2) | m); }
/// Exact value of an e5m2fnuz code: bias 16, subnormals m/4 * 2^-15, 0x80 NaN
/// (independent of the emulator's and prelude's decoders).
double bf8Value(uint8_t c) {
  if (c == 0x80)
    return NAN;
  int e = (c >> 2) & 31, m = c & 3;
  double v = e == 0 ? (m / 4.0) * std::pow(2.0, -15) : (1.0 + m / 4.0) * std::pow(2.0, e - 16);
  return (c & 0x80) ? -v : v;
}
/// Varied bf8 codes: normals of magnitude 2^-4..2^5 (a range e4m3 cannot
/// hold at its top) with every mantissa, some subnormals and zeros.
uint8_t variedBf8(int idx, int salt) {
  int h = idx * 37 + salt;
  if (h % 11 == 0)
    return bf8Code(h % 2, 0, h % 4);  // subnormal (or zero when h % 4 == 0)
  return bf8Code(h % 3 == 0, (idx / 4 + h) % 10 + 12, h % 4);
}

struct Bf8MatrixCase {
  const char *table;    ///< the fp8 table with the same layout, e.g. "cdna3/v_mfma_f32_32x32x16_fp8_fp8"
  const char *builtin;  ///< tl::hw function (the bf8 instruction)
  const char *accType;
  int m, n, k, accPerLane;
};

/// Places A (m x k) and B (k x n) bf8 codes and C into lane registers through
/// the table, runs `builtin` on the gfx942 emulator and returns D by lane.
struct Bf8Run {
  LayoutTable td;
  std::vector<float> d;  ///< d[lane * accPerLane + r]
  LaunchReport rep;
};
Bf8Run runBf8Mfma(const Bf8MatrixCase &c, const std::vector<uint8_t> &A, const std::vector<uint8_t> &B,
                  const std::vector<float> &C) {
  const int lanes = 64, kPerLane = 8;
  Bf8Run out;
  LayoutTable ta = readLayout(std::string(c.table) + ".A.csv"), tb = readLayout(std::string(c.table) + ".B.csv");
  out.td = readLayout(std::string(c.table) + ".D.csv");
  EXPECT_EQ((int)ta.cells.size(), lanes);
  EXPECT_EQ((int)tb.cells.size(), lanes);
  EXPECT_EQ((int)out.td.cells.size(), lanes);
  if ((int)ta.cells.size() != lanes || (int)tb.cells.size() != lanes || (int)out.td.cells.size() != lanes)
    return out;
  auto emu = makeEmulator("gfx942");
  auto *ra = (uint8_t *)emu->allocate(lanes * kPerLane);
  auto *rb = (uint8_t *)emu->allocate(lanes * kPerLane);
  auto *rc = (float *)emu->allocate(lanes * c.accPerLane * 4);
  auto *rd = (float *)emu->allocate(lanes * c.accPerLane * 4);
  for (int l = 0; l < lanes; ++l) {
    for (int j = 0; j < kPerLane; ++j) {
      auto [m, k] = ta.cells[l][j];
      auto [kb, n] = tb.cells[l][j];
      ra[l * kPerLane + j] = A[m * c.k + k];
      rb[l * kPerLane + j] = B[kb * c.n + n];
    }
    for (int r = 0; r < c.accPerLane; ++r) {
      auto [m, n] = out.td.cells[l][r];
      rc[l * c.accPerLane + r] = C[m * c.n + n];
    }
  }
  std::string acc = std::to_string(c.accPerLane);
  std::string src = std::string("#include \"tilec_prelude.h\"\n"
                                "extern \"C\" __global__ void bf8_mfma(const long *a, const long *b, const float *c, "
                                "float *d) {\n"
                                "  int l = tl::hw::thread_id();\n  tl::") +
                    c.accType + " cv;\n  for (int r = 0; r < " + acc + "; ++r) cv[r] = c[l * " + acc + " + r];\n" +
                    "  tl::" + c.accType + " dv = tl::hw::" + c.builtin + "(a[l], b[l], cv);\n" +
                    "  for (int r = 0; r < " + acc + "; ++r) d[l * " + acc + " + r] = dv[r];\n}\n";
  auto k = loadOrFail(*emu, src, "bf8_mfma");
  if (!k)
    return out;
  out.rep = launchOrFail(*emu, *k, {{1, 1, 1}, lanes},
                         {Arg::pointer(ra), Arg::pointer(rb), Arg::pointer(rc), Arg::pointer(rd)});
  out.d.assign(rd, rd + lanes * c.accPerLane);
  return out;
}

class Bf8MatrixInstr : public ::testing::TestWithParam<Bf8MatrixCase> {};

TEST_P(Bf8MatrixInstr, MatchesReferenceThroughFp8LayoutTables) {
  const Bf8MatrixCase &c = GetParam();
  std::vector<uint8_t> A(c.m * c.k), B(c.k * c.n);
  std::vector<float> C(c.m * c.n);
  for (int i = 0; i < c.m * c.k; ++i)
    A[i] = variedBf8(i, 1);
  for (int i = 0; i < c.k * c.n; ++i)
    B[i] = variedBf8(i, 5);
  for (int i = 0; i < c.m * c.n; ++i)
    C[i] = 0.5f * i - 7.25f;
  Bf8Run run = runBf8Mfma(c, A, B, C);
  ASSERT_EQ((int)run.d.size(), 64 * c.accPerLane);
  EXPECT_TRUE(run.rep.clean()) << run.rep.summary();
  int checked = 0;
  for (int l = 0; l < 64; ++l)
    for (int r = 0; r < c.accPerLane; ++r) {
      auto [m, n] = run.td.cells[l][r];
      double ref = C[m * c.n + n], mag = std::fabs(ref);
      for (int kk = 0; kk < c.k; ++kk) {
        double p = bf8Value(A[m * c.k + kk]) * bf8Value(B[kk * c.n + n]);
        ref += p;
        mag += std::fabs(p);
      }
      // Products of bf8 values are exact; one f32 rounding of the exact sum.
      EXPECT_NEAR(run.d[l * c.accPerLane + r], ref, 0x1p-24 * std::fabs(ref) + 1e-12 * mag)
          << "lane " << l << " elem " << r;
      ++checked;
    }
  EXPECT_EQ(checked, 64 * c.accPerLane);
}

// Every e5m2fnuz code goes through the instruction exactly: D = A @ I with A
// holding codes 0..255 row by row (16x16x32: A[m][k] = code 16m + k for
// k < 16, B[k][n] = 1.0 (code 0x40) for k == n, else 0), so D[m][n] is the
// decoded code 16m + n. The NaN code 0x80 (A[8][0]) makes its whole row NaN
// (NaN * 0 is NaN); the first run holds 0 there instead.
TEST(Section1And8Bf8, MfmaDecodesEveryCodeExactly) {
  Bf8MatrixCase c{"cdna3/v_mfma_f32_16x16x32_fp8_fp8", "mfma_f32_16x16x32_bf8_bf8", "float4_t", 16, 16, 32, 4};
  ASSERT_EQ(bf8Value(0x40), 1.0);
  for (bool withNaN : {false, true}) {
    SCOPED_TRACE(withNaN ? "with the NaN code" : "without the NaN code");
    std::vector<uint8_t> A(16 * 32, 0), B(32 * 16, 0);
    for (int m = 0; m < 16; ++m)
      for (int k = 0; k < 16; ++k)
        A[m * 32 + k] = (uint8_t)(16 * m + k);
    if (!withNaN)
      A[8 * 32 + 0] = 0x00;
    for (int n = 0; n < 16; ++n)
      B[n * 16 + n] = 0x40;
    Bf8Run run = runBf8Mfma(c, A, B, std::vector<float>(16 * 16, 0.0f));
    ASSERT_EQ((int)run.d.size(), 64 * 4);
    EXPECT_TRUE(run.rep.clean()) << run.rep.summary();
    int seen = 0;
    for (int l = 0; l < 64; ++l)
      for (int r = 0; r < 4; ++r) {
        auto [m, n] = run.td.cells[l][r];
        int code = 16 * m + n;
        if (m == 8 && withNaN)
          EXPECT_TRUE(std::isnan(run.d[l * 4 + r])) << "D[8][" << n << "]";
        else if (code == 0x80)
          EXPECT_EQ(run.d[l * 4 + r], 0.0f);
        else
          EXPECT_EQ((double)run.d[l * 4 + r], bf8Value((uint8_t)code)) << std::hex << "code 0x" << code;
        ++seen;
      }
    EXPECT_EQ(seen, 256);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Section1And8, Bf8MatrixInstr,
    ::testing::Values(Bf8MatrixCase{"cdna3/v_mfma_f32_32x32x16_fp8_fp8", "mfma_f32_32x32x16_bf8_bf8", "float16_t", 32,
                                    32, 16, 16},
                      Bf8MatrixCase{"cdna3/v_mfma_f32_16x16x32_fp8_fp8", "mfma_f32_16x16x32_bf8_bf8", "float4_t", 16,
                                    16, 32, 4}),
    [](const auto &info) {
      std::string s = info.param.builtin;
      for (char &ch : s)
        if (!isalnum((unsigned char)ch))
          ch = '_';
      return s;
    });

// The bf8 MFMA is gfx942's: on a wave32 target it is reported, not run.
TEST(Section1Mfma, Bf8MfmaOnWave32IsReported) {
  auto emu = makeEmulator("gfx1151");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void bf8_w32(float *d) {
  tl::float4_t c = {1, 1, 1, 1};
  d[tl::hw::thread_id()] = tl::hw::mfma_f32_16x16x32_bf8_bf8(0x4040404040404040L, 0x4040404040404040L, c)[0];
}
)", "bf8_w32");
  ASSERT_TRUE(k);
  auto *d = (float *)emu->allocate(32 * 4);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 32}, {Arg::pointer(d)});
  EXPECT_EQ(rep.invalidInstructions, 1);
}

// A WMMA whose lanes l and l+16 disagree is flagged (section 2: halves duplicated).
TEST(Section2Wmma, UnduplicatedOperandsAreReported) {
  auto emu = makeEmulator("gfx1151");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void bad_wmma(float *d) {
  int l = tl::hw::thread_id();
  tl::short16_t a, b; tl::float8_t c;
  for (int e = 0; e < 16; ++e) { a[e] = (short)(0x3f80 + (l >= 16 ? 1 : 0)); b[e] = 0x3f80; }
  for (int r = 0; r < 8; ++r) c[r] = 0.0f;
  tl::float8_t r = tl::hw::wmma_f32_16x16x16_bf16_w32(a, b, c);
  d[l] = r[0];
}
)", "bad_wmma");
  ASSERT_TRUE(k);
  auto *d = (float *)emu->allocate(32 * 4);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 32}, {Arg::pointer(d)});
  EXPECT_GT(rep.invalidInstructions, 0);
  EXPECT_FALSE(rep.clean());
}

// MFMA on a wave32 target is an invalid instruction, reported, not a crash.
TEST(Section1Mfma, MfmaOnWave32IsReported) {
  auto emu = makeEmulator("gfx1151");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void mfma_w32(float *d) {
  tl::short4_t a = {0, 0, 0, 0};
  tl::float4_t c = {1, 1, 1, 1};
  d[tl::hw::thread_id()] = tl::hw::mfma_f32_16x16x16bf16_1k(a, a, c)[0];
}
)", "mfma_w32");
  ASSERT_TRUE(k);
  auto *d = (float *)emu->allocate(32 * 4);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 32}, {Arg::pointer(d)});
  EXPECT_EQ(rep.invalidInstructions, 1);
  ASSERT_FALSE(rep.messages.empty());
  EXPECT_NE(rep.messages[0].find("wave64"), std::string::npos) << rep.messages[0];
}

// --- buffer loads/stores (section 4) ----------------------------------------------------

TEST(Section4Buffer, OffsetsPastNumRecordsLoadZeroAndDropStores) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void buf(const float *in, float *out, float *loaded, unsigned short *h, int n) {
  int t = tl::hw::thread_id();
  tl::hw::rsrc_t ri = tl::hw::make_rsrc(in, n * 4, 0x00020000u);
  tl::hw::rsrc_t ro = tl::hw::make_rsrc(out, n * 4, 0x00020000u);
  tl::hw::rsrc_t rl = tl::hw::make_rsrc(loaded, 64 * 4, 0x00020000u);
  tl::hw::rsrc_t rh = tl::hw::make_rsrc(h, n * 2, 0x00020000u);
  unsigned v = tl::hw::buffer_load_b32(ri, t * 4);           // t >= n: 0
  tl::hw::buffer_store_b32(v, rl, t * 4);                     // always in range
  tl::hw::buffer_store_b32(v ^ 0x80000000u, ro, t * 4);       // t >= n: dropped
  unsigned short hv = tl::hw::buffer_load_b16(rh, t * 2);     // t >= n: 0
  tl::hw::buffer_store_b16((unsigned short)(hv + 1), rh, t * 2);  // t >= n: dropped
  if (t == 0) loaded[0] = (float)tl::hw::buffer_load_b32(ri, -4); // negative = huge unsigned offset: 0
}
)", "buf");
  ASSERT_TRUE(k);
  const int n = 40;
  auto *in = (float *)emu->allocate(64 * 4), *out = (float *)emu->allocate(64 * 4),
       *loaded = (float *)emu->allocate(64 * 4);
  auto *h = (uint16_t *)emu->allocate(64 * 2);
  for (int i = 0; i < 64; ++i) {
    in[i] = 1.0f + i;
    out[i] = -1.0f;
    h[i] = (uint16_t)(100 + i);
  }
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 64},
                                  {Arg::pointer(in), Arg::pointer(out), Arg::pointer(loaded), Arg::pointer(h),
                                   Arg::integer(n)});
  EXPECT_TRUE(rep.clean()) << rep.summary();  // past num_records is legal, not an error
  EXPECT_EQ(loaded[0], 0.0f);
  for (int t = 1; t < 64; ++t)
    EXPECT_EQ(loaded[t], t < n ? 1.0f + t : 0.0f) << t;
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(out[t], t < n ? -(1.0f + t) : -1.0f) << t;
    EXPECT_EQ(h[t], t < n ? 101 + t : 100 + t) << t;
  }
}

// 8-bit buffer accesses (fp8 tensors) follow the same rules, byte by byte.
TEST(Section4Buffer, ByteAccessesPastNumRecordsLoadZeroAndDropStores) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void buf8(unsigned char *bytes, unsigned char *loaded, int n) {
  int t = tl::hw::thread_id();
  tl::hw::rsrc_t rb = tl::hw::make_rsrc(bytes, n, 0x00020000u);
  tl::hw::rsrc_t rl = tl::hw::make_rsrc(loaded, 64, 0x00020000u);
  unsigned char v = tl::hw::buffer_load_b8(rb, t);                 // t >= n: 0
  tl::hw::buffer_store_b8(v, rl, t);                               // always in range
  tl::hw::buffer_store_b8((unsigned char)(v + 1), rb, t);          // t >= n: dropped
}
)", "buf8");
  ASSERT_TRUE(k);
  const int n = 37;  // odd: no dword alignment to lean on
  auto *bytes = (uint8_t *)emu->allocate(64), *loaded = (uint8_t *)emu->allocate(64);
  for (int i = 0; i < 64; ++i) {
    bytes[i] = (uint8_t)(100 + i);
    loaded[i] = 0xee;
  }
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(bytes), Arg::pointer(loaded), Arg::integer(n)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(loaded[t], t < n ? 100 + t : 0) << t;
    EXPECT_EQ(bytes[t], t < n ? 101 + t : 100 + t) << t;
  }
}

// --- conversions ----------------------------------------------------------------------

TEST(Conversions, Bf16RoundsToNearestEvenAndKeepsNaN) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void cvt(const float *in, unsigned short *out, int n) {
  int t = tl::hw::thread_id();
  if (t < n) out[t] = tl::from_f32<tl::bf16>(in[t]).bits;
}
)", "cvt");
  ASSERT_TRUE(k);
  auto f = [](uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
  };
  struct Case {
    float in;
    uint16_t bits;
  } cases[] = {
      {1.0f, 0x3f80},
      {f(0x3f808000u), 0x3f80},  // 1 + 2^-8: tie, mantissa even -> down
      {f(0x3f818000u), 0x3f82},  // 1 + 3*2^-8: tie, mantissa odd -> up
      {f(0x3f808001u), 0x3f81},  // just above the tie -> up
      {f(0x3f80ffffu), 0x3f81},
      {-2.5f, 0xc020},
      {f(0x7f7fffffu), 0x7f80},  // max float rounds to +inf
      {f(0x7f800000u), 0x7f80},  // +inf
      {f(0xff800000u), 0xff80},  // -inf
      {f(0x7fa00001u), 0x7fe0},  // signalling NaN -> quiet NaN, payload high bits kept
      {f(0xffc00000u), 0xffc0},  // quiet NaN
      {f(0x00000001u), 0x0000},  // denormal rounds to 0
  };
  const int n = (int)(sizeof cases / sizeof cases[0]);
  auto *in = (float *)emu->allocate(n * 4);
  auto *out = (uint16_t *)emu->allocate(n * 2);
  for (int i = 0; i < n; ++i)
    in[i] = cases[i].in;
  launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(in), Arg::pointer(out), Arg::integer(n)});
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(out[i], cases[i].bits) << "case " << i << std::hex << " got 0x" << out[i];
}

/// The e4m3fnuz code nearest to x by brute force over every finite code; ties
/// go to the even code (even mantissa); beyond +-240 it saturates; a zero
/// result is +0 (section 8: no -0). Independent of the prelude's bit tricks.
uint8_t nearestFp8(double x) {
  if (std::isnan(x))
    return 0x80;
  uint8_t best = 0;
  double bestErr = INFINITY;
  for (int c = 0; c < 256; ++c) {
    if (c == 0x80)
      continue;
    double err = std::fabs(fp8Value((uint8_t)c) - x);
    if (err < bestErr || (err == bestErr && (c & 1) == 0 && (best & 1) == 1)) {
      best = (uint8_t)c;
      bestErr = err;
    }
  }
  return (best & 0x7f) == 0 ? 0 : best;
}

// Section 8: every code decodes exactly; 0x80 is the only NaN.
TEST(Conversions, Fp8E4M3FnuzDecodesEveryCodeExactly) {
  Fp8Conversion r = convertFp8OnEmulator("gfx942", "fp8e4m3fnuz", {0.0f});
  ASSERT_EQ(r.decoded.size(), 256u);
  for (int c = 0; c < 256; ++c) {
    if (c == 0x80)
      EXPECT_TRUE(std::isnan(r.decoded[c]));
    else
      EXPECT_EQ((double)r.decoded[c], fp8Value((uint8_t)c)) << std::hex << "code 0x" << c;
  }
  EXPECT_EQ(r.decoded[0x7f], 240.0f);   // max
  EXPECT_EQ(r.decoded[0xff], -240.0f);
  EXPECT_EQ(r.decoded[0x08], 0x1p-7f);  // min normal
  EXPECT_EQ(r.decoded[0x01], 0x1p-10f); // min subnormal
  EXPECT_EQ(r.decoded[0x40], 1.0f);     // bias 8
}

// Section 8 edge cases: saturation at 240, NaN 0x80, no -0, round to nearest even.
TEST(Conversions, Fp8E4M3FnuzEncodeEdgeCases) {
  struct Case {
    float in;
    uint8_t code;
  } cases[] = {
      {240.0f, 0x7f},       {-240.0f, 0xff},     {248.0f, 0x7f},  // 248 would round up to 256: saturates
      {1e30f, 0x7f},        {INFINITY, 0x7f},    {-INFINITY, 0xff},
      {NAN, 0x80},          {-NAN, 0x80},
      {0.0f, 0x00},         {-0.0f, 0x00},       {-1e-10f, 0x00},  // no -0
      {0x1p-11f, 0x00},     // half the smallest subnormal: tie, to even (0)
      {-0x1p-11f, 0x00},
      {0x3p-11f, 0x02},     // 1.5 * 2^-10: tie between codes 1 and 2, to even
      {0x1p-7f, 0x08},      // min normal
      {0x1.fp-8f, 0x08},    // just below 2^-7: 7.75 * 2^-10 rounds up into the normals
      {1.0f, 0x40},
      {1.0625f, 0x40},      // 1 + 1/16: tie between m=0 and m=1, to even
      {1.1875f, 0x42},      // 1 + 3/16: tie between m=1 and m=2, to even
      {-1.1875f, 0xc2},
      {232.0f, 0x7e},       // tie between 224 (m=6) and 240 (m=7), to even
      {236.0f, 0x7f},
      {0.99f, 0x40},        // rounds up into the next binade
      {-3.0f, 0xcc},        // -1.5 * 2^1
  };
  std::vector<float> in;
  for (const Case &c : cases)
    in.push_back(c.in);
  Fp8Conversion r = convertFp8OnEmulator("gfx942", "fp8e4m3fnuz", in);
  ASSERT_EQ(r.encoded.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(r.encoded[i], cases[i].code) << "case " << i << " (" << cases[i].in << ")" << std::hex << " got 0x"
                                           << (int)r.encoded[i];
}

// Every finite code round-trips, and every midpoint between neighbouring
// values (the ties), and points an f32 ulp either side, encode to the
// brute-force nearest-even code.
TEST(Conversions, Fp8E4M3FnuzEncodeMatchesNearestEvenEverywhere) {
  std::vector<double> values;
  for (int c = 0; c < 0x80; ++c)
    values.push_back(fp8Value((uint8_t)c));  // ascending: 0 .. 240
  std::vector<float> in;
  for (size_t i = 0; i < values.size(); ++i) {
    for (float sgn : {1.0f, -1.0f}) {
      in.push_back(sgn * (float)values[i]);
      if (i + 1 < values.size()) {
        float mid = (float)((values[i] + values[i + 1]) / 2);
        in.push_back(sgn * mid);
        in.push_back(sgn * std::nextafter(mid, 0.0f));
        in.push_back(sgn * std::nextafter(mid, INFINITY));
      }
    }
  }
  Fp8Conversion r = convertFp8OnEmulator("gfx942", "fp8e4m3fnuz", in);
  ASSERT_EQ(r.encoded.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(r.encoded[i], nearestFp8(in[i])) << "input " << in[i] << std::hex << " got 0x" << (int)r.encoded[i];
}

/// The e5m2fnuz code nearest to x by brute force over every finite code; ties
/// go to the even code (even mantissa); beyond +-57344 it saturates; a zero
/// result is +0 (section 8: no -0). Independent of the prelude's bit tricks.
uint8_t nearestBf8(double x) {
  if (std::isnan(x))
    return 0x80;
  uint8_t best = 0;
  double bestErr = INFINITY;
  for (int c = 0; c < 256; ++c) {
    if (c == 0x80)
      continue;
    double err = std::fabs(bf8Value((uint8_t)c) - x);
    if (err < bestErr || (err == bestErr && (c & 1) == 0 && (best & 1) == 1)) {
      best = (uint8_t)c;
      bestErr = err;
    }
  }
  return (best & 0x7f) == 0 ? 0 : best;
}

// Section 8: every e5m2fnuz code decodes exactly; 0x80 is the only NaN.
TEST(Conversions, Fp8E5M2FnuzDecodesEveryCodeExactly) {
  Fp8Conversion r = convertFp8OnEmulator("gfx942", "fp8e5m2fnuz", {0.0f});
  ASSERT_EQ(r.decoded.size(), 256u);
  for (int c = 0; c < 256; ++c) {
    if (c == 0x80)
      EXPECT_TRUE(std::isnan(r.decoded[c]));
    else
      EXPECT_EQ((double)r.decoded[c], bf8Value((uint8_t)c)) << std::hex << "code 0x" << c;
  }
  EXPECT_EQ(r.decoded[0x7f], 57344.0f);  // max
  EXPECT_EQ(r.decoded[0xff], -57344.0f);
  EXPECT_EQ(r.decoded[0x04], 0x1p-15f);  // min normal
  EXPECT_EQ(r.decoded[0x01], 0x1p-17f);  // min subnormal
  EXPECT_EQ(r.decoded[0x40], 1.0f);      // bias 16
  EXPECT_EQ(r.decoded[0x7c], 32768.0f);  // 2^15, the top binade (no inf/NaN codes there)
}

// Section 8 edge cases: saturation at 57344, NaN 0x80, no -0, round to nearest even.
TEST(Conversions, Fp8E5M2FnuzEncodeEdgeCases) {
  struct Case {
    float in;
    uint8_t code;
  } cases[] = {
      {57344.0f, 0x7f},     {-57344.0f, 0xff},   {61440.0f, 0x7f},  // 61440 would round up to 65536: saturates
      {60000.0f, 0x7f},     {1e30f, 0x7f},       {INFINITY, 0x7f},  {-INFINITY, 0xff},
      {NAN, 0x80},          {-NAN, 0x80},
      {0.0f, 0x00},         {-0.0f, 0x00},       {-1e-10f, 0x00},   // no -0
      {0x1p-18f, 0x00},     // half the smallest subnormal: tie, to even (0)
      {-0x1p-18f, 0x00},
      {0x1.000002p-18f, 0x01},  // just above that tie
      {0x3p-18f, 0x02},     // 1.5 * 2^-17: tie between codes 1 and 2, to even
      {0x5p-18f, 0x02},     // 2.5 * 2^-17: tie between codes 2 and 3, to even
      {0x1p-15f, 0x04},     // min normal
      {0x7p-18f, 0x04},     // 3.5 * 2^-17: tie between subnormal 3 and 2^-15 (code 4), to even
      {0x1.ep-16f, 0x04},   // 3.75 * 2^-17 rounds up into the normals
      {1.0f, 0x40},
      {1.125f, 0x40},       // 1 + 1/8: tie between m=0 and m=1, to even
      {1.375f, 0x42},       // 1 + 3/8: tie between m=1 and m=2, to even
      {-1.375f, 0xc2},
      {1.875f, 0x44},       // 1 + 7/8: tie between m=3 and 2.0, to even (carries into the next binade)
      {53248.0f, 0x7e},     // tie between 49152 (m=2) and 57344 (m=3), to even
      {55000.0f, 0x7f},
      {0.99f, 0x40},        // rounds up into the next binade
      {-3.0f, 0xc6},        // -1.5 * 2^1
      {240.0f, 0x60},       // e4m3fnuz's max, 1.875 * 2^7: a tie between 224 (m=3) and 256, to even (256)
  };
  std::vector<float> in;
  for (const Case &c : cases)
    in.push_back(c.in);
  Fp8Conversion r = convertFp8OnEmulator("gfx942", "fp8e5m2fnuz", in);
  ASSERT_EQ(r.encoded.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(r.encoded[i], cases[i].code) << "case " << i << " (" << cases[i].in << ")" << std::hex << " got 0x"
                                           << (int)r.encoded[i];
}

// Every finite code round-trips, and every midpoint between neighbouring
// values (the ties), and points an f32 ulp either side, encode to the
// brute-force nearest-even code.
TEST(Conversions, Fp8E5M2FnuzEncodeMatchesNearestEvenEverywhere) {
  std::vector<double> values;
  for (int c = 0; c < 0x80; ++c)
    values.push_back(bf8Value((uint8_t)c));  // ascending: 0 .. 57344
  std::vector<float> in;
  for (size_t i = 0; i < values.size(); ++i) {
    for (float sgn : {1.0f, -1.0f}) {
      in.push_back(sgn * (float)values[i]);
      if (i + 1 < values.size()) {
        float mid = (float)((values[i] + values[i + 1]) / 2);
        in.push_back(sgn * mid);
        in.push_back(sgn * std::nextafter(mid, 0.0f));
        in.push_back(sgn * std::nextafter(mid, INFINITY));
      }
    }
  }
  Fp8Conversion r = convertFp8OnEmulator("gfx942", "fp8e5m2fnuz", in);
  ASSERT_EQ(r.encoded.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(r.encoded[i], nearestBf8(in[i])) << "input " << in[i] << std::hex << " got 0x" << (int)r.encoded[i];
}

// --- cross-lane (section 5) ------------------------------------------------------------

TEST(Section5CrossLane, DsBpermuteReadsLaneByteIndexOver4) {
  for (const char *arch : {"gfx942", "gfx1151"}) {
    auto emu = makeEmulator(arch);
    const int ws = emu->target().waveSize;
    auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void perm(int *out, int *xor1, int active) {
  int t = tl::hw::thread_id();
  if (t >= active) return;  // these lanes are inactive sources: they give 0
  int l = tl::hw::lane_id();
  out[t] = tl::hw::ds_bpermute(((l * 7 + 3) % 64) * 4 + 256 * (l & 1), 1000 * (t / 64) + l + 1);
  xor1[t] = (int)tl::shfl_xor((float)l, 1);
}
)", "perm");
    ASSERT_TRUE(k);
    const int threads = 128, active = threads - 5;
    auto *out = (int *)emu->allocate(threads * 4), *x = (int *)emu->allocate(threads * 4);
    LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, threads},
                                    {Arg::pointer(out), Arg::pointer(x), Arg::integer(active)});
    EXPECT_TRUE(rep.clean()) << rep.summary();
    for (int t = 0; t < active; ++t) {
      int l = t % ws, wave = t / ws, src = ((l * 7 + 3) % 64) % ws;  // byte index wraps at the wave size
      int srcThread = wave * ws + src;
      int expect = srcThread < active ? 1000 * (srcThread / 64) + src + 1 : 0;
      EXPECT_EQ(out[t], expect) << arch << " thread " << t;
      int xs = wave * ws + (l ^ 1);
      EXPECT_EQ(x[t], xs < active ? (l ^ 1) : 0) << arch << " thread " << t;
    }
  }
}

// DPP row moves and ds_swizzle XOR 16 (section 5's controls), as the row
// reductions use them: the lane each lane reads, per the hardware's rules.
TEST(Section5CrossLane, DppAndSwizzleReadTheDocumentedLanes) {
  for (const char *arch : {"gfx942", "gfx1151"}) {
    auto emu = makeEmulator(arch);
    const int ws = emu->target().waveSize;
    auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void moves(float *out) {
  int t = tl::hw::thread_id();
  float v = (float)tl::hw::lane_id();
  out[t * 8 + 0] = tl::hw::dpp<0xB1>(v);   // quad_perm [1,0,3,2]
  out[t * 8 + 1] = tl::hw::dpp<0x4E>(v);   // quad_perm [2,3,0,1]
  out[t * 8 + 2] = tl::hw::dpp<0x1B>(v);   // quad_perm [3,2,1,0]
  out[t * 8 + 3] = tl::hw::dpp<0x140>(v);  // row_mirror
  out[t * 8 + 4] = tl::hw::dpp<0x141>(v);  // row_half_mirror
  out[t * 8 + 5] = tl::hw::dpp<0x165>(v);  // row_xmask 5
  out[t * 8 + 6] = tl::hw::swizzle_xor16(v);
  out[t * 8 + 7] = tl::reduce_row_lanes<tl::Mfma16x16x16<tl::bf16>>(v, [](float a, float b) { return a + b; });
}
)", "moves");
    ASSERT_TRUE(k);
    const int threads = 2 * ws;
    auto *out = (float *)emu->allocate(threads * 8 * 4);
    LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, threads}, {Arg::pointer(out)});
    EXPECT_TRUE(rep.clean()) << rep.summary();
    for (int t = 0; t < threads; ++t) {
      const int l = t % ws, q = l & ~3, row = l & ~15, r = l & 15;
      const float *o = out + t * 8;
      EXPECT_EQ(o[0], q | ((l & 3) ^ 1)) << arch << " lane " << l;
      EXPECT_EQ(o[1], q | ((l & 3) ^ 2)) << arch << " lane " << l;
      EXPECT_EQ(o[2], q | (3 - (l & 3))) << arch << " lane " << l;
      EXPECT_EQ(o[3], row | (15 - r)) << arch << " lane " << l;
      EXPECT_EQ(o[4], row | (r & 8) | (7 - (r & 7))) << arch << " lane " << l;
      EXPECT_EQ(o[5], row | (r ^ 5)) << arch << " lane " << l;
      EXPECT_EQ(o[6], (l & ~31) | ((l & 31) ^ 16)) << arch << " lane " << l;
      // Every lane of a 16-lane row gets the sum of the row's lane ids.
      EXPECT_EQ(o[7], 16 * row + 120) << arch << " lane " << l;
    }
  }
}

// --- barriers -------------------------------------------------------------------------

TEST(Barrier, OrdersLdsBetweenWavesAndCountsLoops) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void rotate(int *out, int rounds) {
  __shared__ int buf[256];
  int t = tl::hw::thread_id();
  int v = t + 1000 * tl::hw::block_id(0);
  for (int r = 0; r < rounds; ++r) {
    tl::hw::lds_write(buf + t, v);
    tl::hw::barrier();
    v = tl::hw::lds_read(buf + (t + 64) % 256);  // another wave's value
    tl::hw::barrier();
  }
  out[tl::hw::block_id(0) * 256 + t] = v;
}
)", "rotate");
  ASSERT_TRUE(k);
  const int blocks = 5, rounds = 3;
  auto *out = (int *)emu->allocate(blocks * 256 * 4);
  LaunchReport rep = launchOrFail(*emu, *k, {{blocks, 1, 1}, 256}, {Arg::pointer(out), Arg::integer(rounds)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  EXPECT_EQ(rep.ldsAccesses, blocks * 256 * rounds * 2);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < 256; ++t)
      EXPECT_EQ(out[b * 256 + t], (t + 64 * rounds) % 256 + 1000 * b) << b << " " << t;
}

// Lanes of one wave communicate through LDS without a barrier (program order,
// lockstep): the values are exact and it is not a race.
TEST(Barrier, SameWaveLdsNeedsNoBarrier) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, R"(#include "tilec_prelude.h"
extern "C" __global__ void neighbours(int *out) {
  __shared__ int buf[64];
  int t = tl::hw::thread_id();
  tl::hw::lds_write(buf + t, 3 * t);
  out[t] = tl::hw::lds_read(buf + (63 - t));
}
)", "neighbours");
  ASSERT_TRUE(k);
  auto *out = (int *)emu->allocate(64 * 4);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 64}, {Arg::pointer(out)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], 3 * (63 - t));
}

TEST(Launch, ArgumentMismatchIsAnError) {
  auto emu = makeEmulator("gfx942");
  auto k = loadOrFail(*emu, "#include \"tilec_prelude.h\"\nextern \"C\" __global__ void one(float *p, int n) {}\n",
                      "one");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->paramTypes(), (std::vector<std::string>{"float *", "int"}));
  auto r = emu->launch(*k, {{1, 1, 1}, 64}, {Arg::integer(1), Arg::integer(2)});
  EXPECT_FALSE(r);
  llvm::consumeError(r.takeError());
  auto r2 = emu->launch(*k, {{1, 1, 1}, 64}, {Arg::pointer(nullptr)});
  EXPECT_FALSE(r2);
  llvm::consumeError(r2.takeError());
}

TEST(Load, CompilerErrorsCarryTheLog) {
  auto emu = makeEmulator("gfx942");
  auto k = emu->load("#include \"tilec_prelude.h\"\nextern \"C\" __global__ void broken(int *p) { undeclared(); }\n",
                     "broken", {"int *"});
  ASSERT_FALSE(k);
  std::string msg = llvm::toString(k.takeError());
  EXPECT_NE(msg.find("undeclared"), std::string::npos) << msg;
}

} // namespace
