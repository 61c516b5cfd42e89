// DSL misuse is caught at the call: the kernel is not ok() and its error names
// the op, the shapes involved and this file's line.
#include "tilec/dsl.hpp"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::dsl;

namespace {

/// The error is "<this file>:<line>: <op>: ..." and contains every fragment.
::testing::AssertionResult failsAt(const Kernel &k, int line, const std::string &op,
                                   const std::vector<std::string> &fragments) {
  if (k.ok())
    return ::testing::AssertionFailure() << "kernel is ok";
  if (!k.tileIR().empty())
    return ::testing::AssertionFailure() << "a failed kernel has IR";
  std::string prefix = std::string(__FILE__) + ":" + std::to_string(line) + ": " + op + ": ";
  if (k.error().rfind(prefix, 0) != 0)
    return ::testing::AssertionFailure() << "error does not start with '" << prefix << "':\n  "
                                         << k.error();
  for (const std::string &f : fragments)
    if (k.error().find(f) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << f << "' not in error:\n  " << k.error();
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
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.gemm", {"f32 register tile", "128x128xbf16 (reg)"}));
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
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.map", {"register tiles", "128x32xbf16 (lds)"}));
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
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.gather", {"rank-1 i32", "C: memref<?x?xf32>"}));
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
  EXPECT_EQ(k.error().find("tile.gemm"), std::string::npos) << k.error();
}

TEST(Misuse, DefaultConstructedHandles) {
  Fixture f;
  Tile none;
  int line = __LINE__ + 1;
  f.kb.copy(none, f.acc);
  EXPECT_TRUE(failsAt(f.kb.finish(), line, "tile.copy", {"default-constructed Tile"}));
}

} // namespace
