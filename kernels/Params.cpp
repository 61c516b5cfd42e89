#include "Params.h"

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace tilec::kernels {

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
  std::optional<DType> t = parseDType(s);
  for (DType c : choices)
    if (t == c)
      return c;
  std::string valid;
  for (DType c : choices)
    valid += (valid.empty() ? "" : ", ") + std::string(dtypeName(c));
  fail("parameter '" + name + "' must be one of " + valid + ", got '" + s + "'");
  return choices.front();
}

} // namespace tilec::kernels
