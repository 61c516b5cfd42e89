// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=gfx90a}))' | FileCheck %s

// CHECK-LABEL: func.func @bf16
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_mfma_f32_32x32x8bf16_1k", wave_grid = [2, 2], shape = [128, 128]>}
func.func @bf16(%a: !tile.tile<128x32xbf16, lds>, %b: !tile.tile<32x128xbf16, lds>, %c: !tile.tile<128x128xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// gfx90a has no fp8 matrix instructions (docs/hardware.md section 1).
func.func @fp8(%a: !tile.tile<32x16xf8E4M3FNUZ, lds>, %b: !tile.tile<16x32xf8E4M3FNUZ, lds>, %c: !tile.tile<32x32xf32, reg>) attributes {tile.num_waves = 1 : i64} {
  // expected-error @+1 {{element type 'f8E4M3FNUZ' cannot be multiplied on gfx90a: no matrix instruction for it (supported: bf16, f16)}}
  tile.gemm %a, %b, %c : !tile.tile<32x16xf8E4M3FNUZ, lds>, !tile.tile<16x32xf8E4M3FNUZ, lds>, !tile.tile<32x32xf32, reg>
  return
}

