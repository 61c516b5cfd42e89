// tilec tile primitives: what generated kernels call. Written against the
// hardware layer (tl::hw, from tilec_hw_*.h), so the same text serves the GPU
// and the CPU wavefront emulator. Matrix-instruction layouts follow
// docs/hardware.md sections 1-2 and the calculator tables in
// tests/data/matrix-layouts.
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
  return bf16{(unsigned short)(((u & 0x7fffffffu) > 0x7f800000u ? quieted : rounded) >> 16)};
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
/// 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), evaluated as
/// x sigmoid(2z) (the same function: 1 + tanh(z) = 2 sigmoid(2z)), which does
/// not cancel where tanh(z) is near -1; 2z = x (a + b x^2).
TL_INLINE float gelu_tanh(float x) {
  constexpr float a = 0x1.988454p+0f;  // 2 sqrt(2/pi)
  constexpr float b = 0x1.2444f2p-4f;  // 2 sqrt(2/pi) 0.044715
  return x * sigmoid(x * (a + b * (x * x)));
}
/// exp2(x - y), 0 where y is -inf (no value seen yet: nothing to rescale).
TL_INLINE float sub_exp2(float x, float y) { return y == -__builtin_inff() ? 0.0f : exp2(x - y); }
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

// --- global tensors through buffer resources (docs/hardware.md section 4) --------
/// A run of Bytes bytes (4, 8 or 16) of a row that need not be aligned, in
/// flight: the two aligned Bytes-byte pieces of memory that hold it and its
/// place in them, `place` = shift (where the run starts in lo) | keep << 8
/// (how many of its bytes lie inside the tensor; the rest read as 0).
/// Global::load_unaligned issues the loads, realign() assembles the run.
template <int Bytes> struct Unaligned {
  raw_t<Bytes> lo, hi;
  int place;
};

/// The run of `u` as raw bits: bytes [shift, shift + Bytes) of lo:hi, bytes
/// at or past keep zeroed. Whole words are selected first by a logarithmic
/// shifter of selects (indexing the words by a lane's value would put them in
/// memory), then hw::align_bytes (v_alignbyte_b32, shf.r) shifts the bytes
/// within a word: for 16 bytes, 11 selects and 4 shifts.
template <int Bytes> TL_INLINE raw_t<Bytes> realign(const Unaligned<Bytes> &u) {
  constexpr int W = Bytes / 4;
  unsigned w[2 * W];
  TL_UNROLL
  for (int i = 0; i < W; ++i) {
    w[i] = raw_slice<unsigned>(u.lo, 4 * i);
    w[W + i] = raw_slice<unsigned>(u.hi, 4 * i);
  }
  const int shift = u.place & 0xff, keep = u.place >> 8;
  TL_UNROLL
  for (int step = W / 2; step >= 1; step /= 2) {
    const bool by = (shift & (4 * step)) != 0;
    TL_UNROLL
    for (int i = 0; i < W + step; ++i) {  // words 0..W are what the later steps read
      const unsigned stay = w[i], move = w[i + step];  // values: a select of the words' addresses would index memory
      w[i] = by ? move : stay;
    }
  }
  unsigned out[W];
  TL_UNROLL
  for (int i = 0; i < W; ++i)
    out[i] = hw::align_bytes(w[i + 1], w[i], shift & 3);
  if (keep < Bytes) {  // a run at the window's edge: the bytes past it read 0
    TL_UNROLL
    for (int i = 0; i < W; ++i) {
      const int k = keep - 4 * i;  // bytes of this word inside
      out[i] = k >= 4 ? out[i] : k <= 0 ? 0u : out[i] & ((1u << (8 * k)) - 1);
    }
  }
  raw_t<Bytes> r;
  __builtin_memcpy(&r, out, Bytes);
  return r;
}

/// A row-major tensor of `rows` x `cols` elements, or a window of one
/// (tile.window): element (r, c) is `origin + r * pitch + c` elements past the
/// buffer's base. Reads outside it give 0 and writes are dropped: each element
/// access is either wholly in or wholly out of range, because the offset of
/// an out-of-range element is pushed past num_records, which the hardware
/// bounds check then rejects.
template <class T, unsigned Flags> struct Global {
  hw::rsrc_t rsrc;
  int rows, cols, pitch, origin;
  /// A whole tensor, not a window: its rows end where num_records does, so a
  /// row past its end lies past num_records too (the hardware drops the
  /// access), as long as its byte offset (int32, as everywhere here) stays
  /// below `outside` and does not wrap (store_tile checks that).
  bool whole = true;
  /// The byte offset of an element outside the tensor, which the hardware
  /// skips: at or past num_records, as launches refuse tensors of more than
  /// `outside` bytes (tilec::kMaxTensorBytes).
  static constexpr int outside = 0x7fffffff & ~3;
  /// The buffer's bytes (num_records) and where its base lies within 16
  /// bytes: what load_unaligned needs to place aligned accesses.
  int limit, lead;
  TL_INLINE Global(const T *p, int r, int c) : rows(r), cols(c), pitch(c), origin(0) {
    long bytes = (long)r * c * (long)sizeof(T);
    limit = (int)(bytes > 0x7fffffffL ? 0x7fffffff : bytes);
    lead = (int)((unsigned long)p & 15);
    rsrc = hw::make_rsrc(p, limit, Flags);
  }
  /// The window at (r0, c0) of nr x nc elements, clipped to this tensor.
  TL_INLINE Global window(int r0, int c0, int nr, int nc) const {
    Global w = *this;
    w.whole = false;
    const bool in = r0 >= 0 && r0 <= rows && c0 >= 0 && c0 <= cols;
    w.rows = in ? imax(0, imin(nr, rows - r0)) : 0;
    w.cols = in ? imax(0, imin(nc, cols - c0)) : 0;
    w.origin = in ? origin + r0 * pitch + c0 : 0;
    return w;
  }
  /// Byte offset of element (r, c), or one past every buffer when (r, c) lies
  /// outside (loads).
  TL_INLINE int offset(int r, int c) const {
    bool in = r >= 0 && r < rows && c >= 0 && c < cols;
    return in ? (origin + r * pitch + c) * (int)sizeof(T) : outside;
  }
  /// offset() for stores and for the staged tile loads (load_staging): the
  /// same value, tested without short-circuits. Both forms are what clang
  /// compiles fastest where they are used (instructions executed by the JIT
  /// for the default GEMM, measured: the `&` form halves the cost of the
  /// stores' bounds tests, the `&&` form is cheaper for the element-wise
  /// loads). In a pipelined loop's staged loads the `&&` form became an
  /// exec-masked branch per load (s_and_saveexec, s_or exec, s_nop) on gfx942.
  TL_INLINE int store_offset(int r, int c) const {
    const bool in = ((unsigned)r < (unsigned)rows) & ((unsigned)c < (unsigned)cols);
    return in ? (origin + r * pitch + c) * (int)sizeof(T) : outside;
  }
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "Global: elements of 1, 2 or 4 bytes");
  /// N elements (N * sizeof(T) = 1..16 bytes) from (r, c) on, as raw bits;
  /// zeros when (r, c) lies outside. Vector accesses (8 or 16 bytes) are only
  /// issued where the tensor's declared divisibility keeps each one wholly
  /// inside a row (or wholly outside the tensor) and aligned.
  template <int N> TL_INLINE raw_t<N * (int)sizeof(T)> load_raw(int r, int c) const {
    return load_at<N * (int)sizeof(T)>(offset(r, c));
  }
  /// One access of Bytes bytes at byte offset `off` (past num_records: 0).
  template <int Bytes> TL_INLINE raw_t<Bytes> load_at(int off) const {
    if constexpr (Bytes == 16)
      return hw::buffer_load_b128(rsrc, off);
    else if constexpr (Bytes == 8)
      return hw::buffer_load_b64(rsrc, off);
    else if constexpr (Bytes == 4)
      return hw::buffer_load_b32(rsrc, off);
    else if constexpr (Bytes == 2)
      return hw::buffer_load_b16(rsrc, off);
    else
      return hw::buffer_load_b8(rsrc, off);
  }
#if TL_HW_HAS_SOFFSET
  /// One access of Bytes bytes at byte offset `off` + `soff`, `soff`
  /// wave-uniform (the SGPR offset); the access must lie wholly inside the
  /// buffer (the range check sees only `off` on gfx9).
  template <int Bytes> TL_INLINE raw_t<Bytes> load_at(int off, int soff) const {
    if constexpr (Bytes == 16)
      return hw::buffer_load_b128(rsrc, off, soff);
    else if constexpr (Bytes == 8)
      return hw::buffer_load_b64(rsrc, off, soff);
    else if constexpr (Bytes == 4)
      return hw::buffer_load_b32(rsrc, off, soff);
    else if constexpr (Bytes == 2)
      return hw::buffer_load_b16(rsrc, off, soff);
    else
      return hw::buffer_load_b8(rsrc, off, soff);
  }
#endif
  /// The Bytes bytes at byte offset `at` (an address aligned to Bytes; `at`
  /// may lie before the buffer), each byte outside the buffer reading 0: one
  /// access where the piece lies wholly in or wholly out, else (the buffer's
  /// first or last bytes only) element by element in a loop, so that no
  /// access is partly out of range (docs/hardware.md section 4).
  template <int Bytes> TL_INLINE raw_t<Bytes> load_piece(int at) const {
    const bool whole = at >= 0 && at <= limit - Bytes, none = at >= limit || at <= -Bytes;
    if (whole || none)
      return load_at<Bytes>(whole ? at : outside);
    constexpr int W = Bytes / 4, bits = 8 * (int)sizeof(T);
    unsigned w[W] = {};
    _Pragma("nounroll")
    for (int k = Bytes - (int)sizeof(T); k >= 0; k -= (int)sizeof(T)) {  // last element first, shifted up
      TL_UNROLL
      for (int i = W - 1; i > 0; --i)
        w[i] = w[i] << bits | w[i - 1] >> (32 - bits);
      const int e = at + k;
      w[0] = w[0] << bits | (unsigned)load_at<(int)sizeof(T)>(e >= 0 ? e : outside);
    }
    raw_t<Bytes> v;
    __builtin_memcpy(&v, w, Bytes);
    return v;
  }
  /// The run of N elements from (r, c) on (N * sizeof(T) = 4, 8 or 16 bytes),
  /// wherever the row lies: the two aligned accesses of that width that
  /// cover it, with its place in them; elements outside the tensor (past
  /// its columns, or a row outside it) read 0. realign() assembles the run
  /// once the loads have completed (a prefetch keeps the pieces in flight).
  template <int N> TL_INLINE Unaligned<N * (int)sizeof(T)> load_unaligned(int r, int c) const {
    constexpr int B = N * (int)sizeof(T);
    static_assert(B == 4 || B == 8 || B == 16, "load_unaligned: runs of 4, 8 or 16 bytes");
    const bool in = r >= 0 && r < rows && c >= 0 && c < cols;
    const int keep = in ? imin(N, cols - c) * (int)sizeof(T) : 0;  // bytes of the run inside
    const int off = (origin + r * pitch + c) * (int)sizeof(T);
    const int shift = (lead + off) & (B - 1);  // the run's place in the aligned piece holding its start
    Unaligned<B> u;
    u.lo = load_piece<B>(keep > 0 ? off - shift : outside);
    u.hi = load_piece<B>(shift + keep > B ? off - shift + B : outside);
    u.place = shift | keep << 8;
    return u;
  }
  /// load_unaligned for a run that lies inside the tensor and whose pieces
  /// lie inside the buffer (inside() of its tile holds): no tests.
  template <int N> TL_INLINE Unaligned<N * (int)sizeof(T)> load_unaligned_inside(int r, int c) const {
    constexpr int B = N * (int)sizeof(T);
    const int off = (origin + r * pitch + c) * (int)sizeof(T), shift = (lead + off) & (B - 1);
    Unaligned<B> u;
    u.lo = load_at<B>(off - shift);
    u.hi = load_at<B>(off - shift + B);
    u.place = shift | B << 8;
    return u;
  }
  /// Whether the R x C window at (r0, c0) lies inside the tensor and 16
  /// bytes from either end of the buffer, so that every aligned piece of
  /// 16 bytes or less around its runs lies inside the buffer too.
  template <int R, int C> TL_INLINE bool inside(int r0, int c0) const {
    const int first = (origin + r0 * pitch + c0) * (int)sizeof(T),
              end = (origin + (r0 + R - 1) * pitch + c0 + C) * (int)sizeof(T);
    return (r0 >= 0) & (c0 >= 0) & (r0 + R <= rows) & (c0 + C <= cols) & (first >= 16) & (end <= limit - 16);
  }
  TL_INLINE T load(int r, int c) const { return __builtin_bit_cast(T, load_raw<1>(r, c)); }
  TL_INLINE void store(int r, int c, T v) const { store_at(store_offset(r, c), v); }
  /// Stores v at byte offset `off` (past num_records: dropped).
  TL_INLINE void store_at(int off, T v) const {
    if constexpr (sizeof(T) == 4)
      hw::buffer_store_b32(__builtin_bit_cast(unsigned, v), rsrc, off);
    else if constexpr (sizeof(T) == 2)
      hw::buffer_store_b16(__builtin_bit_cast(unsigned short, v), rsrc, off);
    else
      hw::buffer_store_b8(__builtin_bit_cast(unsigned char, v), rsrc, off);
  }
};

// --- LDS tiles ------------------------------------------------------------------
/// Rows x Cols elements at `base`, rows RowStride elements apart, columns
/// XOR-swizzled per row on groups of Vec elements (docs/hardware.md section 3;
/// MaxPhase 1: none). tilec-allocate-lds chooses the layout and, with it, how
/// many consecutive elements of a row one LDS access moves: WriteVec for the
/// cooperative writes (load_tile, commit), ReadVec for the matrix operands
/// that run along a row (gemm); the layout keeps such runs contiguous and
/// aligned. ColBlock > 0 stores the columns in blocks of ColBlock, one block
/// (Rows x RowStride elements) after the other: the layout wgmma reads an
/// MN-major operand wider than its swizzle in (wgmma_layout).
template <class T, int Rows, int Cols, int RowStride, int Vec = 1, int PerPhase = 1, int MaxPhase = 1,
          int WriteVec = 1, int ReadVec = 1, int ColBlock = 0>
struct Lds {
  using elem = T;
  static constexpr int rows = Rows, cols = Cols, write_vec = WriteVec, read_vec = ReadVec;
  static constexpr int row_stride = RowStride, vec = Vec, per_phase = PerPhase, max_phase = MaxPhase,
                       col_block = ColBlock;
  static_assert(RowStride % WriteVec == 0 && RowStride % ReadVec == 0 &&
                    (MaxPhase == 1 || (Vec % WriteVec == 0 && Vec % ReadVec == 0)),
                "Lds: the layout splits a vector access");
  static_assert(ColBlock == 0 || (Cols % ColBlock == 0 && ColBlock <= RowStride && ColBlock % Vec == 0),
                "Lds: column blocks split the columns evenly");
  T *base;
  TL_INLINE static int index(int r, int c) {
    if constexpr (ColBlock > 0)
      return c / ColBlock * (Rows * RowStride) + r * RowStride +
             ((c % ColBlock / Vec) ^ ((r / PerPhase) % MaxPhase)) * Vec + c % Vec;
    return r * RowStride + ((c / Vec) ^ ((r / PerPhase) % MaxPhase)) * Vec + c % Vec;
  }
  TL_INLINE T load(int r, int c) const { return hw::lds_read(base + index(r, c)); }
  TL_INLINE void store(int r, int c, T v) const { hw::lds_write(base + index(r, c), v); }
  /// The N elements from (r, c) on, as raw bits: one access (N elements must
  /// be contiguous: N <= ReadVec, or 1).
  template <int N> TL_INLINE raw_t<N * (int)sizeof(T)> load_raw(int r, int c) const {
    return hw::lds_read((const raw_t<N * (int)sizeof(T)> *)(base + index(r, c)));
  }
  /// Writes the N elements x (raw bits) from (r, c) on, WriteVec at a time.
  template <int N, class X> TL_INLINE void store_run(int r, int c, const X &x) const {
    constexpr int W = WriteVec < N ? WriteVec : N, bytes = W * (int)sizeof(T);
    static_assert(N % W == 0 && sizeof(X) == N * sizeof(T), "store_run: N elements of raw bits");
    TL_UNROLL
    for (int q = 0; q < N / W; ++q)
      hw::lds_write((raw_t<bytes> *)(base + index(r, c + q * W)), raw_slice<raw_t<bytes>>(x, q * bytes));
  }
  /// Buffer `i` of a multi-buffered tile whose buffers are `elems` apart.
  TL_INLINE Lds buffer(int i, int elems) const { return Lds{base + i * elems}; }
};

/// A Rows x Cols tile in flight between global memory and LDS, in registers,
/// as runs of Vec consecutive elements of a row (one global load each):
/// thread t holds runs t, t + Threads, ... (row-major), the order load_tile
/// writes LDS in. Block > 1 (a tile that commit_transposed writes): thread t
/// holds blocks t, t + Threads, ... of Block consecutive rows of one run
/// each, v[j * Block + q] the run of row q of its j-th block.
/// Realign (Block 1): the runs are read with Global::load_unaligned (rows of
/// any alignment; tilec-allocate-lds's `load_realign`) and held as their
/// aligned pieces until commit.
template <bool Realign, int Bytes> struct staged_run { using type = raw_t<Bytes>; };
template <int Bytes> struct staged_run<true, Bytes> { using type = Unaligned<Bytes>; };
template <class T, int Rows, int Cols, int Threads, int Vec = 1, int Block = 1, bool Realign = false> struct Staging {
  static_assert(Cols % Vec == 0 && Rows % Block == 0, "Staging: rows split into whole runs and blocks");
  static_assert(!Realign || Block == 1, "Staging: realigned runs are committed untransposed");
  static constexpr int rows = Rows, cols = Cols, runs = Rows * Cols / Vec, blocks = runs / Block,
                       perThread = (blocks + Threads - 1) / Threads * Block;
  typename staged_run<Realign, Vec * (int)sizeof(T)>::type v[perThread];
};

/// Row and column of the first element of block b (Block rows of one run of
/// Vec columns) of an R x C tile. Block 1: runs row-major, consecutive
/// threads along a row. Block > 1 (a tile written transposed): blocks run
/// down the rows first, so that consecutive threads write consecutive runs
/// of one row of the transposed tile (and read 64 bytes of each source row).
template <int R, int C, int Vec, int Block> TL_INLINE int block_row(int b) {
  return Block == 1 ? b * Vec / C : b % (R / Block) * Block;
}
template <int R, int C, int Vec, int Block> TL_INLINE int block_col(int b) {
  return Block == 1 ? b * Vec % C : b / (R / Block) * Vec;
}

/// Issues the loads of the Rows x Cols window of `g` at (r0, c0) into registers.
/// Realigned runs of a window inside the tensor and the buffer (all but the
/// edge tiles) skip every bounds test. Pinned: nothing is scheduled across
/// the end of the call (sched_barrier).
template <bool Pinned = false, bool Inside = false, class T, int R, int C, int Threads, int V, int B, bool RA, class G>
TL_INLINE void load_staging(Staging<T, R, C, Threads, V, B, RA> &s, const G &g, int r0, int c0) {
  if constexpr (Inside && !RA) {
    // The window lies inside the tensor (staging_inside holds): no bounds
    // tests, and the window's offset is the loads' wave-uniform SGPR offset,
    // so each lane's VGPR offset is the same for every window (computed once,
    // outside a loop) instead of a compare, a select and an add per load.
    // Every access lies wholly inside the buffer, where the range check
    // (which on gfx9 does not see the SGPR offset) passes either way.
    const int tile = (g.origin + r0 * g.pitch + c0) * (int)sizeof(T);
    TL_UNROLL
    for (int j = 0; j < s.perThread / B; ++j) {
      const int b = thread_id() + j * Threads;
      if (s.blocks % Threads == 0 || b < s.blocks)
        TL_UNROLL
        for (int q = 0; q < B; ++q)
          s.v[j * B + q] = g.template load_at<V * (int)sizeof(T)>(
              ((block_row<R, C, V, B>(b) + q) * g.pitch + block_col<R, C, V, B>(b)) * (int)sizeof(T), tile);
    }
  } else if constexpr (RA) {
    const bool inside = g.template inside<R, C>(r0, c0);
    TL_UNROLL
    for (int j = 0; j < s.perThread; ++j) {
      const int b = thread_id() + j * Threads;
      if (s.blocks % Threads == 0 || b < s.blocks) {
        const int r = r0 + block_row<R, C, V, 1>(b), c = c0 + block_col<R, C, V, 1>(b);
        s.v[j] = inside ? g.template load_unaligned_inside<V>(r, c) : g.template load_unaligned<V>(r, c);
      }
    }
  } else {
    TL_UNROLL
    for (int j = 0; j < s.perThread / B; ++j) {
      const int b = thread_id() + j * Threads;
      if (s.blocks % Threads == 0 || b < s.blocks)  // no branch when the blocks divide evenly
        TL_UNROLL
        for (int q = 0; q < B; ++q)
          s.v[j * B + q] = g.template load_at<V * (int)sizeof(T)>(
              g.store_offset(r0 + block_row<R, C, V, B>(b) + q, c0 + block_col<R, C, V, B>(b)));
    }
  }
  // Pinned: the loads stay where the kernel issues them, ahead of the work
  // that hides their latency (clang's scheduler otherwise sinks them past a
  // pipelined loop's matrix instructions, to just before the wait for them).
  if constexpr (Pinned)
    hw::sched_barrier<0>();
}

/// Whether the window load_staging(s, g, r0, c0) reads lies inside g: its
/// loads need no bounds tests (load_staging's Inside).
template <class T, int R, int C, int Threads, int V, int B, bool RA, class G>
TL_INLINE bool staging_inside(const Staging<T, R, C, Threads, V, B, RA> &, const G &g, int r0, int c0) {
  return (r0 >= 0) & (c0 >= 0) & (r0 <= g.rows - R) & (c0 <= g.cols - C);
}

/// Writes a staged tile into LDS.
template <class L, class T, int R, int C, int Threads, int V, int B, bool RA>
TL_INLINE void commit(const L &dst, const Staging<T, R, C, Threads, V, B, RA> &s) {
  TL_UNROLL
  for (int j = 0; j < s.perThread / B; ++j) {
    const int b = thread_id() + j * Threads;
    if (s.blocks % Threads == 0 || b < s.blocks)
      TL_UNROLL
      for (int q = 0; q < B; ++q) {
        if constexpr (RA)
          dst.template store_run<V>(block_row<R, C, V, B>(b) + q, block_col<R, C, V, B>(b), realign(s.v[j * B + q]));
        else
          dst.template store_run<V>(block_row<R, C, V, B>(b) + q, block_col<R, C, V, B>(b), s.v[j * B + q]);
      }
  }
}

/// How many consecutive rows of `L` a transposed write rotates over: the
/// largest power of two P <= Vec whose P rows span at most 128 bytes (one
/// pass over 32 4-byte banks). Writes of one instruction all go to rows
/// c + e, c a multiple of Vec, which share their banks when P > 1; block
/// column run j writes row c + (e ^ (j % P)) instead, spreading neighbouring
/// runs over the P bank offsets (tilec-allocate-lds models the same).
template <class L, int Vec> constexpr int transpose_rotation() {
  int p = 1;
  while (p * 2 <= Vec && p * 2 * L::row_stride * (int)sizeof(typename L::elem) <= 128)
    p *= 2;
  return p;
}

/// Writes the B x V block `rows` (B runs of V elements, one per row) of a
/// tile transposed into `dst`: element e of every run, B elements, as one run
/// of row c + e from column r on (r, c: the block's first element in the
/// source tile; run: its column run, c / V), in the rotated order of
/// transpose_rotation.
template <class L, int B, class X>
TL_INLINE void store_block_transposed(const L &dst, int r, int c, int run, const X (&rows)[B]) {
  using T = typename L::elem;
  constexpr int eb = (int)sizeof(T), V = (int)sizeof(X) / eb, P = transpose_rotation<L, V>();
  const int flip = run % P;
#if TL_HW_HAS_PERM
  if constexpr (eb == 2 && B == 2 && P <= 2) {
    // Two rows of 16-bit elements, rotated over at most 2 rows: element
    // e ^ flip lies in the same words as element e, so one byte permute with
    // a per-lane selector builds each rotated column (no select per column).
    const unsigned even = 0x05040100u, odd = 0x07060302u;  // {lo(w0), lo(w1)}, {hi(w0), hi(w1)}
    const unsigned same = flip ? odd : even, other = flip ? even : odd;
    TL_UNROLL
    for (int e = 0; e < V; ++e) {
      const unsigned w0 = raw_slice<unsigned>(rows[0], e / 2 * 4), w1 = raw_slice<unsigned>(rows[1], e / 2 * 4);
      dst.template store_run<B>(c + (e ^ flip), r, hw::perm_bytes(w1, w0, e % 2 ? other : same));
    }
    return;
  }
#endif
  raw_t<B * eb> cols[V];
  TL_UNROLL
  for (int e = 0; e < V; ++e) {
    raw_t<eb> col[B];
    TL_UNROLL
    for (int q = 0; q < B; ++q)
      col[q] = raw_slice<raw_t<eb>>(rows[q], e * eb);
    __builtin_memcpy(&cols[e], col, sizeof col);
  }
  TL_UNROLL
  for (int e = 0; e < V; ++e) {
    raw_t<B * eb> v = cols[e];
    TL_UNROLL
    for (int f = 1; f < P; ++f)  // a select per rotation, no indexing of registers
      if (flip == f)
        v = cols[e ^ f];
    dst.template store_run<B>(c + (e ^ flip), r, v);
  }
}

/// Writes a staged R x C tile into the C x R LDS tile `dst` transposed,
/// L::write_vec elements (the staging's Block) per LDS write.
template <class L, class T, int R, int C, int Threads, int V, int B>
TL_INLINE void commit_transposed(const L &dst, const Staging<T, R, C, Threads, V, B> &s) {
  static_assert(L::rows == C && L::cols == R && L::write_vec == B, "commit_transposed: shapes or block differ");
  TL_UNROLL
  for (int j = 0; j < s.perThread / B; ++j) {
    const int b = thread_id() + j * Threads;
    if (s.blocks % Threads == 0 || b < s.blocks) {
      raw_t<V * (int)sizeof(T)> rows[B];
      TL_UNROLL
      for (int q = 0; q < B; ++q)
        rows[q] = s.v[j * B + q];
      store_block_transposed(dst, block_row<R, C, V, B>(b), block_col<R, C, V, B>(b), block_col<R, C, V, B>(b) / V,
                             rows);
    }
  }
}

/// Copies the Rows x Cols window of `g` at (r0, c0) into `t`; the workgroup's
/// `Threads` threads share the work, consecutive threads on consecutive runs
/// of Vec columns (one global load each; Realign: two, Global::load_unaligned).
template <int Threads, int Vec = 1, bool Realign = false, class G, class L>
TL_INLINE void load_tile(const L &t, const G &g, int r0, int c0) {
  static_assert(L::cols % Vec == 0, "load_tile: rows split into whole runs");
  constexpr int runs = L::rows * L::cols / Vec;
  if constexpr (Vec == 1) {
    // Element by element, as a loop from the thread's first element: clang
    // keeps it a loop, where unrolling it raised gfx1151 attention's VGPRs
    // (196 to 214).
    for (int i = thread_id(); i < runs; i += Threads)
      t.store(i / L::cols, i % L::cols, g.load(r0 + i / L::cols, c0 + i % L::cols));
    return;
  }
  TL_UNROLL
  for (int j = 0; j < (runs + Threads - 1) / Threads; ++j) {
    const int i = (thread_id() + j * Threads) * Vec;
    if (runs % Threads == 0 || i < L::rows * L::cols) {
      const int r = r0 + i / L::cols, c = c0 + i % L::cols;
      if constexpr (Realign)
        t.template store_run<Vec>(i / L::cols, i % L::cols, realign(g.template load_unaligned<Vec>(r, c)));
      else
        t.template store_run<Vec>(i / L::cols, i % L::cols, g.template load_raw<Vec>(r, c));
    }
  }
}

/// Copies the window of `g` at (r0, c0) transposed into `t`: t[i][j] =
/// g[r0 + j][c0 + i]. Each thread loads blocks of L::write_vec rows of the
/// window by Vec columns (one global load per row) and writes each of the
/// block's Vec columns as one LDS write of L::write_vec elements along a row
/// of `t`.
template <int Threads, int Vec = 1, class G, class L>
TL_INLINE void load_tile_transposed(const L &t, const G &g, int r0, int c0) {
  constexpr int R = L::cols, C = L::rows, B = L::write_vec, blocks = R * C / (Vec * B);
  static_assert(C % Vec == 0 && R % B == 0, "load_tile_transposed: the window splits into whole blocks");
  TL_UNROLL
  for (int j = 0; j < (blocks + Threads - 1) / Threads; ++j) {
    const int b = thread_id() + j * Threads;
    if (blocks % Threads == 0 || b < blocks) {
      const int r = block_row<R, C, Vec, B>(b), c = block_col<R, C, Vec, B>(b);
      raw_t<Vec * (int)sizeof(typename L::elem)> rows[B];
      TL_UNROLL
      for (int q = 0; q < B; ++q)
        rows[q] = g.template load_raw<Vec>(r0 + r + q, c0 + c);
      store_block_transposed(t, r, c, c / Vec, rows);
    }
  }
}

/// load_tile as asynchronous copies (targets with TL_HW_HAS_ASYNC_COPY): each
/// run of Vec elements moves from global memory to LDS without passing
/// through registers, in pieces of at most WriteVec elements (4, 8 or 16
/// bytes; outside the tensor: zeros), as one copy group. The data may be read
/// only after async_wait has seen the group complete and a barrier followed.
/// Elsewhere, for runs of under 4 bytes and for realigned runs, it is
/// load_tile (complete on return), still followed by an (empty) group so that
/// every caller counts groups alike.
template <int Threads, int Vec = 1, bool Realign = false, class G, class L>
TL_INLINE void load_tile_async(const L &t, const G &g, int r0, int c0) {
  using T = typename L::elem;
  constexpr int W = L::write_vec < Vec ? L::write_vec : Vec, bytes = W * (int)sizeof(T);
#ifdef TL_HW_HAS_ASYNC_COPY
  if constexpr (!Realign && (bytes == 4 || bytes == 8 || bytes == 16)) {
    constexpr int runs = L::rows * L::cols / Vec;
    TL_UNROLL
    for (int j = 0; j < (runs + Threads - 1) / Threads; ++j) {
      const int i = (thread_id() + j * Threads) * Vec;
      if (runs % Threads == 0 || i < L::rows * L::cols) {
        const int r = i / L::cols, c = i % L::cols;
        TL_UNROLL
        for (int q = 0; q < Vec / W; ++q)
          hw::copy_async<bytes>(t.base + L::index(r, c + q * W), g.rsrc, g.offset(r0 + r, c0 + c + q * W));
      }
    }
    hw::async_commit();
    return;
  }
#endif
  load_tile<Threads, Vec, Realign>(t, g, r0, c0);
#ifdef TL_HW_HAS_ASYNC_COPY
  hw::async_commit();
#endif
}
/// Waits until at most N of this thread's copy groups are in flight.
template <int N> TL_INLINE void async_wait() {
#ifdef TL_HW_HAS_ASYNC_COPY
  hw::async_wait<N>();
#endif
}

/// Rows of `g` chosen by ids[i0 + r] (negative or out-of-range ids read 0),
/// in runs of Vec columns handed out to threads as load_tile hands them out
/// (tilec-allocate-lds sizes Vec as for a load of the same rows: the
/// tensor's divisibility and the column origin keep a run inside its row).
/// Each run looks its row's id up once.
template <int Threads, int Vec = 1, class G, class I, class L>
TL_INLINE void gather_tile(const L &t, const G &g, const I &ids, int i0, int c0) {
  static_assert(L::cols % Vec == 0, "gather_tile: rows split into whole runs");
  if constexpr (Vec == 1) {
    for (int i = thread_id(); i < L::rows * L::cols; i += Threads) {
      int r = i / L::cols, c = i % L::cols;
      int row = i0 + r < ids.rows ? ids.load(i0 + r, 0) : -1;
      t.store(r, c, g.load(row, c0 + c));
    }
    return;
  }
  constexpr int runs = L::rows * L::cols / Vec;
  TL_UNROLL
  for (int j = 0; j < (runs + Threads - 1) / Threads; ++j) {
    const int i = (thread_id() + j * Threads) * Vec;
    if (runs % Threads == 0 || i < L::rows * L::cols) {
      const int r = i / L::cols, c = i % L::cols;
      const int row = i0 + r < ids.rows ? ids.load(i0 + r, 0) : -1;
      t.template store_run<Vec>(r, c, g.template load_raw<Vec>(row, c0 + c));
    }
  }
}

/// gather_tile as asynchronous copies, as load_tile_async is load_tile: one
/// copy group; runs of under 4 bytes (and targets without asynchronous
/// copies) gather synchronously, still followed by an (empty) group.
template <int Threads, int Vec = 1, class G, class I, class L>
TL_INLINE void gather_tile_async(const L &t, const G &g, const I &ids, int i0, int c0) {
  using T = typename L::elem;
  constexpr int W = L::write_vec < Vec ? L::write_vec : Vec, bytes = W * (int)sizeof(T);
#ifdef TL_HW_HAS_ASYNC_COPY
  if constexpr (bytes == 4 || bytes == 8 || bytes == 16) {
    constexpr int runs = L::rows * L::cols / Vec;
    TL_UNROLL
    for (int j = 0; j < (runs + Threads - 1) / Threads; ++j) {
      const int i = (thread_id() + j * Threads) * Vec;
      if (runs % Threads == 0 || i < L::rows * L::cols) {
        const int r = i / L::cols, c = i % L::cols;
        const int row = i0 + r < ids.rows ? ids.load(i0 + r, 0) : -1;
        TL_UNROLL
        for (int q = 0; q < Vec / W; ++q)
          hw::copy_async<bytes>(t.base + L::index(r, c + q * W), g.rsrc, g.offset(row, c0 + c + q * W));
      }
    }
    hw::async_commit();
    return;
  }
#endif
  gather_tile<Threads, Vec>(t, g, ids, i0, c0);
#ifdef TL_HW_HAS_ASYNC_COPY
  hw::async_commit();
#endif
}

template <int Threads, class L, class T> TL_INLINE void fill_lds(const L &t, T v) {
  for (int i = thread_id(); i < L::rows * L::cols; i += Threads)
    t.store(i / L::cols, i % L::cols, v);
}

// --- matrix instructions as data ---------------------------------------------------
// Each atom: M x N x K, lanes, the A/B/D register layouts (lane, element) -> (row, col).

/// v_mfma_f32_32x32x8 {bf16,f16}: A elem r of lane l = A[l%32][4*(l/32)+r];
/// D elem r = D[8*(r/4) + 4*(l/32) + r%4][l%32] (docs/hardware.md section 1).
template <class In> struct Mfma32x32x8 {
  static constexpr int M = 32, N = 32, K = 8, Lanes = 64, KPerLane = 4, AccPerLane = 16;
  using bits_t = short;   // raw bits of one operand element
  using ab_t = short4_t;  // one lane's A (or B) operand: KPerLane elements
  using acc_t = float16_t;
  TL_INLINE static int a_row(int l) { return l % 32; }
  TL_INLINE static int a_k(int l, int r) { return 4 * (l / 32) + r; }
  TL_INLINE static int d_row(int l, int r) { return 8 * (r / 4) + 4 * (l / 32) + r % 4; }
  TL_INLINE static int d_col(int l, int) { return l % 32; }
  TL_INLINE static acc_t mma(short4_t a, short4_t b, acc_t c);
};
#ifdef TL_HW_HAS_MFMA
template <> TL_INLINE float16_t Mfma32x32x8<bf16>::mma(short4_t a, short4_t b, float16_t c) {
  return hw::mfma_f32_32x32x8bf16_1k(a, b, c);
}
template <> TL_INLINE float16_t Mfma32x32x8<f16>::mma(short4_t a, short4_t b, float16_t c) {
  return hw::mfma_f32_32x32x8f16(__builtin_bit_cast(half4_t, a), __builtin_bit_cast(half4_t, b), c);
}
#endif

/// v_mfma_f32_16x16x16 {bf16,f16}: A = A[l%16][4*(l/16)+r]; D elem r = D[4*(l/16)+r][l%16].
template <class In> struct Mfma16x16x16 {
  static constexpr int M = 16, N = 16, K = 16, Lanes = 64, KPerLane = 4, AccPerLane = 4;
  using bits_t = short;
  using ab_t = short4_t;
  using acc_t = float4_t;
  TL_INLINE static int a_row(int l) { return l % 16; }
  TL_INLINE static int a_k(int l, int r) { return 4 * (l / 16) + r; }
  TL_INLINE static int d_row(int l, int r) { return 4 * (l / 16) + r; }
  TL_INLINE static int d_col(int l, int) { return l % 16; }
  TL_INLINE static acc_t mma(short4_t a, short4_t b, acc_t c);
};
#ifdef TL_HW_HAS_MFMA
template <> TL_INLINE float4_t Mfma16x16x16<bf16>::mma(short4_t a, short4_t b, float4_t c) {
  return hw::mfma_f32_16x16x16bf16_1k(a, b, c);
}
template <> TL_INLINE float4_t Mfma16x16x16<f16>::mma(short4_t a, short4_t b, float4_t c) {
  return hw::mfma_f32_16x16x16f16(__builtin_bit_cast(half4_t, a), __builtin_bit_cast(half4_t, b), c);
}
#endif

/// v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8} (gfx942; In = fp8e4m3fnuz or
/// fp8e5m2fnuz): A byte j of lane l = A[l%32][8*(l/32)+j]; D as 32x32x8
/// (section 1). A lane's 8 operand bytes travel as one `long`.
template <class In> struct Mfma32x32x16 {
  static constexpr int M = 32, N = 32, K = 16, Lanes = 64, KPerLane = 8, AccPerLane = 16;
  using bits_t = char;
  using ab_t = byte8_t;   // (T64,V8) -> (M32,K16)
  using acc_t = float16_t;
  TL_INLINE static int a_row(int l) { return l % 32; }
  TL_INLINE static int a_k(int l, int j) { return 8 * (l / 32) + j; }
  TL_INLINE static int d_row(int l, int r) { return 8 * (r / 4) + 4 * (l / 32) + r % 4; }
  TL_INLINE static int d_col(int l, int) { return l % 32; }
  TL_INLINE static acc_t mma(byte8_t a, byte8_t b, acc_t c);
};

/// v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} (gfx942): A byte j of lane l =
/// A[l%16][8*(l/16)+j]; D as 16x16x16.
template <class In> struct Mfma16x16x32 {
  static constexpr int M = 16, N = 16, K = 32, Lanes = 64, KPerLane = 8, AccPerLane = 4;
  using bits_t = char;
  using ab_t = byte8_t;   // (T64,V8) -> (M16,K32)
  using acc_t = float4_t;
  TL_INLINE static int a_row(int l) { return l % 16; }
  TL_INLINE static int a_k(int l, int j) { return 8 * (l / 16) + j; }
  TL_INLINE static int d_row(int l, int r) { return 4 * (l / 16) + r; }
  TL_INLINE static int d_col(int l, int) { return l % 16; }
  TL_INLINE static acc_t mma(byte8_t a, byte8_t b, acc_t c);
};
#ifdef TL_HW_HAS_FP8_MFMA
template <> TL_INLINE float16_t Mfma32x32x16<fp8e4m3fnuz>::mma(byte8_t a, byte8_t b, float16_t c) {
  return hw::mfma_f32_32x32x16_fp8_fp8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b), c);
}
template <> TL_INLINE float4_t Mfma16x16x32<fp8e4m3fnuz>::mma(byte8_t a, byte8_t b, float4_t c) {
  return hw::mfma_f32_16x16x32_fp8_fp8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b), c);
}
#endif
#ifdef TL_HW_HAS_BF8_MFMA
template <> TL_INLINE float16_t Mfma32x32x16<fp8e5m2fnuz>::mma(byte8_t a, byte8_t b, float16_t c) {
  return hw::mfma_f32_32x32x16_bf8_bf8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b), c);
}
template <> TL_INLINE float4_t Mfma16x16x32<fp8e5m2fnuz>::mma(byte8_t a, byte8_t b, float4_t c) {
  return hw::mfma_f32_16x16x32_bf8_bf8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b), c);
}
#endif

/// v_wmma_f32_16x16x16 {bf16,f16}, wave32 (section 2): lane l holds a whole row
/// of A, elem e = A[l%16][e], so lanes l and l+16 hold identical operands as the
/// instruction requires; D elem r = D[2r + l/16][l%16] (rows interleaved over
/// the lane halves).
template <class In> struct Wmma16x16x16 {
  static constexpr int M = 16, N = 16, K = 16, Lanes = 32, KPerLane = 16, AccPerLane = 8;
  using bits_t = short;
  using ab_t = short16_t;  // (T32,V16) -> (M16,K16)
  using acc_t = float8_t;  // (T32,V8) -> (M16,N16)
  TL_INLINE static int a_row(int l) { return l % 16; }
  TL_INLINE static int a_k(int, int e) { return e; }
  TL_INLINE static int d_row(int l, int r) { return 2 * r + l / 16; }
  TL_INLINE static int d_col(int l, int) { return l % 16; }
  TL_INLINE static acc_t mma(short16_t a, short16_t b, acc_t c);
};
#ifdef TL_HW_HAS_WMMA
template <> TL_INLINE float8_t Wmma16x16x16<bf16>::mma(short16_t a, short16_t b, float8_t c) {
  return hw::wmma_f32_16x16x16_bf16_w32(a, b, c);
}
template <> TL_INLINE float8_t Wmma16x16x16<f16>::mma(short16_t a, short16_t b, float8_t c) {
  return hw::wmma_f32_16x16x16_f16_w32(__builtin_bit_cast(half16_t, a), __builtin_bit_cast(half16_t, b), c);
}
#endif

/// True for atoms whose operands are gathered by read_a / read_b (mma.sync),
/// false for those read as one run of k per lane (MFMA, WMMA).
template <class Atom> inline constexpr bool gathers_operands = false;

#ifdef TL_HW_HAS_MMA_SYNC
/// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16} (NVIDIA, warp of 32;
/// PTX ISA fragments, g = l / 4, t = l % 4): A element r of lane l =
/// A[g + 8 * ((r / 2) % 2)][2t + r % 2 + 8 * (r / 4)], B element r =
/// B[2t + r % 2 + 8 * (r / 2)][g], D element r = D[g + 8 * (r / 2)][2t + r % 2].
/// Operand registers hold pairs of elements consecutive in k, so a lane's
/// operand is not one run of k: read_a / read_b gather it.
template <class In> struct Mma16x8x16 {
  static constexpr int M = 16, N = 8, K = 16, Lanes = 32, KPerLane = 8, AccPerLane = 4;
  using bits_t = short;
  using a_t = uint4_t;     // (T32,V8) -> (M16,K16)
  using b_t = uint2_t;     // (T32,V4) -> (K16,N8)
  using acc_t = float4_t;  // (T32,V4) -> (M16,N8)
  TL_INLINE static int d_row(int l, int r) { return l / 4 + 8 * (r / 2); }
  TL_INLINE static int d_col(int l, int r) { return 2 * (l % 4) + r % 2; }
  /// The two elements (mn, k), (mn, k + 1) of `t` as one register, k along a
  /// row (KAlongCols) or down a column.
  template <bool KAlongCols, class L> TL_INLINE static unsigned pair(const L &t, int mn, int k) {
    if constexpr (KAlongCols && L::read_vec >= 2)
      return t.template load_raw<2>(mn, k);
    const unsigned lo = KAlongCols ? t.template load_raw<1>(mn, k) : t.template load_raw<1>(k, mn);
    const unsigned hi = KAlongCols ? t.template load_raw<1>(mn, k + 1) : t.template load_raw<1>(k + 1, mn);
    return lo | hi << 16;
  }
  /// Whether `t`'s layout keeps runs of 8 elements (16 bytes) of a row
  /// contiguous and aligned, as ldmatrix reads them.
  template <class L> static constexpr bool ldmatrix_ok = L::read_vec >= 8 && sizeof(typename L::elem) == 2;
  /// Lane l's A operand of the 16 x 16 block at rows m0.., columns k0.. of `t`.
  /// With ldmatrix (x4): lanes 8i.. address rows of matrix i = (rows +8 if i
  /// is odd, columns +8 if i >= 2), which are a0..a3.
  template <class L> TL_INLINE static a_t read_a(const L &t, int m0, int k0, int l) {
    if constexpr (ldmatrix_ok<L>)
      return hw::ldmatrix_x4<false>(t.base + L::index(m0 + l % 8 + 8 * ((l / 8) % 2), k0 + 8 * (l / 16)));
    const int g = l / 4, k = k0 + 2 * (l % 4);
    return a_t{pair<true>(t, m0 + g, k), pair<true>(t, m0 + g + 8, k), pair<true>(t, m0 + g, k + 8),
               pair<true>(t, m0 + g + 8, k + 8)};
  }
  /// Lane l's B operand of the 16 x 8 block at k0.., columns n0.. (KAlongCols:
  /// `t` holds B transposed, N x K).
  template <bool KAlongCols, class L> TL_INLINE static b_t read_b(const L &t, int n0, int k0, int l) {
    const int n = n0 + l / 4, k = k0 + 2 * (l % 4);
    return b_t{pair<KAlongCols>(t, n, k), pair<KAlongCols>(t, n, k + 8)};
  }
  /// Lane l's B operands of the two 16 x 8 blocks at k0.., columns n0.. and
  /// n0 + 8.. (registers 0-1 and 2-3), with one ldmatrix.x4: `t` N x K
  /// (KAlongCols) is read as is, K x N transposed (.trans).
  template <bool KAlongCols, class L> TL_INLINE static uint4_t read_b2(const L &t, int n0, int k0, int l) {
    if constexpr (KAlongCols)
      return hw::ldmatrix_x4<false>(t.base + L::index(n0 + l % 8 + 8 * (l / 16), k0 + 8 * ((l / 8) % 2)));
    else
      return hw::ldmatrix_x4<true>(t.base + L::index(k0 + l % 8 + 8 * ((l / 8) % 2), n0 + 8 * (l / 16)));
  }
  TL_INLINE static acc_t mma(a_t a, b_t b, acc_t c);
};
template <> TL_INLINE float4_t Mma16x8x16<bf16>::mma(uint4_t a, uint2_t b, float4_t c) {
  return hw::mma_m16n8k16_bf16(a, b, c);
}
template <> TL_INLINE float4_t Mma16x8x16<f16>::mma(uint4_t a, uint2_t b, float4_t c) {
  return hw::mma_m16n8k16_f16(a, b, c);
}
template <class In> inline constexpr bool gathers_operands<Mma16x8x16<In>> = true;

// --- fp8 warp matrix instructions (NVIDIA mma.sync m16n8k32, OCP e4m3 / e5m2) -----------
/// mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2} (PTX ISA fragments, g =
/// l / 4, t = l % 4): A element r of lane l = A[g + 8 * ((r / 4) % 2)][4t +
/// r % 4 + 16 * (r / 8)], B element r = B[4t + r % 4 + 16 * (r / 4)][g], D as
/// m16n8k16. Byte for byte the m16n8k16 layout (a register holds 4 bytes of
/// one row), so ldmatrix (non-transposing: it moves 16-bit pairs) reads A and
/// an N x K B as for 16-bit operands; a K x N B is gathered byte by byte.
template <class In> struct Mma16x8x32 {
  static constexpr int M = 16, N = 8, K = 32, Lanes = 32, KPerLane = 16, AccPerLane = 4;
  using bits_t = char;
  using a_t = uint4_t;     // (T32,V16) -> (M16,K32)
  using b_t = uint2_t;     // (T32,V8) -> (K32,N8)
  using acc_t = float4_t;  // (T32,V4) -> (M16,N8)
  TL_INLINE static int d_row(int l, int r) { return l / 4 + 8 * (r / 2); }
  TL_INLINE static int d_col(int l, int r) { return 2 * (l % 4) + r % 2; }
  /// The four elements (mn, k..k+3) of `t` as one register, k along a row
  /// (KAlongCols) or down a column.
  template <bool KAlongCols, class L> TL_INLINE static unsigned quad(const L &t, int mn, int k) {
    if constexpr (KAlongCols && L::read_vec >= 4)
      return t.template load_raw<4>(mn, k);
    unsigned w = 0;
    TL_UNROLL
    for (int q = 0; q < 4; ++q)
      w |= (unsigned)(KAlongCols ? t.template load_raw<1>(mn, k + q) : t.template load_raw<1>(k + q, mn)) << 8 * q;
    return w;
  }
  /// Whether `t`'s layout keeps runs of 16 elements (16 bytes) of a row
  /// contiguous and aligned, as ldmatrix reads them.
  template <class L> static constexpr bool ldmatrix_ok = L::read_vec >= 16 && sizeof(typename L::elem) == 1;
  /// Lane l's A operand of the 16 x 32 block at rows m0.., columns k0.. of `t`;
  /// with ldmatrix (x4), lanes 8i.. address rows of matrix i (rows +8 if i is
  /// odd, columns +16 if i >= 2).
  template <class L> TL_INLINE static a_t read_a(const L &t, int m0, int k0, int l) {
    if constexpr (ldmatrix_ok<L>)
      return hw::ldmatrix_x4<false>(t.base + L::index(m0 + l % 8 + 8 * ((l / 8) % 2), k0 + 16 * (l / 16)));
    const int g = l / 4, k = k0 + 4 * (l % 4);
    return a_t{quad<true>(t, m0 + g, k), quad<true>(t, m0 + g + 8, k), quad<true>(t, m0 + g, k + 16),
               quad<true>(t, m0 + g + 8, k + 16)};
  }
  /// Lane l's B operand of the 32 x 8 block at k0.., columns n0.. (KAlongCols:
  /// `t` holds B transposed, N x K).
  template <bool KAlongCols, class L> TL_INLINE static b_t read_b(const L &t, int n0, int k0, int l) {
    const int n = n0 + l / 4, k = k0 + 4 * (l % 4);
    return b_t{quad<KAlongCols>(t, n, k), quad<KAlongCols>(t, n, k + 16)};
  }
  /// Lane l's B operands of the two 32 x 8 blocks at k0.., columns n0.. and
  /// n0 + 8.. (registers 0-1 and 2-3): one ldmatrix.x4 for an N x K `t`; a
  /// K x N one has no 8-bit transposing ldmatrix and is gathered.
  template <bool KAlongCols, class L> TL_INLINE static uint4_t read_b2(const L &t, int n0, int k0, int l) {
    if constexpr (KAlongCols) {
      return hw::ldmatrix_x4<false>(t.base + L::index(n0 + l % 8 + 8 * (l / 16), k0 + 16 * ((l / 8) % 2)));
    } else {
      const b_t lo = read_b<false>(t, n0, k0, l), hi = read_b<false>(t, n0 + 8, k0, l);
      return uint4_t{lo[0], lo[1], hi[0], hi[1]};
    }
  }
  TL_INLINE static acc_t mma(a_t a, b_t b, acc_t c);
};
template <> TL_INLINE float4_t Mma16x8x32<fp8e4m3>::mma(uint4_t a, uint2_t b, float4_t c) {
  return hw::mma_m16n8k32_e4m3(a, b, c);
}
template <> TL_INLINE float4_t Mma16x8x32<fp8e5m2>::mma(uint4_t a, uint2_t b, float4_t c) {
  return hw::mma_m16n8k32_e5m2(a, b, c);
}
template <class In> inline constexpr bool gathers_operands<Mma16x8x32<In>> = true;
#endif

/// True for warpgroup atoms (wgmma): their operands stay in LDS.
template <class Atom> inline constexpr bool is_warpgroup_atom = false;

#ifdef TL_HW_HAS_WGMMA
// --- warpgroup matrix instructions (wgmma, sm_90a) ----------------------------------------
/// A shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"):
/// bits 0-13 the start address >> 4, 16-29 the leading dimension byte offset
/// (LBO) >> 4, 32-45 the stride dimension byte offset (SBO) >> 4, 49-51 the
/// base offset (0: the swizzle pattern repeats on 1024-byte boundaries of the
/// shared window), 62-63 the swizzle mode (0 none, 1 128-byte, 2 64-byte, 3
/// 32-byte).
TL_INLINE unsigned long long matrix_descriptor(unsigned address, unsigned lbo, unsigned sbo, unsigned mode) {
  return (unsigned long long)((address & 0x3FFFFu) >> 4) | (unsigned long long)((lbo >> 4) & 0x3FFFu) << 16 |
         (unsigned long long)((sbo >> 4) & 0x3FFFu) << 32 | (unsigned long long)mode << 62;
}

/// How wgmma reads the LDS tile L: the canonical swizzled layouts of the PTX
/// ISA ("Shared Memory Matrix Layout"), in which rows of S = 128, 64 or 32
/// bytes hold 16-byte chunks whose index is XORed with address bits 7.. (the
/// row, or half / quarter of it), repeating every 8 rows = 1024 bytes from a
/// 1024-byte boundary. Lds<T, R, C, S / sizeof(T), 16 / sizeof(T), 128 / S,
/// S / 16> is that layout (index() XORs the chunk with (r / PerPhase) %
/// MaxPhase, the same bits). K-major: k runs along a row of S bytes, 8-row
/// groups SBO = 8 S apart (LBO unused). MN-major (B as K x N): n runs along a
/// row, column blocks of S bytes (ColBlock) LBO = Rows * S apart, 8-row groups
/// of k SBO = 8 S apart.
template <class L> struct wgmma_layout {
  static constexpr int eb = (int)sizeof(typename L::elem), row_bytes = L::row_stride * eb;
  static constexpr unsigned mode = row_bytes == 128 ? 1 : row_bytes == 64 ? 2 : row_bytes == 32 ? 3 : 0;
  static constexpr bool swizzled = mode != 0 && L::vec * eb == 16 && L::max_phase * 16 == row_bytes &&
                                   L::per_phase * row_bytes == 128;
  /// k along a row, the whole tile's k in one swizzle row.
  static constexpr bool k_major = swizzled && L::col_block == 0 && L::cols == L::row_stride;
  /// n along a row, in column blocks of one swizzle row.
  static constexpr bool mn_major = swizzled && (L::col_block == L::row_stride || (L::col_block == 0 && L::cols == L::row_stride));
  /// The descriptor of the 8k x 16 operand at rows mn0.. (a multiple of 8), columns k0.. of a K-major tile.
  TL_INLINE static unsigned long long k_major_desc(const L &t, int mn0, int k0) {
    return matrix_descriptor(hw::smem_address(t.base) + mn0 * row_bytes + k0 * eb, 16, 8 * row_bytes, mode);
  }
  /// The descriptor of the 16 x 8n operand at rows k0.. (a multiple of 8), columns n0.. (a multiple of the block) of an MN-major tile.
  TL_INLINE static unsigned long long mn_major_desc(const L &t, int k0, int n0) {
    return matrix_descriptor(hw::smem_address(t.base) + n0 / L::row_stride * L::rows * row_bytes + k0 * row_bytes,
                             L::rows * row_bytes, 8 * row_bytes, mode);
  }
};

/// wgmma.mma_async m64nNk16.f32.{bf16,f16} (N = 64, 128, 256), a warpgroup of
/// 4 warps (lane l = 0..127): accumulator element r of lane l is D[16(l/32) +
/// (l%32)/4 + 8((r/2)%2)][8(r/4) + 2(l%4) + r%2] (PTX ISA, "WGMMA .m64nNk16
/// register fragment layout for accumulator matrix D"). A and B are read from
/// LDS (gemm below); no lane holds operand elements.
template <class In, int N_> struct Wgmma64xNx16 {
  static constexpr int M = 64, N = N_, K = 16, Lanes = 128, KPerLane = 0, AccPerLane = N_ / 2;
  using acc_t = hw::wgmma_frag<N_ / 2>;
  static_assert(__is_same(In, bf16) || __is_same(In, f16), "wgmma: bf16 or f16 operands");
  static constexpr hw::wgmma_type type = __is_same(In, f16) ? hw::wgmma_type::f16 : hw::wgmma_type::bf16;
  TL_INLINE static int d_row(int l, int r) { return 16 * (l / 32) + l % 32 / 4 + 8 * (r / 2 % 2); }
  TL_INLINE static int d_col(int l, int r) { return 8 * (r / 4) + 2 * (l % 4) + r % 2; }
};
template <class In, int N> inline constexpr bool is_warpgroup_atom<Wgmma64xNx16<In, N>> = true;

/// Issues C += A * B with wgmma from LDS tiles A (Rows x K, K-major) and B
/// (K x Cols, MN-major, or Cols x K K-major when TransposeB), each warpgroup
/// its (Rows / WM) x (Cols / WN) block, as one group of instructions that
/// keeps running after the call: C and the two tiles must not be touched
/// until wgmma_retire(c). The proxy fence makes the tiles' writes (made
/// visible to this thread by the barrier before the call) visible to wgmma's
/// reads.
template <class Atom, bool TransposeB, class A, class LA, class LB> TL_INLINE void wgmma_issue(A &c, const LA &a, const LB &b) {
  using WA = wgmma_layout<LA>;
  using WB = wgmma_layout<LB>;
  static_assert(WA::k_major, "wgmma: A's LDS layout is not a canonical K-major swizzled layout (tilec-allocate-lds)");
  static_assert(TransposeB ? WB::k_major : WB::mn_major,
                "wgmma: B's LDS layout is not a canonical swizzled layout (tilec-allocate-lds)");
  static_assert(LA::cols % Atom::K == 0, "wgmma: K is a multiple of 16");
  hw::fence_proxy_async();
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      hw::wgmma_fence_operand(c.v[i][j]);
  hw::wgmma_fence();
  TL_UNROLL
  for (int k0 = 0; k0 < LA::cols; k0 += Atom::K)
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int j = 0; j < A::TN; ++j) {
        const int m0 = A::wave_m() * A::WTM + i * Atom::M, n0 = A::wave_n() * A::WTN + j * Atom::N;
        const unsigned long long da = WA::k_major_desc(a, m0, k0);
        const unsigned long long db = TransposeB ? WB::k_major_desc(b, n0, k0) : WB::mn_major_desc(b, k0, n0);
        hw::wgmma_m64k16<Atom::type, Atom::N, !TransposeB>(c.v[i][j], da, db, 1);
      }
  hw::wgmma_commit();
}

/// Waits until at most InFlight of this warpgroup's committed wgmma groups
/// are still running. With 0, C holds their sums and the caller may
/// overwrite their tiles after its next barrier; with 1, the same holds for
/// every group but the last.
template <int InFlight, class A> TL_INLINE void wgmma_retire(A &c) {
  hw::wgmma_wait<InFlight>();
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      hw::wgmma_fence_operand(c.v[i][j]);
}

/// C += A * B with wgmma (wgmma_issue), waited for before returning.
template <class Atom, bool TransposeB, class A, class LA, class LB> TL_INLINE void wgmma_gemm(A &c, const LA &a, const LB &b) {
  wgmma_issue<Atom, TransposeB>(c, a, b);
  wgmma_retire<0>(c);
}
#endif

// --- register tiles in an accumulator layout ------------------------------------------
/// A Rows x Cols f32 tile split over WM x WN waves; each wave holds a
/// (Rows/WM) x (Cols/WN) block as TM x TN instruction tiles of Atom's D layout.
template <class Atom, int Rows, int Cols, int WM, int WN> struct Acc {
  using atom = Atom;
  static constexpr int rows = Rows, cols = Cols, wm = WM, wn = WN;
  static constexpr int WTM = Rows / WM, WTN = Cols / WN;
  static constexpr int TM = WTM / Atom::M, TN = WTN / Atom::N, E = Atom::AccPerLane;
  static_assert(TM * Atom::M * WM == Rows && TN * Atom::N * WN == Cols, "tile not divisible by the wave grid");
  typename Atom::acc_t v[TM][TN];

  TL_INLINE static int lane() { return thread_id() % Atom::Lanes; }
  TL_INLINE static int wave_m() { return (thread_id() / Atom::Lanes) / WN; }
  TL_INLINE static int wave_n() { return (thread_id() / Atom::Lanes) % WN; }
  /// Row and column in the tile of this lane's element (tm, tn, e).
  TL_INLINE static int row(int tm, int e) { return wave_m() * WTM + tm * Atom::M + Atom::d_row(lane(), e); }
  TL_INLINE static int col(int tn, int e) { return wave_n() * WTN + tn * Atom::N + Atom::d_col(lane(), e); }
};

/// One value per row of an Acc tile, held by the lanes that own that row:
/// element (tm, e) is row Acc::row(tm, e).
template <class A> struct Rows {
  using acc = A;
  static constexpr int rows = A::rows;
  float v[A::TM][A::E];
};

/// True when row vectors of Acc tiles A and B put every row on the same lanes
/// (same instruction, rows and wave grid; the column counts may differ), so
/// that a row vector of one broadcasts over the other (attention: the row
/// maxima of S = Q K^T rescale O).
template <class A, class B>
inline constexpr bool same_rows = A::rows == B::rows && A::wm == B::wm && A::wn == B::wn &&
                                  A::atom::M == B::atom::M && A::atom::N == B::atom::N &&
                                  A::atom::Lanes == B::atom::Lanes && A::E == B::E;

template <class A> TL_INLINE void fill(A &t, float x) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        t.v[i][j][e] = x;
}
template <class A> TL_INLINE void fill(Rows<A> &t, float x) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e)
      t.v[i][e] = x;
}

/// Element (i, j) = offset + j (Axis 1) or offset + i (Axis 0), as tile.iota.
template <int Axis, class A> TL_INLINE void iota(A &t, int offset) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        t.v[i][j][e] = (float)(offset + (Axis == 1 ? A::col(j, e) : A::row(i, e)));
}
template <int Axis, class A> TL_INLINE void iota(Rows<A> &t, int offset) {
  static_assert(Axis == 0, "a row vector holds one value per row");
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e)
      t.v[i][e] = (float)(offset + A::row(i, e));
}

/// dst = f(src) elementwise.
template <class A, class F> TL_INLINE void map(A &dst, const A &src, F f) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.v[i][j][e] = f(src.v[i][j][e]);
}
/// dst = f(lhs, rhs) elementwise.
template <class A, class F> TL_INLINE void map(A &dst, const A &lhs, const A &rhs, F f) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.v[i][j][e] = f(lhs.v[i][j][e], rhs.v[i][j][e]);
}
/// dst = f(lhs, rhs[row]): rhs broadcast along each row.
template <class A, class B, class F> TL_INLINE void map(A &dst, const A &lhs, const Rows<B> &rhs, F f) {
  static_assert(same_rows<A, B>, "row vector of a tile whose rows live on other lanes");
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.v[i][j][e] = f(lhs.v[i][j][e], rhs.v[i][e]);
}
template <class A, class F> TL_INLINE void map(Rows<A> &dst, const Rows<A> &src, F f) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e)
      dst.v[i][e] = f(src.v[i][e]);
}
template <class A, class F> TL_INLINE void map(Rows<A> &dst, const Rows<A> &lhs, const Rows<A> &rhs, F f) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e)
      dst.v[i][e] = f(lhs.v[i][e], rhs.v[i][e]);
}

/// Lane shuffle within a wave (ds_bpermute, docs/hardware.md section 5).
TL_INLINE float shfl_xor(float x, int mask) {
  return __builtin_bit_cast(float, hw::ds_bpermute((hw::lane_id() ^ mask) * 4, __builtin_bit_cast(int, x)));
}

/// op over the lanes that hold one row of an Atom's D layout, every lane
/// getting the result (docs/hardware.md section 5): the row is 16 consecutive
/// lanes (one DPP row) in the 16x16 MFMA and the gfx11 WMMA layouts, 32 in the
/// 32x32 layout. gfx11: row_xmask 1, 2, 4, 8. gfx9: quad_perm [1,0,3,2] and
/// [2,3,0,1] (XOR 1, 2), row_half_mirror and row_mirror (the other half of
/// each 8 and 16: for a commutative op the same combination as XOR 4 and 8),
/// then ds_swizzle XOR 16 for 32-lane rows. Every lane combines the same
/// operands (a + b == b + a), so all lanes of a row hold the identical value.
template <class Atom, class Op> TL_INLINE float reduce_row_lanes(float x, Op op) {
  if constexpr (gathers_operands<Atom>) {  // mma.sync: a row's columns are on lanes 4g..4g+3
    x = op(x, shfl_xor(x, 1));
    x = op(x, shfl_xor(x, 2));
  }
#ifdef TL_HW_HAS_DPP
  else if constexpr (Atom::Lanes == 32) {  // gfx11 WMMA (wave32): rows of 16 lanes
    x = op(x, hw::dpp<0x161>(x));
    x = op(x, hw::dpp<0x162>(x));
    x = op(x, hw::dpp<0x164>(x));
    x = op(x, hw::dpp<0x168>(x));
  } else {  // MFMA (wave64): rows of 16 or 32 lanes
    static_assert(Atom::N == 16 || Atom::N == 32, "rows of 16 or 32 lanes");
    x = op(x, hw::dpp<0xB1>(x));
    x = op(x, hw::dpp<0x4E>(x));
    x = op(x, hw::dpp<0x141>(x));
    x = op(x, hw::dpp<0x140>(x));
    if constexpr (Atom::N == 32)
      x = op(x, hw::swizzle_xor16(x));
  }
#endif
  return x;
}

/// Row reduction: dst[row] = op(dst[row] if accumulate, src[row][*]). Lanes
/// that share a row combine through shuffles; the WN waves that share a row
/// combine through `scratch` (Rows x WN floats of LDS), between barriers.
template <class B, class A, class Op>
TL_INLINE void reduce_rows(Rows<B> &dst, const A &src, Op op, bool accumulate, float *scratch) {
  static_assert(same_rows<A, B>, "row vector of a tile whose rows live on other lanes");
  float part[A::TM][A::E];
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e) {
      float x = src.v[i][0][e];
      for (int j = 1; j < A::TN; ++j)
        x = op(x, src.v[i][j][e]);
      part[i][e] = x;
    }
  // mma.sync's elements e and e ^ 1 are two columns of one row: combine them
  // first (MFMA and WMMA elements of one lane lie in distinct rows).
  if constexpr (gathers_operands<typename A::atom>)
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int e = 0; e < A::E; e += 2)
        part[i][e] = part[i][e + 1] = op(part[i][e], part[i][e + 1]);
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e)
      part[i][e] = reduce_row_lanes<typename A::atom>(part[i][e], op);
  if constexpr (A::wn > 1) {
    barrier();
    if (A::col(0, 0) % (A::cols / A::wn) == 0)
      TL_UNROLL
      for (int i = 0; i < A::TM; ++i)
        TL_UNROLL
        for (int e = 0; e < A::E; ++e)
          hw::lds_write(scratch + A::row(i, e) * A::wn + A::wave_n(), part[i][e]);
    barrier();
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e) {
        float x = hw::lds_read(scratch + A::row(i, e) * A::wn);
        for (int w = 1; w < A::wn; ++w)
          x = op(x, hw::lds_read(scratch + A::row(i, e) * A::wn + w));
        part[i][e] = x;
      }
    barrier();
  }
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e)
      dst.v[i][e] = accumulate ? op(dst.v[i][e], part[i][e]) : part[i][e];
}

// --- wavefront schedule of a gemm (tilec-schedule-waves) ----------------------------
/// Schedule flags: interleave the matrix instructions with LDS reads and global
/// loads (sched_group_barrier); raise the wave priority around them (s_setprio).
enum : unsigned { sched_interleave = 1u, sched_setprio = 2u };
/// A gemm's schedule policy: Flags of sched_*, VmemLoads = global loads per
/// lane issued in the gemm's scheduling region (interleaved with its MFMAs).
template <unsigned Flags = 0, int VmemLoads = 0> struct Schedule {
  static constexpr bool interleave = (Flags & sched_interleave) != 0;
  static constexpr bool setprio = (Flags & sched_setprio) != 0;
  static constexpr int vmem = VmemLoads;
};

namespace sched {
// sched_group_barrier masks (docs/hardware.md section 5).
constexpr int kMatrix = 0x8, kVmemRead = 0x20, kDsRead = 0x100;
/// N times: 1 matrix instruction, then Ds LDS reads and Vm global loads.
template <int N, int Ds, int Vm> struct Interleave {
  TL_INLINE static void emit() {
    if constexpr (N > 0) {
      hw::sched_group_barrier<kMatrix, 1, 0>();
      if constexpr (Ds > 0)
        hw::sched_group_barrier<kDsRead, Ds, 0>();
      if constexpr (Vm > 0)
        hw::sched_group_barrier<kVmemRead, Vm, 0>();
      Interleave<N - 1, Ds, Vm>::emit();
    }
  }
};
} // namespace sched

/// LDS reads of one operand of Atom from tile L (see read_operand).
template <class Atom, bool KAlongCols, class L>
inline constexpr int operand_reads = KAlongCols && L::read_vec > 1 ? Atom::KPerLane / L::read_vec : Atom::KPerLane;

/// One lane's operand of Atom: the KPerLane elements (mn, k), (mn, k + 1), ...
/// of `t` when KAlongCols (k runs along a row), else (k, mn), (k + 1, mn), ...
/// Along a row it takes L::read_vec elements per LDS read (the layout keeps
/// them contiguous); otherwise one read per element. The elements gather in
/// an array copied into the operand as a whole, which clang compiles far
/// faster than inserting them into the operand vector one by one (and,
/// unlike packing them by shifts, without raising register pressure).
template <class Atom, bool KAlongCols, class L> TL_INLINE typename Atom::ab_t read_operand(const L &t, int mn, int k) {
  constexpr int K = Atom::KPerLane, eb = (int)sizeof(typename Atom::bits_t);
  static_assert(K * eb % 4 == 0, "an operand is whole 32-bit words");
  if constexpr (K * eb > 8) {
    // WMMA's 32-byte operands: element by element into the operand vector
    // (the array form raised gfx1151 attention from 196 VGPRs to 214, vector
    // reads to 256 and scratch; tilec-allocate-lds keeps read_vec 1 here).
    static_assert(L::read_vec == 1, "wide operands are read element by element");
    typename Atom::ab_t v;
    TL_UNROLL
    for (int r = 0; r < K; ++r)
      v[r] = __builtin_bit_cast(typename Atom::bits_t,
                                KAlongCols ? t.template load_raw<1>(mn, k + r) : t.template load_raw<1>(k + r, mn));
    return v;
  }
  unsigned w[K * eb / 4];
  if constexpr (KAlongCols && L::read_vec > 1) {
    constexpr int R = L::read_vec;
    static_assert(K % R == 0, "read_vec divides the operand");
    TL_UNROLL
    for (int q = 0; q < K / R; ++q) {
      const auto x = t.template load_raw<R>(mn, k + q * R);
      __builtin_memcpy((char *)w + q * R * eb, &x, sizeof x);
    }
  } else {
    raw_t<eb> e[K];
    TL_UNROLL
    for (int r = 0; r < K; ++r)
      e[r] = KAlongCols ? t.template load_raw<1>(mn, k + r) : t.template load_raw<1>(k + r, mn);
    __builtin_memcpy(w, e, sizeof e);
  }
  return __builtin_bit_cast(typename Atom::ab_t, w);
}

/// One k step of a gathering atom (mma.sync, MFMA, WMMA) over a wave's
/// TM x TN block: B's fragments at k0 are read from LDS (two n-tiles per
/// ldmatrix where the layout allows), then C[i][j] += af[i] * B[j].
template <class Atom, bool TransposeB, class A, class LB>
TL_INLINE void mma_k_step(A &c, const typename Atom::a_t (&af)[A::TM], const LB &b, int k0, int l) {
  typename Atom::b_t bfr[A::TN];
  if constexpr (Atom::template ldmatrix_ok<LB> && A::TN % 2 == 0) {
    TL_UNROLL
    for (int j = 0; j < A::TN; j += 2) {
      const uint4_t r = Atom::template read_b2<TransposeB>(b, A::wave_n() * A::WTN + j * Atom::N, k0, l);
      bfr[j] = typename Atom::b_t{r[0], r[1]};
      bfr[j + 1] = typename Atom::b_t{r[2], r[3]};
    }
  } else {
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      bfr[j] = Atom::template read_b<TransposeB>(b, A::wave_n() * A::WTN + j * Atom::N, k0, l);
  }
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      c.v[i][j] = Atom::mma(af[i], bfr[j], c.v[i][j]);
}

/// C += A * B from LDS tiles. A is Rows x K; B is K x Cols, or Cols x K when
/// TransposeB. Each lane reads its operand elements per the atom's A layout
/// (B uses A's formula with m replaced by n). Sched (a Schedule) orders the
/// matrix-instruction cluster: with interleave, the first k step's operand
/// reads come first, then each matrix instruction is followed by a share of
/// the later k steps' LDS reads and of the region's global loads.
template <class Atom, bool TransposeB, class Sched = Schedule<>, class A, class LA, class LB>
TL_INLINE void gemm(A &c, const LA &a, const LB &b) {
  constexpr int KT = LA::cols;
  const int l = A::lane();
  if constexpr (Sched::setprio)
    hw::s_setprio<1>();
#ifdef TL_HW_HAS_WGMMA
  if constexpr (is_warpgroup_atom<Atom>) {
    wgmma_gemm<Atom, TransposeB>(c, a, b);
  } else
#endif
  if constexpr (gathers_operands<Atom>) {
    TL_UNROLL
    for (int k0 = 0; k0 < KT; k0 += Atom::K) {
      typename Atom::a_t af[A::TM];
      TL_UNROLL
      for (int i = 0; i < A::TM; ++i)
        af[i] = Atom::read_a(a, A::wave_m() * A::WTM + i * Atom::M, k0, l);
      mma_k_step<Atom, TransposeB>(c, af, b, k0, l);
    }
  } else {
    TL_UNROLL
    for (int k0 = 0; k0 < KT; k0 += Atom::K) {
      typename Atom::ab_t af[A::TM], bfr[A::TN];
      // The atoms' operand k indices run consecutively from a_k(l, 0).
      TL_UNROLL
      for (int i = 0; i < A::TM; ++i)
        af[i] = read_operand<Atom, true>(a, A::wave_m() * A::WTM + i * Atom::M + Atom::a_row(l), k0 + Atom::a_k(l, 0));
      TL_UNROLL
      for (int j = 0; j < A::TN; ++j)
        bfr[j] = read_operand<Atom, TransposeB>(b, A::wave_n() * A::WTN + j * Atom::N + Atom::a_row(l),
                                                k0 + Atom::a_k(l, 0));
      TL_UNROLL
      for (int i = 0; i < A::TM; ++i)
        TL_UNROLL
        for (int j = 0; j < A::TN; ++j)
          c.v[i][j] = Atom::mma(af[i], bfr[j], c.v[i][j]);
    }
  }
  if constexpr (Sched::interleave) {
    constexpr int steps = KT / Atom::K, mmas = steps * A::TM * A::TN;
    constexpr int dsPerStep = A::TM * operand_reads<Atom, true, LA> +
                              A::TN * operand_reads<Atom, TransposeB, LB>;  // LDS reads per lane per k step
    constexpr int ds = (dsPerStep * (steps - 1) + mmas - 1) / mmas, vm = (Sched::vmem + mmas - 1) / mmas;
    hw::sched_group_barrier<sched::kDsRead, dsPerStep, 0>();  // the first k step's operands
    sched::Interleave<mmas, ds, vm>::emit();
  }
  if constexpr (Sched::setprio)
    hw::s_setprio<0>();
}

#ifdef TL_HW_HAS_WGMMA
/// gemm for a warpgroup atom, left running (wgmma_issue) until gemm_wait: a
/// pipelined loop issues its next copies meanwhile.
template <class Atom, bool TransposeB, class A, class LA, class LB> TL_INLINE void gemm_issue(A &c, const LA &a, const LB &b) {
  static_assert(is_warpgroup_atom<Atom>, "gemm_issue: only warpgroup instructions run asynchronously");
  wgmma_issue<Atom, TransposeB>(c, a, b);
}
/// Waits until at most InFlight groups that gemm_issue left running on C remain.
template <int InFlight, class A> TL_INLINE void gemm_wait(A &c) { wgmma_retire<InFlight>(c); }
#endif

#ifdef TL_HW_HAS_MMA_SYNC
/// C += A * B with A an accumulator tile in registers (f32, rounded to B's
/// element type as a copy into LDS would round it), for mma.sync: lane l's A
/// element r of the 16 x 16 block at k0 is its accumulator element r % E of
/// the n-tile k0 / 8 + r / E (two adjacent m16n8 accumulators are one A
/// fragment). tilec-infer-layouts emits this only where that holds
/// (accumulatorHoldsOperandA) and A and C split their rows alike over waves
/// holding whole rows.
template <class Atom, bool TransposeB, class Sched = Schedule<>, class A, class P, class LB>
TL_INLINE void gemm_acc_a(A &c, const P &a, const LB &b) {
  using T = typename LB::elem;
  constexpr int E = P::E, KT = P::cols;
  static_assert(gathers_operands<Atom> && sizeof(T) == 2, "registers feed mma.sync's 16-bit A operand");
  static_assert(P::rows == A::rows && P::wm == A::wm && P::wn == 1 && A::wn == 1 && P::atom::M == Atom::M &&
                    Atom::K == 2 * P::atom::N && Atom::KPerLane == 2 * E,
                "A's accumulator layout is the operand layout of C's rows");
  const int l = A::lane();
  TL_UNROLL
  for (int k0 = 0; k0 < KT; k0 += Atom::K) {
    typename Atom::a_t af[A::TM];
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i) {
      unsigned w[Atom::KPerLane / 2];
      TL_UNROLL
      for (int q = 0; q < Atom::KPerLane / 2; ++q) {
        const int r = 2 * q, tn = k0 / P::atom::N + r / E;
        const unsigned lo = __builtin_bit_cast(unsigned short, from_f32<T>(a.v[i][tn][r % E]));
        const unsigned hi = __builtin_bit_cast(unsigned short, from_f32<T>(a.v[i][tn][(r + 1) % E]));
        w[q] = lo | hi << 16;
      }
      af[i] = __builtin_bit_cast(typename Atom::a_t, w);
    }
    mma_k_step<Atom, TransposeB>(c, af, b, k0, l);
  }
}
#endif

/// Writes an accumulator tile to the window of `g` at (r0, c0), converting to
/// g's element type; elements outside g are dropped.
///
/// Each lane's elements lie at constant row and column steps from its first
/// (the atoms' d_row(l, e) - d_row(l, 0) and d_col(l, e) - d_col(l, 0) do not
/// depend on the lane), so the offsets are one base plus
/// constants, a column test per column of atoms and a row test per row (none
/// for a whole tensor when every row the lane writes has a byte offset below
/// `outside`: rows past its end then lie past num_records, unwrapped).
template <class A, class G> TL_INLINE void store_tile(const A &t, const G &g, int r0, int c0) {
  using T = decltype(g.load(0, 0));
  using At = typename A::atom;
  constexpr int eb = (int)sizeof(T);
  const int row0 = r0 + A::row(0, 0), col0 = c0 + A::col(0, 0);
  const int base = (g.origin + row0 * g.pitch + col0) * eb, rowBytes = g.pitch * eb;
  // This lane's rows are row0 + [0, TM * M).
  const bool skipRowTest = g.whole & (row0 >= 0) & ((long)(row0 + A::TM * At::M) * rowBytes <= (long)G::outside);
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e) {
      const int dr = i * At::M + At::d_row(0, e) - At::d_row(0, 0);
      const bool rowIn = skipRowTest | ((unsigned)(row0 + dr) < (unsigned)g.rows);
      TL_UNROLL
      for (int j = 0; j < A::TN; ++j) {
        const int dc = j * At::N + At::d_col(0, e) - At::d_col(0, 0);
        const bool in = rowIn & ((unsigned)(col0 + dc) < (unsigned)g.cols);
        g.store_at(in ? base + dr * rowBytes + dc * eb : G::outside, from_f32<T>(t.v[i][j][e]));
      }
    }
}
/// Writes a row vector to rows r0.. of column c0 (0 for a rank-1 tensor),
/// each row once.
template <class A, class G> TL_INLINE void store_tile(const Rows<A> &t, const G &g, int r0, int c0) {
  using T = decltype(g.load(0, 0));
  if (A::col(0, 0) % (A::cols / A::wn) == 0 && A::wave_n() == 0)
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        g.store(r0 + A::row(i, e), c0, from_f32<T>(t.v[i][e]));
}

/// g[pos[r]] = v[r] for rows whose position lies in g (tile.scatter), each
/// row written once (by the lanes that hold it in the first column group).
template <class A, class G> TL_INLINE void scatter(const Rows<A> &v, const Rows<A> &pos, const G &g) {
  using T = decltype(g.load(0, 0));
  if (A::col(0, 0) % (A::cols / A::wn) == 0 && A::wave_n() == 0)
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e) {
        const int p = (int)pos.v[i][e];
        if (p >= 0 && p < g.rows)
          g.store(p, 0, from_f32<T>(v.v[i][e]));
      }
}

/// Attention masking (tile.mask): element (i, j) scores query position
/// row0 + i against key position col0 + j; it becomes -inf when the key is at
/// or past col_end, or (Causal) after the query, or (Window > 0) Window or
/// more positions before it.
template <bool Causal, int Window, class A> TL_INLINE void mask(A &s, int row0, int col0, int col_end) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e) {
        const int q = row0 + A::row(i, e), k = col0 + A::col(j, e);
        bool out = k >= col_end;
        if constexpr (Causal)
          out = out || k > q;
        if constexpr (Window > 0)
          out = out || k <= q - Window;
        if (out)
          s.v[i][j][e] = -__builtin_inff();
      }
}
/// Loads the window of `g` at (r0, c0) into an accumulator-layout tile: each
/// lane reads the elements it holds, as f32 (outside g: 0).
template <class A, class G> TL_INLINE void load_acc(A &t, const G &g, int r0, int c0) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        t.v[i][j][e] = to_f32(g.load(r0 + A::row(i, e), c0 + A::col(j, e)));
}
/// Loads rows r0.. of column c0 of `g` (0 for a rank-1 tensor) into a row vector.
template <class A, class G> TL_INLINE void load_acc(Rows<A> &t, const G &g, int r0, int c0) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::E; ++e)
      t.v[i][e] = to_f32(g.load(r0 + A::row(i, e), c0));
}
/// Accumulator tile -> LDS tile of the swapped shape, transposed (dst[c][r] = src[r][c]).
template <class A, class L> TL_INLINE void copy_transposed(const L &dst, const A &src) {
  static_assert(L::rows == A::cols && L::cols == A::rows, "copy_transposed: shapes are not transposes");
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.store(A::col(j, e), A::row(i, e), from_f32<typename L::elem>(src.v[i][j][e]));
}
/// LDS tile -> accumulator tile: each lane reads the elements it holds, as f32.
template <class A, class L> TL_INLINE void copy_from_lds(A &dst, const L &src) {
  static_assert(L::rows == A::rows && L::cols == A::cols, "copy_from_lds: shapes differ");
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.v[i][j][e] = to_f32(src.load(A::row(i, e), A::col(j, e)));
}
/// Accumulator tile -> LDS tile (e.g. to feed it to another gemm).
template <class A, class L> TL_INLINE void copy(const L &dst, const A &src) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.store(A::row(i, e), A::col(j, e), from_f32<typename L::elem>(src.v[i][j][e]));
}

} // namespace tl
