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
  // Shapes and element types are the dialect's to check (tile.gemm's verifier):
  // C = A * B (B^T with transposeB), C an f32 register tile, A and B of one
  // element type except that an f32 register A (an accumulator) may feed a
  // 16-bit float B, rounded to B's type.
  record::Op gemmOp{op, {{ta->vid}, {tb->vid}, {tc->vid}}};
  if (options.transposeB)
    gemmOp.attrs.push_back(record::Attr::unit("transpose_b"));
  // tilec-select-matrix-instr reads matrix_scope (absent: the compiler's choice).
  if (options.scope != MatrixScope::Auto)
    gemmOp.attrs.push_back(
        record::Attr::enumCase("matrix_scope", options.scope == MatrixScope::Warp ? "warp" : "warpgroup"));
  s.body.push_back(s.addLine(std::move(gemmOp)));
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
  if (!t)
    return;
  if (options.window < 0)
    return s.report(op, "window must be >= 0 (0: none), got " + std::to_string(options.window));
  auto r = s.operand(row, op), c = s.operand(col, op), e = s.operand(colEnd, op);
  if (!r || !c || !e)
    return;
  record::Op maskOp{op, {{t->vid}, {*r}, {*c}, {*e}}};
  if (options.causal)
    maskOp.attrs.push_back(record::Attr::unit("causal"));
  if (options.window > 0)
    maskOp.attrs.push_back(record::Attr::integer("window", options.window));
  s.body.push_back(s.addLine(std::move(maskOp)));
}

inline void KernelBuilder::iota(const Tile &dst, int axis, const Index &offset, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const char *op = "tile.iota";
  const detail::TileInfo *t = s.tile(dst, op, "destination");
  if (!t)
    return;
  auto o = s.operand(offset, op);
  if (!o)
    return;
  s.body.push_back(s.addLine({op, {{t->vid}, {*o}}, {}, {record::Attr::integer("axis", axis)}}));
}

inline void KernelBuilder::barrier(SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  s.body.push_back(s.addLine({"tile.barrier"}));
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
  if (!a || !d)
    return;
  record::Op reduceOp{op,
                      {{a->vid}, {d->vid}},
                      {},
                      {record::Attr::enumCase("kind", reduceKindName(kind)), record::Attr::integer("axis", options.axis)}};
  if (options.accumulate)
    reduceOp.attrs.push_back(record::Attr::unit("accumulate"));
  s.body.push_back(s.addLine(std::move(reduceOp)));
}

} // namespace tilec::dsl
