// Internal to the wavefront runtime: the state of one launch's workers, waves
// and lanes, and the operations its three parts call across files:
//   Runtime.cpp        the scheduler (lanes as fibers, workgroups, runGrid)
//   RuntimeMemory.cpp  global and LDS accesses with their checkers, cp.async
//   RuntimeMatrix.cpp  the matrix instructions (wave-level and wgmma)
#pragma once

#include "Emu/Runtime.h"
#include "Target/LdsBanks.h"

#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <vector>

namespace tilec::emu::detail {

namespace bctx = boost::context::detail;

constexpr size_t kStackBytes = 256 * 1024;  ///< per lane; touched lazily
constexpr size_t kGuardBytes = 4096;
constexpr int kMessagesPerKind = 4;
/// What a workgroup's LDS holds before the workgroup writes it: the hardware
/// does not clear LDS between workgroups. 0xFF bytes read as NaN in f32, bf16
/// and f16 and as -1 in integers, so a read of them also spoils the results.
constexpr uint8_t kLdsPoison = 0xFF;

enum class LaneState : uint8_t { Runnable, AtCollective, AtBarrier, Done };
enum class Collective : uint8_t { None, Bpermute, Matrix };

/// One cp.async in flight: the global bytes, read when it was issued, and
/// where in LDS they land when a wait (or the lane's return) performs it.
struct AsyncCopy {
  uint8_t *dst;
  int bytes;
  uint8_t data[16];
};
using CopyGroup = std::vector<AsyncCopy>;

/// A wgmma.mma_async of one lane, issued and not yet retired by wgmma_wait:
/// its operands, its accumulator input and the result computed at issue.
/// aQuad: the register form's A (the 16 registers of the lane's quad; empty
/// when A is read through descA).
struct PendingWgmma {
  float *d;
  int type, n, mnMajorB;
  uint64_t descA, descB;
  std::vector<float> c, result;
  std::vector<uint32_t> aQuad;
};
using WgmmaGroup = std::vector<PendingWgmma>;

struct Lane {
  bctx::fcontext_t ctx = nullptr;
  LaneState state = LaneState::Runnable;
  Collective coll = Collective::None;
  int op = 0;
  const void *a = nullptr, *b = nullptr, *c = nullptr;
  void *d = nullptr;
  int bpIndex = 0, bpValue = 0, bpResult = 0;
  int tid = 0, lane = 0, wave = 0;
  int ldsSeq = 0;  ///< LDS accesses since the wave's last convergence point
  CopyGroup openCopies;               ///< issued since the last async_commit
  std::deque<CopyGroup> copyGroups;   ///< committed, not yet performed; oldest first
  WgmmaGroup openWgmma;               ///< issued since the last wgmma_commit
  std::deque<WgmmaGroup> wgmmaGroups; ///< committed, not yet retired; oldest first
  bool accTouchedSinceFence = false;  ///< a wgmma accumulator was accessed since the last wgmma_fence
};

using LdsAccess = tilec::LdsLaneAccess;

struct Wave {
  int first = 0, count = 0;
  std::vector<std::vector<LdsAccess>> groups;  ///< groups[k]: the lanes' k-th accesses
  int usedGroups = 0;
  int barriers = 0;
};

/// Race-checker state of one LDS byte.
struct Shadow {
  uint32_t wEpoch = 0, rEpoch = 0;
  uint16_t wWave = 0, rWave = 0;
  uint8_t rMulti = 0;
};

enum MessageKind { OutOfBounds, Race, UninitializedLds, MisalignedLds, Deadlock, Invalid, NumKinds };

/// State shared by the workers of one launch.
struct Shared {
  const GridJob *job;
  std::atomic<int64_t> next{0};
  int64_t total = 0;
  std::mutex mutex;
  LaunchReport report;
  std::atomic<int> messageCount[NumKinds] = {};

  /// Records the text `make()` builds, if fewer than kMessagesPerKind of `kind` were recorded.
  template <class F> void message(MessageKind kind, F make) {
    if (messageCount[kind].load(std::memory_order_relaxed) >= kMessagesPerKind ||
        messageCount[kind].fetch_add(1) >= kMessagesPerKind)
      return;
    std::string text = make();
    std::lock_guard<std::mutex> lock(mutex);
    report.messages.push_back(std::move(text));
  }
};

struct Worker {
  Shared *shared = nullptr;
  const GridJob *job = nullptr;
  char *stacks = nullptr;
  size_t stackMapBytes = 0;
  std::vector<Lane> lanes;
  std::vector<Wave> waves;
  bctx::fcontext_t sched = nullptr;
  Lane *cur = nullptr;
  int block[3] = {0, 0, 0};
  uint8_t *ldsBase = nullptr;
  size_t ldsSize = 0;
  std::vector<Shadow> shadow;
  std::vector<uint8_t> ldsWritten;  ///< per LDS byte: written since the workgroup started
  std::vector<uint32_t> pendingCopies;  ///< per LDS byte: queued asynchronous copies that write it
  uint32_t epoch = 0;
  size_t allocHint = 0;
  // counters, merged into the report at the end
  int64_t oob = 0, races = 0, uninitializedLds = 0, misalignedLds = 0, bankCycles = 0, ldsAccesses = 0,
          ldsInstr = 0, invalid = 0, laneInstr = 0;
  bool deadlock = false;

  ~Worker() {
    if (stacks)
      munmap(stacks, stackMapBytes);
  }
  std::string where(const Lane &l) const {
    return "kernel " + job->kernelName + " workgroup (" + std::to_string(block[0]) + "," + std::to_string(block[1]) +
           "," + std::to_string(block[2]) + ") lane " + std::to_string(l.tid) + " (wave " + std::to_string(l.wave) +
           ")";
  }
};

/// The worker running on this thread (Runtime.cpp).
extern thread_local Worker *tWorker;

inline std::string hex(uintptr_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

// --- the scheduler (Runtime.cpp) ----------------------------------------------------------

/// Suspends the current lane until the scheduler resumes it.
void yieldToScheduler(Worker *w);
/// Counts the wave's grouped LDS instructions and starts a new grouping.
void flushWave(Worker &w, Wave &wave);

// --- memory (RuntimeMemory.cpp) ------------------------------------------------------------

unsigned abiBufferLoad(const tl_emu_rsrc *r, int off, int bytes);
void abiBufferLoadVec(const tl_emu_rsrc *r, int off, int bytes, void *out);
void abiBufferStoreVec(const tl_emu_rsrc *r, int off, int bytes, const void *in);
void abiBufferStore(const tl_emu_rsrc *r, int off, int bytes, unsigned value);
void abiLdsAccess(void *p, void *value, int bytes, int isWrite);
void abiCopyAsync(void *dst, const tl_emu_rsrc *r, int off, int bytes);
void abiAsyncCommit();
void abiAsyncWait(int n);
/// Whether [p, p+bytes) lies in the current workgroup's LDS.
bool inLds(const Worker &w, const void *p, int bytes);
/// The LDS checkers, for an access of `bytes` at LDS offset `off` by the current lane.
void checkRace(Worker &w, uint32_t off, int bytes, bool write);
void checkInitialized(Worker &w, uint32_t off, int bytes, bool write);
void checkPendingCopies(Worker &w, uint32_t off, int bytes, bool write);
/// A returning lane's queued cp.async groups, performed in order.
void performAllCopies(Worker &w);

// --- matrix instructions (RuntimeMatrix.cpp) ----------------------------------------------

/// Runs the wave-level matrix instruction `op` of the lanes `parts` (all at the collective).
void executeMatrix(Worker &w, Wave &wave, int op, const std::vector<Lane *> &parts);
void abiMatrix(int op, const void *a, const void *b, const void *c, void *d);
unsigned abiLdsAddress(const void *p);
void abiWgmma(int type, int n, int mnMajorB, unsigned long long descA, unsigned long long descB, float *d, int scaleD);
void abiWgmmaRs(int type, int n, int mnMajorB, const unsigned *quad, unsigned long long descB, float *d, int scaleD);
void abiWgmmaFence();
void abiWgmmaCommit();
void abiWgmmaWait(int n);
void abiWgmmaTouch(const float *p);
/// A returning lane with wgmma in flight: reported (its registers die with it).
void retireAllWgmma(Worker &w);

} // namespace tilec::emu::detail
