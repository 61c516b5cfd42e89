// HIP C++ emission from tile IR that has been through the target pipeline.
#pragma once

#include "Emit/Prelude.h"
#include "Target/Target.h"
#include "tilec/tensor_map.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tilec {

/// One LDS tile as laid out (tilec-allocate-lds) and declared, for the
/// report (tilec::LdsTileReport).
struct EmittedLdsTile {
  std::string name;          ///< the tile's name in the IR
  std::string role;          ///< "A" or "B" for a gemm operand, else empty
  int64_t bytes = 0;         ///< all its buffers
  int readBytes = 0;         ///< bytes per LDS read of a gemm operand (0: no gemm reads it)
  int writeBytes = 0;        ///< bytes per LDS write of its loads
  int64_t bankConflicts = 0; ///< modelled extra LDS cycles
};

/// A tensor map a kernel takes (tensor copies, docs/hardware.md "Tensor
/// copies"): right after the extents of tensor argument `arg`.
struct EmittedTensorMap {
  unsigned arg = 0;
  TensorMapBox box;
  bool operator==(const EmittedTensorMap &o) const { return arg == o.arg && box == o.box; }
};

struct EmittedKernel {
  std::string name;       ///< kernel symbol: the function name + "_" + arch
  std::string source;     ///< HIP C++; includes "tilec_prelude.h"
  int numWaves = 0;
  int waveSize = 0;
  int64_t ldsBytes = 0;
  std::vector<std::array<int64_t, 3>> grid;  ///< (arg, axis, tile) per grid axis
  /// C types of the kernel's parameters in order (e.g. "const tl::bf16 *",
  /// "int", "float"): a tensor is a pointer followed by one int per dimension
  /// and, where tensorMaps names it, its tensor map.
  std::vector<std::string> paramTypes;
  /// Compiler options for this kernel, after the JIT's defaults (-O3).
  /// Kernels without elementwise register arithmetic (no tile.map, reduce,
  /// mask, iota or scatter: the GEMMs) get -O2 -fno-slp-vectorize: for them
  /// the code objects came out identical on gfx942 and gfx90a (gfx1151: block
  /// order only) and the JIT does a fifth less work; the SLP vectorizer is
  /// what packs elementwise f32 math into v_pk_* instructions, so the others
  /// keep -O3.
  std::vector<std::string> jitOptions;
  /// The tensor maps among the parameters (paramTypes "tl::hw::tma_map").
  std::vector<EmittedTensorMap> tensorMaps;
  /// The LDS tiles with their access widths, for the report.
  std::vector<EmittedLdsTile> ldsTiles;
  /// The kernel asks for its accumulators in arch VGPRs (EmitOptions): it
  /// then has at most 256 registers per lane.
  bool vgprAccumulators = false;
};

struct EmitOptions {
  /// On targets with AGPRs, a kernel whose vector ALU reads and rescales
  /// accumulators inside the loop that accumulates them (attention's
  /// softmax) asks for them in arch VGPRs, where clang selects the MFMAs'
  /// VGPR form: no v_accvgpr moves. That caps the kernel at 256 registers
  /// per lane; the driver compiles again without it where that spills.
  bool vgprAccumulators = true;
};

/// Emits `kernel` as HIP C++ for `target`. Unsupported constructs are reported
/// as diagnostics on the offending op and yield failure.
mlir::FailureOr<EmittedKernel> emitHIP(mlir::func::FuncOp kernel, const TargetInfo &target,
                                       const EmitOptions &options = {});

} // namespace tilec
