0func.func @moe_gate_up_bf16_32x64x32_w4(%X: memref<?x?xbf16> {tile.name = "X"}, %W13: memref<?x?xbf16> {tile.name = "W13"}, %sorted_token_ids: memref<?xi32> {tile.name = "sorted_token_ids"}, %block_experts: memref<?xi32> {tile.name = "block_experts"}, %H: memref<?x?xbf16> {tile.name = "H"}) attributes {tile.kernel, tile.num_waves = 4 : i64, tile.grid = [array<i64: 4, 0, 32>, array<i64: 4, 1, 64>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bid0 = tile.block_id 0 : index
  %bid1 = tile.block_id 1 : index
  %X_dim1 = memref.dim %X, %c1 : memref<?x?xbf16>
  %H_dim1 = memref.dim %H, %c1 : memref<?x?xbf16>
  %a_lds = tile.alloc {name = "a_lds"} : !tile.tile<32x32xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<32x64xf32, reg>
  %wg_lds = tile.alloc {name = "wg_lds"} : !tile.tile<64x32xbf16, lds>
  %wu_lds = tile.alloc {name = "wu_lds"} : !tile.tile<64x32xbf16, lds>
  %up = tile.alloc {name = "up"} : !tile.tile<32x64xf32, reg>
  %i0 = arith.muli %bid0, %c32 : index
  %i1 = arith.muli %bid1, %c64 : index
  %i2 = tile.load_index %block_experts[%bid0] : memref<?xi32>
  %i3 = arith.maxui %i2, %c0 : index
  %i4 = arith.addi %i2, %c1 : index
  %i5 = arith.minui %i4, %c1 : index
  %i6 = arith.ceildivui %X_dim1, %c32 : index
  %i7 = arith.muli %i6, %i5 : index
  tile.fill %acc, 0.0 : !tile.tile<32x64xf32, reg>
  %i8 = arith.muli %i3, %c2 : index
  %i9 = arith.muli %i8, %H_dim1 : index
  %W13_w = tile.window %W13[%i9, %c0] [%H_dim1, %X_dim1] : memref<?x?xbf16>
  %i10 = arith.addi %i9, %H_dim1 : index
  %W13_w_1 = tile.window %W13[%i10, %c0] [%H_dim1, %X_dim1] : memref<?x?xbf16>
  tile.fill %up, 0.0 : !tile.tile<32x64xf32, reg>
  scf.for %kt = %c0 to %i7 step %c1 {
    %i11 = arith.muli %kt, %c32 : index
    tile.gather %X[%sorted_token_ids[%i0], %i11] -> %a_lds : memref<?x?xbf16>, memref<?xi32>, !tile.tile<32x32xbf16, lds>
    tile.load %W13_w[%i1, %i11] -> %wg_lds : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %W13_w_1[%i1, %i11] -> %wu_lds : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.gemm %a_lds, %wg_lds, %acc {transpose_b} : !tile.tile<32x32xbf16, lds>, !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xf32, reg>
    tile.gemm %a_lds, %wu_lds, %up {transpose_b} : !tile.tile<32x32xbf16, lds>, !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xf32, reg>
  }
  tile.map silu %acc, %acc : !tile.tile<32x64xf32, reg>, !tile.tile<32x64xf32, reg>
  tile.map mul %acc, %acc, %up : !tile.tile<32x64xf32, reg>, !tile.tile<32x64xf32, reg>, !tile.tile<32x64xf32, reg>
  tile.store %acc -> %H[%i0, %i1] : !tile.tile<32x64xf32, reg>, memref<?x?xbf16>
  return
}
