// The compiler's C ABI (include/tilec/tilec.h) over the C++ API
// (tilec/tilec.hpp), the shipped-kernel registry and the bundle writer of
// `tilec --emit=bundle`, so that a kernel compiled here gets the same
// manifest entry as an exported one.
#include "tilec/tilec.h"

#include "Bundle.h"
#include "Registry.h"

#include "JIT/CacheFiles.h"
#include "Target/Target.h"
#include "tilec/tilec.hpp"

#include <nlohmann/json.hpp>

#include <mutex>
#include <string>

struct tilec_compiled {
  tilec::cli::BundledKernel bundled;
  std::string manifestEntry;  ///< JSON
  std::string report;         ///< JSON
};

namespace {

thread_local std::string lastError;

tilec_compile_status fail(tilec_compile_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

/// The options as this library knows them, from a caller's struct of
/// `struct_size` bytes.
tilec_compile_status readOptions(const tilec_compile_options *in, tilec::CompileOptions &out,
                                 tilec::JitChoice &jit) {
  tilec_compile_options opts = TILEC_COMPILE_OPTIONS_INIT;
  if (in) {
    if (in->struct_size != sizeof(tilec_compile_options))
      return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT,
                  "tilec_compile_options.struct_size is " + std::to_string(in->struct_size) +
                      "; this library (ABI version " + std::to_string(TILEC_COMPILER_ABI_VERSION) + ") expects " +
                      std::to_string(sizeof(tilec_compile_options)) +
                      " (initialise the struct with TILEC_COMPILE_OPTIONS_INIT)");
    opts = *in;
  }
  out.arch = opts.target ? opts.target : "gfx942";
  if (!tilec::lookupTarget(out.arch))
    return fail(TILEC_COMPILE_ERROR_UNKNOWN_TARGET,
                "unknown target '" + out.arch + "' (known: " + tilec::knownTargetsList() + ")");
  const std::string jitName = opts.jit ? opts.jit : "auto";
  if (jitName == "auto")
    jit = tilec::JitChoice::Auto;
  else if (jitName == "hiprtc")
    jit = tilec::JitChoice::HipRTC;
  else if (jitName == "clang")
    jit = tilec::JitChoice::Clang;
  else
    return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT,
                "unknown jit '" + jitName + "' (expected auto, hiprtc or clang)");
  out.jit = jit;
  out.useCache = opts.use_cache != 0;
  out.cacheDir = opts.cache_dir ? opts.cache_dir : "";
  return TILEC_COMPILE_OK;
}

/// Compiles on one thread at a time: the C++ API does not promise that
/// concurrent compiles in one process are safe (the in-process clang and lld
/// keep process-wide state).
std::mutex &compileMutex() {
  static std::mutex mutex;
  return mutex;
}

/// Wraps a compiled kernel with its manifest entry and report.
tilec_compile_status finish(tilec::Result<tilec::CompiledKernel> compiled, std::string launchName,
                            std::string shippedKernel, tilec::kernels::KernelParams params, tilec::JitChoice jit,
                            tilec_compiled **out) {
  if (!compiled)
    return fail(TILEC_COMPILE_ERROR_COMPILE, compiled.error());
  auto *c = new tilec_compiled;
  tilec::cli::BundledKernel &b = c->bundled;
  b.compiled = std::move(*compiled);
  b.launchName = std::move(launchName);
  b.shippedKernel = std::move(shippedKernel);
  b.params = std::move(params);
  b.compileOptions = tilec::cli::recordedCompileOptions(jit, b.compiled);
  c->manifestEntry = tilec::bundle::serializeEntry(tilec::cli::manifestEntry(b));
  c->report = b.compiled.report.toJson();
  *out = c;
  return TILEC_COMPILE_OK;
}

/// One of a compiled kernel's texts, or "" (and a message) for NULL.
template <class Get> const char *textOf(const tilec_compiled *compiled, const char *function, Get get) {
  if (!compiled) {
    lastError = std::string(function) + ": compiled is NULL";
    return "";
  }
  return get(*compiled).c_str();
}

std::string shippedKernelNames() {
  std::string names;
  for (const tilec::kernels::KernelInfo &k : tilec::kernels::shippedKernels())
    names += (names.empty() ? "" : ", ") + k.name;
  return names;
}

} // namespace

extern "C" {

int tilec_compiler_abi_version(void) { return TILEC_COMPILER_ABI_VERSION; }

const char *tilec_compiler_version(void) { return TILEC_VERSION; }

const char *tilec_compiler_kernels(void) {
  static const std::string text = [] {
    nlohmann::json kernels = nlohmann::json::array();
    for (const tilec::kernels::KernelInfo &k : tilec::kernels::shippedKernels()) {
      nlohmann::json params = nlohmann::json::array();
      for (const tilec::kernels::KernelParam &p : k.params)
        params.push_back({{"name", p.name}, {"default", p.defaultValue}, {"help", p.help}, {"values", p.spec.describe()}});
      kernels.push_back({{"name", k.name}, {"summary", k.summary}, {"params", std::move(params)}});
    }
    return kernels.dump();
  }();
  return text.c_str();
}

const char *tilec_compiler_cache_dir(void) {
  thread_local std::string dir;
  dir = tilec::cachefiles::defaultDir();
  return dir.c_str();
}

tilec_compile_status tilec_compile_kernel(const char *kernel, const char *const *keys, const char *const *values,
                                          size_t num_params, const tilec_compile_options *options,
                                          tilec_compiled **out) {
  if (!out)
    return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT, "tilec_compile_kernel: out is NULL");
  *out = nullptr;
  if (!kernel || !*kernel)
    return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT, "tilec_compile_kernel: no kernel name");
  if (num_params > 0 && (!keys || !values))
    return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT,
                "tilec_compile_kernel: " + std::to_string(num_params) + " parameters but keys or values is NULL");
  const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel(kernel);
  if (!info)
    return fail(TILEC_COMPILE_ERROR_UNKNOWN_KERNEL,
                "unknown kernel '" + std::string(kernel) + "' (shipped: " + shippedKernelNames() + ")");
  tilec::kernels::KernelParams given;
  for (size_t i = 0; i < num_params; ++i) {
    if (!keys[i] || !values[i])
      return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT,
                  "kernel '" + std::string(kernel) + "': parameter " + std::to_string(i) + " has a NULL key or value");
    if (!*keys[i])
      return fail(TILEC_COMPILE_ERROR_PARAM,
                  "kernel '" + std::string(kernel) + "': parameter " + std::to_string(i) + " has an empty name");
    if (!given.emplace(keys[i], values[i]).second)
      return fail(TILEC_COMPILE_ERROR_PARAM,
                  "kernel '" + std::string(kernel) + "': parameter '" + keys[i] + "' given twice");
  }
  tilec::CompileOptions opts;
  tilec::JitChoice jit;
  if (tilec_compile_status s = readOptions(options, opts, jit))
    return s;
  const tilec::kernels::KernelParams withDefaults = tilec::kernels::withTargetDefaults(*info, given, opts.arch);
  tilec::Result<tilec::Kernel> built = info->build(withDefaults);
  if (!built)
    return fail(TILEC_COMPILE_ERROR_PARAM, built.error());
  std::lock_guard<std::mutex> lock(compileMutex());
  return finish(tilec::compile(*built, opts), built->name(), info->name, withDefaults, jit, out);
}

tilec_compile_status tilec_compile_tile_ir(const char *ir, size_t size, const char *buffer_name,
                                           const tilec_compile_options *options, tilec_compiled **out) {
  if (!out)
    return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT, "tilec_compile_tile_ir: out is NULL");
  *out = nullptr;
  if (!ir || size == 0)
    return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT, "tilec_compile_tile_ir: no tile IR (NULL or 0 bytes)");
  tilec::CompileOptions opts;
  tilec::JitChoice jit;
  if (tilec_compile_status s = readOptions(options, opts, jit))
    return s;
  std::lock_guard<std::mutex> lock(compileMutex());
  tilec::Result<tilec::CompiledKernel> compiled =
      tilec::compileTileIR(std::string(ir, size), opts, buffer_name ? buffer_name : "<tile-ir>");
  // The symbol is the kernel function's name followed by "_<target>"; the
  // launch name is the function's name.
  std::string launchName;
  if (compiled) {
    launchName = compiled->name;
    const std::string suffix = "_" + compiled->arch;
    if (launchName.size() > suffix.size() &&
        launchName.compare(launchName.size() - suffix.size(), suffix.size(), suffix) == 0)
      launchName.resize(launchName.size() - suffix.size());
  }
  return finish(std::move(compiled), launchName, "", {}, jit, out);
}

void tilec_compiled_free(tilec_compiled *compiled) { delete compiled; }

const void *tilec_compiled_code_object(const tilec_compiled *compiled, size_t *size) {
  if (!compiled) {
    if (size)
      *size = 0;
    lastError = "tilec_compiled_code_object: compiled is NULL";
    return nullptr;
  }
  const std::vector<char> &co = compiled->bundled.compiled.codeObject;
  if (size)
    *size = co.size();
  return co.data();
}

const char *tilec_compiled_name(const tilec_compiled *compiled) {
  return textOf(compiled, __func__, [](const tilec_compiled &c) -> auto & { return c.bundled.launchName; });
}

const char *tilec_compiled_manifest_entry(const tilec_compiled *compiled) {
  return textOf(compiled, __func__, [](const tilec_compiled &c) -> auto & { return c.manifestEntry; });
}

const char *tilec_compiled_report(const tilec_compiled *compiled) {
  return textOf(compiled, __func__, [](const tilec_compiled &c) -> auto & { return c.report; });
}

const char *tilec_compiled_tile_ir(const tilec_compiled *compiled) {
  return textOf(compiled, __func__, [](const tilec_compiled &c) -> auto & { return c.bundled.compiled.tileIR; });
}

const char *tilec_compiled_source(const tilec_compiled *compiled) {
  return textOf(compiled, __func__, [](const tilec_compiled &c) -> auto & { return c.bundled.compiled.hip; });
}

tilec_compile_status tilec_compiled_add_to_bundle(const tilec_compiled *compiled, const char *dir) {
  if (!compiled || !dir || !*dir)
    return fail(TILEC_COMPILE_ERROR_INVALID_ARGUMENT, "tilec_compiled_add_to_bundle: compiled or dir is NULL or empty");
  if (std::string e = tilec::cli::exportBundle(dir, {compiled->bundled}); !e.empty())
    return fail(TILEC_COMPILE_ERROR_IO, e);
  return TILEC_COMPILE_OK;
}

const char *tilec_compile_last_error(void) { return lastError.c_str(); }

const char *tilec_compile_status_name(tilec_compile_status status) {
  switch (status) {
  case TILEC_COMPILE_OK:
    return "TILEC_COMPILE_OK";
  case TILEC_COMPILE_ERROR_INVALID_ARGUMENT:
    return "TILEC_COMPILE_ERROR_INVALID_ARGUMENT";
  case TILEC_COMPILE_ERROR_UNKNOWN_KERNEL:
    return "TILEC_COMPILE_ERROR_UNKNOWN_KERNEL";
  case TILEC_COMPILE_ERROR_PARAM:
    return "TILEC_COMPILE_ERROR_PARAM";
  case TILEC_COMPILE_ERROR_UNKNOWN_TARGET:
    return "TILEC_COMPILE_ERROR_UNKNOWN_TARGET";
  case TILEC_COMPILE_ERROR_COMPILE:
    return "TILEC_COMPILE_ERROR_COMPILE";
  case TILEC_COMPILE_ERROR_IO:
    return "TILEC_COMPILE_ERROR_IO";
  }
  return "unknown status";
}

} // extern "C"
