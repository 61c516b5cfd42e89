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

// -----

// A paged loop: each iteration cuts its block out of the cache through a
// block-table entry (tile.load_index of a tensor the kernel never writes).
// The copies for iteration j+1 read entry j+1 ahead of the loop's own read,
// and the loop's read and window, used by nothing but the original load, go.
// CHECK-LABEL: func.func @paged
// CHECK: %[[E0:.*]] = tile.load_index %arg1[%c0] : memref<?xi32>
// CHECK: %[[R0:.*]] = arith.muli %[[E0]], %c16
// CHECK: %[[W0:.*]] = tile.window %arg0[%[[R0]], %c0] [%c16, %c64]
// CHECK: tile.load %[[W0]][%c0, %c0] -> %{{.*}} {tile.async}
// CHECK: scf.for %[[IV:.*]] = %c0 to %arg2 step %c1 {
// CHECK: %[[J1:.*]] = arith.addi %[[IV]], %c1
// CHECK: %[[E1:.*]] = tile.load_index %arg1[%[[J1]]] : memref<?xi32>
// CHECK: %[[R1:.*]] = arith.muli %[[E1]], %c16
// CHECK: %[[W1:.*]] = tile.window %arg0[%[[R1]], %c0] [%c16, %c64]
// CHECK: tile.load %[[W1]][%c0, %c0] -> %{{.*}} {tile.async}
// CHECK-NOT: tile.load_index
// CHECK: tile.gemm
// CHECK: } {tile.async_pending = 0 : i64, tile.num_stages = 2 : i64, tile.pipelined}
func.func @paged(%KV: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %table: memref<?xi32>, %n: index) attributes {tile.num_waves = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %q = tile.alloc {name = "q"} : !tile.tile<16x64xbf16, lds>
  %k = tile.alloc {name = "k"} : !tile.tile<16x64xbf16, lds>
  %s = tile.alloc {name = "s"} : !tile.tile<16x16xf32, reg>
  scf.for %j = %c0 to %n step %c1 {
    %phys = tile.load_index %table[%j] : memref<?xi32>
    %row = arith.muli %phys, %c16 : index
    %blk = tile.window %KV[%row, %c0] [%c16, %c64] : memref<?x?xbf16>
    tile.load %blk[%c0, %c0] -> %k : memref<?x?xbf16>, !tile.tile<16x64xbf16, lds>
    tile.gemm %q, %k, %s {transpose_b} : !tile.tile<16x64xbf16, lds>, !tile.tile<16x64xbf16, lds>, !tile.tile<16x16xf32, reg>
  } {tile.num_stages = 2 : i64}
  return
}

// -----

// The same loop over a table the kernel also writes: reading an entry ahead
// could see a value the loop has not stored yet, so the load is refused.
func.func @paged_written_table(%KV: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %table: memref<?xi32>, %n: index) attributes {tile.num_waves = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %q = tile.alloc {name = "q"} : !tile.tile<16x64xbf16, lds>
  %k = tile.alloc {name = "k"} : !tile.tile<16x64xbf16, lds>
  %s = tile.alloc {name = "s"} : !tile.tile<16x16xf32, reg>
  %ids = tile.alloc {name = "ids"} : !tile.tile<16xi32, reg>
  scf.for %j = %c0 to %n step %c1 {
    %phys = tile.load_index %table[%j] : memref<?xi32>
    %row = arith.muli %phys, %c16 : index
    %blk = tile.window %KV[%row, %c0] [%c16, %c64] : memref<?x?xbf16>
    // expected-error @+1 {{cannot be pipelined: its indices are not pure functions of the loop index (and of indices read from tensors the kernel does not write)}}
    tile.load %blk[%c0, %c0] -> %k : memref<?x?xbf16>, !tile.tile<16x64xbf16, lds>
    tile.gemm %q, %k, %s {transpose_b} : !tile.tile<16x64xbf16, lds>, !tile.tile<16x64xbf16, lds>, !tile.tile<16x16xf32, reg>
    tile.store %ids -> %table[%j] : !tile.tile<16xi32, reg>, memref<?xi32>
  } {tile.num_stages = 2 : i64}
  return
}
