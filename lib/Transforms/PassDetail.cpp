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

} // namespace tilec
