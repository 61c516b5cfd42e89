// Pruning: which points of the space are worth compiling, decided from the
// target's budgets before any compile (docs/autotuning.md, "Pruning").
#pragma once

#include "Target/Target.h"
#include "Tune/CostModel.h"
#include "Tune/Space.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tilec::tune {

enum class PruneReason { Kept, ProblemShape, MatrixTiling, Lds, Registers, Occupancy, ModelRank };
const char *pruneReasonName(PruneReason r);  ///< "kept", "problem shape", "matrix tiling", ...
constexpr int kNumPruneReasons = 7;

/// VGPRs per lane the model keeps free for operands, addresses and loop state
/// beside the accumulator.
constexpr int kRegisterReserve = 32;
/// Padding allowed per LDS tile row: tilec-allocate-lds pads or swizzles.
constexpr int64_t kLdsPaddingPerRow = 16;

/// LDS a point may need: the A and B tiles, unpadded, times the stages, plus
/// kLdsPaddingPerRow bytes for every tile row. An estimate for ranking before
/// compiling; the compiled kernel's report gives the real figure.
int64_t ldsBytesBound(const GemmTile &t, ElemType in);

/// LDS a point needs at least: the A and B tiles, unpadded, times the stages.
/// Pruning uses this bound, so that a tile whose layout needs no padding
/// (256x256x32 over 2 stages: exactly 64 KiB) is compiled and judged by its
/// report rather than dropped on the padding allowance.
int64_t ldsBytesLowerBound(const GemmTile &t, ElemType in);

/// f32 accumulator elements each lane holds: block_m*block_n / (waves*waveSize).
int64_t accumulatorsPerLane(const GemmTile &t, const TargetInfo &target);

struct PruneVerdict {
  PruneReason reason = PruneReason::Kept;
  std::string detail;                 ///< why, with the numbers (empty when kept)
  std::optional<MatrixTiling> tiling; ///< the predicted instruction (when it has one)
  int estimatedWorkgroupsPerUnit = 0; ///< from the register and LDS estimates
};

/// Checks, in order: problem shape (a block dimension larger than the next
/// power of two of its problem dimension, unless it is the smallest value the
/// space offers), matrix tiling (no instruction + wave grid tiles the block,
/// as tilec-select-matrix-instr decides), LDS (ldsBytesLowerBound over the
/// per-workgroup LDS), registers (accumulator over the target's room) and
/// occupancy (no workgroup fits on a unit). (ModelRank is the tuner's: a
/// point the cost model ranks below the candidates it compiles.)
PruneVerdict prune(const GemmTile &t, const GemmProblem &p, const GemmSpace &space,
                   const TargetInfo &target, const DevicePeaks &peaks);

} // namespace tilec::tune
