// Tile IR for `tilec FILE.mlir`: C[M,N] (bf16) = A[M,K] @ B[K,N], bf16 inputs,
// f32 accumulation. Workgroup tile 64 x 64 x 32, 4 waves, k loop annotated
// with 2 stages. Before the target pipeline: no instr, layout, LDS offsets
// or barriers yet.
func.func @tile_gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {tile.kernel, tile.num_waves = 4 : i64, tile.grid = [array<i64: 2, 0, 64>, array<i64: 2, 1, 64>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bid0 = tile.block_id 0 : index
  %bid1 = tile.block_id 1 : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %a = tile.alloc {name = "a_lds"} : !tile.tile<64x32xbf16, lds>
  %b = tile.alloc {name = "b_lds"} : !tile.tile<32x64xbf16, lds>
  %acc = tile.alloc {name = "acc"} : !tile.tile<64x64xf32, reg>
  %row = arith.muli %bid0, %c64 : index
  %col = arith.muli %bid1, %c64 : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.fill %acc, 0.0 : !tile.tile<64x64xf32, reg>
  scf.for %kt = %c0 to %nk step %c1 {
    %k = arith.muli %kt, %c32 : index
    tile.load %A[%row, %k] -> %a : memref<?x?xbf16>, !tile.tile<64x32xbf16, lds>
    tile.load %B[%k, %col] -> %b : memref<?x?xbf16>, !tile.tile<32x64xbf16, lds>
    tile.gemm %a, %b, %acc : !tile.tile<64x32xbf16, lds>, !tile.tile<32x64xbf16, lds>, !tile.tile<64x64xf32, reg>
  } {tile.num_stages = 2 : i64}
  tile.store %acc -> %C[%row, %col] : !tile.tile<64x64xf32, reg>, memref<?x?xbf16>
  return
}
