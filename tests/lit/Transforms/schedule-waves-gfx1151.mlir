// RUN: tilec-opt %s -split-input-file -verify-diagnostics --tilec-pipeline=arch=gfx1151 | FileCheck %s

// wave32: 4 waves are 128 threads, so each 2048-element prefetch (rows of
// unknown alignment: realigned runs of 8 elements, 2 loads each) is 4 loads
// per lane and the gemm's region holds 8.
// CHECK-LABEL: func.func @interleave_setprio
// CHECK: tile.gemm {{.*}}interleave_vmem = 8 : i64, layout = #tile.matrix<"v_wmma_f32_16x16x16_bf16"{{.*}}setprio
func.func @interleave_setprio(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  scf.for %k = %c0 to %n step %c1 {
    %kk = arith.muli %k, %c32 : index
    tile.load %A[%c0, %kk] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %B[%kk, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 2 : i64, tile.schedule = {interleave = true, ping_pong = false, setprio = true}}
  return
}

// -----

// ping_pong with 8 wave32 waves: two groups of 4.
// CHECK-LABEL: func.func @ping_pong
// CHECK: tile.barrier {tile.wave_group = 1 : i64}
// CHECK-NEXT: scf.for
// CHECK: tile.gemm
// CHECK-NEXT: tile.barrier
// CHECK: tile.barrier
// CHECK-NEXT: }
// CHECK-NEXT: tile.barrier {tile.wave_group = 0 : i64}
func.func @ping_pong(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 8 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  scf.for %k = %c0 to %n step %c1 {
    %kk = arith.muli %k, %c32 : index
    tile.load %A[%c0, %kk] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %B[%kk, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 3 : i64, tile.schedule = {interleave = false, ping_pong = true, setprio = false}}
  return
}

// -----

// Reject: 3 waves cannot form two equal groups.
func.func @ping_pong_odd_waves(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 3 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %a = tile.alloc {name = "a"} : !tile.tile<48x16xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<16x16xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<48x16xf32, reg>
  // expected-error @+1 {{ping_pong needs an even number of waves (two equal wave groups), got tile.num_waves = 3}}
  scf.for %k = %c0 to %n step %c1 {
    %kk = arith.muli %k, %c16 : index
    tile.load %A[%c0, %kk] -> %a : memref<?x?xbf16>, !tile.tile<48x16xbf16, lds>
    tile.load %B[%kk, %c0] -> %b : memref<?x?xbf16>, !tile.tile<16x16xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<48x16xbf16, lds>, !tile.tile<16x16xbf16, lds>, !tile.tile<48x16xf32, reg>
  } {tile.num_stages = 3 : i64, tile.schedule = {interleave = false, ping_pong = true, setprio = false}}
  return
}
