/* With no CUDA device (the stub's cuInit fails as a driver without a GPU
 * does) and no HIP GPU, a launch fails with TILEC_ERROR_NO_DEVICE and says
 * why each driver was passed over; the bundle still opens. */
#include <tilec/runtime.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  tilec_bundle *bundle = NULL;
  if (argc != 2 || tilec_bundle_open(argv[1], &bundle) != TILEC_OK) {
    fprintf(stderr, "%s\n", argc == 2 ? tilec_last_error() : "usage: NoDeviceTest BUNDLE");
    return 1;
  }
  tilec_status s = tilec_launch(bundle, "scaled_rows", NULL, 0, NULL);
  const char *expected = "no GPU driver with a device: CUDA: cuInit failed: no CUDA-capable device is detected; HIP: ";
  int ok = s == TILEC_ERROR_NO_DEVICE && strstr(tilec_last_error(), expected) != NULL;
  if (!ok)
    fprintf(stderr, "expected TILEC_ERROR_NO_DEVICE (%s), got %s: %s\n", expected, tilec_status_name(s),
            tilec_last_error());
  tilec_bundle_close(bundle);
  return ok ? 0 : 1;
}
