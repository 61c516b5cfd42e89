#include "Params.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace tilec::kernels {

Result<KernelParams> parseParamFlags(const std::vector<std::string> &flags) {
  KernelParams values;
  for (const std::string &p : flags) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      return Error{"parameter '" + p + "' is not key=value"};
    if (values.count(p.substr(0, eq)))
      return Error{"parameter '" + p.substr(0, eq) + "' given twice"};
    values[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return values;
}

ParamReader::ParamReader(std::string kernel, const std::vector<KernelParam> &params,
                         const KernelParams &given)
    : kernel_(std::move(kernel)) {
  for (const KernelParam &p : params)
    values_[p.name] = p.defaultValue;
  for (const auto &[name, value] : given) {
    if (values_.count(name)) {
      values_[name] = value;
      continue;
    }
    std::string valid;
    for (const KernelParam &p : params)
      valid += (valid.empty() ? "" : ", ") + p.name;
    fail("unknown parameter '" + name + "'; valid parameters: " + valid);
  }
}

const std::string &ParamReader::raw(const std::string &name) { return values_[name]; }

void ParamReader::fail(const std::string &msg) {
  if (error_.empty())
    error_ = "kernel '" + kernel_ + "': " + msg;
}

int64_t ParamReader::integer(const std::string &name, int64_t min, int64_t max) {
  const std::string &s = raw(name);
  std::string range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  errno = 0;
  char *end = nullptr;
  long long v = s.empty() ? 0 : std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v < min || v > max) {
    fail("parameter '" + name + "' must be " + range + ", got '" + s + "'");
    return min;
  }
  return v;
}

DType ParamReader::dtype(const std::string &name, const std::vector<DType> &choices) {
  const std::string &s = raw(name);
  std::optional<DType> t = s == "fp8"   ? std::optional<DType>(DType::fp8e4m3fnuz)
                           : s == "bf8" ? std::optional<DType>(DType::fp8e5m2fnuz)
                                        : parseDType(s);
  for (DType c : choices)
    if (t == c)
      return c;
  std::string valid;
  for (DType c : choices)
    valid += (valid.empty() ? "" : ", ") +
             (c == DType::fp8e4m3fnuz   ? std::string("fp8 (fp8e4m3fnuz)")
              : c == DType::fp8e5m2fnuz ? std::string("bf8 (fp8e5m2fnuz)")
                                        : std::string(dtypeName(c)));
  fail("parameter '" + name + "' must be one of " + valid + ", got '" + s + "'");
  return choices.front();
}

double ParamReader::real(const std::string &name) {
  const std::string &s = raw(name);
  errno = 0;
  char *end = nullptr;
  double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
    fail("parameter '" + name + "' must be a finite real number, got '" + s + "'");
    return 0;
  }
  return v;
}

std::string ParamReader::choice(const std::string &name, const std::vector<std::string> &choices) {
  const std::string &s = raw(name);
  for (const std::string &c : choices)
    if (s == c)
      return c;
  std::string valid;
  for (const std::string &c : choices)
    valid += (valid.empty() ? "" : ", ") + c;
  fail("parameter '" + name + "' must be one of " + valid + ", got '" + s + "'");
  return choices.front();
}

} // namespace tilec::kernels
