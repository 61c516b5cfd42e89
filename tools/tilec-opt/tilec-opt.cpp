// tilec-opt: runs tilec's passes and pipeline on tile-dialect IR (lit tests use it).
#include "Dialect/Tile/TileDialect.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  tilec::registerAllTilecPasses();
  mlir::registerCanonicalizerPass();  // both run inside the tilec pipeline
  mlir::registerCSEPass();
  mlir::DialectRegistry registry;
  registry.insert<tilec::tile::TileDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "tilec optimizer driver\n", registry));
}
