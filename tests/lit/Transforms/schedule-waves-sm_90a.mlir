// RUN: tilec-opt %s -split-input-file -verify-diagnostics --tilec-pipeline=arch=sm_90a | FileCheck %s

// A k loop pipelined with cp.async (3 stages) whose gemm is a warpgroup
// wgmma: the copies for iteration j+2 move after the gemm, which only issues
// its instructions (matrix_groups_in_flight = 0: the loop waits for all of
// them at the end of the body), so the copies issue while the tensor cores
// multiply.
// CHECK-LABEL: func.func @overlap_async
// CHECK: scf.for
// CHECK: tile.barrier
// CHECK-NOT: tile.load
// CHECK: tile.gemm {{.*}}layout = #tile.matrix<"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", {{.*}}>, matrix_groups_in_flight = 0 : i64
// CHECK-NEXT: tile.load {{.*}}tile.async
// CHECK-NEXT: tile.load {{.*}}tile.async
// CHECK-NEXT: } {tile.async_pending = 2 : i64
func.func @overlap_async(%A: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %B: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %n: index) attributes {tile.num_waves = 4 : i64} {
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

// Rows of unknown alignment prefetch through registers: the commit of the
// prefetched tile into the next buffer and the next prefetch move after the
// wgmma as well (their realignment runs while it multiplies).
// CHECK-LABEL: func.func @overlap_registers
// CHECK: scf.for
// CHECK: tile.barrier
// CHECK-NOT: tile.copy
// CHECK: tile.gemm {{.*}}matrix_groups_in_flight = 0 : i64
// CHECK-NEXT: tile.copy
// CHECK-NEXT: tile.load
// CHECK-NEXT: tile.copy
// CHECK-NEXT: tile.load
// CHECK-NEXT: } {tile.num_stages = 2 : i64, tile.pipelined}
func.func @overlap_registers(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 4 : i64} {
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

// A warp-level gemm (mma.sync) computes synchronously: the copies stay where
// the pipeline put them, ahead of it.
// CHECK-LABEL: func.func @warp_level_unchanged
// CHECK: scf.for
// CHECK: tile.load {{.*}}tile.async
// CHECK: tile.load {{.*}}tile.async
// CHECK: tile.gemm
// CHECK-NOT: matrix_groups_in_flight
// CHECK: } {tile.async_pending
func.func @warp_level_unchanged(%A: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %B: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %n: index) attributes {tile.num_waves = 4 : i64} {
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
    tile.gemm %a, %b, %acc {matrix_scope = #tile.matrix_scope<warp>} : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 3 : i64}
  return
}

// -----

// Four stages: one wgmma group stays in flight into the next iteration
// (matrix_groups_in_flight = 1), so the copies go S-2 = 2 iterations ahead:
// two stages are copied before the loop, each iteration waits until at most
// (2-1) * 2 = 2 copy groups are in flight, and the copies fill the buffer
// read two iterations back (stage_offset = 2).
// CHECK-LABEL: func.func @one_group_in_flight
// CHECK-COUNT-4: tile.load {{.*}}tile.async
// CHECK: scf.for
// CHECK: tile.view %{{.*}}[%{{.*}}] {stage_offset = 2 : i64}
// CHECK: tile.barrier
// CHECK: tile.gemm {{.*}}matrix_groups_in_flight = 1 : i64
// CHECK-NEXT: tile.load {{.*}}tile.async
// CHECK-NEXT: tile.load {{.*}}tile.async
// CHECK-NEXT: } {tile.async_pending = 2 : i64, tile.num_stages = 4 : i64, tile.pipelined}
func.func @one_group_in_flight(%A: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %B: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %n: index) attributes {tile.num_waves = 4 : i64} {
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
  } {tile.num_stages = 4 : i64}
  return
}

// -----

// Two wgmma gemms sharing A (MoE's gate and up products), each into its own
// accumulator: both are left running, one iteration of them in flight is two
// groups (matrix_groups_in_flight = 2 on each), and the copies move after the
// second.
// CHECK-LABEL: func.func @two_gemms_in_flight
// CHECK: scf.for
// CHECK: tile.barrier
// CHECK-NOT: tile.load
// CHECK: tile.gemm {{.*}}matrix_groups_in_flight = 2 : i64
// CHECK-NEXT: tile.gemm {{.*}}matrix_groups_in_flight = 2 : i64
// CHECK-NEXT: tile.load {{.*}}tile.async
// CHECK-NEXT: tile.load {{.*}}tile.async
// CHECK-NEXT: tile.load {{.*}}tile.async
// CHECK-NEXT: } {tile.async_pending = 3 : i64, tile.num_stages = 4 : i64, tile.pipelined}
func.func @two_gemms_in_flight(%A: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %G: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %U: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %g = tile.alloc {name = "g"} : !tile.tile<32x64xbf16, lds>
  %u = tile.alloc {name = "u"} : !tile.tile<32x64xbf16, lds>
  %gate = tile.alloc {name = "gate"} : !tile.tile<64x64xf32, reg>
  %up = tile.alloc {name = "up"} : !tile.tile<64x64xf32, reg>
  scf.for %j = %c0 to %n step %c1 {
    %k = arith.muli %j, %c32 : index
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %G[%k, %c0] -> %g : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.load %U[%k, %c0] -> %u : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %g, %gate : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
    tile.gemm %a, %u, %up : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 4 : i64}
  return
}

// -----

// A second gemm that adds into the first one's accumulator would read what
// the first still computes: neither is left running.
// CHECK-LABEL: func.func @shared_accumulator
// CHECK-NOT: matrix_groups_in_flight
// CHECK: } {tile.async_pending
func.func @shared_accumulator(%A: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %G: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %U: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %g = tile.alloc {name = "g"} : !tile.tile<32x64xbf16, lds>
  %u = tile.alloc {name = "u"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  scf.for %j = %c0 to %n step %c1 {
    %k = arith.muli %j, %c32 : index
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %G[%k, %c0] -> %g : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.load %U[%k, %c0] -> %u : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %g, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
    tile.gemm %a, %u, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 4 : i64}
  return
}
