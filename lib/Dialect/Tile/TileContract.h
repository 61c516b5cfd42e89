// The contract between tilec's target passes and the HIP emitter: the names
// of the attributes the passes write on tile ops (beside the typed layouts of
// TileAttrs.td) and the accessors that read them. The emitter reads the IR
// through this header alone, never through the passes' internals.
#pragma once

#include "Dialect/Tile/TileDialect.h"
#include "Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include <optional>

namespace tilec {

/// Attribute names written by the target passes, beside the typed ones of
/// TileAttrs.td (a register tile's `layout` and a gemm's matrix instruction:
/// #tile.matrix, #tile.blocked, #tile.staging; an LDS tile's `lds`
/// placement, #tile.lds; a tile's `access` widths, #tile.access).
namespace pattr {
inline constexpr const char *kScratchOffset = "scratch_offset";  // i64 on tile.reduce: LDS byte offset of its scratch
inline constexpr const char *kInterleaveVmem = "interleave_vmem";  // i64 on tile.gemm: interleave; global loads per lane in its region
inline constexpr const char *kSetprio = "setprio";  // unit on tile.gemm: s_setprio 1 around its matrix instructions
/// i64 N on a warpgroup tile.gemm in a pipelined loop (tilec-pipeline-loops):
/// its instructions are left running while the ops after it issue; at the end
/// of each iteration the loop waits until at most N of its instruction groups
/// are in flight (0 or 1), and after the loop until none is.
inline constexpr const char *kMatrixGroupsInFlight = "matrix_groups_in_flight";
inline constexpr const char *kBankConflicts = "bank_conflicts";  // modelled extra LDS cycles
/// unit on an LDS tile.alloc: tilec-infer-layouts made it to read a register
/// tile in another layout (the report names its role "conversion").
inline constexpr const char *kLayoutConversion = "layout_conversion";
} // namespace pattr

/// Number of waves per workgroup of a kernel (`tile.num_waves`, default 4).
int numWavesOf(mlir::func::FuncOp f);

/// The alloc that defines a tile value, or null (e.g. a block argument).
tile::AllocOp allocOf(mlir::Value tile);
/// allocOf, looking through tile.view (a buffer of a multi-buffered tile).
tile::AllocOp rootAllocOf(mlir::Value tile);
/// The tensor a global tensor value is a window of (through tile.window),
/// itself when it is none: a kernel argument, usually.
mlir::Value rootTensorOf(mlir::Value tensor);

/// The matrix instruction tilec-select-matrix-instr chose for `g` (its
/// `#tile.matrix` layout's), or null before that pass or when `target` lacks it.
const MatrixInstr *matrixInstrOf(tile::GemmOp g, const TargetInfo &target);

/// The wave grid (rows, columns of waves) of a register tile's layout: a
/// matrix-instruction layout's `wave_grid` or a blocked layout's waves.
std::optional<std::pair<int64_t, int64_t>> waveGridOf(mlir::Operation *alloc);

/// The #tile.lds placement of an LDS tile's alloc, or null before
/// tilec-allocate-lds.
tile::LdsPlacementAttr placementOf(mlir::Operation *alloc);

/// The #tile.access widths tilec-allocate-lds recorded on an alloc (through
/// views); all 1 when it recorded none.
struct AccessWidths {
  int64_t load = 1;      ///< elements per global load of the tile.load ops filling the tile
  int64_t write = 1;     ///< elements per LDS write of those loads (the prelude's Lds WriteVec)
  int64_t read = 1;      ///< elements per LDS read of a gemm operand along a row (Lds ReadVec)
  bool realign = false;  ///< the loads are realigned runs (two aligned loads each)
};
AccessWidths accessOf(mlir::Value tile);
AccessWidths accessOf(tile::AllocOp alloc);

/// The register layout of `tile` (of its alloc) when it is an `L`
/// (tile::MatrixLayoutAttr, BlockedLayoutAttr or StagingLayoutAttr); else null.
template <class L> L layoutOf(mlir::Value tile) {
  tile::AllocOp a = allocOf(tile);
  return a ? llvm::dyn_cast_or_null<L>(a.getLayoutAttr()) : L();
}

/// A register tile that stages a prefetched LDS tile (tilec-pipeline-loops).
inline bool isStaging(mlir::Value tile) { return bool(layoutOf<tile::StagingLayoutAttr>(tile)); }

} // namespace tilec
