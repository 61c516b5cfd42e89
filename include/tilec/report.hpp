// Code-object report: what the compiled kernel costs on its target.
// Plain C++ (no LLVM/MLIR): part of the public API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilec {

/// One LDS tile of a kernel as the compiler laid it out: how wide its
/// accesses are (what tilec-allocate-lds chose) and what its bank-conflict
/// model counts.
struct LdsTileReport {
  std::string name;          ///< the DSL's tile name (e.g. a_lds)
  std::string role;          ///< "A" or "B" for a gemm operand, "conversion" for a layout conversion's, else empty
  int64_t bytes = 0;         ///< all its buffers
  int readBytes = 0;         ///< gemm operand reads: bytes per LDS read (0: not a gemm operand)
  int writeBytes = 0;        ///< bytes per LDS write of its loads
  int64_t bankConflicts = 0; ///< modelled extra LDS cycles per pass over the tile
};

/// Which JIT produced a code object.
enum class JitKind { HipRTC, Clang };
inline const char *jitName(JitKind k) { return k == JitKind::HipRTC ? "hipRTC" : "clang"; }

/// Facts read from a code object's AMDGPU metadata notes and its disassembly.
struct Report {
  std::string kernel;        ///< symbol name of the kernel
  std::string target;        ///< gfx942, gfx90a, gfx1151
  std::string jit;           ///< "hipRTC" or "clang"
  std::string compilerIdentity;  ///< e.g. "clang 19.1.7" or "hiprtc 5.2"
  int vgpr = 0;              ///< architectural VGPRs per lane
  int agpr = 0;              ///< accumulation VGPRs per lane (CDNA)
  int sgpr = 0;
  int64_t ldsBytes = 0;      ///< .group_segment_fixed_size
  int64_t scratchBytes = 0;  ///< .private_segment_fixed_size
  int vgprSpills = 0;
  int sgprSpills = 0;
  int waveSize = 0;
  int occupancy = 0;         ///< waves per SIMD (docs/hardware.md section 6, incl. LDS limit)
  int matrixInstructions = 0;  ///< v_mfma_* / v_wmma_* in the disassembly
  int64_t codeObjectBytes = 0;
  bool fromCache = false;
  std::vector<LdsTileReport> ldsTiles;  ///< from the compiler's layout of LDS, in tile order

  /// One JSON object (keys: kernel, target, jit, vgpr, agpr, sgpr, lds_bytes,
  /// scratch_bytes, vgpr_spills, sgpr_spills, wave_size, occupancy,
  /// matrix_instructions, code_object_bytes, cached, lds_tiles: [{name, role,
  /// bytes, read_bytes, write_bytes, bank_conflicts}]).
  std::string toJson() const;
  /// Human-readable multi-line summary.
  std::string toText() const;
};

} // namespace tilec
