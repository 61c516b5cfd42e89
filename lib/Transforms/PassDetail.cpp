#include "Transforms/PassDetail.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/MathExtras.h"

#include <cstdlib>
#include <numeric>

using namespace mlir;

namespace tilec {

std::optional<ElemType> toElemType(Type t) {
  if (t.isBF16()) return ElemType::BF16;
  if (t.isF16()) return ElemType::F16;
  if (t.isF32()) return ElemType::F32;
  if (t.isFloat8E4M3FNUZ()) return ElemType::FP8E4M3FNUZ;
  if (t.isFloat8E5M2FNUZ()) return ElemType::FP8E5M2FNUZ;
  if (t.isFloat8E4M3FN()) return ElemType::FP8E4M3FN;
  if (t.isFloat8E5M2()) return ElemType::FP8E5M2;
  if (t.isInteger(8)) return ElemType::I8;
  if (t.isInteger(32)) return ElemType::I32;
  return std::nullopt;
}

const TargetInfo *targetOrError(func::FuncOp f, llvm::StringRef arch) {
  const TargetInfo *target = lookupTarget(arch.str());
  if (!target)
    f.emitError() << "unknown target '" << arch << "' (known: " << knownTargetsList() << ")";
  return target;
}

namespace {
int64_t knownMultipleAt(Value v, int depth) {
  constexpr int64_t kCap = int64_t(1) << 20;  // beyond any vector width
  if (depth > 16)
    return 1;  // deep expressions: assume nothing (and bound the recursion)
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value() == 0 ? 0 : c.value() < -kCap || c.value() > kCap ? kCap : std::abs(c.value());
  // The innermost extent of a tensor argument is a multiple of its declared
  // divisibility (the launch checks it).
  if (auto d = v.getDefiningOp<memref::DimOp>()) {
    auto arg = dyn_cast<BlockArgument>(d.getSource());
    auto f = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
    auto div = f ? f.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), tile::attr::kDivisibility) : nullptr;
    std::optional<int64_t> axis = d.getConstantIndex();
    auto type = dyn_cast<MemRefType>(d.getSource().getType());
    if (div && axis && type && *axis == type.getRank() - 1)
      return div.getInt();
    return 1;
  }
  // An i32 scalar argument is a multiple of its declared divisibility (the
  // launch checks it).
  if (auto c = v.getDefiningOp<arith::IndexCastOp>()) {
    auto arg = dyn_cast<BlockArgument>(c.getIn());
    auto f = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
    auto div = f ? f.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), tile::attr::kDivisibility) : nullptr;
    return div ? div.getInt() : 1;
  }
  if (auto m = v.getDefiningOp<arith::MulIOp>()) {
    int64_t a = knownMultipleAt(m.getLhs(), depth + 1), b = knownMultipleAt(m.getRhs(), depth + 1);
    return a == 0 || b == 0 ? 0 : std::min(kCap, a * b);
  }
  if (auto s = v.getDefiningOp<arith::AddIOp>())
    return std::gcd(knownMultipleAt(s.getLhs(), depth + 1), knownMultipleAt(s.getRhs(), depth + 1));
  if (auto s = v.getDefiningOp<arith::SubIOp>())
    return std::gcd(knownMultipleAt(s.getLhs(), depth + 1), knownMultipleAt(s.getRhs(), depth + 1));
  return 1;
}
} // namespace

int64_t knownMultiple(Value v) { return knownMultipleAt(v, 0); }

namespace {
/// The run of a copy of whole-row pieces of `source` into a rank-2 tile
/// whose extent along the source's rows is `extent` (its columns, or its rows
/// when the copy transposes), starting at column `col`: see loadRunOf.
int64_t rowRunOf(Value source, Value col, int64_t extent, int64_t elemBytes) {
  int64_t multiple = knownMultiple(col);  // 0: any
  while (auto w = source.getDefiningOp<tile::WindowOp>()) {
    if (w.getOrigin().size() != 2 || w.getSizes().size() != 2)
      return 1;
    multiple = std::gcd(multiple, std::gcd(knownMultiple(w.getOrigin()[1]), knownMultiple(w.getSizes()[1])));
    source = w.getSource();
  }
  auto arg = dyn_cast<BlockArgument>(source);
  auto f = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
  auto div = f ? f.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), tile::attr::kDivisibility) : nullptr;
  if (!div)
    return 1;
  for (int64_t w = 16 / elemBytes; w >= 2; w /= 2)
    if (div.getInt() % w == 0 && (multiple == 0 || multiple % w == 0) &&
        extent % w == 0)
      return w;
  return 1;
}
} // namespace

int64_t globalRunOf(Value source, ValueRange indices, tile::TileType t, int64_t elemBytes) {
  return t.getRank() == 2 && indices.size() == 2 ? rowRunOf(source, indices[1], t.cols(), elemBytes) : 1;
}

int64_t loadRunOf(tile::LoadOp l, int64_t elemBytes) {
  auto t = cast<tile::TileType>(l.getDest().getType());
  if (t.getRank() != 2 || l.getIndices().size() != 2)
    return 1;
  return rowRunOf(l.getSource(), l.getIndices()[1], l.getTranspose() ? t.rows() : t.cols(), elemBytes);
}

int64_t realignedRunOf(tile::LoadOp l, int64_t elemBytes) {
  auto t = cast<tile::TileType>(l.getDest().getType());
  if (t.getRank() != 2 || l.getIndices().size() != 2 || l.getTranspose() || loadRunOf(l, elemBytes) * elemBytes >= 4)
    return 0;
  // Rows of a kernel argument (a tensor without `tile.divisibility`:
  // divisibility 1), through windows.
  auto arg = dyn_cast<BlockArgument>(rootTensorOf(l.getSource()));
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return 0;
  for (int64_t w = 16 / elemBytes; w * elemBytes >= 4; w /= 2)
    if (t.cols() % w == 0)
      return w;
  return 0;
}

int64_t gatherRunOf(tile::GatherOp g, int64_t elemBytes) {
  auto t = cast<tile::TileType>(g.getDest().getType());
  return t.getRank() == 2 ? rowRunOf(g.getSource(), g.getCol(), t.cols(), elemBytes) : 1;
}

int64_t transposedWriteLimit(int64_t rows, int64_t cols, int64_t run, int64_t threads, int64_t elemBytes) {
  const int64_t least = std::max<int64_t>(1, 4 / elemBytes), runs = std::max<int64_t>(1, rows * cols / run);
  int64_t w = std::max<int64_t>(1, 16 / elemBytes);
  while (w > 1 && (rows % w != 0 || (w > least && runs / w < threads)))
    w /= 2;
  return w;
}

TransposedBlock transposedBlock(int64_t rows, int64_t cols, int64_t run, int64_t threads, int64_t elemBytes) {
  TransposedBlock best{run, transposedWriteLimit(rows, cols, run, threads, elemBytes)};
  const int64_t least = std::max<int64_t>(1, 4 / elemBytes);
  for (int64_t v = run / 2; v >= least; v /= 2) {
    const int64_t w = transposedWriteLimit(rows, cols, v, threads, elemBytes);
    // Loads and writes per element: 1/v + 1/w, compared without division.
    if ((v + w) * best.run * best.write < (best.run + best.write) * v * w)
      best = {v, w};
  }
  // Runs of one 16-bit element are gathered into columns element by element:
  // a 16-byte column of them went through scratch on gfx90a (32 bytes, the
  // ragged GEMM's B), 8 bytes stays in registers.
  if (elemBytes == 2 && best.run == 1)
    best.write = std::min<int64_t>(best.write, std::max<int64_t>(1, 8 / elemBytes));
  return best;
}

bool writtenTransposed(tile::AllocOp a) {
  SmallVector<Value> values = {a.getResult()};
  for (Operation *u : a->getUsers())
    if (auto v = dyn_cast<tile::ViewOp>(u))
      values.push_back(v.getResult());
  for (Value v : values)
    for (Operation *u : v.getUsers()) {
      if (auto l = dyn_cast<tile::LoadOp>(u); l && l.getDest() == v && l.getTranspose())
        return true;
      if (auto c = dyn_cast<tile::CopyOp>(u); c && c.getDest() == v && c.getTranspose() && isStaging(c.getSource()))
        return true;
    }
  return false;
}

LogicalResult verifyDivisibility(func::FuncOp f) {
  for (BlockArgument arg : f.getArguments()) {
    Attribute attr = f.getArgAttr(arg.getArgNumber(), tile::attr::kDivisibility);
    if (!attr)
      continue;
    auto n = dyn_cast<IntegerAttr>(attr);
    if (!(isa<MemRefType>(arg.getType()) || arg.getType().isInteger(32)) || !n || n.getInt() < 1 ||
        !llvm::isPowerOf2_64(n.getInt()))
      return f.emitError() << "kernel argument " << arg.getArgNumber() << ": " << tile::attr::kDivisibility
                           << " must be a positive power of two on a tensor or i32 argument, got " << attr;
  }
  return success();
}

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

llvm::SmallVector<RegisterOperandConversion>
registerOperandConversions(func::FuncOp f, llvm::function_ref<bool(tile::GemmOp, Value)> readsAInPlace) {
  llvm::SmallVector<RegisterOperandConversion> out;
  f.walk([&](tile::GemmOp g) {
    for (OpOperand *operand : {&g.getAMutable(), &g.getBMutable()}) {
      Value v = operand->get();
      auto t = cast<tile::TileType>(v.getType());
      if (!t.isReg() || (operand == &g.getAMutable() && readsAInPlace(g, v)))
        continue;
      Type elem = cast<tile::TileType>(g.getB().getType()).getElementType();
      out.push_back({g, operand, allocOf(v),
                     tile::TileType::get(f.getContext(), t.getShape(), elem, tile::MemorySpace::lds)});
    }
  });
  return out;
}

} // namespace tilec
