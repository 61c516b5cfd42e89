// tilec-select-matrix-instr: choose the matrix instruction and wave grid of each tile.gemm.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <cmath>
#include <tuple>

namespace tilec {
#define GEN_PASS_DEF_TILECSELECTMATRIXINSTR
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

/// The type the matrix instruction multiplies: B's (A is the same, or an f32
/// accumulator rounded to it).
Type operandElementType(tile::GemmOp g) { return cast<tile::TileType>(g.getB().getType()).getElementType(); }

struct SelectMatrixInstr : tilec::impl::TilecSelectMatrixInstrBase<SelectMatrixInstr> {
  using TilecSelectMatrixInstrBase::TilecSelectMatrixInstrBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    const TargetInfo *target = targetOrError(f, arch);
    if (!target)
      return signalPassFailure();
    f->setAttr(tile::attr::kTarget, StringAttr::get(&getContext(), arch));
    if (failed(checkFp8Formats(f, *target)))
      return signalPassFailure();
    int waves = numWavesOf(f);
    WalkResult r = f.walk([&](tile::GemmOp g) {
      return succeeded(select(g, *target, waves)) ? WalkResult::advance() : WalkResult::interrupt();
    });
    if (r.wasInterrupted())
      return signalPassFailure();
    RegisterGroups groups(f);
    unifyRowGroups(f, *target, waves, groups);
    checkRegisterOperands(f, *target, waves, groups);
  }

  /// One error, at the first tensor argument or tile whose element type is
  /// an 8-bit float format of the family the target lacks
  /// (TargetInfo::fp8Formats): AMD's fnuz formats on NVIDIA, the OCP ones on AMD.
  LogicalResult checkFp8Formats(func::FuncOp f, const TargetInfo &target) {
    auto lacking = [&](Type t) {
      if (auto tile = dyn_cast<tile::TileType>(t))
        t = tile.getElementType();
      else if (auto shaped = dyn_cast<ShapedType>(t))
        t = shaped.getElementType();
      std::optional<ElemType> et = toElemType(t);
      return et && target.lacksFp8Format(*et) ? std::optional<Type>(t) : std::nullopt;
    };
    auto report = [&](InFlightDiagnostic d, Type t) -> LogicalResult {
      const bool ocp = target.fp8Formats == TargetInfo::Fp8Formats::Ocp;
      d << "element type " << t << " is not an 8-bit float format of " << target.arch << ": it holds "
        << (ocp ? "the OCP formats (dtype=e4m3, e5m2: f8E4M3FN, f8E5M2)"
                : "AMD's fnuz formats (dtype=fp8, bf8: f8E4M3FNUZ, f8E5M2FNUZ)");
      return d;
    };
    // An argument's diagnostic goes to its first use, which carries the
    // kernel source's location (the argument's own is the IR text's).
    for (BlockArgument arg : f.getArguments())
      if (std::optional<Type> t = lacking(arg.getType())) {
        Operation *firstUse = nullptr;
        f.walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (!llvm::is_contained(op->getOperands(), arg))
            return WalkResult::advance();
          firstUse = op;
          return WalkResult::interrupt();
        });
        const Location loc = firstUse ? firstUse->getLoc() : arg.getLoc();
        return report(mlir::emitError(loc) << "kernel argument " << arg.getArgNumber() << ": ", *t);
      }
    LogicalResult result = success();
    f.walk([&](tile::AllocOp a) {
      if (std::optional<Type> t = lacking(a.getType())) {
        result = report(a.emitOpError(), *t);
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return result;
  }

  /// Register tiles connected by elementwise maps, row reductions, copies and
  /// scatters (union-find): tiles of one group share a register layout.
  struct RegisterGroups {
    llvm::DenseMap<Value, Value> parent;
    llvm::DenseSet<Value> hasRowVector;

    explicit RegisterGroups(func::FuncOp f) {
      auto isReg = [](Value v) { return cast<tile::TileType>(v.getType()).isReg(); };
      auto link = [&](Value x, Value y) {
        if (!isReg(x) || !isReg(y))
          return;
        Value lx = leaderOf(x), ly = leaderOf(y);
        if (lx != ly)
          parent[lx] = ly;
        for (Value v : {x, y})
          if (cast<tile::TileType>(v.getType()).getRank() == 1)
            hasRowVector.insert(v);
      };
      f.walk([&](Operation *op) {
        if (auto m = dyn_cast<tile::MapOp>(op)) {
          for (Value in : m.getInputs())
            if (!(m.getBroadcastCols() && cast<tile::TileType>(in.getType()).getRank() == 1))
              link(m.getDest(), in);
        } else if (auto red = dyn_cast<tile::ReduceOp>(op)) {
          if (red.getAxis() == 1)
            link(red.getSource(), red.getDest());
        } else if (auto c = dyn_cast<tile::CopyOp>(op)) {
          link(c.getSource(), c.getDest());
        } else if (auto s = dyn_cast<tile::ScatterOp>(op)) {
          link(s.getValue(), s.getPositions());
        }
      });
    }
    Value leaderOf(Value v) {
      auto it = parent.find(v);
      if (it == parent.end() || it->second == v)
        return v;
      return it->second = leaderOf(it->second);
    }
    bool hasRows(Value leader) {
      return llvm::any_of(hasRowVector, [&](Value v) { return leaderOf(v) == leader; });
    }
  };

  static SmallVector<int64_t> gridOf(tile::GemmOp g) {
    tile::MatrixLayoutAttr l = g.getLayoutAttr();
    return l ? SmallVector<int64_t>(l.getWaveGrid()) : SmallVector<int64_t>{};
  }
  /// Records the choice on `g`: C in the accumulator layout of `instr` over a
  /// wm x wn grid of waves.
  static void setTiling(tile::GemmOp g, const MatrixInstr &instr, int wm, int wn) {
    g.setLayoutAttr(tile::MatrixLayoutAttr::get(g.getContext(), instr.name, {wm, wn},
                                                cast<tile::TileType>(g.getC().getType()).getShape()));
  }

  /// Accumulators whose rows meet (a row vector reduced from one and
  /// broadcast over another, as the row maxima of S = Q K^T rescale O in
  /// attention) must keep each row on the same lanes: one matrix instruction
  /// and one wave grid for the whole group. A group whose gemms all chose
  /// warpgroup instructions keeps them when they split rows alike (one grid,
  /// and wn = 1 with row vectors: the rows of a wgmma accumulator lie on the
  /// same lanes whatever its N). Otherwise the group takes the first
  /// warp-level instruction (in the target's order) and grid that tile every
  /// member, preferring grids of one wave per row band (wn = 1) when the group
  /// has row vectors, so that row reductions stay within a wave, then the grid
  /// whose per-wave tiles are most square over all members.
  void unifyRowGroups(func::FuncOp f, const TargetInfo &target, int waves, RegisterGroups &rg) {
    llvm::MapVector<Value, llvm::SmallVector<tile::GemmOp>> groups;
    f.walk([&](tile::GemmOp g) { groups[rg.leaderOf(g.getC())].push_back(g); });
    for (auto &[leader, gemms] : groups) {
      bool rows = rg.hasRows(leader);
      if (gemms.size() < 2 && !rows)
        continue;
      const SmallVector<int64_t> grid0 = gridOf(gemms[0]);
      if (llvm::all_of(gemms, [&](tile::GemmOp g) {
            const MatrixInstr *mi = matrixInstrOf(g, target);
            return mi && mi->waves > 1 && gridOf(g) == grid0 && (!rows || grid0[1] == 1);
          }))
        continue;
      std::optional<ElemType> et = toElemType(operandElementType(gemms[0]));
      if (!et)
        continue;
      struct Candidate {
        const MatrixInstr *instr;
        int wm, wn;
        std::tuple<bool, size_t, double> key;
      };
      std::optional<Candidate> best;
      std::vector<const MatrixInstr *> instrs = target.instrsFor(*et);
      for (size_t i = 0; i < instrs.size(); ++i)
        for (int wm = 1; wm <= waves; ++wm) {
          if (waves % wm)
            continue;
          int wn = waves / wm;
          double skew = 0;
          bool fits = true;
          for (tile::GemmOp g : gemms) {
            auto a = cast<tile::TileType>(g.getA().getType());
            auto c = cast<tile::TileType>(g.getC().getType());
            if (toElemType(operandElementType(g)) != et || a.cols() % instrs[i]->k ||
                c.rows() % (int64_t(wm) * instrs[i]->m) || c.cols() % (int64_t(wn) * instrs[i]->n)) {
              fits = false;
              break;
            }
            skew += std::abs(std::log2(double(c.rows()) / wm) - std::log2(double(c.cols()) / wn));
          }
          Candidate cand{instrs[i], wm, wn, {rows && wn > 1, i, skew}};
          if (fits && (!best || cand.key < best->key))
            best = cand;
        }
      if (!best)
        continue; // each keeps its own choice; tilec-infer-layouts names the conflict
      for (tile::GemmOp g : gemms)
        setTiling(g, *best->instr, best->wm, best->wn);
    }
  }

  /// A warpgroup gemm reads an A in registers in wgmma's register form only
  /// when A holds the accumulator of a warpgroup gemm whose layout is that
  /// form (accumulatorHoldsOperandA) over the same grid of whole-row
  /// warpgroups; any other such gemm takes a warp-level instruction, and
  /// tilec-infer-layouts converts its A through LDS.
  void checkRegisterOperands(func::FuncOp f, const TargetInfo &target, int waves, RegisterGroups &rg) {
    SmallVector<tile::GemmOp> gemms;
    f.walk([&](tile::GemmOp g) { gemms.push_back(g); });
    for (tile::GemmOp use : gemms) {
      const MatrixInstr *useMi = matrixInstrOf(use, target);
      if (!useMi || useMi->waves == 1 || !cast<tile::TileType>(use.getA().getType()).isReg())
        continue;
      const Value group = rg.leaderOf(use.getA());
      const bool inPlace = llvm::any_of(gemms, [&](tile::GemmOp acc) {
        const MatrixInstr *accMi = matrixInstrOf(acc, target);
        return rg.leaderOf(acc.getC()) == group && accMi && accumulatorHoldsOperandA(*accMi, *useMi) &&
               gridOf(acc) == gridOf(use) && gridOf(use)[1] == 1;
      });
      if (inPlace)
        continue;
      auto a = cast<tile::TileType>(use.getA().getType());
      auto c = cast<tile::TileType>(use.getC().getType());
      std::optional<MatrixTiling> tiling =
          selectMatrixTiling(target, *toElemType(operandElementType(use)), c.rows(), c.cols(), a.cols(), waves);
      if (!tiling)
        continue;  // tilec-infer-layouts names the conflict
      setTiling(use, *tiling->instr, tiling->wm, tiling->wn);
    }
  }

  /// A warpgroup instruction (wgmma) and a grid of warpgroups (wm x wn = waves
  /// / 4) for `g`, when the target has one for its type and the tile allows
  /// it: each warpgroup takes 64 rows (times TM) and N columns (the largest N
  /// that divides its share), and the K-major operands in LDS (A, and B given
  /// as N x K) have k tiles whose rows fill one swizzle row of 32, 64 or 128
  /// bytes or whole column blocks of 128 bytes, the canonical layouts
  /// tilec-allocate-lds gives them (B given as K x N is stored in column
  /// blocks of 128 bytes and needs N a multiple of 64). An A in registers (an
  /// accumulator: attention's P) is read in wgmma's register form;
  /// checkRegisterOperands keeps that choice only where A's accumulator
  /// layout is that form's. 8-bit operands (kMajorOperandsOnly) need both
  /// K-major in LDS: A there and B given as N x K. Grids split M first.
  std::optional<MatrixTiling> selectWarpgroupTiling(tile::GemmOp g, const TargetInfo &target, int waves) {
    auto a = cast<tile::TileType>(g.getA().getType());
    auto c = cast<tile::TileType>(g.getC().getType());
    std::optional<ElemType> et = toElemType(operandElementType(g));
    if (!et)
      return std::nullopt;
    std::vector<const MatrixInstr *> instrs = target.warpgroupInstrsFor(*et);
    if (instrs.empty() || waves % instrs.front()->waves)
      return std::nullopt;
    if (instrs.front()->kMajorOperandsOnly && (a.isReg() || !g.getTransposeB()))
      return std::nullopt;
    const int64_t kRowBytes = a.cols() * elemTypeBytes(*et);
    const bool kMajorRows = kRowBytes == 32 || kRowBytes == 64 || kRowBytes % 128 == 0;
    if (!kMajorRows && (!a.isReg() || g.getTransposeB()))
      return std::nullopt;
    const int groups = waves / instrs.front()->waves;
    for (int wm = groups; wm >= 1; --wm) {
      if (groups % wm)
        continue;
      const int wn = groups / wm;
      if (c.rows() % (int64_t(wm) * 64) || c.cols() % wn || (a.isReg() && wn != 1))
        continue;
      for (const MatrixInstr *mi : instrs)  // larger N first
        if ((c.cols() / wn) % mi->n == 0 && a.cols() % mi->k == 0)
          return MatrixTiling{mi, wm, wn};
    }
    return std::nullopt;
  }

  LogicalResult select(tile::GemmOp g, const TargetInfo &target, int waves) {
    auto a = cast<tile::TileType>(g.getA().getType());
    auto c = cast<tile::TileType>(g.getC().getType());
    std::optional<ElemType> et = toElemType(operandElementType(g));
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
    std::optional<tile::MatrixScope> scope = g.getMatrixScope();
    if (scope != tile::MatrixScope::warp) {
      if (std::optional<MatrixTiling> tiling = selectWarpgroupTiling(g, target, waves)) {
        setTiling(g, *tiling->instr, tiling->wm, tiling->wn);
        return success();
      }
      if (scope == tile::MatrixScope::warpgroup)
        return g.emitOpError() << "cannot use a warpgroup matrix instruction (wgmma) on " << target.arch
                               << " for C " << m << "x" << n << " with K=" << k << " over " << waves
                               << " waves: it needs whole warpgroups of 4 waves each taking 64 rows x 64, 128 or "
                                  "256 columns of C, 16-bit A and B (8-bit ones with B given as N x K), and K's "
                                  "tile (and B's N tile when B is K x N) of 32, 64 or a multiple of 128 bytes";
    }
    if (std::optional<MatrixTiling> tiling = selectMatrixTiling(target, *et, m, n, k, waves)) {
      setTiling(g, *tiling->instr, tiling->wm, tiling->wn);
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
