// RUN: tilec-opt %s -split-input-file -verify-diagnostics --tilec-pipeline=arch=gfx942 | FileCheck %s

// interleave + setprio: the gemm learns its schedule and how many global loads
// per lane share its scheduling region (the two 64x32 / 32x64 prefetches of
// rows of unknown alignment: realigned runs of 8 elements, 2048 / 8 / 256
// threads = 1 run each, read as 2 aligned loads: 4).
// CHECK-LABEL: func.func @interleave_setprio
// CHECK: scf.for
// CHECK: tile.barrier
// CHECK-NOT: tile.barrier
// CHECK: tile.gemm {{.*}}interleave_vmem = 4 : i64{{.*}}setprio
// CHECK: tile.schedule = {interleave = true, ping_pong = false, setprio = true}
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

// ping_pong: everyone syncs on the prologue's tiles, group 1 takes one barrier
// more before the loop and group 0 one after it; the body is
// [gemm] barrier [commit + prefetch] barrier.
// CHECK-LABEL: func.func @ping_pong
// CHECK: tile.barrier {tile.wave_group = 1 : i64}
// CHECK-NEXT: scf.for
// CHECK-NOT: tile.barrier
// CHECK: tile.gemm
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.copy
// CHECK: tile.load
// CHECK: tile.copy
// CHECK: tile.load
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: }
// CHECK-NEXT: tile.barrier {tile.wave_group = 0 : i64}
func.func @ping_pong(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 4 : i64} {
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

// Reject: two groups need an even wave count.
func.func @ping_pong_odd_waves(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<32x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x32xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<32x32xf32, reg>
  // expected-error @+1 {{ping_pong needs an even number of waves (two equal wave groups), got tile.num_waves = 1}}
  scf.for %k = %c0 to %n step %c1 {
    %kk = arith.muli %k, %c32 : index
    tile.load %A[%c0, %kk] -> %a : memref<?x?xbf16>, !tile.tile<32x32xbf16, lds>
    tile.load %B[%kk, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x32xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<32x32xbf16, lds>, !tile.tile<32x32xbf16, lds>, !tile.tile<32x32xf32, reg>
  } {tile.num_stages = 3 : i64, tile.schedule = {interleave = false, ping_pong = true, setprio = false}}
  return
}

// -----

// Reject: with 2 buffers the group half a step behind would still read the
// buffer the other group commits into.
func.func @ping_pong_two_stages(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  // expected-error @+1 {{ping_pong needs the loop software-pipelined with num_stages >= 3 (got 2)}}
  scf.for %k = %c0 to %n step %c1 {
    %kk = arith.muli %k, %c32 : index
    tile.load %A[%c0, %kk] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %B[%kk, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 2 : i64, tile.schedule = {interleave = false, ping_pong = true, setprio = false}}
  return
}
