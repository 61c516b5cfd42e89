// Invalid tile IR: the gemm's B has 16 rows but A has 32 columns (line 7).
func.func @bad(%A: memref<?x?xbf16>) attributes {tile.kernel, tile.num_waves = 4 : i64} {
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b"} : !tile.tile<16x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  tile.fill %acc, 0.0 : !tile.tile<64x64xf32, reg>
  tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<16x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  return
}
