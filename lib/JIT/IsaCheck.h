// ISA-level checks of AMDGPU code objects: properties of the machine code
// that the compiler's correctness rests on but that neither the HIP text nor
// a run in the emulator can show (docs/design.md section 5, "ISA checks").
//
// The code is decoded with LLVM MC into a small program model (per
// instruction: its 32-bit register slots read and written, its successors)
// and checked on every control-flow path:
//   - lds-barrier:  every s_barrier that an LDS write can reach is preceded,
//                   on each such path, by an s_waitcnt with lgkmcnt(0) after
//                   the write (otherwise another wave may read LDS the write
//                   has not reached);
//   - buffer-rsrc:  word 3 of every buffer instruction's descriptor is the
//                   target's TargetInfo::bufferRsrcFlags (an s_mov_b32 of that
//                   constant, possibly through register copies);
//   - matrix-operands: every register of a matrix instruction's A and B
//                   operands is written before it on every path, and an
//                   operand that an LDS read produced is produced by LDS
//                   reads only, through register copies (the matrix
//                   instruction reads what the ds_reads loaded, not a stale
//                   or unrelated register).
#pragma once

#include "Target/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilec::jit {

/// A 32-bit register: 'v' (VGPR), 'a' (AGPR) or 's' (SGPR) and its number;
/// or 'l', one lane of a VGPR that SGPRs are spilled to (VGPR * 64 + lane).
/// File 0: no register.
struct RegSlot {
  char file = 0;
  int index = 0;
  bool operator==(const RegSlot &o) const { return file == o.file && index == o.index; }
  bool operator<(const RegSlot &o) const { return file != o.file ? file < o.file : index < o.index; }
};

/// One decoded instruction.
struct IsaInstr {
  uint64_t address = 0;
  std::string text;      ///< as the disassembler prints it
  std::string mnemonic;  ///< first word of `text`
  std::vector<RegSlot> defs, uses;
  /// The register operands in operand order, each as its slots (defs first).
  std::vector<std::vector<RegSlot>> regOperands;
  /// The immediate of a move of a constant (s_mov_b32 / v_mov_b32 of an
  /// immediate), else unset.
  bool hasImmediate = false;
  int64_t immediate = 0;
  /// A register copy (s_mov, v_mov, v_dual_mov, v_accvgpr_read/write,
  /// v_pk_mov_b32 of a 64-bit pair, v_readfirstlane_b32, v_writelane_b32 /
  /// v_readlane_b32 of an SGPR spill): the slot each of `defs` is copied
  /// from (file 0: that def is not a copy). Empty for anything else.
  std::vector<RegSlot> copyFrom;
  bool ldsWrite = false;    ///< a DS instruction that stores to LDS
  bool ldsRead = false;     ///< ds_read* / ds_load*
  bool lgkmDrained = false; ///< waits until no LDS/scalar-memory access is outstanding
  bool barrier = false;     ///< s_barrier
  bool matrix = false;      ///< v_mfma*, v_smfmac*, v_wmma*, v_swmmac*
  bool buffer = false;      ///< buffer_load*, buffer_store*, buffer_atomic* (MUBUF memory access)
  std::vector<size_t> successors;  ///< indices into IsaProgram::instrs
};

struct IsaProgram {
  std::vector<IsaInstr> instrs;  ///< the text section in address order; instrs[0] is the entry
};

/// Decodes the executable section of `elf` (a code object, or a relocatable
/// object with one kernel) for `target`. An undecodable word is an error.
llvm::Expected<IsaProgram> decodeProgram(llvm::ArrayRef<char> elf, const TargetInfo &target);

/// One violated property: which check, where, and why.
struct IsaViolation {
  std::string check;  ///< lds-barrier, buffer-rsrc, matrix-operands
  uint64_t address = 0;
  std::string message;
};

/// The three checks above; empty when the program passes.
std::vector<IsaViolation> checkIsa(const IsaProgram &program, const TargetInfo &target);

/// matrix-from-lds: for kernels whose matrix operands are all LDS tiles (a
/// GEMM's A and B), every A and B register of every matrix instruction is
/// made, on every path, of bits LDS reads loaded: through register copies
/// and the bit packing that pairs 16-bit elements (v_lshl_or_b32,
/// v_perm_b32, ...), never a computed value or a constant.
std::vector<IsaViolation> checkMatrixOperandsFromLds(const IsaProgram &program);

/// "check at 0x1a2c: message", one per line.
std::string formatViolations(const std::vector<IsaViolation> &violations);

} // namespace tilec::jit
