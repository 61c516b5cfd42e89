// tilec register tiles in the generic ("blocked") layout: the tiles that no
// matrix instruction constrains (elementwise and reduction kernels), laid out
// for wide global accesses. The layout is the dialect's #tile.blocked
// (lib/Dialect/Tile/TileAttrs.td); tilec-infer-layouts chooses it.
#pragma once

namespace tl {

// --- register tiles in a blocked layout ------------------------------------------------
/// The thread arrangement of a blocked layout, independent of any tile's
/// shape: lane l of a wave sits at row l / TC, column run l % TC of a TR x TC
/// lane grid; wave w at row w / WC, column w % WC of a WR x WC wave grid; each
/// lane holds runs of Vec consecutive elements of a row.
template <int Vec, int TR, int TC, int WR, int WC> struct BlockedLayout {
  static constexpr int vec = Vec, tr = TR, tc = TC, wr = WR, wc = WC, lanes = TR * TC;
  /// Rows and columns one pass of the workgroup's threads covers.
  static constexpr int foot_rows = TR * WR, foot_cols = Vec * TC * WC;
  TL_INLINE static int lane() { return thread_id() % lanes; }
  TL_INLINE static int wave() { return thread_id() / lanes; }
  TL_INLINE static int wave_row() { return wave() / WC; }
  TL_INLINE static int wave_col() { return wave() % WC; }
  /// Row of repeat i and column of element e of run k in the footprint
  /// grid, before folding into a tile's extent.
  TL_INLINE static int raw_row(int i) { return (i * WR + wave_row()) * TR + lane() / TC; }
  TL_INLINE static int raw_col(int k, int e) { return ((k * WC + wave_col()) * TC + lane() % TC) * Vec + e; }
};

/// A Rows x Cols f32 tile in layout P (a BlockedLayout): this thread's
/// element (i, k, e) is row raw_row(i), column raw_col(k, e), taken modulo the
/// tile's extent. Where the tile is shorter than the footprint along an axis,
/// the threads past its edge hold copies ("replicas") of elements others own;
/// they load and compute like the owners and never store or contribute twice
/// to a reduction. A [Rows, 1] tile (or a rank-1 tile: one value per row) and
/// a [1, Cols] tile in the same P hold, on each thread, the row or column
/// values of every element that thread holds of a [Rows, Cols] tile in P.
template <int Rows, int Cols, class P> struct Blocked {
  using layout = P;
  static constexpr int rows = Rows, cols = Cols;
  static constexpr int RR = (Rows + P::foot_rows - 1) / P::foot_rows;  // row repeats
  static constexpr int CR = (Cols + P::foot_cols - 1) / P::foot_cols;  // column-run repeats
  static constexpr int V = P::vec < Cols ? P::vec : Cols;              // elements of a run held
  static constexpr bool exact_rows = Rows % P::foot_rows == 0, exact_cols = Cols % P::foot_cols == 0;
  float v[RR][CR][V];

  TL_INLINE static int row(int i) { return exact_rows ? P::raw_row(i) : P::raw_row(i) % Rows; }
  TL_INLINE static int col(int k, int e) { return exact_cols ? P::raw_col(k, e) : P::raw_col(k, e) % Cols; }
  TL_INLINE static bool owns_row(int i) { return exact_rows || P::raw_row(i) < Rows; }
  TL_INLINE static bool owns_col(int k, int e) { return exact_cols || P::raw_col(k, e) < Cols; }
};

template <int R, int C, class P> TL_INLINE void fill(Blocked<R, C, P> &t, float x) {
  using B = Blocked<R, C, P>;
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        t.v[i][k][e] = x;
}

/// Element (i, j) = offset + j (Axis 1) or offset + i (Axis 0), as tile.iota.
template <int Axis, int R, int C, class P> TL_INLINE void iota(Blocked<R, C, P> &t, int offset) {
  using B = Blocked<R, C, P>;
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        t.v[i][k][e] = (float)(offset + (Axis == 1 ? B::col(k, e) : B::row(i)));
}

/// dst = f(src) elementwise.
template <int R, int C, class P, class F> TL_INLINE void map(Blocked<R, C, P> &dst, const Blocked<R, C, P> &src, F f) {
  using B = Blocked<R, C, P>;
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        dst.v[i][k][e] = f(src.v[i][k][e]);
}

/// dst = f(lhs, rhs) elementwise.
template <int R, int C, class P, class F>
TL_INLINE void map(Blocked<R, C, P> &dst, const Blocked<R, C, P> &lhs, const Blocked<R, C, P> &rhs, F f) {
  using B = Blocked<R, C, P>;
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        dst.v[i][k][e] = f(lhs.v[i][k][e], rhs.v[i][k][e]);
}

/// dst = f(lhs, rhs) elementwise; rhs is a [1, C] row or [R, 1]
/// column broadcast over the other axis. Each thread holds the broadcast
/// values it needs (same layout P), so this moves no data.
template <int R, int C, class P, int R2, int C2, class F>
TL_INLINE void map(Blocked<R, C, P> &dst, const Blocked<R, C, P> &lhs, const Blocked<R2, C2, P> &rhs, F f) {
  static_assert((R2 == R || R2 == 1) && (C2 == C || C2 == 1), "map: rhs does not broadcast");
  using B = Blocked<R, C, P>;
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        dst.v[i][k][e] = f(lhs.v[i][k][e], rhs.v[R2 == 1 ? 0 : i][C2 == 1 ? 0 : k][C2 == 1 ? 0 : e]);
}

/// dst = f(dst, lhs, rhs) elementwise, rhs the same shape or broadcast as
/// in map: an update that reads the destination (mul_add).
template <int R, int C, class P, int R2, int C2, class F>
TL_INLINE void update(Blocked<R, C, P> &dst, const Blocked<R, C, P> &lhs, const Blocked<R2, C2, P> &rhs, F f) {
  static_assert((R2 == R || R2 == 1) && (C2 == C || C2 == 1), "update: rhs does not broadcast");
  using B = Blocked<R, C, P>;
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        dst.v[i][k][e] = f(dst.v[i][k][e], lhs.v[i][k][e], rhs.v[R2 == 1 ? 0 : i][C2 == 1 ? 0 : k][C2 == 1 ? 0 : e]);
}

/// x combined with the values of the lanes whose ids differ from this lane's
/// in the bits First, 2 First, ..., First * (Count / 2): every lane of such a
/// group gets op over the group. Groups of consecutive lanes (First = 1) use
/// DPP where the target has it (quad_perm [1,0,3,2] and [2,3,0,1] for XOR 1
/// and 2; row_half_mirror and row_mirror, which for a commutative op over a
/// whole group of 8 and 16 combine the same operands as XOR 4 and 8; then
/// ds_swizzle XOR 16), else and beyond, lane shuffles (ds_bpermute on AMD,
/// shfl.sync on NVIDIA: docs/hardware.md section 5).
template <int First, int Count, class Op, int M = First> TL_INLINE float reduce_lanes(float x, Op op) {
  if constexpr (M < First * Count) {
#ifdef TL_HW_HAS_DPP
    if constexpr (First == 1 && M == 1)
      x = op(x, hw::dpp<0xB1>(x));
    else if constexpr (First == 1 && M == 2)
      x = op(x, hw::dpp<0x4E>(x));
    else if constexpr (First == 1 && M == 4)
      x = op(x, hw::dpp<0x141>(x));
    else if constexpr (First == 1 && M == 8)
      x = op(x, hw::dpp<0x140>(x));
    else if constexpr (M == 16)
      x = op(x, hw::swizzle_xor16(x));
    else
#endif
      x = op(x, shfl_xor(x, M));
    return reduce_lanes<First, Count, Op, M * 2>(x, op);
  }
  return x;
}

/// Row reduction (axis 1) into a [R, 1] (or rank-1) tile: each thread folds
/// the columns it owns (init elsewhere), the TC lanes of a row combine
/// cross-lane, and the WC waves that share a row through `scratch` (R x WC
/// floats of LDS), between barriers. With accumulate, dst's values take part.
template <int R, int C, class P, class Op>
TL_INLINE void reduce_rows(Blocked<R, 1, P> &dst, const Blocked<R, C, P> &src, Op op, float init, bool accumulate,
                           float *scratch) {
  using B = Blocked<R, C, P>;
  float part[B::RR];
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i) {
    float x = init;
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        x = B::owns_col(k, e) ? op(x, src.v[i][k][e]) : x;
    part[i] = reduce_lanes<1, P::tc>(x, op);
  }
  if constexpr (P::wc > 1) {
    barrier();
    if (P::lane() % P::tc == 0)
      TL_UNROLL
      for (int i = 0; i < B::RR; ++i)
        if (B::owns_row(i))
          hw::lds_write(scratch + B::row(i) * P::wc + P::wave_col(), part[i]);
    barrier();
    TL_UNROLL
    for (int i = 0; i < B::RR; ++i) {
      float x = hw::lds_read(scratch + B::row(i) * P::wc);
      for (int w = 1; w < P::wc; ++w)
        x = op(x, hw::lds_read(scratch + B::row(i) * P::wc + w));
      part[i] = x;
    }
    barrier();
  }
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    dst.v[i][0][0] = accumulate ? op(dst.v[i][0][0], part[i]) : part[i];
}

/// Column reduction (axis 0) into a [1, C] tile: each thread folds the rows it
/// owns, the TR lanes of a column combine cross-lane, and the WR waves through
/// `scratch` (C x WR floats of LDS).
template <int R, int C, class P, class Op>
TL_INLINE void reduce_cols(Blocked<1, C, P> &dst, const Blocked<R, C, P> &src, Op op, float init, bool accumulate,
                           float *scratch) {
  using B = Blocked<R, C, P>;
  float part[B::CR][B::V];
  TL_UNROLL
  for (int k = 0; k < B::CR; ++k)
    TL_UNROLL
    for (int e = 0; e < B::V; ++e) {
      float x = init;
      TL_UNROLL
      for (int i = 0; i < B::RR; ++i)
        x = B::owns_row(i) ? op(x, src.v[i][k][e]) : x;
      part[k][e] = reduce_lanes<P::tc, P::tr>(x, op);
    }
  if constexpr (P::wr > 1) {
    barrier();
    if (P::lane() / P::tc == 0)
      TL_UNROLL
      for (int k = 0; k < B::CR; ++k)
        TL_UNROLL
        for (int e = 0; e < B::V; ++e)
          if (B::owns_col(k, e))
            hw::lds_write(scratch + B::col(k, e) * P::wr + P::wave_row(), part[k][e]);
    barrier();
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e) {
        float x = hw::lds_read(scratch + B::col(k, e) * P::wr);
        for (int w = 1; w < P::wr; ++w)
          x = op(x, hw::lds_read(scratch + B::col(k, e) * P::wr + w));
        part[k][e] = x;
      }
    barrier();
  }
  TL_UNROLL
  for (int k = 0; k < B::CR; ++k)
    TL_UNROLL
    for (int e = 0; e < B::V; ++e)
      dst.v[0][k][e] = accumulate ? op(dst.v[0][k][e], part[k][e]) : part[k][e];
}

/// Loads the window of `g` at (r0, c0): each run of V elements in one global
/// access (tilec-infer-layouts sizes Vec so that the tensor's divisibility
/// keeps every run inside a row and aligned), as f32; outside g: 0.
template <int R, int C, class P, class G> TL_INLINE void load_tile(Blocked<R, C, P> &t, const G &g, int r0, int c0) {
  using B = Blocked<R, C, P>;
  using T = decltype(g.load(0, 0));
  constexpr int eb = (int)sizeof(T);
  static_assert((B::V & (B::V - 1)) == 0 && B::V * eb <= 16, "a run is one access of 1 to 16 bytes");
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k) {
      const auto x = g.template load_raw<B::V>(r0 + B::row(i), c0 + B::col(k, 0));
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        t.v[i][k][e] = to_f32(raw_slice<T>(x, e * eb));
    }
}

/// Writes the tile to the window of `g` at (r0, c0), converting to g's element
/// type; each element once (by its owner); outside g: dropped. A run of V
/// elements goes out in one access of V * sizeof(T) bytes (as load_tile's: the
/// tensor's divisibility keeps it inside a row and aligned) wherever the tile's
/// width is a multiple of V, so that a run is owned whole or not at all.
template <int R, int C, class P, class G>
TL_INLINE void store_tile(const Blocked<R, C, P> &t, const G &g, int r0, int c0) {
  using B = Blocked<R, C, P>;
  using T = decltype(g.load(0, 0));
  constexpr int eb = (int)sizeof(T), bytes = B::V * eb;
  constexpr bool wide = C % B::V == 0 && (bytes == 4 || bytes == 8 || bytes == 16);
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k) {
      if constexpr (wide) {
        if (!(B::owns_row(i) && B::owns_col(k, 0)))
          continue;
        raw_t<bytes> run;
        if constexpr (hw_converts_pairs<T>) {
          // One instruction per pair of values (a wide run holds at least two).
          unsigned pairs[bytes / 4] = {};
          TL_UNROLL
          for (int e = 0; e < B::V; e += 2)
            pairs[e * eb / 4] |= pack2_f32<T>(t.v[i][k][e], t.v[i][k][e + 1]) << (8 * (e * eb % 4));
          __builtin_memcpy(&run, pairs, bytes);
        } else if constexpr (eb == 1) {
          // Bytes packed into words with shifts: byte-wise copies into the
          // vector-typed run can defeat scalar replacement and leave it in
          // scratch (the fp8 conversions' branches between them).
          unsigned words[bytes / 4] = {};
          TL_UNROLL
          for (int e = 0; e < B::V; ++e)
            words[e / 4] |= unsigned(__builtin_bit_cast(unsigned char, from_f32<T>(t.v[i][k][e]))) << (8 * (e % 4));
          __builtin_memcpy(&run, words, bytes);
        } else {
          TL_UNROLL
          for (int e = 0; e < B::V; ++e) {
            const T x = from_f32<T>(t.v[i][k][e]);
            __builtin_memcpy((char *)&run + e * eb, &x, eb);
          }
        }
        const int off = g.store_offset(r0 + B::row(i), c0 + B::col(k, 0));
        if constexpr (bytes == 16)
          hw::buffer_store_b128(run, g.rsrc, off);
        else if constexpr (bytes == 8)
          hw::buffer_store_b64(run, g.rsrc, off);
        else
          hw::buffer_store_b32(run, g.rsrc, off);
      } else {
        TL_UNROLL
        for (int e = 0; e < B::V; ++e)
          if (B::owns_row(i) && B::owns_col(k, e))
            g.store(r0 + B::row(i), c0 + B::col(k, e), from_f32<T>(t.v[i][k][e]));
      }
    }
}

/// Register tile -> LDS tile of the same shape (each element once).
template <int R, int C, class P, class L> TL_INLINE void copy(const L &dst, const Blocked<R, C, P> &src) {
  using B = Blocked<R, C, P>;
  static_assert(L::rows == R && L::cols == C, "copy: shapes differ");
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        if (B::owns_row(i) && B::owns_col(k, e))
          dst.store(B::row(i), B::col(k, e), from_f32<typename L::elem>(src.v[i][k][e]));
}

/// Register tile -> LDS tile of the swapped shape, transposed (dst[c][r] = src[r][c]).
template <int R, int C, class P, class L> TL_INLINE void copy_transposed(const L &dst, const Blocked<R, C, P> &src) {
  using B = Blocked<R, C, P>;
  static_assert(L::rows == C && L::cols == R, "copy_transposed: shapes are not transposes");
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        if (B::owns_row(i) && B::owns_col(k, e))
          dst.store(B::col(k, e), B::row(i), from_f32<typename L::elem>(src.v[i][k][e]));
}

/// LDS tile -> register tile: each thread reads the elements it holds (an LDS
/// tile of one row or column: broadcast over the other axis).
template <int R, int C, class P, class L> TL_INLINE void copy_from_lds(Blocked<R, C, P> &dst, const L &src) {
  using B = Blocked<R, C, P>;
  static_assert((L::rows == R || L::rows == 1) && (L::cols == C || L::cols == 1), "copy_from_lds: shapes differ");
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e)
        dst.v[i][k][e] = to_f32(src.load(L::rows == 1 ? 0 : B::row(i), L::cols == 1 ? 0 : B::col(k, e)));
}

/// Attention masking (tile.mask) on a blocked tile: as mask() on an
/// accumulator tile.
template <bool Causal, int Window, int R, int C, class P>
TL_INLINE void mask(Blocked<R, C, P> &s, int row0, int col0, int col_end) {
  using B = Blocked<R, C, P>;
  TL_UNROLL
  for (int i = 0; i < B::RR; ++i)
    TL_UNROLL
    for (int k = 0; k < B::CR; ++k)
      TL_UNROLL
      for (int e = 0; e < B::V; ++e) {
        const int q = row0 + B::row(i), key = col0 + B::col(k, e);
        bool out = key >= col_end;
        if constexpr (Causal)
          out = out || key > q;
        if constexpr (Window > 0)
          out = out || key <= q - Window;
        if (out)
          s.v[i][k][e] = -__builtin_inff();
      }
}

/// g[pos[r]] = v[r] for rows whose position lies in g (tile.scatter), each
/// row written once, by its owner in the first column of lanes and waves.
template <int R, class P, class G>
TL_INLINE void scatter(const Blocked<R, 1, P> &v, const Blocked<R, 1, P> &pos, const G &g) {
  using B = Blocked<R, 1, P>;
  using T = decltype(g.load(0, 0));
  if (P::lane() % P::tc == 0 && P::wave_col() == 0)
    TL_UNROLL
    for (int i = 0; i < B::RR; ++i) {
      const int p = (int)pos.v[i][0][0];
      if (B::owns_row(i) && p >= 0 && p < g.rows)
        g.store(p, 0, from_f32<T>(v.v[i][0][0]));
    }
}

} // namespace tl
