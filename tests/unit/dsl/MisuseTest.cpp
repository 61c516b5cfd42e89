// DSL misuse is caught at the call: the kernel is not ok() and its error names
// the op and this file's line. Shape and type errors come from the dialect's
// verifiers when the kernel is built, at the same line, naming the shapes.
#include "TileIR.h"

#include "tilec/dsl.hpp"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::dsl;

namespace {

/// The kernel fails at <this file>:<line> in <op>, with every fragment in the
/// message. A misuse of the DSL is the kernel's error, "<file>:<line>: <op>:
/// ..."; a shape or type error is the first diagnostic of the dialect's
/// verifiers when the kernel is built, "'<op>' op ..." at <file>:<line>.
::testing::AssertionResult failsAt(const Kernel &k, int line, const std::string &op,
                                   const std::vector<std::string> &fragments) {
  std::string message;
  if (!k.ok()) {
    if (!k.recording().ops.empty() || !k.toJson().empty())
      return ::testing::AssertionFailure() << "a failed kernel has a recording";
    std::string prefix = std::string(__FILE__) + ":" + std::to_string(line) + ": " + op + ": ";
    if (k.error().rfind(prefix, 0) != 0)
      return ::testing::AssertionFailure() << "error does not start with '" << prefix << "':\n  " << k.error();
    message = k.error();
  } else {
    test::TileIR ir;
    if (ir.build(k))
      return ::testing::AssertionFailure() << "the kernel is ok and verifies";
    const test::TileIR::DiagLoc &d = ir.diagnosticLocs().front();
    if (d.file != __FILE__ || d.line != static_cast<unsigned>(line))
      return ::testing::AssertionFailure() << "the verifier's error is at " << d.file << ":" << d.line
                                           << ", not line " << line << ":\n  " << d.message;
    if (d.message.rfind("'" + op + "' op ", 0) != 0)
      return ::testing::AssertionFailure() << "the verifier's error is not of " << op << ":\n  " << d.message;
    message = d.message;
  }
  for (const std::string &f : fragments)
    if (message.find(f) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << f << "' not in error:\n  " << message;
  return ::testing::AssertionSuccess();
}

struct Fixture {
  KernelBuilder kb{"misuse"};
  Tensor A = kb.tensor("A", DType::bf16, 2);
  Tensor C = kb.tensor("C", DType::f32, 2);
  Tensor ids = kb.tensor("ids", DType::i32, 1);
  Tile a = kb.ldsTile("a", {128, 32}, DType::bf16);
  Tile b = kb.ldsTile("b", {64, 128}, DType::bf16);
  Tile acc = kb.regTile("acc", {128, 128}, DType::f32);
  Tile row = kb.regTile("row", {128}, DType::f32);
};

TEST(Misuse, GemmShapeMismatch) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.gemm(f.a, f.b, f.acc);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.gemm",
                      {"shape mismatch: A 128x32xbf16 (lds) * B 64x128xbf16 (lds) does not give "
                       "C 128x128xf32 (reg)"}));
}

// TensorOptions::divisibility promises a power of two (what the loads may
// move at once and what every launch checks).
TEST(Misuse, DivisibilityNotAPowerOfTwo) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.tensor("D", DType::bf16, 2, {.divisibility = 6});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tensor", {"tensor 'D': divisibility must be a power of two in [1, 1024], got 6"}));
}

// ScalarOptions::divisibility likewise, on an i32 argument.
TEST(Misuse, ScalarDivisibilityNotAPowerOfTwo) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.scalarI32("n", {.divisibility = 12});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "scalar", {"scalar 'n': divisibility must be a power of two in [1, 1024], got 12"}));
}

TEST(Misuse, GemmTransposedShapeMismatch) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.gemm(f.a, f.b, f.acc, {.transposeB = true});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.gemm",
                      {"A 128x32xbf16 (lds) * B^T 64x128xbf16 (lds) does not give C 128x128xf32 (reg)"}));
}

TEST(Misuse, GemmAccumulatorMustBeF32Registers) {
  Fixture f;
  Tile b = f.kb.ldsTile("b32", {32, 128}, DType::bf16);
  Tile c = f.kb.regTile("c16", {128, 128}, DType::bf16);
  int line = __LINE__ + 1;
  f.kb.gemm(f.a, b, c);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.gemm", {"accumulator C must be f32", "128x128xbf16 (reg)"}));
}

TEST(Misuse, CopyBetweenDifferentShapes) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.copy(f.acc, f.b);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.copy",
                      {"different shapes", "128x128xf32 (reg) -> 64x128xbf16 (lds)"}));
}

TEST(Misuse, CopyLdsToLds) {
  Fixture f;
  Tile a2 = f.kb.ldsTile("a2", {128, 32}, DType::bf16);
  int line = __LINE__ + 1;
  f.kb.copy(f.a, a2);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.copy", {"LDS to LDS", "128x32xbf16 (lds)"}));
}

TEST(Misuse, LoadIntoATileOfAnotherElementType) {
  Fixture f;
  Tile a16 = f.kb.ldsTile("a16", {128, 32}, DType::f16);
  int line = __LINE__ + 1;
  f.kb.load(f.A, {0, 0}, a16);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.load",
                      {"element type of tile 128x32xf16 (lds) differs from tensor A: memref<?x?xbf16>"}));
}

TEST(Misuse, LoadWithTheWrongNumberOfIndices) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.load(f.A, {f.kb.blockId(0)}, f.a);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.load",
                      {"needs 2 indices into tensor A: memref<?x?xbf16>, got 1", "128x32xbf16 (lds)"}));
}

TEST(Misuse, StoreWithTheWrongNumberOfIndices) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.store(f.acc, f.C, {0, 0, 0});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.store",
                      {"needs 2 indices into tensor C: memref<?x?xf32>, got 3", "128x128xf32 (reg)"}));
}

TEST(Misuse, BinaryMapWhoseRhsCannotBroadcast) {
  Fixture f;
  Tile cols = f.kb.regTile("cols", {64}, DType::f32);
  int line = __LINE__ + 1;
  f.kb.sub(f.acc, f.acc, cols);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.map",
                      {"'sub'", "cannot broadcast rhs 64xf32 (reg) to 128x128xf32 (reg)",
                       "one value per row: 128"}));
}

TEST(Misuse, PerColumnBroadcastChecksTheColumnCount) {
  Fixture f;
  Tile wide = f.kb.regTile("wide", {128, 64}, DType::f32);
  int line = __LINE__ + 1;
  f.kb.addBias(wide, wide, f.row);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.map",
                      {"cannot broadcast rhs 128xf32 (reg) to 128x64xf32 (reg)", "one value per column: 64"}));
}

TEST(Misuse, MapOnAnLdsTile) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.exp2(f.a, f.a);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.map", {"register tile", "!tile.tile<128x32xbf16, lds>"}));
}

TEST(Misuse, ScaleIsNotAPlainUnaryMap) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.map(MapFn::scale, f.acc, f.acc);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.map", {"'scale'", "scale()"}));
}

TEST(Misuse, ReduceWithTheWrongDestinationLength) {
  Fixture f;
  Tile wide = f.kb.regTile("wide", {128, 64}, DType::f32);
  int line = __LINE__ + 1;
  f.kb.reduce(ReduceKind::sum, wide, f.row, {.axis = 0});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.reduce",
                      {"axis 0 reduction of 128x64xf32 (reg) gives 64 values, destination 128xf32 (reg) "
                       "holds 128"}));
}

TEST(Misuse, GatherThroughANonI32IndexTensor) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.gather(f.A, f.C, 0, 0, f.a);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.gather", {"1D memref of 32-bit signless integer", "memref<?x?xf32>"}));
}

TEST(Misuse, BlockIdOfAnAxisTheGridDoesNotHave) {
  Fixture f;
  f.kb.grid({GridExtent::ceilDiv(f.C, 0, 128)});
  int line = __LINE__ + 1;
  Index bid = f.kb.blockId(1);
  f.kb.store(f.acc, f.C, {bid, 0});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.block_id", {"grid axis 1", "1 axis"}));
}

TEST(Misuse, GridAxisOfATensorDimensionThatDoesNotExist) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.grid({GridExtent::ceilDiv(f.ids, 1, 64)});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "grid", {"ids: memref<?xi32> has no dimension 1"}));
}

TEST(Misuse, LoopValueUsedAfterTheLoop) {
  Fixture f;
  Index leaked = 0;
  f.kb.forLoop(0, 4, 1, [&](Index i) { leaked = i * 32; });
  int line = __LINE__ + 1;
  f.kb.load(f.A, {0, leaked}, f.a);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.load", {"used outside the loop body"}));
}

TEST(Misuse, ScalarReadInALoopUsedAfterIt) {
  Fixture f;
  Scalar leaked;
  f.kb.forLoop(0, 4, 1, [&](Index i) { leaked = f.kb.loadScalar(f.C, {i, 0}); });
  int line = __LINE__ + 1;
  f.kb.scale(f.acc, f.acc, leaked);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.map", {"'scale'", "used outside the loop body that reads it"}));
}

TEST(Misuse, ScalarReadFromATensorThatIsNotF32) {
  Fixture f;
  int line = __LINE__ + 1;
  Scalar s = f.kb.loadScalar(f.ids, {0});
  f.kb.scale(f.acc, f.acc, s);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.load_scalar", {"32-bit float", "memref<?xi32>"}));
}

TEST(Misuse, IndexArithmeticErrorsPointAtTheConsumingCall) {
  Fixture f;
  KernelBuilder other("other");
  Index foreign = other.blockId(0);
  Index mixed = f.kb.blockId(0) + foreign; // no location of its own
  int line = __LINE__ + 1;
  f.kb.load(f.A, {mixed, 0}, f.a);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "arith.addi", {"two different kernels"}));
}

TEST(Misuse, TileOfAnotherKernel) {
  Fixture f;
  KernelBuilder other("other");
  Tile foreign = other.regTile("foreign", {128, 128}, DType::f32);
  int line = __LINE__ + 1;
  f.kb.fill(foreign, 1.0);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.fill", {"not a tile of this kernel"}));
}

TEST(Misuse, BadTileShape) {
  KernelBuilder kb("bad_tile");
  int line = __LINE__ + 1;
  kb.regTile("t", {64, 0}, DType::f32);
  EXPECT_TRUE(failsAt(kb.finish(), line, "tile.alloc", {"'t'", "64x0"}));
}

TEST(Misuse, PipelineDepthOutOfRange) {
  KernelBuilder kb("deep");
  int line = __LINE__ + 1;
  kb.forLoop(0, 4, 1, {.numStages = 9}, [](Index) {});
  EXPECT_TRUE(failsAt(kb.finish(), line, "scf.for", {"numStages must be in [1, 8], got 9"}));
}

TEST(Misuse, KernelNameMustBeAnIdentifier) {
  int line = __LINE__ + 1;
  KernelBuilder kb("gemm-128");
  EXPECT_TRUE(failsAt(kb.finish(), line, "func.func", {"'gemm-128'", "identifier"}));
}

TEST(Misuse, TheFirstErrorWinsAndLaterCallsAreIgnored) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.copy(f.acc, f.b);
  f.kb.gemm(f.a, f.b, f.acc);  // a second misuse
  f.kb.fill(f.acc, 0.0);       // and a good call
  Kernel k = f.kb.finish();
  EXPECT_TRUE(failsAt(k, line, "tile.copy", {"different shapes"}));
  test::TileIR ir;
  EXPECT_FALSE(ir.build(k));
  EXPECT_EQ(ir.diagnosticLocs().size(), 1u) << ir.diagnostics();
  EXPECT_EQ(ir.diagnostics().find("tile.gemm"), std::string::npos) << ir.diagnostics();
}

TEST(Misuse, DefaultConstructedHandles) {
  Fixture f;
  Tile none;
  int line = __LINE__ + 1;
  f.kb.copy(none, f.acc);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.copy", {"default-constructed Tile"}));
}

} // namespace

namespace {

// Attention's DSL additions: tensor windows, index reads, masks, scalar grids.

TEST(Misuse, WindowNeedsOneOriginAndSizePerDimension) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.window(f.A, {0}, {4, 4});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.window", {"needs 2 origin index(es)", "got 1 and 2"}));
}

TEST(Misuse, WindowUsedOutsideItsLoop) {
  Fixture f;
  Tensor w;
  f.kb.forLoop(0, 4, 1, [&](Index i) { w = f.kb.window(f.A, {i, 0}, {1, 32}); });
  int line = __LINE__ + 1;
  f.kb.load(w, {0, 0}, f.a);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.load", {"window", "outside the loop body that defines it"}));
}

TEST(Misuse, LoadIndexNeedsI32) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.loadIndex(f.A, 0);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.load_index", {"memref of 32-bit signless integer", "memref<?x?xbf16>"}));
}

TEST(Misuse, MaskNeedsF32Scores) {
  Fixture f;
  Tile s = f.kb.regTile("s", {64, 64}, DType::bf16);
  int line = __LINE__ + 1;
  f.kb.mask(s, 0, 0, 64, {.causal = true});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.mask", {"rank-2 f32 register tile", "64x64xbf16 (reg)"}));
}

TEST(Misuse, ScatterNeedsRowVectorsOfOneShape) {
  Fixture f;
  Tile pos = f.kb.regTile("pos", {64}, DType::f32);
  int line = __LINE__ + 1;
  f.kb.scatter(f.row, pos, f.ids);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.scatter",
                      {"scatters a rank-1 tile through positions of the same shape, got 128xf32 (reg) and 64xf32 (reg)"}));
}

TEST(Misuse, ScatterIntoARank2Tensor) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.scatter(f.row, f.row, f.C);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.scatter", {"scatters into a rank-1 tensor"}));
}

TEST(Misuse, IotaAxisOfARowVector) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.iota(f.row, 1);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.iota", {"axis 1 of a rank-1 tile 128xf32 (reg)"}));
}

TEST(Misuse, MaskWindowMustNotBeNegative) {
  Fixture f;
  int line = __LINE__ + 1;
  f.kb.mask(f.acc, 0, 0, 64, {.window = -3});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.mask", {"window must be >= 0", "-3"}));
}

TEST(Misuse, GridFromAScalarThatIsNotAnArgument) {
  Fixture f;
  Index n = f.A.dim(0) * 2;
  int line = __LINE__ + 1;
  f.kb.grid({GridExtent::ceilDiv(n, 64)});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "grid", {"i32 or index scalar argument"}));
}

TEST(Misuse, GridFromAWindow) {
  Fixture f;
  Tensor w = f.kb.window(f.A, {0, 0}, {8, 8});
  int line = __LINE__ + 1;
  f.kb.grid({GridExtent::ceilDiv(w, 0, 64)});
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "grid", {"is a window"}));
}

// A grid axis sized by an i32 argument is recorded as (argument, axis -1).
TEST(DslWindows, ScalarGridAndWindowIR) {
  KernelBuilder kb("w");
  Tensor X = kb.tensor("X", DType::bf16, 2);
  Tensor cu = kb.tensor("cu", DType::i32, 1);
  Index n = kb.scalarI32("n");
  kb.grid({GridExtent::ceilDiv(n, 64), GridExtent::fixed(3)});
  Index start = kb.loadIndex(cu, kb.blockId(1));
  Tensor w = kb.window(X, {start, 0}, {n, 16});
  Tile t = kb.ldsTile("t", {64, 16}, DType::bf16);
  kb.load(w, {kb.blockId(0) * 64, 0}, t);
  Kernel k = kb.finish();
  ASSERT_TRUE(k.ok()) << k.error();
  ASSERT_EQ(k.grid().size(), 2u);
  EXPECT_EQ(k.grid()[0].arg, 2);
  EXPECT_EQ(k.grid()[0].axis, -1);
  EXPECT_EQ(k.grid()[0].tile, 64);
  const std::string ir = test::text(k);  // arguments: %arg0 = X, %arg1 = cu
  EXPECT_NE(ir.find("tile.grid = [array<i64: 2, -1, 64>, array<i64: -1, 0, 3>]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tile.load_index %arg1["), std::string::npos) << ir;
  EXPECT_NE(ir.find("= tile.window %arg0["), std::string::npos) << ir;
}

} // namespace
