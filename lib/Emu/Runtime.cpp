// The wavefront runtime's scheduler: workgroups on worker threads, lanes as
// fibers (Boost.Context fcontext), the wave collectives and the table of the
// hardware-layer operations of tilec_hw_emu.h, whose memory operations and
// checkers are in RuntimeMemory.cpp and matrix instructions in
// RuntimeMatrix.cpp. The model is documented in Emulator.h.
#include "Emu/RuntimeState.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <link.h>
#include <thread>

namespace tilec::emu::detail {

thread_local Worker *tWorker = nullptr;

// --- fibers -------------------------------------------------------------------------

void yieldToScheduler(Worker *w) {
  bctx::transfer_t t = bctx::jump_fcontext(w->sched, nullptr);
  w->sched = t.fctx;
}

void flushWave(Worker &w, Wave &wave) {
  for (int k = 0; k < wave.usedGroups; ++k) {
    auto &g = wave.groups[k];
    if (g.empty())
      continue;
    ++w.ldsInstr;
    w.bankCycles += tilec::ldsConflictCycles(g.data(), g.size(), w.job->waveSize, w.job->ldsBanks);
    g.clear();
  }
  wave.usedGroups = 0;
  for (int i = 0; i < wave.count; ++i)
    w.lanes[wave.first + i].ldsSeq = 0;
}

namespace {

void laneMain(bctx::transfer_t t) {
  Worker *w = tWorker;
  w->sched = t.fctx;
  w->job->entry(w->job->args);
  performAllCopies(*w);
  retireAllWgmma(*w);
  w->cur->state = LaneState::Done;
  yieldToScheduler(w);  // never resumed
  __builtin_unreachable();
}

void resume(Worker &w, Lane &lane) {
  w.cur = &lane;
  bctx::transfer_t t = bctx::jump_fcontext(lane.ctx, nullptr);
  lane.ctx = t.fctx;
}

/// Runs one pending wave-collective op of `wave` (all its lanes are blocked).
void resolveCollective(Worker &w, Wave &wave, Lane &first) {
  std::vector<Lane *> parts;
  for (int i = 0; i < wave.count; ++i) {
    Lane &l = w.lanes[wave.first + i];
    if (l.state == LaneState::AtCollective && l.coll == first.coll && (l.coll != Collective::Matrix || l.op == first.op))
      parts.push_back(&l);
  }
  flushWave(w, wave);  // a convergence point for the bank-conflict grouping
  if (first.coll == Collective::Bpermute) {
    // Lane i reads lane (byteIndex_i / 4) mod waveSize; an inactive source gives 0.
    std::vector<const Lane *> byLane(w.job->waveSize, nullptr);
    for (Lane *l : parts)
      byLane[l->lane] = l;
    for (Lane *l : parts) {
      const Lane *src = byLane[((unsigned)l->bpIndex / 4u) % (unsigned)w.job->waveSize];
      l->bpResult = src ? src->bpValue : 0;
    }
  } else {
    executeMatrix(w, wave, first.op, parts);
  }
  for (Lane *l : parts) {
    l->state = LaneState::Runnable;
    l->coll = Collective::None;
  }
}

// --- hardware-layer operations (the ABI table) ------------------------------------------

int abiThreadId() { return tWorker->cur->tid; }
int abiBlockId(int axis) { return axis >= 0 && axis < 3 ? tWorker->block[axis] : 0; }
int abiLaneId() { return tWorker->cur->lane; }

void abiBarrier() {
  Worker *w = tWorker;
  ++w->laneInstr;
  w->cur->state = LaneState::AtBarrier;
  yieldToScheduler(w);
}

int abiBpermute(int byteIndex, int value) {
  Worker *w = tWorker;
  Lane &l = *w->cur;
  ++w->laneInstr;
  l.coll = Collective::Bpermute;
  l.bpIndex = byteIndex;
  l.bpValue = value;
  l.state = LaneState::AtCollective;
  yieldToScheduler(w);
  return l.bpResult;
}

const tl_emu_abi kAbi = {TL_EMU_ABI_VERSION, abiThreadId,   abiBlockId,     abiLaneId,    abiBarrier,
                         abiBufferLoad,      abiBufferStore, abiBufferLoadVec, abiLdsAccess, abiBpermute,
                         abiMatrix,          abiCopyAsync,   abiAsyncCommit, abiAsyncWait, abiLdsAddress,
                         abiWgmma,           abiWgmmaFence,  abiWgmmaCommit, abiWgmmaWait, abiWgmmaTouch,
                         abiBufferStoreVec,  abiWgmmaRs};

// --- workgroups ------------------------------------------------------------------------

/// Finds this thread's instance of the kernel module's TLS block (its
/// `__shared__` variables): the block that contains the module's probe.
void locateLds(Worker &w) {
  struct Query {
    uintptr_t probe;
    uint8_t *base = nullptr;
    size_t size = 0;
  } q{(uintptr_t)w.job->tlsProbe()};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        auto *q = (Query *)data;
        if (!info->dlpi_tls_data)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_TLS) {
            auto base = (uintptr_t)info->dlpi_tls_data;
            size_t size = info->dlpi_phdr[i].p_memsz;
            if (q->probe >= base && q->probe < base + size) {
              q->base = (uint8_t *)base;
              q->size = size;
              return 1;
            }
          }
        return 0;
      },
      &q);
  w.ldsBase = q.base;
  w.ldsSize = q.size;
  w.shadow.assign(q.size, Shadow{});
  w.ldsWritten.assign(q.size, 0);
  w.pendingCopies.assign(q.size, 0);
}

void setupLanes(Worker &w) {
  const int n = w.job->config.threadsPerBlock, ws = w.job->waveSize;
  const size_t slot = kStackBytes + kGuardBytes;
  w.stackMapBytes = slot * (size_t)n;
  w.stacks = (char *)mmap(nullptr, w.stackMapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                          -1, 0);
  if (w.stacks == MAP_FAILED) {
    w.stacks = nullptr;
    return;
  }
  for (int i = 0; i < n; ++i)
    mprotect(w.stacks + slot * i, kGuardBytes, PROT_NONE);  // stacks grow down onto the guard
  w.lanes.assign(n, Lane{});
  w.waves.assign((n + ws - 1) / ws, Wave{});
  for (size_t v = 0; v < w.waves.size(); ++v) {
    w.waves[v].first = (int)v * ws;
    w.waves[v].count = std::min(ws, n - (int)v * ws);
  }
}

void runWorkgroup(Worker &w, int64_t linear) {
  const auto &g = w.job->config.grid;
  w.block[0] = (int)(linear % g[0]);
  w.block[1] = (int)((linear / g[0]) % g[1]);
  w.block[2] = (int)(linear / ((int64_t)g[0] * g[1]));
  if (w.ldsBase)
    memset(w.ldsBase, kLdsPoison, w.ldsSize);
  std::fill(w.ldsWritten.begin(), w.ldsWritten.end(), 0);
  std::fill(w.pendingCopies.begin(), w.pendingCopies.end(), 0);  // an abandoned workgroup may leave some
  ++w.epoch;
  const int ws = w.job->waveSize;
  const size_t slot = kStackBytes + kGuardBytes;
  for (size_t i = 0; i < w.lanes.size(); ++i) {
    Lane &l = w.lanes[i];
    l = Lane{};
    l.tid = (int)i;
    l.lane = (int)i % ws;
    l.wave = (int)i / ws;
    l.ctx = bctx::make_fcontext(w.stacks + slot * (i + 1), kStackBytes, laneMain);
  }
  for (Wave &v : w.waves) {
    v.usedGroups = 0;
    v.barriers = 0;
    for (auto &grp : v.groups)
      grp.clear();
  }
  for (;;) {
    for (Wave &v : w.waves) {
      for (;;) {
        bool ran = false;
        for (int i = 0; i < v.count; ++i) {
          Lane &l = w.lanes[v.first + i];
          if (l.state == LaneState::Runnable) {
            resume(w, l);
            ran = true;
          }
        }
        if (ran)
          continue;
        Lane *pending = nullptr;
        for (int i = 0; i < v.count && !pending; ++i)
          if (w.lanes[v.first + i].state == LaneState::AtCollective)
            pending = &w.lanes[v.first + i];
        if (!pending)
          break;
        resolveCollective(w, v, *pending);
      }
    }
    // Every wave is now waiting at a barrier or has returned.
    std::vector<int> exited, waiting;
    for (size_t v = 0; v < w.waves.size(); ++v) {
      const Wave &wave = w.waves[v];
      int done = 0;
      for (int i = 0; i < wave.count; ++i)
        done += w.lanes[wave.first + i].state == LaneState::Done;
      (done == wave.count ? exited : waiting).push_back((int)v);
    }
    if (waiting.empty())
      break;
    if (!exited.empty()) {
      w.deadlock = true;
      std::string list;
      for (int v : waiting)
        list += (list.empty() ? "" : ",") + std::to_string(v);
      std::string gone;
      for (int v : exited)
        gone += (gone.empty() ? "" : ",") + std::to_string(v);
      w.shared->message(Deadlock, [&] { return std::string("deadlock: kernel " + w.job->kernelName + " workgroup (" +
                                      std::to_string(w.block[0]) + "," + std::to_string(w.block[1]) + "," +
                                      std::to_string(w.block[2]) + "): waves {" + list + "} wait at barrier " +
                                      std::to_string(w.waves[waiting[0]].barriers + 1) + " but waves {" + gone +
                                      "} have returned; workgroup abandoned"); });
      return;  // the lanes' fibers are abandoned; their stacks are reused
    }
    ++w.epoch;  // the barrier orders everything before it against everything after it
    for (Wave &v : w.waves) {
      flushWave(w, v);
      ++v.barriers;
      for (int i = 0; i < v.count; ++i)
        if (w.lanes[v.first + i].state == LaneState::AtBarrier)
          w.lanes[v.first + i].state = LaneState::Runnable;
    }
  }
  for (Wave &v : w.waves)
    flushWave(w, v);
}

void workerMain(Shared &shared) {
  Worker w;
  w.shared = &shared;
  w.job = shared.job;
  tWorker = &w;
  setupLanes(w);
  if (!w.stacks) {
    std::lock_guard<std::mutex> lock(shared.mutex);
    shared.report.messages.push_back("emulator: cannot map lane stacks");
    shared.report.deadlock = true;
    return;
  }
  locateLds(w);
  for (int64_t i; (i = shared.next.fetch_add(1)) < shared.total;)
    runWorkgroup(w, i);
  tWorker = nullptr;
  std::lock_guard<std::mutex> lock(shared.mutex);
  LaunchReport &r = shared.report;
  r.outOfBounds += w.oob;
  r.races += w.races;
  r.uninitializedLdsReads += w.uninitializedLds;
  r.misalignedLdsAccesses += w.misalignedLds;
  r.bankConflictCycles += w.bankCycles;
  r.ldsAccesses += w.ldsAccesses;
  r.ldsInstructions += w.ldsInstr;
  r.invalidInstructions += w.invalid;
  r.laneInstructions += w.laneInstr;
  r.deadlock |= w.deadlock;
}

} // namespace

const tl_emu_abi *abiTable() { return &kAbi; }

int64_t bankConflictCycles(const std::vector<uint32_t> &offsets, const std::vector<int> &bytes, int waveSize,
                           int banks) {
  std::vector<LdsAccess> acc;
  for (size_t l = 0; l < offsets.size() && l < bytes.size(); ++l)
    if (bytes[l] > 0)
      acc.push_back({(int)l, offsets[l], bytes[l]});
  return acc.empty() ? 0 : tilec::ldsConflictCycles(acc.data(), acc.size(), waveSize, banks);
}

LaunchReport runGrid(const GridJob &job) {
  auto start = std::chrono::steady_clock::now();
  Shared shared;
  shared.job = &job;
  shared.total = (int64_t)job.config.grid[0] * job.config.grid[1] * job.config.grid[2];
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  int64_t workers = std::min<int64_t>(hw, shared.total);
  // Workers are always fresh threads, so no thread outlives its use of the
  // kernel module's TLS (the module may be dlclose'd later).
  std::vector<std::thread> threads;
  for (int64_t i = 0; i < workers; ++i)
    threads.emplace_back([&shared] { workerMain(shared); });
  for (auto &t : threads)
    t.join();
  LaunchReport report = std::move(shared.report);
  report.workgroups = shared.total;
  report.lanes = shared.total * job.config.threadsPerBlock;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

} // namespace tilec::emu::detail