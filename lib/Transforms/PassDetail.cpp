#include "Transforms/PassDetail.h"

using namespace mlir;

namespace tilec {

std::optional<ElemType> toElemType(Type t) {
  if (t.isBF16()) return ElemType::BF16;
  if (t.isF16()) return ElemType::F16;
  if (t.isF32()) return ElemType::F32;
  if (t.isFloat8E4M3FNUZ()) return ElemType::FP8E4M3FNUZ;
  if (t.isFloat8E5M2FNUZ()) return ElemType::FP8E5M2FNUZ;
  if (t.isInteger(8)) return ElemType::I8;
  if (t.isInteger(32)) return ElemType::I32;
  return std::nullopt;
}

int numWavesOf(func::FuncOp f) {
  if (auto a = f->getAttrOfType<IntegerAttr>(tile::attr::kNumWaves))
    return static_cast<int>(a.getInt());
  return 4;
}

const TargetInfo *targetOrError(func::FuncOp f, llvm::StringRef arch) {
  const TargetInfo *target = lookupTarget(arch.str());
  if (!target)
    f.emitError() << "unknown target '" << arch << "' (known: " << knownTargetsList() << ")";
  return target;
}

tile::AllocOp allocOf(Value v) { return v.getDefiningOp<tile::AllocOp>(); }

LogicalResult verifyTileDefinitions(func::FuncOp f) {
  auto check = [](Value v, Location loc, llvm::StringRef what) -> LogicalResult {
    if (!isa<tile::TileType>(v.getType()))
      return success();
    Operation *def = v.getDefiningOp();
    if (def && isa<tile::AllocOp, tile::ViewOp>(def))
      return success();
    return emitError(loc) << what << " of tile type " << v.getType()
                          << ": tiles must be created by tile.alloc (or tile.view of one) in the kernel body";
  };
  for (BlockArgument arg : f.getArguments())
    if (failed(check(arg, arg.getLoc(), "kernel argument")))
      return failure();
  WalkResult r = f.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(check(arg, op->getLoc(), "region argument")))
            return WalkResult::interrupt();
    for (Value res : op->getResults())
      if (failed(check(res, op->getLoc(), "result of '" + op->getName().getStringRef().str() + "'")))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

} // namespace tilec
