// tilec-insert-barriers: workgroup barriers between conflicting LDS accesses.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace tilec {
#define GEN_PASS_DEF_TILECINSERTBARRIERS
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

/// An LDS location: a tile (its alloc) and, for a buffer of a multi-buffered
/// tile inside a pipelined loop, the buffer's offset from the iteration's
/// (-1: any buffer). Buffers with different offsets in one iteration are
/// disjoint.
/// Tiles that tilec-allocate-lds placed on shared bytes (their live spans
/// do not overlap) also conflict. A tile whose allocation is unknown (null:
/// not defined by an op; the pipeline rejects those, the pass alone does not)
/// conflicts with everything.
struct Loc {
  Operation *alloc;
  int64_t offset;
  bool operator==(const Loc &o) const { return alloc == o.alloc && offset == o.offset; }
  bool overlaps(const Loc &o) const {
    if (!alloc || !o.alloc)
      return true;
    if (alloc == o.alloc)
      return offset < 0 || o.offset < 0 || offset == o.offset;
    auto range = [](Operation *a) -> std::optional<std::pair<int64_t, int64_t>> {
      tile::LdsPlacementAttr p = placementOf(a);
      if (!p)
        return std::nullopt;
      return std::make_pair(p.getOffset(), p.getOffset() + p.getBytes());
    };
    auto x = range(alloc), y = range(o.alloc);
    return x && y && x->first < y->second && y->first < x->second;
  }
};
using LocSet = llvm::SmallVector<Loc, 8>;

/// LDS accesses since the last barrier.
struct Pending {
  LocSet reads, writes;
  void clear() { reads.clear(); writes.clear(); }
  static void add(LocSet &set, const LocSet &more) {
    for (const Loc &l : more)
      if (llvm::find(set, l) == set.end())
        set.push_back(l);
  }
  void merge(const Pending &o) {
    add(reads, o.reads);
    add(writes, o.writes);
  }
  /// Crossing a loop boundary: offsets are relative to another iteration.
  void forgetOffsets() {
    for (LocSet *set : {&reads, &writes}) {
      LocSet any;
      for (const Loc &l : *set)
        add(any, {{l.alloc, -1}});
      *set = any;
    }
  }
};

std::optional<Loc> ldsLoc(Value v) {
  auto t = dyn_cast<tile::TileType>(v.getType());
  if (!t || !t.isLds())
    return std::nullopt;
  if (auto view = v.getDefiningOp<tile::ViewOp>()) {
    auto off = view.getStageOffset();
    return Loc{view.getSource().getDefiningOp(), off ? static_cast<int64_t>(*off) : -1};
  }
  return Loc{v.getDefiningOp(), -1};
}

/// LDS locations an op reads and writes.
void effects(Operation *op, LocSet &reads, LocSet &writes) {
  auto r = [&](Value v) { if (auto l = ldsLoc(v)) reads.push_back(*l); };
  auto w = [&](Value v) { if (auto l = ldsLoc(v)) writes.push_back(*l); };
  if (auto o = dyn_cast<tile::LoadOp>(op)) w(o.getDest());
  else if (auto o = dyn_cast<tile::GatherOp>(op)) w(o.getDest());
  else if (auto o = dyn_cast<tile::StoreOp>(op)) r(o.getValue());
  else if (auto o = dyn_cast<tile::CopyOp>(op)) { r(o.getSource()); w(o.getDest()); }
  else if (auto o = dyn_cast<tile::FillOp>(op)) w(o.getDest());
  else if (auto o = dyn_cast<tile::GemmOp>(op)) { r(o.getA()); r(o.getB()); }
}

bool overlapsAny(const LocSet &set, const Loc &l) {
  return llvm::any_of(set, [&](const Loc &o) { return o.overlaps(l); });
}

bool conflicts(const Pending &p, const LocSet &reads, const LocSet &writes) {
  for (const Loc &l : reads) if (overlapsAny(p.writes, l)) return true;
  for (const Loc &l : writes) if (overlapsAny(p.writes, l) || overlapsAny(p.reads, l)) return true;
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
        dry.forgetOffsets();
        walk(*loop.getBody(), dry, /*insert=*/false);
        dry.forgetOffsets();
        Pending entry = p;
        entry.forgetOffsets();
        entry.merge(dry);
        walk(*loop.getBody(), entry, insert);
        entry.forgetOffsets();
        p.forgetOffsets();
        p.merge(entry); // zero or more iterations
        continue;
      }
      if (isa<tile::ReduceOp>(op) && op.hasAttr(pattr::kScratchOffset)) {
        // Cross-wave reductions synchronise internally.
        p.clear();
        continue;
      }
      LocSet reads, writes;
      effects(&op, reads, writes);
      if (conflicts(p, reads, writes)) {
        if (insert)
          OpBuilder(&op).create<tile::BarrierOp>(op.getLoc());
        p.clear();
      }
      Pending::add(p.reads, reads);
      Pending::add(p.writes, writes);
    }
  }

  void runOnOperation() override {
    Pending p;
    for (Block &b : getOperation().getBody())
      walk(b, p, /*insert=*/true);
  }
};

} // namespace
