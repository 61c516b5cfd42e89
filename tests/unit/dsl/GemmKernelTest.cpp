// The shipped GEMM (kernels/gemm/Gemm.cpp): every dtype / output combination gives
// tile IR that parses and verifies, with the ops and attributes the pipeline
// expects.
#include "gemm/Gemm.h"
#include "Registry.h"
#include "TileIR.h"

#include "Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <gtest/gtest.h>

using namespace tilec;

namespace {

struct Combo {
  const char *dtype, *out, *name;
};

TEST(GemmKernel, EveryDtypeAndOutputParsesAndVerifies) {
  for (Combo c : {Combo{"bf16", "f32", "gemm_bf16_f32_128x128x32_w4_s2"},
                  Combo{"bf16", "bf16", "gemm_bf16_bf16_128x128x32_w4_s2"},
                  Combo{"f16", "f32", "gemm_f16_f32_128x128x32_w4_s2"},
                  Combo{"f16", "bf16", "gemm_f16_bf16_128x128x32_w4_s2"}}) {
    SCOPED_TRACE(c.name);
    Result<Kernel> k = kernels::buildKernel("gemm", {{"dtype", c.dtype}, {"out", c.out}});
    ASSERT_TRUE(k.ok()) << k.error();
    EXPECT_EQ(k->name(), c.name);

    test::TileIR ir;
    mlir::OwningOpRef<mlir::ModuleOp> module = ir.build(*k);
    ASSERT_TRUE(module) << ir.diagnostics() << test::text(*k);

    auto func = *module->getOps<mlir::func::FuncOp>().begin();
    EXPECT_EQ(func.getSymName(), c.name);
    EXPECT_TRUE(func->hasAttr(tile::attr::kKernel));
    EXPECT_EQ(func->getAttrOfType<mlir::IntegerAttr>(tile::attr::kNumWaves).getInt(), 4);
    auto grid = func->getAttrOfType<mlir::ArrayAttr>(tile::attr::kGrid);
    ASSERT_EQ(grid.size(), 2u);
    // Grid = ceil(M / 128) x ceil(N / 128), from C (argument 2).
    EXPECT_EQ(mlir::cast<mlir::DenseI64ArrayAttr>(grid[0]).asArrayRef(),
              llvm::ArrayRef<int64_t>({2, 0, 128}));
    EXPECT_EQ(mlir::cast<mlir::DenseI64ArrayAttr>(grid[1]).asArrayRef(),
              llvm::ArrayRef<int64_t>({2, 1, 128}));

    std::string elem = c.dtype;
    std::string out = c.out;
    EXPECT_EQ(func.getArgumentTypes()[0], func.getArgumentTypes()[1]);
    std::string sig;
    llvm::raw_string_ostream os(sig);
    os << func.getFunctionType();
    EXPECT_EQ(sig, "(memref<?x?x" + elem + ">, memref<?x?x" + elem + ">, memref<?x?x" + out + ">) -> ()");

    // One pipelined k loop with two global->LDS loads and one gemm; the store
    // of the f32 accumulator into C is after it.
    int loops = 0, loads = 0, gemms = 0, stores = 0;
    module->walk([&](mlir::Operation *op) {
      if (auto f = mlir::dyn_cast<mlir::scf::ForOp>(op)) {
        ++loops;
        EXPECT_EQ(f->getAttrOfType<mlir::IntegerAttr>(tile::attr::kNumStages).getInt(), 2);
      } else if (auto l = mlir::dyn_cast<tile::LoadOp>(op)) {
        ++loads;
        EXPECT_TRUE(mlir::isa<mlir::scf::ForOp>(op->getParentOp()));
        EXPECT_TRUE(mlir::cast<tile::TileType>(l.getDest().getType()).isLds());
      } else if (auto g = mlir::dyn_cast<tile::GemmOp>(op)) {
        ++gemms;
        EXPECT_TRUE(mlir::isa<mlir::scf::ForOp>(op->getParentOp()));
        EXPECT_TRUE(g.getTransposeB());  // B's tile is N x K: k contiguous for every layout
      } else if (auto s = mlir::dyn_cast<tile::StoreOp>(op)) {
        ++stores;
        EXPECT_TRUE(mlir::cast<tile::TileType>(s.getValue().getType()).getElementType().isF32());
        EXPECT_TRUE(mlir::isa<mlir::func::FuncOp>(op->getParentOp()));
      }
    });
    EXPECT_EQ(loops, 1);
    EXPECT_EQ(loads, 2);
    EXPECT_EQ(gemms, 1);
    EXPECT_EQ(stores, 1);
  }
}

TEST(GemmKernel, IRReadsLikeTheMath) {
  Result<Kernel> k = kernels::buildKernel("gemm");
  ASSERT_TRUE(k.ok()) << k.error();
  EXPECT_TRUE(test::containsInOrder(
      test::text(*k),
      // %arg0..2 are A, B, C; %2, %3, %4 the tiles a_lds, b_lds, acc.
      {"func.func @gemm_bf16_f32_128x128x32_w4_s2(%arg0: memref<?x?xbf16> {tile.divisibility = 8 : i64, "
       "tile.name = \"A\"}, %arg1: memref<?x?xbf16> {tile.divisibility = 8 : i64, tile.name = \"B\"}, "
       "%arg2: memref<?x?xf32> {tile.name = \"C\"}) attributes {tile.grid = [array<i64: 2, 0, 128>, "
       "array<i64: 2, 1, 128>], tile.kernel, tile.num_waves = 4 : i64}",
       "%0 = tile.block_id 0 : index", "%1 = tile.block_id 1 : index",
       "memref.dim %arg0, %c1 : memref<?x?xbf16>",
       "%2 = tile.alloc {name = \"a_lds\"} : !tile.tile<128x32xbf16, lds>",
       "%3 = tile.alloc {name = \"b_lds\"} : !tile.tile<128x32xbf16, lds>",
       "%4 = tile.alloc {name = \"acc\"} : !tile.tile<128x128xf32, reg>",
       "tile.fill %4, 0.000000e+00 : !tile.tile<128x128xf32, reg>", "scf.for %arg3 = %c0 to ",
       "tile.load %arg0[", "] -> %2 : memref<?x?xbf16>, !tile.tile<128x32xbf16, lds>",
       "tile.load %arg1[", "] -> %3 {transpose} : memref<?x?xbf16>, !tile.tile<128x32xbf16, lds>",
       "tile.gemm %2, %3, %4 {transpose_b} : !tile.tile<128x32xbf16, lds>, "
       "!tile.tile<128x32xbf16, lds>, !tile.tile<128x128xf32, reg>",
       "} {tile.num_stages = 2 : i64}",
       "tile.store %4 -> %arg2[", "] : !tile.tile<128x128xf32, reg>, memref<?x?xf32>", "return"}));
  EXPECT_EQ(test::count(test::text(*k), "arith.ceildivui"), 1);
}

TEST(GemmKernel, ConfigurationIsInTheNameAndTheIR) {
  Result<Kernel> k = kernels::buildKernel(
      "gemm", {{"dtype", "f16"}, {"out", "bf16"}, {"block_m", "64"}, {"block_n", "256"},
               {"block_k", "64"}, {"waves", "8"}, {"stages", "3"}, {"M", "1000"}, {"K", "7"}});
  ASSERT_TRUE(k.ok()) << k.error();
  // K = 7 is odd: A's rows are assumed nothing of (divisibility 1); N = 4096
  // (the default) is a multiple of 8 f16 (16 bytes).
  EXPECT_EQ(k->name(), "gemm_f16_bf16_64x256x64_w8_s3_div1x8");
  EXPECT_EQ(k->numWaves(), 8);
  ASSERT_EQ(k->grid().size(), 2u);
  EXPECT_EQ(k->grid()[0].arg, 2);
  EXPECT_EQ(k->grid()[0].axis, 0);
  EXPECT_EQ(k->grid()[0].tile, 64);
  EXPECT_EQ(k->grid()[1].axis, 1);
  EXPECT_EQ(k->grid()[1].tile, 256);
  ASSERT_EQ(k->args().size(), 3u);
  EXPECT_EQ(k->args()[2].name, "C");
  EXPECT_EQ(k->args()[2].dtype, DType::bf16);
  EXPECT_TRUE(test::verifies(*k));
  EXPECT_NE(test::text(*k).find("!tile.tile<64x64xf16, lds>"), std::string::npos);
  EXPECT_NE(test::text(*k).find("!tile.tile<256x64xf16, lds>"), std::string::npos);  // B, N x K
  EXPECT_NE(test::text(*k).find("{tile.num_stages = 3 : i64}"), std::string::npos);
  EXPECT_NE(test::text(*k).find("tile.num_waves = 8 : i64"), std::string::npos);
}

// The kernel is specialised on the powers of two dividing K and N, up to 16
// bytes of the element type, not on their values (docs/hardware.md section 4:
// a 16-byte buffer load must lie wholly inside a row or wholly outside).
TEST(GemmKernel, SpecialisedOnWhatKAndNAreMultiplesOf) {
  struct Case {
    const char *dtype, *k, *n, *name, *divA, *divB;
  };
  for (Case c : {Case{"bf16", "4096", "4096", "gemm_bf16_f32_128x128x32_w4_s2", "8", "8"},
                 Case{"bf16", "2056", "4104", "gemm_bf16_f32_128x128x32_w4_s2", "8", "8"},
                 Case{"bf16", "100", "4096", "gemm_bf16_f32_128x128x32_w4_s2_div4x8", "4", "8"},
                 Case{"f16", "4096", "7", "gemm_f16_f32_128x128x32_w4_s2_div8x1", "8", ""},
                 Case{"fp8", "4096", "40", "gemm_fp8e4m3fnuz_f32_128x128x32_w4_s2_div16x8", "16", "8"},
                 Case{"fp8", "48", "4096", "gemm_fp8e4m3fnuz_f32_128x128x32_w4_s2", "16", "16"}}) {
    SCOPED_TRACE(std::string(c.dtype) + " K=" + c.k + " N=" + c.n);
    Result<Kernel> k = kernels::buildKernel("gemm", {{"dtype", c.dtype}, {"K", c.k}, {"N", c.n}});
    ASSERT_TRUE(k.ok()) << k.error();
    EXPECT_EQ(k->name(), c.name);
    auto attr = [](const char *d, const char *name) {
      return std::string(*d ? "{tile.divisibility = " + std::string(d) + " : i64, " : "{") + "tile.name = \"" + name + "\"}";
    };
    EXPECT_NE(test::text(*k).find(attr(c.divA, "A")), std::string::npos) << test::text(*k);
    EXPECT_NE(test::text(*k).find(attr(c.divB, "B")), std::string::npos) << test::text(*k);
  }
}

TEST(GemmKernel, LdsBudgetOfTheDefaultConfiguration) {
  // 128x32 + 32x128 bf16 = 16 KiB per stage, two stages (see Gemm.cpp's header).
  EXPECT_EQ(kernels::gemmLdsBytes(kernels::GemmConfig{}), 32 * 1024);
}

TEST(GemmKernel, TextIsDeterministic) {
  Result<Kernel> a = kernels::buildKernel("gemm"), b = kernels::buildKernel("gemm");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(test::text(*a), test::text(*b));
}

} // namespace
