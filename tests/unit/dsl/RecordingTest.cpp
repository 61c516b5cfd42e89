// The recorded kernel as data: its JSON reads back into the same kernel (the
// same IR for every shipped kernel), and a malformed recording, from JSON or
// from another front end, gets one diagnostic with its place, never a crash.
#include "Registry.h"
#include "TileIR.h"

#include "Import/BuildKernel.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::dsl;

namespace {

/// Reads `json`; the error text, or "" when it reads.
std::string readError(const std::string &json) {
  llvm::Expected<Kernel> k = import::kernelFromJson(json, "k.json");
  if (k)
    return "";
  return llvm::toString(k.takeError());
}

/// Builds `k`; the first diagnostic, or "" when it builds.
std::string buildError(const Kernel &k) {
  test::TileIR ir;
  return ir.build(k) ? "" : ir.diagnostics();
}

Kernel smallKernel() {
  KernelBuilder kb("small");
  Tensor X = kb.tensor("X", DType::f32, 2, {.divisibility = 4});
  Scalar s = kb.scalarF32("s");
  Index n = kb.scalarI32("n");
  kb.grid({GridExtent::ceilDiv(X, 0, 64)});
  Tile t = kb.regTile("t", {64, 32}, DType::f32);
  Tile row = kb.regTile("row", {64}, DType::f32);
  kb.forLoop(0, cdiv(n, 32), 1, {.numStages = 2, .schedule = {.interleave = true}}, [&](Index j) {
    kb.load(X, {kb.blockId(0) * 64, j * 32}, t);
    kb.scale(t, t, s, 0.5);
    kb.reduce(ReduceKind::max, t, row, {.axis = 1, .accumulate = true});
    kb.sub(t, t, row);
    kb.store(t, X, {kb.blockId(0) * 64, j * 32});
  });
  return kb.finish();
}

TEST(Recording, JsonReadsBackIntoTheSameKernel) {
  Kernel k = smallKernel();
  ASSERT_TRUE(k.ok()) << k.error();
  llvm::Expected<Kernel> back = import::kernelFromJson(k.toJson(), "small.json");
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->toJson(), k.toJson());
  EXPECT_EQ(test::text(*back), test::text(k));
  // The loop's options and the arguments' attributes survive.
  const std::string ir = test::text(*back);
  EXPECT_NE(ir.find("tile.schedule = {interleave = true, ping_pong = false, setprio = false}"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tile.num_stages = 2 : i64"), std::string::npos) << ir;
  EXPECT_NE(ir.find("memref<?x?xf32> {tile.divisibility = 4 : i64, tile.name = \"X\"}"), std::string::npos) << ir;
}

TEST(Recording, EveryShippedKernelReadsBackFromItsJson) {
  for (const kernels::KernelInfo &info : kernels::shippedKernels()) {
    SCOPED_TRACE(info.name);
    Result<Kernel> k = info.build({});
    ASSERT_TRUE(k.ok()) << k.error();
    llvm::Expected<Kernel> back = import::kernelFromJson(k->toJson(), info.name + ".json");
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(test::text(*back), test::text(*k));
  }
}

// A scalar read from a tensor in the loop (the block-scaled GEMM's scale of B)
// survives the JSON as a value of type f32 used by the map.
TEST(Recording, BlockScaledGemmReadsBackFromItsJson) {
  Result<Kernel> k = kernels::findKernel("gemm")->build({{"dtype", "e4m3"}, {"scaling", "block"}, {"layout", "nt"},
                                                         {"block_k", "128"}});
  ASSERT_TRUE(k.ok()) << k.error();
  llvm::Expected<Kernel> back = import::kernelFromJson(k->toJson(), "gemm.json");
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  const std::string ir = test::text(*back);
  EXPECT_EQ(ir, test::text(*k));
  EXPECT_NE(ir.find("tile.load_scalar"), std::string::npos) << ir;
}

TEST(Recording, MalformedJsonNamesThePlace) {
  std::string good = smallKernel().toJson();
  EXPECT_NE(readError("{"), "");
  EXPECT_NE(readError("[]").find("expected an object"), std::string::npos);
  EXPECT_NE(readError("{\"format\":\"other\"}").find("format: expected \"tilec.kernel.v1\""), std::string::npos);
  std::string noOps = good.substr(0, good.find(",\n\"ops\":")) + "}";
  EXPECT_NE(readError(noOps).find("ops: missing"), std::string::npos) << readError(noOps);
  std::string badType = good;
  badType.replace(badType.find("\"type\":\"tile\""), 13, "\"type\":\"cube\"");
  EXPECT_NE(readError(badType).find(": expected index, i32, f32, tensor or tile, got 'cube'"), std::string::npos)
      << readError(badType);
  std::string badFloat = good;
  badFloat.replace(badFloat.find("\"float\":0.5"), 11, "\"float\":\"half\"");
  EXPECT_NE(readError(badFloat).find("attrs[1].float: expected a number"), std::string::npos) << readError(badFloat);
}

TEST(Recording, MalformedRecordingsGetOneDiagnosticAtTheirLocation) {
  Kernel k = smallKernel();
  auto rebuilt = [&](auto edit) {
    record::Recording r = k.recording();
    edit(r);
    return buildError(Kernel(k.name(), k.numWaves(), k.grid(), k.args(), r));
  };
  auto opNamed = [](record::Recording &r, const std::string &name) -> record::Op & {
    for (record::Op &op : r.ops)
      if (op.name == name)
        return op;
    return r.ops.front();
  };
  EXPECT_NE(rebuilt([&](record::Recording &r) { opNamed(r, "tile.load").name = "tile.lod"; })
                .find("unknown operation 'tile.lod'"),
            std::string::npos);
  EXPECT_NE(rebuilt([&](record::Recording &r) { opNamed(r, "tile.reduce").attrs[0].s = "median"; })
                .find("'median' is not a case of enum attribute 'kind'"),
            std::string::npos);
  EXPECT_NE(rebuilt([&](record::Recording &r) { opNamed(r, "tile.store").operands[0] = {9999}; })
                .find("uses value 9999 before its definition"),
            std::string::npos);
  EXPECT_NE(rebuilt([&](record::Recording &r) { r.ops.pop_back(); }).find("not closed"), std::string::npos);
  EXPECT_NE(rebuilt([&](record::Recording &r) { r.values[opNamed(r, "tile.alloc").results[0]].shape = {64, 0}; })
                .find("tile dimensions must be positive"),
            std::string::npos);
  // An operation given the wrong operands is the verifier's to report, at
  // the line the DSL call was written on.
  std::string wrong = rebuilt([&](record::Recording &r) { std::swap(opNamed(r, "tile.load").operands[0], opNamed(r, "tile.load").operands[2]); });
  EXPECT_NE(wrong.find(std::string(__FILE__) + ":"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("'tile.load' op"), std::string::npos) << wrong;
}

} // namespace
