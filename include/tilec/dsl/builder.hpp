// tilec DSL: KernelBuilder, which records a kernel as tile IR. See
// tilec/dsl.hpp for an overview. This header declares the class; its members
// are defined by concept in the headers it includes at the end:
// builder_arguments.hpp (arguments, grid, windows), builder_movement.hpp
// (tiles, loads and stores), builder_compute.hpp (gemm, map, reductions) and
// builder_recording.hpp (loops, finish, the recording helpers).
//
// Standard library only (public header, house rule 7); no exceptions are thrown,
// so code built with -fno-exceptions can use it.
#pragma once

#include "tilec/dsl/detail.hpp"
#include "tilec/dsl/dtype.hpp"
#include "tilec/dsl/kernel.hpp"
#include "tilec/dsl/values.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilec::dsl {

//===----------------------------------------------------------------------===//
// KernelBuilder
//===----------------------------------------------------------------------===//

/// Records a kernel. Each call appends an operation with the call's file:line.
/// Misuse of the DSL itself (a handle of another kernel, a value used outside
/// its loop, a bad name, grid or option) is detected at the call and kept as
/// the kernel's error ("file:line: tile.fill: destination is not a tile of
/// this kernel"); once there is an error, the kernel is not ok() and later
/// misuse is not reported. Shapes and element types are the dialect's to
/// check: its verifiers run when the kernel is compiled (tilec::compile) and
/// report at the same file:line ("file:line:1: error: 'tile.gemm' op shape
/// mismatch: ...").
class KernelBuilder {
public:
  explicit KernelBuilder(std::string name, KernelOptions options = {}, SourceLoc loc = {})
      : state_(std::make_unique<detail::State>()) {
    detail::State &s = *state_;
    s.name = std::move(name);
    s.numWaves = options.numWaves;
    detail::Call call(&s, loc);
    s.funcLoc = s.cur;
    if (!detail::isIdentifier(s.name))
      s.report("func.func", "kernel name '" + s.name +
                                "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*); it becomes the code "
                                "object's symbol");
    else if (options.numWaves < 1 || options.numWaves > 16)
      s.report("func.func", "numWaves must be in [1, 16], got " + std::to_string(options.numWaves));
  }
  KernelBuilder(const KernelBuilder &) = delete;
  KernelBuilder &operator=(const KernelBuilder &) = delete;
  KernelBuilder(KernelBuilder &&) = default;
  KernelBuilder &operator=(KernelBuilder &&) = default;

  //--- Arguments ------------------------------------------------------------

  /// A global tensor argument of rank 1 or 2 (`memref<?x?xT>`).
  Tensor tensor(const std::string &name, DType dtype, int rank, SourceLoc loc = {}) {
    return tensor(name, dtype, rank, TensorOptions{}, loc);
  }
  /// A global tensor argument with what the kernel may assume about it
  /// (TensorOptions::divisibility).
  Tensor tensor(const std::string &name, DType dtype, int rank, TensorOptions options, SourceLoc loc = {});
  /// A run-time f32 scalar argument.
  Scalar scalarF32(const std::string &name, SourceLoc loc = {});
  /// A run-time `index` scalar argument (a size such as a sequence length).
  Index scalarIndex(const std::string &name, SourceLoc loc = {});
  /// A run-time i32 scalar argument, used as an index (arith.index_cast).
  Index scalarI32(const std::string &name, SourceLoc loc = {}) { return scalarI32(name, ScalarOptions{}, loc); }
  Index scalarI32(const std::string &name, ScalarOptions options, SourceLoc loc = {});

  //--- Launch grid ----------------------------------------------------------

  /// The launch grid, 1 to 3 axes (axis 0 is blockId(0)). Without a call to
  /// grid() the kernel runs as one workgroup.
  void grid(const std::vector<GridExtent> &extents, SourceLoc loc = {});

  /// This workgroup's index along grid axis 0, 1 or 2 (tile.block_id).
  Index blockId(int axis, SourceLoc loc = {});

  /// The (row, column) of the output tile this workgroup computes, for a
  /// gridM x gridN grid launched as grid axes 0 and 1, visited in `order`.
  /// Every tile is visited exactly once whatever the extents (ragged edges and
  /// tile counts that the group or chiplet count does not divide included).
  std::pair<Index, Index> tileOrder(const Index &gridM, const Index &gridN, const TileOrder &order,
                                    SourceLoc loc = {});

  //--- Tensor windows and scalar reads -----------------------------------------

  /// The window of `t` at `origin` (one index per dimension) of `sizes`
  /// elements, clipped to `t` (tile.window): a tensor whose element (i, j) is
  /// t[origin[0] + i][origin[1] + j]. Loads outside it read 0 and stores
  /// outside it are dropped, so a kernel can address one sequence of a packed
  /// batch, or one head's columns, without touching its neighbours.
  Tensor window(const Tensor &t, const std::vector<Index> &origin, const std::vector<Index> &sizes,
                SourceLoc loc = {});

  /// Element `position` of a rank-1 i32 tensor, as an index (tile.load_index);
  /// a position past the end reads 0. E.g. a sequence's offset in a packed batch.
  Index loadIndex(const Tensor &t, const Index &position, SourceLoc loc = {}) {
    return loadIndex(t, std::vector<Index>{position}, loc);
  }
  /// Element `at` (one index per dimension) of an i32 tensor of rank 1 or 2,
  /// e.g. a block-table entry; outside the tensor reads 0.
  Index loadIndex(const Tensor &t, const std::vector<Index> &at, SourceLoc loc = {});
  /// Element `at` (one index per dimension) of an f32 tensor of rank 1 or 2,
  /// as a scalar for `scale` and the other maps that take one
  /// (tile.load_scalar; e.g. the scale of one block of a block-scaled
  /// operand); outside the tensor reads 0. Usable in the loop body that reads
  /// it and the bodies inside it.
  Scalar loadScalar(const Tensor &t, const std::vector<Index> &at, SourceLoc loc = {});

  //--- Tiles ----------------------------------------------------------------

  /// A tile in LDS, shared by the workgroup (e.g. a staged block of A).
  Tile ldsTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
               SourceLoc loc = {});
  /// An LDS tile with an explicit layout instead of the compiler's choice.
  Tile ldsTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
               const LdsLayout &layout, SourceLoc loc = {});
  /// A tile spread over the workgroup's registers (e.g. an accumulator).
  Tile regTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
               SourceLoc loc = {});

  //--- Data movement --------------------------------------------------------

  /// Every element of `dst` = value (e.g. -inf for a running max).
  void fill(const Tile &dst, double value, SourceLoc loc = {});

  /// dst[i][j] = src[at[0] + i][at[1] + j]; reads outside `src` give 0. No conversion.
  void load(const Tensor &src, const std::vector<Index> &at, const Tile &dst, SourceLoc loc = {}) {
    load(src, at, dst, LoadOptions{}, loc);
  }
  /// load, with options (LoadOptions::transpose: into an LDS tile transposed).
  void load(const Tensor &src, const std::vector<Index> &at, const Tile &dst, LoadOptions options,
            SourceLoc loc = {});

  /// dst[r][j] = src[ids[idsOffset + r]][col + j]: rows chosen through an i32
  /// index tensor (MoE token permutation). Negative or out-of-range ids, and
  /// positions past the end of `ids`, read as 0.
  void gather(const Tensor &src, const Tensor &ids, const Index &idsOffset, const Index &col,
              const Tile &dst, SourceLoc loc = {});

  /// dst[positions[i]] = values[i] (converted to dst's element type) for each
  /// row i of two row vectors of one shape, where the position lies in the
  /// rank-1 tensor `dst`; others (e.g. -1) are skipped.
  void scatter(const Tile &values, const Tile &positions, const Tensor &dst, SourceLoc loc = {});

  /// dst[at[0] + i][at[1] + j] = src[i][j], converted to dst's element type;
  /// writes outside `dst` are dropped.
  void store(const Tile &src, const Tensor &dst, const std::vector<Index> &at, SourceLoc loc = {});

  /// dst = src between LDS and registers (same shape), converting the element
  /// type; with transpose, a register tile into the LDS tile of the swapped
  /// shape (dst[j][i] = src[i][j]).
  void copy(const Tile &src, const Tile &dst, SourceLoc loc = {}) { copy(src, dst, CopyOptions{}, loc); }
  void copy(const Tile &src, const Tile &dst, CopyOptions options, SourceLoc loc = {});

  //--- Compute --------------------------------------------------------------

  /// C[M,N] += A[M,K] @ B[K,N] (B given as [N,K] with transposeB); A and B share
  /// an element type, or A is an f32 register tile (an earlier gemm's
  /// accumulator, e.g. attention's P) rounded to B's bf16/f16; C is an f32
  /// register tile.
  void gemm(const Tile &a, const Tile &b, const Tile &c, GemmOptions options = {},
            SourceLoc loc = {});

  /// dst = fn(src) for a unary MapFn (not scale / add_scalar: see scale(), addScalar()).
  void map(MapFn fn, const Tile &dst, const Tile &src, SourceLoc loc = {});
  /// dst = fn(lhs, rhs) for a binary MapFn; a rank-1 rhs is broadcast per row
  /// (default) or per column.
  void map(MapFn fn, const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions options = {},
           SourceLoc loc = {});

  // Named elementwise functions (each is one tile.map; dst may alias an input).
  void convert(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::copy, dst, src, loc); }
  void neg(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::neg, dst, src, loc); }
  void exp(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::exp, dst, src, loc); }
  void exp2(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::exp2, dst, src, loc); }
  void log(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::log, dst, src, loc); }
  void recip(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::recip, dst, src, loc); }
  void relu(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::relu, dst, src, loc); }
  void silu(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::silu, dst, src, loc); }
  void sigmoid(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::sigmoid, dst, src, loc); }
  void geluTanh(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::gelu_tanh, dst, src, loc); }

  void add(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::add, dst, lhs, rhs, o, loc);
  }
  void sub(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::sub, dst, lhs, rhs, o, loc);
  }
  void mul(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::mul, dst, lhs, rhs, o, loc);
  }
  void div(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::div, dst, lhs, rhs, o, loc);
  }
  void max(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::max, dst, lhs, rhs, o, loc);
  }
  void min(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::min, dst, lhs, rhs, o, loc);
  }
  /// dst = dst + lhs * rhs with one rounding (a fused multiply-add): e.g. a
  /// scaled product joining an accumulator, acc += part * row_scale.
  void mulAdd(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::mul_add, dst, lhs, rhs, o, loc);
  }
  /// dst = exp2(lhs - rhs), the online-softmax rescaling (P = exp2(S - m)).
  void subExp2(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {},
               SourceLoc loc = {});
  /// dst = lhs / rhs, 0 where rhs is 0 (e.g. O / l for softmax rows that saw no key).
  void safeDiv(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::safe_div, dst, lhs, rhs, o, loc);
  }
  /// Attention masking (tile.mask): element (i, j) of the score tile `s` is the
  /// query at position `row + i` (signed, in key coordinates) against the key
  /// at `col + j`; it becomes -inf when the key is at or past `colEnd`, or as
  /// `options` say (causal, sliding window).
  void mask(const Tile &scores, const Index &row, const Index &col, const Index &colEnd,
            MaskOptions options = {}, SourceLoc loc = {});
  /// dst = 1 where lhs == rhs, else 0 (rhs may be one value per row or column).
  void eq(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::eq, dst, lhs, rhs, o, loc);
  }
  /// dst = -inf where rhs != 0, else lhs (e.g. drop the experts top-k chose).
  void negInfWhere(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::neg_inf_where, dst, lhs, rhs, o, loc);
  }
  /// Element (i, j) of a register tile = j (axis 1) or i (axis 0); a rank-1
  /// tile (one value per row) gets i. Positions as values: with eq and a
  /// min-reduction, the lowest column that holds a row's maximum.
  /// With `offset`, offset + j (or offset + i): e.g. the tile's first row in a tensor.
  void iota(const Tile &dst, int axis, SourceLoc loc = {}) { iota(dst, axis, Index(0), loc); }
  void iota(const Tile &dst, int axis, const Index &offset, SourceLoc loc = {});
  /// dst = 1 where lhs <= rhs, else 0.
  void le(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::le, dst, lhs, rhs, o, loc);
  }
  void ceil(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::ceil, dst, src, loc); }
  void sqrt(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::sqrt, dst, src, loc); }
  void rsqrt(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::rsqrt, dst, src, loc); }
  void abs(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::abs, dst, src, loc); }
  void tanh(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::tanh, dst, src, loc); }
  /// A workgroup barrier that also orders global memory (a release/acquire
  /// fence at workgroup scope around it): stores before it are seen by loads
  /// and overwritten by stores after it, from any wave. LDS accesses get their
  /// barriers from the compiler; this one is for global memory.
  void barrier(SourceLoc loc = {});
  /// dst = lhs + bias, one bias value per column.
  void addBias(const Tile &dst, const Tile &lhs, const Tile &bias, SourceLoc loc = {}) {
    map(MapFn::add, dst, lhs, bias, {Broadcast::PerColumn}, loc);
  }

  /// dst = src * factor (a compile-time constant or a run-time f32 argument).
  void scale(const Tile &dst, const Tile &src, double factor, SourceLoc loc = {});
  void scale(const Tile &dst, const Tile &src, const Scalar &factor, SourceLoc loc = {});
  /// dst = src * (factor * constant): one multiplication per element, the
  /// product formed once (e.g. a softmax scale times log2(e)).
  void scale(const Tile &dst, const Tile &src, const Scalar &factor, double constant, SourceLoc loc = {});
  /// dst = src + value.
  void addScalar(const Tile &dst, const Tile &src, double value, SourceLoc loc = {});
  void addScalar(const Tile &dst, const Tile &src, const Scalar &value, SourceLoc loc = {});

  /// dst = reduce(src) along rows (axis 1: one value per row) or columns (axis
  /// 0); with accumulate, dst's old values take part.
  void reduce(ReduceKind kind, const Tile &src, const Tile &dst, ReduceOptions options = {},
              SourceLoc loc = {});

  //--- Control flow ---------------------------------------------------------

  /// for (iv = lb; iv < ub; iv += step) body(iv)   (scf.for). The body runs
  /// once, now, to record the loop; values it defines stay inside it.
  void forLoop(const Index &lb, const Index &ub, const Index &step, const LoopOptions &options,
               const std::function<void(Index)> &body, SourceLoc loc = {});
  void forLoop(const Index &lb, const Index &ub, const Index &step,
               const std::function<void(Index)> &body, SourceLoc loc = {});

  //--- Result ---------------------------------------------------------------

  /// The recorded kernel; not ok() if the DSL was misused (see Kernel::error()).
  Kernel finish(SourceLoc loc = {});

private:
  /// Declares a kernel argument; returns its value id.
  int addArg(const std::string &name, ArgKind kind, DType dtype, int rank, int64_t divisibility = 1);

  Tile alloc(const std::string &name, const std::vector<int64_t> &shape, DType dtype, Space space,
             const SourceLoc &loc, const LdsLayout *layout = nullptr);

  /// The value ids of `at`, or nullopt after a misuse.
  std::optional<std::vector<int>> operands(const std::vector<Index> &at, const char *op);
  /// Records `op` (tile.load_index, tile.load_scalar): one element of `t` at
  /// `at`, a new value of `type`; its value id, or nullopt after a misuse.
  std::optional<int> recordElementRead(const char *op, const Tensor &t, const std::vector<Index> &at,
                                       record::Type type);

  // Checks and records one tile.map; the caller holds the Call.
  void emitMap(MapFn fn, const Tile &dst, std::vector<Tile> inputs, MapOptions options,
               std::optional<double> scalar, const Scalar *scalarValue);

  /// The recorded operations in program order: the entry block's constants,
  /// casts, block ids, tensor sizes and tiles first, then the body.
  record::Recording render(int finishLoc) const;

  std::unique_ptr<detail::State> state_;
};

} // namespace tilec::dsl

#include "tilec/dsl/builder_arguments.hpp"
#include "tilec/dsl/builder_compute.hpp"
#include "tilec/dsl/builder_movement.hpp"
#include "tilec/dsl/builder_recording.hpp"
