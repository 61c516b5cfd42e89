// tilec runtime, C++: a header-only wrapper of the C ABI in tilec/runtime.h
// (libtilec_rt). No exceptions: calls return a Status.
//
//   tilec::rt::Bundle bundle;
//   if (tilec::rt::Status s = bundle.open("kernels"); !s) { std::puts(s.message.c_str()); ... }
//   using tilec::rt::Arg;
//   tilec::rt::Status s = bundle.launch("gemm_bf16_f32_128x128x32_w4_s2",
//       {Arg::tensor(a, "bf16", {M, K}), Arg::tensor(b, "bf16", {K, N}), Arg::tensor(c, "f32", {M, N})}, stream);
//
// (tilec/runtime.hpp is the compiler library's Device API, a different thing.)
#pragma once

#include "tilec/runtime.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilec::rt {

struct Status {
  tilec_status code = TILEC_OK;
  std::string message;  ///< tilec_last_error() of the failed call

  explicit operator bool() const { return code == TILEC_OK; }
  /// The status of the C call that returned `code`, with its message.
  static Status of(tilec_status code) { return {code, code == TILEC_OK ? std::string() : tilec_last_error()}; }
};

/// One launch argument; owns its shape, unlike tilec_arg.
class Arg {
public:
  static Arg tensor(void *data, std::string dtype, std::vector<int64_t> shape) {
    Arg a(TILEC_ARG_TENSOR);
    a.data_ = data;
    a.dtype_ = std::move(dtype);
    a.shape_ = std::move(shape);
    return a;
  }
  static Arg f32(float value) {
    Arg a(TILEC_ARG_F32);
    a.f32_ = value;
    return a;
  }
  static Arg i32(int32_t value) {
    Arg a(TILEC_ARG_I32);
    a.i32_ = value;
    return a;
  }
  /// The C view; valid while this Arg lives.
  tilec_arg view() const {
    switch (kind_) {
    case TILEC_ARG_F32: return tilec_f32(f32_);
    case TILEC_ARG_I32: return tilec_i32(i32_);
    case TILEC_ARG_TENSOR: break;
    }
    return tilec_tensor(data_, dtype_.c_str(), static_cast<int32_t>(shape_.size()), shape_.data());
  }

private:
  explicit Arg(tilec_arg_kind kind) : kind_(kind) {}
  tilec_arg_kind kind_;
  void *data_ = nullptr;
  std::string dtype_;
  std::vector<int64_t> shape_;
  float f32_ = 0;
  int32_t i32_ = 0;
};

class Bundle {
public:
  Bundle() = default;
  Bundle(const Bundle &) = delete;
  Bundle &operator=(const Bundle &) = delete;
  Bundle(Bundle &&other) noexcept : bundle_(std::exchange(other.bundle_, nullptr)) {}
  Bundle &operator=(Bundle &&other) noexcept {
    std::swap(bundle_, other.bundle_);
    return *this;
  }
  ~Bundle() { tilec_bundle_close(bundle_); }

  /// Opens the bundle folder `dir` (closing the one this held).
  Status open(const std::string &dir) {
    tilec_bundle_close(std::exchange(bundle_, nullptr));
    return Status::of(tilec_bundle_open(dir.c_str(), &bundle_));
  }

  /// The distinct kernel names, in manifest order.
  std::vector<std::string> kernels() const {
    std::vector<std::string> names;
    for (int i = 0; i < tilec_bundle_kernel_count(bundle_); ++i)
      names.emplace_back(tilec_bundle_kernel_name(bundle_, i));
    return names;
  }

  /// The bundle target of the current device (sm_90a, gfx942, ...).
  Status deviceTarget(std::string &target) {
    char buf[64];
    Status s = Status::of(tilec_device_target(bundle_, buf, sizeof buf));
    if (s)
      target = buf;
    return s;
  }

  /// Checks a launch of `name` compiled for `target` without a device.
  Status check(const std::string &name, const std::string &target, const std::vector<Arg> &args,
               tilec_launch_dims &dims) const {
    std::vector<tilec_arg> raw = views(args);
    return Status::of(tilec_check_launch(bundle_, name.c_str(), target.c_str(), raw.data(),
                                         static_cast<int>(raw.size()), &dims));
  }

  /// Launches `name` on `stream` (a CUstream / hipStream_t; nullptr: the default stream).
  Status launch(const std::string &name, const std::vector<Arg> &args, void *stream = nullptr) {
    std::vector<tilec_arg> raw = views(args);
    return Status::of(tilec_launch(bundle_, name.c_str(), raw.data(), static_cast<int>(raw.size()), stream));
  }

  tilec_bundle *get() const { return bundle_; }

private:
  static std::vector<tilec_arg> views(const std::vector<Arg> &args) {
    std::vector<tilec_arg> raw;
    for (const Arg &a : args)
      raw.push_back(a.view());
    return raw;
  }
  tilec_bundle *bundle_ = nullptr;
};

} // namespace tilec::rt
