// tilec-insert-barriers: workgroup barriers between conflicting LDS accesses.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace tilec {
#define GEN_PASS_DEF_TILECINSERTBARRIERS
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

using TileSet = llvm::SmallSetVector<Value, 8>;

/// LDS accesses since the last barrier.
struct Pending {
  TileSet reads, writes;
  void clear() { reads.clear(); writes.clear(); }
  void merge(const Pending &o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
};

bool isLds(Value v) {
  auto t = dyn_cast<tile::TileType>(v.getType());
  return t && t.isLds();
}

/// LDS tiles an op reads and writes.
void effects(Operation *op, TileSet &reads, TileSet &writes) {
  auto r = [&](Value v) { if (isLds(v)) reads.insert(v); };
  auto w = [&](Value v) { if (isLds(v)) writes.insert(v); };
  if (auto o = dyn_cast<tile::LoadOp>(op)) w(o.getDest());
  else if (auto o = dyn_cast<tile::GatherOp>(op)) w(o.getDest());
  else if (auto o = dyn_cast<tile::StoreOp>(op)) r(o.getValue());
  else if (auto o = dyn_cast<tile::CopyOp>(op)) { r(o.getSource()); w(o.getDest()); }
  else if (auto o = dyn_cast<tile::FillOp>(op)) w(o.getDest());
  else if (auto o = dyn_cast<tile::GemmOp>(op)) { r(o.getA()); r(o.getB()); }
}

bool conflicts(const Pending &p, const TileSet &reads, const TileSet &writes) {
  for (Value v : reads) if (p.writes.count(v)) return true;
  for (Value v : writes) if (p.writes.count(v) || p.reads.count(v)) return true;
  return false;
}

struct InsertBarriers : tilec::impl::TilecInsertBarriersBase<InsertBarriers> {
  /// Walks `block` from state `p`; inserts barriers when `insert` is set.
  void walk(Block &block, Pending &p, bool insert) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isa<tile::BarrierOp>(op)) {
        p.clear();
        continue;
      }
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        // The body may run again after itself: find its end state, then walk it
        // for real from the entry state joined with that.
        Pending dry = p;
        walk(*loop.getBody(), dry, /*insert=*/false);
        Pending entry = p;
        entry.merge(dry);
        walk(*loop.getBody(), entry, insert);
        p.merge(entry); // zero or more iterations
        continue;
      }
      if (isa<tile::ReduceOp>(op) && op.hasAttr(pattr::kScratchOffset)) {
        // Cross-wave reductions synchronise internally.
        p.clear();
        continue;
      }
      TileSet reads, writes;
      effects(&op, reads, writes);
      if (conflicts(p, reads, writes)) {
        if (insert)
          OpBuilder(&op).create<tile::BarrierOp>(op.getLoc());
        p.clear();
      }
      p.reads.insert(reads.begin(), reads.end());
      p.writes.insert(writes.begin(), writes.end());
    }
  }

  void runOnOperation() override {
    Pending p;
    for (Block &b : getOperation().getBody())
      walk(b, p, /*insert=*/true);
  }
};

} // namespace
