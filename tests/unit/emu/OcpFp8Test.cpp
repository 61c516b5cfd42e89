// The OCP fp8 formats on the NVIDIA target (docs/hardware.md section 8 and
// "NVIDIA Hopper"): the device prelude's conversions (tilec_tiles.h,
// OcpFp8) against the host codec (lib/Target/Float8.h, itself checked
// against the OCP specification by tests/unit/target/Float8Test.cpp) for
// every code, every tie between neighbouring codes and the f32 values either
// side of each tie, and saturation.
#include "EmuTestUtil.h"

#include "Target/Float8.h"

#include <cmath>
#include <vector>

using namespace tilec;
using namespace tilec::emu;
using namespace tilec::emu::test;

namespace {

struct Conversion {
  std::vector<uint8_t> encoded;  ///< from_f32 of each input
  std::vector<float> decoded;    ///< to_f32 of codes 0..255
};

/// Runs the prelude's from_f32 / to_f32 for `type` (tl::fp8e4m3 or
/// tl::fp8e5m2) on the sm_90a emulator.
Conversion convertOnEmulator(const char *type, const std::vector<float> &inputs) {
  auto emu = makeEmulator("sm_90a");
  const std::string source = std::string("#include \"tilec_prelude.h\"\n"
                                         "extern \"C\" __global__ void cvt(const float *in, unsigned char *out, "
                                         "float *dec, int n) {\n"
                                         "  for (int i = tl::hw::thread_id(); i < n; i += 32) out[i] = "
                                         "tl::from_f32<tl::") + type + ">(in[i]).bits;\n"
                             "  for (int i = tl::hw::thread_id(); i < 256; i += 32) dec[i] = tl::to_f32(tl::" +
                             type + "{(unsigned char)i});\n}\n";
  auto k = loadOrFail(*emu, source, "cvt");
  Conversion r;
  if (!k)
    return r;
  const int n = (int)inputs.size();
  auto *in = (float *)emu->allocate(n * 4);
  auto *out = (uint8_t *)emu->allocate(n);
  auto *dec = (float *)emu->allocate(256 * 4);
  std::copy(inputs.begin(), inputs.end(), in);
  launchOrFail(*emu, *k, {{1, 1, 1}, 32}, {Arg::pointer(in), Arg::pointer(out), Arg::pointer(dec), Arg::integer(n)});
  r.encoded.assign(out, out + n);
  r.decoded.assign(dec, dec + 256);
  return r;
}

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
  const Conversion r = convertOnEmulator(type, in);
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
  const Conversion e4 = convertOnEmulator("fp8e4m3", {448.0f, 464.0f, 480.0f, INFINITY, NAN, -0.0f, 0x1p-9f});
  ASSERT_EQ(e4.encoded.size(), 7u);
  EXPECT_EQ(e4.encoded[0], 0x7e);  // max 448 = S.1111.110
  EXPECT_EQ(e4.encoded[1], 0x7e);  // the tie 464 rounds to even (448), below the NaN code
  EXPECT_EQ(e4.encoded[2], 0x7e);  // saturates
  EXPECT_EQ(e4.encoded[3], 0x7e);  // no infinity: saturates
  EXPECT_EQ(e4.encoded[4] & 0x7f, 0x7f);
  EXPECT_EQ(e4.encoded[5], 0x80);  // -0 kept
  EXPECT_EQ(e4.encoded[6], 0x01);  // min subnormal 2^-9
  EXPECT_EQ(e4.decoded[0x38], 1.0f);  // bias 7
  const Conversion e5 = convertOnEmulator("fp8e5m2", {57344.0f, INFINITY, 0x1p-16f});
  ASSERT_EQ(e5.encoded.size(), 3u);
  EXPECT_EQ(e5.encoded[0], 0x7b);  // max 57344 = S.11110.11
  EXPECT_EQ(e5.encoded[1], 0x7b);  // saturating
  EXPECT_EQ(e5.encoded[2], 0x01);  // min subnormal 2^-16
  EXPECT_EQ(e5.decoded[0x7c], INFINITY);
  EXPECT_EQ(e5.decoded[0xfc], -INFINITY);
  EXPECT_EQ(e5.decoded[0x3c], 1.0f);  // bias 15
}

} // namespace
