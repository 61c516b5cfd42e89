// tilec DSL: a recorded kernel, the plain list of operations the compiler
// builds into tile IR, and its launch description.
//
// Standard library only (public header, house rule 7).
#pragma once

#include "tilec/dsl/dtype.hpp"
#include "tilec/dsl/values.hpp"

#include <cstdint>
#include <string>
#include <utility>
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
  int64_t divisibility = 1; ///< what the kernel may assume divides its sizes (tensors) or value (i32)
  int value = -1;           ///< the argument's value in Recording::values
};

/// A kernel as the DSL recorded it: values, operations in program order and
/// the source locations they came from. tilec::buildTileIR (tilec.hpp) builds
/// it into `tile` IR with MLIR's builders; the dialect's verifiers check it
/// there and report at the operation's location. A front end in another
/// language produces the same list as JSON (Kernel::toJson; docs/design.md, "The recorded kernel").
namespace record {

/// The type of a recorded value.
struct Type {
  enum Kind { Index, I32, F32, Tensor, Tile };
  Kind kind = Index;
  DType dtype = DType::f32;    ///< Tensor, Tile
  int rank = 0;                ///< Tensor: 1 or 2 (sizes known at run time)
  std::vector<int64_t> shape;  ///< Tile
  dsl::Space space = dsl::Space::reg; ///< Tile

  static Type scalar(Kind k) {
    Type t;
    t.kind = k;
    return t;
  }
  static Type tensor(DType dtype, int rank) {
    Type t = scalar(Tensor);
    t.dtype = dtype;
    t.rank = rank;
    return t;
  }
  static Type tile(DType dtype, std::vector<int64_t> shape, dsl::Space space) {
    Type t = scalar(Tile);
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.space = space;
    return t;
  }
};

/// A named attribute of an operation.
struct Attr {
  enum Kind { Unit, Bool, Int, Float, String, Ints, Enum, Dict };
  std::string name;
  Kind kind = Unit;
  int64_t i = 0;            ///< Bool (0 / 1), Int
  double f = 0;             ///< Float
  std::string s;            ///< String; Enum: the case's keyword ("exp2", "warp")
  std::vector<int64_t> ints; ///< Ints
  std::vector<Attr> fields; ///< Dict

  static Attr unit(std::string name) { return make(std::move(name), Unit); }
  static Attr boolean(std::string name, bool v) { Attr a = make(std::move(name), Bool); a.i = v; return a; }
  static Attr integer(std::string name, int64_t v) { Attr a = make(std::move(name), Int); a.i = v; return a; }
  static Attr real(std::string name, double v) { Attr a = make(std::move(name), Float); a.f = v; return a; }
  static Attr text(std::string name, std::string v) { Attr a = make(std::move(name), String); a.s = std::move(v); return a; }
  static Attr list(std::string name, std::vector<int64_t> v) { Attr a = make(std::move(name), Ints); a.ints = std::move(v); return a; }
  /// An enum attribute's case by its keyword.
  static Attr enumCase(std::string name, std::string keyword) {
    Attr a = make(std::move(name), Enum);
    a.s = std::move(keyword);
    return a;
  }
  static Attr dict(std::string name, std::vector<Attr> fields) {
    Attr a = make(std::move(name), Dict);
    a.fields = std::move(fields);
    return a;
  }

private:
  static Attr make(std::string name, Kind kind) {
    Attr a;
    a.name = std::move(name);
    a.kind = kind;
    return a;
  }
};

/// One operation. `name` is the tile IR operation ("tile.load",
/// "arith.addi"); `operands` has one group of value ids per operand the
/// operation declares (an optional or variadic operand's group may hold any
/// number). "scf.for" opens a loop body (its result is the induction
/// variable) that the next unmatched "scf.yield" closes.
struct Op {
  Op() = default;
  Op(std::string name, std::vector<std::vector<int>> operands = {}, std::vector<int> results = {},
              std::vector<Attr> attrs = {})
      : name(std::move(name)), operands(std::move(operands)), results(std::move(results)), attrs(std::move(attrs)) {}

  std::string name;
  std::vector<std::vector<int>> operands;
  std::vector<int> results; ///< value ids this operation defines
  std::vector<Attr> attrs;
  int loc = -1;             ///< index into Recording::locations; -1: none
};

struct Location {
  std::string file;
  int line = 0;
};

struct Recording {
  std::vector<Type> values;
  std::vector<Op> ops;
  std::vector<Location> locations;
  int functionLoc = -1; ///< where the kernel was declared
  int returnLoc = -1;   ///< where it was finished
};

} // namespace record

/// A kernel written with the DSL (see tilec/dsl.hpp): its recorded operations
/// and how to launch it. A kernel whose construction misused the DSL is not
/// ok(); error() says where and why.
class Kernel {
public:
  Kernel() = default;
  /// A kernel recorded by another front end (e.g. read from JSON): ok().
  Kernel(std::string name, int numWaves, std::vector<GridDim> grid, std::vector<KernelArg> args,
         record::Recording recording)
      : name_(std::move(name)), recording_(std::move(recording)), grid_(std::move(grid)), args_(std::move(args)),
        numWaves_(numWaves), ok_(true), error_() {}

  const std::string &name() const { return name_; }
  /// The recorded operations; empty unless ok().
  const record::Recording &recording() const { return recording_; }
  const std::vector<GridDim> &grid() const { return grid_; }
  const std::vector<KernelArg> &args() const { return args_; }
  int numWaves() const { return numWaves_; }

  bool ok() const { return ok_; }
  /// The first DSL misuse, "file:line: op: message"; empty when ok().
  const std::string &error() const { return error_; }

  /// The kernel as JSON (docs/design.md, "The recorded kernel"): what the
  /// `tilec` CLI reads from a kernel file's generator and what keys the
  /// compiled-kernel cache. Deterministic; empty unless ok().
  std::string toJson() const;

private:
  friend class dsl::KernelBuilder;

  std::string name_;
  record::Recording recording_;
  std::vector<GridDim> grid_;
  std::vector<KernelArg> args_;
  int numWaves_ = 0;
  bool ok_ = false;
  std::string error_ = "kernel was not built (default-constructed tilec::Kernel)";
};

} // namespace tilec

#include "tilec/dsl/kernel_json.hpp"
