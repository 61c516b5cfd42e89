// Shared helpers of the tilec passes (not part of any public interface).
#pragma once

#include "Dialect/Tile/TileContract.h"
#include "Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include <optional>

namespace tilec {

/// The tile element type as a target ElemType, if it is one.
std::optional<ElemType> toElemType(mlir::Type t);

/// The target called `arch`; otherwise an error on `f` naming the known
/// targets, and nullptr.
const TargetInfo *targetOrError(mlir::func::FuncOp f, llvm::StringRef arch);

/// A positive integer that `v` (an index value) is known to be a multiple of,
/// from constants, products and sums; 0 when v is known to be 0.
int64_t knownMultiple(mlir::Value v);

/// The global run of a tile.load: how many consecutive elements of a row one
/// thread moves at a time (a power of two, at most 16 bytes), given what is
/// known of the source tensor (its `tile.divisibility`: rows are whole
/// multiples of it and aligned), the column it starts at and the tile's
/// width. A window keeps the runs whole and aligned when its column origin and
/// width are known multiples of the run too (its rows are the tensor's).
/// Tensors without the attribute: 1.
/// Shared by tilec-allocate-lds (the load width) and tilec-pipeline-loops
/// (whether a load can be an asynchronous copy of at least 4 bytes).
/// A transposing load runs along the tile's columns (the window's rows).
int64_t loadRunOf(tile::LoadOp l, int64_t elemBytes);
/// The same for a tile.gather: the rows it picks are whole rows of its
/// source, so the run depends on the source and the column alone.
int64_t gatherRunOf(tile::GatherOp g, int64_t elemBytes);

/// The same for any access of rank-2 tile `t` at `indices` of the global
/// tensor `source` (a load or a store).
int64_t globalRunOf(mlir::Value source, mlir::ValueRange indices, tile::TileType t, int64_t elemBytes);

/// The widest LDS write of a tile written transposed (tile.load {transpose},
/// or a staging copy {transpose}): each thread takes blocks of this many rows
/// of the rows x cols window by `run` columns and writes each column of a
/// block as one run of the tile. The widest power of two up to 16 bytes that
/// divides the window's rows and still gives every one of `threads` threads a
/// block; at least 4 bytes' worth where the rows allow (a tile too small for
/// every thread keeps 4-byte writes rather than narrower ones).
int64_t transposedWriteLimit(int64_t rows, int64_t cols, int64_t run, int64_t threads, int64_t elemBytes);

/// The block a thread of a transposed write loads and writes: `run` columns
/// (at most the tensor's run) by `write` rows (transposedWriteLimit of that
/// run), the pair with the fewest instructions per element (global loads,
/// 1 / run, plus LDS writes, 1 / write); ties keep the longer run. A
/// transposed 32 x 128 16-bit window over 256 threads: 4 x 4 (4 b64 loads,
/// 4 b64 writes per thread) rather than 8 x 2 (2 b128 loads, 8 b32 writes).
struct TransposedBlock {
  int64_t run, write;
};
TransposedBlock transposedBlock(int64_t rows, int64_t cols, int64_t run, int64_t threads, int64_t elemBytes);

/// Whether LDS tile `a` (or a buffer of it) is written transposed: by a
/// transposing tile.load, or by a transposing copy of a staging tile.
bool writtenTransposed(tile::AllocOp a);
/// Where loadRunOf leaves a non-transposing load runs of under 4 bytes (rows
/// of an odd number of 16-bit elements, e.g. a GEMM with K = 4097, or a
/// kernel argument without `tile.divisibility`), the run it is `realigned` in instead:
/// as wide as the tile's width allows (4 to 16 bytes), each read as the two
/// aligned accesses of its width that cover it and shifted into place in
/// registers (the prelude's Global::load_unaligned and realign), whatever the
/// rows' alignment; 0 where loadRunOf's run stands. Shared by
/// tilec-allocate-lds (the load width), tilec-pipeline-loops (a realigned run
/// passes through registers, never an asynchronous copy) and
/// tilec-schedule-waves (loads per lane).
int64_t realignedRunOf(tile::LoadOp l, int64_t elemBytes);

/// A register tile that gemm `gemm` reads as its A or B operand (`operand`)
/// through an LDS tile: `source` is the register tile's allocation, `lds` the
/// type of the LDS tile (its shape, in the element type of the gemm's B: the
/// copy rounds an f32 accumulator). Gemms that read one register tile in one
/// element type share the LDS tile (one key loop split in two).
struct RegisterOperandConversion {
  tile::GemmOp gemm;
  mlir::OpOperand *operand;
  tile::AllocOp source;
  tile::TileType lds;
};
/// The register gemm operands of `f` that go through LDS, in program order:
/// every register A and B except the A operands `readsAInPlace` accepts (the
/// accumulator layout already holds the matrix instruction's A operand).
/// tilec-infer-layouts makes the LDS tiles; tilec-pipeline-loops, which runs
/// before the layouts exist, counts their bytes with every A converted.
llvm::SmallVector<RegisterOperandConversion>
registerOperandConversions(mlir::func::FuncOp f, llvm::function_ref<bool(tile::GemmOp, mlir::Value)> readsAInPlace);

/// The kernel arguments' `tile.divisibility` attributes are positive powers of
/// two on tensor and i32 arguments; otherwise an error on the kernel.
mlir::LogicalResult verifyDivisibility(mlir::func::FuncOp f);

/// Every tile value of `f` is the result of tile.alloc or tile.view (the
/// passes place, lay out and synchronise tiles through their allocations);
/// otherwise an error on the first value that is not (a function or loop
/// argument, a result of scf.if, ...).
mlir::LogicalResult verifyTileDefinitions(mlir::func::FuncOp f);

} // namespace tilec
