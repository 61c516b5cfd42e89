// tilec: the command-line compiler's launcher.
//
// Loading the compiler (libtilec.so with MLIR, clang and LLVM as shared
// libraries) takes a few hundred milliseconds before main runs, most of it
// in the dynamic loader and the static constructors of libLLVM.so. A shipped
// kernel that was compiled before needs none of it:
//
//   tilec --kernel=gemm [-p key=value ...] [--offload-arch=A] [--jit=J]
//         [--emit=obj|hip|tile|report] [--json] [-o F]
//
// builds the kernel with the DSL (plain C++), looks its tile IR up in the
// compiled-kernel cache (lib/JIT/FrontCache.h, the same entries tilec::compile
// reads and writes) and writes the answer. Everything else (another command
// line, a miss, a damaged entry, an output it would not write) goes to the
// full compiler, tools/tilec/tilec.cpp, loaded with dlopen from
// libtilec-cli.so: its behaviour, messages included, are the compiler's.
// This file links no LLVM shared library: only the static LLVMSupport
// objects for SHA-256, xxhash and JSON (the report).
#include "JIT/CacheFiles.h"
#include "JIT/FrontCache.h"

#include "Params.h"
#include "Registry.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <limits.h>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

/// The command line of a cached-kernel request, or nullopt for any other.
struct CachedRequest {
  std::string kernel;
  std::vector<std::string> params;
  std::string arch = tilec::kDefaultArch;
  tilec::JitChoice jit = tilec::JitChoice::Auto;
  std::string emit = "report";  // obj, hip, tile or report
  bool json = false;
  std::string output;
};

/// Reads the flags the fast path knows, in the spellings llvm::cl accepts
/// (-name=value, --name=value, -name value, --name value). Anything else,
/// or a single-valued flag given twice, is the full compiler's to parse.
std::optional<CachedRequest> parseCachedRequest(int argc, char **argv) {
  CachedRequest r;
  bool seenKernel = false, seenArch = false, seenJit = false, seenEmit = false, seenOutput = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-')
      return std::nullopt;
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = body, value;
    bool hasValue = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      hasValue = true;
    }
    auto takeValue = [&]() -> bool {
      if (hasValue)
        return true;
      if (i + 1 >= argc)
        return false;
      value = argv[++i];
      return true;
    };
    auto once = [&](bool &seen, std::string &slot) {
      if (seen || !takeValue())
        return false;
      seen = true;
      slot = value;
      return true;
    };
    std::string jit;
    if (name == "json" && !hasValue) {
      if (r.json)
        return std::nullopt;
      r.json = true;
    } else if (name == "kernel") {
      if (!once(seenKernel, r.kernel))
        return std::nullopt;
    } else if (name == "offload-arch") {
      if (!once(seenArch, r.arch))
        return std::nullopt;
    } else if (name == "emit") {
      if (!once(seenEmit, r.emit))
        return std::nullopt;
    } else if (name == "o") {
      if (!once(seenOutput, r.output))
        return std::nullopt;
    } else if (name == "jit") {
      if (!once(seenJit, jit))
        return std::nullopt;
      if (jit == "auto")
        r.jit = tilec::JitChoice::Auto;
      else if (jit == "hiprtc")
        r.jit = tilec::JitChoice::HipRTC;
      else if (jit == "clang")
        r.jit = tilec::JitChoice::Clang;
      else
        return std::nullopt;
    } else if (name == "p") {
      if (!takeValue())
        return std::nullopt;
      r.params.push_back(value);
    } else {
      return std::nullopt;
    }
  }
  if (r.kernel.empty() ||
      !(r.emit == "obj" || r.emit == "hip" || r.emit == "tile" || r.emit == "report"))
    return std::nullopt;
  if ((r.emit == "obj" && r.output.empty()) || (r.json && r.emit != "report"))
    return std::nullopt;
  return r;
}

/// Writes `data` where -o says (atomically), or to stdout. False when the
/// fast path should not write it (an output that is not a regular file, such
/// as /dev/null or a folder, or a failed write): the full compiler then
/// writes it or reports why it cannot.
bool writeOutput(const std::string &output, std::string_view data) {
  if (output.empty() || output == "-")
    return std::fwrite(data.data(), 1, data.size(), stdout) == data.size() && std::fflush(stdout) == 0;
  struct stat st;
  if (stat(output.c_str(), &st) == 0 ? !S_ISREG(st.st_mode) : errno != ENOENT)
    return false;
  return tilec::cachefiles::writeAtomically(output, data).empty();
}

/// The fast path: the exit status when the request was answered from the
/// cache, nullopt when the full compiler must run.
std::optional<int> answerFromCache(int argc, char **argv) {
  std::optional<CachedRequest> request = parseCachedRequest(argc, argv);
  if (!request)
    return std::nullopt;
  const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel(request->kernel);
  if (!info)
    return std::nullopt;
  tilec::Result<tilec::kernels::KernelParams> values = tilec::kernels::parseParamFlags(request->params);
  if (!values)
    return std::nullopt;
  tilec::Result<tilec::Kernel> kernel = info->build(tilec::kernels::withTargetDefaults(*info, *values, request->arch));
  if (!kernel || !kernel->ok())
    return std::nullopt;

  // The same options and key as tilec::compile(kernel, opts) in the compiler.
  tilec::CompileOptions opts;
  opts.arch = request->arch;
  opts.jit = request->jit;
  tilec::jit::FrontCache cache(opts);
  if (cache.dir().empty())
    return std::nullopt;
  std::optional<tilec::CompiledKernel> hit =
      cache.load(tilec::jit::frontCacheKey(kernel->toJson(), kernel->name() + ".tile", opts));
  if (!hit)
    return std::nullopt;

  std::string text;
  std::string_view data;
  if (request->emit == "obj") {
    data = std::string_view(hit->codeObject.data(), hit->codeObject.size());
  } else {
    if (request->emit == "hip")
      text = hit->hip;
    else if (request->emit == "tile")
      text = hit->tileIR + "\n";
    else
      text = request->json ? hit->report.toJson() + "\n" : hit->report.toText();
    data = text;
  }
  if (!writeOutput(request->output, data))
    return std::nullopt;
  for (const std::string &remark : hit->remarks)
    std::fprintf(stderr, "%s\n", remark.c_str());
  return 0;
}

/// The folder of this executable.
std::string executableDir() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0)
    return ".";
  std::string p(path, static_cast<size_t>(n));
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

/// Loads the full compiler and runs it on the command line.
int runCompiler(int argc, char **argv) {
  const std::string dir = executableDir();
  const std::string candidates[] = {
      dir + "/../" TILEC_INSTALL_LIBDIR "/" TILEC_CLI_MODULE,  // installed
      TILEC_BUILD_LIBDIR "/" TILEC_CLI_MODULE,                 // build tree
  };
  std::string errors;
  for (const std::string &path : candidates) {
    if (access(path.c_str(), F_OK) != 0)
      continue;
    void *module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module) {
      errors += std::string("\n  ") + dlerror();
      continue;
    }
    using Main = int (*)(int, char **);
    Main cliMain = reinterpret_cast<Main>(dlsym(module, "tilecCliMain"));
    if (!cliMain) {
      errors += "\n  " + path + ": no tilecCliMain";
      continue;
    }
    return cliMain(argc, argv);
  }
  std::fprintf(stderr, "tilec: error: cannot load the compiler (%s)%s\n", TILEC_CLI_MODULE,
               errors.empty() ? " : not found next to the tilec executable" : errors.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (std::optional<int> rc = answerFromCache(argc, argv))
    return *rc;
  return runCompiler(argc, argv);
}
