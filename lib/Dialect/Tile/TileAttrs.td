#ifndef TILEC_TILE_ATTRS_TD
#define TILEC_TILE_ATTRS_TD

include "TileDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Tile_BlockedLayoutAttr : AttrDef<Tile_Dialect, "BlockedLayout"> {
  let mnemonic = "blocked";
  let summary = "generic register layout: runs of a row per lane, rows over lanes then waves";
  let description = [{
    `#tile.blocked<vec = 8, lanes = [2, 32], waves = [4, 1]>` lays a register
    tile of any shape out over the workgroup as Triton's blocked layout does:
    each lane holds runs of `vec` consecutive elements of a row; the lanes of
    a wave form a `lanes[0] x lanes[1]` grid (`lanes[1]` along a row, lane
    `l` at row `l / lanes[1]`, column run `l % lanes[1]`), the waves a
    `waves[0] x waves[1]` grid. The footprint, `lanes[0] * waves[0]` rows by
    `vec * lanes[1] * waves[1]` columns, repeats over the tile; along an axis
    where the tile is shorter than the footprint, the positions past its edge
    hold copies of (position mod extent). The layout does not depend on the
    tile's shape, so a `[M, N]` tile, its row sums (`[M, 1]` or `[M]`) and a
    `[1, N]` weight share one layout and broadcast without data movement.
  }];
  let parameters = (ins "int64_t":$vec, ArrayRefParameter<"int64_t">:$lanes,
                        ArrayRefParameter<"int64_t">:$waves);
  let assemblyFormat = "`<` `vec` `=` $vec `,` `lanes` `=` `[` $lanes `]` `,` `waves` `=` `[` $waves `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t laneRows() const { return getLanes()[0]; }
    int64_t laneCols() const { return getLanes()[1]; }
    int64_t waveRows() const { return getWaves()[0]; }
    int64_t waveCols() const { return getWaves()[1]; }
  }];
}

def Tile_MatrixLayoutAttr : AttrDef<Tile_Dialect, "MatrixLayout"> {
  let mnemonic = "matrix";
  let summary = "register layout of a matrix instruction's accumulator";
  let description = [{
    `#tile.matrix<"v_mfma_f32_32x32x8_bf16", wave_grid = [2, 2], shape = [128, 128]>`
    lays a register tile out as the accumulator of `shape` (rows, columns)
    that the matrix instruction `instr` (a name in the target's instruction
    table, lib/Target) computes, split over a `wave_grid` (rows, columns) of
    waves: each wave holds a `shape[0] / wave_grid[0]` by
    `shape[1] / wave_grid[1]` block, as the instruction's accumulator tiles
    repeated over it. tilec-select-matrix-instr writes it on each tile.gemm
    (with C's shape); tilec-infer-layouts gives it to the register tiles the
    product reaches. On a rank-2 tile `shape` is the tile's own; a rank-1 tile
    in this layout holds one value per row of such an accumulator (the row
    maxima and sums of attention), with `shape` the accumulator's.
  }];
  let parameters = (ins StringRefParameter<"matrix instruction name">:$instr,
                        ArrayRefParameter<"int64_t">:$wave_grid, ArrayRefParameter<"int64_t">:$shape);
  let assemblyFormat = "`<` $instr `,` `wave_grid` `=` `[` $wave_grid `]` `,` `shape` `=` `[` $shape `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t waveRows() const { return getWaveGrid()[0]; }
    int64_t waveCols() const { return getWaveGrid()[1]; }
  }];
}

def Tile_StagingLayoutAttr : AttrDef<Tile_Dialect, "StagingLayout"> {
  let mnemonic = "staging";
  let summary = "register layout of a tile that only carries data into LDS";
  let description = [{
    `#tile.staging`: a register tile that only moves data between global
    memory and LDS (loaded from a tensor, copied into LDS or stored), the
    staging tile of a prefetched LDS tile in a pipelined loop: each thread
    holds elements t, t + threads, ... of the tile in row-major order, in
    runs of the load's width.
  }];
}

#endif
