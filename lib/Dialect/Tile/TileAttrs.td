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

#endif
