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

/// Attribute names written by the target passes (register layouts and a
/// gemm's matrix instruction are the typed `layout` of tile.alloc and
/// tile.gemm: #tile.matrix, #tile.blocked, #tile.staging).
namespace pattr {
inline constexpr const char *kOffset = "offset";
inline constexpr const char *kRowStride = "row_stride";
inline constexpr const char *kScratchOffset = "scratch_offset";
inline constexpr const char *kBytes = "bytes";  // LDS bytes of a placed tile (all buffers)
inline constexpr const char *kBufferBytes = "buffer_bytes";  // bytes between buffers of a multi-buffered tile
inline constexpr const char *kSwizzle = "swizzle";  // array<i64: vec, perPhase, maxPhase>
/// An LDS tile stored in blocks of this many columns (wgmma's MN-major operands; tilec_lds.h Lds ColBlock).
inline constexpr const char *kColBlock = "col_block";
inline constexpr const char *kInterleaveVmem = "interleave_vmem";  // i64 on tile.gemm: interleave; global loads per lane in its region
inline constexpr const char *kSetprio = "setprio";  // unit on tile.gemm: s_setprio 1 around its matrix instructions
/// i64 N on a warpgroup tile.gemm in a pipelined loop (tilec-pipeline-loops):
/// its instructions are left running while the ops after it issue; at the end
/// of each iteration the loop waits until at most N of its instruction groups
/// are in flight (0 or 1), and after the loop until none is.
inline constexpr const char *kMatrixGroupsInFlight = "matrix_groups_in_flight";
inline constexpr const char *kBankConflicts = "bank_conflicts";  // modelled extra LDS cycles
// Elements per access, on allocs (absent: 1), chosen by tilec-allocate-lds:
inline constexpr const char *kLoadVec = "load_vec";    // global loads of the tile.load ops filling the tile
inline constexpr const char *kLoadRealign = "load_realign";  // unit: those runs are realigned (LoadRun)
inline constexpr const char *kWriteVec = "write_vec";  // LDS writes of those loads (load_tile, commit)
inline constexpr const char *kReadVec = "read_vec";    // LDS reads of gemm operands running along a row
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

/// An access width (`load_vec`, `write_vec`, `read_vec`) that
/// tilec-allocate-lds recorded on an alloc; 1 when absent.
int64_t accessWidth(mlir::Operation *alloc, llvm::StringRef name);

/// Elements per global load of the tile.load ops writing `tile` (the
/// `load_vec` of its alloc, through views; 1 without one).
int64_t loadVecOf(mlir::Value tile);
/// Whether those loads are realigned runs (the `load_realign` of its alloc).
bool loadRealignOf(mlir::Value tile);

/// The register layout of `tile` (of its alloc) when it is an `L`
/// (tile::MatrixLayoutAttr, BlockedLayoutAttr or StagingLayoutAttr); else null.
template <class L> L layoutOf(mlir::Value tile) {
  tile::AllocOp a = allocOf(tile);
  return a ? llvm::dyn_cast_or_null<L>(a.getLayoutAttr()) : L();
}

/// A register tile that stages a prefetched LDS tile (tilec-pipeline-loops).
inline bool isStaging(mlir::Value tile) { return bool(layoutOf<tile::StagingLayoutAttr>(tile)); }

} // namespace tilec
