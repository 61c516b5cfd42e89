// The pass-to-emitter contract's attributes print and parse back unchanged, in
// the custom and the generic op form; defaults are not printed.
// RUN: tilec-opt %s | tilec-opt | FileCheck %s
// RUN: tilec-opt %s --mlir-print-op-generic | tilec-opt | FileCheck %s

// CHECK-LABEL: func.func @contract
func.func @contract() attributes {tile.kernel, tile.num_waves = 4 : i64, tile.grid = [array<i64: -1, 0, 1>]} {
  // CHECK: access = #tile.access<load = 8, write = 8, read = 8>
  // CHECK-SAME: lds = #tile.lds<offset = 0, bytes = 8192, row_stride = 32, swizzle = [8, 2, 4]>
  %a = tile.alloc {name = "a", lds = #tile.lds<offset = 0, bytes = 8192, row_stride = 32, swizzle = [8, 2, 4]>,
                   access = #tile.access<load = 8, write = 8, read = 8>} : !tile.tile<128x32xbf16, lds>
  // A double-buffered tile with a column block: buffer_bytes and col_block print.
  // CHECK: access = #tile.access<load = 4>,
  // CHECK-SAME: lds = #tile.lds<offset = 8192, bytes = 4096, row_stride = 40, buffer_bytes = 2048, col_block = 8>
  %b = tile.alloc {name = "b", buffers = 2 : i64,
                   lds = #tile.lds<offset = 8192, bytes = 4096, row_stride = 40, buffer_bytes = 2048, col_block = 8>,
                   access = #tile.access<load = 4, write = 1, read = 1>} : !tile.tile<32x32xbf16, lds>
  // CHECK: layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [64, 64]>
  %acc = tile.alloc {name = "acc", layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [64, 64]>}
      : !tile.tile<64x64xf32, reg>
  // CHECK: layout = #tile.blocked<vec = 8, lanes = [2, 32], waves = [4, 1]>
  %x = tile.alloc {name = "x", layout = #tile.blocked<vec = 8, lanes = [2, 32], waves = [4, 1]>} : !tile.tile<64x64xbf16, reg>
  return
}
