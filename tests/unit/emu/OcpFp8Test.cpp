// The OCP fp8 formats on the NVIDIA target (docs/hardware.md section 8 and
// "NVIDIA Hopper"): the device prelude's conversions (tilec_scalars.h,
// OcpFp8) against the host codec (lib/Target/Float8.h, itself checked
// against the OCP specification by tests/unit/target/Float8Test.cpp) for
// every code, every tie between neighbouring codes and the f32 values either
// side of each tie, and saturation; and the emulator's mma.sync m16n8k32
// (e4m3, e5m2) with operands placed through the PTX ISA fragment tables in
// tests/data/matrix-layouts/ptx: products exact, one f32 rounding of C plus
// the exact sum.
#include "EmuTestUtil.h"

#include "Target/Float8.h"

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

using namespace tilec;
using namespace tilec::emu;
using namespace tilec::emu::test;

namespace {

/// Every code decodes as the codec says (NaN codes to NaN, e5m2's infinities
/// to infinities), and every value a saturating encode meets (each finite
/// value, each midpoint, the f32 neighbours of each midpoint, values past the
/// largest, infinities, NaN, signed zeros) encodes as the codec does.
template <class Codec> void expectPreludeMatchesCodec(const char *type) {
  std::vector<float> in;
  std::vector<double> finite;
  for (int c = 0; c < 0x80; ++c)
    if (std::isfinite(Codec::decode(uint8_t(c))))
      finite.push_back(Codec::decode(uint8_t(c)));  // ascending: 0 .. max
  for (size_t i = 0; i < finite.size(); ++i)
    for (float sign : {1.0f, -1.0f}) {
      in.push_back(sign * float(finite[i]));
      if (i + 1 < finite.size()) {
        const float mid = float((finite[i] + finite[i + 1]) / 2);  // exact in f32
        in.push_back(sign * mid);
        in.push_back(sign * std::nextafter(mid, 0.0f));
        in.push_back(sign * std::nextafter(mid, INFINITY));
      }
    }
  const float max = float(Codec::maxFinite());
  for (float v : {max * 1.0625f, max * 1.125f, max * 2, 1e30f, INFINITY, NAN, 0.0f, -0.0f, 1e-30f, -1e-30f})
    for (float sign : {1.0f, -1.0f})
      in.push_back(sign * v);
  const Fp8Conversion r = convertFp8OnEmulator("sm_90a", type, in);
  ASSERT_EQ(r.decoded.size(), 256u) << type;
  for (int c = 0; c < 256; ++c) {
    const double want = Codec::decode(uint8_t(c));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(r.decoded[c])) << type << std::hex << " code 0x" << c;
    else
      EXPECT_EQ(double(r.decoded[c]), want) << type << std::hex << " code 0x" << c;
  }
  ASSERT_EQ(r.encoded.size(), in.size()) << type;
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(r.encoded[i], Codec::encode(in[i], Fp8Overflow::Saturate))
        << type << " input " << in[i] << std::hex << " got 0x" << int(r.encoded[i]);
}

TEST(OcpFp8Conversions, E4M3MatchesTheCodec) { expectPreludeMatchesCodec<Fp8E4M3Fn>("fp8e4m3"); }
TEST(OcpFp8Conversions, E5M2MatchesTheCodec) { expectPreludeMatchesCodec<Fp8E5M2>("fp8e5m2"); }

// The spec's anchors, as the prelude gives them.
TEST(OcpFp8Conversions, Anchors) {
  const Fp8Conversion e4 = convertFp8OnEmulator("sm_90a", "fp8e4m3", {448.0f, 464.0f, 480.0f, INFINITY, NAN, -0.0f, 0x1p-9f});
  ASSERT_EQ(e4.encoded.size(), 7u);
  EXPECT_EQ(e4.encoded[0], 0x7e);  // max 448 = S.1111.110
  EXPECT_EQ(e4.encoded[1], 0x7e);  // the tie 464 rounds to even (448), below the NaN code
  EXPECT_EQ(e4.encoded[2], 0x7e);  // saturates
  EXPECT_EQ(e4.encoded[3], 0x7e);  // no infinity: saturates
  EXPECT_EQ(e4.encoded[4] & 0x7f, 0x7f);
  EXPECT_EQ(e4.encoded[5], 0x80);  // -0 kept
  EXPECT_EQ(e4.encoded[6], 0x01);  // min subnormal 2^-9
  EXPECT_EQ(e4.decoded[0x38], 1.0f);  // bias 7
  const Fp8Conversion e5 = convertFp8OnEmulator("sm_90a", "fp8e5m2", {57344.0f, INFINITY, 0x1p-16f});
  ASSERT_EQ(e5.encoded.size(), 3u);
  EXPECT_EQ(e5.encoded[0], 0x7b);  // max 57344 = S.11110.11
  EXPECT_EQ(e5.encoded[1], 0x7b);  // saturating
  EXPECT_EQ(e5.encoded[2], 0x01);  // min subnormal 2^-16
  EXPECT_EQ(e5.decoded[0x7c], INFINITY);
  EXPECT_EQ(e5.decoded[0xfc], -INFINITY);
  EXPECT_EQ(e5.decoded[0x3c], 1.0f);  // bias 15
}

/// A finite code of every exponent and mantissa pattern, varied by `i`.
template <class Codec> uint8_t variedCode(int i) {
  for (int h = i * 37 + 11;; ++h)
    if (std::isfinite(Codec::decode(uint8_t(h % 256))))
      return uint8_t(h % 256);
}

template <class Codec> void expectMmaMatchesExactProducts(const char *type) {
  const std::string base = std::string("mma.sync.aligned.m16n8k32.row.col.f32.") + type + "." + type + ".f32";
  const auto ta = readLayout("ptx/" + base + ".A.csv").cells, tb = readLayout("ptx/" + base + ".B.csv").cells,
             td = readLayout("ptx/" + base + ".D.csv").cells;
  ASSERT_EQ(ta.size(), 32u);
  ASSERT_EQ(tb.size(), 32u);
  ASSERT_EQ(td.size(), 32u);
  constexpr int M = 16, N = 8, K = 32;
  std::vector<uint8_t> A(M * K), B(K * N);
  std::vector<float> C(M * N);
  for (int i = 0; i < M * K; ++i)
    A[i] = variedCode<Codec>(i);
  for (int i = 0; i < K * N; ++i)
    B[i] = variedCode<Codec>(5 * i + 3);
  for (int i = 0; i < M * N; ++i)
    C[i] = 0.375f * float(i) - 11.5f;
  auto emu = makeEmulator("sm_90a");
  auto *ra = (uint8_t *)emu->allocate(32 * 16);
  auto *rb = (uint8_t *)emu->allocate(32 * 8);
  auto *rc = (float *)emu->allocate(32 * 4 * 4);
  auto *rd = (float *)emu->allocate(32 * 4 * 4);
  for (int l = 0; l < 32; ++l) {
    ASSERT_EQ(ta[l].size(), 16u);
    ASSERT_EQ(tb[l].size(), 8u);
    ASSERT_EQ(td[l].size(), 4u);
    for (int j = 0; j < 16; ++j)  // byte j of the lane's four registers: the table's column j
      ra[l * 16 + j] = A[ta[l][j].first * K + ta[l][j].second];
    for (int j = 0; j < 8; ++j)
      rb[l * 8 + j] = B[tb[l][j].first * N + tb[l][j].second];
    for (int r = 0; r < 4; ++r)
      rc[l * 4 + r] = C[td[l][r].first * N + td[l][r].second];
  }
  const std::string src = std::string("#include \"tilec_prelude.h\"\n"
                                      "extern \"C\" __global__ void mma(const tl::uint4_t *a, const tl::uint2_t *b, "
                                      "const tl::float4_t *c, tl::float4_t *d) {\n"
                                      "  const int l = tl::hw::thread_id();\n"
                                      "  d[l] = tl::hw::mma_m16n8k32_") + type + "(a[l], b[l], c[l]);\n}\n";
  auto k = loadOrFail(*emu, src, "mma");
  ASSERT_TRUE(k);
  LaunchReport rep = launchOrFail(*emu, *k, {{1, 1, 1}, 32},
                                  {Arg::pointer(ra), Arg::pointer(rb), Arg::pointer(rc), Arg::pointer(rd)});
  EXPECT_TRUE(rep.clean()) << rep.summary();
  for (int l = 0; l < 32; ++l)
    for (int r = 0; r < 4; ++r) {
      const auto [m, n] = td[l][r];
      // In k order in double, as the emulator defines the instruction: exact
      // for e4m3 (products 2^-18..448^2); e5m2's wider range may round alike.
      double sum = 0;
      for (int kk = 0; kk < K; ++kk)
        sum += Codec::decode(A[m * K + kk]) * Codec::decode(B[kk * N + n]);
      EXPECT_EQ(rd[l * 4 + r], float(double(C[m * N + n]) + sum)) << type << " lane " << l << " element " << r;
    }
}

TEST(OcpFp8Mma, E4M3ThroughThePtxFragmentTables) { expectMmaMatchesExactProducts<Fp8E4M3Fn>("e4m3"); }
TEST(OcpFp8Mma, E5M2ThroughThePtxFragmentTables) { expectMmaMatchesExactProducts<Fp8E5M2>("e5m2"); }

} // namespace
