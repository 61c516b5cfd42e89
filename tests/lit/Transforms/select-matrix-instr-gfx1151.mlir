// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=gfx1151}))' | FileCheck %s

// gfx1151 is wave32 with one matrix shape, WMMA 16x16x16 (docs/hardware.md section 2).
// 128x128 over 4 waves of 32 lanes: a 2x2 wave grid of 64x64, each 4x4 WMMAs.
// CHECK-LABEL: func.func @bf16_128x128
// CHECK-SAME: tile.target = "gfx1151"
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_wmma_f32_16x16x16_bf16", wave_grid = [2, 2], shape = [128, 128]>}
func.func @bf16_128x128(%a: !tile.tile<128x32xbf16, lds>, %b: !tile.tile<32x128xbf16, lds>, %c: !tile.tile<128x128xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// f16 with a skewed tile: 64x256 over 4 waves prefers 1x4 (64x64 per wave).
// CHECK-LABEL: func.func @f16_64x256
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_wmma_f32_16x16x16_f16", wave_grid = [1, 4], shape = [64, 256]>}
func.func @f16_64x256(%a: !tile.tile<64x16xf16, lds>, %b: !tile.tile<16x256xf16, lds>, %c: !tile.tile<64x256xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<64x16xf16, lds>, !tile.tile<16x256xf16, lds>, !tile.tile<64x256xf32, reg>
  return
}

// -----

// 16x64 over 4 waves: only 1x4 divides the tile by the 16x16 WMMA (one WMMA per wave).
// CHECK-LABEL: func.func @thin
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_wmma_f32_16x16x16_bf16", wave_grid = [1, 4], shape = [16, 64]>}
func.func @thin(%a: !tile.tile<16x16xbf16, lds>, %b: !tile.tile<16x64xbf16, lds>, %c: !tile.tile<16x64xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<16x16xbf16, lds>, !tile.tile<16x64xbf16, lds>, !tile.tile<16x64xf32, reg>
  return
}

// -----

// gfx11 has no fp8 matrix instructions (section 8); the error names the target that has.
func.func @fp8(%a: !tile.tile<32x16xf8E4M3FNUZ, lds>, %b: !tile.tile<16x32xf8E4M3FNUZ, lds>, %c: !tile.tile<32x32xf32, reg>) attributes {tile.num_waves = 1 : i64} {
  // expected-error @+1 {{'tile.gemm' op element type 'f8E4M3FNUZ' cannot be multiplied on gfx1151: no matrix instruction for it (supported: bf16, f16); targets with one: gfx942}}
  tile.gemm %a, %b, %c : !tile.tile<32x16xf8E4M3FNUZ, lds>, !tile.tile<16x32xf8E4M3FNUZ, lds>, !tile.tile<32x32xf32, reg>
  return
}

// -----

// K must be a multiple of the WMMA's 16.
func.func @k8(%a: !tile.tile<32x8xbf16, lds>, %b: !tile.tile<8x32xbf16, lds>, %c: !tile.tile<32x32xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  // expected-error @+1 {{cannot tile C 32x32 with K=8 over 4 waves with any gfx1151 matrix instruction for 'bf16' (smallest is 16x16x16}}
  tile.gemm %a, %b, %c : !tile.tile<32x8xbf16, lds>, !tile.tile<8x32xbf16, lds>, !tile.tile<32x32xf32, reg>
  return
}
