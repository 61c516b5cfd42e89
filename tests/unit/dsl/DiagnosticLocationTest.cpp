// Every op the DSL emits carries the C++ file:line of the call that made it,
// so MLIR diagnostics (verifier errors, pass errors) point at the kernel source.
#include "TileIR.h"

#include "Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace tilec;
using namespace tilec::dsl;

namespace {

struct Recorded {
  Kernel kernel;
  std::map<std::string, int> lineOf; // op name -> line of the DSL call
};

Recorded recordKernel() {
  Recorded r;
  int funcLine = __LINE__ + 1;
  KernelBuilder kb("located");
  Tensor A = kb.tensor("A", DType::f16, 2);
  Tensor C = kb.tensor("C", DType::f32, 2);
  Tile a = kb.ldsTile("a", {64, 32}, DType::f16);
  r.lineOf["tile.alloc"] = __LINE__ - 1;
  Tile b = kb.ldsTile("b", {32, 16}, DType::f16);
  Tile acc = kb.regTile("acc", {64, 16}, DType::f32);
  int loopLine = __LINE__ + 1;
  kb.forLoop(0, cdiv(A.dim(1), 32), 1, {.numStages = 2}, [&](Index kt) {
    kb.load(A, {0, kt * 32}, a);
    r.lineOf["tile.load"] = __LINE__ - 1;
    kb.load(A, {kt * 32, 0}, b);
    kb.gemm(a, b, acc);
    r.lineOf["tile.gemm"] = __LINE__ - 1;
  });
  r.lineOf["scf.for"] = loopLine;
  r.lineOf["arith.ceildivui"] = loopLine; // index arithmetic takes its consumer's line
  kb.store(acc, C, {0, 0});
  r.lineOf["tile.store"] = __LINE__ - 1;
  r.lineOf["func.func"] = funcLine;
  r.kernel = kb.finish();
  r.lineOf["func.return"] = __LINE__ - 1;
  return r;
}

TEST(DiagnosticLocation, EveryOpCarriesTheDslCallLocation) {
  Recorded r = recordKernel();
  ASSERT_TRUE(r.kernel.ok()) << r.kernel.error();
  test::TileIR ir;
  auto module = ir.build(r.kernel);
  ASSERT_TRUE(module) << ir.diagnostics();
  int checked = 0;
  std::set<std::string> seen;
  module->walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *op) {
    // The module and the loop's implicit scf.yield are not written in the DSL.
    if (mlir::isa<mlir::ModuleOp, mlir::scf::YieldOp>(op))
      return;
    auto loc = mlir::dyn_cast<mlir::FileLineColLoc>(op->getLoc());
    ASSERT_TRUE(loc) << op->getName().getStringRef().str() << " has no file:line location";
    EXPECT_EQ(loc.getFilename().str(), __FILE__);
    std::string name = op->getName().getStringRef().str();
    auto it = r.lineOf.find(name);
    if (it != r.lineOf.end() && seen.insert(name).second) { // the first op of each kind
      EXPECT_EQ(loc.getLine(), static_cast<unsigned>(it->second)) << op->getName().getStringRef().str();
      ++checked;
    }
  });
  EXPECT_GE(checked, 8);
}

TEST(DiagnosticLocation, VerifierErrorPointsAtTheDslLine) {
  Recorded r = recordKernel();
  ASSERT_TRUE(r.kernel.ok()) << r.kernel.error();
  // The DSL only records IR that verifies, so break the gemm the way another
  // front end could: make B transposed, which its 32x16 shape does not allow.
  record::Recording broken = r.kernel.recording();
  auto gemm = std::find_if(broken.ops.begin(), broken.ops.end(),
                           [](const record::Op &op) { return op.name == "tile.gemm"; });
  ASSERT_NE(gemm, broken.ops.end());
  gemm->attrs.push_back(record::Attr::unit("transpose_b"));
  Kernel k(r.kernel.name(), r.kernel.numWaves(), r.kernel.grid(), r.kernel.args(), broken);

  test::TileIR ir;
  EXPECT_FALSE(ir.build(k));
  ASSERT_FALSE(ir.diagnosticLocs().empty());
  const test::TileIR::DiagLoc &d = ir.diagnosticLocs().front();
  EXPECT_EQ(d.file, __FILE__);
  EXPECT_EQ(d.line, static_cast<unsigned>(r.lineOf["tile.gemm"]));
  EXPECT_NE(d.message.find("shape mismatch"), std::string::npos) << d.message;
}

TEST(DiagnosticLocation, OpErrorsEmittedByPassesPointAtTheDslLine) {
  Recorded r = recordKernel();
  test::TileIR ir;
  auto module = ir.build(r.kernel);
  ASSERT_TRUE(module) << ir.diagnostics();
  module->walk([](tile::StoreOp op) { op.emitOpError("example pass diagnostic"); });
  ASSERT_EQ(ir.diagnosticLocs().size(), 1u);
  EXPECT_EQ(ir.diagnostics(), std::string(__FILE__) + ":" + std::to_string(r.lineOf["tile.store"]) +
                                  ": 'tile.store' op example pass diagnostic\n");
}

} // namespace
