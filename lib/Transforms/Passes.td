#ifndef TILEC_TRANSFORMS_PASSES_TD
#define TILEC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TilecPipelineLoops : Pass<"tilec-pipeline-loops", "mlir::func::FuncOp"> {
  let summary = "Software-pipeline k loops: multi-buffered LDS and register prefetch";
  let description = [{
    For an `scf.for` with `tile.num_stages = S` (S >= 2), every `tile.load`
    of a global window into an LDS tile declared outside the loop is
    pipelined: the LDS tile gets S buffers (`buffers = S`), the first S-1
    iterations' tiles are loaded before the loop, and iteration j commits the
    tile of iteration j+S-1 from registers into its buffer, issues the global
    load of iteration j+S into registers (a `#tile.staging` register tile), and
    computes on buffer j % S. One barrier per iteration remains
    (`tilec-insert-barriers`). Loads past the end read zeros (buffer
    out-of-bounds rules), so no guards are needed.

    A load's window and indices are recomputed for the iteration it loads:
    pure functions of the loop index, and reads (`tile.load_index`) of index
    tensors the kernel never writes, such as a paged cache's block table
    (`tile.window %cache[%entry * 16, ..]`). A prefetch past the end reads an
    entry past the sequence's blocks, whose window is either another block
    (read, never used) or outside the cache (zeros). The loop's own read of
    the entry goes when nothing else uses it.

    When S buffers of the loop's tiles do not fit the target's LDS next to
    the kernel's other tiles, S is lowered to the largest count that fits and
    a remark says so; S = 1 leaves the loop alone.

    Targets with asynchronous copies (cp.async) copy iteration j+S-1 straight
    into its buffer instead (`tile.async`; `tile.async_pending` groups may
    stay in flight at the top of an iteration). When the loop's gemms all run
    on a warpgroup instruction (wgmma: selected before this pass) and none
    reads another's accumulator (MoE's gate and up products), each gets
    `matrix_groups_in_flight = N`: their instructions keep running while
    the loop issues its next memory work (`tilec-schedule-waves` moves that
    work after them), and each iteration ends waiting until at most N groups
    remain. N = G (the loop's G gemms of one iteration) with asynchronous
    copies and S >= 4, the copies then going S-2 iterations ahead (the buffer
    they fill was read two iterations back); otherwise N = 0.

    Before (S = 2):
    ```mlir
    scf.for %k = %c0 to %n step %c1 {
      %kk = arith.muli %k, %c32 : index
      tile.load %A[%row, %kk] -> %a : memref<?x?xbf16>, !tile.tile<128x32xbf16, lds>
      tile.gemm %a, %b, %acc : ...
    } {tile.num_stages = 2 : i64}
    ```
    After:
    ```mlir
    %a = tile.alloc {buffers = 2 : i64, name = "a"} : !tile.tile<128x32xbf16, lds>
    %a_pf = tile.alloc {name = "a.prefetch"} : !tile.tile<128x32xbf16, reg>
    tile.load %A[%row, %c0] -> (tile.view %a[0]) ...      // iteration 0 -> buffer 0
    tile.load %A[%row, %c32] -> %a_pf ...                 // iteration 1 -> registers
    scf.for %k = %c0 to %n step %c1 {
      tile.copy %a_pf -> (tile.view %a[(j + 1) % 2])      // commit iteration j+1
      tile.load %A[%row, (k + 2) * 32] -> %a_pf           // prefetch iteration j+2
      tile.gemm (tile.view %a[j % 2]), %b, %acc : ...
    } {tile.num_stages = 2 : i64, tile.pipelined}
    ```
  }];
  let options = [Option<"arch", "arch", "std::string", "::tilec::kDefaultArch", "target architecture">];
}

def TilecSelectMatrixInstr : Pass<"tilec-select-matrix-instr", "mlir::func::FuncOp"> {
  let summary = "Choose the matrix instruction and wave grid of every tile.gemm";
  let description = [{
    For each `tile.gemm`, picks a matrix instruction of the target that
    multiplies the operand type (the largest that tiles C over the waves) and
    splits C over the workgroup's `tile.num_waves` waves (wm x wn), and records
    both as the gemm's `layout`: C's `#tile.matrix` accumulator layout
    (TileAttrs.td). `matrix_scope = #tile.matrix_scope<warp|warpgroup>` on the
    gemm restricts the choice. A type the target cannot multiply is an error
    naming the op, the type and the target.

    Before:
    ```mlir
    tile.gemm %a, %b, %acc : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
    ```
    After (arch=gfx942, 4 waves):
    ```mlir
    tile.gemm %a, %b, %acc {layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [128, 128]>} : ...
    ```
  }];
  let options = [Option<"arch", "arch", "std::string", "::tilec::kDefaultArch", "target architecture">];
  let dependentDialects = [];
}

def TilecInferLayouts : Pass<"tilec-infer-layouts", "mlir::func::FuncOp"> {
  let summary = "Give every register tile a layout, flowing from the matrix instructions";
  let description = [{
    Register tiles connected through `tile.gemm`, `tile.map`, `tile.reduce`,
    `tile.copy` and `tile.fill` share the accumulator layout of the gemm that
    defines them (its `#tile.matrix` layout); rank-1 tiles that hold one value
    per row of such a tile get the layout of the accumulator whose rows they
    follow, with a canonical width (rows x instruction N x wn), so the row
    vectors of S and O in attention share one. Register tiles no gemm reaches
    get a `#tile.blocked` layout, and the staging tiles of pipelined loads
    `#tile.staging`.

    Before:
    ```mlir
    %acc = tile.alloc {name = "acc"} : !tile.tile<128x128xf32, reg>
    %m = tile.alloc {name = "m"} : !tile.tile<128xf32, reg>
    ```
    After:
    ```mlir
    %acc = tile.alloc {layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [128, 128]>, name = "acc"} : ...
    %m = tile.alloc {layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [128, 64]>, name = "m"} : ...
    ```
  }];
}

def TilecAllocateLDS : Pass<"tilec-allocate-lds", "mlir::func::FuncOp"> {
  let summary = "Place LDS tiles (offsets, padded row strides) within the target's budget";
  let description = [{
    Assigns every LDS tile an `offset` and a `row_stride` (elements; rows of
    16-bit tiles are padded by 16 bytes so that matrix-operand reads spread over
    the banks of docs/hardware.md section 3), reserves scratch for cross-wave
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
  let options = [Option<"arch", "arch", "std::string", "::tilec::kDefaultArch", "target architecture">];
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

def TilecScheduleWaves : Pass<"tilec-schedule-waves", "mlir::func::FuncOp"> {
  let summary = "Apply loop wavefront schedules (interleave, setprio, ping-pong) and check barrier balance";
  let description = [{
    Reads `tile.schedule = {interleave, setprio, ping_pong}` on `scf.for` (the
    DSL's `LoopOptions::schedule`) and runs after `tilec-insert-barriers`:

    - `interleave`: each `tile.gemm` in the body gets `interleave_vmem = N`
      (global loads per lane issued in its scheduling region, since the last
      barrier); the prelude's gemm then orders its matrix instructions with
      `sched_group_barrier` groups: 1 MFMA/WMMA, the next k step's LDS reads,
      a share of the N global loads, repeated.
    - `setprio`: each `tile.gemm` gets `setprio`: `s_setprio 1` before its
      matrix-instruction cluster, `s_setprio 0` after.
    - `ping_pong`: the waves split into two groups (first and second half).
      The body becomes `[math] barrier [commit + prefetch] barrier`; group 1
      takes an extra barrier before the loop (`tile.wave_group = 1`) and group
      0 one after it, so the groups run half a k step apart, one doing memory
      while the other does math. Needs an even number of waves and the loop
      pipelined with `num_stages >= 3` (otherwise one group would commit into
      the buffer the other still reads).

    In every pipelined loop whose gemm has `matrix_groups_in_flight`
    (`tilec-pipeline-loops`), the copies for later iterations (or the commit
    of the prefetched tile and the next prefetch) move after the gemm, so they
    issue while its warpgroup instructions run.

    Then, on every function, it checks that every wave reaches the same
    barriers in the same order: it counts the barriers each wave group
    executes along every path (loops must add the same count per iteration for
    both groups, the function the same total) and rejects, as a deadlock, a
    schedule where they differ; LDS accesses while the groups are out of step
    are allowed only inside a ping_pong loop.

    Before (4 waves, after tilec-insert-barriers):
    ```mlir
    scf.for %kt = %c0 to %n step %c1 {
      tile.barrier
      tile.copy %a_pf -> %a_next ...
      tile.load %A[%row, %k2] -> %a_pf ...
      tile.gemm %a_cur, %b_cur, %acc {layout = #tile.matrix<...>} : ...
    } {tile.num_stages = 3 : i64, tile.pipelined,
       tile.schedule = {interleave = true, ping_pong = true, setprio = true}}
    ```
    After:
    ```mlir
    tile.barrier
    tile.barrier {tile.wave_group = 1 : i64}
    scf.for %kt = %c0 to %n step %c1 {
      tile.gemm %a_cur, %b_cur, %acc {interleave_vmem = 0 : i64, layout = #tile.matrix<...>, setprio} : ...
      tile.barrier
      tile.copy %a_pf -> %a_next ...
      tile.load %A[%row, %k2] -> %a_pf ...
      tile.barrier
    } {...}
    tile.barrier {tile.wave_group = 0 : i64}
    ```
  }];
  let options = [Option<"arch", "arch", "std::string", "::tilec::kDefaultArch", "target architecture">];
}

#endif
