// An fp8 (f8E4M3FNUZ) gemm: gfx942 has fp8 MFMA, gfx90a has none (line 10).
func.func @fp8_gemm(%A: memref<?x?xf8E4M3FNUZ>, %B: memref<?x?xf8E4M3FNUZ>, %C: memref<?x?xf32>) attributes {tile.kernel, tile.num_waves = 1 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.alloc {name = "a_lds"} : !tile.tile<32x16xf8E4M3FNUZ, lds>
  %b = tile.alloc {name = "b_lds"} : !tile.tile<16x32xf8E4M3FNUZ, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<32x32xf32, reg>
  tile.fill %acc, 0.0 : !tile.tile<32x32xf32, reg>
  tile.load %A[%c0, %c0] -> %a : memref<?x?xf8E4M3FNUZ>, !tile.tile<32x16xf8E4M3FNUZ, lds>
  tile.load %B[%c0, %c0] -> %b : memref<?x?xf8E4M3FNUZ>, !tile.tile<16x32xf8E4M3FNUZ, lds>
  tile.gemm %a, %b, %acc : !tile.tile<32x16xf8E4M3FNUZ, lds>, !tile.tile<16x32xf8E4M3FNUZ, lds>, !tile.tile<32x32xf32, reg>
  tile.store %acc -> %C[%c0, %c0] : !tile.tile<32x32xf32, reg>, memref<?x?xf32>
  return
}
