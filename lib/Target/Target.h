// Target descriptions: architecture facts as data (docs/hardware.md), never #ifdefs.
// Pure C++; no MLIR or LLVM headers, so every layer (passes, emitter, JIT,
// emulator) can share it cheaply.
#pragma once

#include "tilec/arch.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

/// FP8E4M3FNUZ / FP8E5M2FNUZ: AMD gfx942's fp8 and bf8; FP8E4M3FN / FP8E5M2:
/// the OCP formats (NVIDIA's e4m3 and e5m2). lib/Target/Float8.h decodes them.
enum class ElemType { F32, F16, BF16, FP8E4M3FNUZ, FP8E5M2FNUZ, FP8E4M3FN, FP8E5M2, I8, I32 };

std::string_view elemTypeName(ElemType t);  // "f32", "bf16", ...
std::optional<ElemType> parseElemType(std::string_view s);
int elemTypeBytes(ElemType t);

/// MFMA: AMD CDNA (wave64); WMMA: AMD RDNA 3 (wave32); MMA: NVIDIA's warp-level
/// `mma.sync` (warp of 32, PTX ISA "Matrix Fragments for mma.m16n8k16");
/// WGMMA: NVIDIA's warpgroup-level `wgmma.mma_async` (sm_90a: 4 warps issue
/// it together; A and B are read from shared memory through 64-bit matrix
/// descriptors, so no lane holds operand elements; PTX ISA "Asynchronous
/// Warpgroup Level Matrix Multiply-Accumulate").
enum class MatrixFamily { MFMA, WMMA, MMA, WGMMA };

/// Which vendor's hardware layer, compiler and runtime a target uses.
enum class Vendor { AMD, NVIDIA };

struct MatrixInstr;

/// Where a matrix instruction's operand and accumulator elements live: element
/// `r` of lane `l`'s registers -> matrix coordinates (docs/hardware.md sections
/// 1-2; NVIDIA: the PTX ISA's mma.m16n8k16 and wgmma m64nNk16 fragments). One
/// set per register layout (lib/Target/Target.cpp), shared by the instructions
/// that use it; tests/data/matrix-layouts holds the vendors' tables they are
/// checked against (tests/unit/target/LayoutTableTest.cpp). The device
/// prelude's atoms and the emulator restate these formulas on purpose: the
/// emulator is the oracle, checked against the same tables.
struct LaneMaps {
  /// Row of A (`b` false) or column of B (`b` true) in operand element `r`
  /// of lane `l`.
  int (*operandMN)(const MatrixInstr &mi, bool b, int l, int r);
  /// k index of operand element `r` of lane `l`.
  int (*operandK)(const MatrixInstr &mi, bool b, int l, int r);
  /// Row and column of D in accumulator element `r` of lane `l` (for a
  /// warpgroup instruction, `l` counts over all of its waves' lanes).
  int (*dRow)(const MatrixInstr &mi, int l, int r);
  int (*dCol)(const MatrixInstr &mi, int l, int r);
};

/// One matrix instruction, described as data: everything selection, layout
/// inference, LDS planning, the emitter, the emulator and the cost models read
/// about it. Rows live in the targets' tables (lib/Target/Target.cpp);
/// adding an instruction is a row here plus its atom in the device prelude's
/// hardware layers (docs/design.md).
struct MatrixInstr {
  std::string name;     ///< ISA mnemonic, e.g. v_mfma_f32_32x32x8_bf16 (what disassembly and PTX print)
  std::string builtin;  ///< what the hardware layer calls, e.g. __builtin_amdgcn_mfma_f32_32x32x8bf16_1k
  MatrixFamily family;
  int m, n, k;
  ElemType aType;       ///< A and B share a type
  ElemType accType;
  int kPerLane;         ///< A elements one lane holds per instruction (0: operands in shared memory)
  int bPerLane;         ///< B elements one lane holds (mma.sync: half of A's)
  int accPerLane;       ///< accumulator elements one lane holds
  /// Consecutive operand elements of a lane that are consecutive in k: the
  /// longest run one LDS read can move (all of them on AMD, pairs for mma).
  int kRun;
  int cycles;           ///< issue cycles (docs/hardware.md section 1); WGMMA: SM cycles of one warpgroup instruction
  int waveSize;         ///< lanes of the wave (warp) that issues it: wave64 MFMA, wave32 WMMA, warps of 32
  /// Waves that issue one instruction together: 1, or 4 for a warpgroup
  /// (WGMMA). The accumulator layout's lane `l` then counts over all of them
  /// (0..127), and wave grids tile C over groups of `waves` waves.
  int waves = 1;
  const LaneMaps *lanes;  ///< its register layouts
  /// The device prelude's atom (tilec_atoms.h) the emitter instantiates as
  /// tl::ATOM<element type> (tl::ATOM<element type, N> when `atomTakesN`).
  std::string_view atom;
  bool atomTakesN = false;
  /// The emulator's op code (tilec_hw_emu.h, tl_emu_matrix_op) that the
  /// emulator prelude's hardware function for it passes; -1 when the emulator
  /// models it through its own entry point (wgmma).
  int emuOp = -1;
  /// The PTX ISA version (times 10) the instruction needs, for NVIDIA rows
  /// newer than the compiler's default (PTX ISA 8.0); 0 for none.
  int ptxVersion = 0;
  /// A elements one lane holds in the register form of a warpgroup
  /// instruction's A operand (wgmma's `d, {a0, a1, a2, a3}, b-desc, ...`: 8,
  /// at operandMN / operandK); 0 where A is only read from shared memory.
  int aRegsPerLane = 0;
  /// A warpgroup instruction that reads both operands K-major from shared
  /// memory: wgmma with 8-bit operands has no transposed (MN-major) B and no
  /// register form, so B must be given as N x K.
  bool kMajorOperandsOnly = false;

  /// Elements of A (`b` false: element r of lane l is A[mn][k]) or B (`b`
  /// true: B[k][mn]) one lane holds per instruction.
  int operandElems(bool b) const { return b ? bPerLane : kPerLane; }
  /// Row of A (column of B) of operand element `r` of lane `l`.
  int operandMN(bool b, int l, int r) const { return lanes->operandMN(*this, b, l, r); }
  /// k index of operand element `r` of lane `l`.
  int operandK(bool b, int l, int r) const { return lanes->operandK(*this, b, l, r); }
  /// Row of D in accumulator element `r` of lane `l`.
  int dRow(int l, int r) const { return lanes->dRow(*this, l, r); }
  /// Column of D in accumulator element `r` of lane `l`.
  int dCol(int l, int r) const { return lanes->dCol(*this, l, r); }
  /// Whether A and B come from shared memory through descriptors (WGMMA)
  /// rather than from registers.
  bool operandsInSharedMemory() const { return family == MatrixFamily::WGMMA; }
  /// Whether the instruction can ignore its accumulator input (wgmma's
  /// scale-d): C = A * B then needs no zeroed C before it.
  bool canIgnoreAccumulator() const { return family == MatrixFamily::WGMMA; }
  int operandKRun() const { return kRun; }
  /// Consecutive k steps of a gemm over a k tile of `kTile` that one LDS read
  /// of a lane's operands serves, when a wave holds `operands` operands per k
  /// step (its tiles of A and B, TM + TN): 2 for an MFMA whose lane operand
  /// is 8 bytes when the k tile holds whole pairs of steps and `operands` is
  /// at most 4, else 1. With 2, lane l reads the 2 * kPerLane elements from
  /// k0 + 2 * operandK(l, 0) (one 16-byte read), the first kPerLane for step
  /// k0 and the rest for step k0 + k: A and B take the same k for the same
  /// lane, step and element, so each pair of steps sums over its 2k indices
  /// in another order and the product is unchanged (docs/hardware.md
  /// section 1). A pair doubles the registers of a step's operands, which
  /// clang's scheduler hoists: past 4 operands (16 VGPRs) that costs more
  /// than the reads save (attention's 1 x 8 operands: 176 VGPRs to 256 on
  /// gfx942). The device prelude's gemm (tilec_gemm.h, k_steps_per_read)
  /// restates this rule.
  int kStepsPerRead(int64_t kTile, int64_t operands) const {
    return family == MatrixFamily::MFMA && kPerLane * elemTypeBytes(aType) == 8 && kTile % (2 * k) == 0 &&
                   operands <= 4
               ? 2
               : 1;
  }
};

/// Whether `use`'s A operand can be read straight from registers holding
/// accumulators of `acc` for the same rows, the accumulators of consecutive
/// n-tiles side by side. With E = acc.accPerLane, a = the A elements one lane
/// holds (kPerLane; aRegsPerLane for a warpgroup) and q = k0 * E / acc.n + r,
/// it holds when for every lane l, A element r < a and k block k0:
///
///   (use.operandMN(l, r), k0 + use.operandK(l, r))
///       == (acc.dRow(l, q % E), (q / E) * acc.n + acc.dCol(l, q % E)),
///
/// which needs the same waves and rows (acc.waves == use.waves, acc.m ==
/// use.m) and as many A elements per lane as accumulators over use.k columns
/// (a * acc.n == use.k * E). True for NVIDIA's mma.m16n8k16 after itself (two
/// adjacent m16n8 accumulators are one A fragment) and for wgmma's register-A
/// form after any wgmma of the same rows (its accumulator is mma's, repeated
/// every 8 columns, and so is its A fragment); false for MFMA and WMMA, whose
/// accumulators are transposed to their operands.
inline bool accumulatorHoldsOperandA(const MatrixInstr &acc, const MatrixInstr &use) {
  const int aElems = use.waves == 1 ? use.kPerLane : use.aRegsPerLane;
  if (acc.waves != use.waves || aElems == 0 || acc.m != use.m || aElems * acc.n != use.k * acc.accPerLane ||
      (use.k % acc.n && acc.n % use.k))
    return false;
  const int lanes = acc.waveSize * acc.waves;
  const int span = std::max(acc.n, use.k);  // k blocks until the pattern repeats
  for (int k0 = 0; k0 < span; k0 += use.k)
    for (int l = 0; l < lanes; ++l)
      for (int r = 0; r < aElems; ++r) {
        const int q = k0 * acc.accPerLane / acc.n + r, e = q % acc.accPerLane, tile = q / acc.accPerLane;
        if (acc.dRow(l, e) != use.operandMN(false, l, r) ||
            tile * acc.n + acc.dCol(l, e) != k0 + use.operandK(false, l, r))
          return false;
      }
  return true;
}

/// A target: wave size, LDS, banks, register file, matrix instructions.
struct TargetInfo {
  std::string arch;        ///< gfx942, gfx90a, gfx1151, sm_90a
  std::string marketing;   ///< MI300X, ...
  Vendor vendor;
  int waveSize;            ///< lanes of a wave (NVIDIA: a warp)
  int ldsBytesPerWorkgroup; ///< NVIDIA: shared memory per block (dynamic above 48 KiB)
  int ldsBytesPerCU;       ///< NVIDIA: per SM
  int ldsBanks;            ///< 4-byte banks
  int maxWavesPerSIMD;     ///< NVIDIA: warps per SM sub-partition (scheduler)
  int vgprFile;            ///< VGPRs per lane per SIMD (incl. AGPRs on CDNA); NVIDIA: registers per lane per sub-partition
  int vgprGranule;
  int maxVgprPerWave;      ///< arch VGPRs
  bool hasAgprs;
  /// VGPRs per lane that pipelining keeps free for everything but
  /// accumulators and register-prefetched tiles (operand fragments, addresses,
  /// loop state) when it decides whether a register prefetch fits. AMD: 128
  /// (the default GEMM on gfx1151, 128 accumulator VGPRs + 32 prefetch VGPRs,
  /// spills with register prefetch and fits without it).
  int reservedVgprs = 128;
  std::vector<MatrixInstr> matrixInstrs;
  /// Buffer resource word 3 (docs/hardware.md section 4).
  unsigned bufferRsrcFlags; ///< 0 on NVIDIA (no buffer resources)
  /// Largest global -> LDS copy that bypasses registers (NVIDIA cp.async: 16
  /// bytes); 0: none, tiles are staged through registers.
  int asyncCopyBytes = 0;
  /// Tensor copies (NVIDIA TMA: cp.async.bulk.tensor from a tensor map,
  /// completing on an mbarrier): async tile loads into a swizzled LDS layout
  /// the copy can write are issued as one (docs/hardware.md, "Tensor copies").
  bool hasTensorCopy = false;
  /// The f16/bf16 matrix instructions flush subnormal inputs and outputs to
  /// zero: CDNA2 (gfx90a). CDNA3 (gfx942) and gfx11's WMMA keep them.
  bool matrixFlushes16BitSubnormals = false;
  /// The 8-bit float formats kernels for the target may hold (in memory and
  /// tiles): AMD's fnuz ones (gfx942's fp8/bf8; the other AMD targets convert
  /// them in software) or the OCP ones (NVIDIA's e4m3/e5m2). The other
  /// family is an error (tilec-select-matrix-instr).
  enum class Fp8Formats { Fnuz, Ocp } fp8Formats = Fp8Formats::Fnuz;
  /// Whether `t` is an 8-bit float type of the other family than fp8Formats.
  bool lacksFp8Format(ElemType t) const {
    const bool fnuz = t == ElemType::FP8E4M3FNUZ || t == ElemType::FP8E5M2FNUZ;
    const bool ocp = t == ElemType::FP8E4M3FN || t == ElemType::FP8E5M2;
    return fp8Formats == Fp8Formats::Fnuz ? ocp : fnuz;
  }

  /// Waves per SIMD for a kernel using `vgpr` arch VGPRs and `agpr` AGPRs and
  /// `ldsBytes` of LDS per workgroup of `wavesPerWorkgroup` waves (section 6).
  int occupancy(int vgpr, int agpr, long ldsBytes, int wavesPerWorkgroup) const;
  /// Workgroups of `ldsBytes` of LDS each that one CU (NVIDIA: SM) holds at
  /// once; 0 when the kernel uses no LDS (no limit).
  long ldsWorkgroupsPerCU(long ldsBytes) const { return ldsBytes > 0 ? ldsBytesPerCU / ldsBytes : 0; }

  /// Wave-level matrix instructions that multiply `t` (in preference order:
  /// larger tiles first). Warpgroup instructions are not among them.
  std::vector<const MatrixInstr *> instrsFor(ElemType t) const;
  /// Warpgroup matrix instructions (WGMMA) that multiply `t`, larger N first.
  std::vector<const MatrixInstr *> warpgroupInstrsFor(ElemType t) const;
  /// The instruction called `name` (ISA mnemonic), or nullptr.
  const MatrixInstr *findInstr(std::string_view name) const;
};

/// The row of any known target whose emulator op code is `emuOp`, or nullptr
/// (rows sharing an op code describe the same operation: LayoutTableTest).
const MatrixInstr *findInstrByEmuOp(int emuOp);

/// A matrix instruction and how C is split over the waves (wm x wn).
struct MatrixTiling {
  const MatrixInstr *instr = nullptr;
  int wm = 1, wn = 1;
};

/// The choice of tilec-select-matrix-instr for C[m,n] += A[m,k] B[k,n] over
/// `waves` waves: the target's instructions for `t` in preference order, the
/// first whose k divides `k` and that tiles C over a grid wm x wn = waves
/// (grids tried most-square per-wave tile first, ties in increasing wm).
/// nullopt when none fits. Shared with the autotuner's pruning.
std::optional<MatrixTiling> selectMatrixTiling(const TargetInfo &target, ElemType t, int64_t m, int64_t n,
                                               int64_t k, int waves);

/// The known targets; nullptr for an unknown arch.
const TargetInfo *lookupTarget(std::string_view arch);
/// Every known target, in a fixed order (gfx942, gfx90a, gfx1151, sm_90a).
const std::vector<TargetInfo> &knownTargets();
/// "gfx942, gfx90a, gfx1151, sm_90a": for diagnostics.
std::string knownTargetsList();

} // namespace tilec
