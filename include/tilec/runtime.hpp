// tilec runtime: one device API over several kinds of device: the CPU
// wavefront emulator (always present) and a HIP GPU (where the ROCm runtime
// and a GPU are present). Allocate, copy, launch, synchronise.
//
//   auto dev = tilec::Device::open(tilec::DeviceKind::Auto, "gfx942");
//   void *a = *(*dev)->allocate(bytes);
//   (*dev)->copyToDevice(a, host, bytes);
//   auto stats = (*dev)->launch(compiled, {tilec::LaunchArg::tensor(a, {M, K}), ...});
//
// Public header: no MLIR or LLVM.
#pragma once

#include "tilec/result.hpp"
#include "tilec/tilec.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tilec {

enum class DeviceKind { Auto, Emulator, Hip };
const char *deviceKindName(DeviceKind kind);  ///< "auto", "emulator", "hip"

/// One kernel argument at launch, in the kernel's argument order.
struct LaunchArg {
  enum Kind { Tensor, F32, I32 } kind = Tensor;
  void *data = nullptr;          ///< tensors: device memory from Device::allocate
  std::vector<int64_t> shape;    ///< tensors: one extent per dimension (row-major)
  double value = 0;              ///< scalars

  static LaunchArg tensor(void *data, std::vector<int64_t> shape) {
    LaunchArg a;
    a.data = data;
    a.shape = std::move(shape);
    return a;
  }
  static LaunchArg f32(float v) {
    LaunchArg a;
    a.kind = F32;
    a.value = v;
    return a;
  }
  static LaunchArg i32(int32_t v) {
    LaunchArg a;
    a.kind = I32;
    a.value = v;
    return a;
  }
};

/// What a launch did. On the emulator the checkers run (`checked`); a GPU
/// reports only the time.
struct LaunchStats {
  std::array<int64_t, 3> grid = {1, 1, 1};
  int threadsPerBlock = 0;
  double seconds = 0;
  bool checked = false;
  int64_t outOfBounds = 0;
  int64_t races = 0;
  int64_t uninitializedLdsReads = 0;  ///< LDS reads of bytes the workgroup never wrote (LDS is not cleared)
  int64_t misalignedLdsAccesses = 0;  ///< LDS accesses whose address is not a multiple of their size
  int64_t bankConflicts = 0;  ///< extra LDS cycles (docs/hardware.md section 3 phase model)
  bool deadlock = false;
  int64_t invalidInstructions = 0;  ///< instructions the target lacks or cannot perform (e.g. a misaligned b128 load)
  int64_t laneInstructions = 0;
  std::vector<std::string> messages;  ///< the first findings of each checker

  bool clean() const {
    return outOfBounds == 0 && races == 0 && uninitializedLdsReads == 0 && misalignedLdsAccesses == 0 && !deadlock &&
           invalidInstructions == 0;
  }
  /// "checks: out_of_bounds=0 races=0 uninitialized_lds=0 misaligned_lds=0 bank_conflicts=12"
  /// (+ " deadlock=1" and " invalid_instructions=N" when they fired).
  std::string checksLine() const;
};

/// The largest tensor a kernel can be launched on, in bytes: 2^31 - 4. Kernels
/// address tensors through buffer resources with 32-bit byte offsets, and the
/// device prelude gives an element outside the tensor the offset 2^31 - 4
/// (`tl::Global::outside`), which must lie at or past the end of every tensor
/// for the hardware to skip that access (docs/design.md, "Devices and launches").
constexpr int64_t kMaxTensorBytes = (int64_t(1) << 31) - 4;

/// Checks `args` against `kernel`'s parameters as a launch does (count, kinds,
/// ranks, extents, byte sizes, divisibility) without a device, so that callers
/// can reject a launch before they allocate its tensors (whose data may still
/// be null here). The error names the argument.
Status checkLaunchArgs(const CompiledKernel &kernel, const std::vector<LaunchArg> &args);

class Device {
public:
  /// Hip: a HIP GPU whose architecture is `arch` (the first such one), else an
  /// error naming the GPUs present. Emulator: the CPU wavefront emulator of
  /// `arch`. Auto: such a GPU when one is present, else the emulator. `arch` is
  /// the target the kernels are compiled for.
  static Result<std::unique_ptr<Device>> open(DeviceKind kind, const std::string &arch);
  /// Releases what the device holds (a GPU: the modules its launches loaded).
  virtual ~Device() = default;

  virtual DeviceKind kind() const = 0;
  virtual std::string description() const = 0;
  virtual Result<void *> allocate(size_t bytes) = 0;
  virtual void release(void *p) = 0;
  virtual Status copyToDevice(void *dst, const void *src, size_t bytes) = 0;
  virtual Status copyToHost(void *dst, const void *src, size_t bytes) = 0;
  /// Runs `kernel` over its grid (computed from the tensor shapes) and waits;
  /// `seconds` is the kernel's time (a GPU's events, the emulator's clock). A
  /// GPU loads each code object once and keeps it loaded while it is open.
  virtual Result<LaunchStats> launch(const CompiledKernel &kernel, const std::vector<LaunchArg> &args) = 0;
  virtual Status synchronize() = 0;
};

} // namespace tilec
