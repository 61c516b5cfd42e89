// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// RUN: tilec-opt %s --mlir-print-op-generic | tilec-opt | FileCheck %s

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%A: memref<?x?xbf16>, %ids: memref<?xi32>, %C: memref<?x?xf32>, %s: f32)
    attributes {tile.kernel, tile.num_waves = 4 : i64, tile.grid = [array<i64: 2, 0, 64>, array<i64: -1, 0, 8>]} {
  %c0 = arith.constant 0 : index
  // CHECK: tile.block_id 0 : index
  %b = tile.block_id 0 : index
  // CHECK: tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %bt = tile.alloc {name = "b"} : !tile.tile<64x32xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  %m = tile.alloc {name = "m"} : !tile.tile<64xf32, reg>
  // CHECK: tile.fill %{{.*}}, 0.000000e+00 : !tile.tile<64x64xf32, reg>
  tile.fill %acc, 0.0 : !tile.tile<64x64xf32, reg>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}} : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  tile.load %A[%b, %c0] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  // CHECK: tile.gather %{{.*}}[%{{.*}}[%{{.*}}], %{{.*}}] -> %{{.*}} : memref<?x?xbf16>, memref<?xi32>, !tile.tile<64x32xbf16, lds>
  tile.gather %A[%ids[%b], %c0] -> %bt : memref<?x?xbf16>, memref<?xi32>, !tile.tile<64x32xbf16, lds>
  // CHECK: tile.barrier
  tile.barrier
  // CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {transpose_b}
  tile.gemm %a, %bt, %acc {transpose_b} : !tile.tile<64x32xbf16, lds>, !tile.tile<64x32xbf16, lds>, !tile.tile<64x64xf32, reg>
  // CHECK: tile.map scale %{{.*}}, %{{.*}} scalar(%{{.*}})
  tile.map scale %acc, %acc scalar(%s) : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
  // CHECK: tile.reduce max %{{.*}} -> %{{.*}} {accumulate, axis = 1 : i64}
  tile.reduce max %acc -> %m {axis = 1 : i64, accumulate} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  // CHECK: tile.map sub_exp2
  tile.map sub_exp2 %acc, %acc, %m : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  // CHECK: tile.store %{{.*}} -> %{{.*}}[%{{.*}}, %{{.*}}] : !tile.tile<64x64xf32, reg>, memref<?x?xf32>
  tile.store %acc -> %C[%b, %c0] : !tile.tile<64x64xf32, reg>, memref<?x?xf32>
  return
}

// Positions as values (MoE top-k): column indices, equality, dropping a choice.
// CHECK-LABEL: func.func @positions
func.func @positions(%ids: memref<?x?xi32>) {
  %c0 = arith.constant 0 : index
  %x = tile.alloc {name = "x"} : !tile.tile<64x16xf32, reg>
  %col = tile.alloc {name = "col"} : !tile.tile<64x16xf32, reg>
  %m = tile.alloc {name = "m"} : !tile.tile<64xf32, reg>
  %r = tile.alloc {name = "r"} : !tile.tile<64xi32, reg>
  // CHECK: tile.iota %{{.*}} {axis = 1 : i64} : !tile.tile<64x16xf32, reg>
  tile.iota %col {axis = 1 : i64} : !tile.tile<64x16xf32, reg>
  // CHECK: tile.iota %{{.*}} {axis = 0 : i64} : !tile.tile<64xf32, reg>
  tile.iota %m {axis = 0 : i64} : !tile.tile<64xf32, reg>
  // CHECK: tile.map eq
  tile.map eq %x, %col, %m : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  // CHECK: tile.map neg_inf_where
  tile.map neg_inf_where %x, %x, %col : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.map copy %r, %m : !tile.tile<64xi32, reg>, !tile.tile<64xf32, reg>
  tile.store %r -> %ids[%c0, %c0] : !tile.tile<64xi32, reg>, memref<?x?xi32>
  return
}
