// GEMM: C[M,N] = A[M,K] @ B[K,N], written in the tilec DSL.
//
// Tile configuration (the defaults; every entry is a `-p` parameter):
//   workgroup tile  BM x BN x BK = 128 x 128 x 32, 4 waves, k loop pipelined 2 stages deep
//   grid            ceil(M / BM) x ceil(N / BN) workgroups, one tile of C each
//   LDS budget      A tile 128x32 bf16 + B tile 32x128 bf16, rows padded by 16 bytes by
//                   tilec-allocate-lds: 18.5 KiB of the 64 KiB a workgroup has on gfx942 /
//                   gfx90a (`stages` is recorded on the k loop; the software-pipelining
//                   pass that multi-buffers it is not written yet)
//   registers       accumulator 128x128 f32 = 64 KiB over 4 waves
//                   (64 VGPRs per lane on wave64, 128 on wave32)
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
// it, and cp.async moves it without registers), and on gfx1151 too (WMMA
// operands are read element by element whatever the tile).
//
// fp8 (dtype=fp8: e4m3fnuz A and B; dtype=bf8: e5m2fnuz A and B; gfx942 only.
// dtype=e4m3 / e5m2: the OCP formats, sm_90a only, through mma.sync m16n8k32):
// C = scale_a * scale_b * (A @ B) with per-tensor f32 scales passed as kernel
// arguments after C; the A/B tiles take half the LDS of bf16 (9.25 KiB with
// the default tile). Mixed e4m3 x e5m2 operands are not offered.
#include "Gemm.h"

#include "Params.h"

#include <cmath>
#include <cstdlib>
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
         (c.strided                ? std::string("_strided")
          : dk < full || dn < full ? "_div" + std::to_string(dk) + "x" + std::to_string(dn)
                                   : std::string()) +
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

Result<Kernel> buildGemm(const GemmConfig &config) {
  using namespace dsl;
  if (config.splitK > 1 && config.part == GemmConfig::Part::Reduce)
    return buildGemmReduce(config);
  const int64_t BM = config.blockM, BN = config.blockN, BK = config.blockK;
  const bool split = config.splitK > 1;

  if (split && config.strided)
    return Error{"kernel 'gemm': split_k > 1 takes contiguous operands; strided operands and batches (lda, ldb, "
                 "ldc, batch) need split_k=1"};

  KernelBuilder kb(gemmKernelName(config), {.numWaves = config.waves});
  // A: [M, K] or, transposed, [K, M]; B: [K, N] or [N, K]. What their inner
  // extents are multiples of lets the tiles' loads move up to 16 bytes each
  // (the launch checks it). Strided: the buffers holding them (GemmConfig::strided).
  const int64_t divA = config.strided ? 1 : resolvedDivisibility(config.divisibilityA, config.dtype);
  const int64_t divB = config.strided ? 1 : resolvedDivisibility(config.divisibilityB, config.dtype);
  Tensor A = kb.tensor("A", config.dtype, 2, {.divisibility = divA});
  Tensor B = kb.tensor("B", config.dtype, 2, {.divisibility = divB});
  // C [M, N]; split-K: the f32 partial sums [split_k * M, N] instead (slice s
  // holds the sum over the s-th share of the k steps).
  Tensor C = split ? kb.tensor("partials", DType::f32, 2) : kb.tensor("C", config.out, 2);
  const bool fp8 = isFp8(config.dtype);
  std::optional<Scalar> scaleA, scaleB;        // fp8/bf8/e4m3/e5m2: per-tensor scales of A and B (split-K: the reduction's)
  if (fp8 && !split) {
    scaleA = kb.scalarF32("scale_a");
    scaleB = kb.scalarF32("scale_b");
  }
  const int axisM = config.transA ? 1 : 0, axisN = config.transB ? 0 : 1;
  Index M = split ? A.dim(axisM) : C.dim(0), N = split ? B.dim(axisN) : C.dim(1);
  std::optional<Index> stridedK;  // strided: K, an argument

  // One workgroup per BM x BN tile of C (split-K: split_k of them, grid axis
  // 2; strided: one per matrix of the batch, grid axis 2).
  if (config.strided) {
    M = kb.scalarI32("M");
    N = kb.scalarI32("N");
    Index K = kb.scalarI32("K");
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
    kb.gemm(a, b, acc, {.transposeB = bNK, .scope = config.instr});
  });

  if (split) {
    // ---- partials[s*M + row : ..., col : ...] = acc   (f32, inside slice s)
    kb.store(acc, kb.window(C, {kb.blockId(2) * M, 0}, {M, N}), {row, col});
  } else {
    // ---- fp8/bf8: acc[BM,BN] = scale_b * (scale_a * acc)       (one f32 multiply each)
    if (fp8) {
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

namespace {
/// Sizes, leading dimensions and batch strides are i32 kernel arguments.
constexpr int64_t kGemmMaxSize = (int64_t(1) << 31) - 1;

/// The strides of `-p lda ... batch_stride_c` and whether they select the
/// strided kernel (`-p strided`): any of them not tight, or strided=1. The
/// schema checked each value alone; a leading dimension below its operand's
/// inner extent and strided=0 with strides that are not tight are the errors
/// returned here.
Result<std::pair<GemmStrides, bool>> readGemmStrides(ParamReader &p, int64_t M, int64_t N, int64_t K,
                                                     bool transA, bool transB) {
  if (!p.ok())
    return p.error();
  GemmStrides s;
  bool any = false;
  std::string error;
  auto optional = [&](const char *name, int64_t tight) {
    if (p.raw(name) == "tight")
      return tight;
    any = true;
    return p.integer(name);
  };
  // A leading dimension is at least the inner extent it pitches.
  auto leading = [&](const char *name, int64_t inner) {
    const int64_t ld = optional(name, 0);
    if (ld != 0 && ld < inner && error.empty())
      error = "kernel 'gemm': parameter '" + std::string(name) + "' " +
              ParamSpec::integer(inner, kGemmMaxSize).check(p.raw(name));
    return ld;
  };
  s.lda = leading("lda", transA ? M : K);
  s.ldb = leading("ldb", transB ? K : N);
  s.ldc = leading("ldc", N);
  s.batch = p.integer("batch");
  any = any || s.batch > 1;
  s.batchStrideA = optional("batch_stride_a", GemmStrides::tight);
  s.batchStrideB = optional("batch_stride_b", GemmStrides::tight);
  s.batchStrideC = optional("batch_stride_c", GemmStrides::tight);
  if (!error.empty())
    return Error{error};
  const int64_t mode = p.raw("strided") == "auto" ? -1 : p.integer("strided");
  if (mode == 0 && any)
    return Error{"kernel 'gemm': strided=0, but lda, ldb, ldc, batch or a batch stride is not tight"};
  return std::pair{s, mode == 1 || any};
}
} // namespace

KernelInfo gemmKernelInfo() {
  constexpr int64_t kMaxSize = kGemmMaxSize, kMaxBlock = 512;
  KernelInfo info;
  info.name = "gemm";
  info.summary = "C[M,N] = A[M,K] @ B[K,N]; A, B bf16/f16/fp8/bf8/e4m3/e5m2, each row-major or transposed, f32 accumulation, "
                 "C f32/bf16";
  info.params = {
      {"M", "4096", "rows of A and C (run-time size; used by --run)", ParamSpec::integer(1, kMaxSize)},
      {"N", "4096", "columns of B and C (run-time size)", ParamSpec::integer(1, kMaxSize)},
      {"K", "4096", "columns of A, rows of B (run-time size)", ParamSpec::integer(1, kMaxSize)},
      {"dtype", "bf16",
       "element type of A and B: bf16 | f16 | fp8 (e4m3fnuz) | bf8 (e5m2fnuz) | e4m3 | e5m2 (OCP) (fp8/bf8: "
       "gfx942; e4m3/e5m2: sm_90a; C = scale_a*scale_b*(A@B))",
       ParamSpec::dtype({DType::bf16, DType::f16, DType::fp8e4m3fnuz, DType::fp8e5m2fnuz, DType::e4m3, DType::e5m2})},
      {"out", "f32", "element type of C: f32 | bf16", ParamSpec::dtype({DType::f32, DType::bf16})},
      {"layout", "nn",
       "storage of A and B (A's letter first): n row-major as written (A [M,K], B [K,N]), t transposed (A stored "
       "[K,M], B stored [N,K]: nn.Linear's weight, x @ W^T is nt). The kernel assumes the powers of two dividing "
       "each operand's inner extent, up to 16 bytes", ParamSpec::oneOf({"nn", "nt", "tn", "tt"})},
      {"lda", "tight",
       "leading dimension of A in elements (>= its inner extent: the row pitch of a padded or sliced operand; "
       "tight: the inner extent). Not tight selects the strided kernel (run-time value; used by --run)",
       ParamSpec::integer(1, kMaxSize, {"tight"})},
      {"ldb", "tight", "leading dimension of B in elements (as lda)", ParamSpec::integer(1, kMaxSize, {"tight"})},
      {"ldc", "tight", "leading dimension of C in elements (as lda; C's padding is not written)",
       ParamSpec::integer(1, kMaxSize, {"tight"})},
      {"batch", "1", "matrices in the batch, C[b] = A[b] @ B[b] (> 1 selects the strided kernel; used by --run)",
       ParamSpec::integer(1, kMaxSize)},
      {"batch_stride_a", "tight",
       "rows of A's buffer from one matrix of the batch to the next (0: one A for the whole batch; tight: one "
       "matrix's rows). Not tight selects the strided kernel",
       ParamSpec::integer(0, kMaxSize, {"tight"})},
      {"batch_stride_b", "tight", "as batch_stride_a, for B (0: one weight for the whole batch)",
       ParamSpec::integer(0, kMaxSize, {"tight"})},
      {"batch_stride_c", "tight", "as batch_stride_a, for C (at least M: the batch's outputs must not overlap)",
       ParamSpec::integer(0, kMaxSize, {"tight"})},
      {"strided", "auto",
       "auto (strided where lda, ldb, ldc, batch or a batch stride is not tight) | 1: the kernel that takes the "
       "buffers [rows, ld] and the i32 arguments M, N, K, batch, batch_stride_a/b/c after C (and the scales) | 0",
       ParamSpec::integer(0, 1, {"auto"})},
      {"scale_a", "1", "dtype=fp8|bf8|e4m3|e5m2: per-tensor scale of A (a kernel argument; used by --run)",
       ParamSpec::real()},
      {"scale_b", "1", "dtype=fp8|bf8|e4m3|e5m2: per-tensor scale of B (a kernel argument; used by --run)",
       ParamSpec::real()},
      {"block_m", "128", "rows of C per workgroup", ParamSpec::integer(1, kMaxBlock)},
      {"block_n", "128", "columns of C per workgroup", ParamSpec::integer(1, kMaxBlock)},
      {"block_k", "32", "depth of one k step", ParamSpec::integer(1, kMaxBlock)},
      {"waves", "4",
       "wavefronts per workgroup (1..16; NVIDIA targets: 8, with block_k=64 stages=3 group_m=8; stages=1 where rows "
       "are not 4-byte aligned)",
       ParamSpec::integer(1, 16)},
      {"stages", "2", "software-pipelining depth of the k loop (1..8)", ParamSpec::integer(1, 8)},
      {"group_m", "1", "tile order: groups of this many tile rows share L2 (1: grid order)", ParamSpec::integer(1, 64)},
      {"xcds", "1", "tile order: chiplets workgroups are dispatched over round-robin (gfx942: 8; 1: off)",
       ParamSpec::integer(1, 64)},
      {"lds_layout", "auto", "LDS layout of the A/B tiles: auto (the compiler's) | naive (row-major)",
       ParamSpec::oneOf({"auto", "naive"})},
      {"instr", "auto",
       "matrix instructions: auto (the compiler's: sm_90a wgmma where the tile allows) | mma (wave-level: "
       "mma.sync, MFMA, WMMA) | wgmma (sm_90a warpgroup wgmma, an error where the tile does not allow it)",
       ParamSpec::oneOf({"auto", "mma", "wgmma"})},
      {"split_k", "1",
       "split-K for skinny problems (M <= 64): split_k workgroups per C tile each sum a share of the k steps into "
       "f32 partials [split_k*M, N], which a second kernel (part=reduce) sums in a fixed order (deterministic); "
       "--run launches both", ParamSpec::integer(1, 64)},
      {"part", "partial", "split_k > 1: the kernel to compile: partial (A, B -> partials) | reduce (partials -> C)",
       ParamSpec::oneOf({"partial", "reduce"})},
      {"b_lds", "nk",
       "B's LDS tile: nk (k contiguous; B of layout n is transposed on the way in) | kn (n contiguous; B of layout t "
       "is transposed on the way in). NVIDIA and WMMA (gfx1151) targets: as B is stored",
       ParamSpec::oneOf({"nk", "kn"})},
      {"schedule", "none",
       "wavefront schedule of the k loop: none | interleave | setprio | interleave+setprio | pingpong | "
       "pingpong+interleave+setprio (pingpong: even waves, stages >= 3)",
       ParamSpec::oneOf({"none", "interleave", "setprio", "interleave+setprio", "pingpong",
                         "pingpong+interleave+setprio"})},
  };
  info.build = [name = info.name, params = info.params](const KernelParams &given) -> Result<Kernel> {
    ParamReader p(name, params, given);
    const int64_t M = p.integer("M");
    const int64_t N = p.integer("N"), K = p.integer("K");
    GemmConfig c;
    const std::string layout = p.choice("layout");
    c.transA = layout[0] == 't';
    c.transB = layout[1] == 't';
    c.bTile = p.choice("b_lds") == "kn" ? GemmConfig::BTile::KN : GemmConfig::BTile::NK;
    c.dtype = p.dtype("dtype");
    // The kernel is specialised on what the operands' inner extents are
    // multiples of (not on their values): 4096 and 2048 share one kernel,
    // 4095 gets another.
    c.divisibilityA = gemmDivisibility(c.transA ? M : K, c.dtype);
    c.divisibilityB = gemmDivisibility(c.transB ? K : N, c.dtype);
    c.out = p.dtype("out");
    const Result<std::pair<GemmStrides, bool>> strides = readGemmStrides(p, M, N, K, c.transA, c.transB);
    if (!strides)
      return Error{strides.error()};
    c.strided = strides->second;
    c.blockM = p.integer("block_m");
    c.blockN = p.integer("block_n");
    c.blockK = p.integer("block_k");
    c.waves = static_cast<int>(p.integer("waves"));
    c.stages = static_cast<int>(p.integer("stages"));
    c.groupM = p.integer("group_m");
    c.xcds = p.integer("xcds");
    c.splitK = p.integer("split_k");
    c.part = p.choice("part") == "reduce" ? GemmConfig::Part::Reduce : GemmConfig::Part::Partial;
    c.ldsLayout = p.choice("lds_layout") == "naive" ? GemmConfig::LdsLayoutChoice::Naive
                                                                       : GemmConfig::LdsLayoutChoice::Auto;
    const std::string instr = p.choice("instr");
    c.instr = instr == "mma" ? dsl::MatrixScope::Warp : instr == "wgmma" ? dsl::MatrixScope::Warpgroup : dsl::MatrixScope::Auto;
    const std::string sched = p.choice("schedule");
    c.schedule.interleave = sched.find("interleave") != std::string::npos;
    c.schedule.setprio = sched.find("setprio") != std::string::npos;
    c.schedule.pingPong = sched.find("pingpong") != std::string::npos;
    if (!p.ok())
      return p.error();
    return buildGemm(c);
  };
  // NVIDIA (measured on the H200, docs/perf/h200): 8 warps; B's LDS tile as
  // B is stored (ldmatrix.trans reads a K x N tile), so that with cp.async
  // (rows of whole 4-byte words, A not transposed on the way in) nothing is
  // staged in registers: a 128 x 128 x 64 tile over 3 stages in grouped order
  // (128 x 256 measured 5-15% faster but spills with bf16 output). Rows of
  // an odd number of 16-bit elements (K = 4097) are read as realigned 16-byte
  // runs through registers: 128 x 128 x 64 in one stage measured fastest
  // (1.64 ms at 4097^3 against 1.78 ms for 128 x 128 x 32 over 3 stages,
  // whose register prefetch costs occupancy; docs/perf/notes.md). A of
  // layout t (transposed through registers) keeps 128 x 128 x 32.
  //
  // B's LDS tile follows B's storage (nothing transposed on the way in) where
  // the k-contiguous tile buys no wider reads: NVIDIA (ldmatrix.trans) and
  // WMMA targets (gfx1151, whose 32-byte operands are read element by
  // element whatever the tile; transposing there only adds registers: the
  // default GEMM spilled 80 bytes).
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    auto get = [&](const char *k, const char *d) { auto it = p.find(k); return it == p.end() ? std::string(d) : it->second; };
    const std::string layout = get("layout", "nn"), dt = get("dtype", "bf16");
    const bool transA = layout.size() == 2 && layout[0] == 't', transB = layout.size() == 2 && layout[1] == 't';
    const std::vector<const MatrixInstr *> instrs = t.instrsFor(ElemType::BF16);
    const bool wmma = !instrs.empty() && instrs.front()->family == MatrixFamily::WMMA;
    // 8-bit operands on NVIDIA: B's tile N x K whatever its storage, since
    // ldmatrix has no transposing form for 8-bit elements (a K x N tile's
    // operands would be gathered byte by byte).
    const bool eightBitOnNvidia = t.vendor == Vendor::NVIDIA &&
                                  (dt == "fp8" || dt == "bf8" || dt == "e4m3" || dt == "e5m2");
    if (eightBitOnNvidia)
      p.try_emplace("b_lds", "nk");
    else if (t.vendor == Vendor::NVIDIA || wmma)
      p.try_emplace("b_lds", transB ? "nk" : "kn");
    if (t.vendor != Vendor::NVIDIA)
      return;
    p.try_emplace("waves", "8");
    p.try_emplace("group_m", "8");
    auto size = [&](const char *k) { return std::atoll(get(k, "4096").c_str()); };
    const bool eightBit = dt == "fp8" || dt == "bf8" || dt == "e4m3" || dt == "e5m2";
    const int64_t eb = eightBit ? 1 : 2, words = 4 / eb;  // elements per 4-byte word
    // The strided kernel's element-wise loads prefetch through registers too.
    bool strides = get("batch", "1") != "1";
    for (const char *k : {"lda", "ldb", "ldc", "batch_stride_a", "batch_stride_b", "batch_stride_c"})
      strides = strides || get(k, "tight") != "tight";
    const std::string mode = get("strided", "auto");
    const bool strided = mode == "1" || (mode == "auto" && strides);
    const bool wordRows = size("K") % words == 0 && size(transB ? "K" : "N") % words == 0;
    // 8-bit B of layout n, transposed into its N x K tile through registers:
    // two stages (three spilled 80 bytes at 128 x 128 x 64).
    if (eightBitOnNvidia && !transB && !strided)
      p.try_emplace("stages", "2");
    p.try_emplace("stages", transA || strided || wordRows ? "3" : "1");
    if (!transA && !strided)
      p.try_emplace("block_k", "64");
  };
  info.problem = [name = info.name, params = info.params](const KernelParams &given) -> Result<Problem> {
    ParamReader p(name, params, given);
    int64_t M = p.integer("M"), N = p.integer("N"), K = p.integer("K");
    DType in = p.dtype("dtype");
    DType out = p.dtype("out");
    double scaleA = p.real("scale_a"), scaleB = p.real("scale_b");
    const std::string layout = p.choice("layout");
    const int64_t splitK = p.integer("split_k");
    const GemmLayout l{layout[0] == 't', layout[1] == 't'};
    Result<std::pair<GemmStrides, bool>> readStrides = readGemmStrides(p, M, N, K, l.transA, l.transB);
    if (!readStrides)
      return Error{readStrides.error()};
    if (!p.ok())
      return p.error();
    const GemmStrides strides = readStrides->first;
    const bool strided = readStrides->second;
    const bool eightBit = isFp8(in);
    if (!eightBit && (scaleA != 1.0 || scaleB != 1.0))
      return Error{"kernel 'gemm': parameters 'scale_a' and 'scale_b' apply to dtype=fp8, bf8, e4m3 or e5m2 only"};
    if (strided) {
      if (splitK > 1)
        return Error{"kernel 'gemm': split_k > 1 takes contiguous operands; strided operands and batches (lda, "
                     "ldb, ldc, batch) need split_k=1"};
      return gemmStridedProblem(M, N, K, in, out, l, strides,
                                eightBit ? std::optional{std::pair{float(scaleA), float(scaleB)}} : std::nullopt);
    }
    Problem prob = eightBit ? gemmFp8Problem(M, N, K, out, static_cast<float>(scaleA), static_cast<float>(scaleB), in, l)
                            : gemmProblem(M, N, K, in, out, l);
    if (splitK > 1) {
      // Split-K adds nothing to the error bound: the partial sums and their
      // sum are one f32 summation of the K products in another order, which
      // the bound K*2^-24*sum|a||b| covers in any order; the scales and C's
      // rounding are the reduction's, as the whole kernel's.
      TensorSpec partials{"partials", DType::f32, {splitK * M, N}};
      partials.scratch = true;
      prob.tensors.push_back(partials);
      std::vector<ScalarSpec> reduceScalars = prob.scalars;  // after partials and C
      for (size_t i = 0; i < reduceScalars.size(); ++i)
        reduceScalars[i].position = 2 + i;
      prob.launches = {{{{"part", "partial"}}, {0, 1, 3}, {}}, {{{"part", "reduce"}}, {3, 2}, reduceScalars}};
    }
    return prob;
  };
  return info;
}

namespace {
/// Element (i, k) of A and (k, j) of B as `layout` stores them.
struct OperandIndex {
  int64_t M, N, K;
  GemmLayout layout;
  int64_t a(int64_t i, int64_t k) const { return layout.transA ? k * M + i : i * K + k; }
  int64_t b(int64_t k, int64_t j) const { return layout.transB ? j * K + k : k * N + j; }
};
} // namespace

Problem gemmProblem(int64_t M, int64_t N, int64_t K, DType in, DType out, GemmLayout layout) {
  Problem prob;
  prob.tensors = {{"A", in, layout.transA ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}},
                  {"B", in, layout.transB ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}},
                  {"C", out, {M, N}, /*output=*/true}};
  const OperandIndex at{M, N, K, layout};
  // Inputs are exact in their type and their products are exact in f32
  // (8- or 11-bit significands), so the only error is f32 accumulation over K
  // terms, at most K * 2^-24 * sum|a||b| in any summation order, then the
  // rounding of the result to C's type: unit roundoff u = 2^-24 (f32),
  // 2^-8 (bf16).
  // gfx90a's f16/bf16 MFMAs flush subnormal inputs to zero (lib/Target:
  // TargetInfo::matrixFlushes16BitSubnormals), which drops each product with a
  // subnormal factor whole (sum'|a||b| over those), and flush subnormal f32
  // partial sums and results, which moves each of the at most K accumulations
  // by less than 2^-126. On other targets both terms are slack. So
  //   |C - ref| <= (1+u) * (K*2^-24*sum|a||b| + sum'|a||b| + K*2^-126) + u*|ref|.
  const double uOut = out == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
  const double gamma = double(K) * std::ldexp(1.0, -24);
  const double subnormalBelow = in == DType::f16 ? std::ldexp(1.0, -14) : std::ldexp(1.0, -126);
  const double flushedSums = double(K) * std::ldexp(1.0, -126);
  prob.toleranceRule = "|C - ref| <= (1+u)*(K*2^-24*sum|a||b| + sum'|a||b| + K*2^-126) + u*|ref|, sum' over "
                       "products with a subnormal factor (gfx90a flushes them), u = " +
                       std::string(out == DType::bf16 ? "2^-8 (bf16 out)" : "2^-24 (f32 out)");
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &a = v[0], &b = v[1];
    std::vector<double> c(M * N, 0.0), tol(M * N, 0.0), mag(N), flushable(N);
    for (int64_t i = 0; i < M; ++i) {
      double *row = &c[i * N];
      std::fill(mag.begin(), mag.end(), 0.0);
      std::fill(flushable.begin(), flushable.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double aik = a[at.a(i, k)];
        const bool aSubnormal = std::fabs(aik) < subnormalBelow;
        for (int64_t j = 0; j < N; ++j) {
          const double bkj = b[at.b(k, j)], p = aik * bkj;
          row[j] += p;
          mag[j] += std::fabs(p);
          if (aSubnormal || std::fabs(bkj) < subnormalBelow)
            flushable[j] += std::fabs(p);
        }
      }
      for (int64_t j = 0; j < N; ++j)
        tol[i * N + j] = (1 + uOut) * (gamma * mag[j] + flushable[j] + flushedSums) + uOut * std::fabs(row[j]);
    }
    expected = {std::move(c)};
    tolerance = {std::move(tol)};
  };
  return prob;
}

Problem gemmFp8Problem(int64_t M, int64_t N, int64_t K, DType out, float scaleA, float scaleB, DType in,
                       GemmLayout layout) {
  Problem prob = gemmProblem(M, N, K, in, out, layout);
  const OperandIndex at{M, N, K, layout};
  // Kernel arguments: A, B, C, then scale_a, scale_b (buildGemm's order).
  prob.scalars = {{"scale_a", scaleA, 3}, {"scale_b", scaleB, 4}};
  // Inputs are exact in their type and their products are exact in f32:
  // e4m3 formats have 4-bit significands (8-bit products), e5m2 ones 3-bit
  // ones (6-bit products), and every nonzero product lies far inside f32's
  // normal range (e5m2fnuz: 2^-34 <= |a*b| <= 57344^2 < 2^32; OCP e5m2:
  // 2^-32..57344^2; e4m3fnuz: 2^-20..240^2; OCP e4m3: 2^-18..448^2), so
  // accumulation over K terms errs by at most K * 2^-24 * sum|a||b| as for
  // bf16, whichever of the two formats. The kernel then multiplies by scale_a
  // and by scale_b (one f32 rounding each, u = 2^-24) and rounds to C's type
  // (uOut); the three roundings scale everything by at most
  // 1 + eta, eta = (1+u)^2 (1+uOut) - 1, so with S = |scale_a * scale_b|:
  //   |C - S*ref| <= (1+eta) * S * K*2^-24*sum|a||b| + eta * |scale_a*scale_b*ref|.
  const double u = std::ldexp(1.0, -24);
  const double uOut = out == DType::bf16 ? std::ldexp(1.0, -8) : u;
  const double eta = (1 + u) * (1 + u) * (1 + uOut) - 1;
  const double gamma = double(K) * u;
  const double s = double(scaleA) * double(scaleB);
  prob.toleranceRule = "|C - s*ref| <= (1+e)*|s|*K*2^-24*sum|a||b| + e*|s*ref|, s = scale_a*scale_b, "
                       "e = (1+2^-24)^2*(1+u)-1, u = " +
                       std::string(out == DType::bf16 ? "2^-8 (bf16 out)" : "2^-24 (f32 out)");
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &a = v[0], &b = v[1];
    std::vector<double> c(M * N, 0.0), tol(M * N, 0.0), mag(N);
    for (int64_t i = 0; i < M; ++i) {
      double *row = &c[i * N];
      std::fill(mag.begin(), mag.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double aik = a[at.a(i, k)];
        for (int64_t j = 0; j < N; ++j) {
          const double p = aik * b[at.b(k, j)];
          row[j] += p;
          mag[j] += std::fabs(p);
        }
      }
      for (int64_t j = 0; j < N; ++j) {
        row[j] *= s;
        tol[i * N + j] = (1 + eta) * std::fabs(s) * gamma * mag[j] + eta * std::fabs(row[j]);
      }
    }
    expected = {std::move(c)};
    tolerance = {std::move(tol)};
  };
  return prob;
}

} // namespace tilec::kernels
