// tilec-select-matrix-instr: choose the matrix instruction and wave grid of each tile.gemm.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace tilec {
#define GEN_PASS_DEF_TILECSELECTMATRIXINSTR
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

struct SelectMatrixInstr : tilec::impl::TilecSelectMatrixInstrBase<SelectMatrixInstr> {
  using TilecSelectMatrixInstrBase::TilecSelectMatrixInstrBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    const TargetInfo *target = targetOrError(f, arch);
    if (!target)
      return signalPassFailure();
    f->setAttr(tile::attr::kTarget, StringAttr::get(&getContext(), arch));
    int waves = numWavesOf(f);
    WalkResult r = f.walk([&](tile::GemmOp g) {
      return succeeded(select(g, *target, waves)) ? WalkResult::advance() : WalkResult::interrupt();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult select(tile::GemmOp g, const TargetInfo &target, int waves) {
    auto a = cast<tile::TileType>(g.getA().getType());
    auto b = cast<tile::TileType>(g.getB().getType());
    auto c = cast<tile::TileType>(g.getC().getType());
    std::optional<ElemType> et = toElemType(a.getElementType());
    std::vector<const MatrixInstr *> instrs;
    if (et)
      instrs = target.instrsFor(*et);
    if (instrs.empty()) {
      std::vector<std::string_view> types;
      for (const MatrixInstr &mi : target.matrixInstrs)
        if (llvm::find(types, elemTypeName(mi.aType)) == types.end())
          types.push_back(elemTypeName(mi.aType));
      std::string avail;
      for (std::string_view t : types)
        avail += (avail.empty() ? "" : ", ") + std::string(t);
      // Name the targets that can multiply it, if any (fp8: gfx942 only).
      std::string elsewhere;
      for (const TargetInfo &t : knownTargets())
        if (et && !t.instrsFor(*et).empty())
          elsewhere += (elsewhere.empty() ? "" : ", ") + t.arch;
      InFlightDiagnostic d = g.emitOpError()
                             << "element type " << a.getElementType() << " cannot be multiplied on "
                             << target.arch << ": no matrix instruction for it (supported: " << avail << ")";
      if (!elsewhere.empty())
        d << "; targets with one: " << elsewhere;
      return d;
    }
    int64_t m = c.rows(), n = c.cols(), k = a.cols();
    if (std::optional<MatrixTiling> tiling = selectMatrixTiling(target, *et, m, n, k, waves)) {
      Builder bld(g.getContext());
      g->setAttr(pattr::kInstr, bld.getStringAttr(tiling->instr->name));
      g->setAttr(pattr::kWaveGrid, bld.getDenseI64ArrayAttr({tiling->wm, tiling->wn}));
      return success();
    }
    return g.emitOpError() << "cannot tile C " << m << "x" << n << " with K=" << k << " over "
                           << waves << " waves with any " << target.arch << " matrix instruction for "
                           << a.getElementType() << " (smallest is " << instrs.back()->m << "x"
                           << instrs.back()->n << "x" << instrs.back()->k
                           << "; M, N must be multiples of it times the wave grid, K of its k)";
  }
};

} // namespace
