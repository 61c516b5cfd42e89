// The `tile` dialect: types, enums and ops (see TileDialect.td).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Dialect/Tile/TileOpsEnums.h.inc"
#include "Dialect/Tile/TileOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "Dialect/Tile/TileOpsTypes.h.inc"

namespace tilec::tile {
/// Parameter syntax of the dialect's attributes: `[1, 2, 3]` and `true|false`.
mlir::FailureOr<llvm::SmallVector<int64_t>> parseBracketedI64s(mlir::AsmParser &parser);
void printBracketedI64s(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> values);
mlir::FailureOr<bool> parseBool(mlir::AsmParser &parser);
} // namespace tilec::tile

#define GET_ATTRDEF_CLASSES
#include "Dialect/Tile/TileOpsAttrs.h.inc"

#define GET_OP_CLASSES
#include "Dialect/Tile/TileOps.h.inc"

namespace tilec::tile {
/// Attribute names shared by the DSL importer, passes and emitter.
namespace attr {
inline constexpr const char *kKernel = "tile.kernel";          // unit, on func.func
inline constexpr const char *kNumWaves = "tile.num_waves";     // i64, on func.func
inline constexpr const char *kGrid = "tile.grid";              // [array<i64: arg, axis, tile>] per grid axis
inline constexpr const char *kNumStages = "tile.num_stages";   // i64, on scf.for
inline constexpr const char *kSchedule = "tile.schedule";       // {interleave, setprio, ping_pong: bool}, on scf.for
inline constexpr const char *kWaveGroup = "tile.wave_group";    // i64 0|1, on tile.barrier: only that half of the waves
// unit, on tile.load into LDS (set by tilec-pipeline-loops on targets with
// asynchronous copies): the copy bypasses registers and completes later; the
// enclosing loop's tile.async_pending says when.
inline constexpr const char *kAsync = "tile.async";
// i64 on a pipelined scf.for with asynchronous loads: at the top of each
// iteration, wait until at most this many copy groups (one per async load)
// are in flight; the loop's first barrier then publishes the current buffer.
inline constexpr const char *kAsyncPending = "tile.async_pending";
inline constexpr const char *kTarget = "tile.target";          // string, set by target passes
inline constexpr const char *kLdsBytes = "tile.lds_bytes";     // i64, set by LDS allocation
// A user's explicit LDS layout on an LDS tile.alloc, which tilec-allocate-lds
// keeps (in the tile's #tile.lds placement) instead of choosing one:
inline constexpr const char *kRowStride = "row_stride";        // i64, elements between rows
inline constexpr const char *kSwizzle = "swizzle";             // array<i64: vec, per_phase, max_phase>
// i64 on an LDS tile.alloc (tilec-pipeline-loops): the tile has this many
// buffers, which tile.view selects.
inline constexpr const char *kBuffers = "buffers";
// i64 on a tensor argument of func.func: its innermost extent is a multiple of
// this many elements and its data is aligned to as many elements (up to 16
// bytes), so accesses may move that many elements at once; launches check it.
inline constexpr const char *kDivisibility = "tile.divisibility";
// string on each argument of func.func: the name the kernel gave it.
inline constexpr const char *kArgName = "tile.name";
} // namespace attr
} // namespace tilec::tile
