#ifndef TILEC_TILE_DIALECT_TD
#define TILEC_TILE_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tilec::tile";
  let summary = "Target-independent tile operations for GPU kernels";
  let description = [{
    The `tile` dialect describes a GPU kernel as operations on tiles: blocks of a
    tensor held in LDS (`lds`) or spread over a workgroup's registers (`reg`).
    Global tensors are `memref`s with runtime shapes (row-major); tiles have
    static shapes. Operations have buffer semantics: they read and write tiles
    in place, so a kernel reads like the math:

    ```mlir
    func.func @k(%A: memref<?x?xbf16>, ...) attributes {tile.kernel, tile.num_waves = 4 : i64, ...} {
      %a = tile.alloc {name = "a_lds"} : !tile.tile<128x32xbf16, lds>
      %acc = tile.alloc {name = "acc"} : !tile.tile<128x128xf32, reg>
      tile.fill %acc, 0.0 : !tile.tile<128x128xf32, reg>
      scf.for %k = %c0 to %nk step %c1 {
        tile.load %A[%row, %col] -> %a : memref<?x?xbf16>, !tile.tile<128x32xbf16, lds>
        tile.gemm %a, %b, %acc : ...
      } {tile.num_stages = 2 : i64}
      tile.store %acc -> %C[%row, %col2] : ...
    }
    ```
    Reads outside a tensor give 0; writes outside it are dropped, so ragged
    shapes need no padding.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []> :
    Op<Tile_Dialect, mnemonic, traits>;

#endif
