// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-pipeline-loops{arch=sm_90a},canonicalize,cse))' | FileCheck %s

// sm_90a copies tiles into LDS asynchronously (cp.async): three stages are
// three buffers and no registers. Iterations 0 and 1 are copied before the
// loop, stage by stage (A0, B0, then A1, B1: the waits count copy groups in
// issue order); each iteration waits until at most (3-2) * 2 = 2 groups are
// in flight (its own have landed), then copies iteration j+2 into the buffer
// iteration j-1 used, and computes on buffer j%3.
// CHECK-LABEL: func.func @kloop
// CHECK: %[[A:.*]] = tile.alloc {buffers = 3 : i64, name = "a"} : !tile.tile<64x32xbf16, lds>
// CHECK: %[[B:.*]] = tile.alloc {buffers = 3 : i64, name = "b"} : !tile.tile<32x64xbf16, lds>
// CHECK-NOT: prefetch
// CHECK: tile.load %arg0[%c0, %c0] -> %{{.*}} {tile.async}
// CHECK: tile.load %arg1[%c0, %c0] -> %{{.*}} {tile.async}
// CHECK: tile.load %arg0[%c0, %c32] -> %{{.*}} {tile.async}
// CHECK: tile.load %arg1[%c32, %c0] -> %{{.*}} {tile.async}
// CHECK: scf.for %[[IV:.*]] = %c0 to %arg2 step %c1 {
// CHECK: tile.load %arg0[%c0, %{{.*}}] -> %{{.*}} {tile.async}
// CHECK: tile.load %arg1[%{{.*}}, %c0] -> %{{.*}} {tile.async}
// CHECK: tile.gemm
// CHECK: } {tile.async_pending = 2 : i64, tile.num_stages = 3 : i64, tile.pipelined}
func.func @kloop(%A: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %B: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  scf.for %j = %c0 to %n step %c1 {
    %k = arith.muli %j, %c32 : index
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %B[%k, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 3 : i64}
  return
}

// -----

// Rows of single 16-bit elements (no divisibility) cannot be copied 4 bytes
// at a time: the loop prefetches through registers, as on AMD targets.
// CHECK-LABEL: func.func @ragged
// CHECK: tile.alloc {name = "a.prefetch"}
// CHECK-NOT: tile.async
// CHECK: } {tile.num_stages = 2 : i64, tile.pipelined}
func.func @ragged(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  scf.for %j = %c0 to %n step %c1 {
    %k = arith.muli %j, %c32 : index
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %B[%k, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 2 : i64}
  return
}
