// tilec hardware layer for the CPU wavefront emulator: host implementations
// of the operations in tilec_hw_amdgcn.h (same names, same semantics).
// Being written: see lib/Emu.
#pragma once
#error "the CPU wavefront emulator's hardware layer is not implemented yet"
