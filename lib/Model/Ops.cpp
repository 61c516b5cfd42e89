// One wave, alone, in order (docs/cost-model.md, "The chain"): each
// instruction issues `issueCycles` after the previous one (a VALU instruction
// holds the vector ALU `valuCycles`); a matrix instruction waits for the
// matrix core to be free and holds it for its cycles; a load completes its
// latency after issue; a wait holds the wave until the loads it names have
// completed. Barriers cost an issue slot: all waves of a workgroup run the
// same code, so none waits long for the others (an assumption).
#include "Model/Ops.h"

#include <algorithm>
#include <cmath>
#include <deque>

namespace tilec::model::detail {

IterationCost priceRange(const std::vector<Op> &ops, size_t first, size_t last, int iterations,
                         const DeviceFacts &device, bool asyncGroups, const std::vector<bool> *skip) {
  IterationCost c;
  if (ops.empty() || first > last || last >= ops.size())
    return c;
  auto skipped = [&](size_t i) { return skip && (*skip)[i]; };
  for (size_t i = first; i <= last; ++i) {
    if (skipped(i))
      continue;
    const Op &op = ops[i];
    ++c.instructions;
    c.ldsCycles += op.ldsCycles;  // an LDS access, or a copy that writes LDS (cp.async)
    switch (op.kind) {
    case OpKind::Matrix:
      ++c.matrixInstructions;
      c.matrixCycles += op.matrixCycles;
      c.matrixFlops += op.matrixFlops;
      break;
    case OpKind::Valu: ++c.valuInstructions; break;
    case OpKind::Lds: ++c.ldsInstructions; break;
    case OpKind::GlobalLoad:
      ++c.globalLoads;
      c.globalLoadBytes += op.bytes;
      break;
    case OpKind::GlobalStore: c.globalStoreBytes += op.bytes; break;
    case OpKind::Barrier: ++c.barriers; break;
    default: ++c.saluInstructions; break;
    }
  }

  // The chain. Completion times of outstanding operations per counter, in
  // issue order (both counters complete in order for the waits modelled).
  std::deque<double> vm, lgkm, group;
  double groupDone = 0;  // latest completion among copies not yet committed
  std::vector<double> done(ops.size(), 0.0);
  double t = 0, matrixFree = 0, stalled = 0, passStart = 0, passStall = 0;
  // Steady state: the mean of the last `measured` passes (a wave that waits
  // for the previous pass's loads alternates long and short passes).
  const int measured = iterations >= 8 ? 4 : 1;
  auto waitUntil = [&](double when) {
    if (when > t) {
      stalled += when - t;
      t = when;
    }
  };
  auto drain = [&](std::deque<double> &q, int keep) {
    double latest = 0;
    while (keep >= 0 && q.size() > size_t(keep)) {
      latest = std::max(latest, q.front());
      q.pop_front();
    }
    waitUntil(latest);
  };
  for (int pass = 0; pass < iterations; ++pass) {
    if (pass == iterations - measured) {
      passStart = t;
      passStall = stalled;
    }
    for (size_t i = first; i <= last; ++i) {
      if (skipped(i))
        continue;
      const Op &op = ops[i];
      for (size_t d : op.deps)
        waitUntil(done[d]);
      double issueAfter = device.issueCycles + op.extraIssueCycles;
      switch (op.kind) {
      case OpKind::Wait:
        drain(asyncGroups ? group : vm, op.waitVm);
        drain(lgkm, op.waitLgkm);
        break;
      case OpKind::Matrix: {
        double start = std::max(t, matrixFree);
        t = start;  // waiting for the matrix core is not memory latency
        matrixFree = start + op.matrixCycles;
        break;
      }
      case OpKind::Valu: issueAfter = std::max<double>(issueAfter, device.valuCycles); break;
      case OpKind::Lds:
        done[i] = t + device.ldsLatencyCycles + op.ldsCycles;
        lgkm.push_back(done[i]);
        break;
      case OpKind::ScalarLoad:
        done[i] = t + device.scalarLoadLatencyCycles;
        lgkm.push_back(done[i]);
        break;
      case OpKind::GlobalLoad:
      case OpKind::GlobalStore:
        done[i] = t + device.globalLatencyCycles;
        if (asyncGroups)
          groupDone = std::max(groupDone, done[i]);
        else
          vm.push_back(done[i]);
        break;
      case OpKind::Commit:
        group.push_back(groupDone);
        groupDone = 0;
        break;
      default: break;
      }
      t += issueAfter;
    }
  }
  // From the first issue of the measured passes to the first issue after
  // them. A matrix instruction still running then delays only the next one,
  // which the matrix term prices.
  c.chainCycles = (t - passStart) / measured;
  c.exposedLatencyCycles = (stalled - passStall) / measured;
  return c;
}

double constantTrips(const std::vector<Op> &ops, size_t first, size_t last) {
  for (size_t i = last + 1; i-- > first;) {
    const Op &cmp = ops[i];
    if (cmp.compareReg.empty())
      continue;
    for (size_t j = first; j <= last; ++j) {
      const Op &add = ops[j];
      if (add.step <= 0)
        continue;
      // The compare reads the counter before the step (the old value loops
      // while below the limit: one more pass) or after it.
      double span = double(cmp.compareLimit) + (cmp.compareInclusive ? 1 : 0);
      if (add.stepSrc == cmp.compareReg)
        return std::max(1.0, std::ceil(span / double(add.step)) + 1);
      if (add.stepDst == cmp.compareReg)
        return std::max(1.0, std::ceil(span / double(add.step)));
    }
    return 0;  // the last compare is not of a constant-stepped counter
  }
  return 0;
}

namespace {

/// `into` plus `times` more passes of `loop` (a loop nested in the range
/// `into` priced once).
void addPasses(IterationCost &into, const IterationCost &loop, double times) {
  into.instructions += int(times * loop.instructions);
  into.matrixInstructions += int(times * loop.matrixInstructions);
  into.matrixCycles += times * loop.matrixCycles;
  into.matrixFlops += times * loop.matrixFlops;
  into.valuInstructions += int(times * loop.valuInstructions);
  into.saluInstructions += int(times * loop.saluInstructions);
  into.ldsInstructions += int(times * loop.ldsInstructions);
  into.ldsCycles += times * loop.ldsCycles;
  into.globalLoads += int(times * loop.globalLoads);
  into.globalLoadBytes += times * loop.globalLoadBytes;
  into.globalStoreBytes += times * loop.globalStoreBytes;
  into.barriers += int(times * loop.barriers);
  into.chainCycles += times * loop.chainCycles;
  into.exposedLatencyCycles += times * loop.exposedLatencyCycles;
}

} // namespace

CodeCost findLoops(const std::vector<Op> &ops, const DeviceFacts &device, bool asyncGroups) {
  CodeCost code;
  for (size_t i = 0; i < ops.size(); ++i) {
    long to = ops[i].branchTo;
    if (to < 0 || size_t(to) > i)
      continue;
    LoopInfo loop;
    loop.first = size_t(to);
    loop.last = i;
    if (std::any_of(code.loops.begin(), code.loops.end(),
                    [&](const LoopInfo &l) { return l.first == loop.first && l.last == loop.last; }))
      continue;
    loop.cost = priceRange(ops, loop.first, loop.last, 8, device, asyncGroups);
    code.loops.push_back(loop);
  }
  // Loops inside a loop: the range prices one pass of each; add the others
  // when the code gives the trip count. Innermost first, so that a loop's
  // cost includes its own nested loops before its parent adds it.
  std::vector<size_t> bySize(code.loops.size());
  for (size_t l = 0; l < bySize.size(); ++l)
    bySize[l] = l;
  std::sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) {
    return code.loops[a].last - code.loops[a].first < code.loops[b].last - code.loops[b].first;
  });
  auto inside = [](const LoopInfo &in, const LoopInfo &out) {
    return in.first >= out.first && in.last <= out.last && (in.first != out.first || in.last != out.last);
  };
  for (size_t o : bySize) {
    LoopInfo &outer = code.loops[o];
    for (size_t i : bySize) {
      const LoopInfo &inner = code.loops[i];
      if (!inside(inner, outer))
        continue;
      // Only the outermost loops nested in `outer` (the others are in them).
      bool direct = true;
      for (size_t m : bySize)
        if (m != o && m != i && inside(inner, code.loops[m]) && inside(code.loops[m], outer))
          direct = false;
      double trips = constantTrips(ops, inner.first, inner.last);
      if (direct && trips > 1)
        addPasses(outer.cost, inner.cost, trips - 1);
    }
  }
  auto better = [](const LoopInfo &a, const LoopInfo &b) {
    if (a.cost.matrixCycles != b.cost.matrixCycles)
      return a.cost.matrixCycles > b.cost.matrixCycles;
    double ta = a.cost.globalLoadBytes + a.cost.ldsCycles, tb = b.cost.globalLoadBytes + b.cost.ldsCycles;
    if (ta != tb)
      return ta > tb;
    return a.last - a.first < b.last - b.first;  // the innermost
  };
  for (size_t l = 0; l < code.loops.size(); ++l)
    if (code.mainLoop < 0 || better(code.loops[l], code.loops[size_t(code.mainLoop)]))
      code.mainLoop = int(l);
  std::vector<bool> inLoop(ops.size(), false);
  if (code.mainLoop >= 0)
    for (size_t i = code.loops[size_t(code.mainLoop)].first; i <= code.loops[size_t(code.mainLoop)].last; ++i)
      inLoop[i] = true;
  if (!ops.empty())
    code.outside = priceRange(ops, 0, ops.size() - 1, 1, device, asyncGroups, &inLoop);
  // Outermost loops outside the main one run their counted passes too. Back
  // branches whose ranges overlap without nesting (code the compiler laid
  // out around shared blocks) are not separate loops: a range that overlaps
  // one already counted, or the main loop, is skipped.
  std::vector<bool> counted = inLoop;
  for (auto it = bySize.rbegin(); it != bySize.rend(); ++it) {  // largest first
    const LoopInfo &loop = code.loops[*it];
    if (int(*it) == code.mainLoop)
      continue;
    bool overlaps = false;
    for (size_t i = loop.first; i <= loop.last && !overlaps; ++i)
      overlaps = counted[i];
    if (overlaps)
      continue;
    for (size_t i = loop.first; i <= loop.last; ++i)
      counted[i] = true;
    double trips = constantTrips(ops, loop.first, loop.last);
    if (trips > 1)
      addPasses(code.outside, loop.cost, trips - 1);
  }
  return code;
}

} // namespace tilec::model::detail
