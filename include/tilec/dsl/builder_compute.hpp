// tilec DSL: KernelBuilder's compute operations (declared in
// tilec/dsl/builder.hpp): gemm, map and its named functions, mask, iota,
// barrier, scale and reductions.
//
// Standard library only (public header); included by tilec/dsl/builder.hpp.
#pragma once

#include "tilec/dsl/builder.hpp"

namespace tilec::dsl {

//--- Compute -----------------------------------------------------------------

inline void KernelBuilder::gemm(const Tile &a, const Tile &b, const Tile &c, GemmOptions options,
                                SourceLoc loc) {
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
    attrs += std::string(attrs.empty() ? "" : ", ") + "matrix_scope = #tile.matrix_scope<" +
             (options.scope == MatrixScope::Warp ? "warp" : "warpgroup") + ">";
  s.body.push_back(s.addLine(std::string(op) + " %" + ta->ssa + ", %" + tb->ssa + ", %" + tc->ssa +
                             (attrs.empty() ? "" : " {" + attrs + "}") + " : " + ta->type() + ", " +
                             tb->type() + ", " + tc->type()));
}

inline void KernelBuilder::map(MapFn fn, const Tile &dst, const Tile &src, SourceLoc loc) {
  detail::Call call(state_.get(), loc);
  if (isBinary(fn) || needsScalar(fn))
    return state_->report("tile.map", std::string("'") + mapFnName(fn) + "' is not a unary function" +
                                          (needsScalar(fn) ? " (it takes a scalar: use scale() or addScalar())"
                                                           : " (it takes two inputs)"));
  emitMap(fn, dst, {src}, {}, std::nullopt, nullptr);
}

inline void KernelBuilder::map(MapFn fn, const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions options,
                               SourceLoc loc) {
  detail::Call call(state_.get(), loc);
  if (!isBinary(fn))
    return state_->report("tile.map", std::string("'") + mapFnName(fn) + "' is not a binary function");
  emitMap(fn, dst, {lhs, rhs}, options, std::nullopt, nullptr);
}

inline void KernelBuilder::subExp2(const Tile &dst, const Tile &lhs, const Tile &rhs, MapOptions o,
                                   SourceLoc loc) {
  map(MapFn::sub_exp2, dst, lhs, rhs, o, loc);
}

inline void KernelBuilder::mask(const Tile &scores, const Index &row, const Index &col, const Index &colEnd,
                                MaskOptions options, SourceLoc loc) {
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

inline void KernelBuilder::iota(const Tile &dst, int axis, const Index &offset, SourceLoc loc) {
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

inline void KernelBuilder::barrier(SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  s.body.push_back(s.addLine("tile.barrier"));
}

inline void KernelBuilder::scale(const Tile &dst, const Tile &src, double factor, SourceLoc loc) {
  detail::Call call(state_.get(), loc);
  emitMap(MapFn::scale, dst, {src}, {}, factor, nullptr);
}

inline void KernelBuilder::scale(const Tile &dst, const Tile &src, const Scalar &factor, SourceLoc loc) {
  detail::Call call(state_.get(), loc);
  emitMap(MapFn::scale, dst, {src}, {}, std::nullopt, &factor);
}

inline void KernelBuilder::scale(const Tile &dst, const Tile &src, const Scalar &factor, double constant,
                                 SourceLoc loc) {
  detail::Call call(state_.get(), loc);
  emitMap(MapFn::scale, dst, {src}, {}, constant, &factor);
}

inline void KernelBuilder::addScalar(const Tile &dst, const Tile &src, double value, SourceLoc loc) {
  detail::Call call(state_.get(), loc);
  emitMap(MapFn::add_scalar, dst, {src}, {}, value, nullptr);
}

inline void KernelBuilder::addScalar(const Tile &dst, const Tile &src, const Scalar &value, SourceLoc loc) {
  detail::Call call(state_.get(), loc);
  emitMap(MapFn::add_scalar, dst, {src}, {}, std::nullopt, &value);
}

inline void KernelBuilder::reduce(ReduceKind kind, const Tile &src, const Tile &dst, ReduceOptions options,
                                  SourceLoc loc) {
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

} // namespace tilec::dsl
