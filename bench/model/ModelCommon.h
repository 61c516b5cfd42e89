// Shared by the roofline-model benchmarks of the shipped kernels (modelled,
// never measured): reading a kernel's parameters and the matrix instruction
// its compiled tile IR chose.
#pragma once

#include "Registry.h"
#include "Target/Target.h"
#include "Tune/Tuner.h"

#include "tilec/tilec.hpp"

#include <cstdlib>
#include <string>

namespace tilec::bench {

/// Parameter `name` of kernel `k`: as given, else its default (integers only).
inline int64_t param(const kernels::KernelInfo &k, const kernels::KernelParams &given, const std::string &name) {
  if (auto it = given.find(name); it != given.end())
    return std::strtoll(it->second.c_str(), nullptr, 10);
  for (const kernels::KernelParam &p : k.params)
    if (p.name == name)
      return std::strtoll(p.defaultValue.c_str(), nullptr, 10);
  return 0;
}

/// The matrix instruction of the first tile.gemm in a compiled kernel's IR
/// (one row group: one instruction), or null.
inline const MatrixInstr *matrixInstrOf(const CompiledKernel &ck, const TargetInfo &target) {
  std::optional<tune::ChosenTiling> t = tune::chosenTiling(ck.tileIR);
  return t ? target.findInstr(t->instr) : nullptr;
}

/// Shipped kernel `k` with parameters `params`, built and compiled for `arch`
/// (a build error and a compile error alike come back as the Result's error).
inline Result<CompiledKernel> compileShipped(const kernels::KernelInfo &k, const kernels::KernelParams &params,
                                            const std::string &arch) {
  Result<Kernel> built = k.build(params);
  if (!built)
    return Error{built.error()};
  return compile(*built, {.arch = arch});
}

} // namespace tilec::bench
