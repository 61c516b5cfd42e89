// GEMM: C[M,N] = A[M,K] @ B[K,N], written in the tilec DSL.
//
// Tile configuration (the defaults; every entry is a `-p` parameter):
//   workgroup tile  BM x BN x BK = 128 x 128 x 32, 4 waves, k loop pipelined 2 stages deep
//   grid            ceil(M / BM) x ceil(N / BN) workgroups, one tile of C each
//   LDS budget      A tile 128x32 bf16 (8 KiB) + B tile 32x128 bf16 (8 KiB) = 16 KiB per stage,
//                   x 2 stages = 32 KiB of the 64 KiB a workgroup has on gfx942 / gfx90a / gfx1151
//   registers       accumulator 128x128 f32 = 64 KiB over 4 waves
//                   (64 VGPRs per lane on wave64, 128 on wave32)
//
// A is MxK and B is KxN, both row-major; C is MxN in f32 or bf16 (the store
// converts). M, N and K are run-time sizes >= 1: loads past a tensor's edge
// read 0 and stores past it are dropped, so ragged shapes need no padding.
#include "Gemm.h"

#include "Params.h"

namespace tilec::kernels {

std::string gemmKernelName(const GemmConfig &c) {
  return "gemm_" + std::string(dtypeName(c.dtype)) + "_" + dtypeName(c.out) + "_" +
         std::to_string(c.blockM) + "x" + std::to_string(c.blockN) + "x" + std::to_string(c.blockK) +
         "_w" + std::to_string(c.waves) + "_s" + std::to_string(c.stages);
}

int64_t gemmLdsBytes(const GemmConfig &c) {
  return (c.blockM * c.blockK + c.blockK * c.blockN) * dtypeBytes(c.dtype) * c.stages;
}

Result<Kernel> buildGemm(const GemmConfig &config) {
  using namespace dsl;
  const int64_t BM = config.blockM, BN = config.blockN, BK = config.blockK;

  KernelBuilder kb(gemmKernelName(config), {.numWaves = config.waves});
  Tensor A = kb.tensor("A", config.dtype, 2); // [M, K]
  Tensor B = kb.tensor("B", config.dtype, 2); // [K, N]
  Tensor C = kb.tensor("C", config.out, 2);   // [M, N]

  // One workgroup per BM x BN tile of C.
  kb.grid({GridExtent::ceilDiv(C, 0, BM), GridExtent::ceilDiv(C, 1, BN)});
  Index row = kb.blockId(0) * BM;  // first row of this workgroup's C tile
  Index col = kb.blockId(1) * BN;  // first column
  Index numK = cdiv(A.dim(1), BK); // k steps; the last one may be partial (reads 0 past K)

  Tile a = kb.ldsTile("a_lds", {BM, BK}, config.dtype);
  Tile b = kb.ldsTile("b_lds", {BK, BN}, config.dtype);
  Tile acc = kb.regTile("acc", {BM, BN}, DType::f32);

  // ---- acc[BM,BN] = 0                                   (default acc[128,128])
  kb.fill(acc, 0.0);

  // ---- for each k step: acc[BM,BN] += A[BM,BK] @ B[BK,BN]
  //                                                      (default C[128,128] += A[128,32] @ B[32,128])
  kb.forLoop(0, numK, 1, {.numStages = config.stages, .name = "kt"}, [&](Index kt) {
    Index k = kt * BK;
    kb.load(A, {row, k}, a); // a[BM,BK] = A[row:row+BM, k:k+BK]  (global -> LDS)
    kb.load(B, {k, col}, b); // b[BK,BN] = B[k:k+BK, col:col+BN]  (global -> LDS)
    kb.gemm(a, b, acc);
  });

  // ---- C[row:row+BM, col:col+BN] = acc                  (f32 -> C's element type)
  kb.store(acc, C, {row, col});

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

KernelInfo gemmKernelInfo() {
  KernelInfo info;
  info.name = "gemm";
  info.summary = "C[M,N] = A[M,K] @ B[K,N]; A, B row-major bf16/f16, f32 accumulation, C f32/bf16";
  info.params = {
      {"M", "4096", "rows of A and C (run-time size; used by --run)"},
      {"N", "4096", "columns of B and C (run-time size; used by --run)"},
      {"K", "4096", "columns of A, rows of B (run-time size; used by --run)"},
      {"dtype", "bf16", "element type of A and B: bf16 | f16"},
      {"out", "f32", "element type of C: f32 | bf16"},
      {"block_m", "128", "rows of C per workgroup"},
      {"block_n", "128", "columns of C per workgroup"},
      {"block_k", "32", "depth of one k step"},
      {"waves", "4", "wavefronts per workgroup (1..16)"},
      {"stages", "2", "software-pipelining depth of the k loop (1..8)"},
  };
  info.build = [name = info.name, params = info.params](const KernelParams &given) -> Result<Kernel> {
    ParamReader p(name, params, given);
    constexpr int64_t kMaxSize = int64_t(1) << 31, kMaxBlock = 512;
    p.integer("M", 1, kMaxSize);
    p.integer("N", 1, kMaxSize);
    p.integer("K", 1, kMaxSize);
    GemmConfig c;
    c.dtype = p.dtype("dtype", {DType::bf16, DType::f16});
    c.out = p.dtype("out", {DType::f32, DType::bf16});
    c.blockM = p.integer("block_m", 1, kMaxBlock);
    c.blockN = p.integer("block_n", 1, kMaxBlock);
    c.blockK = p.integer("block_k", 1, kMaxBlock);
    c.waves = static_cast<int>(p.integer("waves", 1, 16));
    c.stages = static_cast<int>(p.integer("stages", 1, 8));
    if (!p.ok())
      return p.error();
    return buildGemm(c);
  };
  return info;
}

} // namespace tilec::kernels
