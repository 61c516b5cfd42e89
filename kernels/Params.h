// Reading a shipped kernel's `-p name=value` parameters (internal to kernels/).
#pragma once

#include "Registry.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilec::kernels {

/// The command line's `-p key=value` flags, in order, as a map. Errors: a flag
/// without '=' or with an empty key ("parameter 'M' is not key=value") and a
/// key given twice ("parameter 'M' given twice"). Values are not checked here
/// (ParamReader does that for the kernel that reads them).
Result<KernelParams> parseParamFlags(const std::vector<std::string> &flags);

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
  /// fp8e4m3fnuz and "bf8" fp8e5m2fnuz (gfx942's e4m3 and e5m2 formats,
  /// docs/hardware.md section 8).
  DType dtype(const std::string &name, const std::vector<DType> &choices);
  /// A finite real number.
  double real(const std::string &name);

  /// The value as given (or its default), unchecked: for parameters that take
  /// a keyword as well as a number (seq_k=seq_q, scale=auto).
  const std::string &raw(const std::string &name);

  bool ok() const { return error_.empty(); }
  Error error() const { return Error{error_}; }

private:
  void fail(const std::string &msg);

  std::string kernel_;
  KernelParams values_;
  std::string error_;
};

} // namespace tilec::kernels
