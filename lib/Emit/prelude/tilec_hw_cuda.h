// tilec hardware layer for NVIDIA GPUs (sm_90a; compiled by clang 19 as CUDA
// device code, then to a cubin by the CUDA toolkit's nvJitLink): the few
// operations the tile primitives (tilec_scalars.h and the headers after it
// in lib/Emit/CMakeLists.txt) need, as NVPTX builtins and PTX. The AMD layer (tilec_hw_amdgcn.h) and the CPU emulator's layer
// (tilec_hw_emu.h) provide the same operations, so kernel text and tile
// primitives are shared (docs/hardware.md, "NVIDIA Hopper").
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define TL_LAUNCH_BOUNDS(n) __attribute__((launch_bounds(n)))
#define TL_INLINE __attribute__((device, always_inline)) inline
/// Loops over a tile's registers run a compile-time number of times; NVPTX's
/// unroller leaves them rolled (its thresholds are low), and a rolled loop
/// over a register array puts the array in local memory.
#define TL_UNROLL _Pragma("unroll")
/// A kernel's LDS: dynamic shared memory, sized at launch (a block may use
/// more than the 48 KiB that static shared arrays are limited to).
/// 1024-byte aligned: wgmma's swizzled operand layouts repeat every 1024 bytes
/// of the shared window (tilec_atoms.h, wgmma_layout).
#define TL_LDS(name, bytes) extern __shared__ __attribute__((aligned(1024))) unsigned char name[]

namespace tl {

#define TL_HW_HAS_MMA_SYNC 1

namespace hw {

// --- work-items -----------------------------------------------------------------
TL_INLINE int thread_id() { return __nvvm_read_ptx_sreg_tid_x(); }
TL_INLINE int block_id(int axis) {
  return axis == 0 ? __nvvm_read_ptx_sreg_ctaid_x()
                   : axis == 1 ? __nvvm_read_ptx_sreg_ctaid_y() : __nvvm_read_ptx_sreg_ctaid_z();
}
/// bar.sync 0: orders shared and global memory accesses of the block's threads.
TL_INLINE void barrier() { __nvvm_bar_sync(0); }

// --- conversions ------------------------------------------------------------------
// Two f32 rounded to nearest even into one register of two 16-bit values, lo in
// the low half: one cvt for the pair instead of the bit arithmetic of
// tl::from_f32 per value (identical results; a NaN becomes the canonical one).
#define TL_HW_HAS_CVT_X2 1
TL_INLINE unsigned cvt_bf16x2(float lo, float hi) {
  unsigned d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
TL_INLINE unsigned cvt_f16x2(float lo, float hi) {
  unsigned d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
// Two f32 into two OCP fp8 codes, lo in the low byte: one cvt.rn.satfinite
// (sm_89 and later) for the pair instead of tl::from_f32's encoder per value,
// which rounds and saturates the same way (a NaN becomes the canonical one).
#define TL_HW_HAS_CVT_FP8X2 1
TL_INLINE unsigned cvt_e4m3x2(float lo, float hi) {
  unsigned short d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
TL_INLINE unsigned cvt_e5m2x2(float lo, float hi) {
  unsigned short d;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}

// --- scheduling controls: AMD's only; ptxas schedules NVIDIA code --------------------
template <int Mask, int Count, int SyncId> TL_INLINE void sched_group_barrier() {}
template <int Mask> TL_INLINE void sched_barrier() {}
template <int Priority> TL_INLINE void s_setprio() {}

// --- bounded global accesses ---------------------------------------------------------
// NVIDIA has no buffer resources: a "resource" is a base pointer and a byte
// count, and an access whose bytes do not all lie below the count reads 0 or
// is dropped, as AMD's raw buffer accesses are (docs/hardware.md section 4):
// the tile primitives rely on that for ragged edges.
struct rsrc_t {
  const char *base;
  unsigned bytes;
};
TL_INLINE rsrc_t make_rsrc(const void *p, int numRecordsBytes, unsigned) {
  return rsrc_t{(const char *)p, (unsigned)numRecordsBytes};
}
template <class T> TL_INLINE T bounded_load(rsrc_t r, int off) {
  if ((unsigned)off + sizeof(T) <= r.bytes)
    return *(const T *)(r.base + off);
  return T{};
}
template <class T> TL_INLINE void bounded_store(T v, rsrc_t r, int off) {
  if ((unsigned)off + sizeof(T) <= r.bytes)
    *(T *)(r.base + off) = v;
}
TL_INLINE unsigned char buffer_load_b8(rsrc_t r, int off) { return bounded_load<unsigned char>(r, off); }
TL_INLINE unsigned short buffer_load_b16(rsrc_t r, int off) { return bounded_load<unsigned short>(r, off); }
TL_INLINE unsigned buffer_load_b32(rsrc_t r, int off) { return bounded_load<unsigned>(r, off); }
TL_INLINE uint2_t buffer_load_b64(rsrc_t r, int off) { return bounded_load<uint2_t>(r, off); }
TL_INLINE uint4_t buffer_load_b128(rsrc_t r, int off) { return bounded_load<uint4_t>(r, off); }
TL_INLINE void buffer_store_b8(unsigned char v, rsrc_t r, int off) { bounded_store(v, r, off); }
TL_INLINE void buffer_store_b16(unsigned short v, rsrc_t r, int off) { bounded_store(v, r, off); }
TL_INLINE void buffer_store_b32(unsigned v, rsrc_t r, int off) { bounded_store(v, r, off); }
TL_INLINE void buffer_store_b64(uint2_t v, rsrc_t r, int off) { bounded_store(v, r, off); }
TL_INLINE void buffer_store_b128(uint4_t v, rsrc_t r, int off) { bounded_store(v, r, off); }
/// Bytes [s, s + 4) of the 8 bytes hi:lo (s in 0..3): a funnel shift
/// (shf.r), how a row that is not 4-byte aligned is realigned after aligned
/// loads (Global::load_unaligned in tilec_global.h).
TL_INLINE unsigned align_bytes(unsigned hi, unsigned lo, int s) {
  unsigned d;
  asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(lo), "r"(hi), "r"(8 * s));
  return d;
}

/// cp.async: `Bytes` (4, 8 or 16) from global memory at r.base + off to
/// shared memory at dst, zero-filled when the access does not lie wholly
/// below r.bytes (src-size 0: nothing is read). 16-byte copies bypass L1
/// (.cg). Completes asynchronously: async_commit closes a group, async_wait<N>
/// waits until at most N of this thread's groups are in flight.
template <int Bytes> TL_INLINE void copy_async(void *dst, rsrc_t r, int off) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async moves 4, 8 or 16 bytes");
  const bool in = (unsigned)off + Bytes <= r.bytes;
  const char *src = in ? r.base + off : r.base;
  const unsigned size = in ? Bytes : 0;
  if constexpr (Bytes == 16)
    asm volatile("{ .reg .u64 d; cvta.to.shared.u64 d, %0; cp.async.cg.shared.global [d], [%1], 16, %2; }"
                 :: "l"(dst), "l"(src), "r"(size) : "memory");
  else
    asm volatile("{ .reg .u64 d; cvta.to.shared.u64 d, %0; cp.async.ca.shared.global [d], [%1], %2, %3; }"
                 :: "l"(dst), "l"(src), "n"(Bytes), "r"(size) : "memory");
}
TL_INLINE void async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> TL_INLINE void async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
#define TL_HW_HAS_ASYNC_COPY 1

// --- shared memory -------------------------------------------------------------------
template <class T> TL_INLINE T lds_read(const T *p) { return *p; }
template <class T> TL_INLINE void lds_write(T *p, T v) { *p = v; }

// --- cross-lane ------------------------------------------------------------------------
TL_INLINE int lane_id() { return __nvvm_read_ptx_sreg_laneid(); }
/// Each lane reads the value of lane byteIndex / 4 (AMD's ds_bpermute, as a
/// warp shuffle; the whole warp takes part).
TL_INLINE int ds_bpermute(int byteIndex, int v) {
  return __nvvm_shfl_sync_idx_i32(0xffffffffu, v, (byteIndex >> 2) & 31, 0x1f);
}

/// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lanes 8i..8i+7 give the
/// addresses of the 8 rows (16 bytes each) of matrix i; lane l receives in
/// register i elements 2(l%4), 2(l%4)+1 of row l/4 of matrix i (.trans: of its
/// transpose). Reads shared memory: volatile with a memory clobber, so it stays
/// between the barriers that order it.
template <bool Trans> TL_INLINE uint4_t ldmatrix_x4(const void *row) {
  uint4_t r;
  if constexpr (Trans)
    asm volatile("{ .reg .u64 s; cvta.to.shared.u64 s, %4; ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                 "{%0,%1,%2,%3}, [s]; }"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "l"(row)
                 : "memory");
  else
    asm volatile("{ .reg .u64 s; cvta.to.shared.u64 s, %4; ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                 "{%0,%1,%2,%3}, [s]; }"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "l"(row)
                 : "memory");
  return r;
}

// --- floating-point arithmetic the prelude's math is built from (tilec_scalars.h) ---
// The multi-function unit's approximations, flushing subnormals as AMD's
// v_exp_f32 / v_log_f32 / v_rcp_f32 do (docs/hardware.md section 9):
// ex2.approx.ftz.f32 and lg2.approx.ftz.f32 (relative error about 2^-22 by
// the PTX ISA), rcp.approx.ftz.f32 (1 ulp). fma is fma.rn.f32 (one rounding);
// kernels are compiled with -ffp-contract=off, so it is the only fused
// multiply-add.
TL_INLINE float exp2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
TL_INLINE float log2(float x) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
TL_INLINE float rcp(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
/// sqrt.approx.ftz.f32 and rsqrt.approx.ftz.f32 (PTX ISA: relative error
/// about 2^-23, within the 1 ulp the prelude's bounds take).
TL_INLINE float sqrt(float x) {
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
TL_INLINE float rsq(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
TL_INLINE float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

// --- matrix instructions (PTX ISA, mma.m16n8k16 and m16n8k32 fragments) -------------------
// A: four 32-bit registers (two 16-bit or four 8-bit elements each), B: two,
// C/D: four f32. Not volatile: the instruction has no side effects, so ptxas
// may schedule it. TL_MMA_SYNC_OPERANDS completes `asm("<instruction> "` with
// the operand lists, the same for every shape and type here.
#define TL_MMA_SYNC_OPERANDS                                                                                       \
  "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"                                                     \
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                                            \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3])
TL_INLINE float4_t mma_m16n8k16_bf16(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 " TL_MMA_SYNC_OPERANDS);
  return d;
}
TL_INLINE float4_t mma_m16n8k16_f16(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 " TL_MMA_SYNC_OPERANDS);
  return d;
}
// fp8 (sm_89 and later; OCP formats, docs/hardware.md section 8): m16n8k32.
TL_INLINE float4_t mma_m16n8k32_e4m3(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 " TL_MMA_SYNC_OPERANDS);
  return d;
}
TL_INLINE float4_t mma_m16n8k32_e5m2(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 " TL_MMA_SYNC_OPERANDS);
  return d;
}
#undef TL_MMA_SYNC_OPERANDS

// --- warpgroup matrix instructions (wgmma, sm_90a; PTX ISA "Asynchronous Warpgroup
// Level Matrix Multiply-Accumulate") -------------------------------------------------
// The 4 warps of a warpgroup issue wgmma.mma_async together: D (64 x N, f32, in
// the warpgroup's registers) += A (64 x 16) * B (16 x N), A and B read from
// shared memory through 64-bit matrix descriptors (tilec_atoms.h builds them).
// The instruction runs asynchronously: wgmma_fence orders earlier register
// accesses of the accumulators before it, wgmma_commit closes a group of them,
// wgmma_wait<N> waits until at most N groups are in flight; until then the
// accumulators must not be touched (wgmma_fence_operand keeps the compiler from
// moving accesses across those points).
#define TL_HW_HAS_WGMMA 1

/// A lane's accumulator fragment of one wgmma (E = N / 2 f32 registers; the
/// emulator's layer checks every access against the instructions in flight).
template <int E> struct wgmma_frag {
  float v[E];
  TL_INLINE float &operator[](int i) { return v[i]; }
  TL_INLINE const float &operator[](int i) const { return v[i]; }
};
/// The shared-window address of a pointer into shared memory.
TL_INLINE unsigned smem_address(const void *p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
/// Makes this thread's earlier shared-memory writes (generic proxy: st.shared,
/// cp.async) visible to later reads through the async proxy (wgmma operands).
TL_INLINE void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// --- tensor copies (TMA) completing on mbarriers (docs/hardware.md, "Tensor
// copies") ---------------------------------------------------------------------
/// A tensor map (the driver's CUtensorMap): 128 opaque bytes that the runtime
/// encodes per launch with cuTensorMapEncodeTiled from the tensor's address
/// and extents and the box and swizzle the kernel's manifest entry names
/// (tensor_map). A kernel parameter, read in place by the tensor copies.
struct alignas(64) tma_map {
  unsigned long long opaque[16];
};
#define TL_TMA_MAP const tl::hw::tma_map
/// The generic address of tensor-map parameter `param`, whose PTX symbol is
/// `sym` (<kernel>_param_<index>). Not &param: clang 19 does not know
/// __grid_constant__ and copies a by-value parameter whose address is taken
/// into local memory; the copies must read the parameter in place.
#define TL_TMA_REF(param, sym)                                                                                         \
  (__extension__({                                                                                                     \
    const tl::hw::tma_map *tl_map_;                                                                                    \
    asm("{ .reg .u64 t; mov.u64 t, " #sym "; cvta.param.u64 %0, t; }" : "=l"(tl_map_));                               \
    tl_map_;                                                                                                           \
  }))
/// mbarrier operations on a 64-bit barrier in shared memory.
TL_INLINE void mbar_init(unsigned long long *bar, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(arrivals) : "memory");
}
/// Makes initialised mbarriers visible to the other threads and to the
/// async proxy (the tensor copies that complete on them).
TL_INLINE void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  fence_proxy_async();
}
/// Raises the bytes the barrier's current phase waits for.
TL_INLINE void mbar_expect_bytes(unsigned long long *bar, int bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}
TL_INLINE void mbar_arrive(unsigned long long *bar) {
  asm volatile("{ .reg .b64 s; mbarrier.arrive.shared::cta.b64 s, [%0]; }" ::"r"(smem_address(bar)) : "memory");
}
/// Waits until the phase of parity `parity` has completed.
TL_INLINE void mbar_wait(unsigned long long *bar, int parity) {
  unsigned done;
  do
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(smem_address(bar)), "r"(parity)
                 : "memory");
  while (!done);
}
/// Copies the box of `map` at element (row, col) (col innermost) into shared
/// memory at dst, in the map's swizzle; elements outside the tensor read 0.
/// Completes on `bar`: the box's bytes count against its expected bytes.
TL_INLINE void tma_load_2d(void *dst, const tma_map *map, int row, int col, unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               ::"r"(smem_address(dst)), "l"(map), "r"(col), "r"(row), "r"(smem_address(bar))
               : "memory");
}

/// The kernel's asynchronous copy groups (load_tile_async and the like close
/// one each) when some of them are tensor copies: group g completes on
/// mbarrier g % K, in its (g / K)-th phase. Thread 0 issues the tensor
/// copies and arrives once per group; every thread waits. A slot is reused K
/// groups later: each LDS buffer holds at most one group in flight, and K is
/// at least the kernel's number of copied LDS buffers, so every thread has
/// waited for group g before group g + K is issued.
template <int K> struct copy_groups {
  static_assert(K > 0 && (K & (K - 1)) == 0, "copy_groups: a power of two of barriers");
  unsigned long long *bars;
  int issued = 0, waited = 0;
  TL_INLINE explicit copy_groups(unsigned long long *b) : bars(b) {
    if (thread_id() == 0) {
      TL_UNROLL
      for (int k = 0; k < K; ++k)
        mbar_init(bars + k, 1);
      mbar_init_fence();
    }
    barrier();
  }
  /// The barrier of the group being filled.
  TL_INLINE unsigned long long *open() const { return bars + (issued & (K - 1)); }
  /// Closes the open group (after the cp.async group of the same copies).
  TL_INLINE void close() {
    if (thread_id() == 0)
      mbar_arrive(open());
    ++issued;
  }
  /// Waits until at most N groups are in flight.
  template <int N> TL_INLINE void wait() {
    async_wait<N>();
    for (; waited < issued - N; ++waited)
      mbar_wait(bars + (waited & (K - 1)), (waited / K) & 1);
  }
};
/// The kernel's copy groups, their K barriers at byte `offset` of its LDS.
#define TL_COPY_GROUPS(name, k, offset) tl::hw::copy_groups<k> name((unsigned long long *)(tl_lds + (offset)))
#define TL_HW_HAS_TENSOR_COPY 1

TL_INLINE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
TL_INLINE void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> TL_INLINE void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
/// Pins the accumulator registers at this point of the program (no code).
template <int E> TL_INLINE void wgmma_fence_operand(wgmma_frag<E> &d) {
  TL_UNROLL
  for (int i = 0; i < E; ++i)
    asm volatile("" : "+f"(d.v[i])::"memory");
}

// The accumulator operand lists of wgmma_m64k16, written out (inline assembly
// has no loops): "{%0, ..., %E-1}" and "+f"(d.v[0]), ... for E = N / 2.
#define TL_WGMMA_REGS_32 "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
  "}"
#define TL_WGMMA_OUTS_32(d) \
  "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), \
  "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), \
  "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), \
  "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31])
#define TL_WGMMA_REGS_64 "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
  "}"
#define TL_WGMMA_OUTS_64(d) \
  "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), \
  "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), \
  "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), \
  "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), \
  "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), \
  "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), \
  "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), \
  "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])
#define TL_WGMMA_REGS_128 "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
  "}"
#define TL_WGMMA_OUTS_128(d) \
  "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), \
  "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), \
  "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), \
  "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), \
  "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), \
  "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), \
  "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), \
  "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]), \
  "+f"(d.v[64]), "+f"(d.v[65]), "+f"(d.v[66]), "+f"(d.v[67]), "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]), \
  "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]), "+f"(d.v[76]), "+f"(d.v[77]), "+f"(d.v[78]), "+f"(d.v[79]), \
  "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]), "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]), \
  "+f"(d.v[88]), "+f"(d.v[89]), "+f"(d.v[90]), "+f"(d.v[91]), "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]), \
  "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]), "+f"(d.v[100]), "+f"(d.v[101]), "+f"(d.v[102]), "+f"(d.v[103]), \
  "+f"(d.v[104]), "+f"(d.v[105]), "+f"(d.v[106]), "+f"(d.v[107]), "+f"(d.v[108]), "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]), \
  "+f"(d.v[112]), "+f"(d.v[113]), "+f"(d.v[114]), "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]), "+f"(d.v[118]), "+f"(d.v[119]), \
  "+f"(d.v[120]), "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]), "+f"(d.v[124]), "+f"(d.v[125]), "+f"(d.v[126]), "+f"(d.v[127])
// One instruction per line, so that the report counts it in the PTX.
#define TL_WGMMA_ASM(N, E, TYPE)                                                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %[scale], 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE \
               "." TYPE " " TL_WGMMA_REGS_##E ", %[a], %[b], p, 1, 1, 0, %[tb];\n}"                          \
               : TL_WGMMA_OUTS_##E(d)                                                                         \
               : [a] "l"(a), [b] "l"(b), [scale] "r"(scaleD), [tb] "n"(BMnMajor ? 1 : 0)                        \
               : "memory")

/// Operand element types of wgmma_m64k16 (bf16, f16) and wgmma_m64k32 (e4m3, e5m2).
enum class wgmma_type { bf16, f16, e4m3, e5m2 };
/// The instruction for N (64, 128, 256) and T, written by ASM(N, N / 2, type).
#define TL_WGMMA_DISPATCH(ASM)                         \
  if constexpr (N == 64 && T == wgmma_type::bf16)      \
    ASM(64, 32, "bf16");                               \
  else if constexpr (N == 64)                          \
    ASM(64, 32, "f16");                                \
  else if constexpr (N == 128 && T == wgmma_type::bf16) \
    ASM(128, 64, "bf16");                              \
  else if constexpr (N == 128)                         \
    ASM(128, 64, "f16");                               \
  else if constexpr (T == wgmma_type::bf16)            \
    ASM(256, 128, "bf16");                             \
  else                                                 \
    ASM(256, 128, "f16")
/// wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16} (N = 64, 128, 256):
/// d = A * B + (scaleD ? d : 0), A K-major (imm-trans-a 0), B K-major
/// (BMnMajor false) or MN-major (BMnMajor true: imm-trans-b 1).
template <wgmma_type T, int N, bool BMnMajor>
TL_INLINE void wgmma_m64k16(wgmma_frag<N / 2> &d, unsigned long long a, unsigned long long b, int scaleD) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64k16: N is 64, 128 or 256");
  TL_WGMMA_DISPATCH(TL_WGMMA_ASM);
}
#undef TL_WGMMA_ASM

// The register form: A (64 x 16) from four 32-bit registers a lane, the
// mma.m16n8k16 A fragment of its warp's 16 rows (no imm-trans-a).
#define TL_WGMMA_RS_ASM(N, E, TYPE)                                                                   \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %[scale], 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE \
               "." TYPE " " TL_WGMMA_REGS_##E ", {%[a0], %[a1], %[a2], %[a3]}, %[b], p, 1, 1, %[tb];\n}"       \
               : TL_WGMMA_OUTS_##E(d)                                                                         \
               : [a0] "r"(a[0]), [a1] "r"(a[1]), [a2] "r"(a[2]), [a3] "r"(a[3]), [b] "l"(b),                  \
                 [scale] "r"(scaleD), [tb] "n"(BMnMajor ? 1 : 0)                                              \
               : "memory")

/// wgmma_m64k16 with A in registers: a[0..3] hold A[r][2t..2t+1],
/// A[r+8][2t..], A[r][2t+8..], A[r+8][2t+8..] for r = 16 (warp) + lane % 32 / 4,
/// t = lane % 4 (PTX ISA, "WGMMA .m64nNk16 register fragment layout for
/// matrix A").
template <wgmma_type T, int N, bool BMnMajor>
TL_INLINE void wgmma_m64k16_rs(wgmma_frag<N / 2> &d, const unsigned (&a)[4], unsigned long long b, int scaleD) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64k16_rs: N is 64, 128 or 256");
  TL_WGMMA_DISPATCH(TL_WGMMA_RS_ASM);
}
#undef TL_WGMMA_RS_ASM
#undef TL_WGMMA_DISPATCH

/// wgmma.mma_async.sync.aligned.m64nNk32.f32.{e4m3,e5m2} (N = 64, 128, 256):
/// d = A * B + (scaleD ? d : 0), A and B K-major (8-bit operands take no
/// transpose operands).
#define TL_WGMMA_K32_ASM(N, E, TYPE)                                                                  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %[scale], 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k32.f32." TYPE \
               "." TYPE " " TL_WGMMA_REGS_##E ", %[a], %[b], p, 1, 1;\n}"                                    \
               : TL_WGMMA_OUTS_##E(d)                                                                         \
               : [a] "l"(a), [b] "l"(b), [scale] "r"(scaleD)                                                  \
               : "memory")
template <wgmma_type T, int N>
TL_INLINE void wgmma_m64k32(wgmma_frag<N / 2> &d, unsigned long long a, unsigned long long b, int scaleD) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64k32: N is 64, 128 or 256");
  static_assert(T == wgmma_type::e4m3 || T == wgmma_type::e5m2, "wgmma_m64k32: e4m3 or e5m2 operands");
  if constexpr (N == 64 && T == wgmma_type::e4m3)
    TL_WGMMA_K32_ASM(64, 32, "e4m3");
  else if constexpr (N == 64)
    TL_WGMMA_K32_ASM(64, 32, "e5m2");
  else if constexpr (N == 128 && T == wgmma_type::e4m3)
    TL_WGMMA_K32_ASM(128, 64, "e4m3");
  else if constexpr (N == 128)
    TL_WGMMA_K32_ASM(128, 64, "e5m2");
  else if constexpr (T == wgmma_type::e4m3)
    TL_WGMMA_K32_ASM(256, 128, "e4m3");
  else
    TL_WGMMA_K32_ASM(256, 128, "e5m2");
}
#undef TL_WGMMA_K32_ASM


} // namespace hw
} // namespace tl
