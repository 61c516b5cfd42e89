// Reading a shipped kernel's `-p name=value` parameters (internal to kernels/).
#pragma once

#include "Registry.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilec::kernels {

/// Parameter values for one build: the given ones over the defaults. Getters
/// record the first bad value; error() then describes it, naming the kernel,
/// the parameter and what is valid.
class ParamReader {
public:
  ParamReader(std::string kernel, const std::vector<KernelParam> &params, const KernelParams &given);

  /// An integer in [min, max].
  int64_t integer(const std::string &name, int64_t min, int64_t max);
  /// One of `choices` (a keyword).
  std::string choice(const std::string &name, const std::vector<std::string> &choices);
  /// One of `choices` (e.g. the dtypes a kernel supports). "fp8" names
  /// fp8e4m3fnuz (the e4m3 format of gfx942, amd-targets.md section 8).
  DType dtype(const std::string &name, const std::vector<DType> &choices);
  /// A finite real number.
  double real(const std::string &name);

  bool ok() const { return error_.empty(); }
  Error error() const { return Error{error_}; }

private:
  const std::string &raw(const std::string &name);
  void fail(const std::string &msg);

  std::string kernel_;
  KernelParams values_;
  std::string error_;
};

} // namespace tilec::kernels
