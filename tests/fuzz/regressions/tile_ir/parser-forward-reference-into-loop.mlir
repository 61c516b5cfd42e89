0func.func @moe_align_e8_bm32_w4(%topk_ids: memref<?x?xi32> {tile.name = "topk_ids"}, %sorted_token_ids: memref<?xi32> {tile.name = "sorted_token_ids"}, %block_experts: memref<?xi32> {tile.name = "block_experts"}, %positions: memref<?xi32> {tile.name = "positions"}, %total_padded: memref<?xi32> {tile.name = "total_padded"}) attributes {tile.kernel, tile.num_waves = 4 : i64, tile.grid = [array<i64: -1, 0, 1>]} {
  %c_neg1 = arith.constant -1 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %topk_ids_dim0 = memref.dim %topk_ids, %c0 : memref<?x?xi32>
  %topk_ids_dim1 = memref.dim %topk_ids, %c1 : memref<?x?xi32>
  %sorted_token_ids_dim0 = memref.dim %sorted_token_ids, %c0 : memref<?xi32>
  %block_experts_dim0 = memref.dim %block_experts, %c0 : memref<?xi32>
  %ids = tile.alloc {name = "ids"} : !tile.tile<64xi32, reg>
  %ids_bcast = tile.alloc {name = "ids_bcast"} : !tile.tile<64x64xf32, reg>
  %ids_t_lds = tile.alloc {name = "ids_t_lds"} : !tile.tile<64x64xf32, lds>
  %ids_t = tile.alloc {name = "ids_t"} : !tile.tile<64x64xf32, reg>
  %expert_of_row = tile.alloc {name = "expert_of_row"} : !tile.tile<64x64xf32, reg>
  %onehot = tile.alloc {name = "onehot"} : !tile.tile<64x64xf32, reg>
  %counts = tile.alloc {name = "counts"} : !tile.tile<64xf32, reg>
  %blocks = tile.alloc {name = "blocks"} : !tile.tile<64xf32, reg>
  %lower = tile.alloc {name = "lower"} : !tile.tile<64x64xf32, reg>
  %lower_lds = tile.alloc {name = "lower_lds"} : !tile.tile<64x64xf16, lds>
  %blocks_mat = tile.alloc {name = "blocks_mat"} : !tile.tile<64x16xf32, reg>
  %blocks_lds = tile.alloc {name = "blocks_lds"} : !tile.tile<64x16xf16, lds>
  %offsets_mat = tile.alloc {name = "offsets_mat"} : !tile.tile<64x16xf32, reg>
  %offset = tile.alloc {name = "offset"} : !tile.tile<64xf32, reg>
  %seg_end = tile.alloc {name = "seg_end"} : !tile.tile<64xf32, reg>
  %slots = tile.alloc {name = "slots"} : !tile.tile<64x64xf32, reg>
  %pos = tile.alloc {name = "pos"} : !tile.tile<64xf32, reg>
  %token = tile.alloc {name = "token"} : !tile.tile<64xf32, reg>
  %sentinel = tile.alloc {name = "sentinel"} : !tile.tile<64xf32, reg>
  %upper = tile.alloc {name = "upper"} : !tile.tile<64x64xf32, reg>
  %upper_lds = tile.alloc {name = "upper_lds"} : !tile.tile<64x64xf16, lds>
  %onehot_lds = tile.alloc {name = "onehot_lds"} : !tile.tile<64x64xf16, lds>
  %rank = tile.alloc {name = "rank"} : !tile.tile<64x64xf32, reg>
  %slots_t_lds = tile.alloc {name = "slots_t_lds"} : !tile.tile<64x64xf32, lds>
  %seen = tile.alloc {name = "seen"} : !tile.tile<64xf32, reg>
  %base = tile.alloc {name = "base"} : !tile.tile<64xf32, reg>
  %seg_end_bcast = tile.alloc {name = "seg_end_bcast"} : !tile.tile<64x64xf32, reg>
  %seg_end_t_lds = tile.alloc {name = "seg_end_t_lds"} : !tile.tile<64x64xf32, lds>
  %ends = tile.alloc {name = "ends"} : !tile.tile<64x64xf32, reg>
  %block_start = tile.alloc {name = "block_start"} : !tile.tile<64xf32, reg>
  %count = tile.alloc {name = "count"} : !tile.tile<64xf32, reg>
  %past_total = tile.alloc {name = "past_total"} : !tile.tile<64xf32, reg>
  %i0 = arith.ceildivui %topk_ids_dim0, %c64 : index
  tile.iota %expert_of_row[%c0] {axis = 0 : i64} : !tile.tile<64x64xf32, reg>
  tile.fill %counts, 0.0 : !tile.tile<64xf32, reg>
  scf.for %j = %c0 to %topk_ids_dim1 step %c1 {
    scf.for %c = %c0 to %i0 step %c1 {
      %i1 = arith.muli %c, %c64 : index
      tile.load %topk_ids[%i1, %j] -> %ids : memref<?x?xi32>, !tile.tile<64xi32, reg>
      tile.fill %ids_bcast, 0.0 : !tile.tile<64x64xf32, reg>
      tile.map add %ids_bcast, %ids_bcast, %ids : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xi32, reg>
      tile.copy %ids_bcast -> %ids_t_lds {transpose} : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, lds>
      tile.copy %ids_t_lds -> %ids_t : !tile.tile<64x64xf32, lds>, !tile.tile<64x64xf32, reg>
      tile.map eq %onehot, %ids_t, %expert_of_row : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
      tile.mask %onehot [%c0, %i1, %topk_ids_dim0] : !tile.tile<64x64xf32, reg>
      tile.map relu %onehot, %onehot : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
      tile.reduce sum %onehot -> %counts {axis = 1 : i64, accumulate} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
    }
  }
  tile.map scale %blocks, %counts {scalar = 0.03125 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map ceil %blocks, %blocks : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.fill %lower, 1.0 : !tile.tile<64x64xf32, reg>
  tile.mask %lower [%c_neg1, %c0, %c64] {causal} : !tile.tile<64x64xf32, reg>
  tile.map relu %lower, %lower : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
  tile.copy %lower -> %lower_lds : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf16, lds>
  tile.fill %blocks_mat, 0.0 : !tile.tile<64x16xf32, reg>
  tile.map add %blocks_mat, %blocks_mat, %blocks : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.copy %blocks_mat -> %blocks_lds : !tile.tile<64x16xf32, reg>, !tile.tile<64x16xf16, lds>
  tile.fill %offsets_mat, 0.0 : !tile.tile<64x16xf32, reg>
  tile.gemm %lower_lds, %blocks_lds, %offsets_mat : !tile.tile<64x64xf16, lds>, !tile.tile<64x16xf16, lds>, !tile.tile<64x16xf32, reg>
  tile.reduce max %offsets_mat -> %offset {axis = 1 : i64} : !tile.tile<64x16xf32, reg>, !tile.tile<64xf32, reg>
  tile.map scale %offset, %offset {scalar = 32.0 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map scale %seg_end, %blocks {scalar = 32.0 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.map add %seg_end, %seg_end, %offset : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  tile.iota %token[%c0] {axis = 0 : i64} : !tile.tile<64xf32, reg>
  tile.iota %sentinel[%topk_ids_dim0] {axis = 0 : i64} : !tile.tile<64xf32, reg>
  tile.map sub %sentinel, %sentinel, %token : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
  %i2 = arith.ceildivui %sorted_token_ids_dim0, %c64 : index
  scf.for %p = %c0 to %i3 step %c1 {
    %i3 = arith.muli %p, %c64 : index
    tile.store %sentinel -> %sorted_token_ids[%i3] : !tile.tile<64xf32, reg>, memref<?xi32>
  }
  tile.barrier
  tile.fill %upper, 1.0 : !tile.tile<64x64xf32, reg>
  tile.mask %upper [%c0, %c0, %c64] {causal} : !tile.tile<64x64xf32, reg>
  tile.map relu %upper, %upper : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
  tile.copy %upper -> %upper_lds {transpose} : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf16, lds>
  tile.fill %seen, 0.0 : !tile.tile<64xf32, reg>
  scf.for %j_1 = %c0 to %topk_ids_dim1 step %c1 {
    scf.for %c_1 = %c0 to %i0 step %c1 {
      %i4 = arith.muli %c_1, %c64 : index
      tile.load %topk_ids[%i4, %j_1] -> %ids : memref<?x?xi32>, !tile.tile<64xi32, reg>
      tile.fill %ids_bcast, 0.0 : !tile.tile<64x64xf32, reg>
      tile.map add %ids_bcast, %ids_bcast, %ids : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xi32, reg>
      tile.copy %ids_bcast -> %ids_t_lds {transpose} : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, lds>
      tile.copy %ids_t_lds -> %ids_t : !tile.tile<64x64xf32, lds>, !tile.tile<64x64xf32, reg>
      tile.map eq %onehot, %ids_t, %expert_of_row : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
      tile.mask %onehot [%c0, %i4, %topk_ids_dim0] : !tile.tile<64x64xf32, reg>
      tile.map relu %onehot, %onehot : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
      tile.copy %onehot -> %onehot_lds : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf16, lds>
      tile.fill %rank, 0.0 : !tile.tile<64x64xf32, reg>
      tile.gemm %onehot_lds, %upper_lds, %rank : !tile.tile<64x64xf16, lds>, !tile.tile<64x64xf16, lds>, !tile.tile<64x64xf32, reg>
      tile.map add %base, %offset, %seen : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
      tile.map add %rank, %rank, %base : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
      tile.map mul %rank, %rank, %onehot : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
      tile.copy %rank -> %slots_t_lds {transpose} : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, lds>
      tile.copy %slots_t_lds -> %slots : !tile.tile<64x64xf32, lds>, !tile.tile<64x64xf32, reg>
      tile.reduce sum %slots -> %pos {axis = 1 : i64} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
      tile.map add_scalar %pos, %pos {scalar = -1.0 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
      tile.iota %token[%i4] {axis = 0 : i64} : !tile.tile<64xf32, reg>
      tile.scatter %token -> %sorted_token_ids[%pos] : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, memref<?xi32>
      %i5 = arith.muli %j_1, %topk_ids_dim0 : index
      %positions_w = tile.window %positions[%i5] [%topk_ids_dim0] : memref<?xi32>
      tile.store %pos -> %positions_w[%i4] : !tile.tile<64xf32, reg>, memref<?xi32>
      tile.reduce sum %onehot -> %seen {axis = 1 : i64, accumulate} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
    }
  }
  tile.fill %seg_end_bcast, 0.0 : !tile.tile<64x64xf32, reg>
  tile.map add %seg_end_bcast, %seg_end_bcast, %seg_end : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
  tile.copy %seg_end_bcast -> %seg_end_t_lds {transpose} : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, lds>
  %i6 = arith.ceildivui %block_experts_dim0, %c64 : index
  scf.for %b = %c0 to %i6 step %c1 {
    tile.copy %seg_end_t_lds -> %ends : !tile.tile<64x64xf32, lds>, !tile.tile<64x64xf32, reg>
    tile.mask %ends [%c0, %c0, %c8] : !tile.tile<64x64xf32, reg>
    tile.reduce max %ends -> %count {axis = 1 : i64} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
    tile.store %count -> %total_padded[%c0] : !tile.tile<64xf32, reg>, memref<?xi32>
    %i7 = arith.muli %b, %c64 : index
    tile.iota %block_start[%i7] {axis = 0 : i64} : !tile.tile<64xf32, reg>
    tile.map scale %block_start, %block_start {scalar = 32.0 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
    tile.map le %ends, %ends, %block_start : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
    tile.mask %ends [%c0, %c0, %c8] : !tile.tile<64x64xf32, reg>
    tile.map relu %ends, %ends : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xf32, reg>
    tile.reduce sum %ends -> %count {axis = 1 : i64} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>
    tile.map add_scalar %past_total, %count {scalar = -8.0 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
    tile.map scale %block_start, %count {scalar = 0.0 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
    tile.map eq %past_total, %past_total, %block_start : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
    tile.map scale %past_total, %past_total {scalar = -9.0 : f64} : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
    tile.map add %count, %count, %past_total : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>
    tile.store %count -> %block_experts[%i7] : !tile.tile<64xf32, reg>, memref<?xi32>
  }
  return
}
