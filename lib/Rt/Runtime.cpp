// libtilec_rt: the C ABI of include/tilec/runtime.h. A bundle is its
// manifest plus a cache of loaded modules per device; launches are checked
// against the manifest before they reach the driver.
#include "tilec/runtime.h"

#include "Rt/Driver.h"
#include "Rt/Manifest.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

using tilec::bundle::ArgSpec;
using tilec::bundle::GridAxis;
using tilec::bundle::KernelEntry;

struct tilec_bundle {
  std::string dir;
  tilec::bundle::Manifest manifest;
  std::vector<std::string> names;  ///< distinct kernel names, in manifest order

  struct Loaded {
    void *module = nullptr;
    void *function = nullptr;
  };
  std::mutex mutex;  ///< guards `modules` and `driver`
  /// Per device (CurrentDevice::key) and kernel entry.
  std::map<std::pair<uintptr_t, const KernelEntry *>, Loaded> modules;
  tilec::rt::Driver *driver = nullptr;  ///< the driver `modules` came from
};

namespace {

thread_local std::string lastError;

tilec_status fail(tilec_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

constexpr int64_t kInt32Limit = int64_t(1) << 31;
/// Grid axes y and z of a CUDA launch hold at most this many blocks.
constexpr int64_t kCudaGridYZLimit = 65535;

/// A raw kernel parameter: pointers, ints and floats each in an 8-byte slot
/// that the driver reads sizeof(parameter) bytes of.
uint64_t slotOf(const void *p, size_t bytes) {
  uint64_t slot = 0;
  std::memcpy(&slot, p, bytes);
  return slot;
}

/// A tensor map parameter: slot `slot` of the raw parameters, to be encoded
/// from argument `arg` (ArgSpec::tensorMap) once a driver is at hand.
struct TensorMapSlot {
  size_t slot;
  int arg;
};

/// Checks `args` against kernel entry `k`, computes the launch dimensions
/// and expands the arguments into raw parameters (a tensor is its pointer
/// followed by one int per extent, and a placeholder for its tensor map
/// where the kernel takes one, listed in `maps`).
tilec_status prepare(const KernelEntry &k, const tilec_arg *args, int numArgs, tilec_launch_dims &dims,
                     std::vector<uint64_t> &slots, std::vector<TensorMapSlot> &maps) {
  const std::string launch = "launch of " + k.name + " (" + k.target + ")";
  if (numArgs < 0 || (numArgs > 0 && !args))
    return fail(TILEC_ERROR_INVALID_ARGUMENT, launch + ": null argument array");
  if (numArgs != static_cast<int>(k.args.size()))
    return fail(TILEC_ERROR_ARG_COUNT, launch + ": " + std::to_string(numArgs) + " arguments given, the kernel takes " +
                                           std::to_string(k.args.size()));
  for (int i = 0; i < numArgs; ++i) {
    const ArgSpec &p = k.args[i];
    const tilec_arg &a = args[i];
    const std::string where = launch + ": argument " + std::to_string(i) + (p.name.empty() ? "" : " ('" + p.name + "')");
    if (p.kind == ArgSpec::F32 || p.kind == ArgSpec::I32) {
      bool f32 = p.kind == ArgSpec::F32;
      if (a.kind != (f32 ? TILEC_ARG_F32 : TILEC_ARG_I32))
        return fail(TILEC_ERROR_ARG_KIND, where + " must be an " + p.dtype + " scalar");
      if (!f32 && p.divisibility > 1 && a.i32 % p.divisibility != 0)
        return fail(TILEC_ERROR_DIVISIBILITY, where + ": " + std::to_string(a.i32) + " is not a multiple of " +
                                                  std::to_string(p.divisibility) +
                                                  " (the kernel was compiled for values of divisibility " +
                                                  std::to_string(p.divisibility) + ")");
      slots.push_back(f32 ? slotOf(&a.f32, sizeof a.f32) : slotOf(&a.i32, sizeof a.i32));
      continue;
    }
    if (a.kind != TILEC_ARG_TENSOR)
      return fail(TILEC_ERROR_ARG_KIND, where + " must be a tensor of rank " + std::to_string(p.rank));
    if (!a.dtype || p.dtype != a.dtype)
      return fail(TILEC_ERROR_DTYPE, where + ": element type " + (a.dtype ? a.dtype : "(null)") + " given, " +
                                         p.dtype + " expected");
    if (a.rank != p.rank || (a.rank > 0 && !a.shape))
      return fail(TILEC_ERROR_RANK, where + ": tensor of rank " + std::to_string(a.rank) + " given, rank " +
                                        std::to_string(p.rank) + " expected");
    const int64_t elemBytes = tilec::bundle::elementBytes(p.dtype);
    int64_t elements = 1;
    for (int d = 0; d < a.rank; ++d) {
      if (a.shape[d] < 0 || a.shape[d] >= kInt32Limit)
        return fail(TILEC_ERROR_TOO_LARGE, where + ": extent " + std::to_string(a.shape[d]) + " of dimension " +
                                               std::to_string(d) + " is outside [0, 2^31)");
      elements = elements == 0 ? 0 : std::min(elements * a.shape[d], kInt32Limit);
    }
    if (elements * elemBytes >= kInt32Limit)
      return fail(TILEC_ERROR_TOO_LARGE, where + ": the tensor has 2^31 bytes or more (the kernel indexes with 32 bits)");
    if (!a.data && elements > 0)
      return fail(TILEC_ERROR_NULL_POINTER, where + ": null data pointer");
    if (p.divisibility > 1) {
      const int64_t inner = a.shape[a.rank - 1];
      if (inner % p.divisibility != 0)
        return fail(TILEC_ERROR_DIVISIBILITY,
                    where + ": innermost extent " + std::to_string(inner) + " is not a multiple of " +
                        std::to_string(p.divisibility) + " (the kernel was compiled for tensors of divisibility " +
                        std::to_string(p.divisibility) + ")");
      const int64_t align = std::min<int64_t>(16, p.divisibility * elemBytes);
      if (reinterpret_cast<uintptr_t>(a.data) % static_cast<uintptr_t>(align) != 0)
        return fail(TILEC_ERROR_ALIGNMENT, where + ": data pointer is not aligned to " + std::to_string(align) +
                                               " bytes (the kernel was compiled for tensors of divisibility " +
                                               std::to_string(p.divisibility) + ")");
    }
    slots.push_back(slotOf(&a.data, sizeof a.data));
    for (int d = 0; d < a.rank; ++d) {
      int32_t extent = static_cast<int32_t>(a.shape[d]);
      slots.push_back(slotOf(&extent, sizeof extent));
    }
    if (p.tensorMap.present()) {
      maps.push_back({slots.size(), i});
      slots.push_back(0);
    }
  }
  for (int axis = 0; axis < 3; ++axis) {
    int64_t extent = 1;
    if (axis < static_cast<int>(k.grid.size())) {
      const GridAxis &g = k.grid[axis];
      if (g.arg < 0)
        extent = g.tile;
      else if (g.dim < 0)
        extent = args[g.arg].i32 <= 0 ? 0 : (args[g.arg].i32 + g.tile - 1) / g.tile;
      else
        extent = (args[g.arg].shape[g.dim] + g.tile - 1) / g.tile;
    }
    const int64_t limit = axis > 0 && k.vendor == "nvidia" ? kCudaGridYZLimit : kInt32Limit - 1;
    if (extent > limit)
      return fail(TILEC_ERROR_TOO_LARGE, launch + ": grid axis " + std::to_string(axis) + " (" +
                                             tilec::bundle::gridExpression(k.grid[axis], k.args) + ") is " +
                                             std::to_string(extent) + " blocks, more than " + std::to_string(limit));
    dims.grid[axis] = extent;
  }
  dims.block[0] = k.blockSize;
  dims.block[1] = dims.block[2] = 1;
  dims.shared_bytes = k.dynamicSharedBytes;
  return TILEC_OK;
}

/// The kernel named `name` for `target`, or an UNKNOWN_KERNEL / ARCH_NOT_IN_BUNDLE failure.
tilec_status findEntry(const tilec_bundle &b, const char *name, const std::vector<std::string> &targets,
                       const std::string &device, const KernelEntry *&out) {
  std::string compiledFor;
  for (const std::string &t : targets)
    if ((out = b.manifest.find(name, t)))
      return TILEC_OK;
  for (const KernelEntry &k : b.manifest.kernels)
    if (k.name == name)
      compiledFor += (compiledFor.empty() ? "" : ", ") + k.target;
  if (compiledFor.empty()) {
    std::string known;
    for (const std::string &n : b.names)
      known += (known.empty() ? "" : ", ") + n;
    return fail(TILEC_ERROR_UNKNOWN_KERNEL, "no kernel '" + std::string(name) + "' in bundle " + b.dir +
                                                " (it has: " + (known.empty() ? "none" : known) + ")");
  }
  std::string wanted;
  for (const std::string &t : targets)
    wanted += (wanted.empty() ? "" : " or ") + t;
  return fail(TILEC_ERROR_ARCH_NOT_IN_BUNDLE, "kernel " + std::string(name) + " is in bundle " + b.dir + " for " +
                                                  compiledFor + ", not for " + wanted +
                                                  (device.empty() ? "" : " (this device: " + device + ")"));
}

/// The current device, through the driver loaded once per process.
tilec_status currentDevice(tilec::rt::Driver *&driver, tilec::rt::CurrentDevice &device) {
  std::string why;
  if (!(driver = tilec::rt::activeDriver(why)))
    return fail(TILEC_ERROR_NO_DEVICE, "no GPU driver with a device: " + why);
  if (std::string e = driver->current(device); !e.empty())
    return fail(TILEC_ERROR_DRIVER, e);
  return TILEC_OK;
}

/// The function of entry `k` on `device`, loading its module on first use.
tilec_status function(tilec_bundle &b, tilec::rt::Driver &driver, const tilec::rt::CurrentDevice &device,
                      const KernelEntry &k, void *&fn) {
  std::lock_guard<std::mutex> lock(b.mutex);
  auto it = b.modules.find({device.key, &k});
  if (it != b.modules.end()) {
    fn = it->second.function;
    return TILEC_OK;
  }
  const std::string path = b.dir + "/" + k.codeObject;
  std::string image;
  if (!readFile(path, image))
    return fail(TILEC_ERROR_BUNDLE, "cannot read " + path + ", the code object of " + k.name + " (" + k.target + ")");
  if (tilec::bundle::sha256Hex(image.data(), image.size()) != k.sha256)
    return fail(TILEC_ERROR_BUNDLE, path + " does not match its SHA-256 in the manifest (the file was altered)");
  tilec_bundle::Loaded loaded;
  if (std::string e = driver.load(device.key, image, k.entry, k.dynamicSharedBytes, loaded.module, loaded.function);
      !e.empty())
    return fail(TILEC_ERROR_DRIVER, "loading " + k.name + " (" + k.target + "): " + e);
  b.driver = &driver;
  b.modules[{device.key, &k}] = loaded;
  fn = loaded.function;
  return TILEC_OK;
}

} // namespace

extern "C" {

tilec_status tilec_bundle_open(const char *dir, tilec_bundle **out) {
  if (!dir || !out)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tilec_bundle_open: null folder or output pointer");
  *out = nullptr;
  std::string path = std::string(dir) + "/" + tilec::bundle::kManifestFile;
  std::string text;
  if (!readFile(path, text))
    return fail(TILEC_ERROR_BUNDLE, "cannot read " + path + ": not a tilec bundle (tilec --emit=bundle -o DIR)");
  auto b = std::make_unique<tilec_bundle>();
  b->dir = dir;
  if (std::string e = tilec::bundle::parse(text, b->manifest); !e.empty())
    return fail(TILEC_ERROR_BUNDLE, path + ": " + e);
  for (const KernelEntry &k : b->manifest.kernels)
    if (std::find(b->names.begin(), b->names.end(), k.name) == b->names.end())
      b->names.push_back(k.name);
  *out = b.release();
  return TILEC_OK;
}

void tilec_bundle_close(tilec_bundle *bundle) {
  if (!bundle)
    return;
  for (auto &[key, loaded] : bundle->modules)
    bundle->driver->unload(key.first, loaded.module);
  delete bundle;
}

int tilec_bundle_kernel_count(const tilec_bundle *bundle) {
  return bundle ? static_cast<int>(bundle->names.size()) : 0;
}

const char *tilec_bundle_kernel_name(const tilec_bundle *bundle, int index) {
  if (!bundle || index < 0 || index >= static_cast<int>(bundle->names.size()))
    return nullptr;
  return bundle->names[index].c_str();
}

tilec_status tilec_device_target(tilec_bundle *bundle, char *buf, size_t size) {
  if (!bundle || !buf || size == 0)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tilec_device_target: null bundle or buffer");
  tilec::rt::Driver *driver = nullptr;
  tilec::rt::CurrentDevice device;
  if (tilec_status s = currentDevice(driver, device))
    return s;
  // The best target the bundle has, else the device's best.
  std::string target = device.targets.front();
  for (auto t = device.targets.rbegin(); t != device.targets.rend(); ++t)
    for (const KernelEntry &k : bundle->manifest.kernels)
      if (k.target == *t)
        target = *t;
  if (target.size() >= size)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tilec_device_target: buffer of " + std::to_string(size) +
                                                  " bytes is too small for '" + target + "'");
  std::memcpy(buf, target.c_str(), target.size() + 1);
  return TILEC_OK;
}

tilec_status tilec_check_launch(const tilec_bundle *bundle, const char *name, const char *target,
                                const tilec_arg *args, int num_args, tilec_launch_dims *dims) {
  if (!bundle || !name || !target || !dims)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tilec_check_launch: null bundle, name, target or dims");
  const KernelEntry *k = nullptr;
  if (tilec_status s = findEntry(*bundle, name, {target}, "", k))
    return s;
  std::vector<uint64_t> slots;
  std::vector<TensorMapSlot> maps;
  return prepare(*k, args, num_args, *dims, slots, maps);
}

tilec_status tilec_launch(tilec_bundle *bundle, const char *name, const tilec_arg *args, int num_args,
                          void *stream) {
  if (!bundle || !name)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tilec_launch: null bundle or kernel name");
  tilec::rt::Driver *driver = nullptr;
  tilec::rt::CurrentDevice device;
  if (tilec_status s = currentDevice(driver, device))
    return s;
  const KernelEntry *k = nullptr;
  if (tilec_status s = findEntry(*bundle, name, device.targets, device.description, k))
    return s;
  tilec_launch_dims dims;
  std::vector<uint64_t> slots;
  std::vector<TensorMapSlot> maps;
  if (tilec_status s = prepare(*k, args, num_args, dims, slots, maps))
    return s;
  if (dims.grid[0] == 0 || dims.grid[1] == 0 || dims.grid[2] == 0)
    return TILEC_OK;
  void *fn = nullptr;
  if (tilec_status s = function(*bundle, *driver, device, *k, fn))
    return s;
  std::vector<void *> params;
  for (uint64_t &slot : slots)
    params.push_back(&slot);
  // Tensor maps, encoded per launch (the driver reads them at the launch).
  struct alignas(64) TensorMapBytes {
    uint64_t opaque[16] = {};
  };
  std::vector<TensorMapBytes> encoded(maps.size());
  for (size_t j = 0; j < maps.size(); ++j) {
    const tilec_arg &a = args[maps[j].arg];
    const ArgSpec &p = k->args[maps[j].arg];
    params[maps[j].slot] = &encoded[j];
    if (a.shape[0] == 0 || a.shape[1] == 0)
      continue;  // an empty tensor: the kernel copies no box of it
    const int64_t elemBytes = tilec::bundle::elementBytes(p.dtype);
    if (std::string e = driver->encodeTensorMap(&encoded[j], a.data, a.shape[0], a.shape[1], a.shape[1] * elemBytes,
                                                static_cast<int>(elemBytes), p.tensorMap.boxRows, p.tensorMap.boxCols,
                                                p.tensorMap.swizzleBytes);
        !e.empty())
      return fail(TILEC_ERROR_DRIVER, "launch of " + k->name + " (" + k->target + "): tensor map of argument " +
                                          std::to_string(maps[j].arg) + " ('" + p.name + "'): " + e);
  }
  if (std::string e = driver->launch(fn, dims.grid, dims.block, dims.shared_bytes, stream, params.data()); !e.empty())
    return fail(TILEC_ERROR_DRIVER, "launch of " + k->name + " (" + k->target + "): " + e);
  return TILEC_OK;
}

const char *tilec_last_error(void) { return lastError.c_str(); }

const char *tilec_status_name(tilec_status status) {
  switch (status) {
  case TILEC_OK: return "TILEC_OK";
  case TILEC_ERROR_INVALID_ARGUMENT: return "TILEC_ERROR_INVALID_ARGUMENT";
  case TILEC_ERROR_BUNDLE: return "TILEC_ERROR_BUNDLE";
  case TILEC_ERROR_UNKNOWN_KERNEL: return "TILEC_ERROR_UNKNOWN_KERNEL";
  case TILEC_ERROR_ARCH_NOT_IN_BUNDLE: return "TILEC_ERROR_ARCH_NOT_IN_BUNDLE";
  case TILEC_ERROR_ARG_COUNT: return "TILEC_ERROR_ARG_COUNT";
  case TILEC_ERROR_ARG_KIND: return "TILEC_ERROR_ARG_KIND";
  case TILEC_ERROR_DTYPE: return "TILEC_ERROR_DTYPE";
  case TILEC_ERROR_RANK: return "TILEC_ERROR_RANK";
  case TILEC_ERROR_DIVISIBILITY: return "TILEC_ERROR_DIVISIBILITY";
  case TILEC_ERROR_ALIGNMENT: return "TILEC_ERROR_ALIGNMENT";
  case TILEC_ERROR_NULL_POINTER: return "TILEC_ERROR_NULL_POINTER";
  case TILEC_ERROR_TOO_LARGE: return "TILEC_ERROR_TOO_LARGE";
  case TILEC_ERROR_NO_DEVICE: return "TILEC_ERROR_NO_DEVICE";
  case TILEC_ERROR_DRIVER: return "TILEC_ERROR_DRIVER";
  }
  return "TILEC_ERROR_UNKNOWN";
}

} // extern "C"
