// tilec DSL: KernelBuilder's loops, finish(), and the helpers every call
// records through (declared in tilec/dsl/builder.hpp): arguments, tile
// allocation, operand checks, tile.map, and the rendered tile IR.
//
// Standard library only (public header); included by tilec/dsl/builder.hpp.
#pragma once

#include "tilec/dsl/builder.hpp"

namespace tilec::dsl {

//--- Control flow ------------------------------------------------------------

inline void KernelBuilder::forLoop(const Index &lb, const Index &ub, const Index &step, const LoopOptions &options,
                                   const std::function<void(Index)> &body, SourceLoc loc) {
  detail::State &s = *state_;
  int forLine, iv;
  {
    detail::Call call(&s, loc);
    const char *op = "scf.for";
    if (options.numStages < 1 || options.numStages > 8)
      s.report(op, "numStages must be in [1, 8], got " + std::to_string(options.numStages));
    if (step.isConstant() && step.constant() <= 0)
      s.report(op, "step must be positive, got " + std::to_string(step.constant()));
    auto l = s.operand(lb, op), u = s.operand(ub, op), st = s.operand(step, op);
    iv = s.newValue(detail::State::indexType());
    record::Op forOp{op, {{l ? *l : -1}, {u ? *u : -1}, {st ? *st : -1}, {}}, {iv}};
    if (options.numStages != 1)
      forOp.attrs.push_back(record::Attr::integer("tile.num_stages", options.numStages));
    if (const Schedule &sc = options.schedule; sc.any())
      forOp.attrs.push_back(record::Attr::dict(
          "tile.schedule", {record::Attr::boolean("interleave", sc.interleave),
                            record::Attr::boolean("ping_pong", sc.pingPong), record::Attr::boolean("setprio", sc.setprio)}));
    forLine = s.addLine(std::move(forOp));
    s.body.push_back(forLine);
    s.regions.push_back(s.nextRegion++);
  }
  body(s.value(s.addValue(s.uniqueName(options.name), s.regions.back(), iv)));
  detail::Call call(&s, loc);
  s.regions.pop_back();
  // The loop ends where its body does: the location of the call that closes it.
  s.lines[forLine].loc = s.cur;
  s.body.push_back(s.addLine({"scf.yield"}));
}

inline void KernelBuilder::forLoop(const Index &lb, const Index &ub, const Index &step,
                                   const std::function<void(Index)> &body, SourceLoc loc) {
  forLoop(lb, ub, step, LoopOptions{}, body, loc);
}

//--- Result ------------------------------------------------------------------

inline Kernel KernelBuilder::finish(SourceLoc loc) {
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
  k.recording_ = render(finishLoc);
  return k;
}

//--- Recording helpers -------------------------------------------------------

inline int KernelBuilder::addArg(const std::string &name, ArgKind kind, DType dtype, int rank,
                                 int64_t divisibility) {
  detail::State &s = *state_;
  for (const KernelArg &a : s.args)
    if (a.name == name)
      s.report("argument", "kernel argument '" + name + "' is declared twice");
  if (!detail::isIdentifier(name))
    s.report("argument", "kernel argument name '" + name + "' is not an identifier");
  using T = record::Type;
  int vid = s.newValue(kind == ArgKind::Tensor ? T::tensor(dtype, rank)
                       : kind == ArgKind::F32  ? T::scalar(T::F32)
                       : kind == ArgKind::I32  ? T::scalar(T::I32)
                                               : T::scalar(T::Index));
  s.args.push_back({name, kind, dtype, rank, divisibility, vid});
  return vid;
}

inline Tile KernelBuilder::alloc(const std::string &name, const std::vector<int64_t> &shape, DType dtype, Space space,
                                 const SourceLoc &loc, const LdsLayout *layout) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  detail::TileInfo t{name, shape, dtype, space, s.newValue(record::Type::tile(dtype, shape, space))};
  if (shape.empty() || shape.size() > 2)
    s.report("tile.alloc", "tile '" + name + "' must have rank 1 or 2, got rank " +
                               std::to_string(shape.size()));
  for (int64_t d : shape)
    if (d <= 0)
      s.report("tile.alloc", "tile '" + name + "' has a non-positive dimension: " +
                                 detail::shapeStr(shape));
  record::Op op{"tile.alloc", {}, {t.vid}};
  op.attrs.push_back(record::Attr::text("name", name));
  if (layout && layout->rowStride > 0) {
    if (shape.size() != 2 || layout->rowStride < shape.back())
      s.report("tile.alloc", "layout of tile '" + name + "': row stride " +
                                 std::to_string(layout->rowStride) + " is smaller than its row");
    // The user's layout, which tilec-allocate-lds takes over as the placement.
    op.attrs.push_back(record::Attr::integer("row_stride", layout->rowStride));
    if (layout->swizzleMaxPhase > 1) {
      op.attrs.push_back(record::Attr::list("swizzle", {layout->swizzleVec, layout->swizzlePerPhase, layout->swizzleMaxPhase}));
    }
  }
  s.allocLines.push_back(s.addLine(std::move(op)));
  s.tiles.push_back(std::move(t));
  return Tile(&s, static_cast<int>(s.tiles.size()) - 1);
}

inline std::optional<std::vector<int>> KernelBuilder::operands(const std::vector<Index> &at, const char *op) {
  std::vector<int> out;
  for (const Index &i : at) {
    auto o = state_->operand(i, op);
    if (!o)
      return std::nullopt;
    out.push_back(*o);
  }
  return out;
}

inline void KernelBuilder::emitMap(MapFn fn, const Tile &dst, std::vector<Tile> inputs, MapOptions options,
                                   std::optional<double> scalar, const Scalar *scalarValue) {
  detail::State &s = *state_;
  const char *op = "tile.map";
  const detail::TileInfo *d = s.tile(dst, op, "destination");
  if (!d)
    return;
  std::vector<const detail::TileInfo *> in;
  for (const Tile &t : inputs) {
    const detail::TileInfo *i = s.tile(t, op, in.empty() ? "input" : "rhs");
    if (!i)
      return;
    in.push_back(i);
  }
  // Shapes and broadcasts are the dialect's to check (tile.map's verifier).
  const std::string fnStr = std::string("'") + mapFnName(fn) + "'";
  const bool perColumn = options.broadcast == Broadcast::PerColumn;
  std::vector<int> scalarOperand;
  if (scalarValue) {
    if (!scalarValue->valid() || scalarValue->state_ != &s)
      return s.report(op, fnStr + ": the scalar is not an f32 scalar of this kernel");
    const detail::State::ScalarInfo &sc = s.scalars[scalarValue->id_];
    if (!s.inScope(sc.region))
      return s.report(op, fnStr + ": the scalar is used outside the loop body that reads it");
    scalarOperand.push_back(sc.vid);
  }
  std::vector<int> inputIds;
  for (const detail::TileInfo *i : in)
    inputIds.push_back(i->vid);
  record::Op mapOp{op, {{d->vid}, inputIds, scalarOperand}};
  mapOp.attrs.push_back(record::Attr::enumCase("fn", mapFnName(fn)));
  if (perColumn && in.size() == 2 && in[1]->rank() == 1 && d->rank() == 2)
    mapOp.attrs.push_back(record::Attr::unit("broadcast_cols"));
  if (scalar) {
    mapOp.attrs.push_back(record::Attr::real("scalar", *scalar));
  }
  s.body.push_back(s.addLine(std::move(mapOp)));
}

inline record::Recording KernelBuilder::render(int finishLoc) const {
  const detail::State &s = *state_;
  record::Recording out;
  out.values = s.types;
  for (const auto &[file, line] : s.locs)
    out.locations.push_back({file, line});
  out.functionLoc = s.funcLoc;
  out.returnLoc = finishLoc;
  // Entry-block values (constants, ids, sizes, tiles) are hoisted out of
  // any loop they were first needed in; the body keeps its nesting.
  auto emit = [&](int lineIndex) {
    const detail::Line &l = s.lines[lineIndex];
    out.ops.push_back(l.op);
    out.ops.back().loc = l.loc >= 0 ? l.loc : l.loc == detail::kPendingLoc ? finishLoc : -1;
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
    emit(i);
  return out;
}

} // namespace tilec::dsl
