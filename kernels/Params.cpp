#include "Params.h"

#include <charconv>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace tilec::kernels {

namespace {

std::string joined(const std::vector<std::string> &items) {
  std::string s;
  for (const std::string &i : items)
    s += (s.empty() ? "" : ", ") + i;
  return s;
}

std::optional<int64_t> parseInteger(const std::string &s) {
  errno = 0;
  char *end = nullptr;
  long long v = s.empty() ? 0 : std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE)
    return std::nullopt;
  return v;
}

std::optional<double> parseReal(const std::string &s) {
  errno = 0;
  char *end = nullptr;
  double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    return std::nullopt;
  return v;
}

/// "fp8" and "bf8" name gfx942's e4m3 and e5m2 formats (docs/hardware.md
/// section 8); other names are parseDType's.
std::optional<DType> parseDTypeName(const std::string &s) {
  return s == "fp8" ? std::optional<DType>(DType::fp8e4m3fnuz)
         : s == "bf8" ? std::optional<DType>(DType::fp8e5m2fnuz)
                      : parseDType(s);
}

} // namespace

ParamSpec ParamSpec::integer(int64_t min, int64_t max, std::vector<std::string> keywords) {
  return ParamSpec{.kind = Kind::Integer, .min = min, .max = max, .keywords = std::move(keywords), .dtypes = {}};
}

ParamSpec ParamSpec::real(std::vector<std::string> keywords) {
  return ParamSpec{.kind = Kind::Real, .keywords = std::move(keywords), .dtypes = {}};
}

ParamSpec ParamSpec::oneOf(std::vector<std::string> choices) {
  return ParamSpec{.kind = Kind::Choice, .keywords = std::move(choices), .dtypes = {}};
}

ParamSpec ParamSpec::dtype(std::vector<DType> choices) {
  return ParamSpec{.kind = Kind::DType, .keywords = {}, .dtypes = std::move(choices)};
}

bool ParamSpec::isKeyword(const std::string &value) const {
  for (const std::string &k : keywords)
    if (k == value)
      return true;
  return false;
}

std::string ParamSpec::describe() const {
  const std::string orKeywords = keywords.empty() ? "" : " or " + joined(keywords);
  switch (kind) {
  case Kind::Integer:
    return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]" + orKeywords;
  case Kind::Real:
    return "a finite real number" + orKeywords;
  case Kind::Choice:
    return "one of " + joined(keywords);
  case Kind::DType: {
    std::vector<std::string> names;
    for (DType c : dtypes)
      names.push_back(c == DType::fp8e4m3fnuz   ? std::string("fp8 (fp8e4m3fnuz)")
                      : c == DType::fp8e5m2fnuz ? std::string("bf8 (fp8e5m2fnuz)")
                                                : std::string(dtypeName(c)));
    return "one of " + joined(names);
  }
  }
  return "";
}

std::string ParamSpec::check(const std::string &value) const {
  bool ok = false;
  switch (kind) {
  case Kind::Integer: {
    std::optional<int64_t> v = parseInteger(value);
    ok = isKeyword(value) || (v && *v >= min && *v <= max);
    break;
  }
  case Kind::Real: ok = isKeyword(value) || parseReal(value).has_value(); break;
  case Kind::Choice: ok = isKeyword(value); break;
  case Kind::DType: {
    std::optional<DType> t = parseDTypeName(value);
    for (DType c : dtypes)
      ok = ok || t == c;
    break;
  }
  }
  return ok ? "" : "must be " + describe() + ", got '" + value + "'";
}

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
  for (const KernelParam &p : params) {
    params_[p.name] = &p;
    values_[p.name] = p.defaultValue;
  }
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
  for (const KernelParam &p : params)
    if (std::string why = p.spec.check(values_[p.name]); !why.empty())
      fail("parameter '" + p.name + "' " + why);
}

const std::string &ParamReader::raw(const std::string &name) { return values_[name]; }

void ParamReader::fail(const std::string &msg) {
  if (error_.empty())
    error_ = "kernel '" + kernel_ + "': " + msg;
}

const ParamSpec *ParamReader::spec(const std::string &name, ParamSpec::Kind kind) {
  auto it = params_.find(name);
  if (it == params_.end() || it->second->spec.kind != kind) {
    fail("reads parameter '" + name + "' that it does not declare as such");
    return nullptr;
  }
  return &it->second->spec;
}

int64_t ParamReader::integer(const std::string &name) {
  const ParamSpec *s = spec(name, ParamSpec::Kind::Integer);
  std::optional<int64_t> v = parseInteger(raw(name));
  if (!s || !v || !s->check(raw(name)).empty())
    return s ? s->min : 1;  // the error is recorded; callers return it before using values
  return *v;
}

DType ParamReader::dtype(const std::string &name) {
  const ParamSpec *s = spec(name, ParamSpec::Kind::DType);
  if (!s || s->dtypes.empty())
    return DType::f32;
  std::optional<DType> t = parseDTypeName(raw(name));
  return t && s->check(raw(name)).empty() ? *t : s->dtypes.front();
}

double ParamReader::real(const std::string &name) {
  const ParamSpec *s = spec(name, ParamSpec::Kind::Real);
  std::optional<double> v = parseReal(raw(name));
  return s && v ? *v : 0;
}

std::string ParamReader::choice(const std::string &name) {
  const ParamSpec *s = spec(name, ParamSpec::Kind::Choice);
  if (!s || s->keywords.empty())
    return "";
  return s->isKeyword(raw(name)) ? raw(name) : s->keywords.front();
}

int64_t givenInteger(const KernelParams &p, const std::string &name, int64_t fallback) {
  auto it = p.find(name);
  if (it == p.end())
    return fallback;
  int64_t v = 0;
  const char *end = it->second.data() + it->second.size();
  auto [ptr, ec] = std::from_chars(it->second.data(), end, v);
  return ec == std::errc() && ptr == end && v >= 1 && v <= (int64_t(1) << 20) ? v : fallback;
}

std::string givenOr(const KernelParams &p, const std::string &name, const std::string &fallback) {
  auto it = p.find(name);
  return it == p.end() ? fallback : it->second;
}

} // namespace tilec::kernels
