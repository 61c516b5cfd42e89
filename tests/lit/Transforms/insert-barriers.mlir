// RUN: tilec-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tilec-insert-barriers))' | FileCheck %s

// In a k-loop: a barrier between the tile loads and the gemm (read after
// write), and one before the next iteration's loads (write after read).
// CHECK-LABEL: func.func @kloop
// CHECK: scf.for
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.load
// CHECK-NEXT: tile.load
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.gemm
// CHECK-NEXT: }
// CHECK-NOT: tile.barrier
// CHECK: tile.store
func.func @kloop(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tile.alloc : !tile.tile<32x16xbf16, lds>
  %b = tile.alloc : !tile.tile<16x32xbf16, lds>
  %c = tile.alloc : !tile.tile<32x32xf32, reg>
  scf.for %k = %c0 to %n step %c1 {
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<32x16xbf16, lds>
    tile.load %B[%k, %c0] -> %b : memref<?x?xbf16>, !tile.tile<16x32xbf16, lds>
    tile.gemm %a, %b, %c : !tile.tile<32x16xbf16, lds>, !tile.tile<16x32xbf16, lds>, !tile.tile<32x32xf32, reg>
  }
  tile.store %c -> %C[%c0, %c0] : !tile.tile<32x32xf32, reg>, memref<?x?xf32>
  return
}

// -----

// Independent LDS tiles need no barrier; a write after a write to the same tile does.
// CHECK-LABEL: func.func @independent
// CHECK: tile.load
// CHECK-NEXT: tile.load
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.load
func.func @independent(%A: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : !tile.tile<32x16xbf16, lds>
  %b = tile.alloc : !tile.tile<32x16xbf16, lds>
  tile.load %A[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<32x16xbf16, lds>
  tile.load %A[%c0, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x16xbf16, lds>
  tile.load %A[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<32x16xbf16, lds>
  return
}

// -----

// Buffers of a multi-buffered tile with different stage offsets are disjoint
// within an iteration: committing buffer j+1 while the gemm reads buffer j
// needs no barrier between them; the loop's back edge needs one at the top.
// CHECK-LABEL: func.func @multibuffer
// CHECK: scf.for
// CHECK: tile.barrier
// CHECK-NEXT: tile.copy
// CHECK-NOT: tile.barrier
// CHECK: tile.gemm
func.func @multibuffer(%A: memref<?x?xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = tile.alloc {buffers = 2 : i64} : !tile.tile<32x16xbf16, lds>
  %b = tile.alloc : !tile.tile<16x32xbf16, lds>
  %pf = tile.alloc : !tile.tile<32x16xbf16, reg>
  %c = tile.alloc : !tile.tile<32x32xf32, reg>
  scf.for %k = %c0 to %n step %c1 {
    %cur = arith.remui %k, %c2 : index
    %k1 = arith.addi %k, %c1 : index
    %nxt = arith.remui %k1, %c2 : index
    %vc = tile.view %a[%cur] {stage_offset = 0 : i64} : !tile.tile<32x16xbf16, lds>
    %vn = tile.view %a[%nxt] {stage_offset = 1 : i64} : !tile.tile<32x16xbf16, lds>
    tile.copy %pf -> %vn : !tile.tile<32x16xbf16, reg>, !tile.tile<32x16xbf16, lds>
    tile.load %A[%c0, %k] -> %pf : memref<?x?xbf16>, !tile.tile<32x16xbf16, reg>
    tile.gemm %vc, %b, %c : !tile.tile<32x16xbf16, lds>, !tile.tile<16x32xbf16, lds>, !tile.tile<32x32xf32, reg>
  }
  return
}

// -----

// Two tiles that tilec-allocate-lds placed on the same bytes (offset/bytes)
// conflict like one tile: writing the second after reading the first needs a
// barrier; a tile on other bytes does not.
// CHECK-LABEL: func.func @aliased
// CHECK: tile.store
// CHECK-NEXT: tile.load {{.*}} -> %[[OTHER:.*]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.load
func.func @aliased(%A: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %x = tile.alloc {lds = #tile.lds<offset = 0, bytes = 1024, row_stride = 16>} : !tile.tile<32x16xbf16, lds>
  %y = tile.alloc {lds = #tile.lds<offset = 0, bytes = 1024, row_stride = 16>} : !tile.tile<32x16xbf16, lds>
  %z = tile.alloc {lds = #tile.lds<offset = 1024, bytes = 1024, row_stride = 16>} : !tile.tile<32x16xbf16, lds>
  tile.store %x -> %C[%c0, %c0] : !tile.tile<32x16xbf16, lds>, memref<?x?xbf16>
  tile.load %A[%c0, %c0] -> %z : memref<?x?xbf16>, !tile.tile<32x16xbf16, lds>
  tile.load %A[%c0, %c0] -> %y : memref<?x?xbf16>, !tile.tile<32x16xbf16, lds>
  return
}

// -----

// Run alone, the pass meets tiles it cannot trace to an allocation (the
// pipeline rejects them first): they are assumed to overlap everything.
// CHECK-LABEL: func.func @unknown_tiles
// CHECK: tile.load
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.store
func.func @unknown_tiles(%a: !tile.tile<64x32xbf16, lds>, %b: !tile.tile<64x32xbf16, lds>, %A: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  tile.load %A[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  tile.store %b -> %A[%c0, %c0] : !tile.tile<64x32xbf16, lds>, memref<?x?xbf16>
  return
}
