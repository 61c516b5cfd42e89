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
  k.tileIR_ = render(finishLoc);
  return k;
}

//--- Recording helpers -------------------------------------------------------

inline std::string KernelBuilder::addArg(const std::string &name, ArgKind kind, DType dtype, int rank,
                                         int64_t divisibility) {
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

inline Tile KernelBuilder::alloc(const std::string &name, const std::vector<int64_t> &shape, DType dtype, Space space,
                                 const SourceLoc &loc, const LdsLayout *layout) {
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

inline bool KernelBuilder::checkWindow(const char *op, const detail::TensorInfo &x, size_t numIndices,
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

inline bool KernelBuilder::requireReg(const char *op, const detail::TileInfo &t) {
  if (t.space == Space::reg)
    return true;
  state_->report(op, "operates on register tiles, got " + t.str() + " (copy it to a register tile first)");
  return false;
}

inline std::optional<std::string> KernelBuilder::operands(const std::vector<Index> &at, const char *op) {
  std::string out;
  for (size_t i = 0; i < at.size(); ++i) {
    auto o = state_->operand(at[i], op);
    if (!o)
      return std::nullopt;
    out += (i ? ", " : "") + *o;
  }
  return out;
}

inline void KernelBuilder::emitMap(MapFn fn, const Tile &dst, std::vector<Tile> inputs, MapOptions options,
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

inline std::string KernelBuilder::render(int finishLoc) const {
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

} // namespace tilec::dsl
