// tilec tile primitives: gemm of LDS tiles into an accumulator tile (for
// mma.sync also with A in registers), and the wavefront schedule that
// interleaves its matrix instructions with memory accesses.
#pragma once

namespace tl {

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

/// Consecutive k steps of Atom that one LDS read of a lane's operands serves
/// in a gemm over a k tile of KT whose wave holds Operands operands per k
/// step (TM + TN): 2 for an MFMA (wave64) whose lane operand is 8 bytes when
/// KT holds whole pairs of steps and Operands <= 4, else 1 (the rule of
/// MatrixInstr::kStepsPerRead, which tilec-allocate-lds plans the reads by).
/// With 2, lane l reads the 2 * KPerLane elements from k0 + 2 * a_k(l, 0) in
/// one 16-byte read: the first KPerLane are its operand of step k0, the rest
/// of step k0 + K. A and B take the same k for the same lane, step and
/// element, so a pair of steps sums over its 2K indices in another order.
template <class Atom, int KT, int Operands> constexpr int k_steps_per_read_of() {
  if constexpr (Atom::Lanes != 64)
    return 1;
  else
    return Atom::KPerLane * (int)sizeof(typename Atom::bits_t) == 8 && KT % (2 * Atom::K) == 0 && Operands <= 4 ? 2
                                                                                                                 : 1;
}
template <class Atom, int KT, int Operands>
inline constexpr int k_steps_per_read = k_steps_per_read_of<Atom, KT, Operands>();

/// LDS reads of one operand of Atom from tile L per Steps k steps (see
/// read_operand).
template <class Atom, bool KAlongCols, class L, int Steps = 1>
inline constexpr int operand_reads = KAlongCols && L::read_vec > 1 ? Atom::KPerLane * Steps / L::read_vec
                                                                   : Atom::KPerLane * Steps;

/// One lane's operands of Atom for Steps consecutive k steps (k_steps_per_read).
template <class Atom, int Steps> struct operand_run {
  typename Atom::ab_t step[Steps];
};

/// One lane's operands of Atom for Steps k steps: the KPerLane * Steps
/// elements (mn, k), (mn, k + 1), ... of `t` when KAlongCols (k runs along a
/// row), else (k, mn), (k + 1, mn), ...; step s takes elements s * KPerLane
/// on. Along a row it takes L::read_vec elements per LDS read (the layout
/// keeps them contiguous); otherwise one read per element. The elements
/// gather in an array copied into the operands as a whole, which clang
/// compiles far faster than inserting them into the operand vector one by
/// one (and, unlike packing them by shifts, without raising register
/// pressure).
template <class Atom, bool KAlongCols, int Steps = 1, class L>
TL_INLINE operand_run<Atom, Steps> read_operand(const L &t, int mn, int k) {
  constexpr int K = Atom::KPerLane * Steps, eb = (int)sizeof(typename Atom::bits_t);
  static_assert(K * eb % 4 == 0, "an operand is whole 32-bit words");
  if constexpr (Atom::KPerLane * eb > 8) {
    // WMMA's 32-byte operands: element by element into the operand vector
    // (the array form raised gfx1151 attention from 196 VGPRs to 214, vector
    // reads to 256 and scratch; tilec-allocate-lds keeps read_vec 1 here).
    static_assert(L::read_vec == 1 && Steps == 1, "wide operands are read element by element, a step at a time");
    operand_run<Atom, 1> v;
    TL_UNROLL
    for (int r = 0; r < K; ++r)
      v.step[0][r] = __builtin_bit_cast(typename Atom::bits_t, KAlongCols ? t.template load_raw<1>(mn, k + r)
                                                                          : t.template load_raw<1>(k + r, mn));
    return v;
  }
  unsigned w[K * eb / 4];
  if constexpr (KAlongCols && L::read_vec > 1) {
    constexpr int R = L::read_vec < K ? L::read_vec : K;
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
  return __builtin_bit_cast(operand_run<Atom, Steps>, w);
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
    constexpr int S = k_steps_per_read<Atom, KT, A::TM + A::TN>;
    TL_UNROLL
    for (int k0 = 0; k0 < KT; k0 += S * Atom::K) {
      operand_run<Atom, S> af[A::TM], bfr[A::TN];
      // The atoms' operand k indices run consecutively from a_k(l, 0); S
      // steps' run on from S * a_k(l, 0).
      const int k = k0 + S * Atom::a_k(l, 0);
      TL_UNROLL
      for (int i = 0; i < A::TM; ++i)
        af[i] = read_operand<Atom, true, S>(a, A::wave_m() * A::WTM + i * Atom::M + Atom::a_row(l), k);
      TL_UNROLL
      for (int j = 0; j < A::TN; ++j)
        bfr[j] = read_operand<Atom, TransposeB, S>(b, A::wave_n() * A::WTN + j * Atom::N + Atom::a_row(l), k);
      TL_UNROLL
      for (int s = 0; s < S; ++s)
        TL_UNROLL
        for (int i = 0; i < A::TM; ++i)
          TL_UNROLL
          for (int j = 0; j < A::TN; ++j)
            c.v[i][j] = Atom::mma(af[i].step[s], bfr[j].step[s], c.v[i][j]);
    }
  }
  if constexpr (Sched::interleave) {
    constexpr int S = k_steps_per_read<Atom, KT, A::TM + A::TN>;
    constexpr int reads = KT / Atom::K / S, mmas = KT / Atom::K * A::TM * A::TN;
    constexpr int dsPerRead = A::TM * operand_reads<Atom, true, LA, S> +
                              A::TN * operand_reads<Atom, TransposeB, LB, S>;  // LDS reads per lane per S k steps
    constexpr int ds = (dsPerRead * (reads - 1) + mmas - 1) / mmas, vm = (Sched::vmem + mmas - 1) / mmas;
    hw::sched_group_barrier<sched::kDsRead, dsPerRead, 0>();  // the first steps' operands
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
/// C = A * B for a warpgroup atom (C's old values ignored: no zeroing before),
/// waited for before returning.
template <class Atom, bool TransposeB, class A, class LA, class LB> TL_INLINE void gemm_overwrite(A &c, const LA &a, const LB &b) {
  static_assert(is_warpgroup_atom<Atom>, "gemm_overwrite: only warpgroup instructions ignore their accumulator");
  wgmma_issue<Atom, TransposeB, true>(c, a, b);
  wgmma_retire<0>(c);
}
/// Waits until at most InFlight groups that gemm_issue left running on C remain.
template <int InFlight, class A> TL_INLINE void gemm_wait(A &c) { wgmma_retire<InFlight>(c); }
#endif

#ifdef TL_HW_HAS_WGMMA
/// C += A * B with wgmma's register form, waited for before returning: A an
/// accumulator tile of a wgmma (f32, rounded to B's element type as a copy into
/// LDS would round it), B read from LDS as by wgmma_issue. Lane l's A
/// registers for the k step at k0 are its accumulator elements q .. q + 7, q =
/// k0 * E / N, of P's n-tile q / E, in pairs (tilec-select-matrix-instr keeps
/// this form only where that holds: accumulatorHoldsOperandA).
template <class Atom, bool TransposeB, class A, class P, class LB> TL_INLINE void wgmma_acc_a(A &c, const P &a, const LB &b) {
  using T = typename LB::elem;
  using WB = wgmma_layout<LB>;
  constexpr int E = P::E, N = P::atom::N, KT = P::cols, Steps = KT / Atom::K;
  static_assert(sizeof(T) == 2 && is_warpgroup_atom<typename P::atom> && P::rows == A::rows && P::wm == A::wm &&
                    P::wn == 1 && A::wn == 1 && KT % Atom::K == 0,
                "A's accumulator layout is wgmma's register-A layout of C's rows");
  static_assert(TransposeB ? WB::k_major : WB::mn_major,
                "wgmma: B's LDS layout is not a canonical swizzled layout (tilec-allocate-lds)");
  unsigned w[Steps][A::TM][4];
  TL_UNROLL
  for (int s = 0; s < Steps; ++s)
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int h = 0; h < 4; ++h) {
        const int q = s * Atom::K * E / N + 2 * h, tn = q / E, e = q % E;
        w[s][i][h] = pack2_f32<T>(a.v[i][tn][e], a.v[i][tn][e + 1]);
      }
  wgmma_begin(c);
  TL_UNROLL
  for (int s = 0; s < Steps; ++s)
    TL_UNROLL
    for (int i = 0; i < A::TM; ++i)
      TL_UNROLL
      for (int j = 0; j < A::TN; ++j) {
        const int k0 = s * Atom::K, n0 = A::wave_n() * A::WTN + j * Atom::N;
        const unsigned long long db = TransposeB ? WB::k_major_desc(b, n0, k0) : WB::mn_major_desc(b, k0, n0);
        hw::wgmma_m64k16_rs<Atom::type, Atom::N, !TransposeB>(c.v[i][j], w[s][i], db, 1);
      }
  hw::wgmma_commit();
  wgmma_retire<0>(c);
}
#endif

#ifdef TL_HW_HAS_MMA_SYNC
/// C += A * B with A an accumulator tile in registers (f32, rounded to B's
/// element type as a copy into LDS would round it), for mma.sync: lane l's A
/// element r of the 16 x 16 block at k0 is its accumulator element r % E of
/// the n-tile k0 / 8 + r / E (two adjacent m16n8 accumulators are one A
/// fragment). tilec-infer-layouts emits this only where that holds
/// (accumulatorHoldsOperandA) and A and C split their rows alike over waves
/// holding whole rows.
template <class Atom, bool TransposeB, class A, class P, class LB>
TL_INLINE void mma_acc_a(A &c, const P &a, const LB &b) {
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
        w[q] = pack2_f32<T>(a.v[i][tn][r % E], a.v[i][tn][(r + 1) % E]);
      }
      af[i] = __builtin_bit_cast(typename Atom::a_t, w);
    }
    mma_k_step<Atom, TransposeB>(c, af, b, k0, l);
  }
}

/// C += A * B with A an accumulator tile in registers: wgmma's register form
/// (wgmma_acc_a) or mma.sync's A fragments (mma_acc_a).
template <class Atom, bool TransposeB, class Sched = Schedule<>, class A, class P, class LB>
TL_INLINE void gemm_acc_a(A &c, const P &a, const LB &b) {
#ifdef TL_HW_HAS_WGMMA
  if constexpr (is_warpgroup_atom<Atom>)
    wgmma_acc_a<Atom, TransposeB>(c, a, b);
  else
#endif
    mma_acc_a<Atom, TransposeB>(c, a, b);
}

#endif

} // namespace tl
