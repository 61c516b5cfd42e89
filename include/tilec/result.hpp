// tilec::Result<T>: a value or an error message (the public API does not throw).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace tilec {

/// An error with a human-readable, self-contained message (location included).
struct Error {
  std::string message;
};

template <class T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error error) : error_(std::move(error.message)) {}

  explicit operator bool() const { return value_.has_value(); }
  bool ok() const { return value_.has_value(); }
  const std::string &error() const { return error_; }

  T &value() & { assert(ok()); return *value_; }
  const T &value() const & { assert(ok()); return *value_; }
  T &&value() && { assert(ok()); return std::move(*value_); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  T &operator*() { return value(); }

private:
  std::optional<T> value_;
  std::string error_;
};

/// Success without a value, for operations that can only fail.
struct Ok {};
using Status = Result<Ok>;

} // namespace tilec
