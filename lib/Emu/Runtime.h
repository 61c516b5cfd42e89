// Internal to lib/Emu: the wavefront runtime behind Emulator::launch
// (scheduler, hardware-layer operations, checkers): Runtime.cpp,
// RuntimeMemory.cpp and RuntimeMatrix.cpp, over the state in RuntimeState.h.
#pragma once

#include "Emu/Emulator.h"

#define TL_EMU_ABI_ONLY
#include "Emit/prelude/tilec_hw_emu.h"
#undef TL_EMU_ABI_ONLY

#include <cstdint>
#include <string>
#include <vector>

namespace tilec::emu::detail {

/// One kernel argument as the generated entry point reads it (the same
/// struct is spelled out in the trampoline text, Emulator.cpp).
struct RawArg {
  void *p;
  long long i;
  double f;
};

/// Everything a launch needs besides the arguments.
struct GridJob {
  std::string kernelName;
  void (*entry)(const void *args) = nullptr;
  void *(*tlsProbe)() = nullptr;
  const RawArg *args = nullptr;
  LaunchConfig config;
  int waveSize = 64;
  int ldsBanks = 32;
  bool matrixFlushes16BitSubnormals = false;  ///< TargetInfo::matrixFlushes16BitSubnormals
  std::vector<Emulator::Allocation> allocations;  ///< sorted by begin
};

/// The table the kernel's hardware layer calls (tilec_emu_bind).
const tl_emu_abi *abiTable();

/// Runs every workgroup of `job` on worker threads and fills the report.
LaunchReport runGrid(const GridJob &job);

/// Extra LDS cycles of one wave-level LDS instruction (docs/hardware.md section 3):
/// `offsets[l]`/`bytes[l]` for each lane l of the wave, bytes 0 = lane inactive.
int64_t bankConflictCycles(const std::vector<uint32_t> &offsets, const std::vector<int> &bytes, int waveSize,
                           int banks);

} // namespace tilec::emu::detail
