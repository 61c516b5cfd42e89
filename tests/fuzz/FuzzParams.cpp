// libFuzzer target: the `tilec -p key=value` path without MLIR. The input is
// split at newlines into -p flags (as the shell would hand them over); they go
// through parseParamFlags (the CLI's parser), then every shipped kernel reads
// them (ParamReader validation) and, when they are valid, builds its tile IR
// with the DSL. Bad input must produce an error message, never a crash.
#include "Params.h"
#include "Registry.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string> flags;
  std::string text(reinterpret_cast<const char *>(data), size);
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    flags.push_back(text.substr(start, end - start));
    start = end + 1;
  }

  tilec::Result<tilec::kernels::KernelParams> values = tilec::kernels::parseParamFlags(flags);
  if (!values) {
    if (values.error().empty())
      __builtin_trap();  // every rejection carries a message
    return 0;
  }
  for (const tilec::kernels::KernelInfo &info : tilec::kernels::shippedKernels()) {
    tilec::Result<tilec::Kernel> kernel = info.build(*values);
    if (kernel && !kernel->ok() && kernel->error().empty())
      __builtin_trap();
    if (!kernel && kernel.error().empty())
      __builtin_trap();
    if (info.problem)
      (void)info.problem(*values);
  }
  return 0;
}
