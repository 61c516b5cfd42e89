// The fp8 codec (lib/Target/Float8.h) against the formats' definitions: all
// 256 codes of each format decode to the value the definition gives (the OCP
// 8-bit floating point specification for e4m3fn and e5m2, docs/hardware.md
// section 8 for the fnuz formats), the spec's anchor values, and encoding
// rounds every value to the nearest code (ties to even), saturating or not.

#include "Target/Float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace tilec;

namespace {

/// A format as the specifications define it, written independently of the codec.
struct Definition {
  const char *name;
  int exponentBits, mantissaBits, bias;
  /// The value of a code that is not a special value: the definition's formula.
  double value(int code) const {
    const int sign = code >> 7, e = (code >> mantissaBits) & ((1 << exponentBits) - 1);
    const int m = code & ((1 << mantissaBits) - 1);
    const double fraction = double(m) / double(1 << mantissaBits);
    const double magnitude = e == 0 ? std::pow(2.0, 1 - bias) * fraction : std::pow(2.0, e - bias) * (1 + fraction);
    return sign ? -magnitude : magnitude;
  }
};

// The special codes of each format, as the specifications list them.
bool fnuzNaN(int code) { return code == 0x80; }
bool e4m3fnNaN(int code) { return (code & 0x7f) == 0x7f; }  // S.1111.111
bool e5m2NaN(int code) { return (code & 0x7c) == 0x7c && (code & 0x03) != 0; }  // S.11111.{01,10,11}
bool e5m2Inf(int code) { return (code & 0x7f) == 0x7c; }  // S.11111.00

template <class Codec> void expectDecodes(const Definition &d, bool (*isNaN)(int), bool (*isInf)(int)) {
  for (int c = 0; c < 256; ++c) {
    const double got = Codec::decode(uint8_t(c));
    if (isNaN(c)) {
      EXPECT_TRUE(std::isnan(got)) << d.name << " code 0x" << std::hex << c;
    } else if (isInf && isInf(c)) {
      EXPECT_EQ(got, (c & 0x80) ? -INFINITY : INFINITY) << d.name << " code 0x" << std::hex << c;
    } else {
      EXPECT_EQ(got, d.value(c)) << d.name << " code 0x" << std::hex << c;
      EXPECT_EQ(std::signbit(got), c >= 0x80) << d.name << " code 0x" << std::hex << c;
    }
  }
}

/// The finite codes of a format in increasing order of value (negative
/// codes from the largest magnitude down, then the positive ones up), -0 left out.
template <class Codec> std::vector<uint8_t> finiteCodesAscending() {
  std::vector<uint8_t> out;
  for (int c = 0xff; c > 0x80; --c)
    if (std::isfinite(Codec::decode(uint8_t(c))))
      out.push_back(uint8_t(c));
  for (int c = 0; c < 0x80; ++c)
    if (std::isfinite(Codec::decode(uint8_t(c))))
      out.push_back(uint8_t(c));
  return out;
}

/// Encoding: every finite code is a fixed point; every value between two
/// neighbouring codes goes to the nearer one, a midpoint to the one with the
/// even mantissa (the even code); beyond the largest value, saturation or
/// overflow as the format says.
template <class Codec> void expectEncodes(const char *name, uint8_t positiveOverflow) {
  // A value that rounds to zero: -0 where the format has one, else +0.
  auto zero = [](double v) { return uint8_t(Codec::decode(0x80) == 0 && std::signbit(v) ? 0x80 : 0x00); };
  auto expected = [&](double v, uint8_t code) { return Codec::decode(code) == 0 ? zero(v) : code; };
  const std::vector<uint8_t> codes = finiteCodesAscending<Codec>();
  for (size_t i = 0; i < codes.size(); ++i) {
    const double v = Codec::decode(codes[i]);
    EXPECT_EQ(Codec::encode(v), codes[i]) << name << " value " << v;
    if (i + 1 == codes.size())
      break;
    const double next = Codec::decode(codes[i + 1]), mid = (v + next) / 2;  // exact in double
    const uint8_t even = (codes[i] & 1) == 0 ? codes[i] : codes[i + 1];
    const double below = std::nextafter(mid, -INFINITY), above = std::nextafter(mid, INFINITY);
    EXPECT_EQ(Codec::encode(mid), expected(mid, even)) << name << " midpoint " << mid;
    EXPECT_EQ(Codec::encode(below), expected(below, codes[i])) << name << " below " << mid;
    EXPECT_EQ(Codec::encode(above), expected(above, codes[i + 1])) << name << " above " << mid;
  }
  // Beyond the largest value: the midpoint to the next binade's first value
  // rounds to even (the largest value when its mantissa is even, else over).
  const uint8_t maxCode = Codec::maxFiniteCode();
  const double max = Codec::maxFinite(), tie = max + (max - Codec::decode(maxCode - 1)) / 2;
  EXPECT_EQ(Codec::encode(std::nextafter(tie, 0.0), Fp8Overflow::NonSaturate), maxCode) << name;
  EXPECT_EQ(Codec::encode(tie, Fp8Overflow::NonSaturate), (maxCode & 1) ? positiveOverflow : maxCode) << name;
  for (double v : {tie, std::nextafter(tie, INFINITY), 2 * max, 1e30, double(INFINITY)}) {
    EXPECT_EQ(Codec::encode(v), maxCode) << name << " saturating " << v;
    EXPECT_EQ(Codec::encode(-v), 0x80 | maxCode) << name << " saturating " << -v;
    if (v != tie)
      EXPECT_EQ(Codec::encode(v, Fp8Overflow::NonSaturate), positiveOverflow) << name << " " << v;
  }
  EXPECT_TRUE(std::isnan(Codec::decode(Codec::encode(NAN))));
  EXPECT_TRUE(std::isnan(Codec::decode(Codec::encode(NAN, Fp8Overflow::NonSaturate))));
}

} // namespace

TEST(Float8, E4M3FnuzDecodesEveryCode) {
  expectDecodes<Fp8E4M3Fnuz>({"e4m3fnuz", 4, 3, 8}, fnuzNaN, nullptr);
  EXPECT_EQ(Fp8E4M3Fnuz::maxFinite(), 240.0);
  EXPECT_EQ(Fp8E4M3Fnuz::decode(0x08), std::ldexp(1.0, -7));   // smallest normal
  EXPECT_EQ(Fp8E4M3Fnuz::decode(0x01), std::ldexp(1.0, -10));  // smallest subnormal
}

TEST(Float8, E5M2FnuzDecodesEveryCode) {
  expectDecodes<Fp8E5M2Fnuz>({"e5m2fnuz", 5, 2, 16}, fnuzNaN, nullptr);
  EXPECT_EQ(Fp8E5M2Fnuz::maxFinite(), 57344.0);
  EXPECT_EQ(Fp8E5M2Fnuz::decode(0x04), std::ldexp(1.0, -15));
  EXPECT_EQ(Fp8E5M2Fnuz::decode(0x01), std::ldexp(1.0, -17));
}

// The OCP specification's table: E4M3 max normal S.1111.110 = 448, min
// normal S.0001.000 = 2^-6, max subnormal S.0000.111 = 0.875 * 2^-6, min
// subnormal S.0000.001 = 2^-9; zeros S.0000.000; NaN S.1111.111; no infinities.
TEST(Float8, E4M3FnDecodesEveryCode) {
  expectDecodes<Fp8E4M3Fn>({"e4m3fn", 4, 3, 7}, e4m3fnNaN, nullptr);
  EXPECT_EQ(Fp8E4M3Fn::decode(0x7e), 448.0);
  EXPECT_EQ(Fp8E4M3Fn::decode(0xfe), -448.0);
  EXPECT_EQ(Fp8E4M3Fn::decode(0x08), std::ldexp(1.0, -6));
  EXPECT_EQ(Fp8E4M3Fn::decode(0x07), 0.875 * std::ldexp(1.0, -6));
  EXPECT_EQ(Fp8E4M3Fn::decode(0x01), std::ldexp(1.0, -9));
  EXPECT_TRUE(std::signbit(Fp8E4M3Fn::decode(0x80)));  // -0
  EXPECT_EQ(Fp8E4M3Fn::maxFinite(), 448.0);
}

// OCP E5M2: max normal S.11110.11 = 57344, min normal S.00001.00 = 2^-14,
// max subnormal S.00000.11 = 0.75 * 2^-14, min subnormal S.00000.01 = 2^-16;
// infinities S.11111.00; NaN S.11111.{01, 10, 11}.
TEST(Float8, E5M2DecodesEveryCode) {
  expectDecodes<Fp8E5M2>({"e5m2", 5, 2, 15}, e5m2NaN, e5m2Inf);
  EXPECT_EQ(Fp8E5M2::decode(0x7b), 57344.0);
  EXPECT_EQ(Fp8E5M2::decode(0x04), std::ldexp(1.0, -14));
  EXPECT_EQ(Fp8E5M2::decode(0x03), 0.75 * std::ldexp(1.0, -14));
  EXPECT_EQ(Fp8E5M2::decode(0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(Fp8E5M2::decode(0x7c), INFINITY);
  EXPECT_EQ(Fp8E5M2::decode(0xfc), -INFINITY);
  EXPECT_EQ(Fp8E5M2::maxFinite(), 57344.0);
}

// Non-saturating overflow: NaN in the formats without infinities (fnuz:
// 0x80; e4m3fn: S.1111.111), +inf (0x7c) in e5m2.
TEST(Float8, E4M3FnuzEncodesToNearestEven) { expectEncodes<Fp8E4M3Fnuz>("e4m3fnuz", 0x80); }
TEST(Float8, E5M2FnuzEncodesToNearestEven) { expectEncodes<Fp8E5M2Fnuz>("e5m2fnuz", 0x80); }
TEST(Float8, E4M3FnEncodesToNearestEven) { expectEncodes<Fp8E4M3Fn>("e4m3fn", 0x7f); }
TEST(Float8, E5M2EncodesToNearestEven) { expectEncodes<Fp8E5M2>("e5m2", 0x7c); }

TEST(Float8, SignedZeros) {
  // fnuz has no -0 (0x80 is its NaN): -0 and tiny negatives encode as +0.
  EXPECT_EQ(Fp8E4M3Fnuz::encode(-0.0), 0x00);
  EXPECT_EQ(Fp8E5M2Fnuz::encode(-1e-30), 0x00);
  // The OCP formats keep the sign of zero.
  EXPECT_EQ(Fp8E4M3Fn::encode(-0.0), 0x80);
  EXPECT_EQ(Fp8E5M2::encode(-1e-30), 0x80);
  EXPECT_EQ(Fp8E5M2::encode(1e-30), 0x00);
}
