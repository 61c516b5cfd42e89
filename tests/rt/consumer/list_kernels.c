/* Prints the kernel names of the bundle argv[1], one per line. */
#include <tilec/runtime.h>

#include <stdio.h>

int main(int argc, char **argv) {
  tilec_bundle *bundle = NULL;
  if (argc != 2 || tilec_bundle_open(argv[1], &bundle) != TILEC_OK) {
    fprintf(stderr, "list_kernels: %s\n", argc == 2 ? tilec_last_error() : "usage: list_kernels BUNDLE");
    return 1;
  }
  for (int i = 0; i < tilec_bundle_kernel_count(bundle); ++i)
    puts(tilec_bundle_kernel_name(bundle, i));
  tilec_bundle_close(bundle);
  return 0;
}
