// tilec hardware layer for AMDGPU (gfx9 / gfx11): the few operations the
// tile primitives (tilec_scalars.h and the headers after it in
// lib/Emit/CMakeLists.txt) need, as clang builtins. The CPU wavefront
// emulator provides the same layer with host implementations, so the kernel
// text and the tile primitives are identical on both.
#pragma once

// hipRTC brings its own HIP headers; the in-process clang path has none.
#ifndef __HIPCC_RTC__
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#endif
#define TL_LAUNCH_BOUNDS(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
/// At most 256 registers per lane (an occupancy of 2 waves per SIMD): on
/// gfx90a/gfx942 clang then selects the MFMAs' form with accumulators in arch
/// VGPRs instead of AGPRs, so vector instructions read them without moves.
#define TL_VGPR_ACCUMULATORS __attribute__((amdgpu_waves_per_eu(2)))
#define TL_INLINE __attribute__((device, always_inline)) inline
/// Loops over a tile's registers: clang's AMDGPU unroller already unrolls
/// them fully (it favours loops over private arrays).
#define TL_UNROLL
/// A kernel's LDS: a static array of the size tilec-allocate-lds computed.
#define TL_LDS(name, bytes) __shared__ __attribute__((aligned(16))) unsigned char name[bytes]

// Every AMD target has the 16-bit MFMAs' builtins (gfx90a and newer), DPP and
// ds_swizzle; TL_HW_HAS_* say so to the tile primitives, which other hardware
// layers share.
#define TL_HW_HAS_MFMA 1
#define TL_HW_HAS_DPP 1

namespace tl {

namespace hw {

// --- work-items -----------------------------------------------------------------
TL_INLINE int thread_id() { return (int)__builtin_amdgcn_workitem_id_x(); }
TL_INLINE int block_id(int axis) {
  return axis == 0 ? (int)__builtin_amdgcn_workgroup_id_x()
                   : axis == 1 ? (int)__builtin_amdgcn_workgroup_id_y() : (int)__builtin_amdgcn_workgroup_id_z();
}
TL_INLINE void barrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// --- scheduling controls (docs/hardware.md section 5) ---------------------------------
// Template arguments: the builtins take integer constants. Compilers without a
// builtin (the hipRTC of ROCm 5.x lacks sched_group_barrier) get a no-op.
template <int Mask, int Count, int SyncId> TL_INLINE void sched_group_barrier() {
#if __has_builtin(__builtin_amdgcn_sched_group_barrier)
  __builtin_amdgcn_sched_group_barrier(Mask, Count, SyncId);
#endif
}
template <int Mask> TL_INLINE void sched_barrier() {
#if __has_builtin(__builtin_amdgcn_sched_barrier)
  __builtin_amdgcn_sched_barrier(Mask);
#endif
}
template <int Priority> TL_INLINE void s_setprio() { __builtin_amdgcn_s_setprio(Priority); }

// --- buffer resources (docs/hardware.md section 4) --------------------------------------
// Loads take a VGPR byte offset `off` and a wave-uniform SGPR byte offset
// `soff` (soffset). gfx9 checks only `off` against num_records, so callers
// pass a nonzero `soff` only for accesses that lie wholly inside the buffer,
// where the targets' range checks agree.
#define TL_HW_HAS_SOFFSET 1
#if __has_builtin(__builtin_amdgcn_make_buffer_rsrc)
// clang >= 19: typed buffer resources and builtins.
typedef __amdgpu_buffer_rsrc_t rsrc_t;
TL_INLINE rsrc_t make_rsrc(const void *p, int numRecordsBytes, unsigned flags) {
  return __builtin_amdgcn_make_buffer_rsrc((void *)p, 0, numRecordsBytes, flags);
}
TL_INLINE unsigned char buffer_load_b8(rsrc_t r, int off, int soff = 0) { return __builtin_amdgcn_raw_buffer_load_b8(r, off, soff, 0); }
TL_INLINE unsigned short buffer_load_b16(rsrc_t r, int off, int soff = 0) { return __builtin_amdgcn_raw_buffer_load_b16(r, off, soff, 0); }
TL_INLINE unsigned buffer_load_b32(rsrc_t r, int off, int soff = 0) { return __builtin_amdgcn_raw_buffer_load_b32(r, off, soff, 0); }
TL_INLINE uint2_t buffer_load_b64(rsrc_t r, int off, int soff = 0) { return __builtin_amdgcn_raw_buffer_load_b64(r, off, soff, 0); }
TL_INLINE uint4_t buffer_load_b128(rsrc_t r, int off, int soff = 0) { return __builtin_amdgcn_raw_buffer_load_b128(r, off, soff, 0); }
TL_INLINE void buffer_store_b8(unsigned char v, rsrc_t r, int off) { __builtin_amdgcn_raw_buffer_store_b8(v, r, off, 0, 0); }
TL_INLINE void buffer_store_b16(unsigned short v, rsrc_t r, int off) { __builtin_amdgcn_raw_buffer_store_b16(v, r, off, 0, 0); }
TL_INLINE void buffer_store_b32(unsigned v, rsrc_t r, int off) { __builtin_amdgcn_raw_buffer_store_b32(v, r, off, 0, 0); }
TL_INLINE void buffer_store_b64(uint2_t v, rsrc_t r, int off) { __builtin_amdgcn_raw_buffer_store_b64(v, r, off, 0, 0); }
TL_INLINE void buffer_store_b128(uint4_t v, rsrc_t r, int off) { __builtin_amdgcn_raw_buffer_store_b128(v, r, off, 0, 0); }
#else
// Older compilers (e.g. the hipRTC of ROCm 5.x): the V# as four dwords and the
// LLVM intrinsics reached through asm labels.
typedef int rsrc_t __attribute__((ext_vector_type(4)));
__device__ int tl_raw_buffer_load_i32(rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.load.i32");
typedef int tl_int2_t __attribute__((ext_vector_type(2)));
__device__ tl_int2_t tl_raw_buffer_load_v2i32(rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.load.v2i32");
__device__ rsrc_t tl_raw_buffer_load_v4i32(rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.load.v4i32");
__device__ short tl_raw_buffer_load_i16(rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.load.i16");
__device__ char tl_raw_buffer_load_i8(rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.load.i8");
__device__ void tl_raw_buffer_store_i32(int, rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.store.i32");
__device__ void tl_raw_buffer_store_v2i32(tl_int2_t, rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.store.v2i32");
__device__ void tl_raw_buffer_store_v4i32(rsrc_t, rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.store.v4i32");
__device__ void tl_raw_buffer_store_i16(short, rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.store.i16");
__device__ void tl_raw_buffer_store_i8(char, rsrc_t, int, int, int) __asm("llvm.amdgcn.raw.buffer.store.i8");
TL_INLINE rsrc_t make_rsrc(const void *p, int numRecordsBytes, unsigned flags) {
  unsigned long long a = (unsigned long long)p;
  rsrc_t r;
  r.x = (int)(unsigned)a;                 // base address bits 0-31
  r.y = (int)(unsigned)(a >> 32) & 0xffff; // base address bits 32-47, stride 0
  r.z = numRecordsBytes;                  // num_records (bytes, raw mode)
  r.w = (int)flags;                       // word 3 flags
  return r;
}
TL_INLINE unsigned char buffer_load_b8(rsrc_t r, int off, int soff = 0) { return (unsigned char)tl_raw_buffer_load_i8(r, off, soff, 0); }
TL_INLINE unsigned short buffer_load_b16(rsrc_t r, int off, int soff = 0) { return (unsigned short)tl_raw_buffer_load_i16(r, off, soff, 0); }
TL_INLINE unsigned buffer_load_b32(rsrc_t r, int off, int soff = 0) { return (unsigned)tl_raw_buffer_load_i32(r, off, soff, 0); }
TL_INLINE uint2_t buffer_load_b64(rsrc_t r, int off, int soff = 0) { return __builtin_bit_cast(uint2_t, tl_raw_buffer_load_v2i32(r, off, soff, 0)); }
TL_INLINE uint4_t buffer_load_b128(rsrc_t r, int off, int soff = 0) { return __builtin_bit_cast(uint4_t, tl_raw_buffer_load_v4i32(r, off, soff, 0)); }
TL_INLINE void buffer_store_b8(unsigned char v, rsrc_t r, int off) { tl_raw_buffer_store_i8((char)v, r, off, 0, 0); }
TL_INLINE void buffer_store_b16(unsigned short v, rsrc_t r, int off) { tl_raw_buffer_store_i16((short)v, r, off, 0, 0); }
TL_INLINE void buffer_store_b32(unsigned v, rsrc_t r, int off) { tl_raw_buffer_store_i32((int)v, r, off, 0, 0); }
TL_INLINE void buffer_store_b64(uint2_t v, rsrc_t r, int off) { tl_raw_buffer_store_v2i32(__builtin_bit_cast(tl_int2_t, v), r, off, 0, 0); }
TL_INLINE void buffer_store_b128(uint4_t v, rsrc_t r, int off) { tl_raw_buffer_store_v4i32(__builtin_bit_cast(rsrc_t, v), r, off, 0, 0); }
#endif

/// Bytes [s, s + 4) of the 8 bytes hi:lo (s in 0..3): v_alignbyte_b32, how a
/// row that is not 4-byte aligned is realigned after aligned loads
/// (Global::load_unaligned in tilec_global.h).
TL_INLINE unsigned align_bytes(unsigned hi, unsigned lo, int s) { return __builtin_amdgcn_alignbyte(hi, lo, (unsigned)s); }

/// v_perm_b32: byte i of the result is byte sel.byte[i] of the 8 bytes hi:lo
/// (selector bytes 0-7; the transposed LDS writes use no others).
#define TL_HW_HAS_PERM 1
TL_INLINE unsigned perm_bytes(unsigned hi, unsigned lo, unsigned sel) { return __builtin_amdgcn_perm(hi, lo, sel); }

// --- LDS ------------------------------------------------------------------------
template <class T> TL_INLINE T lds_read(const T *p) { return *p; }
template <class T> TL_INLINE void lds_write(T *p, T v) { *p = v; }

// --- cross-lane (docs/hardware.md section 5) -------------------------------------------
TL_INLINE int lane_id() { return (int)__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
/// Each lane reads the value of lane byteIndex / 4.
TL_INLINE int ds_bpermute(int byteIndex, int v) { return __builtin_amdgcn_ds_bpermute(byteIndex, v); }
/// DPP moves within rows of 16 lanes (section 5; the value is bit-cast: clang
/// 19's update_dpp takes int). Ctrl: 0x00-0xFF quad_perm (lane reads lane
/// (l & ~3) | sel[l & 3], sel = 2-bit fields of ctrl), 0x140 row_mirror (reads
/// 15 - l within the row), 0x141 row_half_mirror (7 - l within each 8),
/// 0x160 + m row_xmask (reads l ^ m within the row; gfx11 only).
template <int Ctrl> TL_INLINE float dpp(float x) {
  return __builtin_bit_cast(float, __builtin_amdgcn_mov_dpp(__builtin_bit_cast(int, x), Ctrl, 0xF, 0xF, true));
}
/// ds_swizzle in bitmask mode, XOR 16 within 32-lane groups (offset 0x401F).
TL_INLINE float swizzle_xor16(float x) {
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_swizzle(__builtin_bit_cast(int, x), 0x401F));
}

// --- floating-point arithmetic the prelude's math is built from (tilec_scalars.h) ---
// v_exp_f32, v_log_f32 and v_rcp_f32 approximate to within 1 ulp and handle
// no subnormals (LLVM's AMDGPUUsage; its own lowering of exp2, log2 and
// division scales around them): exp2 may give 0 where 2^x is below 2^-126,
// log2 and rcp must not be given a subnormal, and rcp's result must be normal.
// fma is the fused v_fma_f32 (one rounding); kernels are compiled with
// -ffp-contract=off, so it is the only way a fused multiply-add arises.
// Compilers without the amdgcn builtins (the hipRTC of ROCm 5.x, LLVM < 17)
// select v_exp_f32 and v_log_f32 for llvm.exp2 and llvm.log2 themselves.
#if __has_builtin(__builtin_amdgcn_exp2f)
TL_INLINE float exp2(float x) { return __builtin_amdgcn_exp2f(x); }
#else
TL_INLINE float exp2(float x) { return __builtin_exp2f(x); }
#endif
#if __has_builtin(__builtin_amdgcn_logf)
TL_INLINE float log2(float x) { return __builtin_amdgcn_logf(x); }
#else
TL_INLINE float log2(float x) { return __builtin_log2f(x); }
#endif
TL_INLINE float rcp(float x) { return __builtin_amdgcn_rcpf(x); }
// v_sqrt_f32 and v_rsq_f32: 1 ulp, no subnormal operands (as rcp).
#if __has_builtin(__builtin_amdgcn_sqrtf)
TL_INLINE float sqrt(float x) { return __builtin_amdgcn_sqrtf(x); }
#else
TL_INLINE float sqrt(float x) { return __builtin_sqrtf(x); }
#endif
TL_INLINE float rsq(float x) { return __builtin_amdgcn_rsqf(x); }
TL_INLINE float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

// --- matrix instructions (docs/hardware.md sections 1-2) -------------------------------
TL_INLINE float16_t mfma_f32_32x32x8bf16_1k(short4_t a, short4_t b, float16_t c) {
  return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);
}
TL_INLINE float4_t mfma_f32_16x16x16bf16_1k(short4_t a, short4_t b, float4_t c) {
  return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
}
TL_INLINE float16_t mfma_f32_32x32x8f16(half4_t a, half4_t b, float16_t c) {
  return __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
}
TL_INLINE float4_t mfma_f32_16x16x16f16(half4_t a, half4_t b, float4_t c) {
  return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
}
// Newer instructions are guarded: an older compiler (hipRTC of ROCm 5.x) lacks
// their builtins; TL_HW_HAS_* tell tilec_atoms.h which atoms it can define.
// fp8 (e4m3fnuz) on gfx942 only: each operand is 8 bytes, byte j = bits 8j..8j+7.
#if __has_builtin(__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8)
#define TL_HW_HAS_FP8_MFMA 1
TL_INLINE float16_t mfma_f32_32x32x16_fp8_fp8(long a, long b, float16_t c) {
  return __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(a, b, c, 0, 0, 0);
}
TL_INLINE float4_t mfma_f32_16x16x32_fp8_fp8(long a, long b, float4_t c) {
  return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a, b, c, 0, 0, 0);
}
#endif
// bf8 (e5m2fnuz) on gfx942 only: the fp8 instructions' operand layout (section 1).
#if __has_builtin(__builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8)
#define TL_HW_HAS_BF8_MFMA 1
TL_INLINE float16_t mfma_f32_32x32x16_bf8_bf8(long a, long b, float16_t c) {
  return __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(a, b, c, 0, 0, 0);
}
TL_INLINE float4_t mfma_f32_16x16x32_bf8_bf8(long a, long b, float4_t c) {
  return __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(a, b, c, 0, 0, 0);
}
#endif
// WMMA on gfx11, wave32 only (section 2): the _w32 builtins.
#if __has_builtin(__builtin_amdgcn_wmma_f32_16x16x16_f16_w32)
#define TL_HW_HAS_WMMA 1
TL_INLINE float8_t wmma_f32_16x16x16_f16_w32(half16_t a, half16_t b, float8_t c) {
  return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c);
}
TL_INLINE float8_t wmma_f32_16x16x16_bf16_w32(short16_t a, short16_t b, float8_t c) {
  return __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, c);
}
#endif

} // namespace hw
} // namespace tl
