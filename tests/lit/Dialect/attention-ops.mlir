// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// RUN: tilec-opt %s --mlir-print-op-generic | tilec-opt | FileCheck %s
// The ops attention kernels use: tile.load_index (sequence offsets), tile.window
// (one sequence / one head of a packed tensor), tile.mask, and a grid axis
// sized by a scalar argument (axis -1).

// CHECK-LABEL: func.func @attention_ops
func.func @attention_ops(%Q: memref<?x?xbf16>, %cu: memref<?xi32>, %n: i32)
    attributes {tile.kernel, tile.num_waves = 4 : i64, tile.grid = [array<i64: 2, -1, 64>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // CHECK: tile.load_index %{{.*}}[%{{.*}}] : memref<?xi32>
  %start = tile.load_index %cu[%c0] : memref<?xi32>
  %end = tile.load_index %cu[%c1] : memref<?xi32>
  %len = arith.subi %end, %start : index
  // CHECK: tile.window %{{.*}}[%{{.*}}, %{{.*}}] [%{{.*}}, %{{.*}}] : memref<?x?xbf16>
  %w = tile.window %Q[%start, %c0] [%len, %c64] : memref<?x?xbf16>
  // CHECK: tile.window %{{.*}}[%{{.*}}] [%{{.*}}] : memref<?xi32>
  %wc = tile.window %cu[%c1] [%len] : memref<?xi32>
  %s = tile.alloc {name = "s"} : !tile.tile<64x64xf32, reg>
  // CHECK: tile.mask %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] {causal, window = 16 : i64} : !tile.tile<64x64xf32, reg>
  tile.mask %s [%start, %c0, %len] {causal, window = 16 : i64} : !tile.tile<64x64xf32, reg>
  // CHECK: tile.mask %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !tile.tile<64x64xf32, reg>
  tile.mask %s [%start, %c0, %len] : !tile.tile<64x64xf32, reg>
  // CHECK: tile.map safe_div
  %l = tile.alloc {name = "l"} : !tile.tile<64xf32, reg>
  tile.map safe_div %s, %s, %l : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  return
}
