// RUN: tilec-opt %s -split-input-file -verify-diagnostics

func.func @gemm_shapes(%a: !tile.tile<128x32xbf16, lds>, %b: !tile.tile<64x128xbf16, lds>, %c: !tile.tile<128x128xf32, reg>) {
  // expected-error @+1 {{'tile.gemm' op shape mismatch: A 128x32xbf16 (lds) * B 64x128xbf16 (lds) does not give C 128x128xf32 (reg) (M=128, K=32 vs K=64, N=128)}}
  tile.gemm %a, %b, %c : !tile.tile<128x32xbf16, lds>, !tile.tile<64x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

// An f32 A is an accumulator rounded to B's 16-bit type: only from registers.
func.func @gemm_f32_a_in_lds(%a: !tile.tile<32x32xf32, lds>, %b: !tile.tile<32x32xbf16, lds>, %c: !tile.tile<32x32xf32, reg>) {
  // expected-error @+1 {{A and B element types differ: 'f32' vs 'bf16' (only an f32 register A may feed a 16-bit float B)}}
  tile.gemm %a, %b, %c : !tile.tile<32x32xf32, lds>, !tile.tile<32x32xbf16, lds>, !tile.tile<32x32xf32, reg>
  return
}

// -----

func.func @gemm_acc_type(%a: !tile.tile<32x32xbf16, lds>, %b: !tile.tile<32x32xbf16, lds>, %c: !tile.tile<32x32xbf16, reg>) {
  // expected-error @+1 {{accumulator C must be f32, got 32x32xbf16 (reg)}}
  tile.gemm %a, %b, %c : !tile.tile<32x32xbf16, lds>, !tile.tile<32x32xbf16, lds>, !tile.tile<32x32xbf16, reg>
  return
}

// -----

func.func @copy_shapes(%a: !tile.tile<64x32xf32, reg>, %b: !tile.tile<32x64xbf16, lds>) {
  // expected-error @+1 {{'tile.copy' op copies between tiles of different shapes: 64x32xf32 (reg) -> 32x64xbf16 (lds)}}
  tile.copy %a -> %b : !tile.tile<64x32xf32, reg>, !tile.tile<32x64xbf16, lds>
  return
}

// -----

func.func @load_type(%A: memref<?x?xf16>, %i: index, %t: !tile.tile<64x32xbf16, lds>) {
  // expected-error @+1 {{element type of tile 64x32xbf16 (lds) differs from tensor 'memref<?x?xf16>'}}
  tile.load %A[%i, %i] -> %t : memref<?x?xf16>, !tile.tile<64x32xbf16, lds>
  return
}

// -----

func.func @load_indices(%A: memref<?x?xbf16>, %i: index, %t: !tile.tile<64x32xbf16, lds>) {
  // expected-error @+1 {{needs 2 indices into tensor 'memref<?x?xbf16>', got 1}}
  tile.load %A[%i] -> %t : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  return
}

// -----

func.func @broadcast(%d: !tile.tile<64x64xf32, reg>, %v: !tile.tile<32xf32, reg>) {
  // expected-error @+1 {{cannot broadcast rhs 32xf32 (reg) to 64x64xf32 (reg) (a rank-1 rhs needs one value per row: 64)}}
  tile.map add %d, %d, %v : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<32xf32, reg>
  return
}

// -----

func.func @reduce_len(%s: !tile.tile<64x32xf32, reg>, %d: !tile.tile<32xf32, reg>) {
  // expected-error @+1 {{axis 1 reduction of 64x32xf32 (reg) gives 64 values, destination 32xf32 (reg) holds 32}}
  tile.reduce sum %s -> %d {axis = 1 : i64} : !tile.tile<64x32xf32, reg>, !tile.tile<32xf32, reg>
  return
}

// -----

func.func @map_arity(%d: !tile.tile<64x64xf32, reg>) {
  // expected-error @+1 {{'add' takes 2 input tile(s), got 1}}
  tile.map add %d, %d : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
  return
}

// -----

// expected-error @+1 {{tile dimensions must be positive, got 0}}
func.func @bad_type(%d: !tile.tile<0x64xf32, reg>) {
  return
}

// -----

// expected-error @+1 {{'tile.num_waves' must be an integer in [1, 16]}}
func.func @bad_waves() attributes {tile.num_waves = 0 : i64} {
  return
}

// -----

func.func @window_rank(%Q: memref<?x?xbf16>, %i: index) {
  // expected-error @+1 {{'tile.window' op a window of 'memref<?x?xbf16>' needs 2 origin index(es) and 2 size(s), got 1 and 2}}
  %w = tile.window %Q[%i] [%i, %i] : memref<?x?xbf16>
  return
}

// -----

func.func @mask_type(%s: !tile.tile<64x64xbf16, reg>, %i: index) {
  // expected-error @+1 {{'tile.mask' op masks a rank-2 f32 register tile of scores, got 64x64xbf16 (reg)}}
  tile.mask %s [%i, %i, %i] {causal} : !tile.tile<64x64xbf16, reg>
  return
}

// -----

func.func @mask_window(%s: !tile.tile<64x64xf32, reg>, %i: index) {
  // expected-error @+1 {{'tile.mask' op attribute 'window' failed to satisfy constraint}}
  tile.mask %s [%i, %i, %i] {window = 0 : i64} : !tile.tile<64x64xf32, reg>
  return
}

// -----

func.func @load_index_type(%t: memref<?xf32>, %i: index) {
  // expected-error @+1 {{'tile.load_index' op operand #0 must be 1D/2D memref of 32-bit signless integer values}}
  %x = tile.load_index %t[%i] : memref<?xf32>
  return
}

// -----

func.func @iota_axis(%t: !tile.tile<64xf32, reg>) {
  // expected-error @+1 {{'tile.iota' op axis 1 of a rank-1 tile 64xf32 (reg)}}
  tile.iota %t {axis = 1 : i64} : !tile.tile<64xf32, reg>
  return
}

// -----

// expected-error @+1 {{blocked layout: vec must be a power of two in [1, 16], got 3}}
func.func @blocked_vec() attributes {tile.layout_example = #tile.blocked<vec = 3, lanes = [2, 32], waves = [4, 1]>} {
  return
}

// -----

// expected-error @+1 {{blocked layout: the lane grid covers a wave of 32 or 64 lanes, got 16}}
func.func @blocked_lanes() attributes {tile.layout_example = #tile.blocked<vec = 4, lanes = [2, 8], waves = [4, 1]>} {
  return
}

// -----

func.func @reduce_keepdims(%s: !tile.tile<16x64xf32, reg>, %d: !tile.tile<1x16xf32, reg>) {
  // expected-error @+1 {{axis 1 reduction of 16x64xf32 (reg) goes into a 16x1 tile, got 1x16xf32 (reg)}}
  tile.reduce sum %s -> %d {axis = 1 : i64} : !tile.tile<16x64xf32, reg>, !tile.tile<1x16xf32, reg>
  return
}

// -----

// expected-error @+1 {{matrix layout: a 64x50 accumulator does not split over a 4x4 grid of waves}}
func.func @matrix_grid() attributes {tile.layout_example = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [4, 4], shape = [64, 50]>} {
  return
}

// -----

func.func @gemm_layout_shape(%a: !tile.tile<128x32xbf16, lds>, %b: !tile.tile<32x128xbf16, lds>, %c: !tile.tile<128x128xf32, reg>) {
  // expected-error @+1 {{'tile.gemm' op layout #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [64, 128]> is not one of C 128x128xf32 (reg)}}
  tile.gemm %a, %b, %c {layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [64, 128]>} : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

func.func @gemm_scope(%a: !tile.tile<128x32xbf16, lds>, %b: !tile.tile<32x128xbf16, lds>, %c: !tile.tile<128x128xf32, reg>) {
  // expected-error @+1 {{attribute 'matrix_scope' failed to satisfy constraint: which matrix instructions a tile.gemm may use}}
  tile.gemm %a, %b, %c {matrix_scope = "warp"} : !tile.tile<128x32xbf16, lds>, !tile.tile<32x128xbf16, lds>, !tile.tile<128x128xf32, reg>
  return
}

// -----

func.func @alloc_lds_layout() {
  // expected-error @+1 {{'tile.alloc' op an LDS tile has no register layout, got #tile.staging}}
  %t = tile.alloc {layout = #tile.staging} : !tile.tile<64x32xbf16, lds>
  return
}

// -----

func.func @alloc_rows_layout() {
  // expected-error @+1 {{'tile.alloc' op layout #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [128, 64]> does not fit 64xf32 (reg)}}
  %m = tile.alloc {layout = #tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [128, 64]>} : !tile.tile<64xf32, reg>
  return
}

// -----

func.func @alloc_string_layout() {
  // expected-error @+1 {{'tile.alloc' op attribute 'layout' failed to satisfy constraint}}
  %acc = tile.alloc {layout = "acc"} : !tile.tile<128x128xf32, reg>
  return
}

// -----

func.func @alloc_reg_placement() {
  // expected-error @+1 {{'tile.alloc' op a register tile has no LDS placement, got #tile.lds<offset = 0, bytes = 1024, row_stride = 16>}}
  %t = tile.alloc {lds = #tile.lds<offset = 0, bytes = 1024, row_stride = 16>} : !tile.tile<32x16xbf16, reg>
  return
}

// -----

func.func @placement_buffers() {
  // expected-error @+1 {{LDS placement: 3000 bytes are not whole buffers of 1024}}
  %t = tile.alloc {lds = #tile.lds<offset = 0, bytes = 3000, row_stride = 16, buffer_bytes = 1024>} : !tile.tile<32x16xbf16, lds>
  return
}

// -----

func.func @placement_swizzle() {
  // expected-error @+1 {{LDS placement: swizzle is [vec, per_phase, max_phase], all positive}}
  %t = tile.alloc {lds = #tile.lds<offset = 0, bytes = 1024, row_stride = 16, swizzle = [8, 0, 2]>} : !tile.tile<32x16xbf16, lds>
  return
}

// -----

func.func @access_width() {
  // expected-error @+1 {{access widths: each is a power of two in [1, 16], got 6}}
  %t = tile.alloc {access = #tile.access<load = 6>} : !tile.tile<32x16xbf16, lds>
  return
}

// -----

func.func @access_reg_write() {
  // expected-error @+1 {{'tile.alloc' op a register tile has no LDS write or read widths, got #tile.access<load = 8, write = 8>}}
  %t = tile.alloc {access = #tile.access<load = 8, write = 8>} : !tile.tile<32x16xbf16, reg>
  return
}
