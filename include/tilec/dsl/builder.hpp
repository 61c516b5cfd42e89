// tilec DSL: KernelBuilder, which records a kernel as tile IR. See
// tilec/dsl.hpp for an overview.
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

/// Records a kernel. Each call appends tile IR; misuse (shape mismatches, wrong
/// index counts, ...) is detected at the call and kept as the kernel's error
/// ("file:line: tile.gemm: shape mismatch: ..."); once there is an error, the
/// kernel is not ok() and later misuse is not reported.
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
  Tensor tensor(const std::string &name, DType dtype, int rank, TensorOptions options, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    if (rank < 1 || rank > 2)
      s.report("tensor", "tensor '" + name + "' must have rank 1 or 2, got " + std::to_string(rank));
    const int64_t d = options.divisibility;
    const bool validDivisibility = d >= 1 && d <= 1024 && (d & (d - 1)) == 0;
    if (!validDivisibility)
      s.report("tensor", "tensor '" + name + "': divisibility must be a power of two in [1, 1024], got " +
                             std::to_string(d));
    std::string ssa = addArg(name, ArgKind::Tensor, dtype, rank, validDivisibility ? d : 1);
    s.tensors.push_back({name, ssa, dtype, rank, static_cast<int>(s.args.size()) - 1});
    return Tensor(&s, static_cast<int>(s.tensors.size()) - 1);
  }
  /// A run-time f32 scalar argument.
  Scalar scalarF32(const std::string &name, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    s.scalars.push_back(addArg(name, ArgKind::F32, DType::f32, 0));
    return Scalar(&s, static_cast<int>(s.scalars.size()) - 1);
  }
  /// A run-time `index` scalar argument (a size such as a sequence length).
  Index scalarIndex(const std::string &name, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    std::string ssa = addArg(name, ArgKind::Index, DType::i32, 0);
    int id = s.addValue(ssa, 0);
    s.scalarArgOfValue[id] = static_cast<int>(s.args.size()) - 1;
    return s.value(id);
  }
  /// A run-time i32 scalar argument, used as an index (arith.index_cast).
  Index scalarI32(const std::string &name, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    std::string arg = addArg(name, ArgKind::I32, DType::i32, 0);
    std::string ssa = s.uniqueName(arg + "_index");
    s.castLines.push_back(
        s.addLine("%" + ssa + " = arith.index_cast %" + arg + " : i32 to index"));
    int id = s.addValue(ssa, 0);
    s.scalarArgOfValue[id] = static_cast<int>(s.args.size()) - 1;
    return s.value(id);
  }

  //--- Launch grid ----------------------------------------------------------

  /// The launch grid, 1 to 3 axes (axis 0 is blockId(0)). Without a call to
  /// grid() the kernel runs as one workgroup.
  void grid(const std::vector<GridExtent> &extents, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    if (s.gridSet)
      return s.report("grid", "the grid is already set");
    if (extents.empty() || extents.size() > 3)
      return s.report("grid", "a grid has 1 to 3 axes, got " + std::to_string(extents.size()));
    std::vector<GridDim> dims;
    for (const GridExtent &e : extents) {
      std::string which = "grid axis " + std::to_string(dims.size());
      if (e.tile_ < 1)
        return s.report("grid", which + ": tile must be >= 1, got " + std::to_string(e.tile_));
      if (e.tensor_ == GridExtent::kConstant) {
        dims.push_back({-1, 0, e.tile_});
        continue;
      }
      if (e.tensor_ == GridExtent::kScalar) {
        auto arg = s.scalarArgOfValue.find(e.axis_);
        if (e.state_ != &s || arg == s.scalarArgOfValue.end())
          return s.report("grid", which + ": the extent must be an i32 or index scalar argument of this kernel "
                                          "(as scalarI32 or scalarIndex returned it)");
        dims.push_back({arg->second, -1, e.tile_});
        continue;
      }
      if (e.tensor_ == GridExtent::kNoTensor || e.state_ != &s)
        return s.report("grid", which + " refers to a tensor of a different kernel");
      const detail::TensorInfo &t = s.tensors[e.tensor_];
      if (t.arg < 0)
        return s.report("grid", which + ": " + t.name + " is a window; size the grid by a kernel argument");
      if (e.axis_ < 0 || e.axis_ >= t.rank)
        return s.report("grid", which + ": tensor " + t.str() + " has no dimension " +
                                    std::to_string(e.axis_));
      dims.push_back({t.arg, e.axis_, e.tile_});
    }
    s.grid = dims;
    s.gridSet = true;
  }

  /// This workgroup's index along grid axis 0, 1 or 2 (tile.block_id).
  Index blockId(int axis, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    if (axis < 0 || axis > 2) {
      s.report("tile.block_id", "grid axis must be 0, 1 or 2, got " + std::to_string(axis));
      return detail::State::literal(0);
    }
    auto it = s.blockIdValue.find(axis);
    if (it != s.blockIdValue.end())
      return s.value(it->second);
    std::string ssa = s.uniqueName("bid" + std::to_string(axis));
    s.blockIdLine[axis] = s.addLine("%" + ssa + " = tile.block_id " + std::to_string(axis) + " : index");
    s.blockIdLoc[axis] = s.cur;
    int id = s.addValue(ssa, 0);
    s.blockIdValue[axis] = id;
    return s.value(id);
  }

  /// The (row, column) of the output tile this workgroup computes, for a
  /// gridM x gridN grid launched as grid axes 0 and 1, visited in `order`.
  /// Every tile is visited exactly once whatever the extents (ragged edges and
  /// tile counts that the group or chiplet count does not divide included).
  std::pair<Index, Index> tileOrder(const Index &gridM, const Index &gridN, const TileOrder &order,
                                    SourceLoc loc = {}) {
    Index bm = blockId(0, loc), bn = blockId(1, loc);
    if (order.groupM <= 1 && order.xcds <= 1)
      return {bm, bn};
    // Linear id in dispatch order (axis 0 fastest).
    Index n = gridM * gridN;
    Index pid = bm + bn * gridM;
    if (order.xcds > 1) {
      // Workgroup pid runs on chiplet pid % X. Renumber so that chiplet x owns
      // the consecutive ids [x*per + min(x, rem), ...): per = n / X, and the
      // first rem = n % X chiplets get one more.
      Index x = pid % order.xcds, local = pid / order.xcds;
      Index per = n / order.xcds, rem = n % order.xcds;
      pid = x * per + ::tilec::dsl::min(x, rem, loc) + local;
    }
    if (order.groupM <= 1)
      return {pid % gridM, pid / gridM};
    // Grouped order: groupM tile rows at a time, column by column.
    Index inGroup = gridN * order.groupM;
    Index firstM = (pid / inGroup) * order.groupM;
    Index rows = ::tilec::dsl::min(gridM - firstM, Index(order.groupM), loc);
    Index r = pid % inGroup;
    return {firstM + r % rows, r / rows};
  }

  //--- Tensor windows and scalar reads -----------------------------------------

  /// The window of `t` at `origin` (one index per dimension) of `sizes`
  /// elements, clipped to `t` (tile.window): a tensor whose element (i, j) is
  /// t[origin[0] + i][origin[1] + j]. Loads outside it read 0 and stores
  /// outside it are dropped, so a kernel can address one sequence of a packed
  /// batch, or one head's columns, without touching its neighbours.
  Tensor window(const Tensor &t, const std::vector<Index> &origin, const std::vector<Index> &sizes,
                SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.window";
    const detail::TensorInfo *x = s.tensor(t, op, "source");
    if (!x)
      return Tensor();
    if (origin.size() != static_cast<size_t>(x->rank) || sizes.size() != static_cast<size_t>(x->rank)) {
      s.report(op, "a window of tensor " + x->str() + " needs " + std::to_string(x->rank) +
                       " origin index(es) and as many sizes, got " + std::to_string(origin.size()) + " and " +
                       std::to_string(sizes.size()));
      return Tensor();
    }
    auto o = operands(origin, op), z = operands(sizes, op);
    if (!o || !z)
      return Tensor();
    detail::TensorInfo w{x->name + "_window", s.uniqueName(x->name + "_w"), x->dtype, x->rank, -1,
                         s.regions.back()};
    std::string type = x->type();
    s.body.push_back(s.addLine("%" + w.ssa + " = " + op + " %" + x->ssa + "[" + *o + "] [" + *z + "] : " + type));
    s.tensors.push_back(std::move(w));
    return Tensor(&s, static_cast<int>(s.tensors.size()) - 1);
  }

  /// Element `position` of a rank-1 i32 tensor, as an index (tile.load_index);
  /// a position past the end reads 0. E.g. a sequence's offset in a packed batch.
  Index loadIndex(const Tensor &t, const Index &position, SourceLoc loc = {}) {
    return loadIndex(t, std::vector<Index>{position}, loc);
  }
  /// Element `at` (one index per dimension) of an i32 tensor of rank 1 or 2,
  /// e.g. a block-table entry; outside the tensor reads 0.
  Index loadIndex(const Tensor &t, const std::vector<Index> &at, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.load_index";
    const detail::TensorInfo *x = s.tensor(t, op, "source");
    if (!x)
      return detail::State::literal(0);
    if (x->dtype != DType::i32) {
      s.report(op, "reads an i32 tensor, got " + x->str());
      return detail::State::literal(0);
    }
    if (at.size() != static_cast<size_t>(x->rank)) {
      s.report(op, "needs " + std::to_string(x->rank) + " indices into tensor " + x->str() + ", got " +
                       std::to_string(at.size()));
      return detail::State::literal(0);
    }
    auto p = operands(at, op);
    if (!p)
      return detail::State::literal(0);
    std::string ssa = s.temp();
    s.body.push_back(s.addLine("%" + ssa + " = " + op + " %" + x->ssa + "[" + *p + "] : " + x->type()));
    return s.value(s.addValue(ssa, s.regions.back()));
  }

  //--- Tiles ----------------------------------------------------------------

  /// A tile in LDS, shared by the workgroup (e.g. a staged block of A).
  Tile ldsTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
               SourceLoc loc = {}) {
    return alloc(name, shape, dtype, Space::lds, loc);
  }
  /// An LDS tile with an explicit layout instead of the compiler's choice.
  Tile ldsTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
               const LdsLayout &layout, SourceLoc loc = {}) {
    return alloc(name, shape, dtype, Space::lds, loc, &layout);
  }
  /// A tile spread over the workgroup's registers (e.g. an accumulator).
  Tile regTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
               SourceLoc loc = {}) {
    return alloc(name, shape, dtype, Space::reg, loc);
  }

  //--- Data movement --------------------------------------------------------

  /// Every element of `dst` = value (e.g. -inf for a running max).
  void fill(const Tile &dst, double value, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const detail::TileInfo *t = s.tile(dst, "tile.fill", "destination");
    if (!t)
      return;
    s.body.push_back(s.addLine("tile.fill %" + t->ssa + ", " + detail::formatF64(value) + " : " +
                               t->type()));
  }

  /// dst[i][j] = src[at[0] + i][at[1] + j]; reads outside `src` give 0. No conversion.
  void load(const Tensor &src, const std::vector<Index> &at, const Tile &dst, SourceLoc loc = {}) {
    load(src, at, dst, LoadOptions{}, loc);
  }
  /// load, with options (LoadOptions::transpose: into an LDS tile transposed).
  void load(const Tensor &src, const std::vector<Index> &at, const Tile &dst, LoadOptions options,
            SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.load";
    const detail::TensorInfo *x = s.tensor(src, op, "source");
    const detail::TileInfo *t = s.tile(dst, op, "destination");
    if (!x || !t || !checkWindow(op, *x, at.size(), *t))
      return;
    if (options.transpose && (t->space != Space::lds || t->rank() != 2 || x->rank != 2))
      return s.report(op, "a transposing load goes from a rank-2 tensor into a rank-2 LDS tile, got " + x->str() +
                              " -> " + t->str());
    if (t->dtype != x->dtype)
      return s.report(op, "element type of tile " + t->str() + " differs from tensor " + x->str() +
                              " (load does not convert: load into a " + mlirTypeName(x->dtype) +
                              " tile, then copy)");
    auto idx = operands(at, op);
    if (!idx)
      return;
    s.body.push_back(s.addLine(std::string(op) + " %" + x->ssa + "[" + *idx + "] -> %" + t->ssa +
                               (options.transpose ? " {transpose}" : "") + " : " + x->type() + ", " + t->type()));
  }

  /// dst[r][j] = src[ids[idsOffset + r]][col + j]: rows chosen through an i32
  /// index tensor (MoE token permutation). Negative or out-of-range ids, and
  /// positions past the end of `ids`, read as 0.
  void gather(const Tensor &src, const Tensor &ids, const Index &idsOffset, const Index &col,
              const Tile &dst, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.gather";
    const detail::TensorInfo *x = s.tensor(src, op, "source");
    const detail::TensorInfo *d = s.tensor(ids, op, "ids");
    const detail::TileInfo *t = s.tile(dst, op, "destination");
    if (!x || !d || !t)
      return;
    if (x->rank != 2 || t->rank() != 2)
      return s.report(op, "gathers rows of a rank-2 tensor into a rank-2 tile, got " + x->str() +
                              " and " + t->str());
    if (d->rank != 1 || d->dtype != DType::i32)
      return s.report(op, "ids must be a rank-1 i32 tensor, got " + d->str());
    if (t->dtype != x->dtype)
      return s.report(op, "element type of tile " + t->str() + " differs from tensor " + x->str());
    auto off = s.operand(idsOffset, op);
    auto c = s.operand(col, op);
    if (!off || !c)
      return;
    s.body.push_back(s.addLine(std::string(op) + " %" + x->ssa + "[%" + d->ssa + "[" + *off + "], " +
                               *c + "] -> %" + t->ssa + " : " + x->type() + ", " + d->type() + ", " +
                               t->type()));
  }

  /// dst[positions[i]] = values[i] (converted to dst's element type) for each
  /// row i of two row vectors of one shape, where the position lies in the
  /// rank-1 tensor `dst`; others (e.g. -1) are skipped.
  void scatter(const Tile &values, const Tile &positions, const Tensor &dst, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.scatter";
    const detail::TileInfo *v = s.tile(values, op, "values");
    const detail::TileInfo *p = s.tile(positions, op, "positions");
    const detail::TensorInfo *x = s.tensor(dst, op, "destination");
    if (!v || !p || !x || !requireReg(op, *v) || !requireReg(op, *p))
      return;
    if (v->rank() != 1 || v->shape != p->shape)
      return s.report(op, "scatters a rank-1 tile through positions of the same shape, got " + v->str() + " and " +
                              p->str());
    if (x->rank != 1)
      return s.report(op, "scatters into a rank-1 tensor, got " + x->str());
    s.body.push_back(s.addLine(std::string(op) + " %" + v->ssa + " -> %" + x->ssa + "[%" + p->ssa + "] : " +
                               v->type() + ", " + p->type() + ", " + x->type()));
  }

  /// dst[at[0] + i][at[1] + j] = src[i][j], converted to dst's element type;
  /// writes outside `dst` are dropped.
  void store(const Tile &src, const Tensor &dst, const std::vector<Index> &at, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.store";
    const detail::TileInfo *t = s.tile(src, op, "source");
    const detail::TensorInfo *x = s.tensor(dst, op, "destination");
    if (!x || !t || !checkWindow(op, *x, at.size(), *t))
      return;
    auto idx = operands(at, op);
    if (!idx)
      return;
    s.body.push_back(s.addLine(std::string(op) + " %" + t->ssa + " -> %" + x->ssa + "[" + *idx +
                               "] : " + t->type() + ", " + x->type()));
  }

  /// dst = src between LDS and registers (same shape), converting the element
  /// type; with transpose, a register tile into the LDS tile of the swapped
  /// shape (dst[j][i] = src[i][j]).
  void copy(const Tile &src, const Tile &dst, SourceLoc loc = {}) { copy(src, dst, CopyOptions{}, loc); }
  void copy(const Tile &src, const Tile &dst, CopyOptions options, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.copy";
    const detail::TileInfo *a = s.tile(src, op, "source");
    const detail::TileInfo *b = s.tile(dst, op, "destination");
    if (!a || !b)
      return;
    if (options.transpose) {
      if (a->space != Space::reg || b->space != Space::lds || a->rank() != 2 || b->rank() != 2 ||
          a->shape[0] != b->shape[1] || a->shape[1] != b->shape[0])
        return s.report(op, "a transposing copy goes from a rank-2 register tile to the LDS tile of the "
                            "swapped shape, got " + a->str() + " -> " + b->str());
      s.body.push_back(s.addLine(std::string(op) + " %" + a->ssa + " -> %" + b->ssa + " {transpose} : " +
                                 a->type() + ", " + b->type()));
      return;
    }
    if (a->shape != b->shape)
      return s.report(op, "copies between tiles of different shapes: " + a->str() + " -> " + b->str());
    if (a->space == Space::lds && b->space == Space::lds)
      return s.report(op, "copies LDS to LDS (" + a->str() + " -> " + b->str() +
                              "); one side must be a register tile");
    s.body.push_back(s.addLine(std::string(op) + " %" + a->ssa + " -> %" + b->ssa + " : " + a->type() +
                               ", " + b->type()));
  }

  //--- Compute --------------------------------------------------------------

  /// C[M,N] += A[M,K] @ B[K,N] (B given as [N,K] with transposeB); A and B share
  /// an element type, or A is an f32 register tile (an earlier gemm's
  /// accumulator, e.g. attention's P) rounded to B's bf16/f16; C is an f32
  /// register tile.
  void gemm(const Tile &a, const Tile &b, const Tile &c, GemmOptions options = {},
            SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.gemm";
    const detail::TileInfo *ta = s.tile(a, op, "A");
    const detail::TileInfo *tb = s.tile(b, op, "B");
    const detail::TileInfo *tc = s.tile(c, op, "C");
    if (!ta || !tb || !tc)
      return;
    bool tr = options.transposeB;
    std::string operandsStr =
        "A " + ta->str() + (tr ? " * B^T " : " * B ") + tb->str() + " does not give C " + tc->str();
    if (ta->rank() != 2 || tb->rank() != 2 || tc->rank() != 2)
      return s.report(op, "needs rank-2 tiles: " + operandsStr);
    int64_t k = ta->shape[1], kb = tr ? tb->shape[1] : tb->shape[0];
    int64_t n = tr ? tb->shape[0] : tb->shape[1];
    if (k != kb || tc->shape[0] != ta->shape[0] || tc->shape[1] != n)
      return s.report(op, "shape mismatch: " + operandsStr);
    // An f32 register A (an accumulator) is rounded to B's 16-bit float type:
    // kept in registers where its layout is the operand's, else through LDS.
    const bool accumulatorA = ta->space == Space::reg && ta->dtype == DType::f32 &&
                              (tb->dtype == DType::bf16 || tb->dtype == DType::f16);
    if (ta->dtype != tb->dtype && !accumulatorA)
      return s.report(op, "A and B element types differ: A " + ta->str() + ", B " + tb->str() +
                              " (only an f32 register A may feed a bf16 or f16 B)");
    if (tc->space != Space::reg || tc->dtype != DType::f32)
      return s.report(op, "accumulator C must be an f32 register tile, got " + tc->str());
    // tilec-select-matrix-instr reads matrix_scope (absent: the compiler's choice).
    std::string attrs = tr ? "transpose_b" : "";
    if (options.scope != MatrixScope::Auto)
      attrs += std::string(attrs.empty() ? "" : ", ") + "matrix_scope = \"" +
               (options.scope == MatrixScope::Warp ? "warp" : "warpgroup") + "\"";
    s.body.push_back(s.addLine(std::string(op) + " %" + ta->ssa + ", %" + tb->ssa + ", %" + tc->ssa +
                               (attrs.empty() ? "" : " {" + attrs + "}") + " : " + ta->type() + ", " +
                               tb->type() + ", " + tc->type()));
  }

  /// dst = fn(src) for a unary MapFn (not scale / add_scalar: see scale(), addScalar()).
  void map(MapFn fn, const Tile &dst, const Tile &src, SourceLoc loc = {}) {
    detail::Call call(state_.get(), loc);
    if (isBinary(fn) || needsScalar(fn))
      return state_->report("tile.map", std::string("'") + mapFnName(fn) + "' is not a unary function" +
                                            (needsScalar(fn) ? " (it takes a scalar: use scale() or addScalar())"
                                                             : " (it takes two inputs)"));
    emitMap(fn, dst, {src}, {}, std::nullopt, nullptr);
  }
  /// dst = fn(lhs, rhs) for a binary MapFn; a rank-1 rhs is broadcast per row
  /// (default) or per column.
  void map(MapFn fn, const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions options = {},
           SourceLoc loc = {}) {
    detail::Call call(state_.get(), loc);
    if (!isBinary(fn))
      return state_->report("tile.map", std::string("'") + mapFnName(fn) + "' is not a binary function");
    emitMap(fn, dst, {lhs, rhs}, options, std::nullopt, nullptr);
  }

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
  /// dst = exp2(lhs - rhs), the online-softmax rescaling (P = exp2(S - m)).
  void subExp2(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {},
               SourceLoc loc = {}) {
    map(MapFn::sub_exp2, dst, lhs, rhs, o, loc);
  }
  /// dst = lhs / rhs, 0 where rhs is 0 (e.g. O / l for softmax rows that saw no key).
  void safeDiv(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::safe_div, dst, lhs, rhs, o, loc);
  }
  /// Attention masking (tile.mask): element (i, j) of the score tile `s` is the
  /// query at position `row + i` (signed, in key coordinates) against the key
  /// at `col + j`; it becomes -inf when the key is at or past `colEnd`, or as
  /// `options` say (causal, sliding window).
  void mask(const Tile &scores, const Index &row, const Index &col, const Index &colEnd,
            MaskOptions options = {}, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.mask";
    const detail::TileInfo *t = s.tile(scores, op, "scores");
    if (!t || !requireReg(op, *t))
      return;
    if (t->rank() != 2 || t->dtype != DType::f32)
      return s.report(op, "masks a rank-2 f32 register tile of scores, got " + t->str());
    if (options.window < 0)
      return s.report(op, "window must be >= 0 (0: none), got " + std::to_string(options.window));
    auto r = s.operand(row, op), c = s.operand(col, op), e = s.operand(colEnd, op);
    if (!r || !c || !e)
      return;
    std::string attrs;
    if (options.causal)
      attrs = "causal";
    if (options.window > 0)
      attrs += std::string(attrs.empty() ? "" : ", ") + "window = " + std::to_string(options.window) + " : i64";
    s.body.push_back(s.addLine(std::string(op) + " %" + t->ssa + " [" + *r + ", " + *c + ", " + *e + "]" +
                               (attrs.empty() ? "" : " {" + attrs + "}") + " : " + t->type()));
  }
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
  void iota(const Tile &dst, int axis, const Index &offset, SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.iota";
    const detail::TileInfo *t = s.tile(dst, op, "destination");
    if (!t || !requireReg(op, *t))
      return;
    if (axis < 0 || axis >= t->rank())
      return s.report(op, "axis " + std::to_string(axis) + " of a rank-" + std::to_string(t->rank()) +
                              " tile " + t->str());
    auto o = s.operand(offset, op);
    if (!o)
      return;
    s.body.push_back(s.addLine(std::string(op) + " %" + t->ssa + "[" + *o + "] {axis = " + std::to_string(axis) +
                               " : i64} : " + t->type()));
  }
  /// dst = 1 where lhs <= rhs, else 0.
  void le(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o = {}, SourceLoc loc = {}) {
    map(MapFn::le, dst, lhs, rhs, o, loc);
  }
  void ceil(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::ceil, dst, src, loc); }
  void sqrt(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::sqrt, dst, src, loc); }
  void rsqrt(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::rsqrt, dst, src, loc); }
  void abs(const Tile &dst, const Tile &src, SourceLoc loc = {}) { map(MapFn::abs, dst, src, loc); }
  /// A workgroup barrier that also orders global memory (a release/acquire
  /// fence at workgroup scope around it): stores before it are seen by loads
  /// and overwritten by stores after it, from any wave. LDS accesses get their
  /// barriers from the compiler; this one is for global memory.
  void barrier(SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    s.body.push_back(s.addLine("tile.barrier"));
  }
  /// dst = lhs + bias, one bias value per column.
  void addBias(const Tile &dst, const Tile &lhs, const Tile &bias, SourceLoc loc = {}) {
    map(MapFn::add, dst, lhs, bias, {Broadcast::PerColumn}, loc);
  }

  /// dst = src * factor (a compile-time constant or a run-time f32 argument).
  void scale(const Tile &dst, const Tile &src, double factor, SourceLoc loc = {}) {
    detail::Call call(state_.get(), loc);
    emitMap(MapFn::scale, dst, {src}, {}, factor, nullptr);
  }
  void scale(const Tile &dst, const Tile &src, const Scalar &factor, SourceLoc loc = {}) {
    detail::Call call(state_.get(), loc);
    emitMap(MapFn::scale, dst, {src}, {}, std::nullopt, &factor);
  }
  /// dst = src + value.
  void addScalar(const Tile &dst, const Tile &src, double value, SourceLoc loc = {}) {
    detail::Call call(state_.get(), loc);
    emitMap(MapFn::add_scalar, dst, {src}, {}, value, nullptr);
  }
  void addScalar(const Tile &dst, const Tile &src, const Scalar &value, SourceLoc loc = {}) {
    detail::Call call(state_.get(), loc);
    emitMap(MapFn::add_scalar, dst, {src}, {}, std::nullopt, &value);
  }

  /// dst = reduce(src) along rows (axis 1: one value per row) or columns (axis
  /// 0); with accumulate, dst's old values take part.
  void reduce(ReduceKind kind, const Tile &src, const Tile &dst, ReduceOptions options = {},
              SourceLoc loc = {}) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    const char *op = "tile.reduce";
    const detail::TileInfo *a = s.tile(src, op, "source");
    const detail::TileInfo *d = s.tile(dst, op, "destination");
    if (!a || !d || !requireReg(op, *a) || !requireReg(op, *d))
      return;
    if (options.axis != 0 && options.axis != 1)
      return s.report(op, "axis must be 0 or 1, got " + std::to_string(options.axis));
    const bool keepDims = a->rank() == 2 && d->rank() == 2;  // into [R, 1] or [1, C]
    if (a->rank() != 2 || (d->rank() != 1 && !keepDims))
      return s.report(op, "reduces a rank-2 tile into a rank-1 tile (or a rank-2 tile of extent 1 along the "
                          "axis), got " + a->str() + " -> " + d->str());
    int64_t want = options.axis == 1 ? a->shape[0] : a->shape[1];
    if (keepDims && (options.axis == 1 ? d->shape[1] != 1 : d->shape[0] != 1))
      return s.report(op, "axis " + std::to_string(options.axis) + " reduction of " + a->str() +
                              " keeps extent 1 along the axis, destination " + d->str());
    if (d->shape[keepDims && options.axis == 0 ? 1 : 0] != want)
      return s.report(op, "axis " + std::to_string(options.axis) + " reduction of " + a->str() +
                              " gives " + std::to_string(want) + " values, destination " + d->str() +
                              " holds " + std::to_string(d->shape[0]));
    s.body.push_back(s.addLine(std::string(op) + " " + reduceKindName(kind) + " %" + a->ssa + " -> %" +
                               d->ssa + " {axis = " + std::to_string(options.axis) + " : i64" +
                               (options.accumulate ? ", accumulate" : "") + "} : " + a->type() + ", " +
                               d->type()));
  }

  //--- Control flow ---------------------------------------------------------

  /// for (iv = lb; iv < ub; iv += step) body(iv)   (scf.for). The body runs
  /// once, now, to record the loop; values it defines stay inside it.
  void forLoop(const Index &lb, const Index &ub, const Index &step, const LoopOptions &options,
               const std::function<void(Index)> &body, SourceLoc loc = {}) {
    detail::State &s = *state_;
    std::string ivName;
    {
      detail::Call call(&s, loc);
      const char *op = "scf.for";
      if (options.numStages < 1 || options.numStages > 8)
        s.report(op, "numStages must be in [1, 8], got " + std::to_string(options.numStages));
      if (step.isConstant() && step.constant() <= 0)
        s.report(op, "step must be positive, got " + std::to_string(step.constant()));
      auto l = s.operand(lb, op), u = s.operand(ub, op), st = s.operand(step, op);
      ivName = s.uniqueName(options.name);
      s.body.push_back(s.addLine("scf.for %" + ivName + " = " + (l ? *l : "?") + " to " +
                                 (u ? *u : "?") + " step " + (st ? *st : "?") + " {"));
      s.lines[s.body.back()].loc = detail::kNoLoc;
      s.regions.push_back(s.nextRegion++);
    }
    Index iv = s.value(s.addValue(ivName, s.regions.back()));
    body(iv);
    detail::Call call(&s, loc);
    s.regions.pop_back();
    std::string attrs;
    if (options.numStages != 1)
      attrs = "tile.num_stages = " + std::to_string(options.numStages) + " : i64";
    if (const Schedule &sc = options.schedule; sc.any()) {
      auto b = [](bool v) { return v ? "true" : "false"; };
      attrs += std::string(attrs.empty() ? "" : ", ") + "tile.schedule = {interleave = " + b(sc.interleave) +
               ", ping_pong = " + b(sc.pingPong) + ", setprio = " + b(sc.setprio) + "}";
    }
    s.body.push_back(s.addLine("}" + (attrs.empty() ? std::string() : " {" + attrs + "}")));
  }
  void forLoop(const Index &lb, const Index &ub, const Index &step,
               const std::function<void(Index)> &body, SourceLoc loc = {}) {
    forLoop(lb, ub, step, LoopOptions{}, body, loc);
  }

  //--- Result ---------------------------------------------------------------

  /// The recorded kernel; not ok() if the DSL was misused (see Kernel::error()).
  Kernel finish(SourceLoc loc = {}) {
    detail::State &s = *state_;
    Kernel k;
    if (s.finished) {
      k.error_ = std::string(loc.file) + ":" + std::to_string(loc.line) +
                 ": finish: the kernel was already finished";
      return k;
    }
    detail::Call call(&s, loc);
    int finishLoc = s.cur;
    if (s.regions.size() != 1)
      s.report("finish", "called inside a loop body");
    if (!s.gridSet)
      s.grid = {GridDim{-1, 0, 1}};
    for (const auto &[axis, where] : s.blockIdLoc)
      if (axis >= static_cast<int>(s.grid.size()) && !s.failed) {
        s.cur = where; // point at the blockId call
        s.report("tile.block_id", "grid axis " + std::to_string(axis) + " does not exist: the grid has " +
                                      std::to_string(s.grid.size()) + " axis(es)");
      }
    s.finished = true;
    k.name_ = s.name;
    k.grid_ = s.grid;
    k.args_ = s.args;
    k.numWaves_ = s.numWaves;
    if (s.failed) {
      k.error_ = s.error;
      return k;
    }
    k.ok_ = true;
    k.error_.clear();
    k.tileIR_ = render(finishLoc);
    return k;
  }

private:
  std::string addArg(const std::string &name, ArgKind kind, DType dtype, int rank, int64_t divisibility = 1) {
    detail::State &s = *state_;
    for (const KernelArg &a : s.args)
      if (a.name == name)
        s.report("argument", "kernel argument '" + name + "' is declared twice");
    if (!detail::isIdentifier(name))
      s.report("argument", "kernel argument name '" + name + "' is not an identifier");
    std::string ssa = s.uniqueName(name);
    s.args.push_back({name, kind, dtype, rank});
    const char *type = kind == ArgKind::F32 ? "f32" : kind == ArgKind::I32 ? "i32" : "index";
    s.argSsa.push_back("%" + ssa + ": " + (kind == ArgKind::Tensor ? detail::memrefType(dtype, rank) : type) +
                       " {" + (divisibility > 1 ? "tile.divisibility = " + std::to_string(divisibility) + " : i64, " : "") +
                       "tile.name = " + detail::quote(name) + "}");
    return ssa;
  }

  Tile alloc(const std::string &name, const std::vector<int64_t> &shape, DType dtype, Space space,
             const SourceLoc &loc, const LdsLayout *layout = nullptr) {
    detail::State &s = *state_;
    detail::Call call(&s, loc);
    detail::TileInfo t{name, s.uniqueName(name), shape, dtype, space};
    if (shape.empty() || shape.size() > 2)
      s.report("tile.alloc", "tile '" + name + "' must have rank 1 or 2, got rank " +
                                 std::to_string(shape.size()));
    for (int64_t d : shape)
      if (d <= 0)
        s.report("tile.alloc", "tile '" + name + "' has a non-positive dimension: " +
                                   detail::shapeStr(shape));
    std::string attrs = "name = " + detail::quote(name);
    if (layout && layout->rowStride > 0) {
      if (shape.size() != 2 || layout->rowStride < shape.back())
        s.report("tile.alloc", "layout of tile '" + name + "': row stride " +
                                   std::to_string(layout->rowStride) + " is smaller than its row");
      attrs += ", row_stride = " + std::to_string(layout->rowStride) + " : i64";
      if (layout->swizzleMaxPhase > 1)
        attrs += ", swizzle = array<i64: " + std::to_string(layout->swizzleVec) + ", " +
                 std::to_string(layout->swizzlePerPhase) + ", " + std::to_string(layout->swizzleMaxPhase) + ">";
    }
    s.allocLines.push_back(s.addLine("%" + t.ssa + " = tile.alloc {" + attrs + "} : " + t.type()));
    s.tiles.push_back(std::move(t));
    return Tile(&s, static_cast<int>(s.tiles.size()) - 1);
  }

  bool checkWindow(const char *op, const detail::TensorInfo &x, size_t numIndices,
                   const detail::TileInfo &t) {
    if (numIndices != static_cast<size_t>(x.rank)) {
      state_->report(op, "needs " + std::to_string(x.rank) + " indices into tensor " + x.str() +
                             ", got " + std::to_string(numIndices) + " (tile " + t.str() + ")");
      return false;
    }
    if (t.rank() > x.rank) {
      state_->report(op, "tile " + t.str() + " has higher rank than tensor " + x.str());
      return false;
    }
    return true;
  }

  bool requireReg(const char *op, const detail::TileInfo &t) {
    if (t.space == Space::reg)
      return true;
    state_->report(op, "operates on register tiles, got " + t.str() + " (copy it to a register tile first)");
    return false;
  }

  std::optional<std::string> operands(const std::vector<Index> &at, const char *op) {
    std::string out;
    for (size_t i = 0; i < at.size(); ++i) {
      auto o = state_->operand(at[i], op);
      if (!o)
        return std::nullopt;
      out += (i ? ", " : "") + *o;
    }
    return out;
  }

  // Checks and records one tile.map; the caller holds the Call.
  void emitMap(MapFn fn, const Tile &dst, std::vector<Tile> inputs, MapOptions options,
               std::optional<double> scalar, const Scalar *scalarValue) {
    detail::State &s = *state_;
    const char *op = "tile.map";
    const detail::TileInfo *d = s.tile(dst, op, "destination");
    if (!d || !requireReg(op, *d))
      return;
    std::vector<const detail::TileInfo *> in;
    for (const Tile &t : inputs) {
      const detail::TileInfo *i = s.tile(t, op, in.empty() ? "input" : "rhs");
      if (!i || !requireReg(op, *i))
        return;
      in.push_back(i);
    }
    std::string fnStr = std::string("'") + mapFnName(fn) + "'";
    if (in[0]->shape != d->shape)
      return s.report(op, fnStr + ": input " + in[0]->str() + " and destination " + d->str() +
                              " differ in shape");
    bool perCol = options.broadcast == Broadcast::PerColumn;
    bool rhsBroadcast = false;
    if (in.size() == 2) {
      const detail::TileInfo &r = *in[1];
      bool same = r.shape == d->shape;
      rhsBroadcast = !same && r.rank() == 1 && d->rank() == 2;
      int64_t want = d->rank() == 2 ? (perCol ? d->shape[1] : d->shape[0]) : 0;
      // A [1, C] or [R, 1] tile broadcasts over the rows or columns of R x C.
      const bool tileBroadcast = !same && !perCol && r.rank() == 2 && d->rank() == 2 &&
                                 ((r.shape[0] == 1 && r.shape[1] == d->shape[1]) ||
                                  (r.shape[1] == 1 && r.shape[0] == d->shape[0]));
      if (!same && !tileBroadcast && !(rhsBroadcast && r.shape[0] == want))
        return s.report(op, fnStr + ": cannot broadcast rhs " + r.str() + " to " + d->str() +
                                (d->rank() == 2 ? std::string(" (a rank-1 rhs needs one value per ") +
                                                      (perCol ? "column: " : "row: ") +
                                                      std::to_string(want) + ")"
                                                : std::string()));
    }
    std::string scalarOperand;
    if (scalarValue) {
      if (!scalarValue->valid() || scalarValue->state_ != &s)
        return s.report(op, fnStr + ": the scalar is not an f32 argument of this kernel");
      scalarOperand = " scalar(%" + s.scalars[scalarValue->id_] + ")";
    }
    std::vector<std::string> attrs;
    if (rhsBroadcast && perCol)
      attrs.push_back("broadcast_cols");
    if (scalar)
      attrs.push_back("scalar = " + detail::formatF64(*scalar) + " : f64");
    std::string text = std::string(op) + " " + mapFnName(fn) + " %" + d->ssa;
    for (const detail::TileInfo *i : in)
      text += ", %" + i->ssa;
    text += scalarOperand;
    if (!attrs.empty()) {
      text += " {";
      for (size_t i = 0; i < attrs.size(); ++i)
        text += (i ? ", " : "") + attrs[i];
      text += "}";
    }
    text += " : " + d->type();
    for (const detail::TileInfo *i : in)
      text += ", " + i->type();
    s.body.push_back(s.addLine(text));
  }

  std::string render(int finishLoc) const {
    const detail::State &s = *state_;
    std::string out = "func.func @" + s.name + "(";
    for (size_t i = 0; i < s.argSsa.size(); ++i)
      out += (i ? ", " : "") + s.argSsa[i];
    out += ") attributes {tile.kernel, tile.num_waves = " + std::to_string(s.numWaves) +
           " : i64, tile.grid = [";
    for (size_t i = 0; i < s.grid.size(); ++i)
      out += (i ? ", " : "") + std::string("array<i64: ") + std::to_string(s.grid[i].arg) + ", " +
             std::to_string(s.grid[i].axis) + ", " + std::to_string(s.grid[i].tile) + ">";
    out += "]} {\n";
    // Entry-block values (constants, ids, sizes, tiles) are hoisted out of
    // any loop they were first needed in; body lines keep their nesting.
    auto emit = [&](int lineIndex, bool hoisted = true) {
      const detail::Line &l = s.lines[lineIndex];
      out += std::string(2 * (hoisted ? 1 : l.depth + 1), ' ') + l.text;
      if (l.loc >= 0)
        out += " " + s.locStr(l.loc);
      else if (l.loc == detail::kPendingLoc)
        out += " " + s.locStr(finishLoc);
      out += "\n";
    };
    for (const auto &c : s.constLine)
      emit(c.second);
    for (int i : s.castLines)
      emit(i);
    for (const auto &b : s.blockIdLine)
      emit(b.second);
    for (int i : s.dimLines)
      emit(i);
    for (int i : s.allocLines)
      emit(i);
    for (int i : s.body)
      emit(i, /*hoisted=*/false);
    out += "  return " + s.locStr(finishLoc) + "\n";
    out += "} " + s.locStr(s.funcLoc) + "\n";
    return out;
  }

  std::unique_ptr<detail::State> state_;
};

} // namespace tilec::dsl
