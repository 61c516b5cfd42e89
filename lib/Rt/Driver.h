// The vendor drivers libtilec_rt launches through: the CUDA driver API
// (libcuda.so.1) and HIP (libamdhip64.so), loaded with dlopen so that the
// library needs neither at link time and runs where only one is installed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilec::rt {

/// The device a launch runs on, as the driver reports it.
struct CurrentDevice {
  /// Identifies where modules live: the CUDA context, the HIP device ordinal.
  uintptr_t key = 0;
  /// Bundle targets this device runs, best first (sm_90a, sm_90; gfx942).
  std::vector<std::string> targets;
  std::string description;  ///< "compute capability 9.0", "gfx942:sramecc+:xnack-"
};

/// One vendor's driver. Methods return "" or the failed call and the
/// driver's error string.
class Driver {
public:
  virtual ~Driver() = default;
  virtual const char *vendor() const = 0;  ///< "nvidia" or "amd"
  virtual std::string current(CurrentDevice &out) = 0;
  /// Loads `image` into the device `key` names and finds `symbol`; sets the
  /// function's dynamic shared memory limit to `sharedBytes` where the
  /// driver needs it.
  virtual std::string load(uintptr_t key, const std::string &image, const std::string &symbol, int64_t sharedBytes,
                           void *&module, void *&function) = 0;
  virtual std::string launch(void *function, const int64_t grid[3], const int32_t block[3], int64_t sharedBytes,
                             void *stream, void **params) = 0;
  virtual void unload(uintptr_t key, void *module) = 0;
  /// Encodes into `map` (128 bytes, 64-byte aligned: a CUtensorMap) the
  /// tensor map of a row-major rows x cols tensor of `elemBytes`-byte
  /// elements at `data` (rows `pitchBytes` apart), for boxes of boxRows x
  /// boxCols elements with a swizzle span of swizzleBytes (0, 32, 64, 128).
  /// Elements outside the tensor read as zero.
  virtual std::string encodeTensorMap(void *map, const void *data, int64_t rows, int64_t cols, int64_t pitchBytes,
                                      int elemBytes, int boxRows, int boxCols, int swizzleBytes) {
    (void)map, (void)data, (void)rows, (void)cols, (void)pitchBytes, (void)elemBytes, (void)boxRows, (void)boxCols,
        (void)swizzleBytes;
    return std::string("tensor maps (kernels compiled for NVIDIA tensor copies) need the CUDA driver, not ") +
           vendor();
  }
};

/// The first driver that loads and has a device: CUDA, then HIP. Loaded
/// once per process; nullptr with the reasons in `why` when none does.
Driver *activeDriver(std::string &why);

} // namespace tilec::rt
