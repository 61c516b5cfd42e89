// PTX -> cubin through the CUDA toolkit's nvJitLink, loaded with dlopen at
// run time (never linked): libnvJitLink.so.<major> from $TILEC_CUDA_PATH,
// $CUDA_PATH or /usr/local/cuda (lib64/), else the loader's search path. Its
// entry points carry the toolkit's version in their names
// (__nvJitLinkCreate_13_0); the version is read with nvJitLinkVersion. No GPU
// is needed: nvJitLink runs ptxas in process.

#include "JIT/Compilers.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>
#include <dlfcn.h>
#include <mutex>

namespace tilec::jit::detail {
namespace {

using nvJitLinkHandle = void *;
using nvJitLinkResult = int;
constexpr int kInputPtx = 2;  // NVJITLINK_INPUT_PTX

struct NvJitLinkLibrary {
  void *handle = nullptr;
  std::string error;  ///< why none loaded
  unsigned major = 0, minor = 0;
  nvJitLinkResult (*create)(nvJitLinkHandle *, uint32_t, const char **) = nullptr;
  nvJitLinkResult (*destroy)(nvJitLinkHandle *) = nullptr;
  nvJitLinkResult (*addData)(nvJitLinkHandle, int, const void *, size_t, const char *) = nullptr;
  nvJitLinkResult (*complete)(nvJitLinkHandle) = nullptr;
  nvJitLinkResult (*cubinSize)(nvJitLinkHandle, size_t *) = nullptr;
  nvJitLinkResult (*cubin)(nvJitLinkHandle, void *) = nullptr;
  nvJitLinkResult (*errorLogSize)(nvJitLinkHandle, size_t *) = nullptr;
  nvJitLinkResult (*errorLog)(nvJitLinkHandle, char *) = nullptr;
  nvJitLinkResult (*infoLogSize)(nvJitLinkHandle, size_t *) = nullptr;
  nvJitLinkResult (*infoLog)(nvJitLinkHandle, char *) = nullptr;
};

/// Candidate files, most specific first.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  for (const char *var : {"TILEC_CUDA_PATH", "CUDA_PATH"})
    if (const char *dir = std::getenv(var); dir && *dir) {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, "lib64", "libnvJitLink.so");
      out.push_back(std::string(path));
    }
  out.push_back("/usr/local/cuda/lib64/libnvJitLink.so");
  out.push_back("libnvJitLink.so");
  std::vector<std::string> versioned;
  for (const std::string &c : out)
    for (const char *v : {".13", ".12", ""})
      versioned.push_back(c + v);
  return versioned;
}

const NvJitLinkLibrary &library() {
  static NvJitLinkLibrary lib;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const std::string &name : candidates()) {
      void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle)
        continue;
      auto version = reinterpret_cast<nvJitLinkResult (*)(unsigned *, unsigned *)>(dlsym(handle, "nvJitLinkVersion"));
      NvJitLinkLibrary l;
      if (!version || version(&l.major, &l.minor) != 0) {
        dlclose(handle);
        continue;
      }
      const std::string suffix = "_" + std::to_string(l.major) + "_0";
      auto bind = [&](const char *base, auto &fn) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, (base + suffix).c_str()));
        return fn != nullptr;
      };
      bool ok = bind("__nvJitLinkCreate", l.create) && bind("__nvJitLinkDestroy", l.destroy) &&
                bind("__nvJitLinkAddData", l.addData) && bind("__nvJitLinkComplete", l.complete) &&
                bind("__nvJitLinkGetLinkedCubinSize", l.cubinSize) && bind("__nvJitLinkGetLinkedCubin", l.cubin) &&
                bind("__nvJitLinkGetErrorLogSize", l.errorLogSize) && bind("__nvJitLinkGetErrorLog", l.errorLog) &&
                bind("__nvJitLinkGetInfoLogSize", l.infoLogSize) && bind("__nvJitLinkGetInfoLog", l.infoLog);
      if (!ok) {
        dlclose(handle);
        continue;
      }
      l.handle = handle;
      lib = l;
      return;
    }
    lib.error = "no CUDA nvJitLink library found (libnvJitLink.so.13 or .12 from a CUDA toolkit: set "
                "$TILEC_CUDA_PATH or $CUDA_PATH to the toolkit's folder)";
  });
  return lib;
}

std::string readLog(const NvJitLinkLibrary &lib, nvJitLinkHandle h, bool info) {
  size_t size = 0;
  if ((info ? lib.infoLogSize : lib.errorLogSize)(h, &size) != 0 || size == 0)
    return "";
  std::string text(size, '\0');
  if ((info ? lib.infoLog : lib.errorLog)(h, text.data()) != 0)
    return "";
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n'))
    text.pop_back();
  return text;
}

} // namespace

llvm::Expected<Cubin> linkPtx(llvm::StringRef ptx, const TargetInfo &target, llvm::StringRef name) {
  const NvJitLinkLibrary &lib = library();
  if (!lib.handle)
    return llvm::createStringError("%s", lib.error.c_str());
  const std::string arch = "-arch=" + target.arch;
  const char *options[] = {arch.c_str(), "-O3", "-verbose"};
  nvJitLinkHandle h = nullptr;
  if (nvJitLinkResult r = lib.create(&h, 3, options); r != 0)
    return llvm::createStringError("nvJitLink %u.%u: cannot start a link for %s (error %d)", lib.major, lib.minor,
                                   target.arch.c_str(), r);
  // PTX is text: nvJitLink reads it up to the size given, which includes a terminating NUL.
  std::string text = ptx.str();
  const std::string file = (name + ".ptx").str();
  Cubin out;
  std::string failure;
  if (lib.addData(h, kInputPtx, text.c_str(), text.size() + 1, file.c_str()) != 0 || lib.complete(h) != 0) {
    failure = "ptxas (nvJitLink " + std::to_string(lib.major) + "." + std::to_string(lib.minor) + ") failed on " +
              file + ":\n" + readLog(lib, h, false);
  } else {
    size_t size = 0;
    lib.cubinSize(h, &size);
    out.bytes.resize(size);
    if (size == 0 || lib.cubin(h, out.bytes.data()) != 0)
      failure = "nvJitLink returned no cubin for " + file;
    out.infoLog = readLog(lib, h, true);
  }
  lib.destroy(&h);
  if (!failure.empty())
    return llvm::createStringError("%s", failure.c_str());
  return out;
}

} // namespace tilec::jit::detail

namespace tilec::jit {

std::string nvJitLinkIdentity() {
  const detail::NvJitLinkLibrary &lib = detail::library();
  return lib.handle ? "nvJitLink " + std::to_string(lib.major) + "." + std::to_string(lib.minor) : std::string();
}

} // namespace tilec::jit
