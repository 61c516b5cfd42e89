0func.func @k(%A: memref<?x?xbf16>, %a: !tile.tile<64x32xbf16, lds>) attributes {tile.kernel, tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = tile.alloc {name = "b"} : !tile.tile<64x32xbf16, lds>
  tile.load %A[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  tile.load %A[%c0, %c0] -> %b : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
  return
}
