// hipRTC through dlopen: the library is found at run time (ROCm >= 6 ships
// libhiprtc.so; ROCm 5.x, e.g. Debian's 5.2.3, has the hiprtc* entry points in
// libamdhip64.so.5). Only hiprtc* functions are called: no HIP runtime entry
// point, so nothing initialises a device (docs/design.md section 5, "Compiler choice").

#include "JIT/Compilers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>
#include <mutex>

namespace tilec::jit {
namespace {

using hiprtcProgram = void *;
using hiprtcResult = int;

/// The loaded library and its entry points; `handle` is null when none loads.
/// The library stays loaded for the life of the process (unloading a HIP
/// runtime is not safe).
struct HipRTCLibrary {
  void *handle = nullptr;
  int rocmMajor = 0, rocmMinor = 0;
  std::string rocmVersion;  ///< "5.2.21153" when known, else "major.minor"

  hiprtcResult (*createProgram)(hiprtcProgram *, const char *, const char *, int,
                                const char *const *, const char *const *) = nullptr;
  hiprtcResult (*compileProgram)(hiprtcProgram, int, const char *const *) = nullptr;
  hiprtcResult (*destroyProgram)(hiprtcProgram *) = nullptr;
  hiprtcResult (*getCodeSize)(hiprtcProgram, size_t *) = nullptr;
  hiprtcResult (*getCode)(hiprtcProgram, char *) = nullptr;
  hiprtcResult (*getProgramLogSize)(hiprtcProgram, size_t *) = nullptr;
  hiprtcResult (*getProgramLog)(hiprtcProgram, char *) = nullptr;
  hiprtcResult (*version)(int *, int *) = nullptr;
  const char *(*getErrorString)(hiprtcResult) = nullptr;
};

/// The first ROCm release whose hipRTC compiles for an arch. Older ones do not
/// reject a newer arch: they crash inside comgr (ROCm 5.2 on gfx940/gfx942/gfx1100).
struct ArchSupport {
  const char *arch;
  int major, minor;
};
constexpr ArchSupport kArchSupport[] = {
    {"gfx900", 5, 0},  {"gfx906", 5, 0},  {"gfx908", 5, 0}, {"gfx90a", 5, 0},
    {"gfx1030", 5, 0}, {"gfx942", 6, 0},  {"gfx1100", 6, 0}, {"gfx1151", 6, 0},
};

template <typename Fn> bool bind(void *handle, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  return fn != nullptr;
}

/// ROCm version from the file the library resolves to, e.g.
/// libamdhip64.so.5.2.21153 or libhiprtc.so.6.2.60200 -> "5.2.21153".
std::string versionFromFileName(void *symbol) {
  Dl_info info;
  if (!dladdr(symbol, &info) || !info.dli_fname)
    return {};
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(info.dli_fname, real))
    return {};
  llvm::StringRef name = llvm::sys::path::filename(real);
  size_t so = name.find(".so.");
  return so == llvm::StringRef::npos ? std::string() : name.substr(so + 4).str();
}

const HipRTCLibrary &library() {
  static HipRTCLibrary lib;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char *name : {"libhiprtc.so", "libhiprtc.so.6", "libamdhip64.so",
                             "libamdhip64.so.6", "libamdhip64.so.5"}) {
      void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!handle)
        continue;
      HipRTCLibrary l;
      l.handle = handle;
      bool ok = bind(handle, "hiprtcCreateProgram", l.createProgram) &&
                bind(handle, "hiprtcCompileProgram", l.compileProgram) &&
                bind(handle, "hiprtcDestroyProgram", l.destroyProgram) &&
                bind(handle, "hiprtcGetCodeSize", l.getCodeSize) &&
                bind(handle, "hiprtcGetCode", l.getCode) &&
                bind(handle, "hiprtcGetProgramLogSize", l.getProgramLogSize) &&
                bind(handle, "hiprtcGetProgramLog", l.getProgramLog) &&
                bind(handle, "hiprtcVersion", l.version) &&
                bind(handle, "hiprtcGetErrorString", l.getErrorString);
      if (!ok)
        continue;  // a HIP runtime without hipRTC (ROCm >= 6 split it out)
      // hiprtcVersion of ROCm 5.x answers a fixed 9.0 (NVRTC-style); the file
      // name of the library carries the ROCm version.
      std::string fileVersion = versionFromFileName(reinterpret_cast<void *>(l.createProgram));
      llvm::SmallVector<llvm::StringRef, 3> parts;
      llvm::StringRef(fileVersion).split(parts, '.');
      if (parts.size() >= 2 && !parts[0].getAsInteger(10, l.rocmMajor) &&
          !parts[1].getAsInteger(10, l.rocmMinor)) {
        l.rocmVersion = fileVersion;
      } else {
        int major = 0, minor = 0;
        if (l.version(&major, &minor) == 0 && major >= 5 && major < 9) {
          l.rocmMajor = major;
          l.rocmMinor = minor;
        }
        l.rocmVersion = std::to_string(l.rocmMajor) + "." + std::to_string(l.rocmMinor);
      }
      lib = l;
      return;
    }
  });
  return lib;
}

/// hipRTC's compiler is not documented as thread-safe: one compile at a time.
std::mutex &hipRTCMutex() {
  static std::mutex mutex;
  return mutex;
}

} // namespace

std::string hipRTCIdentity() {
  const HipRTCLibrary &lib = library();
  return lib.handle ? "hipRTC (ROCm " + lib.rocmVersion + ")" : std::string();
}

bool hipRTCSupports(const TargetInfo &target) {
  const HipRTCLibrary &lib = library();
  if (!lib.handle)
    return false;
  for (const ArchSupport &s : kArchSupport)
    if (target.arch == s.arch)
      return std::make_pair(lib.rocmMajor, lib.rocmMinor) >= std::make_pair(s.major, s.minor);
  return false;
}

namespace detail {

llvm::Expected<CodeObject> compileWithHipRTC(const CompileRequest &request) {
  const HipRTCLibrary &lib = library();
  const std::string &arch = request.target->arch;
  if (!lib.handle)
    return llvm::createStringError("hipRTC is not available (no libhiprtc.so or "
                                   "libamdhip64.so with hiprtc* entry points)");
  if (!hipRTCSupports(*request.target))
    return llvm::createStringError("%s does not support %s", hipRTCIdentity().c_str(),
                                   arch.c_str());

  std::vector<const char *> headerContents, headerNames;
  for (const auto &[name, contents] : request.headers) {
    headerNames.push_back(name.c_str());
    headerContents.push_back(contents.c_str());
  }
  std::string archFlag = "--offload-arch=" + arch;
  std::vector<const char *> options = {archFlag.c_str()};
  for (const char *opt : detail::kDefaultOptions)
    options.push_back(opt);
  for (const std::string &opt : request.options)
    options.push_back(opt.c_str());
  std::string fileName = sourceFileName(request);

  std::lock_guard<std::mutex> lock(hipRTCMutex());
  hiprtcProgram program = nullptr;
  if (hiprtcResult rc = lib.createProgram(&program, request.source.c_str(), fileName.c_str(),
                                          static_cast<int>(headerNames.size()),
                                          headerContents.data(), headerNames.data()))
    return llvm::createStringError("hiprtcCreateProgram failed: %s", lib.getErrorString(rc));
  struct Destroy {
    const HipRTCLibrary &lib;
    hiprtcProgram &program;
    ~Destroy() { lib.destroyProgram(&program); }
  } destroy{lib, program};

  hiprtcResult compiled =
      lib.compileProgram(program, static_cast<int>(options.size()), options.data());
  std::string log;
  size_t logSize = 0;
  if (lib.getProgramLogSize(program, &logSize) == 0 && logSize > 1) {
    log.resize(logSize);
    if (lib.getProgramLog(program, log.data()) != 0)
      log.clear();
    while (!log.empty() && log.back() == '\0')
      log.pop_back();
  }
  if (compiled != 0)
    return llvm::createStringError("%s failed to compile '%s' for %s (%s):\n%s",
                                   hipRTCIdentity().c_str(), request.kernelName.c_str(),
                                   arch.c_str(), lib.getErrorString(compiled), log.c_str());

  size_t size = 0;
  if (hiprtcResult rc = lib.getCodeSize(program, &size))
    return llvm::createStringError("hiprtcGetCodeSize failed: %s", lib.getErrorString(rc));
  std::vector<char> blob(size);
  if (hiprtcResult rc = lib.getCode(program, blob.data()))
    return llvm::createStringError("hiprtcGetCode failed: %s", lib.getErrorString(rc));

  llvm::Expected<std::vector<char>> elf = extractCodeObject(blob, arch);
  if (!elf)
    return elf.takeError();
  CodeObject code;
  code.elf = std::move(*elf);
  code.compiler = JitKind::HipRTC;
  code.compilerIdentity = hipRTCIdentity();
  code.log = std::move(log);
  return code;
}

} // namespace detail
} // namespace tilec::jit
