// CUDA driver API and HIP behind rt::Driver, resolved with dlopen/dlsym.
// The declarations below are the drivers' C ABI (cuda.h, hip_runtime_api.h)
// with handles as void *: the library builds without either SDK.
#include "Rt/Driver.h"

#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <mutex>

namespace tilec::rt {

namespace {

/// Resolves `name` in `lib` into `fn`; false (and `missing` names it) when absent.
template <typename F> bool resolve(void *lib, const char *name, F &fn, std::string &missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn)
    missing += std::string(missing.empty() ? "" : ", ") + name;
  return fn != nullptr;
}

void *openFirst(std::initializer_list<const char *> names, std::string &why) {
  for (const char *n : names)
    if (void *lib = dlopen(n, RTLD_NOW | RTLD_LOCAL))
      return lib;
  why = std::string(*names.begin()) + " is not loadable (" + dlerror() + ")";
  return nullptr;
}

// --- CUDA driver API ----------------------------------------------------------

class CudaDriver final : public Driver {
public:
  using CUresult = int;
  static constexpr int kComputeCapabilityMajor = 75;   // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  static constexpr int kComputeCapabilityMinor = 76;   // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
  static constexpr int kMaxDynamicSharedSize = 8;      // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  /// Dynamic shared memory a function may use without opting in.
  static constexpr int64_t kDefaultSharedLimit = 48 * 1024;

  /// "" when the driver loads and has a device.
  std::string open() {
    std::string why;
    void *lib = openFirst({"libcuda.so.1", "libcuda.so"}, why);
    if (!lib)
      return why;
    std::string missing;
    resolve(lib, "cuInit", init, missing);
    resolve(lib, "cuDeviceGet", deviceGet, missing);
    resolve(lib, "cuDeviceGetAttribute", deviceGetAttribute, missing);
    resolve(lib, "cuCtxGetCurrent", ctxGetCurrent, missing);
    resolve(lib, "cuCtxSetCurrent", ctxSetCurrent, missing);
    resolve(lib, "cuCtxGetDevice", ctxGetDevice, missing);
    resolve(lib, "cuCtxPushCurrent_v2", ctxPush, missing);
    resolve(lib, "cuCtxPopCurrent_v2", ctxPop, missing);
    resolve(lib, "cuDevicePrimaryCtxRetain", primaryCtxRetain, missing);
    resolve(lib, "cuModuleLoadData", moduleLoadData, missing);
    resolve(lib, "cuModuleGetFunction", moduleGetFunction, missing);
    resolve(lib, "cuModuleUnload", moduleUnload, missing);
    resolve(lib, "cuFuncSetAttribute", funcSetAttribute, missing);
    resolve(lib, "cuLaunchKernel", launchKernel, missing);
    resolve(lib, "cuGetErrorString", getErrorString, missing);
    if (!missing.empty())
      return "libcuda.so.1 lacks " + missing;
    // CUDA 12 and newer: only kernels with tensor copies need it.
    tensorMapEncodeTiled = reinterpret_cast<decltype(tensorMapEncodeTiled)>(dlsym(lib, "cuTensorMapEncodeTiled"));
    if (CUresult rc = init(0))
      return "cuInit failed: " + error(rc);
    return "";
  }

  const char *vendor() const override { return "nvidia"; }

  std::string current(CurrentDevice &out) override {
    void *ctx = nullptr;
    if (CUresult rc = ctxGetCurrent(&ctx))
      return "cuCtxGetCurrent failed: " + error(rc);
    int device = 0;
    if (!ctx) {
      // No context is current: use device 0's primary context, the one the
      // CUDA runtime (and so PyTorch) uses.
      if (CUresult rc = deviceGet(&device, 0))
        return "cuDeviceGet(0) failed: " + error(rc);
      if (CUresult rc = primaryCtxRetain(&ctx, device))
        return "cuDevicePrimaryCtxRetain failed: " + error(rc);
      if (CUresult rc = ctxSetCurrent(ctx))
        return "cuCtxSetCurrent failed: " + error(rc);
    } else if (CUresult rc = ctxGetDevice(&device)) {
      return "cuCtxGetDevice failed: " + error(rc);
    }
    int major = 0, minor = 0;
    if (CUresult rc = deviceGetAttribute(&major, kComputeCapabilityMajor, device))
      return "cuDeviceGetAttribute(compute capability) failed: " + error(rc);
    if (CUresult rc = deviceGetAttribute(&minor, kComputeCapabilityMinor, device))
      return "cuDeviceGetAttribute(compute capability) failed: " + error(rc);
    std::string sm = "sm_" + std::to_string(major) + std::to_string(minor);
    // sm_90a code runs only on compute capability 9.0 exactly, and is what
    // tilec emits there; plain sm_90 is the portable fallback.
    out.key = reinterpret_cast<uintptr_t>(ctx);
    out.targets = {sm + "a", sm};
    out.description = "compute capability " + std::to_string(major) + "." + std::to_string(minor);
    return "";
  }

  std::string load(uintptr_t key, const std::string &image, const std::string &symbol, int64_t sharedBytes,
                   void *&module, void *&function) override {
    void *ctx = reinterpret_cast<void *>(key);
    if (CUresult rc = ctxPush(ctx))
      return "cuCtxPushCurrent failed: " + error(rc);
    std::string why;
    if (CUresult rc = moduleLoadData(&module, image.data()))
      why = "cuModuleLoadData failed: " + error(rc);
    else if (CUresult rc = moduleGetFunction(&function, module, symbol.c_str()))
      why = "cuModuleGetFunction(" + symbol + ") failed: " + error(rc);
    else if (sharedBytes > kDefaultSharedLimit)
      if (CUresult rc = funcSetAttribute(function, kMaxDynamicSharedSize, static_cast<int>(sharedBytes)))
        why = "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(sharedBytes) +
              ") failed: " + error(rc);
    if (!why.empty() && module) {
      moduleUnload(module);
      module = nullptr;
    }
    void *popped = nullptr;
    ctxPop(&popped);
    return why;
  }

  std::string launch(void *function, const int64_t grid[3], const int32_t block[3], int64_t sharedBytes,
                     void *stream, void **params) override {
    if (CUresult rc = launchKernel(function, static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
                                   static_cast<unsigned>(grid[2]), block[0], block[1], block[2],
                                   static_cast<unsigned>(sharedBytes), stream, params, nullptr))
      return "cuLaunchKernel failed: " + error(rc);
    return "";
  }

  std::string encodeTensorMap(void *map, const void *data, int64_t rows, int64_t cols, int64_t pitchBytes,
                              int elemBytes, int boxRows, int boxCols, int swizzleBytes) override {
    if (!tensorMapEncodeTiled)
      return "libcuda.so.1 lacks cuTensorMapEncodeTiled (CUDA 12 or newer runs kernels with tensor copies)";
    // cuda.h's enums: CU_TENSOR_MAP_DATA_TYPE_UINT8/16/32 (the copy moves
    // bytes), CU_TENSOR_MAP_SWIZZLE_NONE/32B/64B/128B, L2 promotion of 128
    // bytes, zeros outside the tensor (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE).
    const int dataType = elemBytes == 1 ? 0 : elemBytes == 2 ? 1 : 2;
    const int swizzle = swizzleBytes == 32 ? 1 : swizzleBytes == 64 ? 2 : swizzleBytes == 128 ? 3 : 0;
    constexpr int kInterleaveNone = 0, kL2Promotion128B = 2, kOobFillZeros = 0;
    const uint64_t dims[2] = {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)};
    const uint64_t strides[1] = {static_cast<uint64_t>(pitchBytes)};
    const uint32_t box[2] = {static_cast<uint32_t>(boxCols), static_cast<uint32_t>(boxRows)};
    const uint32_t elementStrides[2] = {1, 1};
    if (CUresult rc = tensorMapEncodeTiled(map, dataType, 2, const_cast<void *>(data), dims, strides, box,
                                           elementStrides, kInterleaveNone, swizzle, kL2Promotion128B, kOobFillZeros))
      return "cuTensorMapEncodeTiled(" + std::to_string(rows) + " x " + std::to_string(cols) + ", box " +
             std::to_string(boxRows) + " x " + std::to_string(boxCols) + ", swizzle " + std::to_string(swizzleBytes) +
             ") failed: " + error(rc);
    return "";
  }

  void unload(uintptr_t key, void *module) override {
    void *popped = nullptr;
    if (ctxPush(reinterpret_cast<void *>(key)) == 0) {
      moduleUnload(module);
      ctxPop(&popped);
    }
  }

private:
  std::string error(CUresult rc) const {
    const char *s = nullptr;
    if (getErrorString && getErrorString(rc, &s) == 0 && s)
      return s;
    return "CUDA error " + std::to_string(rc);
  }

  CUresult (*init)(unsigned) = nullptr;
  CUresult (*deviceGet)(int *, int) = nullptr;
  CUresult (*deviceGetAttribute)(int *, int, int) = nullptr;
  CUresult (*ctxGetCurrent)(void **) = nullptr;
  CUresult (*ctxSetCurrent)(void *) = nullptr;
  CUresult (*ctxGetDevice)(int *) = nullptr;
  CUresult (*ctxPush)(void *) = nullptr;
  CUresult (*ctxPop)(void **) = nullptr;
  CUresult (*primaryCtxRetain)(void **, int) = nullptr;
  CUresult (*moduleLoadData)(void **, const void *) = nullptr;
  CUresult (*moduleGetFunction)(void **, void *, const char *) = nullptr;
  CUresult (*moduleUnload)(void *) = nullptr;
  CUresult (*funcSetAttribute)(void *, int, int) = nullptr;
  CUresult (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                           void **, void **) = nullptr;
  CUresult (*getErrorString)(CUresult, const char **) = nullptr;
  CUresult (*tensorMapEncodeTiled)(void *, int, uint32_t, void *, const uint64_t *, const uint64_t *, const uint32_t *,
                                   const uint32_t *, int, int, int, int) = nullptr;
};

// --- HIP ------------------------------------------------------------------------

class HipDriver final : public Driver {
public:
  using hipError_t = int;

  std::string open() {
    std::string why;
    void *lib = openFirst({"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}, why);
    if (!lib)
      return why;
    std::string missing;
    resolve(lib, "hipInit", init, missing);
    resolve(lib, "hipGetDevice", getDevice, missing);
    resolve(lib, "hipGetDeviceCount", getDeviceCount, missing);
    resolve(lib, "hipModuleLoadData", moduleLoadData, missing);
    resolve(lib, "hipModuleGetFunction", moduleGetFunction, missing);
    resolve(lib, "hipModuleLaunchKernel", moduleLaunchKernel, missing);
    resolve(lib, "hipModuleUnload", moduleUnload, missing);
    resolve(lib, "hipGetErrorString", getErrorString, missing);
    // ROCm 6 renamed the function of its new hipDeviceProp_t layout.
    if (!(getDeviceProperties = reinterpret_cast<decltype(getDeviceProperties)>(
              dlsym(lib, "hipGetDevicePropertiesR0600"))))
      resolve(lib, "hipGetDeviceProperties", getDeviceProperties, missing);
    if (!missing.empty())
      return "libamdhip64.so lacks " + missing;
    if (hipError_t rc = init(0))
      return "hipInit failed: " + error(rc);
    int count = 0;
    if (hipError_t rc = getDeviceCount(&count))
      return "hipGetDeviceCount failed: " + error(rc);
    return count > 0 ? "" : "no HIP device";
  }

  const char *vendor() const override { return "amd"; }

  std::string current(CurrentDevice &out) override {
    int device = 0;
    if (hipError_t rc = getDevice(&device))
      return "hipGetDevice failed: " + error(rc);
    // hipDeviceProp_t differs between ROCm 5 and 6 (it is far smaller than
    // this buffer in both); gcnArchName is its one string that starts with
    // "gfx" ("gfx942:sramecc+:xnack-"), after the 256-byte marketing name.
    std::unique_ptr<char[]> props(new char[kPropsBytes]());
    if (hipError_t rc = getDeviceProperties(props.get(), device))
      return "hipGetDeviceProperties failed: " + error(rc);
    std::string arch;
    for (size_t i = kNameBytes; i + 3 < kPropsBytes && arch.empty(); ++i)
      if (std::memcmp(props.get() + i, "gfx", 3) == 0 && props[i - 1] == '\0')
        arch.assign(props.get() + i, strnlen(props.get() + i, kPropsBytes - i));
    if (arch.empty())
      return "hipGetDeviceProperties gave no gcnArchName";
    out.key = static_cast<uintptr_t>(device);
    out.targets = {arch.substr(0, arch.find(':'))};
    out.description = arch;
    return "";
  }

  std::string load(uintptr_t, const std::string &image, const std::string &symbol, int64_t, void *&module,
                   void *&function) override {
    if (hipError_t rc = moduleLoadData(&module, image.data()))
      return "hipModuleLoadData failed: " + error(rc);
    if (hipError_t rc = moduleGetFunction(&function, module, symbol.c_str())) {
      moduleUnload(module);
      module = nullptr;
      return "hipModuleGetFunction(" + symbol + ") failed: " + error(rc);
    }
    return "";
  }

  std::string launch(void *function, const int64_t grid[3], const int32_t block[3], int64_t sharedBytes,
                     void *stream, void **params) override {
    if (hipError_t rc = moduleLaunchKernel(function, static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
                                           static_cast<unsigned>(grid[2]), block[0], block[1], block[2],
                                           static_cast<unsigned>(sharedBytes), stream, params, nullptr))
      return "hipModuleLaunchKernel failed: " + error(rc);
    return "";
  }

  void unload(uintptr_t, void *module) override { moduleUnload(module); }

private:
  static constexpr size_t kPropsBytes = 8192, kNameBytes = 256;

  std::string error(hipError_t rc) const {
    const char *s = getErrorString ? getErrorString(rc) : nullptr;
    return s ? s : "HIP error " + std::to_string(rc);
  }

  hipError_t (*init)(unsigned) = nullptr;
  hipError_t (*getDevice)(int *) = nullptr;
  hipError_t (*getDeviceCount)(int *) = nullptr;
  hipError_t (*getDeviceProperties)(void *, int) = nullptr;
  hipError_t (*moduleLoadData)(void **, const void *) = nullptr;
  hipError_t (*moduleGetFunction)(void **, void *, const char *) = nullptr;
  hipError_t (*moduleLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   void *, void **, void **) = nullptr;
  hipError_t (*moduleUnload)(void *) = nullptr;
  const char *(*getErrorString)(hipError_t) = nullptr;
};

} // namespace

Driver *activeDriver(std::string &why) {
  static Driver *active = nullptr;
  static std::string reasons;
  static std::once_flag once;
  std::call_once(once, [] {
    // Never destroyed: bundles closed during exit may still unload modules.
    auto *cuda = new CudaDriver;
    std::string cudaWhy = cuda->open();
    if (cudaWhy.empty()) {
      active = cuda;
      return;
    }
    auto *hip = new HipDriver;
    std::string hipWhy = hip->open();
    if (hipWhy.empty()) {
      active = hip;
      return;
    }
    reasons = "CUDA: " + cudaWhy + "; HIP: " + hipWhy;
  });
  why = reasons;
  return active;
}

} // namespace tilec::rt
