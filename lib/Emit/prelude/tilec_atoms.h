// tilec tile primitives: the matrix instructions as data (MFMA, WMMA, mma.sync,
// wgmma), each atom with its shape, register layouts and operand reads.
// Layouts follow docs/hardware.md sections 1-2 and the calculator tables in
// tests/data/matrix-layouts.
#pragma once

namespace tl {

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
/// The fragments shared by NVIDIA's mma.sync.aligned.m16n8k{16,32} (warp of
/// 32; PTX ISA fragments, g = l / 4, t = l % 4), whose operand registers each
/// hold R = 4 / sizeof(element) elements consecutive in k (R = 2: 16-bit, the
/// m16n8k16 forms; R = 4: 8-bit, m16n8k32), so that byte for byte both forms
/// lay out alike: A register i of lane l holds A[g + 8 (i % 2)][R t + 4R (i / 2)
/// + 0..R-1], B register i holds B[R t + 4R i + 0..R-1][g], D element r =
/// D[g + 8 * (r / 2)][2t + r % 2]. A lane's operand is not one run of k:
/// read_a / read_b gather it.
template <int R> struct MmaSyncFragments {
  using a_t = uint4_t;     // (T32,V4R) -> (M16,K8R)
  using b_t = uint2_t;     // (T32,V2R) -> (K8R,N8)
  using acc_t = float4_t;  // (T32,V4) -> (M16,N8)
  TL_INLINE static int d_row(int l, int r) { return l / 4 + 8 * (r / 2); }
  TL_INLINE static int d_col(int l, int r) { return 2 * (l % 4) + r % 2; }
  /// The R elements (mn, k..k+R-1) of `t` as one register, k along a row
  /// (KAlongCols) or down a column.
  template <bool KAlongCols, class L> TL_INLINE static unsigned run(const L &t, int mn, int k) {
    if constexpr (KAlongCols && L::read_vec >= R)
      return t.template load_raw<R>(mn, k);
    // A pair is written out: as the loop below, it compiles to other code.
    if constexpr (R == 2) {
      const unsigned lo = KAlongCols ? t.template load_raw<1>(mn, k) : t.template load_raw<1>(k, mn);
      const unsigned hi = KAlongCols ? t.template load_raw<1>(mn, k + 1) : t.template load_raw<1>(k + 1, mn);
      return lo | hi << 16;
    } else {
      unsigned w = 0;
      TL_UNROLL
      for (int q = 0; q < R; ++q)
        w |= (unsigned)(KAlongCols ? t.template load_raw<1>(mn, k + q) : t.template load_raw<1>(k + q, mn)) << 8 * q;
      return w;
    }
  }
  /// Whether `t`'s layout keeps runs of 16 bytes of a row contiguous and
  /// aligned, as ldmatrix reads them.
  template <class L>
  static constexpr bool ldmatrix_ok = sizeof(typename L::elem) * R == 4 && L::read_vec * sizeof(typename L::elem) >= 16;
  /// Lane l's A operand of the 16 x 8R block at rows m0.., columns k0.. of
  /// `t`. With ldmatrix (x4), lanes 8i.. address rows of matrix i (rows +8 if
  /// i is odd, columns +4R if i >= 2), which are a0..a3.
  template <class L> TL_INLINE static a_t read_a(const L &t, int m0, int k0, int l) {
    if constexpr (ldmatrix_ok<L>)
      return hw::ldmatrix_x4<false>(t.base + L::index(m0 + l % 8 + 8 * ((l / 8) % 2), k0 + 4 * R * (l / 16)));
    const int g = l / 4, k = k0 + R * (l % 4);
    return a_t{run<true>(t, m0 + g, k), run<true>(t, m0 + g + 8, k), run<true>(t, m0 + g, k + 4 * R),
               run<true>(t, m0 + g + 8, k + 4 * R)};
  }
  /// Lane l's B operand of the 8R x 8 block at k0.., columns n0.. (KAlongCols:
  /// `t` holds B transposed, N x K).
  template <bool KAlongCols, class L> TL_INLINE static b_t read_b(const L &t, int n0, int k0, int l) {
    const int n = n0 + l / 4, k = k0 + R * (l % 4);
    return b_t{run<KAlongCols>(t, n, k), run<KAlongCols>(t, n, k + 4 * R)};
  }
  /// Lane l's B operands of the two 8R x 8 blocks at k0.., columns n0.. and
  /// n0 + 8.. (registers 0-1 and 2-3), with one ldmatrix.x4: `t` N x K
  /// (KAlongCols) is read as is, K x N transposed (.trans), which moves
  /// 16-bit elements only: 8-bit ones are gathered.
  template <bool KAlongCols, class L> TL_INLINE static uint4_t read_b2(const L &t, int n0, int k0, int l) {
    if constexpr (KAlongCols) {
      return hw::ldmatrix_x4<false>(t.base + L::index(n0 + l % 8 + 8 * (l / 16), k0 + 4 * R * ((l / 8) % 2)));
    } else if constexpr (R == 2) {
      return hw::ldmatrix_x4<true>(t.base + L::index(k0 + l % 8 + 8 * ((l / 8) % 2), n0 + 8 * (l / 16)));
    } else {
      const b_t lo = read_b<false>(t, n0, k0, l), hi = read_b<false>(t, n0 + 8, k0, l);
      return uint4_t{lo[0], lo[1], hi[0], hi[1]};
    }
  }
};

/// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16} (MmaSyncFragments<2>):
/// A element r of lane l = A[g + 8 * ((r / 2) % 2)][2t + r % 2 + 8 * (r / 4)],
/// B element r = B[2t + r % 2 + 8 * (r / 2)][g].
template <class In> struct Mma16x8x16 : MmaSyncFragments<2> {
  static constexpr int M = 16, N = 8, K = 16, Lanes = 32, KPerLane = 8, AccPerLane = 4;
  using bits_t = short;
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
/// mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2} (MmaSyncFragments<4>):
/// A element r of lane l = A[g + 8 * ((r / 4) % 2)][4t + r % 4 + 16 * (r / 8)],
/// B element r = B[4t + r % 4 + 16 * (r / 4)][g], D as m16n8k16. Byte for
/// byte the m16n8k16 layout (a register holds 4 bytes of one row), so
/// ldmatrix (non-transposing: it moves 16-bit pairs) reads A and an N x K B as
/// for 16-bit operands.
template <class In> struct Mma16x8x32 : MmaSyncFragments<4> {
  static constexpr int M = 16, N = 8, K = 32, Lanes = 32, KPerLane = 16, AccPerLane = 4;
  using bits_t = char;
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

/// True for warpgroup atoms (wgmma): their B operand (and A, unless it is an
/// accumulator read in registers: gemm_acc_a) stays in LDS.
template <class Atom> inline constexpr bool is_warpgroup_atom = false;
/// How many of a lane's accumulator elements hold distinct rows, element e
/// lying in the row of element e % row_slots: all of them (MFMA, WMMA,
/// mma.sync), or wgmma's first 4 (its layout repeats every 8 columns). A row
/// vector (Rows) keeps one value per slot.
template <class Atom> inline constexpr int row_slots = Atom::AccPerLane;

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
/// groups SBO = 8 S apart (LBO unused); a k tile wider than S bytes is stored
/// in column blocks of S bytes (ColBlock), and a k step reads within one.
/// MN-major (B as K x N): n runs along a row, column blocks of S bytes
/// (ColBlock) LBO = Rows * S apart, 8-row groups of k SBO = 8 S apart.
template <class L> struct wgmma_layout {
  static constexpr int eb = (int)sizeof(typename L::elem), row_bytes = L::row_stride * eb;
  static constexpr unsigned mode = row_bytes == 128 ? 1 : row_bytes == 64 ? 2 : row_bytes == 32 ? 3 : 0;
  static constexpr bool swizzled = mode != 0 && L::vec * eb == 16 && L::max_phase * 16 == row_bytes &&
                                   L::per_phase * row_bytes == 128;
  /// k along a row: the whole tile's k in one swizzle row, or in column blocks of one.
  static constexpr bool k_major = swizzled && (L::col_block == L::row_stride || (L::col_block == 0 && L::cols == L::row_stride));
  /// n along a row, in column blocks of one swizzle row.
  static constexpr bool mn_major = swizzled && (L::col_block == L::row_stride || (L::col_block == 0 && L::cols == L::row_stride));
  /// The descriptor of the 8k x 16 operand at rows mn0.. (a multiple of 8), columns k0.. of a K-major tile.
  TL_INLINE static unsigned long long k_major_desc(const L &t, int mn0, int k0) {
    return matrix_descriptor(hw::smem_address(t.base) + k0 / L::row_stride * L::rows * row_bytes + mn0 * row_bytes +
                                 k0 % L::row_stride * eb,
                             16, 8 * row_bytes, mode);
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
  /// One instruction from descriptors: d = A * B + (scaleD ? d : 0).
  template <bool BMnMajor> TL_INLINE static void issue(acc_t &d, unsigned long long a, unsigned long long b, int scaleD) {
    hw::wgmma_m64k16<type, N, BMnMajor>(d, a, b, scaleD);
  }
};
template <class In, int N> inline constexpr bool is_warpgroup_atom<Wgmma64xNx16<In, N>> = true;
template <class In, int N> inline constexpr int row_slots<Wgmma64xNx16<In, N>> = 4;

/// wgmma.mma_async m64nNk32.f32.{e4m3,e5m2} (OCP fp8): the accumulator
/// layout of Wgmma64xNx16; A and B both K-major in LDS (8-bit wgmma has no
/// transposed B and no register form).
template <class In, int N_> struct Wgmma64xNx32 {
  static constexpr int M = 64, N = N_, K = 32, Lanes = 128, KPerLane = 0, AccPerLane = N_ / 2;
  using acc_t = hw::wgmma_frag<N_ / 2>;
  static_assert(__is_same(In, fp8e4m3) || __is_same(In, fp8e5m2), "wgmma k32: e4m3 or e5m2 operands");
  static constexpr hw::wgmma_type type = __is_same(In, fp8e4m3) ? hw::wgmma_type::e4m3 : hw::wgmma_type::e5m2;
  TL_INLINE static int d_row(int l, int r) { return Wgmma64xNx16<bf16, N_>::d_row(l, r); }
  TL_INLINE static int d_col(int l, int r) { return Wgmma64xNx16<bf16, N_>::d_col(l, r); }
  template <bool BMnMajor> TL_INLINE static void issue(acc_t &d, unsigned long long a, unsigned long long b, int scaleD) {
    static_assert(!BMnMajor, "wgmma k32: B is K-major (given as N x K)");
    hw::wgmma_m64k32<type, N>(d, a, b, scaleD);
  }
};
template <class In, int N> inline constexpr bool is_warpgroup_atom<Wgmma64xNx32<In, N>> = true;
template <class In, int N> inline constexpr int row_slots<Wgmma64xNx32<In, N>> = 4;

/// Opens a group of wgmma on C: the proxy fence makes the LDS tiles' writes
/// (made visible to this thread by the barrier before) visible to wgmma's
/// reads, and C's registers are pinned before wgmma.fence orders their
/// earlier accesses.
template <class A> TL_INLINE void wgmma_begin(A &c) {
  hw::fence_proxy_async();
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      hw::wgmma_fence_operand(c.v[i][j]);
  hw::wgmma_fence();
}

/// Issues C += A * B with wgmma from LDS tiles A (Rows x K, K-major) and B
/// (K x Cols, MN-major, or Cols x K K-major when TransposeB), each warpgroup
/// its (Rows / WM) x (Cols / WN) block, as one group of instructions that
/// keeps running after the call: C and the two tiles must not be touched
/// until wgmma_retire(c). The proxy fence makes the tiles' writes (made
/// visible to this thread by the barrier before the call) visible to wgmma's
/// reads.
/// With Overwrite, C = A * B: the first k step ignores C's old values
/// (scale-d 0), so C needs no zeroing before.
template <class Atom, bool TransposeB, bool Overwrite = false, class A, class LA, class LB>
TL_INLINE void wgmma_issue(A &c, const LA &a, const LB &b) {
  using WA = wgmma_layout<LA>;
  using WB = wgmma_layout<LB>;
  static_assert(WA::k_major, "wgmma: A's LDS layout is not a canonical K-major swizzled layout (tilec-allocate-lds)");
  static_assert(TransposeB ? WB::k_major : WB::mn_major,
                "wgmma: B's LDS layout is not a canonical swizzled layout (tilec-allocate-lds)");
  static_assert(LA::cols % Atom::K == 0, "wgmma: K is a multiple of the instruction's k");
  wgmma_begin(c);
  TL_UNROLL
  for (int k0 = 0; k0 < LA::cols; k0 += Atom::K)
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int j = 0; j < A::TN; ++j) {
        const int m0 = A::wave_m() * A::WTM + i * Atom::M, n0 = A::wave_n() * A::WTN + j * Atom::N;
        const unsigned long long da = WA::k_major_desc(a, m0, k0);
        const unsigned long long db = TransposeB ? WB::k_major_desc(b, n0, k0) : WB::mn_major_desc(b, k0, n0);
        Atom::template issue<!TransposeB>(c.v[i][j], da, db, Overwrite && k0 == 0 ? 0 : 1);
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

} // namespace tl
