// tilec tile primitives: register tiles in a matrix instruction's accumulator
// layout (Acc, and Rows: one value per row): fill, iota, elementwise maps, row
// reductions and masking, and their loads and stores from and to global
// tensors and LDS tiles.
#pragma once

namespace tl {

/// True for atoms whose accumulator rows each lie on one quad of lanes 4g..4g+3
/// (two adjacent columns per lane): mma.sync and wgmma.
template <class Atom> inline constexpr bool quad_rows = gathers_operands<Atom> || is_warpgroup_atom<Atom>;

// --- register tiles in an accumulator layout ------------------------------------------
/// A Rows x Cols f32 tile split over WM x WN waves; each wave holds a
/// (Rows/WM) x (Cols/WN) block as TM x TN instruction tiles of Atom's D layout.
template <class Atom, int Rows, int Cols, int WM, int WN> struct Acc {
  using atom = Atom;
  static constexpr int rows = Rows, cols = Cols, wm = WM, wn = WN;
  static constexpr int WTM = Rows / WM, WTN = Cols / WN;
  static constexpr int TM = WTM / Atom::M, TN = WTN / Atom::N, E = Atom::AccPerLane, RE = row_slots<Atom>;
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
/// element (tm, e) is row Acc::row(tm, e), for the tile's row slots e < RE.
template <class A> struct Rows {
  using acc = A;
  static constexpr int rows = A::rows;
  float v[A::TM][A::RE];
};

/// True when row vectors of Acc tiles A and B put every row on the same lanes
/// (same instruction, rows and wave grid; the column counts may differ; wgmma
/// of any N, whose rows do not depend on N), so that a row vector of one
/// broadcasts over the other (attention: the row maxima of S = Q K^T rescale O).
template <class A, class B>
inline constexpr bool same_rows = A::rows == B::rows && A::wm == B::wm && A::wn == B::wn &&
                                  A::atom::M == B::atom::M &&
                                  (A::atom::N == B::atom::N ||
                                   (is_warpgroup_atom<typename A::atom> && is_warpgroup_atom<typename B::atom>)) &&
                                  A::atom::Lanes == B::atom::Lanes && A::RE == B::RE;

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
    for (int e = 0; e < A::RE; ++e)
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
    for (int e = 0; e < A::RE; ++e)
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
        dst.v[i][j][e] = f(lhs.v[i][j][e], rhs.v[i][e % B::RE]);
}
/// dst = f(dst, lhs, rhs) elementwise: an update that reads the destination
/// (mul_add).
template <class A, class F> TL_INLINE void update(A &dst, const A &lhs, const A &rhs, F f) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.v[i][j][e] = f(dst.v[i][j][e], lhs.v[i][j][e], rhs.v[i][j][e]);
}
/// The same with rhs broadcast along each row.
template <class A, class B, class F> TL_INLINE void update(A &dst, const A &lhs, const Rows<B> &rhs, F f) {
  static_assert(same_rows<A, B>, "row vector of a tile whose rows live on other lanes");
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.v[i][j][e] = f(dst.v[i][j][e], lhs.v[i][j][e], rhs.v[i][e % B::RE]);
}
template <class A, class F> TL_INLINE void map(Rows<A> &dst, const Rows<A> &src, F f) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::RE; ++e)
      dst.v[i][e] = f(src.v[i][e]);
}
template <class A, class F> TL_INLINE void map(Rows<A> &dst, const Rows<A> &lhs, const Rows<A> &rhs, F f) {
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < A::RE; ++e)
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
  if constexpr (quad_rows<Atom>) {  // mma.sync, wgmma: a row's columns are on lanes 4g..4g+3
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
  constexpr int RE = A::RE;
  // A lane's elements of one row first: those of one row slot (wgmma's
  // 8-column groups), then mma.sync's and wgmma's pairs e, e ^ 1, two columns
  // of one row (MFMA and WMMA elements of one lane lie in distinct rows).
  float part[A::TM][RE];
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < RE; ++e) {
      float x = src.v[i][0][e];
      if constexpr (RE < A::E) {
        for (int f = e + RE; f < A::E; f += RE)
          x = op(x, src.v[i][0][f]);
        for (int j = 1; j < A::TN; ++j)
          for (int f = e; f < A::E; f += RE)
            x = op(x, src.v[i][j][f]);
      } else {
        for (int j = 1; j < A::TN; ++j)
          x = op(x, src.v[i][j][e]);
      }
      part[i][e] = x;
    }
  if constexpr (quad_rows<typename A::atom>)
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int e = 0; e < RE; e += 2)
        part[i][e] = part[i][e + 1] = op(part[i][e], part[i][e + 1]);
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int e = 0; e < RE; ++e)
      part[i][e] = reduce_row_lanes<typename A::atom>(part[i][e], op);
  if constexpr (A::wn > 1) {
    barrier();
    if (A::col(0, 0) % (A::cols / A::wn) == 0)
      TL_UNROLL
      for (int i = 0; i < A::TM; ++i)
        TL_UNROLL
        for (int e = 0; e < RE; ++e)
          hw::lds_write(scratch + A::row(i, e) * A::wn + A::wave_n(), part[i][e]);
    barrier();
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int e = 0; e < RE; ++e) {
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
    for (int e = 0; e < RE; ++e)
      dst.v[i][e] = accumulate ? op(dst.v[i][e], part[i][e]) : part[i][e];
}

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
      for (int e = 0; e < A::RE; ++e)
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
      for (int e = 0; e < A::RE; ++e) {
        const int p = (int)pos.v[i][e];
        if (p >= 0 && p < g.rows)
          g.store(p, 0, from_f32<T>(v.v[i][e]));
      }
}

/// Attention masking (tile.mask): element (i, j) scores query position
/// row0 + i against key position col0 + j; it becomes -inf when the key is at
/// or past col_end, or (Causal) after the query, or (Window > 0) Window or
/// more positions before it. A block that keeps every element (the key
/// blocks inside the sequence, before the diagonal and within the window:
/// all but the edges) skips the per-element tests on one uniform branch.
template <bool Causal, int Window, class A> TL_INLINE void mask(A &s, int row0, int col0, int col_end) {
  const int lastKey = col0 + A::cols - 1;
  bool keepsAll = lastKey < col_end;
  if constexpr (Causal)
    keepsAll = keepsAll && lastKey <= row0;
  if constexpr (Window > 0)
    keepsAll = keepsAll && col0 > row0 + A::rows - 1 - Window;
  if (keepsAll)
    return;
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
    for (int e = 0; e < A::RE; ++e)
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
/// LDS tile -> accumulator tile: each lane reads the elements it holds, as f32
/// (an LDS tile of one row or column: broadcast over the other axis).
template <class A, class L> TL_INLINE void copy_from_lds(A &dst, const L &src) {
  static_assert((L::rows == A::rows || L::rows == 1) && (L::cols == A::cols || L::cols == 1),
                "copy_from_lds: shapes differ");
  TL_UNROLL
  for (int i = 0; i < A::TM; ++i)
    TL_UNROLL
    for (int j = 0; j < A::TN; ++j)
      TL_UNROLL
      for (int e = 0; e < A::E; ++e)
        dst.v[i][j][e] = to_f32(src.load(L::rows == 1 ? 0 : A::row(i, e), L::cols == 1 ? 0 : A::col(j, e)));
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
