#ifndef TILEC_TILE_TYPES_TD
#define TILEC_TILE_TYPES_TD

include "TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_MemorySpace : I32EnumAttr<"MemorySpace", "where a tile lives", [
    I32EnumAttrCase<"lds", 0>, I32EnumAttrCase<"reg", 1>]> {
  let cppNamespace = "::tilec::tile";
  let genSpecializedAttr = 0;
}

def Tile_TileType : TypeDef<Tile_Dialect, "Tile", []> {
  let mnemonic = "tile";
  let summary = "a statically shaped tile in LDS or registers";
  let description = [{
    `!tile.tile<128x32xbf16, lds>`: a rank-1 or rank-2 tile of a workgroup,
    held in LDS (`lds`) or distributed over the workgroup's registers (`reg`).
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        "::tilec::tile::MemorySpace":$space);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const {
      int64_t n = 1;
      for (int64_t d : getShape()) n *= d;
      return n;
    }
    bool isLds() const { return getSpace() == MemorySpace::lds; }
    bool isReg() const { return getSpace() == MemorySpace::reg; }
    int64_t rows() const { return getShape()[0]; }
    int64_t cols() const { return getShape().size() > 1 ? getShape()[1] : 1; }
  }];
}

#endif
