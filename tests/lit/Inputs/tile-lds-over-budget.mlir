// Two 256x64 bf16 LDS tiles, padded to 256x72: 2 x 36864 bytes > 64 KiB.
func.func @too_much_lds(%A: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {tile.kernel, tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.alloc {name = "big_a"} : !tile.tile<256x64xbf16, lds>
  %b = tile.alloc {name = "big_b"} : !tile.tile<64x256xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<256x256xf32, reg>
  tile.fill %acc, 0.0 : !tile.tile<256x256xf32, reg>
  tile.load %A[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<256x64xbf16, lds>
  tile.load %A[%c0, %c0] -> %b : memref<?x?xbf16>, !tile.tile<64x256xbf16, lds>
  tile.gemm %a, %b, %acc : !tile.tile<256x64xbf16, lds>, !tile.tile<64x256xbf16, lds>, !tile.tile<256x256xf32, reg>
  tile.store %acc -> %C[%c0, %c0] : !tile.tile<256x256xf32, reg>, memref<?x?xf32>
  return
}
