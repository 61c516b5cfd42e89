// RUN: tilec-opt %s -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-pipeline-loops{arch=gfx1151}))' | FileCheck %s

// gfx1151 has no AGPRs: a 128x128 f32 accumulator over 4 waves of 32 lanes
// takes 128 VGPRs per lane; prefetching both tiles (rows of unknown
// alignment: each realigned run waits as two aligned 16-byte pieces and its
// place in them, 9 VGPRs for 4 runs per tile) would add 72 more and spill,
// so the loop keeps one stage.
// CHECK-LABEL: func.func @wave32
// CHECK-NOT: tile.pipelined
func.func @wave32(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tile.alloc {name = "a"} : !tile.tile<128x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x128xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<128x128xf32, reg>
  // expected-remark @+1 {{num_stages lowered from 2 to 1: prefetching the next tiles needs 72 VGPRs per lane next to 128 for accumulators, over the 256 of a wave on gfx1151}}
  scf.for %k = %c0 to %n step %c1 {
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<128x32xbf16, lds>
    tile.load %B[%k, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x128xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  } {tile.num_stages = 2 : i64}
  return
}
