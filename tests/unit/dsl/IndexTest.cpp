// Index values and the IR a recording builds: constants fold and are emitted
// once at the entry, entry values are hoisted out of loops, floats round-trip
// (also through the recording's JSON), and the recording is deterministic.
#include "TileIR.h"

#include "Dialect/Tile/TileDialect.h"
#include "Import/BuildKernel.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::dsl;

namespace tilec::test {
Kernel selfContainedKernel(); // HeaderSelfContained.cpp
} // namespace tilec::test

namespace {

TEST(Index, ArithmeticOnConstantsFolds) {
  Index x = Index(3) * 4 + 1;
  EXPECT_TRUE(x.isConstant());
  EXPECT_EQ(x.constant(), 13);
  EXPECT_EQ(cdiv(100, 32).constant(), 4);
  EXPECT_EQ(min(7, 5).constant(), 5);
  EXPECT_EQ(max(7, 5).constant(), 7);
  EXPECT_EQ((Index(17) / 5).constant(), 3);
  EXPECT_EQ((Index(17) % 5).constant(), 2);
}

Kernel constantsKernel() {
  KernelBuilder kb("constants");
  Tensor X = kb.tensor("X", DType::f32, 2);
  Tile t = kb.regTile("t", {32, 32}, DType::f32);
  Index r = kb.blockId(0) * 32;
  kb.forLoop(0, cdiv(X.dim(1), 32), 1, [&](Index j) {
    kb.load(X, {r, j * 32}, t); // 32 first needed inside the loop...
    kb.forLoop(0, 2, 1, [&](Index i) { kb.store(t, X, {r + i * 32, j * 32}); });
  });
  kb.store(t, X, {Index(32) * 2, X.dim(1)}); // ...and reused after it
  return kb.finish();
}

TEST(Index, ConstantsAreEmittedOnceAtTheEntry) {
  Kernel k = constantsKernel();
  ASSERT_TRUE(test::verifies(k));
  const std::string ir = test::text(k);
  EXPECT_EQ(test::count(ir, "arith.constant 32 : index"), 1) << ir;
  EXPECT_EQ(test::count(ir, "arith.constant 64 : index"), 1) << ir; // folded 32 * 2
  EXPECT_EQ(test::count(ir, "arith.constant 1 : index"), 1) << ir;
  EXPECT_EQ(test::count(ir, "memref.dim"), 1) << ir;
  EXPECT_EQ(test::count(ir, "tile.block_id"), 1) << ir;
  // Constants come first, in increasing order, before any loop.
  EXPECT_TRUE(test::containsInOrder(ir, {"%c0 = arith.constant 0", "%c1 = arith.constant 1",
                                         "%c2 = arith.constant 2", "%c32 = arith.constant 32",
                                         "%c64 = arith.constant 64", "scf.for"}));
  // The inner loop nests in the outer one.
  EXPECT_NE(ir.find("\n      scf.for %arg2 = %c0 to %c2 step %c1 {\n        %"), std::string::npos) << ir;
}

TEST(Index, TextIsDeterministic) {
  EXPECT_EQ(constantsKernel().toJson(), constantsKernel().toJson());
  EXPECT_EQ(test::text(constantsKernel()), test::text(constantsKernel()));
}

TEST(Index, FillValuesRoundTrip) {
  KernelBuilder kb("fills");
  Tile t = kb.regTile("t", {16}, DType::f32);
  const double values[] = {0.0, -0.0, 0.1, -1.5, 1e20, 3.0e-300, 123456789.0, -INFINITY, INFINITY};
  for (double v : values)
    kb.fill(t, v);
  Kernel k = kb.finish();
  ASSERT_TRUE(test::verifies(k));
  // Built from the recording, and from its JSON read back: the same doubles.
  llvm::Expected<Kernel> fromJson = import::kernelFromJson(k.toJson(), "fills.json");
  ASSERT_TRUE(static_cast<bool>(fromJson)) << llvm::toString(fromJson.takeError());
  for (const Kernel *kernel : {&k, &*fromJson}) {
    test::TileIR ir;
    auto module = ir.build(*kernel);
    ASSERT_TRUE(module) << ir.diagnostics();
    std::vector<double> built;
    module->walk([&](tile::FillOp op) { built.push_back(op.getValue().convertToDouble()); });
    ASSERT_EQ(built.size(), std::size(values));
    for (size_t i = 0; i < built.size(); ++i) {
      EXPECT_EQ(built[i], values[i]);
      EXPECT_EQ(std::signbit(built[i]), std::signbit(values[i]));
    }
  }
  // The JSON holds the shortest decimal that reads back, and the bit pattern
  // of a non-finite value.
  EXPECT_NE(k.toJson().find("\"float\":0.1}"), std::string::npos);
  EXPECT_NE(k.toJson().find("\"float\":-0.0}"), std::string::npos);
  EXPECT_NE(k.toJson().find("\"float\":1.0e+20}"), std::string::npos);
  EXPECT_NE(k.toJson().find("\"float\":\"0xFFF0000000000000\"}"), std::string::npos);
}

TEST(Index, ScalarArgumentsOfEveryKind) {
  KernelBuilder kb("scalars");
  Tensor X = kb.tensor("X", DType::f32, 1);
  Scalar s = kb.scalarF32("s");
  Index n = kb.scalarIndex("n");
  Index e = kb.scalarI32("e");
  Tile t = kb.regTile("t", {64}, DType::f32);
  kb.load(X, {n + e}, t);
  kb.scale(t, t, s);
  kb.addScalar(t, t, 0.5);
  kb.store(t, X, {n});
  Kernel k = kb.finish();
  ASSERT_TRUE(test::verifies(k));
  const std::string ir = test::text(k);
  EXPECT_NE(ir.find("func.func @scalars(%arg0: memref<?xf32> {tile.name = \"X\"}, %arg1: f32 {tile.name = \"s\"}, "
                    "%arg2: index {tile.name = \"n\"}, %arg3: i32 {tile.name = \"e\"})"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("tile.map scale %1, %1 scalar(%arg1)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tile.map add_scalar %1, %1 {scalar = 5.000000e-01 : f64}"), std::string::npos) << ir;
  ASSERT_EQ(k.args().size(), 4u);
  EXPECT_EQ(k.args()[1].kind, ArgKind::F32);
  EXPECT_EQ(k.args()[2].kind, ArgKind::Index);
  EXPECT_EQ(k.args()[3].kind, ArgKind::I32);
}

TEST(Index, TilesOfTheSameNameStayDistinct) {
  KernelBuilder kb("names");
  Tile a = kb.regTile("acc tile", {16}, DType::f32);
  Tile b = kb.regTile("acc tile", {16}, DType::f32);
  Tile c = kb.regTile("c0", {16}, DType::f32); // clashes with the constant 0's name
  kb.forLoop(0, 1, 1, [&](Index) {
    kb.copy(a, b);
    kb.copy(b, c);
  });
  Kernel k = kb.finish();
  ASSERT_TRUE(test::verifies(k));
  const std::string ir = test::text(k);
  EXPECT_TRUE(test::containsInOrder(ir, {"%c0 = arith.constant 0", "%0 = tile.alloc {name = \"acc tile\"}",
                                         "%1 = tile.alloc {name = \"acc tile\"}", "%2 = tile.alloc {name = \"c0\"}",
                                         "tile.copy %0 -> %1", "tile.copy %1 -> %2"}));
}

TEST(Index, KernelWithoutAGridRunsOneWorkgroup) {
  Kernel k = test::selfContainedKernel();
  ASSERT_TRUE(test::verifies(k));
  ASSERT_EQ(k.grid().size(), 1u);
  EXPECT_EQ(k.grid()[0].arg, -1);
  EXPECT_EQ(k.grid()[0].tile, 1);
  EXPECT_NE(test::text(k).find("tile.grid = [array<i64: -1, 0, 1>]"), std::string::npos);
}

TEST(Index, DTypeHelpers) {
  EXPECT_STREQ(dtypeName(DType::fp8e4m3fnuz), "fp8e4m3fnuz");
  EXPECT_STREQ(mlirTypeName(DType::fp8e4m3fnuz), "f8E4M3FNUZ");
  EXPECT_EQ(parseDType("f8E4M3FNUZ"), DType::fp8e4m3fnuz);
  EXPECT_STREQ(dtypeName(DType::fp8e5m2fnuz), "fp8e5m2fnuz");
  EXPECT_STREQ(mlirTypeName(DType::fp8e5m2fnuz), "f8E5M2FNUZ");
  EXPECT_EQ(parseDType("f8E5M2FNUZ"), DType::fp8e5m2fnuz);
  EXPECT_EQ(parseDType("fp8e5m2fnuz"), DType::fp8e5m2fnuz);
  EXPECT_EQ(dtypeBytes(DType::fp8e5m2fnuz), 1);
  EXPECT_TRUE(isFloat(DType::fp8e5m2fnuz));
  EXPECT_EQ(parseDType("bf16"), DType::bf16);
  EXPECT_EQ(parseDType("bfloat16"), std::nullopt);
  EXPECT_EQ(dtypeBytes(DType::bf16), 2);
  EXPECT_EQ(dtypeBytes(DType::i8), 1);
  EXPECT_EQ(dtypeBytes(DType::f32), 4);
}

TEST(Index, Fp8AndI8TilesVerify) {
  KernelBuilder kb("narrow");
  Tensor A = kb.tensor("A", DType::fp8e4m3fnuz, 2);
  Tensor Q = kb.tensor("Q", DType::i8, 2);
  Tile a = kb.ldsTile("a", {64, 64}, DType::fp8e4m3fnuz);
  Tile q = kb.ldsTile("q", {64, 64}, DType::i8);
  Tile acc = kb.regTile("acc", {64, 64}, DType::f32);
  kb.load(A, {0, 0}, a);
  kb.load(Q, {0, 0}, q);
  kb.gemm(a, a, acc, {.transposeB = true});
  kb.store(acc, A, {0, 0});
  Kernel k = kb.finish();
  ASSERT_TRUE(test::verifies(k));
  EXPECT_NE(test::text(k).find("memref<?x?xf8E4M3FNUZ>"), std::string::npos);
}

TEST(Index, Bf8TilesVerify) {
  KernelBuilder kb("narrow_bf8");
  Tensor A = kb.tensor("A", DType::fp8e5m2fnuz, 2);
  Tensor C = kb.tensor("C", DType::f32, 2);
  Tile a = kb.ldsTile("a", {64, 64}, DType::fp8e5m2fnuz);
  Tile acc = kb.regTile("acc", {64, 64}, DType::f32);
  kb.load(A, {0, 0}, a);
  kb.gemm(a, a, acc, {.transposeB = true});
  kb.store(acc, C, {0, 0});
  Kernel k = kb.finish();
  ASSERT_TRUE(test::verifies(k));
  EXPECT_NE(test::text(k).find("memref<?x?xf8E5M2FNUZ>"), std::string::npos);
  EXPECT_NE(test::text(k).find("!tile.tile<64x64xf8E5M2FNUZ, lds>"), std::string::npos);
}

} // namespace

namespace {

TEST(Index, RepeatedArithmeticIsEmittedOncePerScope) {
  KernelBuilder kb("cse");
  Tensor X = kb.tensor("X", DType::f32, 2);
  Tile t = kb.regTile("t", {32, 32}, DType::f32);
  kb.forLoop(0, 4, 1, [&](Index j) {
    kb.load(X, {0, j * 32}, t);
    kb.store(t, X, {0, j * 32}); // the same j * 32
  });
  kb.forLoop(0, 4, 1, [&](Index j) { kb.load(X, {0, j * 32}, t); }); // another loop, another j
  Kernel k = kb.finish();
  ASSERT_TRUE(test::verifies(k));
  EXPECT_EQ(test::count(test::text(k), "arith.muli"), 2) << test::text(k);
}

} // namespace
