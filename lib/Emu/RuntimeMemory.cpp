// The wavefront runtime's memory operations: buffer loads and stores inside
// the launch's allocations, LDS accesses through the race, initialization,
// alignment and pending-copy checkers and the bank-conflict model, and
// NVIDIA's asynchronous copies (cp.async). The model is documented in Emulator.h.
#include "Emu/RuntimeState.h"

#include <algorithm>
#include <cstring>

namespace tilec::emu::detail {

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

} // namespace tilec::emu::detail
