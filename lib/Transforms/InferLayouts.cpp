// tilec-infer-layouts: register layouts flow from the matrix instructions.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace tilec {
#define GEN_PASS_DEF_TILECINFERLAYOUTS
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

/// The accumulator layout of a rank-2 register tile (or the rank-2 tile whose
/// rows a rank-1 tile follows).
struct AccLayout {
  StringAttr instr;
  DenseI64ArrayAttr waveGrid;
  DenseI64ArrayAttr parentShape;
  bool operator==(const AccLayout &o) const {
    return instr == o.instr && waveGrid == o.waveGrid && parentShape == o.parentShape;
  }
};

struct InferLayouts : tilec::impl::TilecInferLayoutsBase<InferLayouts> {
  llvm::DenseMap<Value, AccLayout> layouts;
  bool changed = false;
  bool failedFlag = false;

  void assign(Operation *at, Value tile, const AccLayout &l) {
    auto it = layouts.find(tile);
    if (it == layouts.end()) {
      layouts[tile] = l;
      changed = true;
    } else if (!(it->second == l)) {
      at->emitOpError() << "register tile '" << allocOf(tile).displayName()
                        << "' would need two layouts (" << it->second.instr << " vs " << l.instr
                        << "); layout conversions are not supported yet";
      failedFlag = true;
    }
  }

  const TargetInfo *target = nullptr;

  /// The layout of a row vector of tiles laid out as `l`: it depends on the
  /// instruction, the wave grid and the row count only, so its parent shape is
  /// canonical (rows x the narrowest width the grid allows). Row vectors of S
  /// (BM x BN) and O (BM x D) in attention then share one layout.
  AccLayout rowsOf(const AccLayout &l) {
    const MatrixInstr *mi = target ? target->findInstr(l.instr.getValue().str()) : nullptr;
    int64_t width = (mi ? mi->n : 1) * l.waveGrid[1];
    return {l.instr, l.waveGrid,
            DenseI64ArrayAttr::get(l.instr.getContext(), {l.parentShape[0], width})};
  }

  /// Propagates between two tiles related by `op` (same shape or rows-of).
  void relate(Operation *op, Value x, Value y) {
    auto tx = cast<tile::TileType>(x.getType()), ty = cast<tile::TileType>(y.getType());
    if (!tx.isReg() || !ty.isReg())
      return;
    if (tx.getRank() == ty.getRank()) {
      if (layouts.count(x)) assign(op, y, layouts[x]);
      if (layouts.count(y)) assign(op, x, layouts[y]);
    } else {
      Value full = tx.getRank() == 2 ? x : y, rows = tx.getRank() == 2 ? y : x;
      if (layouts.count(full)) {
        assign(op, rows, rowsOf(layouts[full]));
      } else if (layouts.count(rows)) {
        AccLayout l = layouts[rows];
        l.parentShape = DenseI64ArrayAttr::get(op->getContext(), cast<tile::TileType>(full.getType()).getShape());
        assign(op, full, l);
      }
    }
  }

  /// A register tile that only moves data between global memory and LDS
  /// (loaded from a tensor, copied into LDS or stored): each thread holds
  /// elements t, t + threads, ... in row-major order.
  static bool isStaging(tile::AllocOp a) {
    return !a->use_empty() && llvm::all_of(a->getUsers(), [&](Operation *u) {
      if (auto l = dyn_cast<tile::LoadOp>(u))
        return l.getDest() == a.getResult();
      if (auto c = dyn_cast<tile::CopyOp>(u))
        return c.getSource() == a.getResult() && cast<tile::TileType>(c.getDest().getType()).isLds();
      return isa<tile::StoreOp>(u);
    });
  }

  /// Spreads layouts over map/reduce/copy relations until nothing changes.
  void propagate(func::FuncOp f) {
    do {
      changed = false;
      f.walk([&](Operation *op) {
        if (auto m = dyn_cast<tile::MapOp>(op)) {
          for (Value in : m.getInputs()) {
            auto it = cast<tile::TileType>(in.getType());
            if (it.getRank() == 1 && m.getBroadcastCols() &&
                cast<tile::TileType>(m.getDest().getType()).getRank() == 2)
              continue; // column vectors get no accumulator layout
            relate(op, m.getDest(), in);
          }
        } else if (auto r = dyn_cast<tile::ReduceOp>(op)) {
          if (r.getAxis() == 1)
            relate(op, r.getSource(), r.getDest());
        } else if (auto c = dyn_cast<tile::CopyOp>(op)) {
          relate(op, c.getSource(), c.getDest());
        } else if (auto s = dyn_cast<tile::ScatterOp>(op)) {
          relate(op, s.getValue(), s.getPositions());
        }
      });
    } while (changed && !failedFlag);
  }

  std::optional<AccLayout> defaultLayout(tile::TileType t, int waves) {
    if (!target)
      return std::nullopt;
    for (ElemType e : {ElemType::BF16, ElemType::F16}) {
      std::vector<const MatrixInstr *> instrs = target->instrsFor(e);
      if (instrs.empty())
        continue;
      // Rows spread over the waves (wn = 1) when an instruction allows it, so
      // that row reductions stay inside a wave; else the GEMM tiling's grid.
      std::optional<MatrixTiling> tiling;
      for (const MatrixInstr *mi : instrs)
        if (!tiling && t.rows() % (int64_t(waves) * mi->m) == 0 && t.cols() % mi->n == 0)
          tiling = MatrixTiling{mi, waves, 1};
      if (!tiling)
        tiling = selectMatrixTiling(*target, e, t.rows(), t.cols(), instrs.front()->k, waves);
      if (!tiling)
        return std::nullopt;
      MLIRContext *ctx = t.getContext();
      return AccLayout{StringAttr::get(ctx, tiling->instr->name), DenseI64ArrayAttr::get(ctx, {tiling->wm, tiling->wn}),
                       DenseI64ArrayAttr::get(ctx, t.getShape())};
    }
    return std::nullopt;
  }

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    Builder b(&getContext());
    if (auto arch = f->getAttrOfType<StringAttr>(tile::attr::kTarget))
      target = lookupTarget(arch.getValue().str());
    f.walk([&](tile::GemmOp g) {
      auto c = cast<tile::TileType>(g.getC().getType());
      auto instr = g->getAttrOfType<StringAttr>(pattr::kInstr);
      auto grid = g->getAttrOfType<DenseI64ArrayAttr>(pattr::kWaveGrid);
      if (!instr || !grid) {
        g.emitOpError() << "has no matrix instruction; run tilec-select-matrix-instr first";
        failedFlag = true;
        return;
      }
      assign(g, g.getC(), {instr, grid, b.getDenseI64ArrayAttr(c.getShape())});
    });
    propagate(f);
    // Tiles no matrix instruction reaches (elementwise work on loaded data,
    // e.g. combining split-KV partial results) take the accumulator layout of
    // the target's first 16-bit instruction, over the wave grid the GEMM
    // tiling would choose for their shape; their row vectors follow.
    for (bool assigned = true; assigned && !failedFlag;) {
      assigned = false;
      f.walk([&](tile::AllocOp a) {
        tile::TileType t = a.getType();
        if (assigned || !t.isReg() || t.getRank() != 2 || layouts.count(a.getResult()) || isStaging(a))
          return;
        if (std::optional<AccLayout> l = defaultLayout(t, numWavesOf(f))) {
          layouts[a.getResult()] = *l;
          assigned = true;
        }
      });
      if (assigned)
        propagate(f);
    }

    f.walk([&](tile::AllocOp a) {
      tile::TileType t = a.getType();
      if (!t.isReg())
        return;
      auto it = layouts.find(a.getResult());
      if (it == layouts.end() && isStaging(a)) {
        a->setAttr(pattr::kLayout, b.getStringAttr("staging"));
        return;
      }
      if (it == layouts.end() && failedFlag)
        return; // one diagnostic
      if (it == layouts.end()) {
        a.emitOpError() << "register tile '" << a.displayName()
                        << "' gets no layout: it is not connected to a tile.gemm accumulator, and no "
                           "matrix instruction's layout tiles its shape over the wave grid "
                           "(rank-1 tiles need a rank-2 tile whose rows they hold)";
        failedFlag = true;
        return;
      }
      a->setAttr(pattr::kLayout, b.getStringAttr(t.getRank() == 2 ? "acc" : "rows"));
      a->setAttr(pattr::kInstr, it->second.instr);
      a->setAttr(pattr::kWaveGrid, it->second.waveGrid);
      a->setAttr(pattr::kParentShape, it->second.parentShape);
    });
    if (failedFlag)
      return signalPassFailure();
    convertRegisterOperands(f);
  }

  /// A gemm operand in registers holds the accumulator layout of the gemm
  /// that produced it, never the operand layout of a matrix instruction
  /// (docs/hardware.md sections 1-2): it is converted through LDS, by a copy
  /// into an LDS tile of its own right before the gemm (the only place a
  /// conversion is needed).
  void convertRegisterOperands(func::FuncOp f) {
    f.walk([&](tile::GemmOp g) {
      for (OpOperand *operand : {&g.getAMutable(), &g.getBMutable()}) {
        Value v = operand->get();
        auto t = cast<tile::TileType>(v.getType());
        if (!t.isReg())
          continue;
        tile::AllocOp src = allocOf(v);
        OpBuilder ab(src);
        ab.setInsertionPointAfter(src);
        auto lds = ab.create<tile::AllocOp>(
            src.getLoc(), tile::TileType::get(&getContext(), t.getShape(), t.getElementType(), tile::MemorySpace::lds),
            ab.getStringAttr(src.displayName() + ".lds"));
        OpBuilder(g).create<tile::CopyOp>(g.getLoc(), v, lds);
        operand->set(lds);
      }
    });
  }
};

} // namespace
