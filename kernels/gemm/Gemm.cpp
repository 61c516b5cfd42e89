// GEMM: C[M,N] = A[M,K] @ B[K,N], written in the tilec DSL. Its problems and
// CPU references: GemmReference.cpp and GemmStrided.cpp; its `-p` parameters
// and targets' defaults: GemmEntry.cpp.
//
// Tile configuration (the defaults on AMD; every entry is a `-p` parameter):
//   workgroup tile  BM x BN x BK = 128 x 128 x 32, 4 waves, k loop software-pipelined
//                   2 stages deep (tilec-pipeline-loops multi-buffers A's and B's tiles)
//   grid            ceil(M / BM) x ceil(N / BN) workgroups, one tile of C each
//   LDS budget      A tile 128x32 bf16 + B tile 128x32 bf16 (N x K) = 16 KiB per stage,
//                   32 KiB for two (gemmLdsBytes) of the 64 KiB a workgroup has on
//                   gfx942 / gfx90a; the swizzled layout needs no padding
//                   (`tilec --kernel=gemm --emit=report` on gfx942: 32768 bytes LDS)
//   registers       accumulator 128x128 f32 = 64 KiB over 4 waves: 64 accumulation
//                   registers per lane on wave64, 128 on wave32 (gfx942's report:
//                   56 VGPRs + 64 AGPRs, no spills)
//
// A is MxK and B is KxN, each stored row-major as written (layout n) or
// transposed (layout t: A stored KxM, B stored NxK, nn.Linear's weight); C is
// MxN in f32 or bf16 (the store converts). M, N and K are run-time sizes >= 1:
// loads past a tensor's edge read 0 and stores past it are dropped, so ragged
// shapes need no padding.
//
// Operands in LDS: A as BM x BK and B as BN x BK, k contiguous, so that every
// target reads both with wide LDS reads (ds_read_b64 on AMD, ldmatrix on
// NVIDIA). An operand stored with k along its rows (A of layout t, B of
// layout n) is transposed on the way into LDS (tile.load {transpose}); on
// NVIDIA, B of layout n keeps its K x N tile (b_lds=kn: ldmatrix.trans reads
// it, and cp.async moves it without registers).
//
// fp8 (dtype=fp8: e4m3fnuz A and B; dtype=bf8: e5m2fnuz A and B; gfx942 only.
// dtype=e4m3 / e5m2: the OCP formats, sm_90a only, through mma.sync m16n8k32):
// C = scale_a * scale_b * (A @ B) with per-tensor f32 scales passed as kernel
// arguments after C; the A/B tiles take half the LDS of bf16 (16 KiB over two
// stages with the default tile). Mixed fp8 x bf8 operands are not offered.
#include "gemm/Gemm.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace tilec::kernels {

namespace {
/// GemmConfig's divisibility with 0 resolved: 16 bytes of elements.
int64_t resolvedDivisibility(int64_t d, DType dtype) { return d > 0 ? d : 16 / dtypeBytes(dtype); }
} // namespace

int64_t gemmDivisibility(int64_t extent, DType dtype) {
  int64_t d = 1;
  while (d < 16 / dtypeBytes(dtype) && extent % (2 * d) == 0)
    d *= 2;
  return d;
}

int64_t gemmRowMultiple(int64_t inner, int64_t ld, int64_t cap) {
  int64_t n = ld > 0 ? std::gcd(inner, ld) : inner;
  return cap > 0 ? std::gcd(n, cap) : n;
}

std::string gemmKernelName(const GemmConfig &c) {
  if (c.splitK > 1 && c.part == GemmConfig::Part::Reduce)
    return "gemm_reduce_" + std::string(dtypeName(c.dtype)) + "_" + dtypeName(c.out) + "_sk" + std::to_string(c.splitK);
  // Kernels for inner extents of 16 bytes' multiples keep the plain name;
  // others say what they assume ("_div4x1": A's inner extent a multiple of 4,
  // B's of 1). Layouts other than nn, and B tiles other than N x K, are named.
  const int64_t full = 16 / dtypeBytes(c.dtype), dk = resolvedDivisibility(c.divisibilityA, c.dtype),
                dn = resolvedDivisibility(c.divisibilityB, c.dtype);
  const std::string layout = std::string(c.transA ? "t" : "n") + (c.transB ? "t" : "n");
  return "gemm_" + (layout == "nn" ? std::string() : layout + "_") + std::string(dtypeName(c.dtype)) + "_" +
         dtypeName(c.out) + "_" +
         std::to_string(c.blockM) + "x" + std::to_string(c.blockN) + "x" + std::to_string(c.blockK) +
         "_w" + std::to_string(c.waves) + "_s" + std::to_string(c.stages) +
         (c.ldsLayout == GemmConfig::LdsLayoutChoice::Naive ? "_naivelds" : "") +
         (c.groupM > 1 ? "_g" + std::to_string(c.groupM) : "") + (c.xcds > 1 ? "_x" + std::to_string(c.xcds) : "") +
         (c.schedule.pingPong ? "_pingpong" : "") + (c.schedule.interleave ? "_interleave" : "") +
         (c.schedule.setprio ? "_setprio" : "") +
         (c.bTile == GemmConfig::BTile::KN ? "_bkn" : "") +
         (c.splitK > 1 ? "_sk" + std::to_string(c.splitK) : "") +
         (c.scaling == GemmConfig::Scaling::Block ? "_blockscaled" : "") +
         (c.strided ? std::string("_strided") : std::string()) +
         (dk < full || dn < full ? "_div" + std::to_string(dk) + "x" + std::to_string(dn) : std::string()) +
         (c.instr == dsl::MatrixScope::Warp ? "_warpmma" : c.instr == dsl::MatrixScope::Warpgroup ? "_wgmma" : "");
}

int64_t gemmLdsBytes(const GemmConfig &c) {
  return (c.blockM * c.blockK + c.blockK * c.blockN) * dtypeBytes(c.dtype) * c.stages;
}

namespace {

/// split_k > 1, part reduce: C = sum over s of partials[s*M:(s+1)*M, :] in
/// the order s = 0, 1, ..., then the fp8 scales and C's type, as the whole
/// kernel's epilogue.
Result<Kernel> buildGemmReduce(const GemmConfig &config) {
  using namespace dsl;
  constexpr int64_t BM = 64, BN = 64;  // a small elementwise pass over M x N
  KernelBuilder kb(gemmKernelName(config), {.numWaves = 4});
  Tensor P = kb.tensor("partials", DType::f32, 2);  // [split_k * M, N]
  Tensor C = kb.tensor("C", config.out, 2);          // [M, N]
  const bool fp8 = isFp8(config.dtype);
  std::optional<Scalar> scaleA, scaleB;
  if (fp8) {
    scaleA = kb.scalarF32("scale_a");
    scaleB = kb.scalarF32("scale_b");
  }
  kb.grid({GridExtent::ceilDiv(C, 0, BM), GridExtent::ceilDiv(C, 1, BN)});
  Index row = kb.blockId(0) * BM, col = kb.blockId(1) * BN, M = C.dim(0), N = C.dim(1);
  Tile sum = kb.regTile("sum", {BM, BN}, DType::f32);
  Tile part = kb.regTile("part", {BM, BN}, DType::f32);
  kb.fill(sum, 0.0);
  for (int64_t s = 0; s < config.splitK; ++s) {  // a fixed order: the same bits every run
    kb.load(kb.window(P, {s * M, 0}, {M, N}), {row, col}, part);
    kb.map(MapFn::add, sum, sum, part);
  }
  if (fp8) {
    kb.scale(sum, sum, *scaleA);
    kb.scale(sum, sum, *scaleB);
  }
  kb.store(sum, C, {row, col});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

} // namespace

std::string gemmBlockScalingRefusal(DType dtype, bool splitK, bool strided) {
  if (!isFp8(dtype))
    return "kernel 'gemm': scaling=block needs 8-bit operands (dtype=fp8, bf8, e4m3 or e5m2), got dtype=" +
           std::string(dtypeName(dtype));
  if (splitK || strided)
    return "kernel 'gemm': scaling=block takes contiguous operands without split-K (split_k=1; no lda, ldb, ldc or "
           "batch)";
  return "";
}

Result<Kernel> buildGemm(const GemmConfig &config) {
  using namespace dsl;
  if (config.splitK > 1 && config.part == GemmConfig::Part::Reduce)
    return buildGemmReduce(config);
  const int64_t BM = config.blockM, BN = config.blockN, BK = config.blockK;
  const bool split = config.splitK > 1;

  if (split && config.strided)
    return Error{"kernel 'gemm': split_k > 1 takes contiguous operands; strided operands and batches (lda, ldb, "
                 "ldc, batch) need split_k=1"};
  const bool blockScaled = config.scaling == GemmConfig::Scaling::Block;
  if (blockScaled) {
    const std::string given = " (block_k=" + std::to_string(BK) + ", block_n=" + std::to_string(BN) + ")";
    if (std::string why = gemmBlockScalingRefusal(config.dtype, split, config.strided); !why.empty())
      return Error{why};
    if (kGemmScaleBlock % BK != 0 || kGemmScaleBlock % BN != 0)
      return Error{"kernel 'gemm': scaling=block needs block_k and block_n dividing " +
                   std::to_string(kGemmScaleBlock) + ", the k and n extent of one scale" + given};
  }

  KernelBuilder kb(gemmKernelName(config), {.numWaves = config.waves});
  // A: [M, K] or, transposed, [K, M]; B: [K, N] or [N, K]. What their inner
  // extents are multiples of lets the tiles' loads move up to 16 bytes each
  // (the launch checks it). Strided: the buffers holding them, whose inner
  // extents are the leading dimensions (GemmConfig::strided).
  const int64_t divA = resolvedDivisibility(config.divisibilityA, config.dtype);
  const int64_t divB = resolvedDivisibility(config.divisibilityB, config.dtype);
  Tensor A = kb.tensor("A", config.dtype, 2, {.divisibility = divA});
  Tensor B = kb.tensor("B", config.dtype, 2, {.divisibility = divB});
  // C [M, N]; split-K: the f32 partial sums [split_k * M, N] instead (slice s
  // holds the sum over the s-th share of the k steps).
  Tensor C = split ? kb.tensor("partials", DType::f32, 2) : kb.tensor("C", config.out, 2);
  const bool fp8 = isFp8(config.dtype);
  std::optional<Scalar> scaleA, scaleB;        // fp8/bf8/e4m3/e5m2: per-tensor scales of A and B (split-K: the reduction's)
  std::optional<Tensor> blockScaleA, blockScaleB;  // scaling=block: [M, ceil(K/128)] and [ceil(N/128), ceil(K/128)]
  if (blockScaled) {
    blockScaleA = kb.tensor("scale_a", DType::f32, 2);
    blockScaleB = kb.tensor("scale_b", DType::f32, 2);
  } else if (fp8 && !split) {
    scaleA = kb.scalarF32("scale_a");
    scaleB = kb.scalarF32("scale_b");
  }
  const int axisM = config.transA ? 1 : 0, axisN = config.transB ? 0 : 1;
  Index M = split ? A.dim(axisM) : C.dim(0), N = split ? B.dim(axisN) : C.dim(1);
  std::optional<Index> stridedK;  // strided: K, an argument

  // One workgroup per BM x BN tile of C (split-K: split_k of them, grid axis
  // 2; strided: one per matrix of the batch, grid axis 2).
  if (config.strided) {
    // The sizes bound the operands' windows: an inner extent is a multiple
    // of its operand's divisibility, as the contiguous kernel's tensors.
    M = kb.scalarI32("M", {.divisibility = config.transA ? divA : 1});
    N = kb.scalarI32("N", {.divisibility = config.transB ? 1 : divB});
    Index K = kb.scalarI32("K", {.divisibility = std::max(config.transA ? 1 : divA, config.transB ? divB : 1)});
    stridedK = K;
    Index batch = kb.scalarI32("batch");
    Index strideA = kb.scalarI32("batch_stride_a"), strideB = kb.scalarI32("batch_stride_b"),
          strideC = kb.scalarI32("batch_stride_c");
    kb.grid({GridExtent::ceilDiv(M, BM), GridExtent::ceilDiv(N, BN), GridExtent::ceilDiv(batch, 1)});
    // This workgroup's matrices: windows of the buffers at the batch's rows,
    // as wide as the operands (the padding past them is outside).
    Index b = kb.blockId(2);
    A = config.transA ? kb.window(A, {b * strideA, 0}, {K, M}) : kb.window(A, {b * strideA, 0}, {M, K});
    B = config.transB ? kb.window(B, {b * strideB, 0}, {N, K}) : kb.window(B, {b * strideB, 0}, {K, N});
    C = kb.window(C, {b * strideC, 0}, {M, N});
  } else if (split) {
    kb.grid({GridExtent::ceilDiv(A, axisM, BM), GridExtent::ceilDiv(B, axisN, BN), GridExtent::fixed(config.splitK)});
  } else {
    kb.grid({GridExtent::ceilDiv(C, 0, BM), GridExtent::ceilDiv(C, 1, BN)});
  }
  // Which C tile this workgroup computes: grid order, or grouped / XCD-remapped.
  const bool gridOrder = config.groupM <= 1 && config.xcds <= 1;
  auto [tileM, tileN] = gridOrder ? std::pair{kb.blockId(0), kb.blockId(1)}
                                  : kb.tileOrder(cdiv(M, BM), cdiv(N, BN),
                                                 {.groupM = config.groupM, .xcds = config.xcds});
  Index row = tileM * BM;  // first row of this workgroup's C tile
  Index col = tileN * BN;  // first column
  // k steps; the last one may be partial (reads 0 past K)
  Index numK = cdiv(stridedK ? *stridedK : A.dim(config.transA ? 0 : 1), BK);
  // Split-K: slice s takes k steps [s * per, min((s + 1) * per, numK)) (none
  // for a slice past the end: it writes zeros).
  Index firstK = 0, endK = numK;
  if (split) {
    Index per = cdiv(numK, config.splitK), s = kb.blockId(2);
    firstK = min(s * per, numK);
    endK = min(firstK + per, numK);
  }

  // a[BM,BK] always; b[BN,BK] (k contiguous) or b[BK,BN] (bTile KN).
  const bool bNK = config.bTile == GemmConfig::BTile::NK;
  const std::vector<int64_t> bShape = bNK ? std::vector<int64_t>{BN, BK} : std::vector<int64_t>{BK, BN};
  const bool naive = config.ldsLayout == GemmConfig::LdsLayoutChoice::Naive;
  Tile a = naive ? kb.ldsTile("a_lds", {BM, BK}, config.dtype, LdsLayout{BK}) : kb.ldsTile("a_lds", {BM, BK}, config.dtype);
  Tile b = naive ? kb.ldsTile("b_lds", bShape, config.dtype, LdsLayout{bShape[1]}) : kb.ldsTile("b_lds", bShape, config.dtype);
  Tile acc = kb.regTile("acc", {BM, BN}, DType::f32);
  // scaling=block: one k step's product, and the scales of its rows.
  std::optional<Tile> part, rowScale;
  if (blockScaled) {
    part = kb.regTile("part", {BM, BN}, DType::f32);
    rowScale = kb.regTile("row_scale", {BM}, DType::f32);
  }

  // ---- acc[BM,BN] = 0                                   (default acc[128,128])
  kb.fill(acc, 0.0);

  // ---- for each k step: acc[BM,BN] += A[BM,BK] @ B[BK,BN]
  //                                                      (default C[128,128] += A[128,32] @ B[32,128])
  kb.forLoop(firstK, endK, 1, {.numStages = config.stages, .name = "kt", .schedule = config.schedule}, [&](Index kt) {
    Index k = kt * BK;
    // a[BM,BK] = A[row:row+BM, k:k+BK]  (global -> LDS; layout t: from A^T, transposed)
    if (config.transA)
      kb.load(A, {k, row}, a, {.transpose = true});
    else
      kb.load(A, {row, k}, a);
    // b[BN,BK] = B[k:k+BK, col:col+BN]^T  (layout n: transposed on the way in; t: as stored)
    // or, bTile KN, b[BK,BN] = B[k:k+BK, col:col+BN]
    if (config.transB)
      kb.load(B, {col, k}, b, {.transpose = !bNK});
    else
      kb.load(B, {k, col}, b, {.transpose = bNK});
    if (!blockScaled) {
      kb.gemm(a, b, acc, {.transposeB = bNK, .scope = config.instr});
      return;
    }
    // ---- scaling=block: acc += (scale_a[rows, kb] * scale_b[col / 128, kb]) * (A @ B)
    // The scales are read first, so that their latency hides behind the gemm.
    Index kBlock = kt / (kGemmScaleBlock / BK), nBlock = tileN / (kGemmScaleBlock / BN);
    kb.load(kb.window(*blockScaleA, {0, kBlock}, {blockScaleA->dim(0), 1}), {row, 0}, *rowScale);
    Scalar scaleOfB = kb.loadScalar(*blockScaleB, {nBlock, kBlock});
    kb.fill(*part, 0.0);  // absorbed by the gemm where its instruction can overwrite
    kb.gemm(a, b, *part, {.transposeB = bNK, .scope = config.instr});
    kb.scale(*rowScale, *rowScale, scaleOfB);
    kb.mulAdd(acc, *part, *rowScale);
  });

  if (split) {
    // ---- partials[s*M + row : ..., col : ...] = acc   (f32, inside slice s)
    kb.store(acc, kb.window(C, {kb.blockId(2) * M, 0}, {M, N}), {row, col});
  } else {
    // ---- fp8/bf8, scaling=tensor: acc[BM,BN] = scale_b * (scale_a * acc)   (one f32 multiply each)
    if (scaleA) {
      kb.scale(acc, acc, *scaleA);
      kb.scale(acc, acc, *scaleB);
    }
    // ---- C[row:row+BM, col:col+BN] = acc                  (f32 -> C's element type)
    kb.store(acc, C, {row, col});
  }

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

} // namespace tilec::kernels
