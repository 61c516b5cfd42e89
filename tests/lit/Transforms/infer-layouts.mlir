// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=gfx942},tilec-infer-layouts))' | FileCheck %s

// The accumulator layout flows to tiles mapped from it and to the row vector
// of its reduction (online-softmax shape: m = rowmax(S); P = exp2(S - m)).
// With a row vector, tilec-select-matrix-instr prefers one wave per row band
// (wave grid 4x1: the row reduction stays inside each wave), which 32x32x8
// cannot tile for 64 rows, so 16x16x16. A row vector's parent shape is
// canonical: rows x (instruction N * wn).
// CHECK-LABEL: func.func @softmax_rows
// CHECK: tile.alloc {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", wave_grid = [4, 1], shape = [64, 64]>, name = "s"}
// CHECK: tile.alloc {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", wave_grid = [4, 1], shape = [64, 64]>, name = "p"}
// CHECK: tile.alloc {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", wave_grid = [4, 1], shape = [64, 16]>, name = "m"}
func.func @softmax_rows(%q: !tile.tile<64x32xbf16, lds>, %k: !tile.tile<64x32xbf16, lds>) attributes {tile.num_waves = 4 : i64} {
  %s = tile.alloc {name = "s"} : !tile.tile<64x64xf32, reg>
  %p = tile.alloc {name = "p"} : !tile.tile<64x64xf32, reg>
  %m = tile.alloc {name = "m"} : !tile.tile<64xf32, reg>
  tile.gemm %q, %k, %s {transpose_b} : !tile.tile<64x32xbf16, lds>, !tile.tile<64x32xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.reduce max %s -> %m {axis = 1 : i64} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map sub_exp2 %p, %s, %m : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  return
}

// -----

// Tiles no matrix instruction reaches take a blocked layout (any shape; here
// 8 x 8 over 4 waves of 64 lanes, no global access: runs of 4 f32, 2 lanes
// along a row, 32 rows per wave, the waves along the row; all but 8 rows and
// 8 columns of that footprint hold replicas).
// CHECK-LABEL: func.func @orphan
// CHECK: tile.alloc {layout = #tile.blocked<vec = 4, lanes = [32, 2], waves = [1, 4]>, name = "x"}
// CHECK: tile.alloc {layout = #tile.blocked<vec = 4, lanes = [32, 2], waves = [1, 4]>, name = "y"}
func.func @orphan() attributes {tile.num_waves = 4 : i64} {
  %x = tile.alloc {name = "x"} : !tile.tile<8x8xf32, reg>
  %y = tile.alloc {name = "y"} : !tile.tile<8x8xf32, reg>
  tile.map exp %x, %y : !tile.tile<8x8xf32, reg>, !tile.tile<8x8xf32, reg>
  return
}

// -----

// Elementwise work on loaded data (no gemm): a blocked layout, rows over the
// waves first (a row reduction stays inside a wave), runs as wide as the
// tensors' divisibility allows (X: 4 f32 = 16 bytes; the rank-1 R has none,
// which does not limit X's runs: a row vector holds one value per row). The
// row vector of its reduction and the [1, 128] bias share the layout.
// CHECK-LABEL: func.func @elementwise
// CHECK: tile.alloc {layout = #tile.blocked<vec = 4, lanes = [2, 32], waves = [4, 1]>, name = "x"}
// CHECK: tile.alloc {layout = #tile.blocked<vec = 4, lanes = [2, 32], waves = [4, 1]>, name = "r"}
// CHECK: tile.alloc {layout = #tile.blocked<vec = 4, lanes = [2, 32], waves = [4, 1]>, name = "b"}
func.func @elementwise(%X: memref<?x?xf32> {tile.divisibility = 4 : i64}, %R: memref<?xf32>, %B: memref<?x?xf32> {tile.divisibility = 4 : i64}) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %x = tile.alloc {name = "x"} : !tile.tile<64x128xf32, reg>
  %r = tile.alloc {name = "r"} : !tile.tile<64xf32, reg>
  %b = tile.alloc {name = "b"} : !tile.tile<1x128xf32, reg>
  tile.load %X[%c0, %c0] -> %x : memref<?x?xf32>, !tile.tile<64x128xf32, reg>
  tile.load %B[%c0, %c0] -> %b : memref<?x?xf32>, !tile.tile<1x128xf32, reg>
  tile.map add %x, %x, %b : !tile.tile<64x128xf32, reg>, !tile.tile<64x128xf32, reg>, !tile.tile<1x128xf32, reg>
  tile.map exp %x, %x : !tile.tile<64x128xf32, reg>, !tile.tile<64x128xf32, reg>
  tile.reduce sum %x -> %r {axis = 1 : i64} : !tile.tile<64x128xf32, reg>, !tile.tile<64xf32, reg>
  tile.store %r -> %R[%c0] : !tile.tile<64xf32, reg>, memref<?xf32>
  return
}

// -----

// A [1, N] tile broadcast over a matrix-instruction accumulator (only blocked
// layouts hold it as a plain tile) is read into the accumulator's layout
// through an f32 LDS tile of its shape, right before the map.
// CHECK-LABEL: func.func @broadcast_over_acc
// CHECK: %[[W:.*]] = tile.alloc {layout = #tile.blocked<vec = 1, lanes = [1, 64], waves = [1, 4]>, name = "w"} : !tile.tile<1x64xf32, reg>
// CHECK-NEXT: %[[CVT:.*]] = tile.alloc {layout_conversion, name = "w.cvt"} : !tile.tile<1x64xf32, lds>
// CHECK-NEXT: %[[WC:.*]] = tile.alloc {layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [64, 64]>, name = "w.as_c"} : !tile.tile<64x64xf32, reg>
// CHECK: tile.copy %[[W]] -> %[[CVT]]
// CHECK-NEXT: tile.copy %[[CVT]] -> %[[WC]] : !tile.tile<1x64xf32, lds>, !tile.tile<64x64xf32, reg>
// CHECK-NEXT: tile.map mul %{{.*}}, %{{.*}}, %[[WC]] : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
func.func @broadcast_over_acc(%a: !tile.tile<64x32xbf16, lds>, %b: !tile.tile<32x64xbf16, lds>, %W: memref<?x?xf32>) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c = tile.alloc {name = "c"} : !tile.tile<64x64xf32, reg>
  %w = tile.alloc {name = "w"} : !tile.tile<1x64xf32, reg>
  tile.gemm %a, %b, %c : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.load %W[%c0, %c0] -> %w : memref<?x?xf32>, !tile.tile<1x64xf32, reg>
  // expected-remark @+1 {{'w' [1, 64] (#tile.blocked<vec = 1, lanes = [1, 64], waves = [1, 4]>) is read in the layout of 'c' (#tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [64, 64]>), as a [64, 64] tile, through 256 bytes of LDS: 16 more registers per lane}}
  tile.map mul %c, %c, %w : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<1x64xf32, reg>
  return
}

// -----

// Two maps reading the same [1, N] tile in the same layout share its LDS
// tile and its converted tile (one of each), each copying right before it
// reads.
// CHECK-LABEL: func.func @broadcast_twice
// CHECK-COUNT-1: name = "w.cvt"
// CHECK-COUNT-1: name = "w.as_c"
// CHECK-NOT: name = "w.cvt"
// CHECK-NOT: name = "w.as_c"
// CHECK: tile.copy
// CHECK-NEXT: tile.copy
// CHECK-NEXT: tile.map mul
// CHECK: tile.copy
// CHECK-NEXT: tile.copy
// CHECK-NEXT: tile.map add
func.func @broadcast_twice(%a: !tile.tile<64x32xbf16, lds>, %b: !tile.tile<32x64xbf16, lds>, %W: memref<?x?xf32>) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c = tile.alloc {name = "c"} : !tile.tile<64x64xf32, reg>
  %w = tile.alloc {name = "w"} : !tile.tile<1x64xf32, reg>
  tile.gemm %a, %b, %c : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.load %W[%c0, %c0] -> %w : memref<?x?xf32>, !tile.tile<1x64xf32, reg>
  // expected-remark @+1 {{'w' [1, 64]}}
  tile.map mul %c, %c, %w : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<1x64xf32, reg>
  // expected-remark @+1 {{'w' [1, 64]}}
  tile.map add %c, %c, %w : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<1x64xf32, reg>
  return
}

// -----

// Two gemms with different instructions cannot share an accumulator.
func.func @conflict(%a: !tile.tile<64x32xbf16, lds>, %b: !tile.tile<32x64xbf16, lds>, %a2: !tile.tile<64x16xf16, lds>, %b2: !tile.tile<16x64xf16, lds>) attributes {tile.num_waves = 4 : i64} {
  %c = tile.alloc {name = "c"} : !tile.tile<64x64xf32, reg>
  tile.gemm %a, %b, %c : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  // expected-error @+1 {{register tile 'c' would need two layouts}}
  tile.gemm %a2, %b2, %c : !tile.tile<64x16xf16, lds>, !tile.tile<16x64xf16, lds>, !tile.tile<64x64xf32, reg>
  return
}

// -----

// A register operand of tile.gemm (attention's P @ V): P gets the first
// gemm's accumulator layout through the cast copy, and is converted for the
// second gemm through an LDS tile of its own, copied right before it.
// CHECK-LABEL: func.func @register_operand
// CHECK: %[[P:.*]] = tile.alloc {layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", {{.*}}>, name = "p"
// CHECK-NEXT: %[[PL:.*]] = tile.alloc {name = "p.lds"} : !tile.tile<64x64xbf16, lds>
// CHECK: tile.copy %{{.*}} -> %[[P]] : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xbf16, reg>
// CHECK-NEXT: tile.copy %[[P]] -> %[[PL]] : !tile.tile<64x64xbf16, reg>, !tile.tile<64x64xbf16, lds>
// CHECK-NEXT: tile.gemm %[[PL]], %{{.*}}, %{{.*}}
func.func @register_operand(%q: !tile.tile<64x32xbf16, lds>, %k: !tile.tile<64x32xbf16, lds>, %v: !tile.tile<64x64xbf16, lds>) attributes {tile.num_waves = 4 : i64} {
  %s = tile.alloc {name = "s"} : !tile.tile<64x64xf32, reg>
  %p = tile.alloc {name = "p"} : !tile.tile<64x64xbf16, reg>
  %o = tile.alloc {name = "o"} : !tile.tile<64x64xf32, reg>
  tile.gemm %q, %k, %s {transpose_b} : !tile.tile<64x32xbf16, lds>, !tile.tile<64x32xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.copy %s -> %p : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xbf16, reg>
  tile.gemm %p, %v, %o : !tile.tile<64x64xbf16, reg>, !tile.tile<64x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  return
}

// -----

// Attention's two accumulators, S = Q K^T (64x64) and O (64x128), meet in the
// row vectors (the maxima of S rescale O): one instruction and one wave grid
// for both, and one layout for every row vector whichever tile it came from.
// CHECK-LABEL: func.func @attention_rows
// CHECK: tile.alloc {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", wave_grid = [4, 1], shape = [64, 64]>, name = "s"}
// CHECK: tile.alloc {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", wave_grid = [4, 1], shape = [64, 128]>, name = "o"}
// CHECK: tile.alloc {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", wave_grid = [4, 1], shape = [64, 16]>, name = "m"}
// CHECK: tile.alloc {layout = #tile.matrix<"v_mfma_f32_16x16x16_bf16", wave_grid = [4, 1], shape = [64, 16]>, name = "alpha"}
func.func @attention_rows(%q: !tile.tile<64x128xbf16, lds>, %k: !tile.tile<64x128xbf16, lds>, %p: !tile.tile<64x64xbf16, lds>, %v: !tile.tile<64x128xbf16, lds>) attributes {tile.num_waves = 4 : i64} {
  %s = tile.alloc {name = "s"} : !tile.tile<64x64xf32, reg>
  %o = tile.alloc {name = "o"} : !tile.tile<64x128xf32, reg>
  %m = tile.alloc {name = "m"} : !tile.tile<64xf32, reg>
  %alpha = tile.alloc {name = "alpha"} : !tile.tile<64xf32, reg>
  tile.gemm %q, %k, %s {transpose_b} : !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.reduce max %s -> %m {axis = 1 : i64} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map exp2 %alpha, %m : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map mul %o, %o, %alpha : !tile.tile<64x128xf32, reg>, !tile.tile<64x128xf32, reg>, !tile.tile<64xf32, reg>
  tile.gemm %p, %v, %o : !tile.tile<64x64xbf16, lds>, !tile.tile<64x128xbf16, lds>, !tile.tile<64x128xf32, reg>
  return
}

// -----

// Two gemms reading one register tile (a key loop split in two, its halves
// each computing P @ V) share P's LDS conversion tile: one alloc, a copy into
// it right before each gemm.
// CHECK-LABEL: func.func @register_operand_two_readers
// CHECK: %[[PL:.*]] = tile.alloc {name = "p.lds"} : !tile.tile<64x64xbf16, lds>
// CHECK-NOT: name = "p.lds"
// CHECK: tile.copy %{{.*}} -> %[[PL]] : !tile.tile<64x64xbf16, reg>, !tile.tile<64x64xbf16, lds>
// CHECK-NEXT: tile.gemm %[[PL]], %{{.*}}, %{{.*}}
// CHECK: tile.copy %{{.*}} -> %[[PL]] : !tile.tile<64x64xbf16, reg>, !tile.tile<64x64xbf16, lds>
// CHECK-NEXT: tile.gemm %[[PL]], %{{.*}}, %{{.*}}
func.func @register_operand_two_readers(%q: !tile.tile<64x32xbf16, lds>, %k: !tile.tile<64x32xbf16, lds>, %v: !tile.tile<64x64xbf16, lds>) attributes {tile.num_waves = 4 : i64} {
  %s = tile.alloc {name = "s"} : !tile.tile<64x64xf32, reg>
  %p = tile.alloc {name = "p"} : !tile.tile<64x64xbf16, reg>
  %o = tile.alloc {name = "o"} : !tile.tile<64x64xf32, reg>
  tile.gemm %q, %k, %s {transpose_b} : !tile.tile<64x32xbf16, lds>, !tile.tile<64x32xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.copy %s -> %p : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xbf16, reg>
  tile.gemm %p, %v, %o : !tile.tile<64x64xbf16, reg>, !tile.tile<64x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.gemm %q, %k, %s {transpose_b} : !tile.tile<64x32xbf16, lds>, !tile.tile<64x32xbf16, lds>, !tile.tile<64x64xf32, reg>
  tile.copy %s -> %p : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xbf16, reg>
  tile.gemm %p, %v, %o : !tile.tile<64x64xbf16, reg>, !tile.tile<64x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  return
}
