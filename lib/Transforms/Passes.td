#ifndef TILEC_TRANSFORMS_PASSES_TD
#define TILEC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TilecSelectMatrixInstr : Pass<"tilec-select-matrix-instr", "mlir::func::FuncOp"> {
  let summary = "Choose the matrix instruction and wave grid of every tile.gemm";
  let description = [{
    For each `tile.gemm`, picks a matrix instruction of the target that
    multiplies the operand type (the largest that tiles C over the waves) and
    splits C over the workgroup's `tile.num_waves` waves (`wave_grid = [wm, wn]`).
    A type the target cannot multiply is an error naming the op, the type and
    the target.

    Before:
    ```mlir
    tile.gemm %a, %b, %acc : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
    ```
    After (arch=gfx942, 4 waves):
    ```mlir
    tile.gemm %a, %b, %acc {instr = "v_mfma_f32_32x32x8_bf16", wave_grid = array<i64: 2, 2>} : ...
    ```
  }];
  let options = [Option<"arch", "arch", "std::string", "\"gfx942\"", "target architecture">];
  let dependentDialects = [];
}

def TilecInferLayouts : Pass<"tilec-infer-layouts", "mlir::func::FuncOp"> {
  let summary = "Give every register tile a layout, flowing from the matrix instructions";
  let description = [{
    Register tiles connected through `tile.gemm`, `tile.map`, `tile.reduce`,
    `tile.copy` and `tile.fill` share the accumulator layout of the gemm that
    defines them (`layout = "acc"`, with `instr` and `wave_grid`); rank-1 tiles
    that hold one value per row of such a tile get `layout = "rows"`.

    Before:
    ```mlir
    %acc = tile.alloc {name = "acc"} : !tile.tile<128x128xf32, reg>
    %m = tile.alloc {name = "m"} : !tile.tile<128xf32, reg>
    ```
    After:
    ```mlir
    %acc = tile.alloc {instr = "v_mfma_f32_32x32x8_bf16", layout = "acc", name = "acc", wave_grid = array<i64: 2, 2>} : ...
    %m = tile.alloc {instr = "v_mfma_f32_32x32x8_bf16", layout = "rows", name = "m", parent_shape = array<i64: 128, 128>, wave_grid = array<i64: 2, 2>} : ...
    ```
  }];
}

def TilecAllocateLDS : Pass<"tilec-allocate-lds", "mlir::func::FuncOp"> {
  let summary = "Place LDS tiles (offsets, padded row strides) within the target's budget";
  let description = [{
    Assigns every LDS tile an `offset` and a `row_stride` (elements; rows of
    16-bit tiles are padded by 16 bytes so that matrix-operand reads spread over
    the banks of amd-targets.md section 3), reserves scratch for cross-wave
    reductions, and records the total in `tile.lds_bytes` on the function. If
    the total exceeds the target's LDS per workgroup, emits an error naming
    every buffer and its size.

    Before:
    ```mlir
    %a = tile.alloc {name = "a_lds"} : !tile.tile<128x32xbf16, lds>
    ```
    After:
    ```mlir
    %a = tile.alloc {name = "a_lds", offset = 0 : i64, row_stride = 40 : i64} : !tile.tile<128x32xbf16, lds>
    ```
  }];
  let options = [Option<"arch", "arch", "std::string", "\"gfx942\"", "target architecture">];
}

def TilecInsertBarriers : Pass<"tilec-insert-barriers", "mlir::func::FuncOp"> {
  let summary = "Insert workgroup barriers between conflicting LDS accesses";
  let description = [{
    Walks the kernel in program order and inserts `tile.barrier` before an LDS
    access that conflicts with one since the last barrier (read after write,
    write after read, write after write), treating loop bodies as repeating.

    Before:
    ```mlir
    tile.load %A[%r, %k] -> %a : ...
    tile.gemm %a, %b, %acc : ...
    ```
    After:
    ```mlir
    tile.load %A[%r, %k] -> %a : ...
    tile.barrier
    tile.gemm %a, %b, %acc : ...
    ```
  }];
}

#endif
