// tilec hardware layer for NVIDIA GPUs (sm_90a; compiled by clang 19 as CUDA
// device code, then to a cubin by the CUDA toolkit's nvJitLink): the few
// operations the tile primitives (tilec_tiles.h) need, as NVPTX builtins and
// PTX. The AMD layer (tilec_hw_amdgcn.h) and the CPU emulator's layer
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
#define TL_LDS(name, bytes) extern __shared__ __attribute__((aligned(16))) unsigned char name[]

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

// --- floating-point arithmetic the prelude's math is built from (tilec_tiles.h) ----
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

// --- matrix instructions (PTX ISA, mma.m16n8k16 fragments) ---------------------------------
// A: four 32-bit registers of two elements each, B: two, C/D: four f32. Not
// volatile: the instruction has no side effects, so ptxas may schedule it.
TL_INLINE float4_t mma_m16n8k16_bf16(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%10,%11,%12,%13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                 "f"(c[2]), "f"(c[3]));
  return d;
}
TL_INLINE float4_t mma_m16n8k16_f16(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%10,%11,%12,%13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                 "f"(c[2]), "f"(c[3]));
  return d;
}

} // namespace hw
} // namespace tl
