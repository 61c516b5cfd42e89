#include "Tune/Prune.h"

#include <algorithm>

namespace tilec::tune {

const char *pruneReasonName(PruneReason r) {
  switch (r) {
  case PruneReason::Kept: return "kept";
  case PruneReason::ProblemShape: return "problem shape";
  case PruneReason::MatrixTiling: return "matrix tiling";
  case PruneReason::Lds: return "LDS";
  case PruneReason::Registers: return "registers";
  case PruneReason::Occupancy: return "occupancy";
  case PruneReason::ModelRank: return "model rank";
  }
  return "?";
}

int64_t ldsBytesLowerBound(const GemmTile &t, ElemType in) {
  return (t.blockM * t.blockK + t.blockK * t.blockN) * elemTypeBytes(in) * t.stages;
}

int64_t ldsBytesBound(const GemmTile &t, ElemType in) {
  const int64_t rows = t.blockM + t.blockK;  // A has block_m rows, B block_k
  return ldsBytesLowerBound(t, in) + rows * kLdsPaddingPerRow * t.stages;
}

int64_t accumulatorsPerLane(const GemmTile &t, const TargetInfo &target) {
  const int64_t lanes = int64_t(t.waves) * target.waveSize;
  return (t.blockM * t.blockN + lanes - 1) / lanes;
}

namespace {

/// A dimension's tile is too big when it exceeds the next power of two of the
/// problem's extent (the rest would be zero padding); the space's smallest
/// value always stays.
template <class T>
bool tooBig(int64_t block, int64_t extent, const std::vector<T> &values) {
  int64_t smallest = *std::min_element(values.begin(), values.end());
  return block > smallest && block > nextPowerOfTwo(extent);
}

} // namespace

PruneVerdict prune(const GemmTile &t, const GemmProblem &p, const GemmSpace &space,
                   const TargetInfo &target, const DevicePeaks &peaks) {
  PruneVerdict v;
  auto fail = [&](PruneReason r, std::string detail) {
    v.reason = r;
    v.detail = std::move(detail);
    return v;
  };
  if (tooBig(t.blockM, p.M, space.blockM) || tooBig(t.blockN, p.N, space.blockN) ||
      tooBig(t.blockK, p.K, space.blockK))
    return fail(PruneReason::ProblemShape,
                "block " + std::to_string(t.blockM) + "x" + std::to_string(t.blockN) + "x" +
                    std::to_string(t.blockK) + " exceeds the problem's power-of-two class " +
                    shapeClass(p));

  v.tiling = selectMatrixTiling(target, p.in, t.blockM, t.blockN, t.blockK, t.waves);
  if (!v.tiling)
    return fail(PruneReason::MatrixTiling, "no " + target.arch + " matrix instruction for " +
                                               std::string(elemTypeName(p.in)) + " tiles " +
                                               std::to_string(t.blockM) + "x" + std::to_string(t.blockN) +
                                               "x" + std::to_string(t.blockK) + " over " +
                                               std::to_string(t.waves) + " waves");

  const int64_t ldsAtLeast = ldsBytesLowerBound(t, p.in);
  if (ldsAtLeast > target.ldsBytesPerWorkgroup)
    return fail(PruneReason::Lds, "LDS at least " + std::to_string(ldsAtLeast) + " B > " +
                                      std::to_string(target.ldsBytesPerWorkgroup) + " B per workgroup");
  // The estimate with padding, within what a workgroup can have (the report
  // of the compiled kernel replaces it).
  const int64_t lds = std::min<int64_t>(ldsBytesBound(t, p.in), target.ldsBytesPerWorkgroup);

  // The accumulator plus the reserve must fit in maxVgprPerWave (256) on
  // every target: on CDNA a 256-AGPR accumulator was measured to spill
  // (1088 B scratch for every such tile on gfx942), so AGPRs do not add room.
  const int64_t acc = accumulatorsPerLane(t, target);
  const int64_t room = target.maxVgprPerWave - kRegisterReserve;
  if (acc > room)
    return fail(PruneReason::Registers, std::to_string(acc) + " accumulator registers per lane > " +
                                            std::to_string(room));

  const int vgpr = target.hasAgprs ? kRegisterReserve : static_cast<int>(acc) + kRegisterReserve;
  const int agpr = target.hasAgprs ? static_cast<int>(acc) : 0;
  v.estimatedWorkgroupsPerUnit = residentWorkgroups(target, peaks, vgpr, agpr, lds, t.waves);
  if (v.estimatedWorkgroupsPerUnit < 1)
    return fail(PruneReason::Occupancy, "a workgroup of " + std::to_string(t.waves) +
                                            " waves does not fit on a unit");
  return v;
}

} // namespace tilec::tune
