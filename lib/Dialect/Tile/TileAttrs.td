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

// An XOR swizzle `[vec, per_phase, max_phase]`, written in brackets; empty
// (and not printed) for unswizzled rows.
def Tile_SwizzleParameter : OptionalArrayRefParameter<"int64_t", "XOR swizzle [vec, per_phase, max_phase]"> {
  let parser = "::tilec::tile::parseBracketedI64s($_parser)";
  let printer = "::tilec::tile::printBracketedI64s($_printer, $_self)";
}

def Tile_FlagParameter : DefaultValuedParameter<"bool", "false"> {
  let parser = "::tilec::tile::parseBool($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}

def Tile_LdsPlacementAttr : AttrDef<Tile_Dialect, "LdsPlacement"> {
  let mnemonic = "lds";
  let summary = "where an LDS tile lives and how its rows are laid out";
  let description = [{
    `#tile.lds<offset = 0, bytes = 16384, row_stride = 32, buffer_bytes = 8192, swizzle = [8, 2, 4]>`,
    written by tilec-allocate-lds on each LDS `tile.alloc`: the tile occupies
    `bytes` of LDS from byte `offset` (all buffers of a multi-buffered tile,
    `buffer_bytes` apart; 0 for a single buffer). Element (r, c) of a buffer
    lives at element `r * row_stride + c`, with the column's 16-byte-group
    index XORed by the row's phase when `swizzle = [vec, per_phase,
    max_phase]` is given: groups of `vec` elements, the phase advancing
    every `per_phase` rows and wrapping at `max_phase` (tilec_lds.h, `Lds`).
    `col_block` > 0 stores the tile in blocks of that many columns, each
    block's rows contiguous (wgmma's MN-major operands); `row_stride` is then
    the block's row length.
  }];
  let parameters = (ins "int64_t":$offset, "int64_t":$bytes, "int64_t":$row_stride,
                        DefaultValuedParameter<"int64_t", "0">:$buffer_bytes,
                        Tile_SwizzleParameter:$swizzle,
                        DefaultValuedParameter<"int64_t", "0">:$col_block);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool swizzled() const { return getSwizzle().size() == 3 && getSwizzle()[2] > 1; }
  }];
}

def Tile_AccessWidthsAttr : AttrDef<Tile_Dialect, "AccessWidths"> {
  let mnemonic = "access";
  let summary = "elements per memory access of a tile's loads, LDS writes and LDS reads";
  let description = [{
    `#tile.access<load = 8, realign = true, write = 8, read = 4>`, written by
    tilec-allocate-lds on tile.alloc: the tile.load ops filling the tile move
    `load` elements per global load (runs realigned from two aligned loads
    when `realign`); on an LDS tile, those loads' LDS writes store `write`
    elements at a time and the gemm operand reads running along a row read
    `read`. A staging register tile carries the `load` of the LDS tile it
    feeds. Each width is a power of two, 1 (not printed) when absent.
  }];
  let parameters = (ins DefaultValuedParameter<"int64_t", "1">:$load, Tile_FlagParameter:$realign,
                        DefaultValuedParameter<"int64_t", "1">:$write,
                        DefaultValuedParameter<"int64_t", "1">:$read);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif
