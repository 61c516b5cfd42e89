// The wavefront runtime: workgroups on worker threads, lanes as fibers
// (Boost.Context fcontext), the hardware-layer operations of tilec_hw_emu.h
// and the checkers. The model is documented in Emulator.h.
#include "Emu/Runtime.h"
#include "Target/Float8.h"
#include "Emu/Wgmma.h"
#include "Target/LdsBanks.h"
#include "Target/Target.h"

#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <link.h>
#include <mutex>
#include <sys/mman.h>
#include <thread>

namespace bctx = boost::context::detail;

namespace tilec::emu::detail {
namespace {

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
struct PendingWgmma {
  float *d;
  int type, n, mnMajorB;
  uint64_t descA, descB;
  std::vector<float> c, result;
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

thread_local Worker *tWorker = nullptr;

std::string hex(uintptr_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

// --- fibers -------------------------------------------------------------------------

void yieldToScheduler(Worker *w) {
  bctx::transfer_t t = bctx::jump_fcontext(w->sched, nullptr);
  w->sched = t.fctx;
}

void performAllCopies(Worker &w);
void retireAllWgmma(Worker &w);

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

/// Counts the wave's grouped LDS instructions and starts a new grouping.
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

// --- matrix instructions (docs/hardware.md sections 1-2) -------------------------------

/// Element type of a matrix instruction's A and B operands.
enum class Operand : uint8_t { BF16, F16, FP8E4M3FNUZ, FP8E5M2FNUZ, FP8E4M3FN, FP8E5M2 };

/// Lane layouts of the operands and the accumulator (docs/hardware.md sections
/// 1-2; NVIDIA: the PTX ISA's mma.m16n8k16 and, for 8-bit operands,
/// mma.m16n8k32 fragments).
enum class Layout : uint8_t { MFMA, WMMA, MMA };

struct MatrixShape {
  int m, n, k, kPerLane, accPerLane, lanes;
  Operand type;
  Layout layout;
  /// B elements a lane holds (mma.sync: half of A's; AMD: A's).
  int kPerLaneB() const { return layout == Layout::MMA ? kPerLane / 2 : kPerLane; }
};

/// The shape of emulator op `op`, from the target table's row for it (its lane
/// formulas below are the emulator's own, checked against the vendors' tables);
/// m == 0 for an unknown op.
MatrixShape shapeOf(int op) {
  const tilec::MatrixInstr *mi = tilec::findInstrByEmuOp(op);
  if (!mi)
    return {0, 0, 0, 0, 0, 0, Operand::BF16, Layout::MFMA};
  using E = tilec::ElemType;
  const Operand type = mi->aType == E::F16           ? Operand::F16
                       : mi->aType == E::FP8E4M3FNUZ ? Operand::FP8E4M3FNUZ
                       : mi->aType == E::FP8E5M2FNUZ ? Operand::FP8E5M2FNUZ
                       : mi->aType == E::FP8E4M3FN   ? Operand::FP8E4M3FN
                       : mi->aType == E::FP8E5M2     ? Operand::FP8E5M2
                                                     : Operand::BF16;
  const Layout layout = mi->family == tilec::MatrixFamily::WMMA  ? Layout::WMMA
                        : mi->family == tilec::MatrixFamily::MMA ? Layout::MMA
                                                                 : Layout::MFMA;
  return {mi->m, mi->n, mi->k, mi->kPerLane, mi->accPerLane, mi->waveSize * mi->waves, type, layout};
}

int operandBytes(Operand t) { return t == Operand::BF16 || t == Operand::F16 ? 2 : 1; }

/// A operand element e of lane l -> (m, k), or with `b` B's -> (n, k). AMD's B
/// uses A's formula with m -> n.
void operandCoord(const MatrixShape &s, bool b, int l, int e, int &row, int &k) {
  if (s.layout == Layout::MMA) {
    // g = l/4, t = l%4; a 32-bit register holds p = 4 / bytes elements
    // consecutive in k (2 for m16n8k16, 4 for m16n8k32), the second half of k
    // starts at k/2: A[g + 8((e/p)%2)][p t + e%p + (k/2)(e/2p)],
    // B[p t + e%p + (k/2)(e/p)][g].
    const int p = 4 / operandBytes(s.type);
    row = b ? l / 4 : l / 4 + 8 * ((e / p) % 2);
    k = p * (l % 4) + e % p + s.k / 2 * (b ? e / p : e / (2 * p));
  } else if (s.layout == Layout::WMMA) {  // A[l%16][e]
    row = l % 16;
    k = e;
  } else {       // 32x32x8: A[l%32][4*(l/32)+e]; 16x16x16: A[l%16][4*(l/16)+e];
                 // fp8/bf8 32x32x16: A[l%32][8*(l/32)+e]; 16x16x32: A[l%16][8*(l/16)+e]
    row = l % s.m;
    k = s.kPerLane * (l / s.m) + e;
  }
}

/// D element r of lane l -> (m, n).
void accCoord(const MatrixShape &s, int l, int r, int &m, int &n) {
  if (s.layout == Layout::MMA) {  // D[l/4 + 8(r/2)][2(l%4) + r%2]
    m = l / 4 + 8 * (r / 2);
    n = 2 * (l % 4) + r % 2;
  } else if (s.layout == Layout::WMMA) {  // D[2r + l/16][l%16]
    m = 2 * r + l / 16;
    n = l % 16;
  } else if (s.m == 32) {  // D[8*(r/4) + 4*(l/32) + r%4][l%32]
    m = 8 * (r / 4) + 4 * (l / 32) + r % 4;
    n = l % 32;
  } else {  // D[4*(l/16) + r][l%16]
    m = 4 * (l / 16) + r;
    n = l % 16;
  }
}

/// Element e of a lane's A or B operand (byte e of an 8-byte fp8/bf8 operand).
double operandValue(const void *v, int e, Operand t) {
  switch (t) {
  case Operand::BF16: {
    uint32_t bits = (uint32_t)((const uint16_t *)v)[e] << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  case Operand::F16: return (double)((const _Float16 *)v)[e];
  case Operand::FP8E4M3FNUZ: return Fp8E4M3Fnuz::decode(((const uint8_t *)v)[e]);
  case Operand::FP8E5M2FNUZ: return Fp8E5M2Fnuz::decode(((const uint8_t *)v)[e]);
  case Operand::FP8E4M3FN: return Fp8E4M3Fn::decode(((const uint8_t *)v)[e]);
  case Operand::FP8E5M2: return Fp8E5M2::decode(((const uint8_t *)v)[e]);
  }
  return NAN;
}

/// Zero of the same sign for a nonzero |v| below `minNormal`, else v.
double flushSubnormal(double v, double minNormal) { return std::fabs(v) < minNormal ? std::copysign(0.0, v) : v; }

void executeMatrix(Worker &w, Wave &wave, int op, const std::vector<Lane *> &parts) {
  MatrixShape s = shapeOf(op);
  // gfx90a's f16/bf16 instructions flush subnormal A/B elements, C and results
  // (TargetInfo::matrixFlushes16BitSubnormals); a threshold of 0 flushes nothing.
  const bool flushes = w.job->matrixFlushes16BitSubnormals && (s.type == Operand::F16 || s.type == Operand::BF16);
  const double operandMinNormal = !flushes ? 0.0 : s.type == Operand::F16 ? 0x1p-14 : 0x1p-126;
  const double accMinNormal = flushes ? 0x1p-126 : 0.0;  // f32
  auto zeroAll = [&] {
    for (Lane *l : parts)
      memset(l->d, 0, (size_t)std::max(s.accPerLane, 1) * 4);
  };
  if (s.m == 0 || s.lanes != w.job->waveSize) {
    w.invalid += 1;
    w.shared->message(Invalid, [&] { return std::string("invalid instruction: " + w.where(*parts[0]) + ": matrix op " + std::to_string(op) +
                                   (s.m == 0 ? " is unknown" : " needs wave" + std::to_string(s.lanes)) +
                                   " (docs/hardware.md sections 1-2)"); });
    if (s.m != 0)
      zeroAll();
    return;
  }
  std::vector<double> A(s.m * s.k, 0.0), B(s.k * s.n, 0.0), C(s.m * s.n, 0.0);
  for (Lane *l : parts) {
    int ln = l->lane;
    if (s.layout == Layout::WMMA && ln >= 16) {
      // Lanes l and l+16 must hold identical A/B data (section 2).
      const Lane *twin = nullptr;
      for (Lane *o : parts)
        if (o->lane == ln - 16)
          twin = o;
      size_t bytes = (size_t)s.kPerLane * operandBytes(s.type);
      if (twin && (memcmp(twin->a, l->a, bytes) != 0 || memcmp(twin->b, l->b, bytes) != 0)) {
        w.invalid += 1;
        w.shared->message(Invalid, [&] { return std::string("invalid WMMA operands: " + w.where(*l) +
                                       " holds A/B data different from lane " + std::to_string(ln - 16) +
                                       " (docs/hardware.md section 2: the halves must be duplicated)"); });
      }
    }
    if (s.layout != Layout::WMMA || ln < 16) {
      for (int e = 0; e < s.kPerLane; ++e) {
        int row, k;
        operandCoord(s, false, ln, e, row, k);
        A[row * s.k + k] = flushSubnormal(operandValue(l->a, e, s.type), operandMinNormal);
      }
      for (int e = 0; e < s.kPerLaneB(); ++e) {
        int col, k;
        operandCoord(s, true, ln, e, col, k);
        B[k * s.n + col] = flushSubnormal(operandValue(l->b, e, s.type), operandMinNormal);
      }
    }
    for (int r = 0; r < s.accPerLane; ++r) {
      int m, n;
      accCoord(s, ln, r, m, n);
      C[m * s.n + n] = flushSubnormal(((const float *)l->c)[r], accMinNormal);
    }
  }
  // Products of bf16/f16/fp8/bf8 values are exact in double; the dot product is
  // summed in double and added to C with one rounding to f32 (the hardware's
  // internal accumulation order is not specified: section "Not verified").
  for (Lane *l : parts)
    for (int r = 0; r < s.accPerLane; ++r) {
      int m, n;
      accCoord(s, l->lane, r, m, n);
      double sum = 0;
      for (int k = 0; k < s.k; ++k)
        sum += A[m * s.k + k] * B[k * s.n + n];
      ((float *)l->d)[r] = (float)flushSubnormal((float)(C[m * s.n + n] + sum), accMinNormal);
    }
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

/// Whether [addr, addr+bytes) lies inside one tracked allocation.
bool inAllocation(Worker &w, uintptr_t addr, int bytes) {
  const auto &as = w.job->allocations;
  if (as.empty())
    return false;
  auto fits = [&](const Emulator::Allocation &a) { return addr >= a.begin && addr + (uintptr_t)bytes <= a.end; };
  if (w.allocHint < as.size() && fits(as[w.allocHint]))
    return true;
  auto it = std::upper_bound(as.begin(), as.end(), addr,
                             [](uintptr_t v, const Emulator::Allocation &a) { return v < a.begin; });
  if (it == as.begin())
    return false;
  --it;
  if (!fits(*it))
    return false;
  w.allocHint = (size_t)(it - as.begin());
  return true;
}

/// The address of a buffer access, or 0 when the hardware would not perform
/// it (offset past num_records: legal) or the checker rejects it (reported).
uintptr_t bufferAddress(Worker &w, const tl_emu_rsrc *r, int off, int bytes, const char *what) {
  uint32_t uoff = (uint32_t)off;  // the VGPR offset is unsigned
  if (uoff >= r->numRecords)
    return 0;
  uintptr_t addr = (uintptr_t)r->base + uoff;
  if ((uint64_t)uoff + (uint64_t)bytes > r->numRecords) {
    ++w.oob;
    w.shared->message(OutOfBounds, [&] { return std::string("out-of-bounds: " + w.where(*w.cur) + ": buffer " + what + " of " +
                                       std::to_string(bytes) + " bytes at offset " + std::to_string(uoff) +
                                       " straddles num_records " + std::to_string(r->numRecords) +
                                       " (docs/hardware.md section 4: keep accesses wholly in or out)"); });
    return 0;
  }
  if (!inAllocation(w, addr, bytes)) {
    ++w.oob;
    w.shared->message(OutOfBounds, [&] { return std::string("out-of-bounds: " + w.where(*w.cur) + ": buffer " + what + " of " +
                                       std::to_string(bytes) + " bytes at address " + hex(addr) + " (base " +
                                       hex((uintptr_t)r->base) + " + offset " + std::to_string(uoff) +
                                       ") is outside every allocation"); });
    return 0;
  }
  return addr;
}

unsigned abiBufferLoad(const tl_emu_rsrc *r, int off, int bytes) {
  Worker *w = tWorker;
  ++w->laneInstr;
  uintptr_t addr = bufferAddress(*w, r, off, bytes, "load");
  if (!addr)
    return 0;
  if (bytes == 1)
    return *(const uint8_t *)addr;
  if (bytes == 2) {
    uint16_t v;
    memcpy(&v, (const void *)addr, 2);
    return v;
  }
  uint32_t v;
  memcpy(&v, (const void *)addr, 4);
  return v;
}

/// A b64 or b128 buffer load. The hardware needs the address aligned to the
/// access (the kernels' vector loads rely on the tensors' declared
/// divisibility, which the launch checks); an access that is not is reported
/// as an invalid instruction and reads zeros.
void abiBufferLoadVec(const tl_emu_rsrc *r, int off, int bytes, void *out) {
  Worker *w = tWorker;
  ++w->laneInstr;
  memset(out, 0, (size_t)bytes);
  if (((uintptr_t)r->base + (uint32_t)off) % (uintptr_t)bytes != 0 && (uint32_t)off < r->numRecords) {
    w->invalid += 1;
    w->shared->message(Invalid, [&] { return std::string("invalid instruction: " + w->where(*w->cur) + ": buffer load of " +
                                    std::to_string(bytes) + " bytes at " + hex((uintptr_t)r->base + (uint32_t)off) +
                                    " is not aligned to its size"); });
    return;
  }
  if (uintptr_t addr = bufferAddress(*w, r, off, bytes, "load"))
    memcpy(out, (const void *)addr, (size_t)bytes);
}

/// A b64 or b128 buffer store: aligned as abiBufferLoadVec requires, else
/// reported and dropped.
void abiBufferStoreVec(const tl_emu_rsrc *r, int off, int bytes, const void *in) {
  Worker *w = tWorker;
  ++w->laneInstr;
  if (((uintptr_t)r->base + (uint32_t)off) % (uintptr_t)bytes != 0 && (uint32_t)off < r->numRecords) {
    w->invalid += 1;
    w->shared->message(Invalid, [&] { return std::string("invalid instruction: " + w->where(*w->cur) + ": buffer store of " +
                                    std::to_string(bytes) + " bytes at " + hex((uintptr_t)r->base + (uint32_t)off) +
                                    " is not aligned to its size"); });
    return;
  }
  if (uintptr_t addr = bufferAddress(*w, r, off, bytes, "store"))
    memcpy((void *)addr, in, (size_t)bytes);
}

void abiBufferStore(const tl_emu_rsrc *r, int off, int bytes, unsigned value) {
  Worker *w = tWorker;
  ++w->laneInstr;
  uintptr_t addr = bufferAddress(*w, r, off, bytes, "store");
  if (!addr)
    return;
  if (bytes == 1) {
    *(uint8_t *)addr = (uint8_t)value;
  } else if (bytes == 2) {
    uint16_t v = (uint16_t)value;
    memcpy((void *)addr, &v, 2);
  } else {
    memcpy((void *)addr, &value, 4);
  }
}

void checkRace(Worker &w, uint32_t off, int bytes, bool write) {
  const uint16_t wave = (uint16_t)w.cur->wave;
  const uint32_t e = w.epoch;
  bool race = false;
  for (uint32_t i = off; i < off + (uint32_t)bytes; ++i) {
    Shadow &s = w.shadow[i];
    if (s.wEpoch == e && s.wWave != wave)
      race = true;
    if (write) {
      if (s.rEpoch == e && (s.rWave != wave || s.rMulti))
        race = true;
      s.wEpoch = e;
      s.wWave = wave;
    } else if (s.rEpoch == e) {
      s.rMulti |= s.rWave != wave;
    } else {
      s.rEpoch = e;
      s.rWave = wave;
      s.rMulti = 0;
    }
  }
  if (race) {
    ++w.races;
    w.shared->message(Race, [&] { return std::string("LDS race: " + w.where(*w.cur) + ": " + (write ? "write" : "read") + " of " +
                                std::to_string(bytes) + " bytes at LDS offset " + std::to_string(off) +
                                " conflicts with an access by another wave since barrier " +
                                std::to_string(w.waves[w.cur->wave].barriers)); });
  }
}

/// LDS accesses must be naturally aligned. In the strict alignment mode
/// (SH_MEM_CONFIG.alignment_mode) the hardware needs it for DS instructions,
/// so LLVM uses ds_read/ds_write_b96/b128 on gfx9 and later at less than
/// natural alignment only with the unaligned access mode on
/// (reviews.llvm.org/D87821; ds_read_b128 needs 16-byte alignment otherwise,
/// D92767). The kernel text reads LDS through naturally aligned types
/// (uint2_t, uint4_t, ...), so the compiler selects those instructions and
/// assumes the alignment: a misaligned pointer is a bug in either mode. The
/// host address is checked: `__shared__` variables keep their declared
/// alignment in the host's TLS block as in LDS.
void checkAlignment(Worker &w, uintptr_t addr, uint32_t off, int bytes, bool write) {
  const uintptr_t alignment = (uintptr_t)(bytes & -bytes);  // the size, or its largest power-of-two factor
  if (addr % alignment == 0)
    return;
  ++w.misalignedLds;
  w.shared->message(MisalignedLds, [&] {
    return std::string("misaligned LDS access: " + w.where(*w.cur) + ": " + (write ? "write" : "read") + " of " +
                       std::to_string(bytes) + " bytes at LDS offset " + std::to_string(off) +
                       " is not aligned to its size (DS instructions need the address a multiple of " +
                       std::to_string(alignment) + ")");
  });
}

/// A read must only see bytes some lane of the workgroup wrote: LDS is not
/// cleared at launch (the runtime fills it with kLdsPoison).
void checkInitialized(Worker &w, uint32_t off, int bytes, bool write) {
  uint8_t *written = w.ldsWritten.data() + off;
  if (write) {
    memset(written, 1, (size_t)bytes);
    return;
  }
  const uint8_t *unwritten = std::find(written, written + bytes, 0);
  if (unwritten == written + bytes)
    return;
  ++w.uninitializedLds;
  w.shared->message(UninitializedLds, [&] {
    return std::string("uninitialized LDS read: " + w.where(*w.cur) + ": read of " + std::to_string(bytes) +
                       " bytes at LDS offset " + std::to_string(off) + " includes byte " +
                       std::to_string(off + (uint32_t)(unwritten - written)) +
                       ", which no lane of the workgroup has written (LDS is not cleared at launch)");
  });
}

/// Whether [p, p+bytes) lies inside the kernel's LDS.
bool inLds(const Worker &w, const void *p, int bytes) {
  uintptr_t a = (uintptr_t)p, base = (uintptr_t)w.ldsBase;
  return a >= base && a + (uintptr_t)bytes <= base + w.ldsSize;
}

/// Reports an LDS access to bytes that a queued asynchronous copy (of any
/// lane) will still write: on the GPU the copy may land before or after it.
void checkPendingCopies(Worker &w, uint32_t off, int bytes, bool write) {
  uint32_t hit = off;
  while (hit < off + (uint32_t)bytes && w.pendingCopies[hit] == 0)
    ++hit;
  if (hit == off + (uint32_t)bytes)
    return;
  ++w.races;
  w.shared->message(Race, [&] {
    const uint8_t *byte = w.ldsBase + hit;
    std::string issuer = "a lane";
    for (const Lane &l : w.lanes) {
      auto covers = [&](const CopyGroup &g) {
        return std::any_of(g.begin(), g.end(),
                           [&](const AsyncCopy &c) { return byte >= c.dst && byte < c.dst + c.bytes; });
      };
      if (covers(l.openCopies) || std::any_of(l.copyGroups.begin(), l.copyGroups.end(), covers)) {
        issuer = "lane " + std::to_string(l.tid);
        break;
      }
    }
    return std::string("LDS race: ") + w.where(*w.cur) + ": LDS " + (write ? "write" : "read") +
           " of bytes an asynchronous copy has not completed (cp.async not yet waited for): " + std::to_string(bytes) +
           " bytes at LDS offset " + std::to_string(off) + ", which a copy issued by " + issuer +
           " still writes (the data may be used only after async_wait covers its group and a barrier follows)";
  });
}

void abiLdsAccess(void *p, void *value, int bytes, int isWrite) {
  Worker *w = tWorker;
  Lane &lane = *w->cur;
  ++w->laneInstr;
  ++w->ldsAccesses;
  uintptr_t a = (uintptr_t)p, base = (uintptr_t)w->ldsBase;
  if (a < base || a + (uintptr_t)bytes > base + w->ldsSize) {
    ++w->oob;
    w->shared->message(OutOfBounds, [&] { return std::string("out-of-bounds: " + w->where(lane) + ": LDS " + (isWrite ? "write" : "read") +
                                        " of " + std::to_string(bytes) + " bytes at " + hex(a) +
                                        " is outside the kernel's LDS"); });
    if (!isWrite)
      memset(value, 0, (size_t)bytes);
  } else {
    uint32_t off = (uint32_t)(a - base);
    checkRace(*w, off, bytes, isWrite);
    checkAlignment(*w, a, off, bytes, isWrite);
    checkInitialized(*w, off, bytes, isWrite);
    checkPendingCopies(*w, off, bytes, isWrite);
    Wave &wave = w->waves[lane.wave];
    if ((size_t)lane.ldsSeq >= wave.groups.size())
      wave.groups.resize(lane.ldsSeq + 1);
    wave.groups[lane.ldsSeq].push_back({lane.lane, off, bytes});
    wave.usedGroups = std::max(wave.usedGroups, lane.ldsSeq + 1);
    ++lane.ldsSeq;
    if (isWrite)
      memcpy(p, value, (size_t)bytes);
    else
      memcpy(value, p, (size_t)bytes);
  }
  // Lockstep: every lane of the wave performs this access before any performs its next one.
  yieldToScheduler(w);
}

// --- asynchronous copies (cp.async, tilec_hw_cuda.h) -----------------------------------
//
// Each lane queues its copies in groups. The global bytes are read when the
// copy is issued (through the buffer-load path, with its bounds and alignment
// checks); the LDS write happens when async_wait retires the copy's group, as
// an ordinary LDS access of this lane at that point (race checker, bank
// model). Until then the bytes count as pending: any lane's LDS access to
// them is reported as a race.

/// cp.async of `bytes` (4, 8 or 16): zeros when the access does not lie
/// wholly below num_records (one straddling it is reported, as for loads).
void abiCopyAsync(void *dst, const tl_emu_rsrc *r, int off, int bytes) {
  Worker *w = tWorker;
  if (bytes != 4 && bytes != 8 && bytes != 16) {
    ++w->laneInstr;
    w->invalid += 1;
    w->shared->message(Invalid, [&] { return std::string("invalid instruction: " + w->where(*w->cur) + ": cp.async of " +
                                    std::to_string(bytes) + " bytes (it moves 4, 8 or 16)"); });
    return;
  }
  AsyncCopy copy{(uint8_t *)dst, bytes, {}};
  if (bytes == 4) {
    unsigned v = abiBufferLoad(r, off, 4);
    memcpy(copy.data, &v, 4);
  } else {
    abiBufferLoadVec(r, off, bytes, copy.data);
  }
  if (inLds(*w, dst, bytes))  // a copy outside LDS is reported when it is performed
    for (int i = 0; i < bytes; ++i)
      ++w->pendingCopies[copy.dst - w->ldsBase + i];
  w->cur->openCopies.push_back(copy);
}

void abiAsyncCommit() {
  Worker *w = tWorker;
  ++w->laneInstr;
  Lane &lane = *w->cur;
  lane.copyGroups.push_back(std::move(lane.openCopies));
  lane.openCopies.clear();
}

/// Writes the oldest committed group of the current lane to LDS, copy by copy.
void performOldestGroup(Worker &w) {
  CopyGroup &group = w.cur->copyGroups.front();  // only this lane touches its queue
  while (!group.empty()) {
    AsyncCopy c = group.front();
    group.erase(group.begin());
    if (inLds(w, c.dst, c.bytes))
      for (int i = 0; i < c.bytes; ++i)
        --w.pendingCopies[c.dst - w.ldsBase + i];
    --w.laneInstr;  // the copy's instruction was counted when it was issued
    abiLdsAccess(c.dst, c.data, c.bytes, 1);
  }
  w.cur->copyGroups.pop_front();
}

/// cp.async.wait_group n: retires the oldest groups until at most n are in flight.
void abiAsyncWait(int n) {
  Worker *w = tWorker;
  ++w->laneInstr;
  while (w->cur->copyGroups.size() > (size_t)std::max(n, 0))
    performOldestGroup(*w);
}

/// A returning lane's copies complete (the GPU finishes a thread's copies
/// even when it never waits for them): committed groups in order, then the
/// open one.
void performAllCopies(Worker &w) {
  Lane &lane = *w.cur;
  if (!lane.openCopies.empty()) {
    lane.copyGroups.push_back(std::move(lane.openCopies));
    lane.openCopies.clear();
  }
  while (!lane.copyGroups.empty())
    performOldestGroup(w);
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

void abiMatrix(int op, const void *a, const void *b, const void *c, void *d) {
  Worker *w = tWorker;
  Lane &l = *w->cur;
  ++w->laneInstr;
  l.coll = Collective::Matrix;
  l.op = op;
  l.a = a;
  l.b = b;
  l.c = c;
  l.d = d;
  l.state = LaneState::AtCollective;
  yieldToScheduler(w);
}

// --- warpgroup matrix instructions (wgmma, tilec_hw_cuda.h) -------------------------------
//
// Each lane computes its own n / 2 accumulator elements when it issues the
// instruction: A's two rows and B's n / 4 columns it needs, read from LDS at
// the addresses the descriptors give (Wgmma.h), through the race, initialized
// and pending-copy checkers as reads of the lane's wave. The result is written
// to the accumulator registers when wgmma_wait retires the group; until then
// any access to them is reported, and the operands are read again at that
// point: bytes that changed in between are reported as a race (the hardware
// may read them at any time until the wait). A wgmma on an accumulator that a
// wgmma in flight writes takes that result as its input (the hardware chains
// them in order). Not modelled: that the 4 warps issue with equal descriptors,
// and the proxy fence (fence_proxy_async is a no-op).

/// The shared-window address of p: its offset in the LDS.
unsigned abiLdsAddress(const void *p) {
  Worker *w = tWorker;
  if (!inLds(*w, p, 1)) {
    ++w->oob;
    w->shared->message(OutOfBounds, [&] { return std::string("out-of-bounds: " + w->where(*w->cur) + ": shared-window address of " +
                                        hex((uintptr_t)p) + ", which is outside the kernel's LDS"); });
    return 0;
  }
  return (unsigned)((const uint8_t *)p - w->ldsBase);
}

void reportInvalidWgmma(Worker &w, const std::string &why) {
  w.invalid += 1;
  w.shared->message(Invalid, [&] { return std::string("invalid instruction: " + w.where(*w.cur) + ": wgmma.mma_async: " + why); });
}

/// out = A * B + c for lane `l` (0..127) of the warpgroup; with `check`, the
/// LDS reads go through the checkers. False (reported) when an operand cannot
/// be read.
bool computeWgmma(Worker &w, const PendingWgmma &p, int l, std::vector<float> &out, bool check) {
  const MatrixDescriptor da = MatrixDescriptor::decode(p.descA), db = MatrixDescriptor::decode(p.descB);
  for (const MatrixDescriptor *d : {&da, &db})
    if (std::string why = d->unsupported(); !why.empty()) {
      if (check)
        reportInvalidWgmma(w, (d == &da ? "A's descriptor: " : "B's descriptor: ") + why);
      return false;
    }
  bool ok = true;
  auto element = [&](const MatrixDescriptor &d, bool mnMajor, int mn, int k) -> double {
    const uint32_t off = wgmmaOperandAddress(d, mnMajor, mn, k, 2);
    if (off % 2 || (size_t)off + 2 > w.ldsSize) {
      if (check && ok) {
        ++w.oob;
        w.shared->message(OutOfBounds, [&] { return std::string("out-of-bounds: " + w.where(*w.cur) + ": wgmma operand element at shared-window address " +
                                           std::to_string(off) + " is outside the kernel's LDS or misaligned"); });
      }
      ok = false;
      return 0.0;
    }
    if (check) {
      checkRace(w, off, 2, false);
      checkInitialized(w, off, 2, false);
      checkPendingCopies(w, off, 2, false);
    }
    uint16_t bits;
    memcpy(&bits, w.ldsBase + off, 2);
    if (p.type == 1) {
      _Float16 h;
      memcpy(&h, &bits, 2);
      return (double)h;
    }
    const uint32_t f32 = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &f32, 4);
    return f;
  };
  // Rows of A this lane's elements lie in (r / 2 % 2 = 0, 1), columns of B (r / 4, r % 2).
  double a[2][16], b[128][16];
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 16; ++k)
      a[h][k] = element(da, false, wgmmaRow(l, 2 * h), k);
  for (int j = 0; j < p.n / 4; ++j)
    for (int k = 0; k < 16; ++k)
      b[j][k] = element(db, p.mnMajorB != 0, wgmmaCol(l, 4 * (j / 2) + j % 2), k);
  // Products of bf16/f16 values are exact in double; the dot product is summed
  // in double and added to C with one rounding to f32 (as for mma.sync).
  out.resize(p.n / 2);
  for (int r = 0; r < p.n / 2; ++r) {
    const int h = r / 2 % 2, j = 2 * (r / 4) + r % 2;
    double sum = 0;
    for (int k = 0; k < 16; ++k)
      sum += a[h][k] * b[j][k];
    out[r] = (float)(p.c[r] + sum);
  }
  return ok;
}

/// The newest wgmma in flight on this lane that writes d, or nullptr.
const PendingWgmma *wgmmaWriting(const Lane &lane, const float *d) {
  for (auto it = lane.openWgmma.rbegin(); it != lane.openWgmma.rend(); ++it)
    if (it->d == d)
      return &*it;
  for (auto g = lane.wgmmaGroups.rbegin(); g != lane.wgmmaGroups.rend(); ++g)
    for (auto it = g->rbegin(); it != g->rend(); ++it)
      if (it->d == d)
        return &*it;
  return nullptr;
}

void abiWgmma(int type, int n, int mnMajorB, unsigned long long descA, unsigned long long descB, float *d, int scaleD) {
  Worker *w = tWorker;
  Lane &lane = *w->cur;
  ++w->laneInstr;
  if (w->job->waveSize != 32 || w->job->config.threadsPerBlock % 128 != 0) {
    reportInvalidWgmma(*w, "needs warps of 32 lanes in whole warpgroups of 4 (block of " +
                               std::to_string(w->job->config.threadsPerBlock) + " threads)");
    return;
  }
  if ((type != 0 && type != 1) || n < 8 || n > 256 || n % 8) {
    reportInvalidWgmma(*w, "m64n" + std::to_string(n) + "k16 with operand type " + std::to_string(type) + " does not exist");
    return;
  }
  if (lane.accTouchedSinceFence)
    reportInvalidWgmma(*w, "issued after an access to accumulator registers with no wgmma.fence in between "
                           "(PTX ISA: wgmma.fence orders register accesses before wgmma.mma_async)");
  PendingWgmma p{d, type, n, mnMajorB, descA, descB, {}, {}};
  p.c.assign(n / 2, 0.0f);
  if (scaleD) {
    if (const PendingWgmma *prev = wgmmaWriting(lane, d))
      p.c = prev->result;
    else
      memcpy(p.c.data(), d, (size_t)n / 2 * 4);
  }
  if (!computeWgmma(*w, p, lane.tid % 128, p.result, true))
    p.result.assign(n / 2, 0.0f);
  lane.openWgmma.push_back(std::move(p));
}

void abiWgmmaFence() {
  Worker *w = tWorker;
  ++w->laneInstr;
  w->cur->accTouchedSinceFence = false;
}

void abiWgmmaCommit() {
  Worker *w = tWorker;
  ++w->laneInstr;
  Lane &lane = *w->cur;
  lane.wgmmaGroups.push_back(std::move(lane.openWgmma));
  lane.openWgmma.clear();
}

/// Writes the results of this lane's oldest committed group.
void retireOldestWgmmaGroup(Worker &w) {
  Lane &lane = *w.cur;
  for (const PendingWgmma &p : lane.wgmmaGroups.front()) {
    std::vector<float> again;
    if (computeWgmma(w, p, lane.tid % 128, again, false) &&
        memcmp(again.data(), p.result.data(), again.size() * 4) != 0) {
      ++w.races;
      w.shared->message(Race, [&] {
        return std::string("LDS race: " + w.where(lane) + ": the shared-memory operands of a wgmma.mma_async changed "
                           "before wgmma.wait_group retired it (the hardware may read them until then)");
      });
    }
    memcpy(p.d, p.result.data(), p.result.size() * 4);
  }
  lane.wgmmaGroups.pop_front();
}

/// wgmma.wait_group n: retires the oldest groups until at most n are in flight.
void abiWgmmaWait(int n) {
  Worker *w = tWorker;
  ++w->laneInstr;
  while (w->cur->wgmmaGroups.size() > (size_t)std::max(n, 0))
    retireOldestWgmmaGroup(*w);
}

void abiWgmmaTouch(const float *p) {
  Worker *w = tWorker;
  Lane &lane = *w->cur;
  auto writes = [&](const PendingWgmma &q) { return p >= q.d && p < q.d + q.n / 2; };
  bool inFlight = std::any_of(lane.openWgmma.begin(), lane.openWgmma.end(), writes);
  for (const WgmmaGroup &g : lane.wgmmaGroups)
    inFlight |= std::any_of(g.begin(), g.end(), writes);
  if (inFlight) {
    ++w->races;
    w->shared->message(Race, [&] {
      return std::string("register race: " + w->where(lane) +
                         ": access to an accumulator register that a wgmma.mma_async in flight writes "
                         "(before wgmma.wait_group retired it)");
    });
  }
  lane.accTouchedSinceFence = true;
}

/// A returning lane with wgmma in flight: reported (its registers die with it).
void retireAllWgmma(Worker &w) {
  Lane &lane = *w.cur;
  if (lane.openWgmma.empty() && lane.wgmmaGroups.empty())
    return;
  reportInvalidWgmma(w, "the thread returned with wgmma.mma_async in flight (no wgmma.wait_group retired it)");
  lane.openWgmma.clear();
  lane.wgmmaGroups.clear();
}

const tl_emu_abi kAbi = {TL_EMU_ABI_VERSION, abiThreadId,   abiBlockId,     abiLaneId,    abiBarrier,
                         abiBufferLoad,      abiBufferStore, abiBufferLoadVec, abiLdsAccess, abiBpermute,
                         abiMatrix,          abiCopyAsync,   abiAsyncCommit, abiAsyncWait, abiLdsAddress,
                         abiWgmma,           abiWgmmaFence,  abiWgmmaCommit, abiWgmmaWait, abiWgmmaTouch,
                         abiBufferStoreVec};

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
