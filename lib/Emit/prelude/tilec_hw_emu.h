// tilec hardware layer for the CPU wavefront emulator (lib/Emu): the
// operations of tilec_hw_amdgcn.h with the same names and semantics, compiled
// for the host. Every operation calls into the emulator runtime through the
// function table `tl_emu_abi` that the runtime installs after dlopen
// (tilec_emu_bind, generated next to the kernel). Lanes run as fibers; one OS
// thread runs all lanes of one workgroup at a time, so `__shared__` is
// `static thread_local` storage (the runtime finds it through the module's TLS
// block and fills it with poison bytes when a workgroup starts, as the
// hardware does not clear LDS).
//
// With TL_EMU_ABI_ONLY defined only the ABI table is declared: lib/Emu
// includes this file that way, so the table has one definition.
#pragma once

extern "C" {
/// A raw buffer resource (docs/hardware.md section 4): base, num_records (bytes), word 3.
struct tl_emu_rsrc {
  const void *base;
  unsigned numRecords;
  unsigned flags;
};

/// Wave-collective operations (all lanes of the wave rendezvous).
enum tl_emu_matrix_op {
  TL_EMU_MFMA_F32_32X32X8_BF16 = 0,   // short4 x short4 + float16
  TL_EMU_MFMA_F32_16X16X16_BF16 = 1,  // short4 x short4 + float4
  TL_EMU_MFMA_F32_32X32X8_F16 = 2,    // half4 x half4 + float16
  TL_EMU_MFMA_F32_16X16X16_F16 = 3,   // half4 x half4 + float4
  TL_EMU_WMMA_F32_16X16X16_F16_W32 = 4,   // half16 x half16 + float8 (wave32)
  TL_EMU_WMMA_F32_16X16X16_BF16_W32 = 5,  // short16 x short16 + float8 (wave32)
  TL_EMU_MFMA_F32_32X32X16_FP8_FP8 = 6,   // long (8 x e4m3fnuz) x long + float16
  TL_EMU_MFMA_F32_16X16X32_FP8_FP8 = 7,   // long (8 x e4m3fnuz) x long + float4
  TL_EMU_MFMA_F32_32X32X16_BF8_BF8 = 8,   // long (8 x e5m2fnuz) x long + float16
  TL_EMU_MFMA_F32_16X16X32_BF8_BF8 = 9,   // long (8 x e5m2fnuz) x long + float4
  TL_EMU_MMA_M16N8K16_BF16 = 10,  // NVIDIA mma.sync: uint4 (8 x bf16) x uint2 (4 x bf16) + float4 (warp of 32)
  TL_EMU_MMA_M16N8K16_F16 = 11,   // the same with f16 operands
  TL_EMU_MMA_M16N8K32_E4M3 = 12,  // NVIDIA mma.sync m16n8k32: uint4 (16 x OCP e4m3) x uint2 (8 x e4m3) + float4
  TL_EMU_MMA_M16N8K32_E5M2 = 13,  // the same with OCP e5m2 operands
};

#define TL_EMU_ABI_VERSION 8u
struct tl_emu_abi {
  unsigned version;
  int (*thread_id)(void);
  int (*block_id)(int axis);
  int (*lane_id)(void);
  void (*barrier)(void);
  /// Loads `bytes` (1, 2 or 4) at r->base + off; 0 when off is past num_records.
  unsigned (*buffer_load)(const struct tl_emu_rsrc *r, int off, int bytes);
  /// Stores `bytes` (1, 2 or 4); dropped when off is past num_records.
  void (*buffer_store)(const struct tl_emu_rsrc *r, int off, int bytes, unsigned value);
  /// Loads `bytes` (8 or 16) at r->base + off into *out; zeros when the access
  /// lies wholly past num_records. A misaligned or partly out-of-range access is
  /// reported (docs/hardware.md section 4: keep each access wholly in or out).
  void (*buffer_load_vec)(const struct tl_emu_rsrc *r, int off, int bytes, void *out);
  /// LDS access of `bytes` at p: reads into / writes from *value.
  void (*lds_access)(void *p, void *value, int bytes, int isWrite);
  int (*ds_bpermute)(int byteIndex, int value);
  /// d = op(a, b, c) for this lane's registers; a, b, c, d point at the lane's vectors.
  void (*matrix)(int op, const void *a, const void *b, const void *c, void *d);
  /// cp.async of `bytes` (4, 8 or 16) from r->base + off to the LDS at dst:
  /// the global bytes are read now (zeros unless the access lies wholly below
  /// num_records), the LDS write is queued in this lane's open copy group.
  void (*copy_async)(void *dst, const struct tl_emu_rsrc *r, int off, int bytes);
  /// Closes this lane's open copy group (possibly empty).
  void (*async_commit)(void);
  /// Performs the LDS writes of this lane's oldest groups until at most n remain.
  void (*async_wait)(int n);

  // Warpgroup matrix instructions (wgmma, tilec_hw_cuda.h): each lane computes
  // its own accumulator elements from the LDS bytes the descriptors locate.
  /// The shared-window address of p (its offset in the LDS).
  unsigned (*lds_address)(const void *p);
  /// wgmma.mma_async m64nNk16, f32 += `type` (0 bf16, 1 f16), or m64nNk32
  /// (2 e4m3, 3 e5m2; both operands K-major): queues d = A * B
  /// + (scaleD ? d : 0) for this lane's n / 2 elements of d; d is written
  /// when wgmma_wait retires the instruction's group.
  void (*wgmma)(int type, int n, int transB, unsigned long long descA, unsigned long long descB, float *d,
                int scaleD);
  void (*wgmma_fence)(void);
  void (*wgmma_commit)(void);
  void (*wgmma_wait)(int n);
  /// An access to the accumulator registers at p (reported while a wgmma
  /// that writes them is in flight).
  void (*wgmma_touch)(const float *p);

  /// Stores `bytes` (8 or 16) from *in at r->base + off; dropped when the
  /// access lies wholly past num_records. Misaligned or partly out-of-range
  /// accesses are reported, as for buffer_load_vec.
  void (*buffer_store_vec)(const struct tl_emu_rsrc *r, int off, int bytes, const void *in);

  /// wgmma's register form: as wgmma, with A given as the four registers of
  /// each lane of this lane's quad (quad[4 t + i]: register i of lane 4 (l / 4)
  /// + t; tilec_hw_cuda.h wgmma_m64k16_rs), from which it takes its two rows.
  void (*wgmma_rs)(int type, int n, int transB, const unsigned *quad, unsigned long long descB, float *d,
                   int scaleD);
};
}

#ifndef TL_EMU_ABI_ONLY

#define __global__
#define __device__
#define __shared__ static thread_local
#define TL_LAUNCH_BOUNDS(n)
#define TL_VGPR_ACCUMULATORS
#define TL_INLINE inline
#define TL_UNROLL
/// 1024-byte aligned as on sm_90a (tilec_hw_cuda.h): the emulator's shared-window
/// addresses are offsets in the module's thread-local block, which then starts
/// on such a boundary too.
#define TL_LDS(name, bytes) __shared__ __attribute__((aligned(1024))) unsigned char name[bytes]

namespace tl {

#define TL_HW_HAS_FP8_MFMA 1
#define TL_HW_HAS_BF8_MFMA 1
#define TL_HW_HAS_WMMA 1
#define TL_HW_HAS_MFMA 1
#define TL_HW_HAS_DPP 1
#define TL_HW_HAS_MMA_SYNC 1

namespace hw {

/// Installed by tilec_emu_bind before the first launch.
inline const tl_emu_abi *emu = nullptr;

// --- work-items -----------------------------------------------------------------
TL_INLINE int thread_id() { return emu->thread_id(); }
TL_INLINE int block_id(int axis) { return emu->block_id(axis); }
TL_INLINE void barrier() { emu->barrier(); }

// --- scheduling controls: no-ops (the emulator runs lanes in lockstep; order and
// priority of issue do not change results) ---------------------------------------
template <int Mask, int Count, int SyncId> TL_INLINE void sched_group_barrier() {}
template <int Mask> TL_INLINE void sched_barrier() {}
template <int Priority> TL_INLINE void s_setprio() {}

// --- buffer resources (docs/hardware.md section 4) --------------------------------------
typedef tl_emu_rsrc rsrc_t;
TL_INLINE rsrc_t make_rsrc(const void *p, int numRecordsBytes, unsigned flags) {
  return rsrc_t{p, (unsigned)numRecordsBytes, flags};
}
#define TL_HW_HAS_SOFFSET 1
/// The resource as the hardware addresses it with an SGPR offset: `soff`
/// bytes further on, num_records unchanged (gfx9 checks only the VGPR offset;
/// tilec passes a nonzero `soff` only for accesses wholly inside the buffer).
TL_INLINE rsrc_t with_soffset(rsrc_t r, int soff) { return rsrc_t{(const char *)r.base + soff, r.numRecords, r.flags}; }
TL_INLINE unsigned char buffer_load_b8(rsrc_t r, int off, int soff = 0) {
  const rsrc_t s = with_soffset(r, soff);
  return (unsigned char)emu->buffer_load(&s, off, 1);
}
TL_INLINE unsigned short buffer_load_b16(rsrc_t r, int off, int soff = 0) {
  const rsrc_t s = with_soffset(r, soff);
  return (unsigned short)emu->buffer_load(&s, off, 2);
}
TL_INLINE unsigned buffer_load_b32(rsrc_t r, int off, int soff = 0) {
  const rsrc_t s = with_soffset(r, soff);
  return emu->buffer_load(&s, off, 4);
}
TL_INLINE uint2_t buffer_load_b64(rsrc_t r, int off, int soff = 0) {
  const rsrc_t s = with_soffset(r, soff);
  uint2_t v;
  emu->buffer_load_vec(&s, off, 8, &v);
  return v;
}
TL_INLINE uint4_t buffer_load_b128(rsrc_t r, int off, int soff = 0) {
  const rsrc_t s = with_soffset(r, soff);
  uint4_t v;
  emu->buffer_load_vec(&s, off, 16, &v);
  return v;
}
TL_INLINE void buffer_store_b8(unsigned char v, rsrc_t r, int off) { emu->buffer_store(&r, off, 1, v); }
TL_INLINE void buffer_store_b16(unsigned short v, rsrc_t r, int off) { emu->buffer_store(&r, off, 2, v); }
TL_INLINE void buffer_store_b32(unsigned v, rsrc_t r, int off) { emu->buffer_store(&r, off, 4, v); }
TL_INLINE void buffer_store_b64(uint2_t v, rsrc_t r, int off) { emu->buffer_store_vec(&r, off, 8, &v); }
TL_INLINE void buffer_store_b128(uint4_t v, rsrc_t r, int off) { emu->buffer_store_vec(&r, off, 16, &v); }
/// Bytes [s, s + 4) of the 8 bytes hi:lo (s in 0..3): what AMD's
/// v_alignbyte_b32 and NVIDIA's shf.r compute.
TL_INLINE unsigned align_bytes(unsigned hi, unsigned lo, int s) {
  return (unsigned)((((unsigned long long)hi << 32) | lo) >> (8 * (s & 3)));
}
/// AMD's v_perm_b32 for selector bytes 0-7: byte i of the result is byte
/// sel.byte[i] of the 8 bytes hi:lo.
#define TL_HW_HAS_PERM 1
TL_INLINE unsigned perm_bytes(unsigned hi, unsigned lo, unsigned sel) {
  const unsigned long long both = (unsigned long long)hi << 32 | lo;
  unsigned v = 0;
  for (int i = 0; i < 4; ++i)
    v |= (unsigned)(both >> (8 * ((sel >> (8 * i)) & 7)) & 0xff) << (8 * i);
  return v;
}

// --- asynchronous copies (tilec_hw_cuda.h's cp.async): the LDS write of a
// copy happens when async_wait retires its group (or when the lane returns);
// until then any LDS access to its bytes is reported as a race ---------------------
template <int Bytes> TL_INLINE void copy_async(void *dst, rsrc_t r, int off) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async moves 4, 8 or 16 bytes");
  emu->copy_async(dst, &r, off, Bytes);
}
TL_INLINE void async_commit() { emu->async_commit(); }
template <int N> TL_INLINE void async_wait() { emu->async_wait(N); }
#define TL_HW_HAS_ASYNC_COPY 1

// --- tensor copies (tilec_hw_cuda.h's TMA): the emulator performs a tensor
// copy as the cooperative asynchronous copies it replaces (load_tile_tma
// without TL_HW_HAS_TENSOR_COPY), into the same LDS layout (Lds::index), in
// the same groups. A tensor map is then the tensor's pointer, unused ---------------
using tma_map = const void *;
#define TL_TMA_MAP tl::hw::tma_map
#define TL_TMA_REF(param, sym) (param)
template <int K> struct copy_groups {
  TL_INLINE void close() {}
  template <int N> TL_INLINE void wait() { async_wait<N>(); }
};
#define TL_COPY_GROUPS(name, k, offset) tl::hw::copy_groups<k> name

// --- LDS (recorded for the race checker and the bank-conflict counter) ------------
template <class T> TL_INLINE T lds_read(const T *p) {
  T v;
  emu->lds_access((void *)p, &v, (int)sizeof(T), 0);
  return v;
}
template <class T> TL_INLINE void lds_write(T *p, T v) { emu->lds_access((void *)p, &v, (int)sizeof(T), 1); }

// --- cross-lane (docs/hardware.md section 5) -------------------------------------------
TL_INLINE int lane_id() { return emu->lane_id(); }
/// Each lane reads the value of lane byteIndex / 4.
TL_INLINE int ds_bpermute(int byteIndex, int v) { return emu->ds_bpermute(byteIndex, v); }
/// DPP row moves and ds_swizzle XOR 16 (as tilec_hw_amdgcn.h), by the lane each
/// lane reads: the hardware's selection rules, through the wave's permute.
template <int Ctrl> TL_INLINE float dpp(float x) {
  const int l = lane_id(), r = l & 15;
  int src;
  if constexpr (Ctrl <= 0xFF)
    src = (l & ~3) | ((Ctrl >> (2 * (l & 3))) & 3);  // quad_perm
  else if constexpr (Ctrl == 0x140)
    src = (l & ~15) | (15 - r);                      // row_mirror
  else if constexpr (Ctrl == 0x141)
    src = (l & ~15) | (r & 8) | (7 - (r & 7));       // row_half_mirror
  else {
    static_assert(Ctrl >= 0x160 && Ctrl <= 0x16F, "dpp: control not modelled");
    src = (l & ~15) | (r ^ (Ctrl & 15));             // row_xmask (gfx11)
  }
  return __builtin_bit_cast(float, ds_bpermute(src * 4, __builtin_bit_cast(int, x)));
}
TL_INLINE float swizzle_xor16(float x) {
  const int l = lane_id();
  return __builtin_bit_cast(float, ds_bpermute(((l & ~31) | ((l & 31) ^ 16)) * 4, __builtin_bit_cast(int, x)));
}

// --- floating-point arithmetic (tilec_hw_amdgcn.h): the host's libm and
// division, which round at least as well as the hardware's 1-ulp
// approximations; tolerances cover the difference (docs/design.md, "Device
// math"). The host build is compiled with -ffp-contract=off, like the GPU's.
TL_INLINE float exp2(float x) { return __builtin_exp2f(x); }
TL_INLINE float log2(float x) { return __builtin_log2f(x); }
TL_INLINE float rcp(float x) { return 1.0f / x; }
TL_INLINE float sqrt(float x) { return __builtin_sqrtf(x); }
TL_INLINE float rsq(float x) { return 1.0f / __builtin_sqrtf(x); }
TL_INLINE float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

// --- matrix instructions (docs/hardware.md sections 1-2) -------------------------------
TL_INLINE float16_t mfma_f32_32x32x8bf16_1k(short4_t a, short4_t b, float16_t c) {
  float16_t d;
  emu->matrix(TL_EMU_MFMA_F32_32X32X8_BF16, &a, &b, &c, &d);
  return d;
}
TL_INLINE float4_t mfma_f32_16x16x16bf16_1k(short4_t a, short4_t b, float4_t c) {
  float4_t d;
  emu->matrix(TL_EMU_MFMA_F32_16X16X16_BF16, &a, &b, &c, &d);
  return d;
}
TL_INLINE float16_t mfma_f32_32x32x8f16(half4_t a, half4_t b, float16_t c) {
  float16_t d;
  emu->matrix(TL_EMU_MFMA_F32_32X32X8_F16, &a, &b, &c, &d);
  return d;
}
TL_INLINE float4_t mfma_f32_16x16x16f16(half4_t a, half4_t b, float4_t c) {
  float4_t d;
  emu->matrix(TL_EMU_MFMA_F32_16X16X16_F16, &a, &b, &c, &d);
  return d;
}
TL_INLINE float16_t mfma_f32_32x32x16_fp8_fp8(long a, long b, float16_t c) {
  float16_t d;
  emu->matrix(TL_EMU_MFMA_F32_32X32X16_FP8_FP8, &a, &b, &c, &d);
  return d;
}
TL_INLINE float4_t mfma_f32_16x16x32_fp8_fp8(long a, long b, float4_t c) {
  float4_t d;
  emu->matrix(TL_EMU_MFMA_F32_16X16X32_FP8_FP8, &a, &b, &c, &d);
  return d;
}
TL_INLINE float16_t mfma_f32_32x32x16_bf8_bf8(long a, long b, float16_t c) {
  float16_t d;
  emu->matrix(TL_EMU_MFMA_F32_32X32X16_BF8_BF8, &a, &b, &c, &d);
  return d;
}
TL_INLINE float4_t mfma_f32_16x16x32_bf8_bf8(long a, long b, float4_t c) {
  float4_t d;
  emu->matrix(TL_EMU_MFMA_F32_16X16X32_BF8_BF8, &a, &b, &c, &d);
  return d;
}
TL_INLINE float8_t wmma_f32_16x16x16_f16_w32(half16_t a, half16_t b, float8_t c) {
  float8_t d;
  emu->matrix(TL_EMU_WMMA_F32_16X16X16_F16_W32, &a, &b, &c, &d);
  return d;
}
TL_INLINE float8_t wmma_f32_16x16x16_bf16_w32(short16_t a, short16_t b, float8_t c) {
  float8_t d;
  emu->matrix(TL_EMU_WMMA_F32_16X16X16_BF16_W32, &a, &b, &c, &d);
  return d;
}

/// ldmatrix.sync.aligned.m8n8.x4[.trans] (as tilec_hw_cuda.h): each lane reads
/// its own 16-byte row from LDS (one access, so the race, alignment and bank
/// checkers see it), then the rows move between lanes through the wave's
/// permute: register i of lane l is word l%4 of lane 8i + l/4's row, or with
/// Trans the two halves at column l/4 of lanes 8i + 2(l%4) and 8i + 2(l%4) + 1.
template <bool Trans> TL_INLINE uint4_t ldmatrix_x4(const void *row) {
  const uint4_t mine = lds_read((const uint4_t *)row);
  const int l = lane_id();
  uint4_t out;
  for (int i = 0; i < 4; ++i) {
    unsigned lo[4], hi[4];
    const int src = Trans ? 8 * i + 2 * (l % 4) : 8 * i + l / 4;
    for (int q = 0; q < 4; ++q) {
      lo[q] = (unsigned)ds_bpermute(src * 4, (int)mine[q]);
      hi[q] = (unsigned)ds_bpermute((src + 1) * 4, (int)mine[q]);
    }
    if constexpr (Trans) {
      const int c = l / 4, shift = 16 * (c % 2);
      out[i] = ((lo[c / 2] >> shift) & 0xffffu) | ((hi[c / 2] >> shift) & 0xffffu) << 16;
    } else {
      out[i] = lo[l % 4];
    }
  }
  return out;
}
TL_INLINE float4_t mma_m16n8k16_bf16(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  emu->matrix(TL_EMU_MMA_M16N8K16_BF16, &a, &b, &c, &d);
  return d;
}
TL_INLINE float4_t mma_m16n8k16_f16(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  emu->matrix(TL_EMU_MMA_M16N8K16_F16, &a, &b, &c, &d);
  return d;
}
TL_INLINE float4_t mma_m16n8k32_e4m3(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  emu->matrix(TL_EMU_MMA_M16N8K32_E4M3, &a, &b, &c, &d);
  return d;
}
TL_INLINE float4_t mma_m16n8k32_e5m2(uint4_t a, uint2_t b, float4_t c) {
  float4_t d;
  emu->matrix(TL_EMU_MMA_M16N8K32_E5M2, &a, &b, &c, &d);
  return d;
}

// --- warpgroup matrix instructions (wgmma; tilec_hw_cuda.h): the emulator runs
// each lane's share of the instruction, reading A and B from LDS through the
// descriptors; the accumulators are written when wgmma_wait retires the group,
// and any access to them before that is reported -------------------------------------
#define TL_HW_HAS_WGMMA 1
template <int E> struct wgmma_frag {
  float v[E];
  TL_INLINE float &operator[](int i) {
    emu->wgmma_touch(v + i);
    return v[i];
  }
  TL_INLINE const float &operator[](int i) const {
    emu->wgmma_touch(v + i);
    return v[i];
  }
};
TL_INLINE unsigned smem_address(const void *p) { return emu->lds_address(p); }
/// Proxy ordering is not modelled: the emulator's wgmma reads LDS as it is.
TL_INLINE void fence_proxy_async() {}
TL_INLINE void wgmma_fence() { emu->wgmma_fence(); }
TL_INLINE void wgmma_commit() { emu->wgmma_commit(); }
template <int N> TL_INLINE void wgmma_wait() { emu->wgmma_wait(N); }
template <int E> TL_INLINE void wgmma_fence_operand(wgmma_frag<E> &) {}
/// The operand types, as the emulator's wgmma takes them (0 bf16, 1 f16, 2 e4m3, 3 e5m2).
enum class wgmma_type { bf16, f16, e4m3, e5m2 };
template <wgmma_type T, int N, bool BMnMajor>
TL_INLINE void wgmma_m64k16(wgmma_frag<N / 2> &d, unsigned long long a, unsigned long long b, int scaleD) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64k16: N is 64, 128 or 256");
  emu->wgmma((int)T, N, BMnMajor, a, b, d.v, scaleD);
}
template <wgmma_type T, int N>
TL_INLINE void wgmma_m64k32(wgmma_frag<N / 2> &d, unsigned long long a, unsigned long long b, int scaleD) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64k32: N is 64, 128 or 256");
  static_assert(T == wgmma_type::e4m3 || T == wgmma_type::e5m2, "wgmma_m64k32: e4m3 or e5m2 operands");
  emu->wgmma((int)T, N, 0, a, b, d.v, scaleD);
}
/// The register form: each lane gathers its quad's A registers (the rows it
/// multiplies) through lane shuffles, then issues as above.
template <wgmma_type T, int N, bool BMnMajor>
TL_INLINE void wgmma_m64k16_rs(wgmma_frag<N / 2> &d, const unsigned (&a)[4], unsigned long long b, int scaleD) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64k16_rs: N is 64, 128 or 256");
  const int quad = lane_id() & ~3;
  unsigned regs[16];
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 4; ++i)
      regs[4 * t + i] = (unsigned)ds_bpermute((quad + t) * 4, (int)a[i]);
  emu->wgmma_rs((int)T, N, BMnMajor, regs, b, d.v, scaleD);
}

} // namespace hw
} // namespace tl

#endif // TL_EMU_ABI_ONLY
