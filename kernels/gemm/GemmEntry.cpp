// The registry entry of the GEMM (`tilec --kernel=gemm -p ...`): the `-p`
// parameters with their schema, the targets' defaults, and how parameters
// become a GemmConfig (Gemm.cpp) and a problem (GemmReference.cpp).
#include "gemm/GemmEntry.h"

#include "gemm/Gemm.h"
#include "gemm/GemmReference.h"

#include "Params.h"

#include <cstdlib>
#include <optional>

namespace tilec::kernels {

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
      {"M", "4096", "rows of A and C (run-time size; used by --run)", ParamSpec::integer(1, kMaxSize),
       ParamRole::Problem},
      {"N", "4096", "columns of B and C (run-time size)", ParamSpec::integer(1, kMaxSize), ParamRole::Problem},
      {"K", "4096", "columns of A, rows of B (run-time size)", ParamSpec::integer(1, kMaxSize),
       ParamRole::Problem},
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
      {"divisibility", "auto",
       "the most the kernel assumes A's and B's inner extents, leading dimensions and data alignment are multiples "
       "of, in elements: auto (the largest powers of two dividing the sizes and strides given, up to 16 bytes) | 1 | "
       "2 | 4 | 8 | 16. Launches refuse operands that break it; 1 takes any",
       ParamSpec::oneOf({"auto", "1", "2", "4", "8", "16"})},
      {"scaling", "tensor",
       "dtype=fp8|bf8|e4m3|e5m2: tensor (scale_a, scale_b: f32 arguments) | block (DeepSeek-V3: f32 tensors "
       "scale_a [M, ceil(K/128)] per 1x128 group of A's rows and scale_b [ceil(N/128), ceil(K/128)] per 128x128 "
       "block of B [N, K], after C; block_k and block_n divide 128)",
       ParamSpec::oneOf({"tensor", "block"})},
      {"scale_a", "1", "dtype=fp8|bf8|e4m3|e5m2: per-tensor scale of A (a kernel argument; used by --run)",
       ParamSpec::real(), ParamRole::Problem},
      {"scale_b", "1", "dtype=fp8|bf8|e4m3|e5m2: per-tensor scale of B (a kernel argument; used by --run)",
       ParamSpec::real(), ParamRole::Problem},
      {"block_m", "128", "rows of C per workgroup", ParamSpec::integer(1, kMaxBlock), ParamRole::Tuning},
      {"block_n", "128", "columns of C per workgroup", ParamSpec::integer(1, kMaxBlock), ParamRole::Tuning},
      {"block_k", "32", "depth of one k step", ParamSpec::integer(1, kMaxBlock), ParamRole::Tuning},
      {"waves", "4",
       "wavefronts per workgroup (1..16; NVIDIA targets: 8, with block_k=64 stages=3 group_m=8; stages=1 where rows "
       "are not 4-byte aligned)",
       ParamSpec::integer(1, 16), ParamRole::Tuning},
      {"stages", "2", "software-pipelining depth of the k loop (1..8)", ParamSpec::integer(1, 8),
       ParamRole::Tuning},
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
       "--run launches both", ParamSpec::integer(1, 64), ParamRole::Tuning},
      {"part", "partial", "split_k > 1: the kernel to compile: partial (A, B -> partials) | reduce (partials -> C)",
       ParamSpec::oneOf({"partial", "reduce"})},
      {"b_lds", "nk",
       "B's LDS tile: nk (k contiguous; B of layout n is transposed on the way in) | kn (n contiguous; B of layout t "
       "is transposed on the way in). NVIDIA targets: as B is stored",
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
    c.out = p.dtype("out");
    const Result<std::pair<GemmStrides, bool>> strides = readGemmStrides(p, M, N, K, c.transA, c.transB);
    if (!strides)
      return Error{strides.error()};
    c.strided = strides->second;
    // The kernel is specialised on what the operands' inner extents (and,
    // strided, their leading dimensions) are multiples of, not on their
    // values: 4096 and 2048 share one kernel, 4095 gets another.
    const std::string cap = p.choice("divisibility");
    const int64_t most = cap == "auto" ? 0 : std::atoll(cap.c_str());
    c.divisibilityA = gemmDivisibility(gemmRowMultiple(c.transA ? M : K, c.strided ? strides->first.lda : 0, most), c.dtype);
    c.divisibilityB = gemmDivisibility(gemmRowMultiple(c.transB ? K : N, c.strided ? strides->first.ldb : 0, most), c.dtype);
    c.blockM = p.integer("block_m");
    c.blockN = p.integer("block_n");
    c.blockK = p.integer("block_k");
    c.waves = static_cast<int>(p.integer("waves"));
    c.stages = static_cast<int>(p.integer("stages"));
    c.groupM = p.integer("group_m");
    c.xcds = p.integer("xcds");
    c.splitK = p.integer("split_k");
    c.part = p.choice("part") == "reduce" ? GemmConfig::Part::Reduce : GemmConfig::Part::Partial;
    c.scaling = p.choice("scaling") == "block" ? GemmConfig::Scaling::Block : GemmConfig::Scaling::Tensor;
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
  // staged in registers: a 128 x 128 x 64 tile over 3 stages in grouped
  // order; 128 x 256 over 4 stages, one wgmma group in flight, where C has
  // at least 2048 rows and columns (0.263 ms against 0.290 ms for 128 x 128
  // at 4096^3, 1.79 against 2.23 ms at 8192^3; 3 stages 0.268 and 1.99; at
  // 1000 x 1000 too few tiles fill the SMs). Rows of an odd number of 16-bit
  // elements (K = 4097) are read as realigned 16-byte runs through
  // registers: 128 x 128 x 64 over 2 stages measured fastest (1.29 ms at
  // 4097^3; 1 stage 1.62, 3 stages 1.37, whose register prefetch costs
  // occupancy; docs/perf/notes.md). A of layout t (transposed through
  // registers) keeps 128 x 128 x 32.
  //
  // B's LDS tile follows B's storage (nothing transposed on the way in) where
  // the k-contiguous tile buys no wider reads: NVIDIA (ldmatrix.trans). AMD
  // targets keep B k-contiguous (b_lds=nk) whatever its storage: gfx1151's
  // WMMA operands of a K x N tile are read element by element (ds_load_u16),
  // of an N x K tile 8 bytes at a time (the 128 x 128 x 32 default: 215
  // VGPRs against 222, no spills either way).
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    auto get = [&](const char *k, const char *d) { return givenOr(p, k, d); };
    const std::string layout = get("layout", "nn"), dt = get("dtype", "bf16");
    const bool transA = layout.size() == 2 && layout[0] == 't', transB = layout.size() == 2 && layout[1] == 't';
    const bool eightBit = dt == "fp8" || dt == "bf8" || dt == "e4m3" || dt == "e5m2";
    const bool eightBitOnNvidia = t.vendor == Vendor::NVIDIA && eightBit;
    auto size = [&](const char *k) { return std::atoll(get(k, "4096").c_str()); };
    const int64_t eb = eightBit ? 1 : 2, words = 4 / eb;  // elements per 4-byte word
    bool strides = get("batch", "1") != "1";
    for (const char *k : {"lda", "ldb", "ldc", "batch_stride_a", "batch_stride_b", "batch_stride_c"})
      strides = strides || get(k, "tight") != "tight";
    const std::string mode = get("strided", "auto");
    const bool strided = mode == "1" || (mode == "auto" && strides);
    // What A's and B's rows are multiples of, as the build derives the
    // kernel's divisibility (gemmRowMultiple).
    auto rowMultiple = [&](const char *inner, const char *ld) {
      const std::string l = get(ld, "tight"), cap = get("divisibility", "auto");
      return gemmRowMultiple(size(inner), strided && l != "tight" ? std::atoll(l.c_str()) : 0,
                             cap == "auto" ? 0 : std::atoll(cap.c_str()));
    };
    // Rows of whole 4-byte words are copied with cp.async, strided or not;
    // others (element-wise, or realigned) prefetch through registers.
    const bool wordRows = rowMultiple("K", "lda") % words == 0 && rowMultiple(transB ? "K" : "N", "ldb") % words == 0;
    // Block scales cover 128 of k: one k step per scale where the registers
    // allow (a shorter step scales and adds its product once per step). The
    // product and the accumulator take twice the tensor-scaled registers, so
    // AMD spreads the 128 x 128 tile over 8 waves (4 spill, 432 bytes on
    // gfx942); NVIDIA keeps 128-deep steps for A and B both K-major (layout
    // nt, DeepSeek's weight [N, K]: 226 registers, no spills) and takes
    // 32-deep ones where a transposed operand passes through registers
    // (128 deep spills 48-96 bytes).
    const bool blockScaled = eightBit && get("scaling", "tensor") == "block";
    if (blockScaled && t.vendor != Vendor::NVIDIA) {
      p.try_emplace("block_k", "128");
      p.try_emplace("waves", "8");
      // Rows not of whole 4-byte words are read realigned, through more
      // registers: one stage (two spill 12 bytes on gfx942 at K = 1).
      if (rowMultiple(transA ? "M" : "K", "lda") % words != 0 || rowMultiple(transB ? "K" : "N", "ldb") % words != 0)
        p.try_emplace("stages", "1");
    }
    if (blockScaled && t.vendor == Vendor::NVIDIA)
      p.try_emplace("block_k", transB && !transA ? "128" : "32");
    // 8-bit operands on NVIDIA: B's tile N x K whatever its storage, since
    // ldmatrix has no transposing form for 8-bit elements (a K x N tile's
    // operands would be gathered byte by byte).
    if (eightBitOnNvidia)
      p.try_emplace("b_lds", "nk");
    else if (t.vendor == Vendor::NVIDIA)
      p.try_emplace("b_lds", transB ? "nk" : "kn");
    if (t.vendor != Vendor::NVIDIA)
      return;
    p.try_emplace("waves", "8");
    p.try_emplace("group_m", "8");
    // 8-bit B of layout n, transposed into its N x K tile through registers:
    // two stages (three spilled 80 bytes at 128 x 128 x 64), on mma.sync
    // (wgmma k32 with those staging registers spills 64 bytes at 128 x 128 x
    // 64; -p instr=wgmma -p block_k=32 does not, unmeasured on the H200).
    if (eightBitOnNvidia && !transB && !strided) {
      p.try_emplace("stages", "2");
      p.try_emplace("instr", "mma");
    }
    // cp.async into the wgmma layouts. The strided kernel over rows of whole
    // words takes the tight kernel's tiles: at 4096^3 with lda 4160 on the
    // H200 (docs/perf/h200/2026-12-02-h200-run15-strided-defaults.json),
    // 128 x 256 x 64 over 4 stages 0.251 ms, 128 x 128 x 64 over 3 0.272,
    // 128 x 128 x 32 over 3 0.342.
    const bool copied = !eightBit && !transA && wordRows;
    if (copied && size("M") >= 2048 && size("N") >= 2048)
      p.try_emplace("block_n", "256");
    // 8-bit A and B given as N x K (layout nt: nn.Linear's weight): both
    // K-major in LDS, copied as they are, for wgmma k32. At 4096^3 on the
    // H200 (docs/perf/h200/2026-12-02-h200-run10-fp8-attention.json): 128 x
    // 256 x 128 over 4 stages 0.163 ms, 128 x 128 x 128 over 3 0.169, 128 x
    // 128 x 64 over 3 0.209.
    if (eightBit && transB && !transA && !strided && wordRows && !blockScaled && size("M") >= 2048 &&
        size("N") >= 2048) {
      p.try_emplace("block_n", "256");
      p.try_emplace("block_k", "128");
      p.try_emplace("stages", "4");
    }
    // 128 x 256 over 4 stages (197 KiB) keeps one wgmma group in flight across
    // iterations (tilec-pipeline-loops); 128 x 128 stays at 3, where a fourth
    // stage would halve the blocks per SM.
    if (copied && get("block_m", "128") == "128" && get("block_n", "128") == "256")
      p.try_emplace("stages", "4");
    p.try_emplace("stages", transA || strided || wordRows ? "3" : "2");
    if (!transA && (!strided || copied))
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
    if (p.choice("scaling") == "block") {
      if (scaleA != 1.0 || scaleB != 1.0)
        return Error{"kernel 'gemm': with scaling=block, scale_a and scale_b are tensors (filled at random by "
                     "--run); parameters 'scale_a' and 'scale_b' apply to scaling=tensor"};
      if (std::string why = gemmBlockScalingRefusal(in, splitK > 1, strided); !why.empty())
        return Error{why};
      return gemmBlockScaledProblem(M, N, K, out, in, l);
    }
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

} // namespace tilec::kernels
