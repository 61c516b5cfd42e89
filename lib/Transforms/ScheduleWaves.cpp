// tilec-schedule-waves: applies a loop's `tile.schedule` (interleave, setprio,
// ping_pong) and checks that every wave reaches the same barriers in the same
// order.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace tilec {
#define GEN_PASS_DEF_TILECSCHEDULEWAVES
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

constexpr const char *kPipelined = "tile.pipelined";

struct Schedule {
  bool interleave = false, setprio = false, pingPong = false;
};

std::optional<Schedule> scheduleOf(scf::ForOp loop) {
  auto d = loop->getAttrOfType<DictionaryAttr>(tile::attr::kSchedule);
  if (!d)
    return std::nullopt;
  auto flag = [&](StringRef k) {
    auto b = d.getAs<BoolAttr>(k);
    return b && b.getValue();
  };
  return Schedule{flag("interleave"), flag("setprio"), flag("ping_pong")};
}


/// Global loads per lane a tile.load issues (one run of the #tile.access `load`
/// elements per thread per step; a realigned run is two loads).
int64_t loadsPerLane(tile::LoadOp l, int64_t threads) {
  auto t = cast<tile::TileType>(l.getDest().getType());
  const AccessWidths w = accessOf(l.getDest());
  const int64_t runs = t.getNumElements() / w.load;
  return (runs + threads - 1) / threads * (w.realign ? 2 : 1);
}

bool touchesLds(Operation *op) {
  if (!isa<tile::LoadOp, tile::GatherOp, tile::StoreOp, tile::CopyOp, tile::FillOp, tile::GemmOp, tile::ReduceOp>(op))
    return false;
  return llvm::any_of(op->getOperands(), [](Value v) {
    auto t = dyn_cast<tile::TileType>(v.getType());
    return t && t.isLds();
  }) || (isa<tile::ReduceOp>(op) && op->hasAttr(pattr::kScratchOffset));
}

struct ScheduleWaves : tilec::impl::TilecScheduleWavesBase<ScheduleWaves> {
  using TilecScheduleWavesBase::TilecScheduleWavesBase;

  int numWaves = 4;
  int64_t threads = 0;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    const TargetInfo *target = targetOrError(f, arch);
    if (!target)
      return signalPassFailure();
    numWaves = numWavesOf(f);
    threads = int64_t(numWaves) * target->waveSize;
    SmallVector<scf::ForOp> loops;
    f.walk([&](scf::ForOp loop) {
      if (scheduleOf(loop))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (failed(apply(loop, *scheduleOf(loop))))
        return signalPassFailure();
    f.walk([&](scf::ForOp loop) { overlapCopies(loop); });
    if (failed(checkBarriers(f)))
      return signalPassFailure();
  }

  LogicalResult apply(scf::ForOp loop, const Schedule &s) {
    SmallVector<tile::GemmOp> gemms;
    for (Operation &op : *loop.getBody())
      if (auto g = dyn_cast<tile::GemmOp>(op))
        gemms.push_back(g);
    if ((s.interleave || s.setprio) && gemms.empty())
      loop.emitRemark() << "tile.schedule: interleave/setprio have no effect: the loop body has no tile.gemm";
    if (s.pingPong && failed(pingPong(loop)))
      return failure();
    // The global loads issued in the gemm's scheduling region (since the last
    // barrier before it) can be interleaved with its matrix instructions.
    for (tile::GemmOp g : gemms) {
      if (s.interleave) {
        int64_t vmem = 0;
        for (Operation *op = g->getPrevNode(); op && !isa<tile::BarrierOp>(op); op = op->getPrevNode())
          if (auto l = dyn_cast<tile::LoadOp>(op))
            vmem += loadsPerLane(l, threads);
        g->setAttr(pattr::kInterleaveVmem, IntegerAttr::get(IntegerType::get(&getContext(), 64), vmem));
      }
      if (s.setprio)
        g->setAttr(pattr::kSetprio, UnitAttr::get(&getContext()));
    }
    return success();
  }

  /// A pipelined loop whose gemms tilec-pipeline-loops left running
  /// (kMatrixGroupsInFlight): the pipeline's memory work for later
  /// iterations (asynchronous copies and gathers; or the commit of the
  /// prefetched tile to LDS and the next prefetch into registers) moves after
  /// the last gemm, so that it issues while the tensor cores multiply instead
  /// of before they start. It writes the buffer of a later iteration, the gemms read this
  /// iteration's, and the buffer it overwrites was last read by a gemm that
  /// every wave waited for before this iteration's first barrier.
  void overlapCopies(scf::ForOp loop) {
    Block *body = loop.getBody();
    tile::GemmOp gemm;
    for (Operation &op : *body)
      if (auto g = dyn_cast<tile::GemmOp>(op); g && g->hasAttr(pattr::kMatrixGroupsInFlight))
        gemm = g;
    if (!gemm)
      return;
    // The pipeline's memory ops between the last barrier and the gemm.
    SmallVector<Operation *> copies;
    for (Operation *op = gemm->getPrevNode(); op && !isa<tile::BarrierOp>(op); op = op->getPrevNode()) {
      if (auto l = dyn_cast<tile::LoadOp>(op); l && (l->hasAttr(tile::attr::kAsync) || isStaging(l.getDest())))
        copies.push_back(op);
      else if (auto g = dyn_cast<tile::GatherOp>(op); g && g->hasAttr(tile::attr::kAsync))
        copies.push_back(op);
      else if (auto c = dyn_cast<tile::CopyOp>(op); c && isStaging(c.getSource()))
        copies.push_back(op);
    }
    for (Operation *op : llvm::reverse(copies))
      op->moveBefore(body->getTerminator());
  }

  /// Ping-pong: the body becomes [math] barrier [memory] barrier; wave group
  /// 1 takes one extra barrier before the loop and group 0 one after it, so
  /// group 1 runs half a k step behind: while one group multiplies, the other
  /// commits the next tile to LDS and issues the global prefetch.
  LogicalResult pingPong(scf::ForOp loop) {
    if (numWaves < 2 || numWaves % 2)
      return loop.emitError() << "tile.schedule: ping_pong needs an even number of waves (two equal wave groups), "
                                 "got tile.num_waves = "
                              << numWaves << "; the groups' barrier counts could not match";
    auto st = loop->getAttrOfType<IntegerAttr>(tile::attr::kNumStages);
    if (!loop->hasAttr(kPipelined) || !st || st.getInt() < 3)
      return loop.emitError() << "tile.schedule: ping_pong needs the loop software-pipelined with num_stages >= 3 "
                                 "(got "
                              << (st ? st.getInt() : 1)
                              << "): the wave groups run half a k step apart, so one group commits tile j+S-1 "
                                 "while the other still reads tile j, and with S <= 2 buffers they would share one";
    Block *body = loop.getBody();
    SmallVector<Operation *> memory;
    for (Operation &op : *body) {
      if (isa<tile::BarrierOp>(op) || isa<scf::YieldOp>(op))
        continue;
      if (auto c = dyn_cast<tile::CopyOp>(op); c && isStaging(c.getSource())) {
        memory.push_back(c);
        continue;
      }
      if (auto l = dyn_cast<tile::LoadOp>(op); l && isStaging(l.getDest())) {
        memory.push_back(l);
        continue;
      }
      if (op.getNumRegions())
        return op.emitError() << "tile.schedule: ping_pong cannot schedule nested control flow in the k loop";
      if (isa<tile::ReduceOp>(op) && op.hasAttr(pattr::kScratchOffset))
        return op.emitError() << "tile.schedule: ping_pong cannot hold a cross-wave reduction (its internal barriers "
                                 "would pair the two wave groups at different k steps)";
      if (isa<tile::LoadOp, tile::GatherOp, tile::FillOp, tile::CopyOp>(op) && touchesLds(&op))
        return op.emitError() << "tile.schedule: ping_pong: this LDS write is not a pipelined commit; the wave groups "
                                 "would race on it";
    }
    if (memory.empty())
      return loop.emitError() << "tile.schedule: ping_pong needs pipelined loads in the loop body (none found)";
    // Body: math, barrier, memory (in program order), barrier.
    for (Operation &op : llvm::make_early_inc_range(*body))
      if (isa<tile::BarrierOp>(op))
        op.erase();
    Operation *yield = body->getTerminator();
    OpBuilder b(yield);
    b.create<tile::BarrierOp>(loop.getLoc());
    for (Operation *op : memory)
      op->moveBefore(yield);
    b.setInsertionPoint(yield);
    b.create<tile::BarrierOp>(loop.getLoc());
    // Around the loop: everyone sees the prologue's tiles, then group 1 steps
    // one barrier behind; group 0 balances after the loop.
    auto group = [&](OpBuilder &bb, int64_t g) {
      auto bar = bb.create<tile::BarrierOp>(loop.getLoc());
      bar->setAttr(tile::attr::kWaveGroup, bb.getI64IntegerAttr(g));
    };
    b.setInsertionPoint(loop);
    b.create<tile::BarrierOp>(loop.getLoc());
    group(b, 1);
    b.setInsertionPointAfter(loop);
    group(b, 0);
    return success();
  }

  /// Barriers each wave group reaches (group 0: the first half of the waves).
  struct Count {
    int64_t g[2] = {0, 0};
    int64_t ahead() const { return g[0] - g[1]; }
  };

  /// Counts the barriers along `block` (every path: loops contribute nothing
  /// net once their per-iteration counts match, since the trip count is not
  /// known). Groups may be out of step only inside a ping_pong loop.
  LogicalResult count(Block &block, Count &c, bool inPingPong) {
    for (Operation &op : block) {
      if (auto bar = dyn_cast<tile::BarrierOp>(op)) {
        if (auto g = bar->getAttrOfType<IntegerAttr>(tile::attr::kWaveGroup)) {
          if (numWaves < 2 || numWaves % 2)
            return bar.emitError() << "a wave-group barrier needs an even number of waves, got tile.num_waves = "
                                   << numWaves;
          ++c.g[g.getInt()];
        } else {
          ++c.g[0], ++c.g[1];
        }
        continue;
      }
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        std::optional<Schedule> s = scheduleOf(loop);
        bool pp = inPingPong || (s && s->pingPong);
        if (s && s->pingPong && c.ahead() != -1)
          return loop.emitError() << "tile.schedule: ping_pong loop entered with wave group 1 "
                                  << -c.ahead() << " barrier(s) ahead of group 0 (expected 1)";
        Count it;
        if (failed(count(*loop.getBody(), it, pp)))
          return failure();
        if (it.g[0] != it.g[1])
          return loop.emitError() << "wave group 0 reaches " << it.g[0] << " barrier(s) per iteration and group 1 "
                                  << it.g[1] << ": for some trip count the waves would wait at different "
                                     "barriers forever (deadlock)";
        continue;
      }
      if (op.getNumRegions()) {
        bool hasBarrier = false;
        op.walk([&](tile::BarrierOp) { hasBarrier = true; });
        if (hasBarrier)
          return op.emitError() << "holds a tile.barrier under control flow whose barrier counts cannot be checked";
        continue;
      }
      if (c.ahead() != 0 && !inPingPong && touchesLds(&op))
        return op.emitError() << "accesses LDS while the wave groups are out of step (group "
                              << (c.ahead() > 0 ? 0 : 1) << " is " << std::abs(c.ahead())
                              << " barrier(s) ahead): the barriers no longer order it";
    }
    return success();
  }

  LogicalResult checkBarriers(func::FuncOp f) {
    Count c;
    if (failed(count(f.getBody().front(), c, /*inPingPong=*/false)))
      return failure();
    if (c.g[0] != c.g[1])
      return f.emitError() << "wave group 0 reaches " << c.g[0] << " barrier(s) and group 1 " << c.g[1]
                           << ": the waves would wait at different barriers forever (deadlock)";
    return success();
  }
};

} // namespace
