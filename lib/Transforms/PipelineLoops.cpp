// tilec-pipeline-loops: multi-buffered LDS and register prefetch for k loops.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tilec {
#define GEN_PASS_DEF_TILECPIPELINELOOPS
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

constexpr const char *kPipelined = "tile.pipelined";

/// Whether `load` can be an asynchronous copy: it moves aligned runs of at
/// least 4 bytes (cp.async's least), as tilec-allocate-lds will size them
/// (loadRunOf). Otherwise (e.g. a GEMM with an odd K: realigned runs) the
/// loop prefetches through registers.
bool asyncCopyable(tile::LoadOp load) {
  if (load.getTranspose())
    return false;  // copies move runs as they are; transposing needs registers
  auto t = cast<tile::TileType>(load.getDest().getType());
  const int64_t eb = std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
  return loadRunOf(load, eb) * eb >= 4;
}

/// The same for a gather (gatherRunOf).
bool asyncCopyable(tile::GatherOp gather) {
  auto t = cast<tile::TileType>(gather.getDest().getType());
  const int64_t eb = std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
  return gatherRunOf(gather, eb) * eb >= 4;
}

int64_t tileBytes(tile::TileType t) {
  int64_t eb = std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
  return (t.getNumElements() * eb + 15) / 16 * 16;
}

/// Whether `op` reads an element from a tensor the kernel never writes (a
/// block table, sequence offsets, block scales): reading it for another
/// iteration, earlier than the loop would, gives the same value. A position
/// past the tensor reads 0, so a prefetch past the loop's end reads a
/// harmless index.
bool readsConstantElement(Operation *op) {
  Value source;
  if (auto li = dyn_cast<tile::LoadIndexOp>(op))
    source = li.getSource();
  else if (auto ls = dyn_cast<tile::LoadScalarOp>(op))
    source = ls.getSource();
  else
    return false;
  Value tensor = rootTensorOf(source);
  bool written = false;
  op->getParentOfType<func::FuncOp>().walk([&](Operation *w) {
    if (auto st = dyn_cast<tile::StoreOp>(w))
      written |= rootTensorOf(st.getDest()) == tensor;
    else if (auto sc = dyn_cast<tile::ScatterOp>(w))
      written |= rootTensorOf(sc.getDest()) == tensor;
  });
  return !written;
}

/// `v` (computed in `loop`'s body from its induction variable) recomputed at
/// the builder's point with the induction variable replaced by `iv`. Fails
/// when the computation is not pure (reads of indices from tensors the
/// kernel never writes aside) or not local to the body.
FailureOr<Value> recompute(OpBuilder &b, scf::ForOp loop, Value v, Value iv, IRMapping &map) {
  if (v == loop.getInductionVar())
    return iv;
  if (Value m = map.lookupOrNull(v))
    return m;
  Operation *def = v.getDefiningOp();
  if (!def || !loop.getBody()->findAncestorOpInBlock(*def))
    return v;  // defined outside the loop
  if (def->getNumRegions() || !(isPure(def) || readsConstantElement(def)))
    return failure();
  for (Value operand : def->getOperands()) {
    FailureOr<Value> o = recompute(b, loop, operand, iv, map);
    if (failed(o))
      return failure();
    map.map(operand, *o);
  }
  Operation *clone = b.clone(*def, map);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

/// `values` (an op's indices, or the window it reads) recomputed at the
/// builder's point for iteration `iv`; an error on `op` when they are not pure
/// functions of the loop index.
FailureOr<SmallVector<Value>> valuesAt(OpBuilder &b, scf::ForOp loop, Operation *op, ValueRange values, Value iv) {
  IRMapping map;
  SmallVector<Value> idx;
  for (Value v : values) {
    FailureOr<Value> r = recompute(b, loop, v, iv, map);
    if (failed(r))
      return op->emitOpError() << "cannot be pipelined: its indices are not pure functions of the loop index "
                                  "(and of indices read from tensors the kernel does not write)";
    idx.push_back(*r);
  }
  return idx;
}

/// Erases what computed `v` in `loop`'s body once nothing uses it (the
/// window a pipelined load read, and the block-table read behind it).
void eraseDeadSlice(scf::ForOp loop, Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !def->use_empty() || !loop.getBody()->findAncestorOpInBlock(*def) ||
      !(isPure(def) || readsConstantElement(def)))
    return;
  SmallVector<Value> operands(def->getOperands());
  def->erase();
  for (Value o : operands)
    eraseDeadSlice(loop, o);
}

/// A copy of `load` for iteration `iv` into `dest` (transposed when asked):
/// its window (a window cut inside the loop, e.g. through a block table) and
/// indices as of that iteration.
FailureOr<tile::LoadOp> loadAt(OpBuilder &b, scf::ForOp loop, tile::LoadOp load, Value iv, Value dest,
                               bool transpose) {
  SmallVector<Value> values{load.getSource()};
  llvm::append_range(values, load.getIndices());
  FailureOr<SmallVector<Value>> v = valuesAt(b, loop, load, values, iv);
  if (failed(v))
    return failure();
  return b.create<tile::LoadOp>(load.getLoc(), v->front(), ArrayRef<Value>(*v).drop_front(), dest, transpose);
}

/// A copy of `gather` for iteration `iv` into `dest`, asynchronous.
LogicalResult gatherAt(OpBuilder &b, scf::ForOp loop, tile::GatherOp gather, Value iv, Value dest) {
  FailureOr<SmallVector<Value>> v = valuesAt(b, loop, gather, {gather.getIdsOffset(), gather.getCol()}, iv);
  if (failed(v))
    return failure();
  b.create<tile::GatherOp>(gather.getLoc(), gather.getSource(), gather.getIds(), (*v)[0], (*v)[1], dest)
      ->setAttr(tile::attr::kAsync, UnitAttr::get(b.getContext()));
  return success();
}

/// Redirects every use of `alloc` inside `loop` (but `load`, the op that
/// fills it, and the view itself) to the view of this iteration's buffer, created after `after`.
void readCurrentBuffer(OpBuilder &top, scf::ForOp loop, tile::AllocOp alloc, Operation *load, Value after,
                       Value cur) {
  top.setInsertionPointAfterValue(after);
  Value curView = top.create<tile::ViewOp>(loop.getLoc(), alloc.getType(), alloc, cur, top.getI64IntegerAttr(0));
  alloc.getResult().replaceUsesWithIf(curView, [&](OpOperand &use) {
    return use.getOwner() != load && use.getOwner() != curView.getDefiningOp() && loop->isAncestor(use.getOwner());
  });
}

struct PipelineLoops : tilec::impl::TilecPipelineLoopsBase<PipelineLoops> {
  using TilecPipelineLoopsBase::TilecPipelineLoopsBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    const TargetInfo *target = targetOrError(f, arch);
    if (!target || failed(verifyTileDefinitions(f)) || failed(verifyDivisibility(f)))
      return signalPassFailure();
    SmallVector<scf::ForOp> loops;
    f.walk([&](scf::ForOp loop) {
      auto st = loop->getAttrOfType<IntegerAttr>(tile::attr::kNumStages);
      if (st && st.getInt() >= 2 && !loop->hasAttr(kPipelined))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (failed(pipeline(f, loop, *target)))
        return signalPassFailure();
  }

  /// The loads (or gathers) of `loop` that can be pipelined: global -> LDS
  /// tile, the tile allocated outside the loop and used only inside it, its
  /// indices pure functions of the induction variable and values defined
  /// outside.
  template <class Op> SmallVector<Op> candidates(scf::ForOp loop) {
    SmallVector<Op> out;
    for (Operation &op : *loop.getBody()) {
      auto load = dyn_cast<Op>(op);
      if (!load)
        continue;
      auto alloc = allocOf(load.getDest());
      if (!alloc || !alloc.getType().isLds() || alloc->hasAttr(tile::attr::kBuffers) ||
          loop->isAncestor(alloc))
        continue;
      bool local = llvm::all_of(alloc->getUsers(), [&](Operation *u) { return loop->isAncestor(u); });
      int writers = llvm::count_if(alloc->getUsers(), [](Operation *u) {
        return isa<tile::LoadOp, tile::GatherOp, tile::FillOp, tile::CopyOp>(u);
      });
      if (local && writers == 1)
        out.push_back(load);
    }
    return out;
  }

  /// The loop's gemms when they all run on a warpgroup instruction (wgmma:
  /// asynchronous to the issuing warps, operands in LDS), none reads another's
  /// accumulator (MoE's gate and up products share A only), and nothing else
  /// in the body reads an accumulator or writes LDS but the pipelined loads:
  /// their instructions may then keep running past the ops after them.
  SmallVector<tile::GemmOp> asynchronousGemms(scf::ForOp loop, const TargetInfo &target) {
    SmallVector<tile::GemmOp> gemms;
    for (Operation &op : *loop.getBody()) {
      if (auto g = dyn_cast<tile::GemmOp>(op)) {
        const MatrixInstr *mi = matrixInstrOf(g, target);
        if (!mi || !mi->operandsInSharedMemory())
          return {};
        gemms.push_back(g);
      } else if (op.getNumRegions() || isa<tile::MapOp, tile::ReduceOp, tile::StoreOp, tile::CopyOp, tile::FillOp>(op)) {
        return {};
      }
    }
    for (tile::GemmOp g : gemms)
      for (tile::GemmOp other : gemms)
        if (g != other && (g.getA() == other.getC() || g.getB() == other.getC() || g.getC() == other.getC()))
          return {};  // a gemm would read (or add to) what another still computes
    return gemms;
  }

  LogicalResult pipeline(func::FuncOp f, scf::ForOp loop, const TargetInfo &target) {
    int64_t requested = loop->getAttrOfType<IntegerAttr>(tile::attr::kNumStages).getInt();
    SmallVector<tile::LoadOp> loads = candidates<tile::LoadOp>(loop);
    // Targets with asynchronous copies move tiles into LDS without registers:
    // pipelining costs them no VGPRs. Gathers are pipelined only so (there is
    // no register-prefetch form of a gather).
    SmallVector<tile::GatherOp> gathers = candidates<tile::GatherOp>(loop);
    const bool async = target.asyncCopyBytes > 0 &&
                       llvm::all_of(loads, [](tile::LoadOp l) { return asyncCopyable(l); }) &&
                       llvm::all_of(gathers, [](tile::GatherOp g) { return asyncCopyable(g); });
    if (!async)
      gathers.clear();
    if (loads.empty() && gathers.empty()) {
      loop.emitRemark() << "num_stages = " << requested
                        << " has no effect: the loop loads no LDS tile that can be pipelined";
      return success();
    }
    // LDS: every tile once, the pipelined ones S times (before padding, which
    // tilec-allocate-lds avoids with swizzles where it can).
    int64_t fixed = 0, perStage = 0;
    llvm::SmallPtrSet<Operation *, 4> pipelined;
    for (tile::LoadOp l : loads)
      pipelined.insert(allocOf(l.getDest()));
    for (tile::GatherOp g : gathers)
      pipelined.insert(allocOf(g.getDest()));
    f.walk([&](tile::AllocOp a) {
      if (a.getType().isLds())
        (pipelined.count(a) ? perStage : fixed) += tileBytes(a.getType());
    });
    // Where the loop prefetches through registers (AMD), a gemm operand in
    // registers (attention's P) will go through an LDS tile of its own
    // (tilec-infer-layouts, after this pass): its bytes count as well, once
    // per tile however many gemms read it.
    if (!async) {
      llvm::DenseSet<std::pair<Operation *, mlir::Type>> counted;
      auto noneInPlace = [](tile::GemmOp, Value) { return false; };
      for (RegisterOperandConversion &c : registerOperandConversions(f, noneInPlace))
        if (counted.insert({c.source.getOperation(), c.lds}).second)
          fixed += tileBytes(c.lds);
    }
    int64_t stages = requested;
    while (stages > 1 && fixed + stages * perStage > target.ldsBytesPerWorkgroup)
      --stages;
    // Registers: prefetching holds one tile per pipelined load in VGPRs next
    // to the accumulators (which CDNA keeps in AGPRs); a realigned run waits
    // there as its two aligned pieces and its place in them (4 bytes).
    const int64_t threads = int64_t(numWavesOf(f)) * target.waveSize;
    int64_t prefetchBytes = perStage;
    for (tile::LoadOp l : loads) {
      auto t = cast<tile::TileType>(l.getDest().getType());
      const int64_t eb = std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
      if (const int64_t run = realignedRunOf(l, eb))
        prefetchBytes += tileBytes(t) + t.getNumElements() / run * 4;
    }
    int64_t accVgprs = 0, prefetchVgprs = (prefetchBytes / 4 + threads - 1) / threads;
    f.walk([&](tile::AllocOp a) {
      if (a.getType().isReg() && a.getType().getRank() == 2)
        accVgprs += (a.getType().getNumElements() + threads - 1) / threads;
    });
    int64_t vgprs = prefetchVgprs + (target.hasAgprs ? 0 : accVgprs) + target.reservedVgprs;
    // Without asynchronous copies, a loop whose LDS holds one buffer per tile
    // still prefetches through registers: iteration j commits its tiles from
    // registers into the one buffer (after the barrier that ends iteration
    // j-1's reads of it) and issues the loads of iteration j+1, whose latency
    // the computation of j then hides.
    if (!async && vgprs > target.maxVgprPerWave) {
      loop.emitRemark() << "num_stages lowered from " << requested << " to 1: prefetching the next tiles "
                        << "needs " << prefetchVgprs << " VGPRs per lane next to "
                        << (target.hasAgprs ? 0 : accVgprs) << " for accumulators, over the "
                        << target.maxVgprPerWave << " of a wave on " << target.arch;
      stages = 0;
    } else if (stages < requested && !(requested == 2 && stages == 1 && !async)) {
      // (2 stages in one buffer and registers still load the next tiles
      // during a step, which is what 2 asks for: no remark then.)
      loop.emitRemark() << "num_stages lowered from " << requested << " to " << stages << ": "
                        << requested << " stages need " << fixed + requested * perStage
                        << " bytes of LDS, " << target.ldsBytesPerWorkgroup << " available on "
                        << target.arch
                        << (stages == 1 && !async ? "; one LDS buffer per tile, the next tiles prefetched into registers"
                                                  : "");
    }
    loop->setAttr(tile::attr::kNumStages, Builder(&getContext()).getI64IntegerAttr(std::max<int64_t>(stages, 1)));
    if (stages < 1 || (async && stages < 2))
      return success();
    // A warpgroup gemm is left running while the loop issues its next memory
    // work (tilec-schedule-waves moves it after the gemm). With asynchronous
    // copies and 4 or more stages one group stays in flight into the next
    // iteration as well, so the copies fill the buffer read two iterations
    // back: S - 2 iterations ahead instead of S - 1 (at least 2, as deep as
    // the 3-stage pipeline without it).
    // Each gemm closes one group of instructions per iteration: with G gemms,
    // one iteration in flight is G groups.
    int64_t inFlight = 0;
    if (SmallVector<tile::GemmOp> gemms = asynchronousGemms(loop, target); !gemms.empty()) {
      inFlight = async && stages >= 4 ? 1 : 0;
      const int64_t groups = inFlight * static_cast<int64_t>(gemms.size());
      for (tile::GemmOp g : gemms)
        g->setAttr(pattr::kMatrixGroupsInFlight, IntegerAttr::get(IntegerType::get(&getContext(), 64), groups));
    }

    OpBuilder b(loop);
    Location loc = loop.getLoc();
    auto cst = [&](OpBuilder &bb, int64_t v) { return bb.create<arith::ConstantIndexOp>(loc, v); };
    Value lb = loop.getLowerBound(), step = loop.getStep();
    auto ivAt = [&](OpBuilder &bb, int64_t s) -> Value {  // lb + s * step
      return s == 0 ? lb : bb.create<arith::AddIOp>(loc, lb, bb.create<arith::MulIOp>(loc, cst(bb, s), step));
    };

    // Loop-top values: j = (iv - lb) / step, the buffer computed on and the
    // buffer committed to.
    OpBuilder top = OpBuilder::atBlockBegin(loop.getBody());
    Value j = top.create<arith::DivUIOp>(loc, top.create<arith::SubIOp>(loc, loop.getInductionVar(), lb), step);
    Value cur = top.create<arith::RemUIOp>(loc, j, cst(top, stages));
    const int64_t distance = stages - 1 - inFlight;  // iterations between a copy and its use
    Value next = top.create<arith::RemUIOp>(loc, top.create<arith::AddIOp>(loc, j, cst(top, distance)),
                                            cst(top, stages));
    Value ahead = top.create<arith::AddIOp>(loc, loop.getInductionVar(),
                                            top.create<arith::MulIOp>(loc, cst(top, stages), step));
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };

    if (async)
      return pipelineAsync(loop, loads, gathers, stages, distance, cur, next, lb, step);
    for (tile::LoadOp load : loads) {
      tile::AllocOp alloc = allocOf(load.getDest());
      tile::TileType t = alloc.getType();
      if (stages > 1)
        alloc->setAttr(tile::attr::kBuffers, i64(stages));
      OpBuilder ab(alloc->getBlock(), std::next(alloc->getIterator()));
      // The staging tile holds the window as loaded: a transposing load's is
      // the tile's transpose, which the commit writes back transposed.
      const bool transpose = load.getTranspose();
      SmallVector<int64_t> shape(t.getShape());
      if (transpose)
        std::swap(shape[0], shape[1]);
      auto staging = ab.create<tile::AllocOp>(
          alloc.getLoc(), tile::TileType::get(&getContext(), shape, t.getElementType(), tile::MemorySpace::reg),
          ab.getStringAttr(alloc.displayName() + ".prefetch"), /*layout=*/Attribute(), /*lds=*/nullptr, /*access=*/nullptr);

      // Prologue: iterations 0 .. S-2 into buffers 0 .. S-2, iteration S-1 into registers.
      for (int64_t s = 0; s < stages; ++s) {
        Value dst = staging;
        if (s < stages - 1)
          dst = b.create<tile::ViewOp>(loc, t, alloc, cst(b, s), nullptr);
        if (failed(loadAt(b, loop, load, ivAt(b, s), dst, transpose && s < stages - 1)))
          return failure();
      }

      // Every other use in the loop reads the buffer of this iteration. (The
      // insertion point is re-anchored: the previous load it pointed at may
      // have been erased.)
      if (stages > 1)
        readCurrentBuffer(top, loop, alloc, load, ahead, cur);

      // In place of the load: commit iteration j+S-1, prefetch iteration j+S
      // (one buffer: commit iteration j into it, prefetch iteration j+1).
      OpBuilder lb2(load);
      Value nextView = stages > 1 ? lb2.create<tile::ViewOp>(loc, t, alloc, next, i64(stages - 1)).getResult()
                                  : alloc.getResult();
      lb2.create<tile::CopyOp>(load.getLoc(), staging, nextView, transpose);
      if (failed(loadAt(lb2, loop, load, ahead, staging, false)))
        return failure();
      Value source = load.getSource();
      load.erase();
      eraseDeadSlice(loop, source);
    }
    loop->setAttr(kPipelined, UnitAttr::get(&getContext()));
    return success();
  }

  /// The asynchronous form (targets with asyncCopyBytes): S buffers, no
  /// registers, copies D = `distance` iterations ahead (S-1; S-2 with a gemm
  /// group in flight). Before the loop, iterations 0 .. D-1 are copied into
  /// buffers 0 .. D-1; iteration j waits until its own copies have landed (at
  /// most D-1 groups per load still in flight), and after the loop's first
  /// barrier (every wave is done with iteration j+D-S's buffer) copies
  /// iteration j+D into that buffer, `next`, then computes on `cur`.
  LogicalResult pipelineAsync(scf::ForOp loop, ArrayRef<tile::LoadOp> loads, ArrayRef<tile::GatherOp> gathers,
                              int64_t stages, int64_t distance, Value cur, Value next, Value lb, Value step) {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    auto cst = [&](OpBuilder &bb, int64_t v) { return bb.create<arith::ConstantIndexOp>(loc, v); };
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    auto ivAt = [&](OpBuilder &bb, Value base, int64_t s) -> Value {  // base + s * step
      return s == 0 ? base : bb.create<arith::AddIOp>(loc, base, bb.create<arith::MulIOp>(loc, cst(bb, s), step));
    };
    const UnitAttr asyncAttr = UnitAttr::get(&getContext());
    OpBuilder top = OpBuilder::atBlockBegin(loop.getBody());
    top.setInsertionPointAfterValue(next);
    Value ahead = ivAt(top, loop.getInductionVar(), distance);
    // Prologue, stage by stage (async_wait counts groups in issue order, so a
    // stage's copies must all precede the next stage's).
    for (int64_t s = 0; s < distance; ++s) {
      for (tile::LoadOp load : loads) {
        tile::AllocOp alloc = allocOf(load.getDest());
        alloc->setAttr(tile::attr::kBuffers, i64(stages));
        Value dst = b.create<tile::ViewOp>(loc, alloc.getType(), alloc, cst(b, s), nullptr);
        FailureOr<tile::LoadOp> copy = loadAt(b, loop, load, ivAt(b, lb, s), dst, false);
        if (failed(copy))
          return failure();
        (*copy)->setAttr(tile::attr::kAsync, asyncAttr);
      }
      for (tile::GatherOp gather : gathers) {
        tile::AllocOp alloc = allocOf(gather.getDest());
        alloc->setAttr(tile::attr::kBuffers, i64(stages));
        Value dst = b.create<tile::ViewOp>(loc, alloc.getType(), alloc, cst(b, s), nullptr);
        if (failed(gatherAt(b, loop, gather, ivAt(b, lb, s), dst)))
          return failure();
      }
    }
    for (tile::LoadOp load : loads) {
      tile::AllocOp alloc = allocOf(load.getDest());
      tile::TileType t = alloc.getType();
      readCurrentBuffer(top, loop, alloc, load, ahead, cur);
      OpBuilder lb2(load);
      Value nextView = lb2.create<tile::ViewOp>(loc, t, alloc, next, i64(distance));
      FailureOr<tile::LoadOp> copy = loadAt(lb2, loop, load, ahead, nextView, false);
      if (failed(copy))
        return failure();
      (*copy)->setAttr(tile::attr::kAsync, asyncAttr);
      Value source = load.getSource();
      load.erase();
      eraseDeadSlice(loop, source);
    }
    for (tile::GatherOp gather : gathers) {
      tile::AllocOp alloc = allocOf(gather.getDest());
      readCurrentBuffer(top, loop, alloc, gather, ahead, cur);
      OpBuilder gb(gather);
      Value nextView = gb.create<tile::ViewOp>(loc, alloc.getType(), alloc, next, i64(distance));
      if (failed(gatherAt(gb, loop, gather, ahead, nextView)))
        return failure();
      gather.erase();
    }
    const int64_t groups = static_cast<int64_t>(loads.size() + gathers.size());  // copy groups per iteration
    loop->setAttr(tile::attr::kAsyncPending, i64((distance - 1) * groups));
    loop->setAttr(kPipelined, UnitAttr::get(&getContext()));
    return success();
  }
};

} // namespace
