// tilec DSL: a recorded kernel (tile IR text plus its launch description).
//
// Standard library only (public header, house rule 7).
#pragma once

#include "tilec/dsl/dtype.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tilec {

namespace dsl {
class KernelBuilder;
} // namespace dsl

/// One grid axis. Its extent is ceil(dim `axis` of kernel argument `arg` / `tile`);
/// with axis == -1, ceil(the value of scalar argument `arg` / `tile`); with
/// arg == -1 the constant `tile`. This is the `tile.grid` function attribute:
/// `array<i64: arg, axis, tile>`.
struct GridDim {
  int arg;
  int axis;
  int64_t tile;
};

/// What a kernel argument is. Tensors are row-major `memref<?x?xT>` / `memref<?xT>`
/// with run-time sizes; scalars are passed by value.
enum class ArgKind { Tensor, F32, I32, Index };

struct KernelArg {
  std::string name;
  ArgKind kind;
  DType dtype; ///< element type (tensors), f32 / i32 for those scalars; i32 for Index
  int rank;    ///< 1 or 2 for tensors, 0 for scalars
};

/// A kernel written with the DSL (see tilec/dsl.hpp): its tile IR and how to launch it.
/// A kernel whose construction misused the DSL is not ok(); error() says where and why.
class Kernel {
public:
  Kernel() = default;

  const std::string &name() const { return name_; }
  /// The kernel as `tile` dialect text (a func.func); empty unless ok().
  const std::string &tileIR() const { return tileIR_; }
  const std::vector<GridDim> &grid() const { return grid_; }
  const std::vector<KernelArg> &args() const { return args_; }
  int numWaves() const { return numWaves_; }

  bool ok() const { return ok_; }
  /// The first DSL misuse, "file:line: op: message"; empty when ok().
  const std::string &error() const { return error_; }

private:
  friend class dsl::KernelBuilder;

  std::string name_;
  std::string tileIR_;
  std::vector<GridDim> grid_;
  std::vector<KernelArg> args_;
  int numWaves_ = 0;
  bool ok_ = false;
  std::string error_ = "kernel was not built (default-constructed tilec::Kernel)";
};

} // namespace tilec
