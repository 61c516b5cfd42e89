#include "TileIR.h"

#include "Dialect/Tile/TileDialect.h"
#include "Import/BuildKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

namespace tilec::test {

TileIR::TileIR() {
  context_.loadDialect<tile::TileDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                       mlir::scf::SCFDialect, mlir::memref::MemRefDialect>();
  context_.getDiagEngine().registerHandler([this](mlir::Diagnostic &diag) {
    DiagLoc d{"", 0, diag.str()};
    if (auto flc = mlir::dyn_cast<mlir::FileLineColLoc>(diag.getLocation())) {
      d.file = flc.getFilename().str();
      d.line = flc.getLine();
    }
    diagnostics_ += d.file + ":" + std::to_string(d.line) + ": " + d.message + "\n";
    diagLocs_.push_back(d);
    return mlir::success();
  });
}

mlir::OwningOpRef<mlir::ModuleOp> TileIR::parse(const std::string &text) {
  mlir::ParserConfig config(&context_, /*verifyAfterParse=*/false);
  return mlir::parseSourceString<mlir::ModuleOp>(text, config, "dsl");
}

mlir::OwningOpRef<mlir::ModuleOp> TileIR::parseAndVerify(const std::string &text) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(text);
  if (!module || mlir::failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

mlir::OwningOpRef<mlir::ModuleOp> TileIR::build(const Kernel &kernel) {
  return import::buildTileIR(kernel, context_);
}

::testing::AssertionResult verifies(const Kernel &kernel) {
  if (!kernel.ok())
    return ::testing::AssertionFailure() << "DSL error: " << kernel.error();
  TileIR ir;
  if (!ir.build(kernel))
    return ::testing::AssertionFailure() << ir.diagnostics() << "in:\n" << kernel.toJson();
  return ::testing::AssertionSuccess();
}

std::string text(const Kernel &kernel) {
  TileIR ir;
  mlir::OwningOpRef<mlir::ModuleOp> module = ir.build(kernel);
  if (!module)
    return "<does not build: " + ir.diagnostics() + ">";
  std::string out;
  llvm::raw_string_ostream os(out);
  module->print(os);
  return out;
}

int count(const std::string &text, const std::string &needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

::testing::AssertionResult containsInOrder(const std::string &text,
                                           const std::vector<std::string> &needles) {
  size_t pos = 0;
  for (const std::string &n : needles) {
    size_t at = text.find(n, pos);
    if (at == std::string::npos)
      return ::testing::AssertionFailure() << "'" << n << "' not found (in order) in:\n" << text;
    pos = at + n.size();
  }
  return ::testing::AssertionSuccess();
}

} // namespace tilec::test
