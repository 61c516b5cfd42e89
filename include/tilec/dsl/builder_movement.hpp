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
  s.body.push_back(s.addLine({"tile.fill", {{t->vid}}, {}, {record::Attr::real("value", value)}}));
}

inline void KernelBuilder::load(const Tensor &src, const std::vector<Index> &at, const Tile &dst, LoadOptions options,
                                SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const char *op = "tile.load";
  const detail::TensorInfo *x = s.tensor(src, op, "source");
  const detail::TileInfo *t = s.tile(dst, op, "destination");
  if (!x || !t)
    return;
  auto idx = operands(at, op);
  if (!idx)
    return;
  record::Op loadOp{op, {{x->vid}, *idx, {t->vid}}};
  if (options.transpose)
    loadOp.attrs.push_back(record::Attr::unit("transpose"));
  s.body.push_back(s.addLine(std::move(loadOp)));
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
  auto off = s.operand(idsOffset, op);
  auto c = s.operand(col, op);
  if (!off || !c)
    return;
  s.body.push_back(s.addLine({op, {{x->vid}, {d->vid}, {*off}, {*c}, {t->vid}}}));
}

inline void KernelBuilder::scatter(const Tile &values, const Tile &positions, const Tensor &dst, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const char *op = "tile.scatter";
  const detail::TileInfo *v = s.tile(values, op, "values");
  const detail::TileInfo *p = s.tile(positions, op, "positions");
  const detail::TensorInfo *x = s.tensor(dst, op, "destination");
  if (!v || !p || !x)
    return;
  s.body.push_back(s.addLine({op, {{v->vid}, {p->vid}, {x->vid}}}));
}

inline void KernelBuilder::store(const Tile &src, const Tensor &dst, const std::vector<Index> &at, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const char *op = "tile.store";
  const detail::TileInfo *t = s.tile(src, op, "source");
  const detail::TensorInfo *x = s.tensor(dst, op, "destination");
  if (!x || !t)
    return;
  auto idx = operands(at, op);
  if (!idx)
    return;
  s.body.push_back(s.addLine({op, {{t->vid}, {x->vid}, *idx}}));
}

inline void KernelBuilder::copy(const Tile &src, const Tile &dst, CopyOptions options, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const char *op = "tile.copy";
  const detail::TileInfo *a = s.tile(src, op, "source");
  const detail::TileInfo *b = s.tile(dst, op, "destination");
  if (!a || !b)
    return;
  if (options.transpose)
    return s.body.push_back(s.addLine({op, {{a->vid}, {b->vid}}, {}, {record::Attr::unit("transpose")}}));
  s.body.push_back(s.addLine({op, {{a->vid}, {b->vid}}}));
}

} // namespace tilec::dsl
