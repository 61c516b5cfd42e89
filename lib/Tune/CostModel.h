// The autotuner's cost model: ranks GEMM candidates where no GPU can time
// them. A roofline per "round" of resident workgroups, against the peak
// figures of docs/hardware.md section 7. Assumptions: docs/autotuning.md.
#pragma once

#include "Model/AsmModel.h"
#include "Target/Target.h"
#include "Tune/Space.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tilec::tune {

/// Whole-device figures for one target: lib/Model's device facts
/// (docs/hardware.md sections 7 and 11), one table for the tuner and the
/// compiled-code model. A "unit" is what holds workgroups and shares one LDS:
/// a CU on CDNA, a WGP (2 CUs, 4 SIMDs) on gfx11.
using DevicePeaks = model::DeviceFacts;

/// Cycles each k step costs a round beyond its matrix and memory work: the
/// step's two workgroup barriers and loop control, which the waves of one
/// workgroup cannot overlap with their own matrix instructions (an assumption).
constexpr double kKStepOverheadCycles = 100;

/// The figures for `arch` where the tuner's GEMM model applies (gfx942:
/// MI300X; gfx90a: one MI250X GCD; gfx1151: Strix Halo), or nullptr.
const DevicePeaks *devicePeaks(std::string_view arch);

/// Peak dense FLOP/s of `peaks`' device for inputs of type `t`: the best
/// matrix instruction's 2*m*n*k / cycles per SIMD, over every SIMD.
double peakFlops(const TargetInfo &target, const DevicePeaks &peaks, ElemType t);

/// Workgroups of `waves` waves resident on one unit at once: the register
/// limit (waves per SIMD, section 6) times the unit's SIMDs, divided among
/// workgroups, capped by LDS. 0 when one workgroup does not fit.
int residentWorkgroups(const TargetInfo &target, const DevicePeaks &peaks, int vgpr, int agpr,
                       int64_t ldsBytes, int waves);

/// A compiled (or predicted) candidate, as the model sees it.
struct CostInputs {
  GemmProblem problem;
  GemmTile tile;
  MatrixTiling tiling;       ///< the instruction and wave grid the compiler chose
  int workgroupsPerUnit = 1; ///< residentWorkgroups() of the compiled kernel
};

struct CostEstimate {
  double seconds = 0;        ///< modelled kernel time
  double computeSeconds = 0; ///< matrix cores and LDS, summed over rounds
  double memorySeconds = 0;  ///< global loads and stores, summed over rounds
  double pctOfPeak = 0;      ///< 2*M*N*K / seconds over peakFlops(), in percent
  int64_t workgroups = 0;    ///< ceil(M/block_m) * ceil(N/block_n)
  int64_t rounds = 0;        ///< ceil(workgroups / (units * workgroupsPerUnit))
  bool memoryBound = false;  ///< memory exceeds compute in a full round
  // What the time is made of, over the whole launch (for reports):
  double matrixInstructions = 0;  ///< matrix instructions issued, padded tiles included
  double matrixCycles = 0;   ///< their SIMD cycles (count x the instruction's cycles)
  double globalBytes = 0;    ///< bytes every workgroup loads and stores through L2
  double memoryBytes = 0;    ///< distinct bytes the rounds read from and write to memory
};

/// Modelled time of one GEMM launch (see docs/autotuning.md, "Cost model").
CostEstimate modelGemm(const CostInputs &in, const TargetInfo &target, const DevicePeaks &peaks);

} // namespace tilec::tune
