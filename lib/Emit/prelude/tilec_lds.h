// tilec tile primitives: tiles in LDS (layout and swizzle) and the cooperative
// copies of global tiles into them: staged through registers, transposed,
// gathered by row index, or asynchronous.
#pragma once

namespace tl {

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
/// any alignment; the `realign` of tilec-allocate-lds's #tile.access) and held as their
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
  if constexpr (eb == 2 && B % 2 == 0 && V % 2 == 0 && P <= 2) {
    // Pairs of rows of runs of whole words of 16-bit elements, rotated over
    // at most 2 rows: element
    // e ^ flip lies in the same words as element e, so one byte permute with
    // a per-lane selector builds each word of a rotated column from a pair
    // of rows (no select per column).
    const unsigned even = 0x05040100u, odd = 0x07060302u;  // {lo(w0), lo(w1)}, {hi(w0), hi(w1)}
    const unsigned same = flip ? odd : even, other = flip ? even : odd;
    TL_UNROLL
    for (int e = 0; e < V; ++e) {
      unsigned col[B / 2];
      TL_UNROLL
      for (int h = 0; h < B / 2; ++h)
        col[h] = hw::perm_bytes(raw_slice<unsigned>(rows[2 * h + 1], e / 2 * 4),
                                raw_slice<unsigned>(rows[2 * h], e / 2 * 4), e % 2 ? other : same);
      dst.template store_run<B>(c + (e ^ flip), r, __builtin_bit_cast(raw_t<B * eb>, col));
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

/// load_tile_async in a kernel whose copy groups complete on mbarriers
/// (TL_COPY_GROUPS, a kernel with tensor copies): the same copies, then the
/// group closed on its barrier too.
template <int Threads, int Vec = 1, bool Realign = false, class G, class L, class Groups>
TL_INLINE void load_tile_async(const L &t, const G &g, int r0, int c0, Groups &groups) {
  load_tile_async<Threads, Vec, Realign>(t, g, r0, c0);
  groups.close();
}
/// load_tile_async as tensor copies (TMA): thread 0 copies the tile in boxes
/// of L::rows x BoxCols (one per column block), each straight into the
/// swizzled layout, which the tensor map at `map` (TL_TMA_REF) of g's tensor
/// describes. A window that does not lie wholly inside g (an edge tile, or a
/// window whose clipping the tensor map cannot see) takes the cooperative
/// copies instead, in the same group. Emulator: always the cooperative copies.
template <int Threads, int Vec, int BoxCols, class G, class L, class Map, class Groups>
TL_INLINE void load_tile_tma(const L &t, const G &g, Map map, int r0, int c0, Groups &groups) {
#ifdef TL_HW_HAS_TENSOR_COPY
  static_assert(L::cols % BoxCols == 0 && (L::col_block == 0 ? BoxCols == L::cols : BoxCols == L::col_block) &&
                    BoxCols == L::row_stride,
                "load_tile_tma: boxes are the tile's column blocks, rows unpadded");
  constexpr int boxBytes = L::rows * BoxCols * (int)sizeof(typename L::elem);
  if (g.template contains<L::rows, L::cols>(r0, c0)) {
    if (thread_id() == 0) {
      const int row = g.origin / g.pitch + r0, col = g.origin % g.pitch + c0;
      TL_UNROLL
      for (int b = 0; b < L::cols / BoxCols; ++b) {
        hw::mbar_expect_bytes(groups.open(), boxBytes);
        hw::tma_load_2d(t.base + b * L::rows * L::row_stride, map, row, col + b * BoxCols, groups.open());
      }
    }
    hw::async_commit();  // an empty cp.async group: the two group counts stay equal
    groups.close();
    return;
  }
#else
  (void)map;
#endif
  load_tile_async<Threads, Vec>(t, g, r0, c0, groups);
}
/// Waits until at most N of the kernel's copy groups are in flight.
template <int N, class Groups> TL_INLINE void async_wait(Groups &groups) { groups.template wait<N>(); }

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

/// gather_tile_async in a kernel whose copy groups complete on mbarriers.
template <int Threads, int Vec = 1, class G, class I, class L, class Groups>
TL_INLINE void gather_tile_async(const L &t, const G &g, const I &ids, int i0, int c0, Groups &groups) {
  gather_tile_async<Threads, Vec>(t, g, ids, i0, c0);
  groups.close();
}

} // namespace tl
