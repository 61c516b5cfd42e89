// tilec DSL: KernelBuilder's kernel arguments, launch grid, tensor windows and
// scalar reads (declared in tilec/dsl/builder.hpp).
//
// Standard library only (public header); included by tilec/dsl/builder.hpp.
#pragma once

#include "tilec/dsl/builder.hpp"

namespace tilec::dsl {

//--- Arguments ---------------------------------------------------------------

inline Tensor KernelBuilder::tensor(const std::string &name, DType dtype, int rank, TensorOptions options,
                                    SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  if (rank < 1 || rank > 2)
    s.report("tensor", "tensor '" + name + "' must have rank 1 or 2, got " + std::to_string(rank));
  const int64_t d = options.divisibility;
  const bool validDivisibility = detail::isValidDivisibility(d);
  if (!validDivisibility)
    s.report("tensor", "tensor '" + name + "': divisibility must be a power of two in [1, 1024], got " +
                           std::to_string(d));
  int vid = addArg(name, ArgKind::Tensor, dtype, rank, validDivisibility ? d : 1);
  s.tensors.push_back({name, dtype, rank, static_cast<int>(s.args.size()) - 1, 0, vid});
  return Tensor(&s, static_cast<int>(s.tensors.size()) - 1);
}

inline Scalar KernelBuilder::scalarF32(const std::string &name, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  s.scalars.push_back({addArg(name, ArgKind::F32, DType::f32, 0), 0});
  return Scalar(&s, static_cast<int>(s.scalars.size()) - 1);
}

inline Index KernelBuilder::scalarIndex(const std::string &name, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  int vid = addArg(name, ArgKind::Index, DType::i32, 0);
  int id = s.addValue(s.uniqueName(name), 0, vid);
  s.scalarArgOfValue[id] = static_cast<int>(s.args.size()) - 1;
  return s.value(id);
}

inline Index KernelBuilder::scalarI32(const std::string &name, ScalarOptions options, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const int64_t d = options.divisibility;
  const bool validDivisibility = detail::isValidDivisibility(d);
  if (!validDivisibility)
    s.report("scalar", "scalar '" + name + "': divisibility must be a power of two in [1, 1024], got " +
                           std::to_string(d));
  int arg = addArg(name, ArgKind::I32, DType::i32, 0, validDivisibility ? d : 1);
  int vid = s.newValue(detail::State::indexType());
  s.castLines.push_back(s.addLine({"arith.index_cast", {{arg}}, {vid}}));
  int id = s.addValue(s.uniqueName(name + "_index"), 0, vid);
  s.scalarArgOfValue[id] = static_cast<int>(s.args.size()) - 1;
  return s.value(id);
}

//--- Launch grid -------------------------------------------------------------

inline void KernelBuilder::grid(const std::vector<GridExtent> &extents, SourceLoc loc) {
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

inline Index KernelBuilder::blockId(int axis, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  if (axis < 0 || axis > 2) {
    s.report("tile.block_id", "grid axis must be 0, 1 or 2, got " + std::to_string(axis));
    return detail::State::literal(0);
  }
  auto it = s.blockIdValue.find(axis);
  if (it != s.blockIdValue.end())
    return s.value(it->second);
  int vid = s.newValue(detail::State::indexType());
  s.blockIdLine[axis] = s.addLine({"tile.block_id", {}, {vid}, {record::Attr::integer("dim", axis)}});
  s.blockIdLoc[axis] = s.cur;
  int id = s.addValue(s.uniqueName("bid" + std::to_string(axis)), 0, vid);
  s.blockIdValue[axis] = id;
  return s.value(id);
}

inline std::pair<Index, Index> KernelBuilder::tileOrder(const Index &gridM, const Index &gridN, const TileOrder &order,
                                                        SourceLoc loc) {
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

inline Tensor KernelBuilder::window(const Tensor &t, const std::vector<Index> &origin, const std::vector<Index> &sizes,
                                    SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  const char *op = "tile.window";
  const detail::TensorInfo *x = s.tensor(t, op, "source");
  if (!x)
    return Tensor();
  auto o = operands(origin, op), z = operands(sizes, op);
  if (!o || !z)
    return Tensor();
  detail::TensorInfo w{x->name + "_window", x->dtype, x->rank, -1, s.regions.back(),
                       s.newValue(record::Type::tensor(x->dtype, x->rank))};
  s.body.push_back(s.addLine({op, {{x->vid}, *o, *z}, {w.vid}}));
  s.tensors.push_back(std::move(w));
  return Tensor(&s, static_cast<int>(s.tensors.size()) - 1);
}

inline std::optional<int> KernelBuilder::recordElementRead(const char *op, const Tensor &t,
                                                           const std::vector<Index> &at, record::Type type) {
  detail::State &s = *state_;
  const detail::TensorInfo *x = s.tensor(t, op, "source");
  if (!x)
    return std::nullopt;
  auto p = operands(at, op);
  if (!p)
    return std::nullopt;
  int vid = s.newValue(std::move(type));
  s.body.push_back(s.addLine({op, {{x->vid}, *p}, {vid}}));
  return vid;
}

inline Index KernelBuilder::loadIndex(const Tensor &t, const std::vector<Index> &at, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  std::optional<int> vid = recordElementRead("tile.load_index", t, at, detail::State::indexType());
  if (!vid)
    return detail::State::literal(0);
  return s.value(s.addValue(s.temp(), s.regions.back(), *vid));
}

inline Scalar KernelBuilder::loadScalar(const Tensor &t, const std::vector<Index> &at, SourceLoc loc) {
  detail::State &s = *state_;
  detail::Call call(&s, loc);
  std::optional<int> vid = recordElementRead("tile.load_scalar", t, at, record::Type::scalar(record::Type::F32));
  if (!vid)
    return Scalar();
  s.scalars.push_back({*vid, s.regions.back()});
  return Scalar(&s, static_cast<int>(s.scalars.size()) - 1);
}

} // namespace tilec::dsl
