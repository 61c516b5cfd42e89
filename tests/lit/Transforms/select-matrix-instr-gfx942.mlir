// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=gfx942}))' | FileCheck %s

// 128x128 over 4 waves: a 2x2 wave grid of 64x64, each 2x2 32x32x8 MFMAs (docs/hardware.md section 1).
// CHECK-LABEL: func.func @bf16_128x128
// CHECK-SAME: tile.target = "gfx942"
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [128, 128]>}
func.func @bf16_128x128(%a: !tile.tile<128x32xbf16, lds>, %b: !tile.tile<32x128xbf16, lds>, %c: !tile.tile<128x128xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// f16 with a skewed tile: 64x256 over 4 waves prefers 1x4 (64x64 per wave).
// CHECK-LABEL: func.func @f16_64x256
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_mfma_f32_32x32x8_f16", wave_grid = [1, 4], shape = [64, 256]>}
func.func @f16_64x256(%a: !tile.tile<64x16xf16, lds>, %b: !tile.tile<16x256xf16, lds>, %c: !tile.tile<64x256xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<64x16xf16, lds>, !tile.tile<16x256xf16, lds>, !tile.tile<64x256xf32, reg>
  return
}

// -----

// 32x32 over 4 waves does not fit 32x32 MFMAs: falls back to 16x16x16 on a 2x2 grid.
// CHECK-LABEL: func.func @small
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", wave_grid = [2, 2], shape = [32, 32]>}
func.func @small(%a: !tile.tile<32x16xbf16, lds>, %b: !tile.tile<16x32xbf16, lds>, %c: !tile.tile<32x32xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<32x16xbf16, lds>, !tile.tile<16x32xbf16, lds>, !tile.tile<32x32xf32, reg>
  return
}

// -----

// bf8 (f8E5M2FNUZ, docs/hardware.md section 8) selects the bf8 MFMAs (section 1): 32x32x16
// for a 128x128 tile, 16x16x32 when 32x32 MFMAs do not fit the wave grid.
// CHECK-LABEL: func.func @bf8_128x128
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_mfma_f32_32x32x16_bf8_bf8", wave_grid = [2, 2], shape = [128, 128]>}
func.func @bf8_128x128(%a: !tile.tile<128x32xf8E5M2FNUZ, lds>, %b: !tile.tile<32x128xf8E5M2FNUZ, lds>, %c: !tile.tile<128x128xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<128x32xf8E5M2FNUZ, lds>, !tile.tile<32x128xf8E5M2FNUZ, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// CHECK-LABEL: func.func @bf8_small
// CHECK: tile.gemm {{.*}} {layout = #tile.matrix<"v_mfma_f32_16x16x32_bf8_bf8", wave_grid = [2, 2], shape = [32, 32]>}
func.func @bf8_small(%a: !tile.tile<32x32xf8E5M2FNUZ, lds>, %b: !tile.tile<32x32xf8E5M2FNUZ, lds>, %c: !tile.tile<32x32xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  tile.gemm %a, %b, %c : !tile.tile<32x32xf8E5M2FNUZ, lds>, !tile.tile<32x32xf8E5M2FNUZ, lds>, !tile.tile<32x32xf32, reg>
  return
}

// -----

func.func @f32_operands(%a: !tile.tile<32x8xf32, lds>, %b: !tile.tile<8x32xf32, lds>, %c: !tile.tile<32x32xf32, reg>) {
  // expected-error @+1 {{'tile.gemm' op element type 'f32' cannot be multiplied on gfx942: no matrix instruction for it (supported: bf16, f16, f8E4M3FNUZ, f8E5M2FNUZ)}}
  tile.gemm %a, %b, %c : !tile.tile<32x8xf32, lds>, !tile.tile<8x32xf32, lds>, !tile.tile<32x32xf32, reg>
  return
}

// -----

func.func @untileable(%a: !tile.tile<24x16xbf16, lds>, %b: !tile.tile<16x24xbf16, lds>, %c: !tile.tile<24x24xf32, reg>) attributes {tile.num_waves = 4 : i64} {
  // expected-error @+1 {{cannot tile C 24x24 with K=16 over 4 waves with any gfx942 matrix instruction for 'bf16'}}
  tile.gemm %a, %b, %c : !tile.tile<24x16xbf16, lds>, !tile.tile<16x24xbf16, lds>, !tile.tile<24x24xf32, reg>
  return
}
