// tilec DSL: KernelBuilder's tiles and data movement (declared in
// tilec/dsl/builder.hpp): LDS and register tiles, fill, load, gather,
// scatter, store and copy.
//
// Standard library only (public header); included by tilec/dsl/builder.hpp.
#pragma once

#include "tilec/dsl/builder.hpp"

namespace tilec::dsl {

//--- Tiles -------------------------------------------------------------------

inline Tile KernelBuilder::ldsTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
                                   SourceLoc loc) {
  return alloc(name, shape, dtype, Space::lds, loc);
}

inline Tile KernelBuilder::ldsTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
                                   const LdsLayout &layout, SourceLoc loc) {
  return alloc(name, shape, dtype, Space::lds, loc, &layout);
}

inline Tile KernelBuilder::regTile(const std::string &name, const std::vector<int64_t> &shape, DType dtype,
                                   SourceLoc loc) {
  return alloc(name, shape, dtype, Space::reg, loc);
}

//--- Data movement -----------------------------------------------------------

inline void KernelBuilder::fill(const Tile &dst, double value, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const detail::TileInfo *t = s.tile(dst, "tile.fill", "destination");
  if (!t)
    return;
  s.body.push_back(s.addLine("tile.fill %" + t->ssa + ", " + detail::formatF64(value) + " : " +
                             t->type()));
}

inline void KernelBuilder::load(const Tensor &src, const std::vector<Index> &at, const Tile &dst, LoadOptions options,
                                SourceLoc loc) {
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

inline void KernelBuilder::gather(const Tensor &src, const Tensor &ids, const Index &idsOffset, const Index &col,
                                  const Tile &dst, SourceLoc loc) {
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

inline void KernelBuilder::scatter(const Tile &values, const Tile &positions, const Tensor &dst, SourceLoc loc) {
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

inline void KernelBuilder::store(const Tile &src, const Tensor &dst, const std::vector<Index> &at, SourceLoc loc) {
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

inline void KernelBuilder::copy(const Tile &src, const Tile &dst, CopyOptions options, SourceLoc loc) {
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

} // namespace tilec::dsl
