// Three 128x128 bf16 LDS tiles live together (used in one loop): 3 x 32 KiB >
// 64 KiB, with or without padding.
func.func @too_much_lds(%A: memref<?x?xbf16>) attributes {tile.kernel, tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tile.alloc {name = "big_a"} : !tile.tile<128x128xbf16, lds>
  %b = tile.alloc {name = "big_b"} : !tile.tile<128x128xbf16, lds>
  %c = tile.alloc {name = "big_c"} : !tile.tile<128x128xbf16, lds>
  %n = memref.dim %A, %c1 : memref<?x?xbf16>
  scf.for %k = %c0 to %n step %c1 {
    tile.load %A[%c0, %k] -> %a : memref<?x?xbf16>, !tile.tile<128x128xbf16, lds>
    tile.load %A[%c0, %k] -> %b : memref<?x?xbf16>, !tile.tile<128x128xbf16, lds>
    tile.load %A[%c0, %k] -> %c : memref<?x?xbf16>, !tile.tile<128x128xbf16, lds>
  }
  return
}
