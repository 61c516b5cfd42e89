2func.func @moe_gate_bf16_e8_k2_renorm_w4(%logits: memref<?x?xbf16> {tile.name = "logits"}, %topk_weights: memref<?x?xf32> {tile.name = "topk_weights"}, %topk_ids: memref<?x?xi32> {tile.name = "topk_ids"}) attributes {tile.kernel, tile.num_waves = 4 : i64, tile.grid = [array<i64: 0, 0, 64>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bid0 = tile.block_id 0 : index
  %logits_dim1 = memref.dim %logits, %c1 : memref<?x?xbf16>
  %x = tile.alloc {name = "x"} : !tile.tile<64x16xf32, reg>
  %p = tile.alloc {name = "p"} : !tile.tile<64x16xf32, reg>
  %col = tile.alloc {name = "col"} : !tile.tile<64x16xf32, reg>
  %hit = tile.alloc {name = "hit"} : !tile.tile<64x16xf32, reg>
  %m = tile.alloc {name = "m"} : !tile.tile<64xf32, reg>
  %l = tile.alloc {name = "l"} : !tile.tile<64xf32, reg>
  %idx = tile.alloc {name = "idx"} : !tile.tile<64xf32, reg>
  %sum = tile.alloc {name = "sum"} : !tile.tile<64xf32, reg>
  %w0 = tile.alloc {name = "w0"} : !tile.tile<64xf32, reg>
  %w1 = tile.alloc {name = "w1"} : !tile.tile<64xf32, reg>
  %logits_in = tile.alloc {name = "logits_in"} : !tile.tile<64x16xbf16, reg>
  %i0 = arith.muli %bid0, %c64 : index
  tile.load %logits[%i0, %c0] -> %logits_in : memref<?x?xbf16>, !tile.tile<64x16xbf16, reg>
  tile.map copy %x, %logits_in : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xbf16, reg>
  tile.mask %x [%c0, %c0, %logits_dim1] : !tile.tile<64x16xf32, reg>
  tile.reduce max %x -> %m {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map scale %p, %x {scalar = 1.4426950408889634 : f64} : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.map scale %l, %m {scalar = 1.4426950408889634 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map sub_exp2 %p, %p, %l : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.reduce sum %p -> %l {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map safe_div %p, %p, %l : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.iota %col[%c0] {axis = 1 : i64} : !tile.tile<64x16xf32, reg>
  tile.fill %sum, 0.0 : !tile.tile<64xf32, reg>
  tile.reduce max %x -> %m {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map eq %hit, %x, %m : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map scale %hit, %hit {scalar = -1024.0 : f64} : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.map add_scalar %hit, %hit {scalar = 1024.0 : f64} : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.map add %hit, %hit, %col : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.reduce min %hit -> %idx {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.store %idx -> %topk_ids[%i0, %c0] : !tile.tile<64xf32, reg>, memref<?x?xi32>
  tile.map eq %hit, %col, %idx : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map neg_inf_where %x, %x, %hit : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.map mul %hit, %hit, %p : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.reduce sum %hit -> %w0 {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map add %sum, %sum, %w0 : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.reduce max %x -> %m {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map eq %hit, %x, %m : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map scale %hit, %hit {scalar = -1024.0 : f64} : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.map add_scalar %hit, %hit {scalar = 1024.0 : f64} : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.map add %hit, %hit, %col : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.reduce min %hit -> %idx {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.store %idx -> %topk_ids[%i0, %c1] : !tile.tile<64xf32, reg>, memref<?x?xi32>
  tile.map eq %hit, %col, %idx : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map neg_inf_where %x, %x, %hit : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.map mul %hit, %hit, %p : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>
  tile.reduce sum %hit -> %w1 {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map add %sum, %sum, %w1 : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map div %w0, %w0, %sum : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.store %w0 -> %topk_weights[%i0, %c0] : !tile.tile<64xf32, reg>, memref<?x?xf32>
  tile.map div %w1, %w1, %sum : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.store %w1 -> %topk_weights[%i0, %c1] : !tile.tile<64xf32, reg>, memref<?x?xf32>
  return
}
