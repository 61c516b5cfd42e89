// RUN: tilec-opt %s -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=sm_90a},tilec-infer-layouts))' | FileCheck %s --check-prefix=NV
// RUN: tilec-opt %s -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=gfx942},tilec-infer-layouts))' | FileCheck %s --check-prefix=AMD

// Attention's P @ V with P an f32 accumulator (P = exp2(S - m), S = Q K^T),
// rounded to V's bf16 by the gemm. On NVIDIA, sm_90a runs both on wgmma: its
// register form's A fragment is the accumulator layout of 16 columns, and S and
// O split their rows alike (one warpgroup, grid [1, 1]): the gemm reads P from
// registers, no LDS tile. With warp-level instructions asked for, mma.m16n8k16's
// accumulators of two adjacent n-tiles are its A operand likewise (wave grid
// [4, 1], from the row vector m). MFMA's accumulator is the transpose of its
// operand: P goes through an LDS tile of V's type, copied (rounded) right
// before the gemm.
// NV-LABEL: func.func @p_times_v
// NV: tile.alloc {layout = #tile.matrix<"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", wave_grid = [1, 1], shape = [64, 64]>, name = "p"}
// NV: tile.alloc {layout = #tile.matrix<"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", {{.*}}>, name = "m"
// NV-NOT: tile.copy
// NV-NOT: lds>, !tile.tile<64x128xf32, reg>
// NV: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {layout = #tile.matrix<"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", wave_grid = [1, 1], shape = [64, 128]>} : !tile.tile<64x64xf32, reg>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xf32, reg>
// NV-LABEL: func.func @p_times_v_warp
// NV: tile.alloc {layout = #tile.matrix<"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", wave_grid = [4, 1], shape = [64, 64]>, name = "p"}
// NV-NOT: tile.copy
// NV-NOT: lds>, !tile.tile<64x128xf32, reg>
// NV: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {layout = #tile.matrix<"mma.sync{{.*}}", wave_grid = [4, 1], shape = [64, 128]>, matrix_scope = #tile.matrix_scope<warp>} : !tile.tile<64x64xf32, reg>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xf32, reg>
// AMD-LABEL: func.func @p_times_v
// AMD: %[[P:.*]] = tile.alloc {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", {{.*}}>, name = "p"
// AMD-NEXT: %[[PL:.*]] = tile.alloc {name = "p.lds"} : !tile.tile<64x64xbf16, lds>
// AMD: tile.copy %[[P]] -> %[[PL]] : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xbf16, lds>
// AMD-NEXT: tile.gemm %[[PL]], %{{.*}}, %{{.*}} {{.*}} : !tile.tile<64x64xbf16, lds>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xf32, reg>
func.func @p_times_v(%q: !tile.tile<64x128xbf16, lds>, %k: !tile.tile<64x128xbf16, lds>, %v: !tile.tile<64x128xbf16, lds>) attributes {tile.num_waves = 4 : i64} {
  %s = tile.alloc {name = "s"} : !tile.tile<64x64xf32, reg>
  %p = tile.alloc {name = "p"} : !tile.tile<64x64xf32, reg>
  %m = tile.alloc {name = "m"} : !tile.tile<64xf32, reg>
  %o = tile.alloc {name = "o"} : !tile.tile<64x128xf32, reg>
  tile.gemm %q, %k, %s {transpose_b} : !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.reduce max %s -> %m {axis = 1 : i64} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map sub_exp2 %p, %s, %m : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map mul %o, %o, %m : !tile.tile<64x128xf32, reg>, !tile.tile<64x128xf32, reg>, !tile.tile<64xf32, reg>
  tile.gemm %p, %v, %o : !tile.tile<64x64xf32, reg>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xf32, reg>
  return
}

func.func @p_times_v_warp(%q: !tile.tile<64x128xbf16, lds>, %k: !tile.tile<64x128xbf16, lds>, %v: !tile.tile<64x128xbf16, lds>) attributes {tile.num_waves = 4 : i64} {
  %s = tile.alloc {name = "s"} : !tile.tile<64x64xf32, reg>
  %p = tile.alloc {name = "p"} : !tile.tile<64x64xf32, reg>
  %m = tile.alloc {name = "m"} : !tile.tile<64xf32, reg>
  %o = tile.alloc {name = "o"} : !tile.tile<64x128xf32, reg>
  tile.gemm %q, %k, %s {matrix_scope = #tile.matrix_scope<warp>, transpose_b} : !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.reduce max %s -> %m {axis = 1 : i64} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map sub_exp2 %p, %s, %m : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map mul %o, %o, %m : !tile.tile<64x128xf32, reg>, !tile.tile<64x128xf32, reg>, !tile.tile<64xf32, reg>
  tile.gemm %p, %v, %o {matrix_scope = #tile.matrix_scope<warp>} : !tile.tile<64x64xf32, reg>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xf32, reg>
  return
}
