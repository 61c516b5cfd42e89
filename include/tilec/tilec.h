/* tilec compiler C ABI (libtilec_c): compile a shipped kernel, or tile IR, for
 * a target and get its code object, its bundle-manifest entry and its report,
 * from any language that calls C (Python's ctypes, Rust, Go, ...).
 *
 *   const char *keys[] = {"M", "N", "K"}, *values[] = {"4096", "4096", "4096"};
 *   tilec_compile_options opts = TILEC_COMPILE_OPTIONS_INIT;
 *   opts.target = "gfx942";
 *   tilec_compiled *k;
 *   if (tilec_compile_kernel("gemm", keys, values, 3, &opts, &k) != TILEC_COMPILE_OK) {
 *     fprintf(stderr, "%s\n", tilec_compile_last_error());
 *     return 1;
 *   }
 *   size_t size;
 *   const void *elf = tilec_compiled_code_object(k, &size);
 *   puts(tilec_compiled_manifest_entry(k));   (JSON, docs/runtime.md's schema)
 *   tilec_compiled_free(k);
 *
 * Every function is thread-safe (compiles run one at a time in a process) and
 * never aborts on bad input: a failed call returns a non-zero status and leaves
 * a message in tilec_compile_last_error() (per thread). Strings a
 * tilec_compiled returns live as long as it does.
 *
 * Versioning: TILEC_COMPILER_ABI_VERSION changes when a function's meaning or
 * a struct's layout changes incompatibly (the library's soname and its symbol
 * version TILEC_COMPILER_<N> change with it); tilec_compiler_abi_version()
 * says which one the loaded library implements. Option structs begin with
 * their size, so fields can be added at their end without a new version.
 * docs/integration.md describes the API. */
#ifndef TILEC_TILEC_H
#define TILEC_TILEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TILEC_C_API __attribute__((visibility("default")))
#else
#define TILEC_C_API
#endif

#define TILEC_COMPILER_ABI_VERSION 1

typedef enum tilec_compile_status {
  TILEC_COMPILE_OK = 0,
  TILEC_COMPILE_ERROR_INVALID_ARGUMENT = 1, /* a null pointer, an empty string, an options struct of unknown size */
  TILEC_COMPILE_ERROR_UNKNOWN_KERNEL = 2,   /* no shipped kernel of that name (the message lists them) */
  TILEC_COMPILE_ERROR_PARAM = 3,            /* an unknown parameter, a bad value, a key given twice */
  TILEC_COMPILE_ERROR_UNKNOWN_TARGET = 4,   /* a target tilec does not know (the message lists them) */
  TILEC_COMPILE_ERROR_COMPILE = 5,          /* the tile IR does not parse or verify, or code generation failed */
  TILEC_COMPILE_ERROR_IO = 6,               /* a bundle folder could not be written */
  /* Not a status: makes every non-negative int a value of the type, so that
     tilec_compile_status_name may be asked about any value a caller holds. */
  TILEC_COMPILE_STATUS_RANGE_ = 0x7fffffff
} tilec_compile_status;

typedef struct tilec_compile_options {
  size_t struct_size;     /* sizeof(tilec_compile_options) as the caller was compiled */
  const char *target;     /* gfx942, gfx90a, gfx1151, sm_90a; NULL: gfx942 */
  const char *jit;        /* "auto" (NULL), "hiprtc" or "clang" */
  int32_t use_cache;      /* non-zero: the on-disk caches of compiled kernels and code objects */
  const char *cache_dir;  /* NULL: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec */
} tilec_compile_options;

#define TILEC_COMPILE_OPTIONS_INIT {sizeof(tilec_compile_options), NULL, NULL, 1, NULL}

/* One compiled kernel for one target (opaque). */
typedef struct tilec_compiled tilec_compiled;

/* TILEC_COMPILER_ABI_VERSION of the loaded library. */
TILEC_C_API int tilec_compiler_abi_version(void);
/* tilec's version ("0.1.0"). */
TILEC_C_API const char *tilec_compiler_version(void);
/* The shipped kernels and their parameters, as JSON:
 * [{"name": "gemm", "summary": "...", "params": [{"name": "M", "default": "4096", "help": "...", "values": "an integer in [1, 2147483647]"}, ...]}, ...]. */
TILEC_C_API const char *tilec_compiler_kernels(void);

/* The default cache folder ($TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec,
 * else ~/.cache/tilec; "" when none is set). */
TILEC_C_API const char *tilec_compiler_cache_dir(void);

/* Compiles shipped kernel `kernel` with `num_params` parameters (keys[i] =
 * values[i], as `tilec -p KEY=VALUE`; the others take their defaults for the
 * target) for options->target. `options` NULL: TILEC_COMPILE_OPTIONS_INIT. */
TILEC_C_API tilec_compile_status tilec_compile_kernel(const char *kernel, const char *const *keys,
                                                      const char *const *values, size_t num_params,
                                                      const tilec_compile_options *options, tilec_compiled **out);

/* Compiles tile IR text (one kernel function, `size` bytes; it need not be
 * NUL-terminated). `buffer_name` names the text in diagnostics (NULL:
 * "<tile-ir>"). */
TILEC_C_API tilec_compile_status tilec_compile_tile_ir(const char *ir, size_t size, const char *buffer_name,
                                                       const tilec_compile_options *options, tilec_compiled **out);

/* Frees a compiled kernel; NULL is ignored. */
TILEC_C_API void tilec_compiled_free(tilec_compiled *compiled);

/* The code object (AMDGPU ELF, or an NVIDIA cubin): `*size` bytes. */
TILEC_C_API const void *tilec_compiled_code_object(const tilec_compiled *compiled, size_t *size);
/* The kernel's launch name (the configuration, without the target), as a
 * bundle's manifest names it. */
TILEC_C_API const char *tilec_compiled_name(const tilec_compiled *compiled);
/* Its entry in a bundle manifest: one JSON object of the `kernels` array of
 * manifest.json (docs/runtime.md): entry symbol, arguments, grid, block
 * size, shared memory, SHA-256 and code-object file name. */
TILEC_C_API const char *tilec_compiled_manifest_entry(const tilec_compiled *compiled);
/* The code-object report as JSON (registers, LDS, occupancy, spills, ...). */
TILEC_C_API const char *tilec_compiled_report(const tilec_compiled *compiled);
/* The tile IR after the target pipeline, and the generated HIP / CUDA C++. */
TILEC_C_API const char *tilec_compiled_tile_ir(const tilec_compiled *compiled);
TILEC_C_API const char *tilec_compiled_source(const tilec_compiled *compiled);

/* Adds the compiled kernel to the bundle folder `dir` (created if absent),
 * as `tilec --emit=bundle -o DIR` does: libtilec_rt then launches it. */
TILEC_C_API tilec_compile_status tilec_compiled_add_to_bundle(const tilec_compiled *compiled, const char *dir);

/* The message of this thread's last failed call ("" when none failed). */
TILEC_C_API const char *tilec_compile_last_error(void);
/* "TILEC_COMPILE_ERROR_PARAM", ...; "unknown status" for other values. */
TILEC_C_API const char *tilec_compile_status_name(tilec_compile_status status);

#ifdef __cplusplus
}
#endif

#endif /* TILEC_TILEC_H */
