/* tilec runtime (libtilec_rt): launch the kernels of a bundle that
 * `tilec --emit=bundle -o DIR` exported, on a CUDA or HIP device, without the
 * compiler. The library links only libc, libstdc++ and libdl; it loads the
 * vendor's driver (libcuda.so.1 or libamdhip64.so) when a launch needs it.
 *
 *   tilec_bundle *b;
 *   if (tilec_bundle_open("kernels", &b) != TILEC_OK) { puts(tilec_last_error()); ... }
 *   int64_t a_shape[2] = {M, K}, ...;
 *   tilec_arg args[3] = {tilec_tensor(a, "bf16", 2, a_shape), ...};
 *   tilec_status s = tilec_launch(b, "gemm_bf16_f32_128x128x32_w4_s2", args, 3, stream);
 *
 * Every function is thread-safe. A failed call returns its status and leaves
 * a message naming the kernel and argument in tilec_last_error() (per thread).
 * docs/runtime.md describes the bundle format and the checks. */
#ifndef TILEC_RUNTIME_H
#define TILEC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; these are its exports. */
#if defined(__GNUC__)
#define TILEC_RT_API __attribute__((visibility("default")))
#else
#define TILEC_RT_API
#endif

typedef enum tilec_status {
  TILEC_OK = 0,
  TILEC_ERROR_INVALID_ARGUMENT = 1,   /* a null bundle, name or output pointer */
  TILEC_ERROR_BUNDLE = 2,             /* unreadable or malformed bundle, code object missing or altered */
  TILEC_ERROR_UNKNOWN_KERNEL = 3,     /* no kernel of that name in the bundle */
  TILEC_ERROR_ARCH_NOT_IN_BUNDLE = 4, /* the kernel was not compiled for this device's architecture */
  TILEC_ERROR_ARG_COUNT = 5,          /* too many or too few arguments */
  TILEC_ERROR_ARG_KIND = 6,           /* a tensor where the kernel takes a scalar, or the reverse */
  TILEC_ERROR_DTYPE = 7,              /* the tensor's element type is not the kernel's */
  TILEC_ERROR_RANK = 8,               /* the tensor's rank is not the kernel's */
  TILEC_ERROR_DIVISIBILITY = 9,       /* an innermost extent or an i32 argument is not a multiple of the kernel's divisibility */
  TILEC_ERROR_ALIGNMENT = 10,         /* the data pointer is not aligned as the kernel's divisibility needs */
  TILEC_ERROR_NULL_POINTER = 11,      /* a tensor with elements has a null data pointer */
  TILEC_ERROR_TOO_LARGE = 12,         /* an extent or a grid axis >= 2^31, a tensor >= 2^31 bytes, a negative extent */
  TILEC_ERROR_NO_DEVICE = 13,         /* no CUDA / HIP driver could be loaded, or it reports no device */
  TILEC_ERROR_DRIVER = 14             /* a driver call failed; the message has the driver's error string */
} tilec_status;

typedef enum tilec_arg_kind { TILEC_ARG_TENSOR = 0, TILEC_ARG_F32 = 1, TILEC_ARG_I32 = 2 } tilec_arg_kind;

/* One launch argument. A tensor is a device pointer to row-major contiguous
 * data with `rank` extents; the kernel receives the pointer followed by one
 * int per extent. */
typedef struct tilec_arg {
  tilec_arg_kind kind;
  const char *dtype;     /* tensors: element type as the manifest names it: "bf16", "f16", "f32", "i32", ... */
  void *data;            /* tensors: device pointer */
  int32_t rank;          /* tensors */
  const int64_t *shape;  /* tensors: `rank` extents, outermost first */
  float f32;             /* TILEC_ARG_F32 */
  int32_t i32;           /* TILEC_ARG_I32 */
} tilec_arg;

/* What a launch of a kernel with given arguments uses. */
typedef struct tilec_launch_dims {
  int64_t grid[3];
  int32_t block[3];
  int64_t shared_bytes;  /* dynamic shared memory passed at launch (NVIDIA); 0 on AMD */
} tilec_launch_dims;

typedef struct tilec_bundle tilec_bundle;

static inline tilec_arg tilec_tensor(void *data, const char *dtype, int32_t rank, const int64_t *shape) {
  tilec_arg a = {TILEC_ARG_TENSOR, dtype, data, rank, shape, 0.0f, 0};
  return a;
}
static inline tilec_arg tilec_f32(float value) {
  tilec_arg a = {TILEC_ARG_F32, "f32", NULL, 0, NULL, value, 0};
  return a;
}
static inline tilec_arg tilec_i32(int32_t value) {
  tilec_arg a = {TILEC_ARG_I32, "i32", NULL, 0, NULL, 0.0f, value};
  return a;
}

/* Reads DIR/manifest.json. Code objects are read (and their SHA-256
 * checked) at the first launch that needs them. */
TILEC_RT_API tilec_status tilec_bundle_open(const char *dir, tilec_bundle **out);
/* Unloads the bundle's modules and frees it. NULL is ignored. */
TILEC_RT_API void tilec_bundle_close(tilec_bundle *bundle);

/* The distinct kernel names of the bundle (each may exist for several
 * targets), in manifest order; valid until tilec_bundle_close. */
TILEC_RT_API int tilec_bundle_kernel_count(const tilec_bundle *bundle);
TILEC_RT_API const char *tilec_bundle_kernel_name(const tilec_bundle *bundle, int index);

/* The bundle target the current device runs (sm_90a, gfx942, ...), written
 * to `buf` (NUL-terminated). Loads the driver if needed. */
TILEC_RT_API tilec_status tilec_device_target(tilec_bundle *bundle, char *buf, size_t size);

/* Checks `args` against kernel `name` as compiled for `target` and computes
 * the launch dimensions, without a device. */
TILEC_RT_API tilec_status tilec_check_launch(const tilec_bundle *bundle, const char *name, const char *target,
                                const tilec_arg *args, int num_args, tilec_launch_dims *dims);

/* Launches kernel `name` for the current device (CUDA: the current context,
 * else device 0's primary context; HIP: the current device) on `stream`
 * (a CUstream / hipStream_t; NULL: the default stream). Asynchronous, as the
 * driver's launch. A launch whose grid is empty does nothing and succeeds. */
TILEC_RT_API tilec_status tilec_launch(tilec_bundle *bundle, const char *name, const tilec_arg *args, int num_args,
                          void *stream);

/* The message of this thread's last failed call ("" when none failed). */
TILEC_RT_API const char *tilec_last_error(void);
/* "TILEC_ERROR_DTYPE", ... */
TILEC_RT_API const char *tilec_status_name(tilec_status status);

#ifdef __cplusplus
}
#endif

#endif /* TILEC_RUNTIME_H */
