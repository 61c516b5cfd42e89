// tilec DSL: Kernel::toJson, the recorded kernel as JSON. The format is
// described in docs/design.md, "The recorded kernel"; lib/Import reads it back.
//
// Standard library only (public header); included by tilec/dsl/kernel.hpp.
#pragma once

#include "tilec/dsl/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tilec {

namespace detail_json {

inline std::string str(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// The shortest decimal that reads back as `v`, always with a fraction
/// ("1.0e+20", "-0.0"); a non-finite value as the
/// string of its bit pattern ("0x7FF0000000000000"), which JSON numbers cannot hold.
inline std::string f64(double v) {
  if (!std::isfinite(v)) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    char buf[32];
    std::snprintf(buf, sizeof buf, "\"0x%016llX\"", static_cast<unsigned long long>(bits));
    return buf;
  }
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  std::string s = buf;
  std::replace(s.begin(), s.end(), ',', '.'); // a decimal-comma locale
  // A fraction keeps it a float for readers that tell integers apart (and -0.0 negative).
  size_t e = s.find('e');
  if (s.find('.') == std::string::npos)
    s.insert(e == std::string::npos ? s.size() : e, ".0");
  return s;
}

inline std::string ints(const std::vector<int64_t> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

inline std::string ints(const std::vector<int> &v) { return ints(std::vector<int64_t>(v.begin(), v.end())); }

inline std::string attr(const record::Attr &a) {
  std::string out = "{\"name\":" + str(a.name) + ",";
  switch (a.kind) {
  case record::Attr::Unit: return out + "\"unit\":true}";
  case record::Attr::Bool: return out + "\"bool\":" + (a.i ? "true" : "false") + "}";
  case record::Attr::Int: return out + "\"int\":" + std::to_string(a.i) + "}";
  case record::Attr::Float: return out + "\"float\":" + f64(a.f) + "}";
  case record::Attr::String: return out + "\"string\":" + str(a.s) + "}";
  case record::Attr::Ints: return out + "\"ints\":" + ints(a.ints) + "}";
  case record::Attr::Enum: return out + "\"enum\":" + str(a.s) + "}";
  case record::Attr::Dict: {
    out += "\"dict\":[";
    for (size_t i = 0; i < a.fields.size(); ++i)
      out += (i ? "," : "") + attr(a.fields[i]);
    return out + "]}";
  }
  }
  return out + "\"unit\":true}";
}

inline std::string type(const record::Type &t) {
  switch (t.kind) {
  case record::Type::Index: return "{\"type\":\"index\"}";
  case record::Type::I32: return "{\"type\":\"i32\"}";
  case record::Type::F32: return "{\"type\":\"f32\"}";
  case record::Type::Tensor:
    return std::string("{\"type\":\"tensor\",\"dtype\":\"") + dtypeName(t.dtype) +
           "\",\"rank\":" + std::to_string(t.rank) + "}";
  case record::Type::Tile:
    return std::string("{\"type\":\"tile\",\"dtype\":\"") + dtypeName(t.dtype) + "\",\"shape\":" + ints(t.shape) +
           ",\"space\":\"" + dsl::spaceName(t.space) + "\"}";
  }
  return "{}";
}

inline const char *argKind(ArgKind k) {
  switch (k) {
  case ArgKind::Tensor: return "tensor";
  case ArgKind::F32: return "f32";
  case ArgKind::I32: return "i32";
  case ArgKind::Index: return "index";
  }
  return "?";
}

} // namespace detail_json

inline std::string Kernel::toJson() const {
  namespace j = detail_json;
  if (!ok_)
    return "";
  const record::Recording &r = recording_;
  std::string out = "{\"format\":\"tilec.kernel.v1\",\"kernel\":" + j::str(name_) +
                    ",\"num_waves\":" + std::to_string(numWaves_) + ",\n\"grid\":[";
  for (size_t i = 0; i < grid_.size(); ++i)
    out += (i ? "," : "") + j::ints(std::vector<int64_t>{grid_[i].arg, grid_[i].axis, grid_[i].tile});
  out += "],\n\"args\":[";
  for (size_t i = 0; i < args_.size(); ++i) {
    const KernelArg &a = args_[i];
    out += std::string(i ? ",\n" : "\n") + "{\"name\":" + j::str(a.name) + ",\"kind\":\"" + j::argKind(a.kind) +
           "\",\"dtype\":\"" + dtypeName(a.dtype) + "\",\"rank\":" + std::to_string(a.rank) +
           ",\"divisibility\":" + std::to_string(a.divisibility) + ",\"value\":" + std::to_string(a.value) + "}";
  }
  out += "],\n\"values\":[";
  for (size_t i = 0; i < r.values.size(); ++i)
    out += std::string(i ? ",\n" : "\n") + j::type(r.values[i]);
  out += "],\n\"locations\":[";
  for (size_t i = 0; i < r.locations.size(); ++i)
    out += std::string(i ? ",\n" : "\n") + "{\"file\":" + j::str(r.locations[i].file) +
           ",\"line\":" + std::to_string(r.locations[i].line) + "}";
  out += "],\n\"function_loc\":" + std::to_string(r.functionLoc) + ",\"return_loc\":" + std::to_string(r.returnLoc) +
         ",\n\"ops\":[";
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const record::Op &op = r.ops[i];
    out += std::string(i ? ",\n" : "\n") + "{\"op\":" + j::str(op.name) + ",\"operands\":[";
    for (size_t g = 0; g < op.operands.size(); ++g)
      out += (g ? "," : "") + j::ints(op.operands[g]);
    out += "],\"results\":" + j::ints(op.results) + ",\"attrs\":[";
    for (size_t a = 0; a < op.attrs.size(); ++a)
      out += (a ? "," : "") + j::attr(op.attrs[a]);
    out += "],\"loc\":" + std::to_string(op.loc) + "}";
  }
  return out + "]}\n";
}

} // namespace tilec
