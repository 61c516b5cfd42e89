// Emulator: tracked allocations, host compilation of kernel text (clang 19
// subprocess -> shared object -> dlopen) with an in-memory and on-disk image
// cache, argument checking and launch. The runtime is in Runtime.cpp (with
// RuntimeMemory.cpp and RuntimeMatrix.cpp).
#include "Emu/Emulator.h"

#include "Emit/Prelude.h"
#include "Emu/Runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

namespace tilec::emu {
namespace {

/// Flags of the host compile. -O2: the emulated kernel's own arithmetic runs natively.
/// -ffp-contract=off: every operation rounds as in the GPU build (lib/JIT's
/// kDefaultOptions); fused multiply-adds are the prelude's explicit fma calls.
const char *const kHostFlags[] = {"-x", "c++", "-std=c++17", "-O2", "-ffp-contract=off", "-fPIC", "-shared",
                                  "-fno-exceptions", "-w"};

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\n\r"), e = s.find_last_not_of(" \t\n\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

enum class ParamClass { Pointer, Integer, Floating };

/// How a kernel parameter of C type `type` is passed. A tensor map
/// (tl::hw::tma_map) is a pointer on the emulator (tilec_hw_emu.h).
ParamClass classify(const std::string &type) {
  if (type.find('*') != std::string::npos || type == "tl::hw::tma_map")
    return ParamClass::Pointer;
  if (type.find("float") != std::string::npos || type.find("double") != std::string::npos ||
      type.find("_Float16") != std::string::npos)
    return ParamClass::Floating;
  return ParamClass::Integer;
}

/// The generated glue next to the kernel: argument unpacking, ABI binding, TLS probe.
std::string trampoline(const std::string &kernelName, const std::vector<std::string> &types) {
  std::string s = "\n// --- tilec emulator glue ---\n"
                  "struct tilec_emu_raw { void *p; long long i; double f; };\n"
                  "extern \"C\" void tilec_emu_entry(const void *raw) {\n"
                  "  const tilec_emu_raw *a = (const tilec_emu_raw *)raw;\n  (void)a;\n  " +
                  kernelName + "(";
  for (size_t i = 0; i < types.size(); ++i) {
    const char *field = classify(types[i]) == ParamClass::Pointer   ? "p"
                        : classify(types[i]) == ParamClass::Floating ? "f"
                                                                     : "i";
    s += (i ? ", " : "") + std::string("(") + types[i] + ")a[" + std::to_string(i) + "]." + field;
  }
  s += ");\n}\n"
       "extern \"C\" void tilec_emu_bind(const tl_emu_abi *abi) { tl::hw::emu = abi; }\n"
       "extern \"C\" void *tilec_emu_tls_probe() { static thread_local char probe; return &probe; }\n";
  return s;
}

std::string defaultCacheDir() {
  if (const char *d = getenv("TILEC_CACHE_DIR"); d && *d)
    return d;
  if (const char *d = getenv("XDG_CACHE_HOME"); d && *d)
    return std::string(d) + "/tilec";
  if (const char *d = getenv("HOME"); d && *d)
    return std::string(d) + "/.cache/tilec";
  return "";
}

std::string findClang() {
  for (const char *name : {TILEC_EMU_CLANG, "clang++-19", "clang-19", "clang++", "clang"})
    if (auto p = llvm::sys::findProgramByName(name))
      return *p;
  return TILEC_EMU_CLANG;
}

} // namespace

std::string LaunchReport::summary() const {
  return "out_of_bounds=" + std::to_string(outOfBounds) + " races=" + std::to_string(races) +
         " uninitialized_lds=" + std::to_string(uninitializedLdsReads) +
         " misaligned_lds=" + std::to_string(misalignedLdsAccesses) + " bank_conflicts=" +
         std::to_string(bankConflictCycles) + " deadlock=" + std::to_string(deadlock ? 1 : 0);
}

KernelImage::~KernelImage() {
  if (handle_)
    dlclose(handle_);
}

llvm::Expected<std::vector<std::string>> parseParamTypes(const std::string &source, const std::string &kernelName) {
  size_t pos = 0;
  for (;;) {
    pos = source.find(kernelName, pos);
    if (pos == std::string::npos)
      return error("kernel '" + kernelName + "' not found in the source");
    size_t after = pos + kernelName.size();
    bool wordStart = pos == 0 || !(isalnum((unsigned char)source[pos - 1]) || source[pos - 1] == '_');
    size_t paren = source.find_first_not_of(" \t\n", after);
    size_t prev = pos == 0 ? std::string::npos : source.find_last_not_of(" \t\n", pos - 1);
    bool afterVoid = prev != std::string::npos && prev >= 3 && source.compare(prev - 3, 4, "void") == 0;
    if (wordStart && afterVoid && paren != std::string::npos && source[paren] == '(') {
      pos = paren + 1;
      break;
    }
    pos = after;
  }
  std::vector<std::string> params;
  std::string current;
  int depth = 0;
  for (; pos < source.size(); ++pos) {
    char c = source[pos];
    if ((c == ',' || c == ')') && depth == 0) {
      if (!trim(current).empty())
        params.push_back(trim(current));
      current.clear();
      if (c == ')')
        break;
      continue;
    }
    depth += (c == '<' || c == '(') - (c == '>' || c == ')');
    current += c;
  }
  std::vector<std::string> types;
  for (const std::string &p : params) {
    if (p == "void")
      continue;
    size_t e = p.size();
    while (e > 0 && (isalnum((unsigned char)p[e - 1]) || p[e - 1] == '_'))
      --e;
    std::string type = trim(p.substr(0, e));
    if (type.empty() || e == p.size())
      return error("cannot parse parameter '" + p + "' of kernel '" + kernelName + "'");
    types.push_back(type);
  }
  return types;
}

Emulator::Emulator(const TargetInfo &target) : target_(target), cacheDir_(defaultCacheDir()) {
  if (!cacheDir_.empty())
    cacheDir_ += "/emu";
}

Emulator::~Emulator() {
  for (auto &[p, size] : allocations_)
    free((void *)p);
}

void *Emulator::allocate(size_t bytes) {
  size_t rounded = std::max<size_t>(256, (bytes + 255) / 256 * 256);
  void *p = aligned_alloc(256, rounded);
  if (!p)
    return nullptr;
  memset(p, 0, rounded);
  std::lock_guard<std::mutex> lock(mutex_);
  allocations_[(uintptr_t)p] = bytes;  // the checker allows exactly `bytes`
  return p;
}

void Emulator::release(void *p) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocations_.find((uintptr_t)p);
  if (it == allocations_.end())
    return;
  allocations_.erase(it);
  free(p);
}

llvm::Expected<std::shared_ptr<KernelImage>> Emulator::load(const std::string &hipSource,
                                                          const std::string &kernelName,
                                                          const std::vector<std::string> &paramTypesIn) {
  std::vector<std::string> paramTypes = paramTypesIn;
  if (paramTypes.empty()) {
    auto parsed = parseParamTypes(hipSource, kernelName);
    if (!parsed)
      return parsed.takeError();
    paramTypes = std::move(*parsed);
  }
  const std::string &prelude = emulatorPreludeText();
  const std::string source = hipSource + trampoline(kernelName, paramTypes);
  std::string keyText = prelude + '\0' + source + '\0' + kernelName + '\0' + std::to_string(TL_EMU_ABI_VERSION);
  for (const char *f : kHostFlags)
    keyText += std::string(f) + ' ';
  const std::string key = llvm::utohexstr(llvm::xxh3_64bits(llvm::StringRef(keyText)), /*LowerCase=*/true, 16);

  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = images_.find(key); it != images_.end())
    return it->second;

  std::string soPath;
  if (!cacheDir_.empty()) {
    llvm::SmallString<256> p(cacheDir_);
    llvm::sys::path::append(p, kernelName + "-" + key + ".so");
    if (llvm::sys::fs::exists(p))
      soPath = std::string(p);
  }
  if (soPath.empty()) {
    llvm::SmallString<256> dir;
    if (auto ec = llvm::sys::fs::createUniqueDirectory("tilec-emu", dir))
      return error("emulator: cannot create a temporary folder: " + ec.message());
    auto writeFile = [&](const std::string &name, const std::string &text) -> llvm::Error {
      std::error_code ec;
      llvm::raw_fd_ostream os((dir + "/" + name).str(), ec);
      if (ec)
        return error("emulator: cannot write " + name + ": " + ec.message());
      os << text;
      return llvm::Error::success();
    };
    if (auto e = writeFile("tilec_prelude.h", prelude))
      return std::move(e);
    if (auto e = writeFile("kernel.cpp", source))
      return std::move(e);
    std::string clang = findClang(), src = (dir + "/kernel.cpp").str(), out = (dir + "/kernel.so").str(),
                log = (dir + "/compile.log").str(), inc = ("-I" + dir).str();
    std::vector<llvm::StringRef> argv = {clang};
    for (const char *f : kHostFlags)
      argv.push_back(f);
    argv.insert(argv.end(), {inc, src, "-o", out});
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
    std::string execError;
    int rc = llvm::sys::ExecuteAndWait(clang, argv, std::nullopt, redirects, 0, 0, &execError);
    if (rc != 0) {
      std::string logText;
      if (auto buf = llvm::MemoryBuffer::getFile(log))
        logText = (*buf)->getBuffer().str();
      return error("emulator: host compile of '" + kernelName + "' failed (" + clang + ", exit " +
                   std::to_string(rc) + (execError.empty() ? "" : ", " + execError) + "):\n" + logText);
    }
    soPath = out;
    if (!cacheDir_.empty() && !llvm::sys::fs::create_directories(cacheDir_)) {
      llvm::SmallString<256> final(cacheDir_), tmp;
      llvm::sys::path::append(final, kernelName + "-" + key + ".so");
      tmp = final;
      tmp += ".tmp" + std::to_string(getpid());
      if (!llvm::sys::fs::copy_file(out, tmp) && !llvm::sys::fs::rename(tmp, final))
        soPath = std::string(final);
      else
        llvm::sys::fs::remove(tmp);
    }
  }

  auto image = std::make_shared<KernelImage>();
  image->name_ = kernelName;
  image->paramTypes_ = paramTypes;
  image->path_ = soPath;
  image->handle_ = dlopen(soPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!image->handle_)
    return error(std::string("emulator: dlopen failed: ") + dlerror());
  image->entry_ = (void (*)(const void *))dlsym(image->handle_, "tilec_emu_entry");
  image->tlsProbe_ = (void *(*)())dlsym(image->handle_, "tilec_emu_tls_probe");
  auto bind = (void (*)(const tl_emu_abi *))dlsym(image->handle_, "tilec_emu_bind");
  if (!image->entry_ || !image->tlsProbe_ || !bind)
    return error("emulator: " + soPath + " lacks the emulator glue symbols");
  bind(detail::abiTable());
  images_[key] = image;
  return image;
}

llvm::Expected<LaunchReport> Emulator::launch(const KernelImage &kernel, const LaunchConfig &config,
                                              const std::vector<Arg> &args) {
  if (!kernel.entry_)
    return error("emulator: kernel image is not loaded");
  for (int g : config.grid)
    if (g < 1)
      return error("emulator: grid dimensions must be >= 1");
  if (config.threadsPerBlock < 1 || config.threadsPerBlock > 1024)
    return error("emulator: threadsPerBlock must be in [1, 1024], got " + std::to_string(config.threadsPerBlock));
  const auto &types = kernel.paramTypes_;
  if (args.size() != types.size())
    return error("emulator: kernel '" + kernel.name_ + "' takes " + std::to_string(types.size()) + " arguments, got " +
                 std::to_string(args.size()));
  std::vector<detail::RawArg> raw(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    ParamClass want = classify(types[i]);
    ParamClass got = args[i].kind == Arg::Pointer ? ParamClass::Pointer
                     : args[i].kind == Arg::Float ? ParamClass::Floating
                                                  : ParamClass::Integer;
    if (want != got)
      return error("emulator: argument " + std::to_string(i) + " of '" + kernel.name_ + "' has type '" + types[i] +
                   "' but a " + (got == ParamClass::Pointer ? "pointer" : got == ParamClass::Floating ? "float" : "integer") +
                   " was passed");
    raw[i] = {args[i].ptr, (long long)args[i].i, (double)args[i].f};
  }
  detail::GridJob job;
  job.kernelName = kernel.name_;
  job.entry = kernel.entry_;
  job.tlsProbe = kernel.tlsProbe_;
  job.args = raw.data();
  job.config = config;
  job.waveSize = target_.waveSize;
  job.ldsBanks = target_.ldsBanks;
  job.matrixFlushes16BitSubnormals = target_.matrixFlushes16BitSubnormals;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &[p, size] : allocations_)
      job.allocations.push_back({p, p + size});
  }
  return detail::runGrid(job);
}

} // namespace tilec::emu
