// The LDS bank model of docs/hardware.md section 3: how many extra cycles one
// wave-wide LDS instruction costs. Shared by the LDS layout planner
// (tilec-allocate-lds), which chooses layouts by counting, and the CPU
// wavefront emulator, which reports what kernels actually do.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tilec {

/// One lane's part of an LDS instruction: `bytes` (1..16) at byte `offset`.
struct LdsLaneAccess {
  int lane;
  uint32_t offset;
  int bytes;
};

/// Phase of lane `l` for an access of `bytes` on a wave of `waveSize` lanes:
/// wave64 (gfx9) b32 2x32, b64 4x16 contiguous, b128 8x8 in the listed
/// non-contiguous groups; wave32 (gfx11) 1x32, 2x16, 4x8.
int ldsPhaseOf(int lane, int bytes, int waveSize);

/// Extra cycles of one wave instruction (the lanes' accesses in `acc`): each
/// phase costs the largest number of distinct dwords that land on one of
/// `banks` 4-byte banks (equal dwords broadcast); returns the sum of
/// (cost - 1) over the phases.
int64_t ldsConflictCycles(const LdsLaneAccess *acc, size_t n, int waveSize, int banks);

} // namespace tilec
