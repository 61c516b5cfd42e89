// `tilec --emit=bundle -o DIR`: exports compiled kernels with a manifest and
// a C header of typed launchers into a bundle folder that libtilec_rt loads
// (docs/runtime.md).
#pragma once

#include "tilec/tilec.hpp"

#include "Rt/Manifest.h"

#include <map>
#include <string>
#include <vector>

namespace tilec::cli {

/// One kernel compiled for one target, as the bundle records it.
struct BundledKernel {
  CompiledKernel compiled;
  std::string launchName;                     ///< the kernel's name without the target
  std::string shippedKernel;                  ///< --kernel
  std::map<std::string, std::string> params;  ///< the -p values given
  std::map<std::string, std::string> compileOptions;
};

/// The compile options a manifest entry records: the JIT asked for and the
/// compiler that ran.
std::map<std::string, std::string> recordedCompileOptions(JitChoice jit, const CompiledKernel &compiled);

/// The manifest entry of `k` (without the code object's file name).
bundle::KernelEntry manifestEntry(const BundledKernel &k);

/// The C header of typed launchers, one per kernel name of `m`.
std::string launcherHeader(const bundle::Manifest &m);

/// Adds `kernels` to the bundle in `dir` (created if absent), replacing
/// entries of the same name and target. The manifest is written last, so a
/// failure leaves the previous bundle intact. Returns "" or why it failed.
std::string exportBundle(const std::string &dir, const std::vector<BundledKernel> &kernels);

} // namespace tilec::cli
