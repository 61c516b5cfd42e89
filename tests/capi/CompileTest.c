/* A C program (built as C99) over the compiler's C ABI: compiles the shipped
 * GEMM for gfx942 with parameters, checks the code object, manifest entry and
 * report it gets back, writes it into a bundle folder (argv[1]), and has
 * libtilec_rt read that bundle and check a launch of it for gfx942 (the grid
 * the manifest describes). Then a bad call: a non-zero status and a message.
 * Prints "N passed, N failed". */
#include "tilec/runtime.h"
#include "tilec/tilec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void check(int ok, const char *what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    fprintf(stderr, "FAILED: %s (compiler: '%s')\n", what, tilec_compile_last_error());
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s BUNDLE_DIR\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  check(tilec_compiler_abi_version() == TILEC_COMPILER_ABI_VERSION, "ABI version of the loaded library");
  check(strstr(tilec_compiler_kernels(), "\"name\":\"gemm\"") != NULL, "kernel list names gemm");

  const char *keys[] = {"M", "N", "K", "block_m", "block_n"};
  const char *values[] = {"256", "256", "64", "64", "64"};
  tilec_compile_options opts = TILEC_COMPILE_OPTIONS_INIT;
  opts.target = "gfx942";
  tilec_compiled *k = NULL;
  tilec_compile_status s = tilec_compile_kernel("gemm", keys, values, 5, &opts, &k);
  check(s == TILEC_COMPILE_OK && k != NULL, "compile gemm for gfx942");
  if (!k)
    goto summary;

  size_t size = 0;
  const unsigned char *co = (const unsigned char *)tilec_compiled_code_object(k, &size);
  check(size > 64 && co && memcmp(co, "\177ELF", 4) == 0, "code object is an ELF");
  const char *name = tilec_compiled_name(k);
  check(strncmp(name, "gemm_bf16_f32_64x64x32", 22) == 0, "launch name encodes block_m/block_n");
  const char *entry = tilec_compiled_manifest_entry(k);
  check(strstr(entry, "\"target\": \"gfx942\"") != NULL, "manifest entry names the target");
  check(strstr(entry, "\"block_m\": \"64\"") != NULL, "manifest entry records the parameters");
  check(strstr(tilec_compiled_report(k), "\"vgpr\"") != NULL, "report is the JSON report");
  check(strstr(tilec_compiled_tile_ir(k), "tile.") != NULL, "tile IR after the pipeline");

  /* Into a bundle, then through the runtime: no device needed for a check. */
  check(tilec_compiled_add_to_bundle(k, dir) == TILEC_COMPILE_OK, "add to bundle");
  tilec_bundle *b = NULL;
  if (tilec_bundle_open(dir, &b) != TILEC_OK) {
    check(0, tilec_last_error());
  } else {
    int64_t a_shape[2] = {256, 64}, b_shape[2] = {64, 256}, c_shape[2] = {256, 256};
    /* The runtime checks alignment; these fake device addresses are 256-aligned. */
    tilec_arg args[3] = {tilec_tensor((void *)0x10000, "bf16", 2, a_shape),
                         tilec_tensor((void *)0x20000, "bf16", 2, b_shape),
                         tilec_tensor((void *)0x30000, "f32", 2, c_shape)};
    tilec_launch_dims dims;
    tilec_status rs = tilec_check_launch(b, name, "gfx942", args, 3, &dims);
    if (rs != TILEC_OK)
      fprintf(stderr, "runtime: %s\n", tilec_last_error());
    /* 256 / 64 blocks on each axis of C, block_m x block_n = 64 x 64. */
    check(rs == TILEC_OK && dims.grid[0] * dims.grid[1] == 16 && dims.grid[2] == 1,
          "the runtime checks a launch of the bundled kernel: 4 x 4 blocks");
    tilec_bundle_close(b);
  }
  tilec_compiled_free(k);

summary:
  /* Bad input: a clear message and a non-zero status. */
  s = tilec_compile_kernel("no_such_kernel", NULL, NULL, 0, &opts, &k);
  check(s == TILEC_COMPILE_ERROR_UNKNOWN_KERNEL && k == NULL, "unknown kernel: its status, no object");
  check(strstr(tilec_compile_last_error(), "no_such_kernel") != NULL, "unknown kernel: message names it");
  check(strcmp(tilec_compile_status_name(s), "TILEC_COMPILE_ERROR_UNKNOWN_KERNEL") == 0, "status name");

  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
