// The 8-bit floating-point formats, one codec for all of them: the host
// references (kernels/Run.cpp) and the emulator's matrix instructions
// (lib/Emu) decode and encode through it. The device prelude
// (lib/Emit/prelude/tilec_scalars.h) has its own branch-free f32 versions of the
// fnuz formats, checked against this codec's definition by tests/unit/emu.
//
// A format has a sign bit, E exponent bits and M mantissa bits. A code with
// exponent field e != 0 is (1 + m / 2^M) * 2^(e - bias); with e == 0 it is
// the subnormal m * 2^(1 - bias - M). The special values follow one of three
// rules (docs/hardware.md section 8; the OCP 8-bit floating point
// specification, "OFP8", for e4m3fn and e5m2):
//   - Fnuz (AMD gfx942's e4m3fnuz and e5m2fnuz): 0x80 is the only NaN; no
//     infinities; no -0 (a result that rounds to zero is +0).
//   - OcpE4M3 (e4m3fn): S.1111.111 are the NaNs; no infinities; +-0.
//   - Ieee (OCP e5m2): exponent field all ones is infinity (m == 0) or NaN;
//     +-0.
// Encoding rounds to nearest, ties to even. Saturating, a finite value beyond
// the largest finite one (and an infinity) gives the largest finite value of
// its sign; non-saturating, it gives infinity where the format has one, else
// NaN. NaN gives NaN.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tilec {

enum class Fp8Specials { Fnuz, OcpE4M3, Ieee };
enum class Fp8Overflow { Saturate, NonSaturate };

template <int ExponentBits, int MantissaBits, int Bias, Fp8Specials Specials> struct Fp8Codec {
  static_assert(1 + ExponentBits + MantissaBits == 8, "an 8-bit format");
  static constexpr int kMantissaMask = (1 << MantissaBits) - 1;
  static constexpr int kExponentMax = (1 << ExponentBits) - 1;

  /// The largest finite magnitude's code (without the sign).
  static constexpr uint8_t maxFiniteCode() {
    switch (Specials) {
    case Fp8Specials::Fnuz: return 0x7f;                                   // every code but 0x80 is a number
    case Fp8Specials::OcpE4M3: return 0x7e;                                // S.1111.111 is NaN
    case Fp8Specials::Ieee: return uint8_t((kExponentMax << MantissaBits) - 1);  // below the infinity
    }
    return 0;
  }
  /// The NaN an encode gives (sign `sign`, 0 or 0x80).
  static constexpr uint8_t nanCode(uint8_t sign) { return Specials == Fp8Specials::Fnuz ? 0x80 : sign | 0x7f; }
  static constexpr bool hasInfinity() { return Specials == Fp8Specials::Ieee; }

  /// The value of `code`, exactly.
  static double decode(uint8_t code) {
    if (Specials == Fp8Specials::Fnuz && code == 0x80)
      return NAN;
    const int magnitude = code & 0x7f, e = magnitude >> MantissaBits, m = magnitude & kMantissaMask;
    if (Specials == Fp8Specials::OcpE4M3 && magnitude == 0x7f)
      return NAN;
    if (Specials == Fp8Specials::Ieee && e == kExponentMax)
      return m ? NAN : ((code & 0x80) ? -INFINITY : INFINITY);
    const double value = e == 0 ? std::ldexp(m, 1 - Bias - MantissaBits)
                                : std::ldexp((1 << MantissaBits) + m, e - Bias - MantissaBits);
    return (code & 0x80) ? -value : value;
  }

  static double maxFinite() { return decode(maxFiniteCode()); }

  /// `v` rounded to nearest even (see the file comment for overflow and NaN).
  static uint8_t encode(double v, Fp8Overflow overflow = Fp8Overflow::Saturate) {
    const uint8_t sign = std::signbit(v) ? 0x80 : 0;
    if (std::isnan(v))
      return nanCode(sign);
    const uint8_t overflowed = overflow == Fp8Overflow::Saturate ? uint8_t(sign | maxFiniteCode())
                               : hasInfinity() ? uint8_t(sign | (kExponentMax << MantissaBits))
                                               : nanCode(sign);
    const double a = std::fabs(v);
    if (a >= 2 * maxFinite())  // infinities too; also keeps the exponent below in range
      return overflowed;
    // The grid spacing at |v|: 2^(e - M) for |v| in [2^e, 2^(e+1)), and the
    // subnormals' 2^(1 - bias - M) below the smallest normal 2^(1 - bias).
    const int e = a == 0 ? 1 - Bias : std::max(std::ilogb(a), 1 - Bias);
    const double q = std::nearbyint(std::ldexp(a, MantissaBits - e));  // FE_TONEAREST: ties to even
    // Normal: q in [2^M, 2^(M+1)], code = (biased exponent << M) + q - 2^M,
    // where q == 2^(M+1) carries into the next binade. Subnormal (e == 1 -
    // bias, q < 2^M): the same formula gives code = q, and q == 2^M is the
    // smallest normal.
    const int code = ((e + Bias) << MantissaBits) + static_cast<int>(q) - (1 << MantissaBits);
    if (code > maxFiniteCode())
      return overflowed;
    if (code == 0 && Specials == Fp8Specials::Fnuz)
      return 0;  // no -0: 0x80 is the NaN
    return uint8_t(sign | code);
  }
};

/// AMD gfx942's fp8 ("fp8", e4m3fnuz): bias 8, max 240.
using Fp8E4M3Fnuz = Fp8Codec<4, 3, 8, Fp8Specials::Fnuz>;
/// AMD gfx942's bf8 ("bf8", e5m2fnuz): bias 16, max 57344.
using Fp8E5M2Fnuz = Fp8Codec<5, 2, 16, Fp8Specials::Fnuz>;
/// OCP E4M3 (NVIDIA's e4m3, "e4m3fn"): bias 7, max 448.
using Fp8E4M3Fn = Fp8Codec<4, 3, 7, Fp8Specials::OcpE4M3>;
/// OCP E5M2 (NVIDIA's e5m2): bias 15, max 57344, infinities.
using Fp8E5M2 = Fp8Codec<5, 2, 15, Fp8Specials::Ieee>;

} // namespace tilec
