// Target descriptions: architecture facts as data (amd-targets.md), never #ifdefs.
// Pure C++; no MLIR or LLVM headers, so every layer (passes, emitter, JIT,
// emulator) can share it cheaply.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

enum class ElemType { F32, F16, BF16, FP8E4M3FNUZ, FP8E5M2FNUZ, I8, I32 };

std::string_view elemTypeName(ElemType t);  // "f32", "bf16", ...
std::optional<ElemType> parseElemType(std::string_view s);
int elemTypeBytes(ElemType t);

enum class MatrixFamily { MFMA, WMMA };

/// One matrix instruction, described as data. Layout formulas are in
/// amd-targets.md sections 1-2; `kPerLane` is the number of A (or B) elements a lane
/// holds per instruction and `accPerLane` the number of accumulator elements.
struct MatrixInstr {
  std::string name;     ///< ISA mnemonic, e.g. v_mfma_f32_32x32x8_bf16
  std::string builtin;  ///< clang builtin, e.g. __builtin_amdgcn_mfma_f32_32x32x8bf16_1k
  MatrixFamily family;
  int m, n, k;
  ElemType aType;       ///< A and B share a type
  ElemType accType;
  int kPerLane;
  int accPerLane;
  int cycles;           ///< issue cycles (calculator)
};

/// A target: wave size, LDS, banks, register file, matrix instructions.
struct TargetInfo {
  std::string arch;        ///< gfx942, gfx90a, gfx1151
  std::string marketing;   ///< MI300X, ...
  int waveSize;
  int ldsBytesPerWorkgroup;
  int ldsBytesPerCU;
  int ldsBanks;            ///< 4-byte banks
  int maxWavesPerSIMD;
  int vgprFile;            ///< VGPRs per lane per SIMD (incl. AGPRs on CDNA)
  int vgprGranule;
  int maxVgprPerWave;      ///< arch VGPRs
  bool hasAgprs;
  std::vector<MatrixInstr> matrixInstrs;
  /// Buffer resource word 3 (amd-targets.md section 4).
  unsigned bufferRsrcFlags;

  /// Waves per SIMD for a kernel using `vgpr` arch VGPRs and `agpr` AGPRs and
  /// `ldsBytes` of LDS per workgroup of `wavesPerWorkgroup` waves (section 6).
  int occupancy(int vgpr, int agpr, long ldsBytes, int wavesPerWorkgroup) const;

  /// Matrix instructions that multiply `t` (in preference order: larger tiles first).
  std::vector<const MatrixInstr *> instrsFor(ElemType t) const;
};

/// The known targets; nullptr for an unknown arch.
const TargetInfo *lookupTarget(std::string_view arch);
/// "gfx942, gfx90a, gfx1151": for diagnostics.
std::string knownTargetsList();

} // namespace tilec
