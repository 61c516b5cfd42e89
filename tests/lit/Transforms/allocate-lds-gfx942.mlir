// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=gfx942},tilec-infer-layouts,tilec-allocate-lds{arch=gfx942}))' | FileCheck %s

// bf16 rows are padded by 8 elements (16 bytes); offsets are 16-byte aligned;
// the 2x2 wave grid's row reduction needs 128 rows x 2 waves x 4 bytes of scratch.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: tile.lds_bytes = 19968 : i64
// CHECK: tile.alloc {name = "a", offset = 0 : i64, row_stride = 40 : i64} : !tile.tile<128x32xbf16, lds>
// CHECK: tile.alloc {name = "b", offset = 10240 : i64, row_stride = 136 : i64} : !tile.tile<32x128xbf16, lds>
// CHECK: tile.reduce sum {{.*}} scratch_offset = 18944 : i64
func.func @gemm() attributes {tile.num_waves = 4 : i64} {
  %a = tile.alloc {name = "a"} : !tile.tile<128x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<32x128xbf16, lds>
  %c = tile.alloc {name = "c"} : !tile.tile<128x128xf32, reg>
  %r = tile.alloc {name = "r"} : !tile.tile<128xf32, reg>
  tile.gemm %a, %b, %c : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  tile.reduce sum %c -> %r {axis = 1 : i64} : !tile.tile<128x128xf32, reg>, !tile.tile<128xf32, reg>
  return
}

// -----

// An explicit row stride (user layout annotation) is kept.
// CHECK-LABEL: func.func @explicit
// CHECK: tile.alloc {name = "a", offset = 0 : i64, row_stride = 64 : i64}
func.func @explicit() {
  %a = tile.alloc {name = "a", row_stride = 64 : i64} : !tile.tile<16x64xf16, lds>
  return
}

// -----

// Over budget: the error names every buffer and its size (amd-targets.md section 3: 64 KiB).
// expected-error @+1 {{LDS over budget on gfx942: 73728 bytes needed, 65536 available per workgroup ('big_a' 36864 B, 'big_b' 36864 B)}}
func.func @too_big() {
  %a = tile.alloc {name = "big_a"} : !tile.tile<256x64xbf16, lds>
  %b = tile.alloc {name = "big_b"} : !tile.tile<256x64xbf16, lds>
  return
}
