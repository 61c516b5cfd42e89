// Reading a shipped kernel's `-p name=value` parameters (internal to kernels/).
#pragma once

#include "Registry.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilec::kernels {

/// The command line's `-p key=value` flags, in order, as a map. Errors: a flag
/// without '=' or with an empty key ("parameter 'M' is not key=value") and a
/// key given twice ("parameter 'M' given twice"). Values are not checked here
/// (ParamReader does that for the kernel that reads them).
Result<KernelParams> parseParamFlags(const std::vector<std::string> &flags);

/// The value of -p `name` if given as a number in [1, 2^20], else `fallback`
/// (also for a malformed or out-of-range value: the entry's ParamReader
/// reports that one). For target defaults that depend on the problem's size.
int64_t givenInteger(const KernelParams &p, const std::string &name, int64_t fallback);

/// The value of -p `name` as given, else `fallback`: for target defaults that
/// follow a parameter's spelling (layout=nt, scaling=block).
std::string givenOr(const KernelParams &p, const std::string &name, const std::string &fallback);

/// Parameter values for one build: the given ones over the defaults, each
/// checked against its declared ParamSpec when the reader is made (an unknown
/// name or a bad value: error() describes the first, naming the kernel, the
/// parameter and what is valid). The getters convert.
class ParamReader {
public:
  ParamReader(std::string kernel, const std::vector<KernelParam> &params, const KernelParams &given);

  /// An Integer parameter.
  int64_t integer(const std::string &name);
  /// A Choice parameter.
  std::string choice(const std::string &name);
  /// A DType parameter.
  DType dtype(const std::string &name);
  /// A Real parameter.
  double real(const std::string &name);

  /// The value as given (or its default): for parameters that take a keyword
  /// as well as a number (seq_k=seq_q, scale=auto).
  const std::string &raw(const std::string &name);

  bool ok() const { return error_.empty(); }
  Error error() const { return Error{error_}; }

private:
  void fail(const std::string &msg);

  /// The declaration of `name`; a kernel reading an undeclared parameter, or
  /// one of another kind, is a bug in the kernel, reported as an error.
  const ParamSpec *spec(const std::string &name, ParamSpec::Kind kind);

  std::string kernel_;
  std::map<std::string, const KernelParam *> params_;
  KernelParams values_;
  std::string error_;
};

} // namespace tilec::kernels
