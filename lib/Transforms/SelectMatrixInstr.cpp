// tilec-select-matrix-instr: choose the matrix instruction and wave grid of each tile.gemm.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include <cmath>

namespace tilec {
#define GEN_PASS_DEF_TILECSELECTMATRIXINSTR
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

/// Factorisations wm x wn of the wave count, most square per-wave tile first.
std::vector<std::pair<int, int>> waveGrids(int waves, int64_t m, int64_t n) {
  std::vector<std::pair<int, int>> grids;
  for (int wm = 1; wm <= waves; ++wm)
    if (waves % wm == 0)
      grids.push_back({wm, waves / wm});
  auto skew = [&](std::pair<int, int> g) {
    return std::abs(std::log2(double(m) / g.first) - std::log2(double(n) / g.second));
  };
  std::stable_sort(grids.begin(), grids.end(),
                   [&](auto x, auto y) { return skew(x) < skew(y); });
  return grids;
}

struct SelectMatrixInstr : tilec::impl::TilecSelectMatrixInstrBase<SelectMatrixInstr> {
  using TilecSelectMatrixInstrBase::TilecSelectMatrixInstrBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    const TargetInfo *target = lookupTarget(arch);
    if (!target) {
      f.emitError() << "unknown target '" << arch << "' (known: " << knownTargetsList() << ")";
      return signalPassFailure();
    }
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
    if (!a.isLds() || !b.isLds())
      return g.emitOpError() << "operands A and B must be LDS tiles on " << target.arch
                             << " (register operands are not supported yet)";
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
    for (const MatrixInstr *mi : instrs) {
      if (k % mi->k)
        continue;
      for (auto [wm, wn] : waveGrids(waves, m, n)) {
        if (m % (wm * mi->m) || n % (wn * mi->n))
          continue;
        Builder bld(g.getContext());
        g->setAttr(pattr::kInstr, bld.getStringAttr(mi->name));
        g->setAttr(pattr::kWaveGrid, bld.getDenseI64ArrayAttr({wm, wn}));
        return success();
      }
    }
    return g.emitOpError() << "cannot tile C " << m << "x" << n << " with K=" << k << " over "
                           << waves << " waves with any " << target.arch << " matrix instruction for "
                           << a.getElementType() << " (smallest is " << instrs.back()->m << "x"
                           << instrs.back()->n << "x" << instrs.back()->k
                           << "; M, N must be multiples of it times the wave grid, K of its k)";
  }
};

} // namespace
