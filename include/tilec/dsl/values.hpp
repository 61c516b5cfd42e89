// tilec DSL: the values a kernel is written with (Index, Tensor, Tile, Scalar,
// GridExtent), the op vocabulary (MapFn, ReduceKind) and the options structs.
//
// Standard library only (public header, house rule 7).
#pragma once

#include "tilec/dsl/dtype.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tilec::dsl {

/// Where a DSL call was written. Every DSL entry point takes one as its last
/// parameter, defaulted to the caller's file and line; it becomes the op's
/// MLIR location and the prefix of DSL error messages.
struct SourceLoc {
  const char *file;
  int line;
  SourceLoc(const char *callerFile = __builtin_FILE(), int callerLine = __builtin_LINE())
      : file(callerFile), line(callerLine) {}
};

/// Where a tile lives: LDS (shared by the workgroup) or the workgroup's registers.
enum class Space { lds, reg };

/// Elementwise functions of `tile.map` (same names as the dialect's MapFn).
enum class MapFn {
  // unary: dst = f(src)
  copy, // converts between element types
  neg, exp, exp2, log, recip, relu, silu, sigmoid, gelu_tanh,
  scale,      // src * scalar
  add_scalar, // src + scalar
  ceil,       // rounded up to an integer
  sqrt, rsqrt, abs, tanh,
  // binary: dst = f(lhs, rhs)
  add, sub, mul, div, max, min,
  sub_exp2, // exp2(lhs - rhs), 0 where rhs is -inf: online-softmax rescaling
  safe_div, // lhs / rhs, 0 where rhs is 0 (softmax rows that saw no key)
  eq,       // 1 where lhs == rhs, else 0
  neg_inf_where, // -inf where rhs != 0, else lhs
  le,           // 1 where lhs <= rhs, else 0
  mul_add       // dst + lhs * rhs, one rounding (fma): reads the destination too
};

enum class ReduceKind { sum, max, min };

/// How a rank-1 right-hand side of a binary map spreads over a rank-2 tile.
enum class Broadcast {
  PerRow,    ///< one value per row (length = rows), as a row reduction gives
  PerColumn, ///< one value per column (length = cols), e.g. a bias
};

struct KernelOptions {
  int numWaves = 4; ///< wavefronts per workgroup, 1..16
};
/// What a kernel may assume about a tensor argument.
struct TensorOptions {
  /// The innermost extent is a multiple of this many elements (a power of
  /// two) and the data pointer is aligned to as many elements' bytes (up to
  /// 16): loads may then move that many elements at once (up to 16 bytes).
  /// Launches check both and refuse tensors that break them; 1 assumes
  /// nothing (any extent, element-aligned data).
  int64_t divisibility = 1;
};
/// What a kernel may assume about an i32 scalar argument.
struct ScalarOptions {
  /// The value is a multiple of this (a power of two): a size or a leading
  /// dimension that, with its tensors' divisibility, lets the loads of a
  /// window bounded by it move several elements at once. Launches refuse a
  /// value that breaks it; 1 assumes nothing.
  int64_t divisibility = 1;
};
/// An explicit LDS layout for a tile (overrides the compiler's choice): rows
/// `rowStride` elements apart (0: let the compiler choose everything) and,
/// when swizzleMaxPhase > 1, columns XOR-swizzled per row on groups of
/// swizzleVec elements: col' = ((col / vec) ^ ((row / perPhase) % maxPhase)) * vec + col % vec.
struct LdsLayout {
  int64_t rowStride = 0;
  int64_t swizzleVec = 1, swizzlePerPhase = 1, swizzleMaxPhase = 1;
};
/// The order in which a 2-D grid of output tiles is visited (see
/// KernelBuilder::tileOrder). groupM > 1: grouped ("swizzled") order, groupM
/// tile rows at a time, so that workgroups running together share rows of A
/// and columns of B in L2. xcds > 1: workgroups are dispatched round-robin over
/// that many chiplets (gfx942: 8 XCDs, each with its own L2); consecutive tiles
/// of the order are placed on the same chiplet.
struct TileOrder {
  int64_t groupM = 1;
  int64_t xcds = 1;
};
/// Which matrix instructions a tile.gemm may use: the compiler's choice
/// (warpgroup wgmma where the target has it and the tile allows, else the
/// wave-level ones), wave-level only (mma.sync, MFMA, WMMA), or warpgroup only
/// (an error where it does not fit).
enum class MatrixScope { Auto, Warp, Warpgroup };
struct GemmOptions {
  bool transposeB = false; ///< B is given as N x K (e.g. K of attention)
  MatrixScope scope = MatrixScope::Auto;
};
/// tile.mask: which scores of an attention tile are masked out (besides keys
/// at or past the end).
struct MaskOptions {
  bool causal = false; ///< keys after the query position
  int64_t window = 0;  ///< > 0: keys `window` or more positions before the query (sliding window)
};
struct LoadOptions {
  /// Into an LDS tile of the window's swapped shape, transposed: dst[i][j] =
  /// src[at[0] + j][at[1] + i] (a GEMM operand stored with k along its columns
  /// lands with k along the tile's rows, where matrix instructions read it
  /// with wide LDS reads).
  bool transpose = false;
};
struct CopyOptions {
  bool transpose = false; ///< register tile -> LDS tile of the swapped shape, transposed
};
struct MapOptions {
  Broadcast broadcast = Broadcast::PerRow;
};
struct ReduceOptions {
  int axis = 1;            ///< 1: one value per row; 0: one value per column
  bool accumulate = false; ///< the destination's old values take part (m = max(m, rowmax(s)))
};
/// How the waves of a workgroup schedule a loop's matrix work (tile.schedule;
/// tilec-schedule-waves checks and applies it). All off: the compiler's default.
struct Schedule {
  bool interleave = false; ///< interleave matrix instructions with LDS reads and global loads (sched_group_barrier)
  bool setprio = false;    ///< raise the wave priority (s_setprio 1) around the matrix-instruction clusters
  bool pingPong = false;   ///< two wave groups half a k step apart: one does memory while the other does math
  bool any() const { return interleave || setprio || pingPong; }
};
struct LoopOptions {
  int numStages = 1;       ///< software-pipelining depth (tile.num_stages), 1..8
  std::string name = "iv"; ///< name of the induction variable in the IR
  Schedule schedule = {};  ///< wavefront schedule of the loop body (tile.schedule)
};

inline const char *spaceName(Space s) { return s == Space::lds ? "lds" : "reg"; }

inline const char *mapFnName(MapFn fn) {
  switch (fn) {
  case MapFn::copy: return "copy";
  case MapFn::neg: return "neg";
  case MapFn::exp: return "exp";
  case MapFn::exp2: return "exp2";
  case MapFn::log: return "log";
  case MapFn::recip: return "recip";
  case MapFn::relu: return "relu";
  case MapFn::silu: return "silu";
  case MapFn::sigmoid: return "sigmoid";
  case MapFn::gelu_tanh: return "gelu_tanh";
  case MapFn::scale: return "scale";
  case MapFn::add_scalar: return "add_scalar";
  case MapFn::ceil: return "ceil";
  case MapFn::sqrt: return "sqrt";
  case MapFn::rsqrt: return "rsqrt";
  case MapFn::abs: return "abs";
  case MapFn::tanh: return "tanh";
  case MapFn::add: return "add";
  case MapFn::sub: return "sub";
  case MapFn::mul: return "mul";
  case MapFn::div: return "div";
  case MapFn::max: return "max";
  case MapFn::min: return "min";
  case MapFn::sub_exp2: return "sub_exp2";
  case MapFn::safe_div: return "safe_div";
  case MapFn::eq: return "eq";
  case MapFn::neg_inf_where: return "neg_inf_where";
  case MapFn::le: return "le";
  case MapFn::mul_add: return "mul_add";
  }
  return "?";
}

inline bool isBinary(MapFn fn) { return fn >= MapFn::add; }
inline bool needsScalar(MapFn fn) { return fn == MapFn::scale || fn == MapFn::add_scalar; }

inline const char *reduceKindName(ReduceKind k) {
  switch (k) {
  case ReduceKind::sum: return "sum";
  case ReduceKind::max: return "max";
  case ReduceKind::min: return "min";
  }
  return "?";
}

class KernelBuilder;
class Tensor;
namespace detail {
struct State;
} // namespace detail

/// An `index` value: a constant (integers convert implicitly) or an SSA value of
/// the kernel (block ids, tensor sizes, loop variables, arithmetic on those).
/// Index values are sizes and offsets: arithmetic is unsigned (arith.*ui).
/// Arithmetic on two constants folds; constants are emitted once per value.
class Index {
public:
  /// An integer constant. Where the conversion happens (e.g. the `32` in
  /// `kt * 32`) becomes the location of the arithmetic that uses it.
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Index(T value, SourceLoc loc = {}) : const_(static_cast<int64_t>(value)), loc_(loc) {}

  bool isConstant() const { return id_ < 0; }
  /// The value of a constant Index (0 for SSA values).
  int64_t constant() const { return isConstant() ? const_ : 0; }

private:
  friend struct detail::State;
  friend class KernelBuilder;
  friend class Tensor;
  friend class GridExtent;
  Index(detail::State *state, int id) : state_(state), id_(id) {}

  detail::State *state_ = nullptr;
  int id_ = -1; ///< value number in state_, -1 for a constant
  int64_t const_ = 0;
  std::optional<SourceLoc> loc_; ///< where a constant was written
};

inline Index operator+(const Index &a, const Index &b);
inline Index operator-(const Index &a, const Index &b);
inline Index operator*(const Index &a, const Index &b);
/// Unsigned floor division and remainder (arith.divui / arith.remui).
inline Index operator/(const Index &a, const Index &b);
inline Index operator%(const Index &a, const Index &b);
/// ceil(a / b) (arith.ceildivui): the number of b-sized tiles covering a.
inline Index cdiv(const Index &a, const Index &b, SourceLoc loc = {});
inline Index min(const Index &a, const Index &b, SourceLoc loc = {});
inline Index max(const Index &a, const Index &b, SourceLoc loc = {});

/// One grid axis, given to KernelBuilder::grid.
class GridExtent {
public:
  /// ceil(dim `axis` of `t` / tile) workgroups.
  static GridExtent ceilDiv(const Tensor &t, int axis, int64_t tile);
  /// ceil(value of `scalar` / tile) workgroups, for an i32 or index scalar
  /// argument (e.g. the longest sequence of a packed batch).
  static GridExtent ceilDiv(const Index &scalar, int64_t tile);
  /// A constant number of workgroups.
  static GridExtent fixed(int64_t count) { return GridExtent(nullptr, kConstant, 0, count); }

private:
  friend class KernelBuilder;
  GridExtent(detail::State *state, int tensor, int axis, int64_t tile)
      : state_(state), tensor_(tensor), axis_(axis), tile_(tile) {}
  static constexpr int kConstant = -1, kNoTensor = -2, kScalar = -3; ///< kScalar: axis_ is the Index value id
  detail::State *state_;
  int tensor_; ///< kConstant: the extent is `tile_`; kNoTensor: an invalid Tensor was given
  int axis_;
  int64_t tile_;
};

/// A global tensor argument of the kernel: row-major, run-time sizes.
class Tensor {
public:
  Tensor() = default;
  /// Size of dimension `axis` (memref.dim).
  Index dim(int axis, SourceLoc loc = {}) const;

  bool valid() const { return state_ != nullptr && id_ >= 0; }
  const std::string &name() const;
  DType dtype() const;
  int rank() const;

private:
  friend class KernelBuilder;
  friend class GridExtent;
  friend struct detail::State;
  Tensor(detail::State *state, int id) : state_(state), id_(id) {}
  detail::State *state_ = nullptr;
  int id_ = -1;
};

/// A statically shaped tile in LDS or registers. Tiles live for the whole
/// kernel (they are allocated at its entry wherever they are declared).
class Tile {
public:
  Tile() = default;

  bool valid() const { return state_ != nullptr && id_ >= 0; }
  const std::string &name() const;
  const std::vector<int64_t> &shape() const;
  DType dtype() const;
  Space space() const;
  int rank() const { return static_cast<int>(shape().size()); }
  int64_t rows() const { return shape().empty() ? 0 : shape()[0]; }
  int64_t cols() const { return shape().size() > 1 ? shape()[1] : 1; }

private:
  friend class KernelBuilder;
  friend struct detail::State;
  Tile(detail::State *state, int id) : state_(state), id_(id) {}
  detail::State *state_ = nullptr;
  int id_ = -1;
};

/// A run-time f32 scalar argument (e.g. a softmax scale).
class Scalar {
public:
  Scalar() = default;
  bool valid() const { return state_ != nullptr && id_ >= 0; }

private:
  friend class KernelBuilder;
  Scalar(detail::State *state, int id) : state_(state), id_(id) {}
  detail::State *state_ = nullptr;
  int id_ = -1;
};

} // namespace tilec::dsl
