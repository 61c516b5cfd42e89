/* The launcher header of the bundle `tilec --emit=bundle` exported at build
 * time, compiled as C: its typed launchers reach the runtime, which finds no
 * kernel for the CUDA stub's sm_90 device in this gfx942-only bundle. */
#include "tilec_kernels.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s BUNDLE\n", argv[0]);
    return 2;
  }
  tilec_bundle *bundle = NULL;
  if (tilec_bundle_open(argv[1], &bundle) != TILEC_OK) {
    fprintf(stderr, "%s\n", tilec_last_error());
    return 1;
  }
  char t[16];
  const char *expected = "not for sm_90a or sm_90";
  tilec_status s = tilec_launch_gemm_bf16_f32_128x128x32_w4_s2(bundle, NULL, t, 256, 64, t, 64, 256, t, 256, 256);
  int ok = s == TILEC_ERROR_ARCH_NOT_IN_BUNDLE && strstr(tilec_last_error(), expected) != NULL;
  if (!ok)
    fprintf(stderr, "gemm: expected TILEC_ERROR_ARCH_NOT_IN_BUNDLE (%s), got %s: %s\n", expected,
            tilec_status_name(s), tilec_last_error());
  /* Scalars: the softmax scale (float), the longest sequence and the batch (int32_t). */
  s = tilec_launch_attn_fwd_bf16_h8_kv8_d128_128x32_w8_s2_vt(bundle, NULL, t, 300, 1024, t, 300, 1024, t, 300, 1024, t, 300,
                                                      1024, t, 8, 300, t, 4, t, 4, 0.088f, 130, 3);
  if (s != TILEC_ERROR_ARCH_NOT_IN_BUNDLE || strstr(tilec_last_error(), expected) == NULL) {
    fprintf(stderr, "attention: expected TILEC_ERROR_ARCH_NOT_IN_BUNDLE (%s), got %s: %s\n", expected,
            tilec_status_name(s), tilec_last_error());
    ok = 0;
  }
  tilec_bundle_close(bundle);
  return ok ? 0 : 1;
}
