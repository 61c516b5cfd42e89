// The shipped-kernel variants whose code objects tests/data/code-object-hashes.txt
// pins: every registry entry at its defaults plus the parameters that select
// other code (element and output types, ragged shapes, schedules, masks, head
// grouping, parts of multi-kernel problems), on every known target that
// compiles them.
#pragma once

#include "Registry.h"

#include <string>
#include <vector>

namespace tilec::hashes {

struct Variant {
  std::string kernel;            ///< registry name
  std::string arch;              ///< a known target
  kernels::KernelParams params;  ///< the -p values given (the target's defaults are applied on top)

  /// "key=value,key=value" in key order, or "-" for the defaults.
  std::string paramsText() const;
};

/// Every variant, in no particular order.
std::vector<Variant> shippedVariants();

/// Registry entries that have no variant in shippedVariants() (empty when the
/// list covers the registry).
std::vector<std::string> uncoveredKernels();

} // namespace tilec::hashes
