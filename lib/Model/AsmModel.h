// A cost model that reads the compiled code (docs/cost-model.md): it finds a
// kernel's main loop in the assembly (AMD: the code object's disassembly;
// NVIDIA: the PTX), prices one iteration of it on one SIMD / SM sub-partition
// and on one CU / SM, and turns that into a kernel time with the occupancy,
// the number of workgroups over the device (last-round tail), the code
// outside the loop and an HBM bound. Every constant is a named fact of
// DeviceFacts (docs/hardware.md section 11, with its source).
//
// Pure C++ over text: no LLVM. The AMD input is the text lib/JIT's
// disassemble() prints (LLVM MC); the NVIDIA input is the PTX the JIT keeps.
#pragma once

#include "Target/Target.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::model {

/// Facts of one device that the model prices with (docs/hardware.md section 11).
struct DeviceFacts {
  std::string arch;            ///< gfx942, gfx90a, gfx1151, sm_90a
  std::string part;            ///< MI300X, H200, ...
  int units;                   ///< CUs (gfx11: WGPs; NVIDIA: SMs)
  int simdsPerUnit;            ///< SIMDs (NVIDIA: SM sub-partitions) per unit
  double clockHz;              ///< the clock the peak figures are quoted at
  double hbmBytesPerSec;       ///< memory bandwidth of the device
  double l2BytesPerClkPerUnit; ///< most one unit's loads take from L2 per clock
  double ldsBytesPerClkPerUnit;///< LDS / shared memory bandwidth of one unit (32 banks x 4 B)
  int issueCycles;             ///< cycles between two instructions of one wave
  /// AMD: a SIMD issues up to one instruction of each kind (VALU, SALU, LDS,
  /// vector memory, branch) from different waves at once; NVIDIA: one warp
  /// instruction per clock per sub-partition, whatever its kind.
  bool kindsIssueTogether;
  int valuCycles;              ///< cycles one VALU instruction holds its SIMD's vector ALU
  int globalLatencyCycles;     ///< a global load served by L2 (an assumption; see section 11)
  int ldsLatencyCycles;        ///< an LDS access without conflicts
  int scalarLoadLatencyCycles; ///< a scalar (constant) memory load
  /// What a launch costs beyond its work, as a harness that times launches
  /// with events sees it (0: not measured), and the bandwidth a device copy
  /// sustains (0: hbmBytesPerSec). Both are the fit of time = launchSeconds +
  /// bytes / sustainedBytesPerSec to device copies of 16 MiB to 4 GiB
  /// (docs/hardware.md section 11).
  double launchSeconds = 0;
  double sustainedBytesPerSec = 0;
};

/// The facts for `arch`, or nullptr.
const DeviceFacts *deviceFacts(std::string_view arch);

/// What one iteration of a loop costs one wave (NVIDIA: one warp).
struct IterationCost {
  int instructions = 0;      ///< every instruction of the body
  int matrixInstructions = 0;
  double matrixCycles = 0;   ///< cycles the body's matrix instructions hold the matrix core
  double matrixFlops = 0;    ///< 2*m*n*k summed over them
  int valuInstructions = 0;  ///< vector ALU (matrix instructions not included)
  int saluInstructions = 0;  ///< scalar ALU, branches and waits
  int ldsInstructions = 0;
  double ldsCycles = 0;      ///< LDS cycles at the accesses' widths (phases), no conflicts
  int globalLoads = 0;       ///< vector memory loads (NVIDIA: ld.global and cp.async)
  double globalLoadBytes = 0;
  double globalStoreBytes = 0;
  int barriers = 0;
  /// One wave running the body alone, in order, in steady state (the loop's
  /// prefetches in flight): issue slots, the matrix core's occupancy and every
  /// wait for a load (its latency less the work issued since).
  double chainCycles = 0;
  double exposedLatencyCycles = 0; ///< the part of chainCycles spent waiting for memory
};

/// A loop of the code: its instructions [first, last] in program order.
struct LoopInfo {
  size_t first = 0, last = 0;
  IterationCost cost;
};

/// A kernel's code as the model sees it: its loops, the main one, and what the
/// code outside the main loop costs once (prologue and epilogue).
struct CodeCost {
  std::vector<LoopInfo> loops;
  int mainLoop = -1;         ///< index into loops; -1: straight-line code
  IterationCost outside;     ///< the instructions outside the main loop, run once
  std::string error;         ///< non-empty: the code could not be read
};

/// Reads AMD disassembly (lib/JIT disassemble() text: one instruction per
/// line, "mnemonic operands // ADDRESS: WORDS").
CodeCost analyzeAmdAssembly(std::string_view disassembly, const TargetInfo &target, const DeviceFacts &device);

/// Reads PTX (one kernel).
CodeCost analyzePtx(std::string_view ptx, const TargetInfo &target, const DeviceFacts &device);

/// How the kernel is launched.
struct LaunchShape {
  int64_t workgroups = 1;
  int wavesPerWorkgroup = 1;
  /// Iterations of the main loop per workgroup (on average). 0: derived from
  /// `matrixFlopsPerWorkgroup` (the matrix work the loop performs, padding
  /// included) over the loop's matrix work per iteration of all waves, or else
  /// from `loadBytesPerWorkgroup` over its loaded bytes.
  double loopTrips = 0;
  double matrixFlopsPerWorkgroup = 0;
  double loadBytesPerWorkgroup = 0;
  /// Distinct bytes the launch must move to or from memory at least once.
  double hbmBytes = 0;
  /// Waves per SIMD (NVIDIA: warps per sub-partition) the compiled kernel's
  /// registers and LDS allow (the report's occupancy).
  int occupancy = 1;
  /// Workgroups whose LDS fits a unit at once (TargetInfo::ldsWorkgroupsPerCU;
  /// 0: no limit). It binds where workgroups have fewer waves than a unit has
  /// SIMDs: three one-wave workgroups per CU are an occupancy of 1.
  int64_t ldsWorkgroupsPerUnit = 0;
};

/// One term of the estimate, in seconds over the whole launch.
struct Term {
  std::string name;
  double seconds = 0;
};

struct KernelEstimate {
  double seconds = 0;         ///< predicted time of the launch
  std::string bound;          ///< the term that sets it
  std::vector<Term> terms;    ///< each bound as if alone (matrix, valu, issue, lds, l2, latency, hbm)
  double loopTrips = 0;       ///< iterations of the main loop per workgroup used
  int workgroupsPerUnit = 0;  ///< resident at once
  int64_t rounds = 0;         ///< ceil(workgroups / (units * workgroupsPerUnit))
  double tailFraction = 0;    ///< share of the device the last round leaves idle
  double loopSeconds = 0, outsideSeconds = 0;
  std::string error;
};

/// The kernel's time: per round of resident workgroups, the main loop's
/// iterations at the slowest of the SIMD terms (matrix core, VALU, issue, and
/// one wave's in-order chain) and the unit terms (LDS, L2), plus the code
/// outside the loop; over the rounds (the last one partial); at least the HBM
/// bytes over the memory bandwidth.
KernelEstimate estimateKernel(const CodeCost &code, const LaunchShape &launch, const DeviceFacts &device);

/// "0.412 ms, bound by matrix (matrix 0.40, lds 0.21, ...)".
std::string describe(const KernelEstimate &e);

} // namespace tilec::model
