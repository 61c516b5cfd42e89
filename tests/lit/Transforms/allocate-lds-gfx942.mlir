// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=gfx942},tilec-infer-layouts,tilec-allocate-lds{arch=gfx942}))' | FileCheck %s

// The layouts are chosen by counting bank conflicts of the tiles' actual
// accesses against the gfx942 bank model (docs/hardware.md section 3): the A
// tile's MFMA 32x32x8 operand reads go down a column (32 rows per phase), so
// unpadded rows of 64 bytes put every read on 2 banks; an XOR swizzle spreads
// them without extra bytes. Each lane's 4 k elements of two k steps are one
// 16-byte read (read = 8: MatrixInstr::kStepsPerRead), so the swizzle
// moves groups of 8. B's reads run along rows
// and need nothing. Offsets are 16-byte aligned.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: tile.lds_bytes = 16384 : i64
// CHECK: tile.alloc {access = #tile.access<read = 8>, bank_conflicts = 0 : i64, lds = #tile.lds<offset = 0, bytes = 8192, row_stride = 32, swizzle = [8, 2, 4]>, name = "a"} : !tile.tile<128x32xbf16, lds>
// CHECK: tile.alloc {bank_conflicts = 0 : i64, lds = #tile.lds<offset = 8192, bytes = 8192, row_stride = 128>, name = "b"} : !tile.tile<32x128xbf16, lds>
func.func @gemm() attributes {tile.num_waves = 4 : i64} {
  %a = tile.alloc {name = "a"} : !tile.tile<128x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x128xbf16, lds>
  %c = tile.alloc {name = "c"} : !tile.tile<128x128xf32, reg>
  tile.gemm %a, %b, %c : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// A row reduction over a wave grid with several waves per row band (a 32-row
// C cannot be split over 4 waves along its rows) needs 32 rows x 4 waves x 4
// bytes of LDS scratch; it reuses B's bytes: the tiles are dead by then
// (liveness over the function's top-level ops).
// CHECK-LABEL: func.func @row_scratch
// CHECK: wave_grid = [1, 4]
// CHECK: tile.reduce sum {{.*}} scratch_offset = 0 : i64
func.func @row_scratch() attributes {tile.num_waves = 4 : i64} {
  %a = tile.alloc {name = "a"} : !tile.tile<32x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x128xbf16, lds>
  %c = tile.alloc {name = "c"} : !tile.tile<32x128xf32, reg>
  %r = tile.alloc {name = "r"} : !tile.tile<32xf32, reg>
  tile.gemm %a, %b, %c : !tile.tile<32x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<32x128xf32, reg>
  tile.reduce sum %c -> %r {axis = 1 : i64} : !tile.tile<32x128xf32, reg>, !tile.tile<32xf32, reg>
  return
}

// -----

// A user's layout annotation is kept, and its modelled cost reported: the
// naive row-major A tile costs 384 extra cycles per k tile (16-byte operand
// reads of two k steps; the CPU emulator measures the same: tests/unit/run/LdsLayoutTest.cpp).
// CHECK-LABEL: func.func @naive
// CHECK: tile.alloc {access = #tile.access<read = 8>, bank_conflicts = 384 : i64, lds = #tile.lds<offset = 0, bytes = 8192, row_stride = 32>, name = "a"}
func.func @naive() attributes {tile.num_waves = 4 : i64} {
  %a = tile.alloc {name = "a", row_stride = 32 : i64} : !tile.tile<128x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x128xbf16, lds>
  %c = tile.alloc {name = "c"} : !tile.tile<128x128xf32, reg>
  tile.gemm %a, %b, %c : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// An explicit swizzle is kept too.
// CHECK-LABEL: func.func @explicit
// CHECK: tile.alloc {bank_conflicts = 0 : i64, lds = #tile.lds<offset = 0, bytes = 2048, row_stride = 64, swizzle = [8, 1, 8]>, name = "a"}
func.func @explicit() {
  %a = tile.alloc {name = "a", row_stride = 64 : i64, swizzle = array<i64: 8, 1, 8>} : !tile.tile<16x64xf16, lds>
  return
}

// -----

func.func @bad_stride() {
  // expected-error @+1 {{row_stride 16 of 'a' is smaller than its 64 columns}}
  %a = tile.alloc {name = "a", row_stride = 16 : i64} : !tile.tile<16x64xf16, lds>
  return
}

// -----

// Liveness: tiles used by disjoint spans of the kernel share bytes; tiles used
// in the same loop never do.
// CHECK-LABEL: func.func @reuse
// CHECK-SAME: tile.lds_bytes = 8192 : i64
// CHECK: tile.alloc {{.*}}lds = #tile.lds<offset = 0, {{.*}}name = "first"
// CHECK: tile.alloc {{.*}}lds = #tile.lds<offset = 0, {{.*}}name = "second"
// CHECK: tile.alloc {{.*}}lds = #tile.lds<offset = 0, {{.*}}name = "in_loop_a"
// CHECK: tile.alloc {{.*}}lds = #tile.lds<offset = 4096, {{.*}}name = "in_loop_b"
func.func @reuse(%A: memref<?x?xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = tile.alloc {name = "first"} : !tile.tile<64x32xbf16, lds>
  %y = tile.alloc {name = "second"} : !tile.tile<64x32xbf16, lds>
  %p = tile.alloc {name = "in_loop_a"} : !tile.tile<64x32xbf16, lds>
  %q = tile.alloc {name = "in_loop_b"} : !tile.tile<64x32xbf16, lds>
  tile.load %A[%c0, %c0] -> %x : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  tile.load %A[%c0, %c0] -> %y : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  scf.for %k = %c0 to %n step %c1 {
    tile.load %A[%c0, %k] -> %p : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %A[%k, %c0] -> %q : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  }
  return
}

// -----

// Over budget: the error names every buffer and its size (docs/hardware.md section 3: 64 KiB).
// expected-error @+1 {{LDS over budget on gfx942: 98304 bytes needed, 65536 available per workgroup ('big_a' 32768 B, 'big_b' 32768 B, 'big_c' 32768 B)}}
func.func @too_big() {
  %a = tile.alloc {name = "big_a"} : !tile.tile<256x64xbf16, lds>
  %b = tile.alloc {name = "big_b"} : !tile.tile<256x64xbf16, lds>
  %c = tile.alloc {name = "big_c"} : !tile.tile<256x64xbf16, lds>
  return
}

// -----

// Loads from tensors whose rows are multiples of 8 bf16 (tile.divisibility,
// what the launch checks) at columns that are multiples of 8 move 16 bytes
// each (#tile.access load = 8). The layout keeps runs whole for the LDS
// writes (write): B's plain rows take the 8 at once, and so does A's
// conflict-free swizzle, which moves groups of 8 for the 16-byte operand
// reads of two k steps (read).
// CHECK-LABEL: func.func @vector_loads
// CHECK: tile.alloc {access = #tile.access<load = 8, write = 8, read = 8>, bank_conflicts = 0 : i64, lds = #tile.lds<offset = 0, bytes = 8192, row_stride = 32, swizzle = [8, 2, 4]>, name = "a"}
// CHECK: tile.alloc {access = #tile.access<load = 8, write = 8>, bank_conflicts = 0 : i64, lds = #tile.lds<offset = 8192, bytes = 8192, row_stride = 128>, name = "b"}
func.func @vector_loads(%A: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %B: memref<?x?xbf16> {tile.divisibility = 16 : i64}, %k: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %kk = arith.muli %k, %c32 : index
  %a = tile.alloc {name = "a"} : !tile.tile<128x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x128xbf16, lds>
  %c = tile.alloc {name = "c"} : !tile.tile<128x128xf32, reg>
  tile.load %A[%c0, %kk] -> %a : memref<?x?xbf16>, !tile.tile<128x32xbf16, lds>
  tile.load %B[%kk, %c0] -> %b : memref<?x?xbf16>, !tile.tile<32x128xbf16, lds>
  tile.gemm %a, %b, %c : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// Rows of unknown alignment (a tensor without tile.divisibility, A) or a
// column that is not a known multiple (B's %k) do not keep 16-byte runs
// aligned: the runs are realigned (two aligned 16-byte loads each, shifted
// into place in registers), as wide as aligned ones. A tile whose rows are
// an odd number of elements cannot split into runs of 4 bytes or more: one
// element per load (C).
// CHECK-LABEL: func.func @realigned_loads
// CHECK: tile.alloc {access = #tile.access<load = 8, realign = true, {{.*}}name = "a"
// CHECK: tile.alloc {access = #tile.access<load = 8, realign = true, {{.*}}name = "b"
// CHECK: tile.alloc {{.*}}name = "c"
// CHECK-NOT: access
// CHECK: return
func.func @realigned_loads(%A: memref<?x?xbf16>, %B: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %k: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.alloc {name = "a"} : !tile.tile<128x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x128xbf16, lds>
  %c = tile.alloc {name = "c"} : !tile.tile<16x3xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<128x128xf32, reg>
  tile.load %A[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<128x32xbf16, lds>
  tile.load %B[%c0, %k] -> %b : memref<?x?xbf16>, !tile.tile<32x128xbf16, lds>
  tile.load %A[%c0, %k] -> %c : memref<?x?xbf16>, !tile.tile<16x3xbf16, lds>
  tile.gemm %a, %b, %acc : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// A window keeps a tensor's rows, so loads through it move 16 bytes when its
// column origin and width are known multiples of 8 too (%h * 128 and 128: one
// head of a [tokens, heads * 128] tensor; load = 8). A window 100 wide
// would cut a run of 8 at its right edge; 100 is a multiple of 4: runs of 4.
// CHECK-LABEL: func.func @window_loads
// CHECK: tile.alloc {access = #tile.access<load = 8, {{.*}}name = "a"
// CHECK: tile.alloc {access = #tile.access<load = 4, {{.*}}name = "b"
// CHECK: return
func.func @window_loads(%Q: memref<?x?xbf16> {tile.divisibility = 8 : i64}, %h: index, %r: index, %n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c100 = arith.constant 100 : index
  %c128 = arith.constant 128 : index
  %col = arith.muli %h, %c128 : index
  %w = tile.window %Q[%r, %col] [%n, %c128] : memref<?x?xbf16>
  %v = tile.window %Q[%r, %col] [%n, %c100] : memref<?x?xbf16>
  %a = tile.alloc {name = "a"} : !tile.tile<64x128xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<64x128xbf16, lds>
  tile.load %w[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<64x128xbf16, lds>
  tile.load %v[%c0, %c0] -> %b : memref<?x?xbf16>, !tile.tile<64x128xbf16, lds>
  return
}
