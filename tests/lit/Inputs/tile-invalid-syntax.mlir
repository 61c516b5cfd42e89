// Invalid tile IR: `tile.frobnicate` is not an op of the tile dialect (line 4).
func.func @bad() attributes {tile.kernel} {
  %a = tile.alloc {name = "a"} : !tile.tile<64x32xbf16, lds>
  tile.frobnicate %a : !tile.tile<64x32xbf16, lds>
  return
}
