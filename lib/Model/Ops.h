// The model's view of one instruction, shared by the AMD and PTX readers, and
// the in-order simulation of one wave that prices a range of them (Ops.cpp).
#pragma once

#include "Model/AsmModel.h"

#include <vector>

namespace tilec::model::detail {

enum class OpKind {
  Matrix,      ///< v_mfma / v_wmma / mma.sync
  Valu,        ///< vector ALU
  Salu,        ///< scalar ALU, branches, everything else that only takes an issue slot
  Lds,         ///< LDS / shared-memory access
  GlobalLoad,  ///< vector memory load (cp.async included)
  GlobalStore,
  ScalarLoad,  ///< s_load / s_buffer_load (lgkm counter)
  Wait,        ///< s_waitcnt, cp.async.wait_group
  Commit,      ///< cp.async.commit_group: closes a group of copies
  Barrier,
};

struct Op {
  OpKind kind = OpKind::Salu;
  double matrixCycles = 0, matrixFlops = 0;
  double ldsCycles = 0;   ///< phases of an LDS access (no conflicts)
  double bytes = 0;       ///< bytes a memory op moves for the whole wave
  int extraIssueCycles = 0; ///< s_nop N waits N+1 cycles
  /// Wait: the most operations of each kind that may stay outstanding (-1: no
  /// wait on that counter). AMD: vmcnt / lgkmcnt; PTX: cp.async groups in `vm`.
  int waitVm = -1, waitLgkm = -1;
  /// Earlier loads whose results this instruction reads (PTX scoreboard).
  std::vector<size_t> deps;
  /// Branch: the instruction it may jump to; -1: not a branch.
  long branchTo = -1;
  /// A loop counter's compare with a constant ("setp.lt.u32 %p, %r7, 3840"):
  /// the register, the constant and whether equality still loops (le).
  std::string compareReg;
  int64_t compareLimit = 0;
  bool compareInclusive = false;
  /// A step by a constant ("add.s32 %r9, %r7, 256"): the register written,
  /// the one read and the step.
  std::string stepDst, stepSrc;
  int64_t step = 0;
};

/// Iterations of the loop ops[first..last] when its exit test compares a
/// counter stepped by a constant with a constant (counting from below one
/// step: the usual lane or thread offset); 0 when the code does not say.
double constantTrips(const std::vector<Op> &ops, size_t first, size_t last);

/// Prices ops[first..last] for one wave: counts, LDS cycles, bytes, and the
/// in-order chain (`iterations` passes; the cost of the last pass, so that a
/// loop's loads issued in one pass and waited for in the next are priced in
/// steady state). `asyncGroups`: vm waits count committed groups (PTX
/// cp.async), not single loads.
IterationCost priceRange(const std::vector<Op> &ops, size_t first, size_t last, int iterations,
                         const DeviceFacts &device, bool asyncGroups, const std::vector<bool> *skip = nullptr);

/// Loops from backward branches, the main one (most matrix cycles, then most
/// memory traffic, then the innermost) and the code outside it.
CodeCost findLoops(const std::vector<Op> &ops, const DeviceFacts &device, bool asyncGroups);

} // namespace tilec::model::detail
