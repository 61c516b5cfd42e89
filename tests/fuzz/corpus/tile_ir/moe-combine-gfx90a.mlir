1func.func @moe_combine_bf16_64x64_k2_w4(%Y: memref<?x?xf32> {tile.name = "Y"}, %positions: memref<?xi32> {tile.name = "positions"}, %topk_weights: memref<?x?xf32> {tile.name = "topk_weights"}, %out: memref<?x?xbf16> {tile.name = "out"}) attributes {tile.kernel, tile.num_waves = 4 : i64, tile.grid = [array<i64: 3, 0, 64>, array<i64: 3, 1, 64>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %bid0 = tile.block_id 0 : index
  %bid1 = tile.block_id 1 : index
  %out_dim0 = memref.dim %out, %c0 : memref<?x?xbf16>
  %y_lds = tile.alloc {name = "y_lds"} : !tile.tile<64x64xf32, lds>
  %y = tile.alloc {name = "y"} : !tile.tile<64x64xf32, reg>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  %w = tile.alloc {name = "w"} : !tile.tile<64xf32, reg>
  %i0 = arith.muli %bid0, %c64 : index
  %i1 = arith.muli %bid1, %c64 : index
  tile.fill %acc, 0.0 : !tile.tile<64x64xf32, reg>
  scf.for %j = %c0 to %c2 step %c1 {
    %i2 = arith.muli %out_dim0, %j : index
    %i3 = arith.addi %i2, %i0 : index
    tile.gather %Y[%positions[%i3], %i1] -> %y_lds : memref<?x?xf32>, memref<?xi32>, !tile.tile<64x64xf32, lds>
    tile.copy %y_lds -> %y : !tile.tile<64x64xf32, lds>, !tile.tile<64x64xf32, reg>
    tile.load %topk_weights[%i0, %j] -> %w : memref<?x?xf32>, !tile.tile<64xf32, reg>
    tile.map mul %y, %y, %w : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
    tile.map add %acc, %acc, %y : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
  }
  tile.store %acc -> %out[%i0, %i1] : !tile.tile<64x64xf32, reg>, memref<?x?xbf16>
  return
}
