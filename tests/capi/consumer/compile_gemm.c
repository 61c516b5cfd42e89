/* Compiles the shipped GEMM for gfx942 through an installed libtilec_c and
 * prints its launch name and code-object size. */
#include <tilec/tilec.h>

#include <stdio.h>

int main(void) {
  const char *keys[] = {"block_m", "block_n"}, *values[] = {"64", "64"};
  tilec_compiled *k = NULL;
  if (tilec_compile_kernel("gemm", keys, values, 2, NULL, &k) != TILEC_COMPILE_OK) {
    fprintf(stderr, "%s\n", tilec_compile_last_error());
    return 1;
  }
  size_t size = 0;
  tilec_compiled_code_object(k, &size);
  printf("%s %s\n", tilec_compiled_name(k), size > 0 ? "has a code object" : "has no code object");
  tilec_compiled_free(k);
  return 0;
}
