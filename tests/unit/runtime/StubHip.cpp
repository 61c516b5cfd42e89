// A stand-in for the HIP runtime, built as libamdhip64.so for the tests of
// tilec::Device's HIP path (HipDeviceTest.cpp) and of libtilec_rt's
// (tests/rt/RuntimeHipTest.cpp): it implements exactly the entry points
// lib/Runtime/Device.cpp and lib/Rt/Driver.cpp resolve, with ROCm's own declarations
// (hip/hip_runtime_api.h, so a signature or hipDeviceProp_t that differs from
// the real runtime's does not compile), and records each call.
//
// The fake GPUs have host memory (hipMalloc is malloc) and run nothing: a
// launch checks its function and records it. The checks are the real
// runtime's where a misuse would break on a GPU: a module is unloaded once, a
// function's module must be loaded on the current device, an event's time
// needs both events recorded, in order, and the later one synchronized.
//
// Trace lines (tilecStubHipTrace):
//   hipSetDevice <device>
//   hipModuleLoadData device=<d> module=<id>
//   hipModuleUnload module=<id>
//   hipModuleGetFunction module=<id> <name>
//   hipModuleLaunchKernel device=<d> module=<id> <name> grid=<x>x<y>x<z> block=<x>x<y>x<z>
//     [params=<v>,<v>,...: each parameter's bytes as an unsigned little-endian
//     integer, when tilecStubHipSetParamBytes gave their sizes]
//   hipEventCreate event=<id> / hipEventDestroy event=<id>
//   hipEventRecord event=<id> / hipEventSynchronize event=<id>
//   hipEventElapsedTime start=<id> stop=<id>
// and the name alone for the other calls. A call that fails adds " -> <error>".
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "StubHip.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

struct ihipModule_t {
  int id;
  int device;
};
struct ihipModuleSymbol_t {
  ihipModule_t *module;
  std::string name;
};
struct ihipEvent_t {
  int id;
  long recordedAt = -1;  ///< the trace line of its last hipEventRecord; -1: never recorded
  bool synchronized = false;
};

namespace {

struct Stub {
  std::mutex mutex;
  std::vector<std::string> devices{"gfx942:sramecc+:xnack-"};
  float eventMs = 1.0f;
  int current = 0;
  int nextId = 1;
  std::set<ihipModule_t *> modules;  ///< loaded
  std::set<ihipEvent_t *> events;    ///< created
  std::vector<size_t> paramBytes;    ///< of the launched kernels' parameters (tilecStubHipSetParamBytes)
  std::vector<std::string> trace;
  std::string traceText;
};

Stub &stub() {
  static Stub s;
  return s;
}

hipError_t record(Stub &s, const std::string &line, hipError_t rc = hipSuccess) {
  s.trace.push_back(rc == hipSuccess ? line : line + " -> " + hipGetErrorString(rc));
  return rc;
}

} // namespace

extern "C" {

void tilecStubHipSetDevices(const char *gcnArchNames) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.devices.clear();
  std::stringstream in(gcnArchNames);
  for (std::string name; std::getline(in, name, ',');)
    s.devices.push_back(name);
}

void tilecStubHipSetParamBytes(const char *sizes) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.paramBytes.clear();
  std::stringstream in(sizes);
  for (std::string size; std::getline(in, size, ',');)
    s.paramBytes.push_back(std::stoul(size));
}

void tilecStubHipSetEventMilliseconds(float ms) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.eventMs = ms;
}

const char *tilecStubHipTrace() {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.traceText.clear();
  for (const std::string &line : s.trace)
    s.traceText += line + "\n";
  return s.traceText.c_str();
}

const char *hipGetErrorString(hipError_t e) {
  switch (e) {
  case hipSuccess: return "hipSuccess";
  case hipErrorInvalidValue: return "hipErrorInvalidValue";
  case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
  case hipErrorInvalidImage: return "hipErrorInvalidImage";
  case hipErrorInvalidHandle: return "hipErrorInvalidHandle";
  case hipErrorNotReady: return "hipErrorNotReady";
  case hipErrorInvalidDeviceFunction: return "hipErrorInvalidDeviceFunction";
  default: return "hipError (stub)";
  }
}

hipError_t hipInit(unsigned int flags) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  return record(s, "hipInit", flags == 0 ? hipSuccess : hipErrorInvalidValue);
}

hipError_t hipGetDeviceCount(int *count) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  *count = static_cast<int>(s.devices.size());
  return record(s, "hipGetDeviceCount");
}

hipError_t hipGetDevice(int *deviceId) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  *deviceId = s.current;
  return record(s, "hipGetDevice");
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *prop, int deviceId) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (deviceId < 0 || deviceId >= static_cast<int>(s.devices.size()))
    return record(s, "hipGetDeviceProperties " + std::to_string(deviceId), hipErrorInvalidDevice);
  std::memset(prop, 0, sizeof *prop);
  std::snprintf(prop->name, sizeof prop->name, "stub GPU %d", deviceId);
  std::snprintf(prop->gcnArchName, sizeof prop->gcnArchName, "%s", s.devices[deviceId].c_str());
  prop->warpSize = 64;
  return record(s, "hipGetDeviceProperties " + std::to_string(deviceId));
}

hipError_t hipSetDevice(int deviceId) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (deviceId < 0 || deviceId >= static_cast<int>(s.devices.size()))
    return record(s, "hipSetDevice " + std::to_string(deviceId), hipErrorInvalidDevice);
  s.current = deviceId;
  return record(s, "hipSetDevice " + std::to_string(deviceId));
}

hipError_t hipMalloc(void **ptr, size_t size) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  *ptr = std::malloc(size ? size : 1);
  return record(s, "hipMalloc", *ptr ? hipSuccess : hipErrorOutOfMemory);
}

hipError_t hipFree(void *ptr) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::free(ptr);
  return record(s, "hipFree");
}

hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (kind != hipMemcpyHostToDevice && kind != hipMemcpyDeviceToHost)
    return record(s, "hipMemcpy", hipErrorInvalidValue);
  std::memcpy(dst, src, sizeBytes);
  return record(s, "hipMemcpy");
}

hipError_t hipDeviceSynchronize(void) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  return record(s, "hipDeviceSynchronize");
}

hipError_t hipModuleLoadData(hipModule_t *module, const void *image) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  // A code object is an ELF file; the stub reads no further.
  if (!image || std::memcmp(image, "\x7f" "ELF", 4) != 0)
    return record(s, "hipModuleLoadData device=" + std::to_string(s.current), hipErrorInvalidImage);
  *module = new ihipModule_t{s.nextId++, s.current};
  s.modules.insert(*module);
  return record(s, "hipModuleLoadData device=" + std::to_string(s.current) + " module=" + std::to_string((*module)->id));
}

hipError_t hipModuleUnload(hipModule_t module) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.modules.erase(module))
    return record(s, "hipModuleUnload", hipErrorInvalidHandle);
  const int id = module->id;
  delete module;
  return record(s, "hipModuleUnload module=" + std::to_string(id));
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.modules.count(module))
    return record(s, "hipModuleGetFunction", hipErrorInvalidHandle);
  // Functions live as long as the process: a handle used after its module's
  // unload is then still an object the launch can inspect and reject.
  *function = new ihipModuleSymbol_t{module, kname};
  return record(s, "hipModuleGetFunction module=" + std::to_string(module->id) + " " + kname);
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, hipStream_t stream, void **kernelParams, void **extra) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string line = "hipModuleLaunchKernel device=" + std::to_string(s.current);
  if (!f || !s.modules.count(f->module))
    return record(s, line, hipErrorInvalidHandle);
  if (f->module->device != s.current)
    return record(s, line, hipErrorInvalidDeviceFunction);
  line += " module=" + std::to_string(f->module->id) + " " + f->name + " grid=" + std::to_string(gridDimX) + "x" +
          std::to_string(gridDimY) + "x" + std::to_string(gridDimZ) + " block=" + std::to_string(blockDimX) + "x" +
          std::to_string(blockDimY) + "x" + std::to_string(blockDimZ);
  if (!kernelParams || extra || sharedMemBytes || stream)
    return record(s, line, hipErrorInvalidValue);
  for (size_t i = 0; i < s.paramBytes.size(); ++i) {
    uint64_t value = 0;
    std::memcpy(&value, kernelParams[i], std::min<size_t>(s.paramBytes[i], sizeof value));
    line += (i ? "," : " params=") + std::to_string(value);
  }
  return record(s, line);
}

hipError_t hipEventCreate(hipEvent_t *event) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  *event = new ihipEvent_t{s.nextId++};
  s.events.insert(*event);
  return record(s, "hipEventCreate event=" + std::to_string((*event)->id));
}

hipError_t hipEventDestroy(hipEvent_t event) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.events.erase(event))
    return record(s, "hipEventDestroy", hipErrorInvalidHandle);
  const int id = event->id;
  delete event;
  return record(s, "hipEventDestroy event=" + std::to_string(id));
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.events.count(event) || stream)
    return record(s, "hipEventRecord", s.events.count(event) ? hipErrorInvalidValue : hipErrorInvalidHandle);
  event->recordedAt = static_cast<long>(s.trace.size());
  event->synchronized = false;
  return record(s, "hipEventRecord event=" + std::to_string(event->id));
}

hipError_t hipEventSynchronize(hipEvent_t event) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.events.count(event))
    return record(s, "hipEventSynchronize", hipErrorInvalidHandle);
  event->synchronized = true;
  return record(s, "hipEventSynchronize event=" + std::to_string(event->id));
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop) {
  Stub &s = stub();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.events.count(start) || !s.events.count(stop))
    return record(s, "hipEventElapsedTime", hipErrorInvalidHandle);
  const std::string line = "hipEventElapsedTime start=" + std::to_string(start->id) + " stop=" + std::to_string(stop->id);
  if (start->recordedAt < 0 || stop->recordedAt < start->recordedAt || !stop->synchronized)
    return record(s, line, hipErrorNotReady);
  *ms = s.eventMs;
  return record(s, line);
}

} // extern "C"
