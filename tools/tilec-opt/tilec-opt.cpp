// tilec-opt: runs tilec's passes and pipeline on tile-dialect IR (lit tests use it).
#include "Dialect/Tile/TileDialect.h"
#include "Dialect/Tile/TileParse.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  tilec::registerAllTilecPasses();
  mlir::registerCanonicalizerPass();  // both run inside the tilec pipeline
  mlir::registerCSEPass();
  mlir::DialectRegistry registry;
  registry.insert<tilec::tile::TileDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect>();
  auto [input, output] = mlir::registerAndParseCLIOptions(argc, argv, "tilec optimizer driver\n", registry);
  // MLIR 19's parser crashes on some uses of a value above its definition
  // (tile::parseTileIR): a file input is scanned first, as tilec does. (Standard
  // input is handed on unread.)
  if (input != "-") {
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(input, &error);
    if (!file) {
      llvm::errs() << "tilec-opt: error: " << error << "\n";
      return 1;
    }
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    mlir::MLIRContext ctx;
    mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
    if (!tilec::tile::definitionsPrecedeUses(sm, &ctx))
      return 1;
  }
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, input, output, registry));
}
