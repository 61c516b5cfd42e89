// tilec::Device: the CPU wavefront emulator and HIP GPUs behind one API.
#include "tilec/runtime.hpp"

#include "Emu/Emulator.h"
#include "Target/Target.h"

#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace tilec {

const char *deviceKindName(DeviceKind kind) {
  switch (kind) {
  case DeviceKind::Auto: return "auto";
  case DeviceKind::Emulator: return "emulator";
  case DeviceKind::Hip: return "hip";
  }
  return "?";
}

std::string LaunchStats::checksLine() const {
  std::string s = "checks: out_of_bounds=" + std::to_string(outOfBounds) +
                  " races=" + std::to_string(races) + " uninitialized_lds=" + std::to_string(uninitializedLdsReads) +
                  " misaligned_lds=" + std::to_string(misalignedLdsAccesses) +
                  " bank_conflicts=" + std::to_string(bankConflicts);
  if (deadlock)
    s += " deadlock=1";
  if (invalidInstructions)
    s += " invalid_instructions=" + std::to_string(invalidInstructions);
  return s;
}

namespace {

/// A raw kernel parameter after expanding tensors into pointer + dims.
struct RawParam {
  enum Kind { Pointer, Int, Float } kind;
  void *ptr = nullptr;
  int32_t i = 0;
  float f = 0;
};

/// Bytes of an element type as MLIR prints it (bf16, f32, i32, f8E4M3FNUZ, ...):
/// the first number in the name is its bit width.
int64_t elementBytes(const std::string &type) {
  size_t i = type.find_first_of("0123456789");
  int64_t bits = i == std::string::npos ? 8 : std::atoll(type.c_str() + i);
  return std::max<int64_t>(1, bits / 8);
}

/// What a kernel compiled for tensors of divisibility d (dsl::TensorOptions)
/// assumes of tensor argument `a`: its innermost extent is a multiple of d and
/// its data is aligned to min(16, d * element bytes). Empty when it holds.
Error checkDivisibility(const KernelParamInfo &p, const LaunchArg &a, const std::string &where) {
  if (p.divisibility <= 1 || a.shape.empty())
    return Error{};
  const int64_t inner = a.shape.back();
  if (inner % p.divisibility != 0)
    return Error{where + ": innermost extent " + std::to_string(inner) + " is not a multiple of " +
                 std::to_string(p.divisibility) + " (the kernel was compiled for tensors of divisibility " +
                 std::to_string(p.divisibility) + "; compile it for these sizes)"};
  const int64_t align = p.divisibility >= 16 ? 16 : std::min<int64_t>(16, p.divisibility * elementBytes(p.elemType));
  if (reinterpret_cast<uintptr_t>(a.data) % static_cast<uintptr_t>(align) != 0)
    return Error{where + ": data is not aligned to " + std::to_string(align) +
                 " bytes (the kernel was compiled for tensors of divisibility " + std::to_string(p.divisibility) + ")"};
  return Error{};
}

/// The bytes of a tensor of `shape` with elements of `elemBytes` bytes, or
/// nullopt when that exceeds int64.
std::optional<int64_t> tensorBytes(const std::vector<int64_t> &shape, int64_t elemBytes) {
  int64_t bytes = elemBytes;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, d, &bytes))
      return std::nullopt;
  return bytes;
}

/// "launch of K: argument 1 ('B')": where an argument's error is.
std::string argumentWhere(const CompiledKernel &k, size_t i) {
  const std::string &name = k.params[i].name;
  return "launch of " + k.name + ": argument " + std::to_string(i) + (name.empty() ? std::string() : " ('" + name + "')");
}

/// Expands `args`, which passed checkLaunchArgs, into the HIP parameter list:
/// a tensor becomes a pointer and one int per dimension, then its tensor map
/// where the kernel takes one: on the emulator (the only device here that
/// runs kernels with tensor maps) the tensor's pointer (tilec_hw_emu.h).
std::vector<RawParam> expand(const CompiledKernel &k, const std::vector<LaunchArg> &args) {
  std::vector<RawParam> raw;
  for (size_t i = 0; i < args.size(); ++i) {
    const LaunchArg &a = args[i];
    if (a.kind == LaunchArg::Tensor) {
      raw.push_back({RawParam::Pointer, a.data});
      for (int64_t d : a.shape)
        raw.push_back({RawParam::Int, nullptr, static_cast<int32_t>(d)});
      if (k.params[i].tensorMap.present())
        raw.push_back({RawParam::Pointer, a.data});
    } else if (a.kind == LaunchArg::F32) {
      raw.push_back({RawParam::Float, nullptr, 0, static_cast<float>(a.value)});
    } else {
      raw.push_back({RawParam::Int, nullptr, static_cast<int32_t>(a.value)});
    }
  }
  return raw;
}

/// The grid of `k` over `args`.
Result<std::array<int64_t, 3>> launchGrid(const CompiledKernel &k, const std::vector<LaunchArg> &args) {
  std::array<int64_t, 3> grid = {1, 1, 1};
  for (size_t axis = 0; axis < k.grid.size() && axis < 3; ++axis) {
    const GridDim &g = k.grid[axis];
    int64_t extent = g.tile;
    if (g.arg >= 0 && g.axis < 0) {
      if (g.arg >= static_cast<int>(args.size()) || args[g.arg].kind != LaunchArg::I32)
        return Error{"launch of " + k.name + ": grid axis " + std::to_string(axis) + " refers to a missing i32 scalar argument"};
      int64_t v = static_cast<int64_t>(args[g.arg].value);
      extent = v <= 0 ? 0 : (v + g.tile - 1) / g.tile;
    } else if (g.arg >= 0) {
      if (g.arg >= static_cast<int>(args.size()) || g.axis >= static_cast<int>(args[g.arg].shape.size()))
        return Error{"launch of " + k.name + ": grid axis " + std::to_string(axis) + " refers to a missing tensor dimension"};
      extent = (args[g.arg].shape[g.axis] + g.tile - 1) / g.tile;
    }
    grid[axis] = extent;
  }
  return grid;
}

/// checkLaunchArgs, then the grid and the HIP parameter list.
Error prepare(const CompiledKernel &k, const std::vector<LaunchArg> &args, std::array<int64_t, 3> &grid,
              std::vector<RawParam> &raw) {
  if (Status s = checkLaunchArgs(k, args); !s)
    return Error{s.error()};
  Result<std::array<int64_t, 3>> g = launchGrid(k, args);
  if (!g)
    return Error{g.error()};
  grid = *g;
  raw = expand(k, args);
  return Error{};
}

bool failed(const Error &e) { return !e.message.empty(); }

// --- the CPU wavefront emulator ---------------------------------------------------

class EmulatorDevice final : public Device {
public:
  explicit EmulatorDevice(const TargetInfo &t) : target(t), emu(t) {}
  DeviceKind kind() const override { return DeviceKind::Emulator; }
  std::string description() const override {
    return "emulator (" + target.arch + ", wave" + std::to_string(target.waveSize) + ")";
  }
  Result<void *> allocate(size_t bytes) override { return emu.allocate(bytes); }
  void release(void *p) override { emu.release(p); }
  Status copyToDevice(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return Ok{};
  }
  Status copyToHost(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return Ok{};
  }
  Status synchronize() override { return Ok{}; }

  Result<LaunchStats> launch(const CompiledKernel &k, const std::vector<LaunchArg> &args) override {
    if (k.arch != target.arch)
      return Error{"launch of " + k.name + ": compiled for " + k.arch + ", this emulator runs " + target.arch};
    std::array<int64_t, 3> grid;
    std::vector<RawParam> raw;
    if (Error e = prepare(k, args, grid, raw); failed(e))
      return e;
    LaunchStats stats;
    stats.grid = grid;
    stats.threadsPerBlock = k.numWaves * k.waveSize;
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
      return stats;
    llvm::Expected<std::shared_ptr<emu::KernelImage>> image = emu.load(k.hip, k.name, k.paramTypes);
    if (!image)
      return Error{"emulator: loading " + k.name + " failed:\n" + llvm::toString(image.takeError())};
    std::vector<emu::Arg> eargs;
    for (const RawParam &r : raw)
      eargs.push_back(r.kind == RawParam::Pointer ? emu::Arg::pointer(r.ptr)
                      : r.kind == RawParam::Int   ? emu::Arg::integer(r.i)
                                                  : emu::Arg::real(r.f));
    emu::LaunchConfig cfg;
    for (int i = 0; i < 3; ++i)
      cfg.grid[i] = static_cast<int>(grid[i]);
    cfg.threadsPerBlock = stats.threadsPerBlock;
    llvm::Expected<emu::LaunchReport> rep = emu.launch(**image, cfg, eargs);
    if (!rep)
      return Error{"emulator: launch of " + k.name + " failed: " + llvm::toString(rep.takeError())};
    stats.seconds = rep->seconds;
    stats.checked = true;
    stats.outOfBounds = rep->outOfBounds;
    stats.races = rep->races;
    stats.uninitializedLdsReads = rep->uninitializedLdsReads;
    stats.misalignedLdsAccesses = rep->misalignedLdsAccesses;
    stats.bankConflicts = rep->bankConflictCycles;
    stats.deadlock = rep->deadlock;
    stats.invalidInstructions = rep->invalidInstructions;
    stats.laneInstructions = rep->laneInstructions;
    stats.messages = rep->messages;
    return stats;
  }

private:
  TargetInfo target;
  emu::Emulator emu;
};

// --- HIP GPUs, through the ROCm runtime loaded at run time -----------------------------

/// The few HIP entry points tilec uses (hip_runtime_api.h, ROCm >= 5). Handles
/// (modules, functions, events, streams) are opaque pointers.
struct HipApi {
  using hipError_t = int;
  void *lib = nullptr;
  hipError_t (*init)(unsigned) = nullptr;
  hipError_t (*getDeviceCount)(int *) = nullptr;
  hipError_t (*getDeviceProperties)(void *, int) = nullptr;
  hipError_t (*setDevice)(int) = nullptr;
  hipError_t (*malloc)(void **, size_t) = nullptr;
  hipError_t (*free)(void *) = nullptr;
  hipError_t (*memcpy)(void *, const void *, size_t, int) = nullptr;
  hipError_t (*deviceSynchronize)() = nullptr;
  hipError_t (*moduleLoadData)(void **, const void *) = nullptr;
  hipError_t (*moduleUnload)(void *) = nullptr;
  hipError_t (*moduleGetFunction)(void **, void *, const char *) = nullptr;
  hipError_t (*moduleLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   void *, void **, void **) = nullptr;
  hipError_t (*eventCreate)(void **) = nullptr;
  hipError_t (*eventDestroy)(void *) = nullptr;
  hipError_t (*eventRecord)(void *, void *) = nullptr;
  hipError_t (*eventSynchronize)(void *) = nullptr;
  hipError_t (*eventElapsedTime)(float *, void *, void *) = nullptr;
  const char *(*getErrorString)(hipError_t) = nullptr;

  std::string err(hipError_t e) const { return getErrorString ? getErrorString(e) : "HIP error " + std::to_string(e); }
};
constexpr int kHipMemcpyHostToDevice = 1, kHipMemcpyDeviceToHost = 2;

/// The start of hipDeviceProp_t as hipGetDeviceProperties fills it: ROCm 5's
/// layout, which ROCm 6 keeps under that symbol (its new layout is
/// hipGetDevicePropertiesR0600). tilec reads gcnArchName alone
/// ("gfx90a:sramecc+:xnack-"); the fields before it are here for its offset.
struct HipDevicePropPrefix {
  char name[256];
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
  int clockRate, memoryClockRate, memoryBusWidth;
  size_t totalConstMem;
  int major, minor, multiProcessorCount, l2CacheSize, maxThreadsPerMultiProcessor, computeMode;
  int clockInstructionRate;
  unsigned arch;  // hipDeviceArch_t: 17 one-bit fields
  int concurrentKernels, pciDomainID, pciBusID, pciDeviceID;
  size_t maxSharedMemoryPerMultiProcessor;
  int isMultiGpuBoard, canMapHostMemory, gcnArch;
  char gcnArchName[256];
};
static_assert(offsetof(HipDevicePropPrefix, gcnArchName) == 396, "gcnArchName's offset in ROCm 5's hipDeviceProp_t");
/// Room for the whole hipDeviceProp_t (792 bytes in ROCm 5.2; later versions
/// append fields).
constexpr size_t kHipDevicePropBytes = 4096;

/// The processor of a gcnArchName: "gfx90a" of "gfx90a:sramecc+:xnack-".
std::string baseArch(const std::string &gcnArchName) { return gcnArchName.substr(0, gcnArchName.find(':')); }

/// Loads the HIP runtime once; an error string when it is absent or has no GPU.
const HipApi *hipApi(std::string &why) {
  static HipApi api;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char *name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
      if ((api.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!api.lib) {
      error = "the HIP runtime (libamdhip64.so) is not installed";
      return;
    }
    std::vector<std::string> missing;
    auto sym = [&missing](const char *n) {
      void *p = dlsym(api.lib, n);
      if (!p)
        missing.push_back(n);
      return p;
    };
#define TILEC_HIP_SYM(field, name) api.field = reinterpret_cast<decltype(api.field)>(sym(name))
    TILEC_HIP_SYM(init, "hipInit");
    TILEC_HIP_SYM(getDeviceCount, "hipGetDeviceCount");
    TILEC_HIP_SYM(getDeviceProperties, "hipGetDeviceProperties");
    TILEC_HIP_SYM(setDevice, "hipSetDevice");
    TILEC_HIP_SYM(malloc, "hipMalloc");
    TILEC_HIP_SYM(free, "hipFree");
    TILEC_HIP_SYM(memcpy, "hipMemcpy");
    TILEC_HIP_SYM(deviceSynchronize, "hipDeviceSynchronize");
    TILEC_HIP_SYM(moduleLoadData, "hipModuleLoadData");
    TILEC_HIP_SYM(moduleUnload, "hipModuleUnload");
    TILEC_HIP_SYM(moduleGetFunction, "hipModuleGetFunction");
    TILEC_HIP_SYM(moduleLaunchKernel, "hipModuleLaunchKernel");
    TILEC_HIP_SYM(eventCreate, "hipEventCreate");
    TILEC_HIP_SYM(eventDestroy, "hipEventDestroy");
    TILEC_HIP_SYM(eventRecord, "hipEventRecord");
    TILEC_HIP_SYM(eventSynchronize, "hipEventSynchronize");
    TILEC_HIP_SYM(eventElapsedTime, "hipEventElapsedTime");
#undef TILEC_HIP_SYM
    api.getErrorString = reinterpret_cast<decltype(api.getErrorString)>(dlsym(api.lib, "hipGetErrorString"));
    if (!missing.empty()) {
      error = "the HIP runtime lacks entry points tilec needs:";
      for (const std::string &n : missing)
        error += " " + n;
      return;
    }
    int count = 0;
    int rc = api.init(0);
    if (rc == 0)
      rc = api.getDeviceCount(&count);
    if (rc != 0 || count == 0) {
      error = "no HIP GPU is present (" + (rc ? api.err(rc) : std::string("hipGetDeviceCount = 0")) + ")";
      return;
    }
  });
  why = error;
  return error.empty() ? &api : nullptr;
}

/// The first GPU whose processor is `arch`, or an error naming those present:
/// "no HIP device with arch gfx942: found gfx90a (device 0)".
Result<int> findHipDevice(const HipApi &api, const std::string &arch) {
  int count = 0;
  if (int rc = api.getDeviceCount(&count))
    return Error{"hipGetDeviceCount failed: " + api.err(rc)};
  std::string found;
  for (int d = 0; d < count; ++d) {
    alignas(HipDevicePropPrefix) char props[kHipDevicePropBytes] = {};
    if (int rc = api.getDeviceProperties(props, d))
      return Error{"hipGetDeviceProperties(" + std::to_string(d) + ") failed: " + api.err(rc)};
    const char *gcnArchName = props + offsetof(HipDevicePropPrefix, gcnArchName);
    const std::string name(gcnArchName, strnlen(gcnArchName, sizeof(HipDevicePropPrefix::gcnArchName)));
    if (baseArch(name) == arch)
      return d;
    found += (found.empty() ? "" : ", ") + name + " (device " + std::to_string(d) + ")";
  }
  return Error{"no HIP device with arch " + arch + ": found " + found};
}

/// One GPU. Code objects are loaded once each (keyed by their bytes) and stay
/// loaded until the device closes; kernels are timed by GPU events.
class HipDevice final : public Device {
public:
  HipDevice(const HipApi &api, std::string arch, int ordinal) : api(api), arch(std::move(arch)), ordinal(ordinal) {}
  ~HipDevice() override {
    std::lock_guard<std::mutex> lock(mutex);
    (void)select();  // a destructor cannot report a failure: unload whatever happens
    for (auto &[bytes, m] : modules)
      api.moduleUnload(m.module);
    for (void *e : {start, stop})
      if (e)
        api.eventDestroy(e);
  }
  DeviceKind kind() const override { return DeviceKind::Hip; }
  std::string description() const override { return "hip (" + arch + ", device " + std::to_string(ordinal) + ")"; }
  Result<void *> allocate(size_t bytes) override {
    if (Status s = select(); !s)
      return Error{s.error()};
    void *p = nullptr;
    if (int rc = api.malloc(&p, bytes))
      return Error{"hipMalloc(" + std::to_string(bytes) + ") failed: " + api.err(rc)};
    return p;
  }
  void release(void *p) override {
    if (select())
      api.free(p);
  }
  Status copyToDevice(void *dst, const void *src, size_t bytes) override {
    if (Status s = select(); !s)
      return s;
    if (int rc = api.memcpy(dst, src, bytes, kHipMemcpyHostToDevice))
      return Error{"hipMemcpy to the device failed: " + api.err(rc)};
    return Ok{};
  }
  Status copyToHost(void *dst, const void *src, size_t bytes) override {
    if (Status s = select(); !s)
      return s;
    if (int rc = api.memcpy(dst, src, bytes, kHipMemcpyDeviceToHost))
      return Error{"hipMemcpy to the host failed: " + api.err(rc)};
    return Ok{};
  }
  Status synchronize() override {
    if (Status s = select(); !s)
      return s;
    if (int rc = api.deviceSynchronize())
      return Error{"hipDeviceSynchronize failed: " + api.err(rc)};
    return Ok{};
  }
  Result<LaunchStats> launch(const CompiledKernel &k, const std::vector<LaunchArg> &args) override {
    if (baseArch(k.arch) != arch)
      return Error{"launch of " + k.name + ": compiled for " + k.arch + ", " + description() + " runs " + arch};
    std::array<int64_t, 3> grid;
    std::vector<RawParam> raw;
    if (Error e = prepare(k, args, grid, raw); failed(e))
      return e;
    LaunchStats stats;
    stats.grid = grid;
    stats.threadsPerBlock = k.numWaves * k.waveSize;
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
      return stats;
    std::vector<void *> params;
    for (RawParam &r : raw)
      params.push_back(r.kind == RawParam::Pointer ? static_cast<void *>(&r.ptr)
                       : r.kind == RawParam::Int   ? static_cast<void *>(&r.i)
                                                   : static_cast<void *>(&r.f));
    std::lock_guard<std::mutex> lock(mutex);
    if (Status s = select(); !s)
      return Error{s.error()};
    Result<void *> function = loadFunction(k);
    if (!function)
      return Error{function.error()};
    if (Status s = createEvents(); !s)
      return Error{s.error()};
    // Both events are recorded on the null stream around the launch: the
    // interval between them is the kernel's run on the GPU.
    if (int rc = api.eventRecord(start, nullptr))
      return Error{"hipEventRecord failed: " + api.err(rc)};
    if (int rc = api.moduleLaunchKernel(*function, grid[0], grid[1], grid[2], stats.threadsPerBlock, 1, 1, 0,
                                        nullptr, params.data(), nullptr))
      return Error{"hipModuleLaunchKernel(" + k.name + ") failed: " + api.err(rc)};
    if (int rc = api.eventRecord(stop, nullptr))
      return Error{"hipEventRecord failed: " + api.err(rc)};
    if (int rc = api.eventSynchronize(stop))
      return Error{"launch of " + k.name + " failed: " + api.err(rc)};
    float ms = 0;
    if (int rc = api.eventElapsedTime(&ms, start, stop))
      return Error{"hipEventElapsedTime failed: " + api.err(rc)};
    stats.seconds = ms / 1e3;
    return stats;
  }

private:
  /// A loaded code object and the kernels looked up in it.
  struct Module {
    void *module = nullptr;
    std::unordered_map<std::string, void *> functions;
  };

  /// Makes this GPU the calling thread's current HIP device.
  Status select() const {
    if (int rc = api.setDevice(ordinal))
      return Error{"hipSetDevice(" + std::to_string(ordinal) + ") failed: " + api.err(rc)};
    return Ok{};
  }

  /// k's kernel, from its code object loaded on this GPU once (`mutex` held).
  Result<void *> loadFunction(const CompiledKernel &k) {
    if (k.codeObject.empty())
      return Error{"launch of " + k.name + ": the kernel has no code object"};
    std::string bytes(k.codeObject.begin(), k.codeObject.end());
    auto it = modules.find(bytes);
    if (it == modules.end()) {
      Module m;
      if (int rc = api.moduleLoadData(&m.module, k.codeObject.data()))
        return Error{"hipModuleLoadData(" + k.name + ") failed: " + api.err(rc)};
      it = modules.emplace(std::move(bytes), std::move(m)).first;
    }
    Module &m = it->second;
    auto f = m.functions.find(k.name);
    if (f == m.functions.end()) {
      void *function = nullptr;
      if (int rc = api.moduleGetFunction(&function, m.module, k.name.c_str()))
        return Error{"hipModuleGetFunction(" + k.name + ") failed: " + api.err(rc)};
      f = m.functions.emplace(k.name, function).first;
    }
    return f->second;
  }

  /// The timing events, created at the first launch (`mutex` held).
  Status createEvents() {
    for (void **e : {&start, &stop})
      if (!*e)
        if (int rc = api.eventCreate(e))
          return Error{"hipEventCreate failed: " + api.err(rc)};
    return Ok{};
  }

  const HipApi &api;
  const std::string arch;  ///< the processor, e.g. gfx942
  const int ordinal;       ///< the HIP device index
  std::mutex mutex;        ///< guards the modules and the events
  std::unordered_map<std::string, Module> modules;  ///< by code-object bytes
  void *start = nullptr, *stop = nullptr;
};

} // namespace

Status checkLaunchArgs(const CompiledKernel &k, const std::vector<LaunchArg> &args) {
  if (args.size() != k.params.size())
    return Error{"launch of " + k.name + ": " + std::to_string(args.size()) + " arguments given, the kernel takes " +
                 std::to_string(k.params.size())};
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelParamInfo &p = k.params[i];
    const LaunchArg &a = args[i];
    const std::string where = argumentWhere(k, i);
    if (p.kind == KernelParamInfo::Tensor) {
      if (a.kind != LaunchArg::Tensor)
        return Error{where + " must be a tensor of rank " + std::to_string(p.rank)};
      if (static_cast<int>(a.shape.size()) != p.rank)
        return Error{where + ": tensor of rank " + std::to_string(a.shape.size()) + " given, rank " +
                     std::to_string(p.rank) + " expected"};
      for (int64_t d : a.shape)
        if (d < 0 || d > INT32_MAX)
          return Error{where + ": extent " + std::to_string(d) + " out of range [0, 2^31)"};
      const std::optional<int64_t> bytes = tensorBytes(a.shape, elementBytes(p.elemType));
      if (!bytes || *bytes > kMaxTensorBytes)
        return Error{where + ": " + (bytes ? std::to_string(*bytes) : std::string("more than 2^63")) +
                     " bytes; tensors are limited to 2^31 - 4 bytes (32-bit buffer offsets)"};
      if (Error e = checkDivisibility(p, a, where); !e.message.empty())
        return e;
    } else if (p.kind == KernelParamInfo::F32) {
      if (a.kind != LaunchArg::F32)
        return Error{where + " must be an f32 scalar"};
    } else if (a.kind != LaunchArg::I32) {
      return Error{where + " must be an i32 scalar"};
    } else if (p.divisibility > 1 && static_cast<int64_t>(a.value) % p.divisibility != 0) {
      return Error{where + ": " + std::to_string(static_cast<int64_t>(a.value)) + " is not a multiple of " +
                   std::to_string(p.divisibility) + " (the kernel was compiled for values of divisibility " +
                   std::to_string(p.divisibility) + "; compile it for these sizes)"};
    }
  }
  return Ok{};
}

Result<std::unique_ptr<Device>> Device::open(DeviceKind kind, const std::string &arch) {
  const TargetInfo *target = lookupTarget(arch);
  if (!target)
    return Error{"tilec: error: unknown target '" + arch + "' (known: " + knownTargetsList() + ")"};
  if (kind == DeviceKind::Hip || kind == DeviceKind::Auto) {
    std::string why;
    if (const HipApi *api = hipApi(why)) {
      Result<int> ordinal = findHipDevice(*api, arch);
      if (ordinal)
        return std::unique_ptr<Device>(new HipDevice(*api, arch, *ordinal));
      why = ordinal.error();
    }
    if (kind == DeviceKind::Hip)
      return Error{"tilec: error: --device=hip: " + why};
  }
  return std::unique_ptr<Device>(new EmulatorDevice(*target));
}

} // namespace tilec
