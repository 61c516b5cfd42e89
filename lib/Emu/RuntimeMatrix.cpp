// The wavefront runtime's matrix instructions: the wave-level MFMA, WMMA and
// mma.sync of the lanes that reached one (docs/hardware.md sections 1-2), and
// NVIDIA's asynchronous warpgroup wgmma (tilec_hw_cuda.h). The model is
// documented in Emulator.h.
#include "Emu/RuntimeState.h"
#include "Emu/Wgmma.h"
#include "Target/Float8.h"
#include "Target/Target.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tilec::emu::detail {

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
  const bool aInRegisters = !p.aQuad.empty();
  const MatrixDescriptor da = MatrixDescriptor::decode(p.descA), db = MatrixDescriptor::decode(p.descB);
  for (const MatrixDescriptor *d : {&da, &db})
    if (std::string why = d->unsupported(); !why.empty() && !(d == &da && aInRegisters)) {
      if (check)
        reportInvalidWgmma(w, (d == &da ? "A's descriptor: " : "B's descriptor: ") + why);
      return false;
    }
  bool ok = true;
  // Operand types (tilec_hw_emu.h wgmma_type): 0 bf16, 1 f16 (k16); 2 e4m3,
  // 3 e5m2 (k32, one byte each).
  const int eb = p.type >= 2 ? 1 : 2, kSteps = 32 / eb;
  if (aInRegisters && eb == 1) {
    if (check)
      reportInvalidWgmma(w, "8-bit operands have no register form of A");
    return false;
  }
  auto value = [&](uint16_t bits) -> double {
    if (p.type == 2)
      return Fp8E4M3Fn::decode((uint8_t)bits);
    if (p.type == 3)
      return Fp8E5M2::decode((uint8_t)bits);
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
  auto element = [&](const MatrixDescriptor &d, bool mnMajor, int mn, int k) -> double {
    const uint32_t off = wgmmaOperandAddress(d, mnMajor, mn, k, eb);
    if (off % eb || (size_t)off + eb > w.ldsSize) {
      if (check && ok) {
        ++w.oob;
        w.shared->message(OutOfBounds, [&] { return std::string("out-of-bounds: " + w.where(*w.cur) + ": wgmma operand element at shared-window address " +
                                           std::to_string(off) + " is outside the kernel's LDS or misaligned"); });
      }
      ok = false;
      return 0.0;
    }
    if (check) {
      checkRace(w, off, eb, false);
      checkInitialized(w, off, eb, false);
      checkPendingCopies(w, off, eb, false);
    }
    uint16_t bits = 0;
    memcpy(&bits, w.ldsBase + off, eb);
    return value(bits);
  };
  // Rows of A this lane's elements lie in (r / 2 % 2 = 0, 1), columns of B (r / 4, r % 2).
  // The register form: A[row h][k] is half k % 2 of register h + 2 (k / 8) of
  // quad lane k % 8 / 2 (the mma.m16n8k16 A fragment).
  double a[2][32], b[128][32];
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < kSteps; ++k)
      a[h][k] = aInRegisters ? value((uint16_t)(p.aQuad[4 * (k % 8 / 2) + h + 2 * (k / 8)] >> (16 * (k % 2))))
                             : element(da, false, wgmmaRow(l, 2 * h), k);
  for (int j = 0; j < p.n / 4; ++j)
    for (int k = 0; k < kSteps; ++k)
      b[j][k] = element(db, p.mnMajorB != 0, wgmmaCol(l, 4 * (j / 2) + j % 2), k);
  // Products of 16- and 8-bit float values are exact in double; the dot
  // product is summed in double and added to C with one rounding to f32 (as
  // for mma.sync). The GPU's fp8 wgmma accumulates with fewer bits
  // (docs/hardware.md "NVIDIA Hopper"); the kernels' tolerances cover it.
  out.resize(p.n / 2);
  for (int r = 0; r < p.n / 2; ++r) {
    const int h = r / 2 % 2, j = 2 * (r / 4) + r % 2;
    double sum = 0;
    for (int k = 0; k < kSteps; ++k)
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

/// Queues one lane's share of a wgmma (A through descA, or in the registers aQuad).
void issueWgmma(int type, int n, int mnMajorB, unsigned long long descA, unsigned long long descB,
                std::vector<uint32_t> aQuad, float *d, int scaleD) {
  Worker *w = tWorker;
  Lane &lane = *w->cur;
  ++w->laneInstr;
  if (w->job->waveSize != 32 || w->job->config.threadsPerBlock % 128 != 0) {
    reportInvalidWgmma(*w, "needs warps of 32 lanes in whole warpgroups of 4 (block of " +
                               std::to_string(w->job->config.threadsPerBlock) + " threads)");
    return;
  }
  if (type < 0 || type > 3 || n < 8 || n > 256 || n % 8 || (type >= 2 && mnMajorB)) {
    reportInvalidWgmma(*w, "m64n" + std::to_string(n) + (type >= 2 ? "k32" : "k16") + " with operand type " +
                               std::to_string(type) + (mnMajorB ? " and B MN-major" : "") + " does not exist");
    return;
  }
  if (lane.accTouchedSinceFence)
    reportInvalidWgmma(*w, "issued after an access to accumulator registers with no wgmma.fence in between "
                           "(PTX ISA: wgmma.fence orders register accesses before wgmma.mma_async)");
  PendingWgmma p{d, type, n, mnMajorB, descA, descB, {}, {}, std::move(aQuad)};
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

void abiWgmma(int type, int n, int mnMajorB, unsigned long long descA, unsigned long long descB, float *d, int scaleD) {
  issueWgmma(type, n, mnMajorB, descA, descB, {}, d, scaleD);
}

void abiWgmmaRs(int type, int n, int mnMajorB, const unsigned *quad, unsigned long long descB, float *d, int scaleD) {
  issueWgmma(type, n, mnMajorB, 0, descB, std::vector<uint32_t>(quad, quad + 16), d, scaleD);
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

} // namespace tilec::emu::detail
