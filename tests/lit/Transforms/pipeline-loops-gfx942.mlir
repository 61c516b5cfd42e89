// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-pipeline-loops{arch=gfx942},canonicalize,cse))' | FileCheck %s

// Two stages: iteration 0's tile into buffer 0 and iteration 1's into
// registers before the loop; each iteration commits iteration j+1 to buffer
// (j+1)%2, prefetches iteration j+2 and computes on buffer j%2.
// CHECK-LABEL: func.func @kloop
// CHECK: %[[A:.*]] = tile.alloc {buffers = 2 : i64, name = "a"} : !tile.tile<64x32xbf16, lds>
// CHECK: %[[PF:.*]] = tile.alloc {name = "a.prefetch"} : !tile.tile<64x32xbf16, reg>
// CHECK: %[[V0:.*]] = tile.view %[[A]][%c0] : !tile.tile<64x32xbf16, lds>
// CHECK: tile.load %arg0[%c0, %c0] -> %[[V0]]
// CHECK: tile.load %arg0[%c0, %c32] -> %[[PF]]
// CHECK: scf.for %[[IV:.*]] = %c0 to %arg2 step %c1 {
// CHECK-DAG: %[[CUR:.*]] = arith.remui %[[IV]], %c2
// CHECK-DAG: %[[J1:.*]] = arith.addi %[[IV]], %c1
// CHECK-DAG: %[[NEXT:.*]] = arith.remui %[[J1]], %c2
// CHECK-DAG: %[[J2:.*]] = arith.addi %[[IV]], %c2
// CHECK-DAG: %[[VC:.*]] = tile.view %[[A]][%[[CUR]]] {stage_offset = 0 : i64}
// CHECK-DAG: %[[VN:.*]] = tile.view %[[A]][%[[NEXT]]] {stage_offset = 1 : i64}
// CHECK: tile.copy %[[PF]] -> %[[VN]]
// CHECK: %[[K2:.*]] = arith.muli %[[J2]], %c32
// CHECK: tile.load %arg0[%c0, %[[K2]]] -> %[[PF]]
// CHECK: tile.gemm %[[VC]], %{{.*}}, %{{.*}}
// CHECK: } {tile.num_stages = 2 : i64, tile.pipelined}
func.func @kloop(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  scf.for %k = %c0 to %n step %c1 {
    %kk = arith.muli %k, %c32 : index
    tile.load %A[%c0, %kk] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 2 : i64}
  return
}

// -----

// Four stages of two 256x64 bf16 tiles need 256 KiB: the count is lowered to
// what fits in 64 KiB (one LDS buffer per tile) and a remark says so. The
// loop still prefetches through registers: iteration 0 is loaded into the
// staging tiles before it, and each iteration commits its tiles into the one
// buffer, then loads the next iteration's.
// CHECK-LABEL: func.func @too_many_stages
// CHECK: %[[A:.*]] = tile.alloc {name = "a"} : !tile.tile<256x64xbf16, lds>
// CHECK: %[[AP:.*]] = tile.alloc {name = "a.prefetch"} : !tile.tile<256x64xbf16, reg>
// CHECK: tile.load %arg0[%c0, %c0] -> %[[AP]]
// CHECK: scf.for %[[K:.*]] = %c0
// CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %c1
// CHECK: tile.copy %[[AP]] -> %[[A]]
// CHECK: tile.load %arg0[%c0, %[[NEXT]]] -> %[[AP]]
// CHECK: tile.gemm %[[A]],
// CHECK: } {tile.num_stages = 1 : i64, tile.pipelined}
func.func @too_many_stages(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 8 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tile.alloc {name = "a"} : !tile.tile<256x64xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<64x256xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<256x256xf32, reg>
  // expected-remark @+1 {{num_stages lowered from 4 to 1: 4 stages need 262144 bytes of LDS, 65536 available on gfx942; one LDS buffer per tile, the next tiles prefetched into registers}}
  scf.for %k = %c0 to %n step %c1 {
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<256x64xbf16, lds>
    tile.load %B[%k, %c0] -> %b : memref<?x?xbf16>, !tile.tile<64x256xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<256x64xbf16, lds>, !tile.tile<64x256xbf16, lds>, !tile.tile<256x256xf32, reg>
  } {tile.num_stages = 4 : i64}
  return
}

// -----

// Three stages of 64x32 + 32x64 bf16 fit (24 KiB): three buffers, two
// prologue tiles in LDS and one in registers.
// CHECK-LABEL: func.func @three
// CHECK: tile.alloc {buffers = 3 : i64, name = "a"}
// CHECK: tile.view %{{.*}}[%c0]
// CHECK: tile.view %{{.*}}[%c1]
// CHECK: scf.for
// CHECK: arith.remui %{{.*}}, %c3
// CHECK: {tile.num_stages = 3 : i64, tile.pipelined}
func.func @three(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  scf.for %k = %c0 to %n step %c1 {
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %B[%k, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 3 : i64}
  return
}

// -----

// A loop without loads into LDS has nothing to pipeline.
func.func @nothing(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{num_stages = 2 has no effect: the loop loads no LDS tile that can be pipelined}}
  scf.for %k = %c0 to %n step %c1 {
  } {tile.num_stages = 2 : i64}
  return
}

// -----

// Tiles come from tile.alloc: a tile passed in as an argument has no LDS
// placement or layout for the later passes to reason about.
// expected-error @+1 {{kernel argument of tile type '!tile.tile<64x32xbf16, lds>': tiles must be created by tile.alloc (or tile.view of one) in the kernel body}}
func.func @tile_argument(%a: !tile.tile<64x32xbf16, lds>, %A: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  tile.load %A[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  return
}

// -----

// ... nor does one carried through a loop.
func.func @tile_iter_arg(%A: memref<?x?xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  // expected-error @+1 {{region argument of tile type '!tile.tile<64x32xbf16, lds>': tiles must be created by tile.alloc (or tile.view of one) in the kernel body}}
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%t = %a) -> (!tile.tile<64x32xbf16, lds>) {
    tile.load %A[%c0, %k] -> %t : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    scf.yield %t : !tile.tile<64x32xbf16, lds>
  }
  return
}

// -----

// tile.divisibility promises what a tensor's rows (or an i32 argument's value)
// are multiples of: a power of two, on a tensor or i32 argument.
// expected-error @+1 {{kernel argument 0: tile.divisibility must be a positive power of two on a tensor or i32 argument, got 6 : i64}}
func.func @divisibility_not_power_of_two(%A: memref<?x?xbf16> {tile.divisibility = 6 : i64}) {
  return
}

// -----

// expected-error @+1 {{kernel argument 1: tile.divisibility must be a positive power of two on a tensor or i32 argument, got 8 : i64}}
func.func @divisibility_on_a_scalar(%A: memref<?x?xbf16>, %n: index {tile.divisibility = 8 : i64}) {
  return
}

// -----

// expected-error @+1 {{kernel argument 1: tile.divisibility must be a positive power of two on a tensor or i32 argument, got 8 : i64}}
func.func @divisibility_on_an_f32(%A: memref<?x?xbf16>, %s: f32 {tile.divisibility = 8 : i64}) {
  return
}
