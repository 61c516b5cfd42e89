#include "Dialect/Tile/TileContract.h"

using namespace mlir;

namespace tilec {

int numWavesOf(func::FuncOp f) {
  if (auto a = f->getAttrOfType<IntegerAttr>(tile::attr::kNumWaves))
    return static_cast<int>(a.getInt());
  return 4;
}

tile::AllocOp allocOf(Value v) { return v.getDefiningOp<tile::AllocOp>(); }

tile::AllocOp rootAllocOf(Value v) {
  while (auto view = v.getDefiningOp<tile::ViewOp>())
    v = view.getSource();
  return allocOf(v);
}

Value rootTensorOf(Value v) {
  while (auto w = v.getDefiningOp<tile::WindowOp>())
    v = w.getSource();
  return v;
}

tile::LdsPlacementAttr placementOf(Operation *op) {
  auto alloc = dyn_cast_or_null<tile::AllocOp>(op);
  return alloc ? alloc.getLdsAttr() : nullptr;
}

AccessWidths accessOf(tile::AllocOp alloc) {
  tile::AccessWidthsAttr w = alloc ? alloc.getAccessAttr() : nullptr;
  if (!w)
    return {};
  return {w.getLoad(), w.getWrite(), w.getRead(), w.getRealign()};
}

AccessWidths accessOf(Value tile) { return accessOf(rootAllocOf(tile)); }

const MatrixInstr *matrixInstrOf(tile::GemmOp g, const TargetInfo &target) {
  tile::MatrixLayoutAttr l = g.getLayoutAttr();
  return l ? target.findInstr(l.getInstr()) : nullptr;
}

std::optional<std::pair<int64_t, int64_t>> waveGridOf(Operation *op) {
  auto alloc = dyn_cast_or_null<tile::AllocOp>(op);
  Attribute layout = alloc ? alloc.getLayoutAttr() : nullptr;
  if (auto bl = dyn_cast_or_null<tile::BlockedLayoutAttr>(layout))
    return std::make_pair(bl.waveRows(), bl.waveCols());
  if (auto m = dyn_cast_or_null<tile::MatrixLayoutAttr>(layout))
    return std::make_pair(m.waveRows(), m.waveCols());
  return std::nullopt;
}

} // namespace tilec
