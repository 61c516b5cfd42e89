// The emulator's model of the shared-memory operands of NVIDIA's warpgroup
// matrix instruction wgmma.mma_async (sm_90a): matrix descriptors decoded
// bit by bit and the byte address of every operand element in the canonical
// swizzled layouts (PTX ISA, "Matrix Descriptor Format" and "Shared Memory
// Matrix Layout"). Pure functions of the descriptor, so tests can check them
// against layouts written independently (tilec_lds.h's Lds::index).
#pragma once

#include <cstdint>
#include <string>

namespace tilec::emu {

/// A decoded 64-bit matrix descriptor.
struct MatrixDescriptor {
  uint32_t start = 0;      ///< bits 0-13, << 4: shared-window byte address
  uint32_t lbo = 0;        ///< bits 16-29, << 4: leading dimension byte offset
  uint32_t sbo = 0;        ///< bits 32-45, << 4: stride dimension byte offset
  int baseOffset = 0;      ///< bits 49-51
  int swizzleBytes = 0;    ///< bits 62-63: 0 none, 1 128-byte, 2 64-byte, 3 32-byte swizzle

  static MatrixDescriptor decode(uint64_t bits);
  /// Why the emulator cannot model this descriptor ("" when it can): only the
  /// swizzled layouts with base offset 0, the ones tilec's tiles produce, are modelled.
  std::string unsupported() const;
};

/// The shared-window byte address of element (mn, k) of an operand of
/// `elemBytes`-byte elements: row mn of A (column of B) and index k along K.
/// K-major: k runs along rows of S = swizzleBytes bytes, rows mn % 8 S apart,
/// 8-row groups SBO apart. MN-major: mn runs along rows of S bytes (columns
/// beyond S in blocks LBO apart), k % 8 picks the row, groups of 8 k SBO
/// apart. The swizzle then XORs address bits 4.. (the 16-byte chunk) with bits
/// 7.. (S / 16 values), as the hardware does on the absolute address.
uint32_t wgmmaOperandAddress(const MatrixDescriptor &d, bool mnMajor, int mn, int k, int elemBytes);

/// Row and column of D in accumulator element r of lane l (0..127) of the
/// warpgroup (PTX ISA, "WGMMA .m64nNk16 register fragment layout for
/// accumulator matrix D"): warp l / 32 holds rows 16 (l / 32)..; within it the
/// mma.m16n8 accumulator layout repeats every 8 columns.
inline int wgmmaRow(int l, int r) { return 16 * (l / 32) + (l % 32) / 4 + 8 * ((r / 2) % 2); }
inline int wgmmaCol(int l, int r) { return 8 * (r / 4) + 2 * (l % 4) + r % 2; }

} // namespace tilec::emu
