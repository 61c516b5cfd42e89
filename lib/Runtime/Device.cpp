// tilec::Device: the CPU wavefront emulator and HIP GPUs behind one API.
#include "tilec/runtime.hpp"

#include "Emit/EmitHIP.h"
#include "Emu/Emulator.h"
#include "Target/Target.h"

#include "llvm/Support/Error.h"

#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

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

/// Checks `args` against the kernel's parameters, computes the grid and
/// expands the arguments into the HIP parameter list.
Error prepare(const CompiledKernel &k, const std::vector<LaunchArg> &args, std::array<int64_t, 3> &grid,
              std::vector<RawParam> &raw) {
  if (args.size() != k.params.size())
    return Error{"launch of " + k.name + ": " + std::to_string(args.size()) + " arguments given, the kernel takes " +
                 std::to_string(k.params.size())};
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelParamInfo &p = k.params[i];
    const LaunchArg &a = args[i];
    std::string where = "launch of " + k.name + ": argument " + std::to_string(i) +
                        (p.name.empty() ? std::string() : " ('" + p.name + "')");
    if (p.kind == KernelParamInfo::Tensor) {
      if (a.kind != LaunchArg::Tensor)
        return Error{where + " must be a tensor of rank " + std::to_string(p.rank)};
      if (static_cast<int>(a.shape.size()) != p.rank)
        return Error{where + ": tensor of rank " + std::to_string(a.shape.size()) + " given, rank " +
                     std::to_string(p.rank) + " expected"};
      if (Error e = checkDivisibility(p, a, where); !e.message.empty())
        return e;
      raw.push_back({RawParam::Pointer, a.data});
      for (int64_t d : a.shape) {
        if (d < 0 || d > INT32_MAX)
          return Error{where + ": extent " + std::to_string(d) + " out of range [0, 2^31)"};
        raw.push_back({RawParam::Int, nullptr, static_cast<int32_t>(d)});
      }
    } else if (p.kind == KernelParamInfo::F32) {
      if (a.kind != LaunchArg::F32)
        return Error{where + " must be an f32 scalar"};
      raw.push_back({RawParam::Float, nullptr, 0, static_cast<float>(a.value)});
    } else {
      if (a.kind != LaunchArg::I32)
        return Error{where + " must be an i32 scalar"};
      raw.push_back({RawParam::Int, nullptr, static_cast<int32_t>(a.value)});
    }
  }
  grid = {1, 1, 1};
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

/// The few HIP entry points tilec uses (hip_runtime_api.h, ROCm >= 5).
struct HipApi {
  using hipError_t = int;
  void *lib = nullptr;
  hipError_t (*init)(unsigned) = nullptr;
  hipError_t (*getDeviceCount)(int *) = nullptr;
  hipError_t (*malloc)(void **, size_t) = nullptr;
  hipError_t (*free)(void *) = nullptr;
  hipError_t (*memcpy)(void *, const void *, size_t, int) = nullptr;
  hipError_t (*deviceSynchronize)() = nullptr;
  hipError_t (*moduleLoadData)(void **, const void *) = nullptr;
  hipError_t (*moduleGetFunction)(void **, void *, const char *) = nullptr;
  hipError_t (*moduleLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   void *, void **, void **) = nullptr;
  const char *(*getErrorString)(hipError_t) = nullptr;

  std::string err(hipError_t e) const { return getErrorString ? getErrorString(e) : "HIP error " + std::to_string(e); }
};
constexpr int kHipMemcpyHostToDevice = 1, kHipMemcpyDeviceToHost = 2;

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
    auto sym = [](const char *n) { return dlsym(api.lib, n); };
#define TILEC_HIP_SYM(field, name) api.field = reinterpret_cast<decltype(api.field)>(sym(name))
    TILEC_HIP_SYM(init, "hipInit");
    TILEC_HIP_SYM(getDeviceCount, "hipGetDeviceCount");
    TILEC_HIP_SYM(malloc, "hipMalloc");
    TILEC_HIP_SYM(free, "hipFree");
    TILEC_HIP_SYM(memcpy, "hipMemcpy");
    TILEC_HIP_SYM(deviceSynchronize, "hipDeviceSynchronize");
    TILEC_HIP_SYM(moduleLoadData, "hipModuleLoadData");
    TILEC_HIP_SYM(moduleGetFunction, "hipModuleGetFunction");
    TILEC_HIP_SYM(moduleLaunchKernel, "hipModuleLaunchKernel");
    TILEC_HIP_SYM(getErrorString, "hipGetErrorString");
#undef TILEC_HIP_SYM
    if (!api.init || !api.getDeviceCount || !api.malloc || !api.free || !api.memcpy || !api.deviceSynchronize ||
        !api.moduleLoadData || !api.moduleGetFunction || !api.moduleLaunchKernel) {
      error = "the HIP runtime lacks entry points tilec needs";
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

class HipDevice final : public Device {
public:
  HipDevice(const HipApi &api, std::string arch) : api(api), arch(std::move(arch)) {}
  DeviceKind kind() const override { return DeviceKind::Hip; }
  std::string description() const override { return "hip (" + arch + ")"; }
  Result<void *> allocate(size_t bytes) override {
    void *p = nullptr;
    if (int rc = api.malloc(&p, bytes))
      return Error{"hipMalloc(" + std::to_string(bytes) + ") failed: " + api.err(rc)};
    return p;
  }
  void release(void *p) override { api.free(p); }
  Status copyToDevice(void *dst, const void *src, size_t bytes) override {
    if (int rc = api.memcpy(dst, src, bytes, kHipMemcpyHostToDevice))
      return Error{"hipMemcpy to the device failed: " + api.err(rc)};
    return Ok{};
  }
  Status copyToHost(void *dst, const void *src, size_t bytes) override {
    if (int rc = api.memcpy(dst, src, bytes, kHipMemcpyDeviceToHost))
      return Error{"hipMemcpy to the host failed: " + api.err(rc)};
    return Ok{};
  }
  Status synchronize() override {
    if (int rc = api.deviceSynchronize())
      return Error{"hipDeviceSynchronize failed: " + api.err(rc)};
    return Ok{};
  }
  Result<LaunchStats> launch(const CompiledKernel &k, const std::vector<LaunchArg> &args) override {
    std::array<int64_t, 3> grid;
    std::vector<RawParam> raw;
    if (Error e = prepare(k, args, grid, raw); failed(e))
      return e;
    LaunchStats stats;
    stats.grid = grid;
    stats.threadsPerBlock = k.numWaves * k.waveSize;
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
      return stats;
    void *module = nullptr, *function = nullptr;
    if (int rc = api.moduleLoadData(&module, k.codeObject.data()))
      return Error{"hipModuleLoadData(" + k.name + ") failed: " + api.err(rc)};
    if (int rc = api.moduleGetFunction(&function, module, k.name.c_str()))
      return Error{"hipModuleGetFunction(" + k.name + ") failed: " + api.err(rc)};
    std::vector<void *> params;
    for (RawParam &r : raw)
      params.push_back(r.kind == RawParam::Pointer ? static_cast<void *>(&r.ptr)
                       : r.kind == RawParam::Int   ? static_cast<void *>(&r.i)
                                                   : static_cast<void *>(&r.f));
    auto start = std::chrono::steady_clock::now();
    if (int rc = api.moduleLaunchKernel(function, grid[0], grid[1], grid[2], stats.threadsPerBlock, 1, 1, 0,
                                        nullptr, params.data(), nullptr))
      return Error{"hipModuleLaunchKernel(" + k.name + ") failed: " + api.err(rc)};
    if (Status s = synchronize(); !s)
      return Error{s.error()};
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return stats;
  }

private:
  const HipApi &api;
  std::string arch;
};

} // namespace

Result<std::unique_ptr<Device>> Device::open(DeviceKind kind, const std::string &arch) {
  const TargetInfo *target = lookupTarget(arch);
  if (!target)
    return Error{"tilec: error: unknown target '" + arch + "' (known: " + knownTargetsList() + ")"};
  if (kind == DeviceKind::Hip || kind == DeviceKind::Auto) {
    std::string why;
    if (const HipApi *api = hipApi(why))
      return std::unique_ptr<Device>(new HipDevice(*api, arch));
    if (kind == DeviceKind::Hip)
      return Error{"tilec: error: --device=hip: " + why};
  }
  return std::unique_ptr<Device>(new EmulatorDevice(*target));
}

} // namespace tilec
