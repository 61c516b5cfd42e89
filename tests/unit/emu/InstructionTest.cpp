// Instruction semantics of the emulator, each against a reference computed
// element by element: MFMA (amd-targets.md section 1) and WMMA (section 2)
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

// --- layout tables -----------------------------------------------------------------

/// cells[lane][element] = (row, col) of the matrix element held there.
struct LayoutTable {
  std::vector<std::vector<std::pair<int, int>>> cells;
};

LayoutTable readLayout(const std::string &relPath) {
  std::string path = std::string(TILEC_MATRIX_LAYOUTS_DIR) + "/" + relPath;
  std::ifstream in(path);
  LayoutTable t;
  if (!in) {
    ADD_FAILURE() << "missing layout table " << path << " (shared/data/matrix-layouts must sit next to the repository)";
    return t;
  }
  std::string line;
  std::getline(in, line);  // header
  std::regex cell(R"(([ABD])\[(\d+)\]\[(\d+)\])");
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    std::stringstream ss(line);
    std::string field;
    std::getline(ss, field, ',');
    int lane = std::stoi(field);
    if ((int)t.cells.size() <= lane)
      t.cells.resize(lane + 1);
    while (std::getline(ss, field, ',')) {
      std::smatch m;
      if (!std::regex_search(field, m, cell)) {
        ADD_FAILURE() << "bad cell '" << field << "' in " << path;
        return t;
      }
      t.cells[lane].push_back({std::stoi(m[2]), std::stoi(m[3])});
    }
  }
  return t;
}

uint16_t bf16Bits(float x) {  // exact for the values used here
  uint32_t u;
  memcpy(&u, &x, 4);
  return (uint16_t)(u >> 16);
}
uint16_t f16Bits(float x) {
  _Float16 h = (_Float16)x;
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}

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
