// Running a shipped kernel on random inputs and verifying it against its CPU
// reference: what `tilec --run` does, and what the verification tests call.
#pragma once

#include "Registry.h"

#include "tilec/runtime.hpp"
#include "tilec/tilec.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tilec::kernels {

struct RunOptions {
  CompileOptions compile;
  DeviceKind device = DeviceKind::Auto;
  uint64_t seed = 0;  ///< inputs: uniform in [-1, 1), rounded to their type
};

struct RunResult {
  CompiledKernel kernel;                ///< the (last) kernel launched
  std::vector<CompiledKernel> kernels;  ///< every kernel, in launch order (Problem::launches)
  LaunchStats stats;
  std::string device;          ///< the device's description
  int64_t elements = 0;        ///< output elements checked
  int64_t mismatches = 0;      ///< elements outside the tolerance (NaN included)
  double maxAbsError = 0;
  double maxRelError = 0;      ///< |C - ref| / |ref| over elements with ref != 0
  double maxTolerance = 0;     ///< the largest per-element tolerance used
  std::string toleranceRule;
  std::vector<std::string> firstMismatches;  ///< "C[3,7]: got 1.5, expected 1.25 (tolerance 0.001)"
  std::vector<std::vector<char>> outputBytes;  ///< each output tensor as the device wrote it (bitwise comparisons)

  /// Values match and no checker fired (LaunchStats::clean).
  bool passed() const { return mismatches == 0 && stats.clean(); }
  /// "verified: C 100x70 max_abs_err=... max_rel_err=... tolerance: ..." (or "MISMATCH: ...").
  std::string verifiedLine() const;
};

/// Compiles `kernel` with `params`, runs it on `options.device` and compares
/// every output element with the reference. An Error only when it could not
/// run (compile failure, no device, launch error); mismatches and checker
/// findings are in the result.
Result<RunResult> runAndVerify(const KernelInfo &kernel, const KernelParams &params, const RunOptions &options);

/// Host conversions between the kernels' element types and double
/// (bf16 and f16 round to nearest even).
double loadElement(DType t, const void *base, int64_t index);
void storeElement(DType t, void *base, int64_t index, double value);

} // namespace tilec::kernels
