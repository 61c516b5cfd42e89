// Cost model (docs/autotuning.md, "Cost model"). Per workgroup:
//   matrix cycles = (bm*bn*bk)/(m*n*k) * instr cycles * k steps, the waves'
//                   shares issued by the SIMDs they land on (round robin);
//   LDS cycles    = (tile writes + every wave's operand reads) / LDS B/clk;
//   global bytes  = A and B tiles per k step (rows/columns past the edge are
//                   not fetched) + C once, through the unit's L2 path.
// Workgroups run in rounds of units * resident workgroups (launch order: the
// M tiles of one N column, then the next column); each round costs
// max(compute, memory) (compute + memory when nothing can overlap them),
// plus a fixed overhead per k step (barriers, loop control).
// A round's memory time is the larger of its busiest unit's bytes over that
// unit's L2 bandwidth and the distinct A row panels and B column panels the
// round touches (each read from memory once; L2 / Infinity Cache serve the
// rest) over the device's memory bandwidth.
#include "Tune/CostModel.h"

#include <algorithm>
#include <cmath>

namespace tilec::tune {

const DevicePeaks *devicePeaks(std::string_view arch) {
  // The tuner's GEMM model (docs/autotuning.md) covers the AMD targets only;
  // tuneKernel refuses the others.
  const DevicePeaks *d = model::deviceFacts(arch);
  return d && arch.substr(0, 3) == "gfx" ? d : nullptr;
}

double peakFlops(const TargetInfo &target, const DevicePeaks &peaks, ElemType t) {
  double best = 0;
  for (const MatrixInstr *mi : target.instrsFor(t))
    best = std::max(best, 2.0 * mi->m * mi->n * mi->k / mi->cycles);
  return best * peaks.simdsPerUnit * peaks.units * peaks.clockHz;
}

int residentWorkgroups(const TargetInfo &target, const DevicePeaks &peaks, int vgpr, int agpr,
                       int64_t ldsBytes, int waves) {
  int wavesPerSimd = target.occupancy(vgpr, agpr, 0, waves);  // register limit only
  int64_t wgs = int64_t(wavesPerSimd) * peaks.simdsPerUnit / std::max(waves, 1);
  if (ldsBytes > 0)
    wgs = std::min<int64_t>(wgs, target.ldsBytesPerCU / ldsBytes);
  return static_cast<int>(std::max<int64_t>(wgs, 0));
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

CostEstimate modelGemm(const CostInputs &in, const TargetInfo &target, const DevicePeaks &peaks) {
  const GemmProblem &p = in.problem;
  const GemmTile &t = in.tile;
  const MatrixInstr &mi = *in.tiling.instr;
  const double inB = elemTypeBytes(p.in), outB = elemTypeBytes(p.out);

  CostEstimate e;
  const int64_t tilesM = ceilDiv(p.M, t.blockM), tilesN = ceilDiv(p.N, t.blockN);
  const int64_t kSteps = ceilDiv(p.K, t.blockK);
  e.workgroups = tilesM * tilesN;

  // One workgroup's work. Matrix instructions run on the padded tile.
  const double mfmaCycles = double(t.blockM * t.blockN * t.blockK) / (mi.m * mi.n * mi.k) * mi.cycles * kSteps;
  const double ldsBytes =
      kSteps * inB *
      (double(t.blockM * t.blockK + t.blockK * t.blockN) +                              // tile writes
       double(t.waves) * (t.blockM / in.tiling.wm + t.blockN / in.tiling.wn) * t.blockK); // operand reads
  const double ldsCycles = ldsBytes / peaks.ldsBytesPerClkPerUnit;
  // Bytes one workgroup loads (its A row panel and B column panel, on average
  // over edge tiles) and stores; and the panels' sizes in memory.
  const double aPanel = double(p.M) * p.K * inB / tilesM, bPanel = double(p.K) * p.N * inB / tilesN;
  const double cTile = double(p.M) * p.N * outB / e.workgroups;
  const double bytesPerWG = aPanel + bPanel + cTile;

  const int perUnit = std::max(in.workgroupsPerUnit, 1);
  const int64_t concurrent = int64_t(peaks.units) * perUnit;
  struct Round { double compute, memory, time, distinctBytes; };
  // A round with `w` workgroups on the busiest unit and `active` in all.
  auto round = [&](int64_t w, int64_t active) {
    int64_t wavesOnBusiestSimd = ceilDiv(w * t.waves, peaks.simdsPerUnit);
    double matrix = wavesOnBusiestSimd * (mfmaCycles / t.waves) / peaks.clockHz;
    double lds = w * ldsCycles / peaks.clockHz;
    double compute = std::max(matrix, lds);
    double distinct = std::min(tilesM, active) * aPanel + std::min(tilesN, ceilDiv(active, tilesM)) * bPanel +
                      active * cTile;
    double memory = std::max(distinct / peaks.hbmBytesPerSec,
                             w * bytesPerWG / (peaks.l2BytesPerClkPerUnit * peaks.clockHz));
    // Loads overlap matrix work when the k loop is pipelined or another wave
    // on the same SIMD can run meanwhile.
    bool overlap = t.stages >= 2 || w * t.waves >= 2 * peaks.simdsPerUnit;
    double overhead = kSteps * kKStepOverheadCycles / peaks.clockHz;
    return Round{compute, memory, (overlap ? std::max(compute, memory) : compute + memory) + overhead, distinct};
  };

  const int64_t full = e.workgroups / concurrent, rest = e.workgroups % concurrent;
  e.rounds = full + (rest ? 1 : 0);
  if (full) {
    Round r = round(perUnit, concurrent);
    e.seconds += full * r.time;
    e.computeSeconds += full * r.compute;
    e.memorySeconds += full * r.memory;
    e.memoryBytes += full * r.distinctBytes;
    e.memoryBound = r.memory > r.compute;
  }
  if (rest) {
    Round r = round(ceilDiv(rest, peaks.units), rest);
    e.seconds += r.time;
    e.computeSeconds += r.compute;
    e.memorySeconds += r.memory;
    e.memoryBytes += r.distinctBytes;
    if (!full)
      e.memoryBound = r.memory > r.compute;
  }
  e.matrixInstructions = double(t.blockM * t.blockN * t.blockK) / (mi.m * mi.n * mi.k) * kSteps * e.workgroups;
  e.matrixCycles = e.matrixInstructions * mi.cycles;
  e.globalBytes = bytesPerWG * e.workgroups;
  const double flops = 2.0 * p.M * p.N * p.K;
  e.pctOfPeak = 100.0 * flops / e.seconds / peakFlops(target, peaks, p.in);
  return e;
}

} // namespace tilec::tune
