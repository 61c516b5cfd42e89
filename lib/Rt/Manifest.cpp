// The bundle manifest: validation, JSON reading and writing (see Manifest.h).
//
// nlohmann/json is used without exceptions (the project builds with
// -fno-exceptions, where a failed conversion aborts): every value is
// type-checked before it is read.
#include "Rt/Manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>

namespace tilec::bundle {

using nlohmann::json;

const KernelEntry *Manifest::find(const std::string &name, const std::string &target) const {
  for (const KernelEntry &k : kernels)
    if (k.name == name && k.target == target)
      return &k;
  return nullptr;
}

void Manifest::put(KernelEntry entry) {
  for (KernelEntry &k : kernels)
    if (k.name == entry.name && k.target == entry.target) {
      k = std::move(entry);
      return;
    }
  kernels.push_back(std::move(entry));
}

std::string vendorOf(const std::string &target) {
  if (target.rfind("sm_", 0) == 0)
    return "nvidia";
  if (target.rfind("gfx", 0) == 0)
    return "amd";
  return "";
}

int64_t elementBytes(const std::string &dtype) {
  size_t i = dtype.find_first_of("0123456789");
  int64_t bits = i == std::string::npos ? 8 : std::atoll(dtype.c_str() + i);
  return std::max<int64_t>(1, bits / 8);
}

std::string codeObjectFileName(const KernelEntry &entry) {
  const char *ext = entry.vendor == "nvidia" ? ".cubin" : ".co";
  return entry.entry + "." + entry.sha256.substr(0, 12) + ext;
}

std::string argLabel(const std::vector<ArgSpec> &args, int index) {
  if (index >= 0 && index < static_cast<int>(args.size()) && !args[index].name.empty())
    return args[index].name;
  return "arg" + std::to_string(index);
}

std::string gridExpression(const GridAxis &g, const std::vector<ArgSpec> &args) {
  if (g.arg < 0)
    return std::to_string(g.tile);
  std::string value = argLabel(args, g.arg);
  if (g.dim >= 0)
    value += ".shape[" + std::to_string(g.dim) + "]";
  return g.tile == 1 ? value : "ceil(" + value + " / " + std::to_string(g.tile) + ")";
}

namespace {

const char *kindName(ArgSpec::Kind k) {
  switch (k) {
  case ArgSpec::Tensor: return "tensor";
  case ArgSpec::F32: return "f32";
  case ArgSpec::I32: return "i32";
  }
  return "?";
}

/// Reads typed fields of a JSON object, remembering the first problem with
/// its path.
class Reader {
public:
  explicit Reader(std::string &error) : error(error) {}

  bool ok() const { return error.empty(); }
  void fail(const std::string &path, const std::string &what) {
    if (error.empty())
      error = path + ": " + what;
  }

  const json *field(const json &obj, const std::string &path, const char *key) {
    if (!ok())
      return nullptr;
    auto it = obj.find(key);
    if (it == obj.end()) {
      fail(path, std::string("missing field '") + key + "'");
      return nullptr;
    }
    return &*it;
  }
  std::string string(const json &obj, const std::string &path, const char *key) {
    const json *v = field(obj, path, key);
    if (v && !v->is_string())
      fail(path + "." + key, "expected a string");
    return v && ok() ? v->get<std::string>() : std::string();
  }
  int64_t integer(const json &obj, const std::string &path, const char *key, int64_t min, int64_t max) {
    const json *v = field(obj, path, key);
    if (v && (!v->is_number_integer() || v->get<int64_t>() < min || v->get<int64_t>() > max))
      fail(path + "." + key, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return v && ok() ? v->get<int64_t>() : 0;
  }
  std::map<std::string, std::string> stringMap(const json &obj, const std::string &path, const char *key) {
    std::map<std::string, std::string> out;
    const json *v = field(obj, path, key);
    if (v && !v->is_object())
      fail(path + "." + key, "expected an object of strings");
    if (!v || !ok())
      return out;
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it->is_string()) {
        fail(path + "." + key + "." + it.key(), "expected a string");
        return out;
      }
      out[it.key()] = it->get<std::string>();
    }
    return out;
  }
  const json *array(const json &obj, const std::string &path, const char *key) {
    const json *v = field(obj, path, key);
    if (v && !v->is_array())
      fail(path + "." + key, "expected an array");
    return ok() ? v : nullptr;
  }

private:
  std::string &error;
};

constexpr int64_t kInt32Max = 2147483647;

/// A tensor argument's tensor_map: {"box": [rows, cols], "swizzle": bytes},
/// within what cuTensorMapEncodeTiled accepts for a rank-2 tensor.
void readTensorMap(Reader &r, const json &m, const std::string &path, ArgSpec &out) {
  if (!m.is_object())
    return r.fail(path, "expected an object");
  const json *box = r.array(m, path, "box");
  const int64_t swizzle = r.integer(m, path, "swizzle", 0, 128);
  if (!r.ok())
    return;
  if (box->size() != 2 || !(*box)[0].is_number_integer() || !(*box)[1].is_number_integer() ||
      (*box)[0].get<int64_t>() < 1 || (*box)[0].get<int64_t>() > 256 || (*box)[1].get<int64_t>() < 1 ||
      (*box)[1].get<int64_t>() > 256)
    return r.fail(path + ".box", "expected [rows, cols], each in [1, 256]");
  const int64_t rowBytes = (*box)[1].get<int64_t>() * elementBytes(out.dtype);
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return r.fail(path + ".swizzle", "expected 0, 32, 64 or 128");
  if (rowBytes % 16 != 0 || (swizzle != 0 && rowBytes > swizzle))
    return r.fail(path + ".box", "a box row of " + std::to_string(rowBytes) +
                                     " bytes: a multiple of 16, at most the swizzle span");
  if (out.rank != 2)
    return r.fail(path, "tensor maps are for rank-2 tensors");
  if (out.divisibility * elementBytes(out.dtype) % 16 != 0)
    return r.fail(path, "a tensor map needs rows 16-byte aligned and a multiple of 16 bytes apart: divisibility " +
                            std::to_string(out.divisibility) + " of " + out.dtype + " does not promise it");
  out.tensorMap = {static_cast<int>((*box)[0].get<int64_t>()), static_cast<int>((*box)[1].get<int64_t>()),
                   static_cast<int>(swizzle)};
}

void readArg(Reader &r, const json &a, const std::string &path, ArgSpec &out) {
  if (!a.is_object())
    return r.fail(path, "expected an object");
  out.name = r.string(a, path, "name");
  std::string kind = r.string(a, path, "kind");
  if (!r.ok())
    return;
  if (kind == "tensor") {
    out.kind = ArgSpec::Tensor;
    out.dtype = r.string(a, path, "dtype");
    out.rank = static_cast<int>(r.integer(a, path, "rank", 1, 8));
    out.divisibility = r.integer(a, path, "divisibility", 1, kInt32Max);
    if (r.ok() && a.contains("tensor_map"))
      readTensorMap(r, a["tensor_map"], path + ".tensor_map", out);
  } else if (kind == "f32" || kind == "i32") {
    out.kind = kind == "f32" ? ArgSpec::F32 : ArgSpec::I32;
    out.dtype = kind;
    if (out.kind == ArgSpec::I32 && a.contains("divisibility"))  // absent: 1
      out.divisibility = r.integer(a, path, "divisibility", 1, kInt32Max);
  } else {
    r.fail(path + ".kind", "expected tensor, f32 or i32, got '" + kind + "'");
  }
}

void readGrid(Reader &r, const json &g, const std::string &path, const std::vector<ArgSpec> &args, GridAxis &out) {
  if (!g.is_object())
    return r.fail(path, "expected an object");
  out.arg = static_cast<int>(r.integer(g, path, "arg", -1, static_cast<int64_t>(args.size()) - 1));
  out.dim = static_cast<int>(r.integer(g, path, "dim", -1, 7));
  out.tile = r.integer(g, path, "tile", 1, kInt32Max);
  if (!r.ok() || out.arg < 0)
    return;
  const ArgSpec &a = args[out.arg];
  if (out.dim >= 0 && (a.kind != ArgSpec::Tensor || out.dim >= a.rank))
    r.fail(path, "argument " + std::to_string(out.arg) + " has no dimension " + std::to_string(out.dim));
  if (out.dim < 0 && a.kind != ArgSpec::I32)
    r.fail(path, "argument " + std::to_string(out.arg) + " is not an i32 scalar");
}

void readKernel(Reader &r, const json &k, const std::string &path, KernelEntry &out) {
  if (!k.is_object())
    return r.fail(path, "expected an object");
  out.name = r.string(k, path, "name");
  out.kernel = r.string(k, path, "kernel");
  out.params = r.stringMap(k, path, "params");
  out.target = r.string(k, path, "target");
  out.vendor = r.string(k, path, "vendor");
  out.entry = r.string(k, path, "entry");
  out.codeObject = r.string(k, path, "code_object");
  out.sha256 = r.string(k, path, "sha256");
  out.tilecVersion = r.string(k, path, "tilec_version");
  out.compileOptions = r.stringMap(k, path, "compile_options");
  out.blockSize = static_cast<int>(r.integer(k, path, "block_size", 1, 1024));
  out.ldsBytes = r.integer(k, path, "lds_bytes", 0, kInt32Max);
  out.dynamicSharedBytes = r.integer(k, path, "dynamic_shared_bytes", 0, kInt32Max);
  if (!r.ok())
    return;
  if (out.name.empty() || out.entry.empty())
    return r.fail(path, "empty name or entry");
  if (out.vendor != "amd" && out.vendor != "nvidia")
    return r.fail(path + ".vendor", "expected amd or nvidia, got '" + out.vendor + "'");
  if (out.vendor != vendorOf(out.target))
    return r.fail(path + ".vendor", "'" + out.vendor + "' is not the vendor of target '" + out.target + "'");
  if (out.codeObject.empty() || out.codeObject.find('/') != std::string::npos || out.codeObject[0] == '.')
    return r.fail(path + ".code_object", "expected a file name inside the bundle, got '" + out.codeObject + "'");
  if (out.sha256.size() != 64 || out.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
    return r.fail(path + ".sha256", "expected 64 lower-case hex digits");
  if (const json *args = r.array(k, path, "args"))
    for (size_t i = 0; i < args->size() && r.ok(); ++i) {
      out.args.emplace_back();
      readArg(r, (*args)[i], path + ".args[" + std::to_string(i) + "]", out.args.back());
    }
  if (const json *grid = r.array(k, path, "grid")) {
    if (grid->empty() || grid->size() > 3)
      return r.fail(path + ".grid", "expected 1 to 3 axes");
    for (size_t i = 0; i < grid->size() && r.ok(); ++i) {
      out.grid.emplace_back();
      readGrid(r, (*grid)[i], path + ".grid[" + std::to_string(i) + "]", out.args, out.grid.back());
    }
  }
}

} // namespace

std::string parse(const std::string &text, Manifest &out) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return "not valid JSON";
  if (!doc.is_object())
    return "expected a JSON object";
  std::string error;
  Reader r(error);
  std::string format = r.string(doc, "manifest", "format");
  if (r.ok() && format != kFormatName)
    r.fail("manifest.format", std::string("expected '") + kFormatName + "'");
  out.formatVersion = static_cast<int>(r.integer(doc, "manifest", "format_version", 1, 1 << 30));
  if (r.ok() && out.formatVersion > kFormatVersion)
    r.fail("manifest.format_version", "version " + std::to_string(out.formatVersion) +
                                          " is newer than this runtime reads (" + std::to_string(kFormatVersion) + ")");
  out.tilecVersion = r.string(doc, "manifest", "tilec_version");
  if (const json *kernels = r.array(doc, "manifest", "kernels"))
    for (size_t i = 0; i < kernels->size() && r.ok(); ++i) {
      KernelEntry k;
      readKernel(r, (*kernels)[i], "kernels[" + std::to_string(i) + "]", k);
      if (r.ok() && out.find(k.name, k.target))
        r.fail("kernels[" + std::to_string(i) + "]", "a second entry of " + k.name + " for " + k.target);
      out.kernels.push_back(std::move(k));
    }
  return error;
}

namespace {

json entryJson(const KernelEntry &k) {
  json args = json::array();
  for (const ArgSpec &a : k.args) {
    json arg = {{"name", a.name}, {"kind", kindName(a.kind)}};
    if (a.kind == ArgSpec::Tensor) {
      arg["dtype"] = a.dtype;
      arg["rank"] = a.rank;
      arg["divisibility"] = a.divisibility;
      if (a.tensorMap.present())
        arg["tensor_map"] = {{"box", {a.tensorMap.boxRows, a.tensorMap.boxCols}}, {"swizzle", a.tensorMap.swizzleBytes}};
    } else if (a.kind == ArgSpec::I32 && a.divisibility > 1) {
      arg["divisibility"] = a.divisibility;
    }
    args.push_back(std::move(arg));
  }
  json grid = json::array();
  for (const GridAxis &g : k.grid)
    grid.push_back({{"arg", g.arg}, {"dim", g.dim}, {"tile", g.tile}, {"extent", gridExpression(g, k.args)}});
  return {{"name", k.name},
          {"kernel", k.kernel},
          {"params", k.params},
          {"target", k.target},
          {"vendor", k.vendor},
          {"entry", k.entry},
          {"code_object", k.codeObject},
          {"sha256", k.sha256},
          {"tilec_version", k.tilecVersion},
          {"compile_options", k.compileOptions},
          {"block_size", k.blockSize},
          {"lds_bytes", k.ldsBytes},
          {"dynamic_shared_bytes", k.dynamicSharedBytes},
          {"args", std::move(args)},
          {"grid", std::move(grid)}};
}

} // namespace

std::string serializeEntry(const KernelEntry &k) { return entryJson(k).dump(2) + "\n"; }

int requiredFormatVersion(const Manifest &m) {
  for (const KernelEntry &k : m.kernels)
    for (const ArgSpec &a : k.args)
      if (a.tensorMap.present())
        return 2;
  return 1;
}

std::string serialize(const Manifest &m) {
  json kernels = json::array();
  for (const KernelEntry &k : m.kernels)
    kernels.push_back(entryJson(k));
  json doc = {{"format", kFormatName},
              {"format_version", requiredFormatVersion(m)},
              {"tilec_version", m.tilecVersion},
              {"kernels", std::move(kernels)}};
  return doc.dump(2) + "\n";
}

} // namespace tilec::bundle
