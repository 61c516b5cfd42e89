// tilec tile primitives (what generated kernels call), first part: the element
// types (bf16 and the fp8 formats) with their conversions to and from f32, the
// math of tile.map, work-item indices and raw bits. The tile primitives are
// written against the hardware layer (tl::hw, from tilec_hw_*.h), so the same
// text serves the GPU and the CPU wavefront emulator; lib/Emit/CMakeLists.txt
// concatenates the parts in order (docs/design.md, section 4).
#pragma once

namespace tl {

/// bf16 stored as its 16 raw bits.
struct bf16 {
  unsigned short bits;
};
typedef _Float16 f16;
/// fp8 e4m3fnuz stored as its 8 raw bits (docs/hardware.md section 8): bias 8,
/// max 240, one NaN 0x80, no infinities, no -0.
struct fp8e4m3fnuz {
  unsigned char bits;
};
/// fp8 e5m2fnuz ("bf8" in AMD's builtin names) stored as its 8 raw bits
/// (section 8): bias 16, max 57344, one NaN 0x80, no infinities, no -0.
struct fp8e5m2fnuz {
  unsigned char bits;
};
/// OCP fp8 E4M3 (NVIDIA's e4m3, "e4m3fn") stored as its 8 raw bits
/// (docs/hardware.md section 8): bias 7, max 448, NaN S.1111.111, no
/// infinities, +-0.
struct fp8e4m3 {
  unsigned char bits;
};
/// OCP fp8 E5M2 (NVIDIA's e5m2) stored as its 8 raw bits (section 8): bias
/// 15, max 57344, IEEE-like: S.11111.00 is infinity, S.11111.{01,10,11} NaN, +-0.
struct fp8e5m2 {
  unsigned char bits;
};

// --- conversions (bf16: round to nearest even, NaN kept quiet) ---------------
TL_INLINE float to_f32(float x) { return x; }
TL_INLINE float to_f32(f16 x) { return (float)x; }
TL_INLINE float to_f32(bf16 x) { return __builtin_bit_cast(float, (unsigned)x.bits << 16); }
template <class T> TL_INLINE T from_f32(float x);
template <> TL_INLINE float from_f32<float>(float x) { return x; }
template <> TL_INLINE f16 from_f32<f16>(float x) { return (f16)x; }
// Branch-free: a branch per element makes the stores of a bf16 tile too
// large to unroll, and an accumulator indexed in a loop lives in scratch.
template <> TL_INLINE bf16 from_f32<bf16>(float x) {
  const unsigned u = __builtin_bit_cast(unsigned, x);
  const unsigned rounded = u + 0x7fffu + ((u >> 16) & 1u);
  const unsigned quieted = u | 0x400000u;
  // x != x: NaN (one unordered compare, where testing the bits takes two).
  return bf16{(unsigned short)((x != x ? quieted : rounded) >> 16)};
}
/// Two values rounded to T (16-bit, or 8-bit fp8) and packed, lo in the low
/// bits (a 16-bit pair is the layout of a matrix operand's register). One
/// instruction where the hardware layer converts pairs (hw_converts_pairs).
template <class T> TL_INLINE unsigned pack2_f32(float lo, float hi) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 1, "pack2_f32: a 16- or 8-bit type");
#ifdef TL_HW_HAS_CVT_X2
  if constexpr (__is_same(T, bf16))
    return hw::cvt_bf16x2(lo, hi);
  else if constexpr (__is_same(T, f16))
    return hw::cvt_f16x2(lo, hi);
  else
#endif
#ifdef TL_HW_HAS_CVT_FP8X2
  if constexpr (__is_same(T, fp8e4m3))
    return hw::cvt_e4m3x2(lo, hi);
  else if constexpr (__is_same(T, fp8e5m2))
    return hw::cvt_e5m2x2(lo, hi);
  else
#endif
  if constexpr (sizeof(T) == 2)
    return unsigned(__builtin_bit_cast(unsigned short, from_f32<T>(lo))) |
           unsigned(__builtin_bit_cast(unsigned short, from_f32<T>(hi))) << 16;
  else
    return unsigned(__builtin_bit_cast(unsigned char, from_f32<T>(lo))) |
           unsigned(__builtin_bit_cast(unsigned char, from_f32<T>(hi))) << 8;
}
// fp8 e4m3fnuz (section 8): exact decode; encode rounds to nearest even and
// saturates (|x| >= 240 and +-inf give +-240), NaN gives 0x80, and a result
// that rounds to zero is +0 (the format has no -0: 0x80 is its NaN).
TL_INLINE float to_f32(fp8e4m3fnuz x) {
  const unsigned b = x.bits, e = (b >> 3) & 15u, m = b & 7u;
  if (b == 0x80u)
    return __builtin_bit_cast(float, 0x7fc00000u);
  // Subnormal: m * 2^-10; normal: 1.m * 2^(e-8), i.e. f32 exponent field e + 119.
  float mag = e == 0 ? (float)m * 0x1p-10f : __builtin_bit_cast(float, ((e + 119u) << 23) | (m << 20));
  return (b & 0x80u) ? -mag : mag;
}
template <> TL_INLINE fp8e4m3fnuz from_f32<fp8e4m3fnuz>(float x) {
  const unsigned u = __builtin_bit_cast(unsigned, x), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return fp8e4m3fnuz{0x80};
  unsigned code;
  if (a >= 0x43700000u) {          // |x| >= 240 (or inf): saturate
    code = 0x7fu;
  } else if (a < 0x3c000000u) {    // |x| < 2^-7: subnormal grid of 2^-10, code = round(|x| * 2^10)
    float q = __builtin_bit_cast(float, a) * 0x1p10f;  // exact: a power-of-two scale
    code = (unsigned)q;
    float frac = q - (float)code;
    code += frac > 0.5f || (frac == 0.5f && (code & 1u));  // 8 rounds up to 0x08 = 2^-7
  } else {                         // normal: keep 3 mantissa bits, round to nearest even
    unsigned r = (a + 0x7ffffu + ((a >> 20) & 1u)) >> 20;  // f32 exponent and 3 mantissa bits
    code = r - (119u << 3);        // rebias 127 -> 8
  }
  return fp8e4m3fnuz{(unsigned char)(code == 0 ? 0u : code | sign)};
}
// fp8 e5m2fnuz (section 8): exact decode; encode rounds to nearest even and
// saturates (|x| >= 57344 and +-inf give +-57344), NaN gives 0x80, and a
// result that rounds to zero is +0 (0x80 is the NaN, not -0).
TL_INLINE float to_f32(fp8e5m2fnuz x) {
  const unsigned b = x.bits, e = (b >> 2) & 31u, m = b & 3u;
  if (b == 0x80u)
    return __builtin_bit_cast(float, 0x7fc00000u);
  // Subnormal: m * 2^-17; normal: 1.m * 2^(e-16), i.e. f32 exponent field e + 111.
  float mag = e == 0 ? (float)m * 0x1p-17f : __builtin_bit_cast(float, ((e + 111u) << 23) | (m << 21));
  return (b & 0x80u) ? -mag : mag;
}
template <> TL_INLINE fp8e5m2fnuz from_f32<fp8e5m2fnuz>(float x) {
  const unsigned u = __builtin_bit_cast(unsigned, x), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return fp8e5m2fnuz{0x80};
  unsigned code;
  if (a >= 0x47600000u) {          // |x| >= 57344 (or inf): saturate
    code = 0x7fu;
  } else if (a < 0x38000000u) {    // |x| < 2^-15: subnormal grid of 2^-17, code = round(|x| * 2^17)
    float q = __builtin_bit_cast(float, a) * 0x1p17f;  // exact: a power-of-two scale
    code = (unsigned)q;
    float frac = q - (float)code;
    code += frac > 0.5f || (frac == 0.5f && (code & 1u));  // 4 rounds up to 0x04 = 2^-15
  } else {                         // normal: keep 2 mantissa bits, round to nearest even
    unsigned r = (a + 0xfffffu + ((a >> 21) & 1u)) >> 21;  // f32 exponent and 2 mantissa bits
    code = r - (111u << 2);        // rebias 127 -> 16
  }
  return fp8e5m2fnuz{(unsigned char)(code == 0 ? 0u : code | sign)};
}

// OCP fp8 (section 8), E exponent bits, M mantissa bits, bias B; Ieee: the
// top exponent field holds infinity and NaNs (e5m2), else only S.1..1.1..1
// is NaN (e4m3). Exact decode; encode rounds to nearest even and saturates
// (a finite |x| beyond the largest value, and +-inf, give the largest value of
// its sign, as NVIDIA's cvt.rn.satfinite does), NaN gives S.1111111 (a NaN in
// both formats), and -0 stays -0. The host's codec (lib/Target/Float8.h)
// defines the same conversions; tests/unit/emu/OcpFp8ConversionTest.cpp
// checks these against it for every code and every tie.
template <int E, int M, int B, bool Ieee> struct OcpFp8 {
  static constexpr unsigned kTopE = Ieee ? (1u << E) - 2 : (1u << E) - 1;  // largest finite exponent field
  static constexpr unsigned kTopM = Ieee ? (1u << M) - 1 : (1u << M) - 2;  // its largest mantissa
  static constexpr unsigned kMaxCode = kTopE << M | kTopM;
  static constexpr unsigned kMaxBits = (kTopE + 127u - B) << 23 | kTopM << (23 - M);  // f32 bits of the max
  static constexpr unsigned kMinNormalBits = (128u - B) << 23;                         // 2^(1-B)
  TL_INLINE static float decode(unsigned b) {
    const unsigned e = (b >> M) & ((1u << E) - 1), m = b & ((1u << M) - 1);
    const bool special = Ieee ? e == (1u << E) - 1 : (b & 0x7fu) == 0x7fu;
    // Subnormal: m * 2^(1-B-M); normal: 1.m * 2^(e-B), f32 exponent field e + 127 - B.
    float mag = e == 0 ? (float)m * __builtin_bit_cast(float, (128u - B - M) << 23)
                       : __builtin_bit_cast(float, (e + 127u - B) << 23 | m << (23 - M));
    if (special)
      mag = __builtin_bit_cast(float, Ieee && m == 0 ? 0x7f800000u : 0x7fc00000u);
    return (b & 0x80u) ? -mag : mag;
  }
  TL_INLINE static unsigned char encode(float x) {
    const unsigned u = __builtin_bit_cast(unsigned, x), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
      return (unsigned char)(sign | 0x7fu);
    unsigned code;
    if (a >= kMaxBits) {                 // |x| >= max (or inf): saturate
      code = kMaxCode;
    } else if (a < kMinNormalBits) {     // subnormal grid of 2^(1-B-M): code = round(|x| * 2^(B-1+M))
      float q = __builtin_bit_cast(float, a) * __builtin_bit_cast(float, (126u + B + M) << 23);  // exact
      code = (unsigned)q;
      float frac = q - (float)code;
      code += frac > 0.5f || (frac == 0.5f && (code & 1u));  // 2^M rounds up to the smallest normal
    } else {                             // normal: keep M mantissa bits, round to nearest even
      const unsigned r = (a + ((1u << (22 - M)) - 1) + ((a >> (23 - M)) & 1u)) >> (23 - M);
      code = r - ((127u - B) << M);      // rebias 127 -> B
    }
    return (unsigned char)(code | sign);
  }
};
using OcpE4M3 = OcpFp8<4, 3, 7, false>;
using OcpE5M2 = OcpFp8<5, 2, 15, true>;
TL_INLINE float to_f32(fp8e4m3 x) { return OcpE4M3::decode(x.bits); }
TL_INLINE float to_f32(fp8e5m2 x) { return OcpE5M2::decode(x.bits); }
template <> TL_INLINE fp8e4m3 from_f32<fp8e4m3>(float x) { return fp8e4m3{OcpE4M3::encode(x)}; }
template <> TL_INLINE fp8e5m2 from_f32<fp8e5m2>(float x) { return fp8e5m2{OcpE5M2::encode(x)}; }

/// Whether the hardware layer rounds a pair of f32 to T in one instruction
/// (pack2_f32), which stores of wide
/// runs then use instead of from_f32 per value.
template <class T>
inline constexpr bool hw_converts_pairs =
#ifdef TL_HW_HAS_CVT_X2
    __is_same(T, bf16) || __is_same(T, f16) ||
#endif
#ifdef TL_HW_HAS_CVT_FP8X2
    __is_same(T, fp8e4m3) || __is_same(T, fp8e5m2) ||
#endif
    false;

/// x rounded to T and back (register tiles of type T hold such values).
// i32 register tiles hold integers as f32 (exact up to 2^24 in magnitude).
TL_INLINE float to_f32(int x) { return (float)x; }
template <> TL_INLINE int from_f32<int>(float x) { return (int)x; }

template <class T> TL_INLINE float round_to(float x) { return to_f32(from_f32<T>(x)); }

// --- math: the tile.map functions (docs/design.md, "Device math") ----------------
// Written against hw::exp2, hw::log2, hw::rcp (1-ulp approximations) and hw::fma,
// never a library call. Their error bounds (each hw:: approximation taken as
// 1 ulp) are derived in kernels/DeviceMath.h and tested per function
// (tests/unit/run/MapMathTest.cpp).
// An fma appears only where a rounding error must be kept exactly (exp's
// argument reduction); everything else rounds each operation, on every target.
constexpr float kLog2e = 0x1.715476p+0f;     // log2(e) rounded to f32
constexpr float kLog2eLo = 0x1.4ae0c0p-26f;  // log2(e) - kLog2e
constexpr float kLn2 = 0x1.62e430p-1f;       // ln(2) rounded to f32

TL_INLINE float exp2(float x) { return hw::exp2(x); }
/// e^x = 2^(t + c): t = x log2(e) rounded, c = its rounding error (exact, by
/// fma) plus x times the tail of log2(e); |c| <= 2^-16, so 2^c = 1 + c ln2 to
/// well below an ulp. Where 2^t is 0 or infinite (x = +-inf included: c is
/// NaN there) it is the result.
TL_INLINE float exp(float x) {
  const float t = x * kLog2e;
  const float c = hw::fma(x, kLog2e, -t) + x * kLog2eLo;
  const float y = hw::exp2(t);
  return y == 0.0f || y == __builtin_inff() ? y : hw::fma(y, c * kLn2, y);
}
/// log2 with subnormal x scaled by 2^32 first.
TL_INLINE float log2(float x) {
  const bool subnormal = x < 0x1p-126f;
  const float y = hw::log2(subnormal ? x * 0x1p32f : x);
  return subnormal ? y - 32.0f : y;
}
TL_INLINE float log(float x) { return log2(x) * kLn2; }
/// x / y as x * rcp(y), with |y| > 2^96 scaled by 2^-32 (and |y| < 2^-96 by
/// 2^32) so that rcp's operand and result are normal; 0 / 0, x / inf and
/// inf / inf as IEEE division.
TL_INLINE float div(float x, float y) {
  const float a = __builtin_fabsf(y);
  const float s = a > 0x1p96f ? 0x1p-32f : a < 0x1p-96f ? 0x1p32f : 1.0f;
  return s * (x * hw::rcp(y * s));
}
TL_INLINE float recip(float x) { return div(1.0f, x); }
/// sqrt(x) and 1 / sqrt(x) from hw::sqrt and hw::rsq, with subnormal x scaled
/// by 2^32 first (the result by 2^-16, resp. 2^16: exact).
TL_INLINE float sqrt(float x) {
  const bool subnormal = __builtin_fabsf(x) < 0x1p-126f && x != 0.0f;
  const float y = hw::sqrt(subnormal ? x * 0x1p32f : x);
  return subnormal ? y * 0x1p-16f : y;
}
TL_INLINE float rsqrt(float x) {
  const bool subnormal = __builtin_fabsf(x) < 0x1p-126f && x != 0.0f;
  const float y = hw::rsq(subnormal ? x * 0x1p32f : x);
  return subnormal ? y * 0x1p16f : y;
}
/// 1 / (1 + e^-x) from e = e^-|x| <= 1, which cannot overflow: 1 / (1 + e)
/// for x >= 0, e / (1 + e) below.
TL_INLINE float sigmoid(float x) {
  const float e = exp(-__builtin_fabsf(x)), r = recip(1.0f + e);
  return x >= 0.0f ? r : e * r;
}
TL_INLINE float silu(float x) { return x * sigmoid(x); }
/// tanh(x), odd: for |x| < 1/2 its Taylor polynomial to x^13 in x^2 (the
/// first term left out, 929569 x^15 / 638512875, is below 1.7 u of tanh
/// there); above, (1 - e) / (1 + e) with e = e^-2|x| <= e^-1, which cannot
/// overflow (x = inf: e = 0, 1).
TL_INLINE float tanh(float x) {
  const float a = __builtin_fabsf(x);
  if (a < 0.5f) {
    const float y = x * x;
    float p = 0x1.d6d3d0p-9f;     //  21844 / 6081075
    p = p * y - 0x1.226e36p-7f;   // -1382 / 155925
    p = p * y + 0x1.664f48p-6f;   //  62 / 2835
    p = p * y - 0x1.ba1ba2p-5f;   // -17 / 315
    p = p * y + 0x1.111112p-3f;   //  2 / 15
    p = p * y - 0x1.555556p-2f;   // -1 / 3
    return x + x * (y * p);
  }
  const float e = exp(-2.0f * a), t = div(1.0f - e, 1.0f + e);
  return x < 0.0f ? -t : t;  // NaN: e and t are NaN
}
/// 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), evaluated as
/// x sigmoid(2z) (the same function: 1 + tanh(z) = 2 sigmoid(2z)), which does
/// not cancel where tanh(z) is near -1; 2z = x (a + b x^2).
TL_INLINE float gelu_tanh(float x) {
  constexpr float a = 0x1.988454p+0f;  // 2 sqrt(2/pi)
  constexpr float b = 0x1.2444f2p-4f;  // 2 sqrt(2/pi) 0.044715
  return x * sigmoid(x * (a + b * (x * x)));
}
/// exp2(x - y), 0 where y is -inf (no value seen yet: nothing to rescale).
// The test is on y alone (a row's maximum, shared by the row's elements), so
// the compiler computes it once per row: y = -inf becomes +inf, and x - inf
// is -inf for every x but +inf and NaN (a row's maximum of -inf means every
// x of the row is -inf).
TL_INLINE float sub_exp2(float x, float y) { return exp2(x - (y == -__builtin_inff() ? __builtin_inff() : y)); }
/// x / y, 0 where y is 0.
TL_INLINE float safe_div(float x, float y) { return y == 0.0f ? 0.0f : div(x, y); }

// --- work-item indices --------------------------------------------------------
TL_INLINE int thread_id() { return hw::thread_id(); }
TL_INLINE int block_id(int axis) { return hw::block_id(axis); }
TL_INLINE void barrier() { hw::barrier(); }
TL_INLINE int cdiv(int a, int b) { return (a + b - 1) / b; }
TL_INLINE int imin(int a, int b) { return a < b ? a : b; }
TL_INLINE int imax(int a, int b) { return a > b ? a : b; }

// --- raw bits --------------------------------------------------------------------
/// Bytes raw bytes as one value: what one memory access of that width moves.
template <int Bytes> struct raw_bits;
template <> struct raw_bits<1> { using type = unsigned char; };
template <> struct raw_bits<2> { using type = unsigned short; };
template <> struct raw_bits<4> { using type = unsigned; };
template <> struct raw_bits<8> { using type = uint2_t; };
template <> struct raw_bits<16> { using type = uint4_t; };
template <int Bytes> using raw_t = typename raw_bits<Bytes>::type;

/// Bytes [at, at + sizeof(To)) of x as a To (`at` a constant once the
/// caller's loop is unrolled: a shift or a vector extract).
template <class To, class From> TL_INLINE To raw_slice(const From &x, int at) {
  To out;
  __builtin_memcpy(&out, (const char *)&x + at, sizeof(To));
  return out;
}

} // namespace tl
