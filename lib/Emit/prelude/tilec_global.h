// tilec tile primitives: global tensors, read and written through buffer
// resources (docs/hardware.md section 4), and row runs loaded without
// alignment and realigned in registers.
#pragma once

namespace tl {

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
  /// Whether the R x C window at (r0, c0) lies inside the tensor (or the
  /// window this view is): a tensor copy of it reads nothing outside.
  template <int R, int C> TL_INLINE bool contains(int r0, int c0) const {
    return (r0 >= 0) & (c0 >= 0) & (r0 + R <= rows) & (c0 + C <= cols);
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

} // namespace tl
