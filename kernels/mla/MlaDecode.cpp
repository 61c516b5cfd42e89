// Multi-head latent attention (MLA) decode over a paged latent cache, in the
// tilec DSL: DeepSeek-V2/V3's attention in the absorbed form, where W_UK is
// folded into the queries and W_UV applied after the kernel, so every query
// head attends to the same per-token latent.
//
// Layout (vLLM's MLA cache):
//   KV_cache [num_blocks * block_size, 576]  token slot i of block n is row n*block_size + i:
//                                            512 latent values (kv_lora_rank), then 64 RoPE values
//   Q        [batch * heads, 576]            row b*heads + h: the absorbed query, same split
//   O        [batch * heads, 512]            softmax(Q K^T * scale) V with K = the whole latent
//                                            row, V = its first 512 values
//   LSE      [batch * heads, 1] f32          natural log
//   block_tables [batch, max_blocks], context_lens [batch] (i32)
//
// Grid: heads / block_h * value_split x batch x splits. A workgroup takes
// block_h query heads of one sequence (the M side of every matrix
// instruction, so one latent tile read from memory feeds all of them) and
// walks its share of the sequence's key steps of block_n tokens, reading each
// step's cache block through the table. The latent's 512 columns are cut into
// chunks of latent_chunk columns, each one LDS tile of Q and of the step and
// one O accumulator; the RoPE part is a tile of its own, so that P V takes the
// latent chunks as V without a copy. The online softmax is the prefill
// kernel's (kernels/attention/Forward.cpp); rows past the context read 0 (the step's
// window is clipped to it) and are masked. docs/mla.md has the details.
//
// Tile configuration and budget (defaults; bf16 Q, O and cache):
//                      gfx942 / gfx90a     gfx1151              sm_90a (heads % 32 == 0)
//   block_h x block_n  16 x 32, 1 wave     16 x 32, 2 waves     32 x 32, 8 warps
//   latent_chunk       128                 128, value_split 2   64
//   LDS  Q [block_h, 576] + step [block_n, 576] + P [block_h, block_n], bf16:
//                      18 + 36 + 1 = 55 KiB of 64               36 + 36 + 2 = 74 KiB of 227
//   registers  O [block_h, 512] f32: 128 VGPRs per lane on one wave64 (gfx942: 256 VGPR
//              + 182 AGPR in all; gfx90a 256 + 138), 64 per lane on gfx1151 with two waves
//              and value_split 2 (225 VGPR in all), 64 per thread on sm_90a; no scratch.
// fp8 cache (e4m3fnuz with a per-tensor scale, gfx942): each step's fp8 rows
// are loaded into registers, converted to f32 and written to the same bf16
// LDS tiles (fp8 values are exact in bf16), so the matrix instructions and
// the LDS budget are the bf16 path's; the scale multiplies S and, at the end,
// O (per-tensor, it factors out of both sums).
//
// Split-KV: with splits > 1 each workgroup writes f32 partials O_part, LSE_part
// (split s at rows s*batch*heads ..) and the combine kernel shared with
// paged_decode (buildSplitKvCombine, over blocks of 64 columns) merges them in
// a fixed order.
#include "mla/MlaDecode.h"

#include "attention/Attention.h"
#include "Params.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace tilec::kernels {

std::string mlaDecodeKernelName(const MlaDecodeConfig &c) {
  std::string name = "mla_decode_" + std::string(dtypeName(c.dtype)) + "_kv" + dtypeName(c.kvDtype) + "_h" +
                     std::to_string(c.heads) + "_bh" + std::to_string(c.blockH) + "_bn" + std::to_string(c.blockN) +
                     "_bs" + std::to_string(c.blockSize) + "_lc" + std::to_string(c.latentChunk) +
                     (c.valueSplit > 1 ? "_vs" + std::to_string(c.valueSplit) : "") + "_w" + std::to_string(c.waves);
  if (c.stages > 1 && c.part == MlaDecodeConfig::Part::Attend)
    name += "_s" + std::to_string(c.stages);
  if (c.splits > 1)
    name += (c.part == MlaDecodeConfig::Part::Combine ? "_combine" : "_split") + std::to_string(c.splits);
  return name;
}

int64_t mlaDecodeLdsBytes(const MlaDecodeConfig &c) {
  return ((c.blockH + c.blockN) * kMlaKeyDim + c.blockH * c.blockN) * dtypeBytes(c.dtype);
}

/// Columns of O per combine workgroup: 16 rows per wave of 64 f32 columns,
/// twice (the merged sum and the split being merged), fit every target's registers.
static constexpr int64_t kCombineColumns = 64;

/// The configuration errors the builder and the registry share.
static std::optional<Error> mlaConfigError(const MlaDecodeConfig &c) {
  auto err = [](const std::string &m) { return Error{"mla_decode: " + m}; };
  if (c.dtype != DType::bf16)
    return err("Q and O must be bf16");
  if (c.kvDtype != DType::bf16 && c.kvDtype != DType::fp8e4m3fnuz && c.kvDtype != DType::e4m3)
    return err("the cache must be bf16, fp8 (e4m3fnuz) or e4m3");
  if (c.blockH < 16 || c.blockH % 16 != 0 || c.heads % c.blockH != 0)
    return err("block_h (" + std::to_string(c.blockH) + ") must be a multiple of 16 that divides heads (" +
               std::to_string(c.heads) + ")");
  if (c.blockN < 16 || c.blockN % 16 != 0 || c.blockSize % c.blockN != 0)
    return err("block_n (" + std::to_string(c.blockN) + ") must be a multiple of 16 that divides block_size (" +
               std::to_string(c.blockSize) + ")");
  if (c.valueSplit < 1 || kMlaLatentDim % (c.valueSplit * c.latentChunk) != 0)
    return err("latent_chunk (" + std::to_string(c.latentChunk) + ") times value_split (" +
               std::to_string(c.valueSplit) + ") must divide 512");
  if (c.splits < 1)
    return err("splits must be >= 1");
  if (c.stages < 1)
    return err("stages must be >= 1");
  if (c.stages > 1 && c.kvDtype != DType::bf16)
    return err("stages (" + std::to_string(c.stages) + ") above 1 needs a bf16 cache (an 8-bit one is converted "
               "through registers on its way to LDS, which the pipeline cannot copy ahead)");
  if (c.part == MlaDecodeConfig::Part::Combine && c.splits == 1)
    return err("part=combine needs splits > 1 (one split writes O directly)");
  return std::nullopt;
}

Result<Kernel> buildMlaDecode(const MlaDecodeConfig &c) {
  using namespace dsl;
  if (auto e = mlaConfigError(c))
    return *e;
  if (c.part == MlaDecodeConfig::Part::Combine)
    return buildSplitKvCombine(mlaDecodeKernelName(c), c.dtype, kMlaLatentDim, c.splits, c.waves, kCombineColumns);
  const int64_t BH = c.blockH, BN = c.blockN, BS = c.blockSize, L = kMlaLatentDim, R = kMlaRopeDim;
  const bool split = c.splits > 1, fp8 = c.kvDtype != c.dtype;
  const double log2e = 1.4426950408889634;

  KernelBuilder kb(mlaDecodeKernelName(c), {.numWaves = c.waves});
  // Rows of 576 values: 16-byte loads stay inside a row and aligned.
  Tensor Q = kb.tensor("Q", c.dtype, 2, {.divisibility = 16 / dtypeBytes(c.dtype)});
  Tensor KV = kb.tensor("KV_cache", c.kvDtype, 2, {.divisibility = 16 / dtypeBytes(c.kvDtype)});
  Tensor O = split ? kb.tensor("O_part", DType::f32, 2)
                   : kb.tensor("O", c.dtype, 2, {.divisibility = 16 / dtypeBytes(c.dtype)});
  Tensor LSE = kb.tensor(split ? "LSE_part" : "LSE", DType::f32, 2);
  Tensor table = kb.tensor("block_tables", DType::i32, 2);
  Tensor ctxLens = kb.tensor("context_lens", DType::i32, 1);
  Scalar scale = kb.scalarF32("softmax_scale");
  std::optional<Scalar> kvScale;
  if (fp8)
    kvScale = kb.scalarF32("kv_scale");

  // Head groups fastest: the workgroups reading the same sequence's latent
  // are neighbours in launch order.
  const int64_t VS = c.valueSplit;
  kb.grid({GridExtent::fixed(c.heads / BH * VS), GridExtent::ceilDiv(ctxLens, 0, 1), GridExtent::fixed(c.splits)});
  Index g = VS > 1 ? kb.blockId(0) / VS : kb.blockId(0), b = kb.blockId(1);
  Index ctx = kb.loadIndex(ctxLens, b);
  Index row0 = b * c.heads + g * BH;
  // This split's key steps: [first, last) of the sequence's cdiv(ctx, BN).
  Index steps = cdiv(ctx, BN), first = 0, last = steps, outRow = row0;
  if (split) {
    Index s = kb.blockId(2), per = cdiv(steps, c.splits);
    first = min(s * per, steps);
    last = min(first + per, steps);
    outRow = s * Q.dim(0) + row0;
  }

  // The latent's 512 columns in chunks of LC: each chunk is one LDS tile of Q
  // and of the cache step and one O accumulator, so every matrix product runs
  // over at most LC columns (shorter unrolled products keep fewer operands
  // live: the per-target defaults are the ones that do not spill).
  // With value_split VS, the workgroup computes the value columns
  // [vp * 512/VS, (vp + 1) * 512/VS) only (S in full): its chunks are taken
  // in rotated order from column vp * 512/VS, so that its first NC/VS chunks
  // are its value columns (the order of S's sum does not matter).
  const int64_t LC = c.latentChunk, NC = L / LC, NV = NC / VS;
  std::vector<Tile> qL, cL, o;
  std::vector<Index> col;  // chunk i's first latent column
  Index vp = VS > 1 ? kb.blockId(0) % VS : Index(0);
  for (int64_t i = 0; i < NC; ++i) {
    const std::string n = std::to_string(i);
    qL.push_back(kb.ldsTile("q_latent" + n, {BH, LC}, c.dtype));
    cL.push_back(kb.ldsTile("c_latent" + n, {BN, LC}, c.dtype));
    if (i < NV)
      o.push_back(kb.regTile("o" + n, {BH, LC}, DType::f32));
    col.push_back(VS > 1 ? (vp * (L / VS) + i * LC) % L : Index(i * LC));
  }
  Tile qR = kb.ldsTile("q_rope", {BH, R}, c.dtype), cR = kb.ldsTile("c_rope", {BN, R}, c.dtype);
  Tile pT = kb.ldsTile("p_lds", {BH, BN}, c.dtype);
  Tile s = kb.regTile("s", {BH, BN}, DType::f32), p = kb.regTile("p", {BH, BN}, DType::f32);
  Tile m = kb.regTile("m", {BH}, DType::f32), mNew = kb.regTile("m_new", {BH}, DType::f32);
  Tile l = kb.regTile("l", {BH}, DType::f32), alpha = kb.regTile("alpha", {BH}, DType::f32);
  Tile lse = kb.regTile("lse", {BH}, DType::f32);
  std::vector<Tile> rawL;  // fp8: one step's cache rows in registers, before conversion
  std::optional<Tile> rawR, wideL, wideR;  // and as f32, on the way to LDS
  if (fp8) {
    for (int64_t i = 0; i < NC; ++i)
      rawL.push_back(kb.regTile("c_latent_fp8_" + std::to_string(i), {BN, LC}, c.kvDtype));
    rawR = kb.regTile("c_rope_fp8", {BN, R}, c.kvDtype);
    wideL = kb.regTile("c_latent_f32", {BN, LC}, DType::f32);
    wideR = kb.regTile("c_rope_f32", {BN, R}, DType::f32);
  }

  for (int64_t i = 0; i < NC; ++i)
    kb.load(kb.window(Q, {row0, col[i]}, {BH, LC}), {0, 0}, qL[i]);
  kb.load(kb.window(Q, {row0, L}, {BH, R}), {0, 0}, qR);
  for (const Tile &oi : o)
    kb.fill(oi, 0.0);
  kb.fill(m, -std::numeric_limits<double>::infinity());
  kb.fill(l, 0.0);
  // With stages >= 2 (a bf16 cache), tilec-pipeline-loops copies the next
  // steps' rows (their block read from the table ahead) during a step.
  kb.forLoop(first, last, 1, {.numStages = c.stages, .name = "kstep"}, [&](Index j) {
    Index t0 = j * BN;
    Index phys = kb.loadIndex(table, {b, t0 / BS});
    Index slot = phys * BS + t0 % BS;
    Index rows = min(ctx - t0, BN);  // tokens of this step inside the context; the rest read 0
    auto loadStep = [&](const Tensor &src, const Tile &raw, const Tile &wide, const Tile &dst) {
      if (fp8) {  // fp8 -> f32 -> bf16, exact
        kb.load(src, {0, 0}, raw);
        kb.convert(wide, raw);
        kb.copy(wide, dst);
      } else {
        kb.load(src, {0, 0}, dst);
      }
    };
    for (int64_t i = 0; i < NC; ++i)
      loadStep(kb.window(KV, {slot, col[i]}, {rows, LC}), fp8 ? rawL[i] : cL[i], fp8 ? *wideL : cL[i], cL[i]);
    loadStep(kb.window(KV, {slot, L}, {rows, R}), fp8 ? *rawR : cR, fp8 ? *wideR : cR, cR);
    // ---- S[BH,BN] = (Q_latent C_latent^T + Q_rope C_rope^T) * (kv_scale) * scale * log2(e)
    kb.fill(s, 0.0);
    for (int64_t i = 0; i < NC; ++i)
      kb.gemm(qL[i], cL[i], s, {.transposeB = true});
    kb.gemm(qR, cR, s, {.transposeB = true});
    if (fp8)
      kb.scale(s, s, *kvScale);
    kb.scale(s, s, scale, log2e);
    kb.mask(s, 0, t0, ctx, {});
    // ---- online softmax (kernels/attention/Common.h, OnlineSoftmax::step)
    kb.reduce(ReduceKind::max, s, mNew);
    kb.max(mNew, mNew, m);
    kb.subExp2(p, s, mNew);
    kb.subExp2(alpha, m, mNew);
    kb.mul(l, l, alpha);
    kb.reduce(ReduceKind::sum, p, l, {.accumulate = true});
    kb.convert(m, mNew);
    // ---- O[BH,512] = O * alpha + P C_latent, chunk by chunk
    kb.copy(p, pT);
    for (int64_t i = 0; i < NV; ++i) {
      kb.mul(o[i], o[i], alpha);
      kb.gemm(pT, cL[i], o[i]);
    }
  });
  // ---- O = (kv_scale) * O / l, LSE = m ln 2 + ln l
  for (int64_t i = 0; i < NV; ++i) {
    if (fp8)
      kb.scale(o[i], o[i], *kvScale);
    kb.safeDiv(o[i], o[i], l);
    kb.store(o[i], kb.window(O, {outRow, col[i]}, {BH, LC}), {0, 0});
  }
  kb.log(lse, l);
  kb.scale(m, m, 0.6931471805599453);
  kb.add(lse, lse, m);
  kb.store(lse, kb.window(LSE, {outRow, 0}, {BH, 1}), {0, 0});

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

Problem mlaDecodeProblem(const MlaDecodeConfig &c, const std::vector<int64_t> &contextLens, double scale,
                         double kvScale, uint64_t seed) {
  const int64_t seqs = static_cast<int64_t>(contextLens.size()), H = c.heads, BS = c.blockSize;
  const int64_t W = kMlaKeyDim, L = kMlaLatentDim;
  const bool fp8 = c.kvDtype != c.dtype;
  ShuffledBlockTable bt = shuffledBlockTable(contextLens, BS, seed);
  const int64_t numBlocks = bt.numBlocks, maxBlocks = bt.maxBlocks;
  const std::vector<std::vector<int64_t>> &tables = bt.tables;

  Problem prob;
  prob.tensors = {
      {"Q", c.dtype, {seqs * H, W}},
      {"KV_cache", c.kvDtype, {numBlocks * BS, W}},
      {"O", c.dtype, {seqs * H, L}, /*output=*/true},
      {"LSE", DType::f32, {seqs * H, 1}, /*output=*/true},
      {"block_tables", DType::i32, {seqs, maxBlocks}, false, bt.tableValues},
      {"context_lens", DType::i32, {seqs}, false, bt.contextValues},
  };
  prob.scalars = {{"softmax_scale", static_cast<float>(scale), 6}};
  if (fp8)
    prob.scalars.push_back({"kv_scale", static_cast<float>(kvScale), 7});
  if (c.splits > 1)
    addSplitKvLaunches(prob, c.splits, /*oTensor=*/2, /*lseTensor=*/3);
  const double uIn = unitRoundoff(c.dtype);
  // The kernel's errors are attention's (attendRow) over 576-wide scores and
  // 512-wide values; an fp8 cache converts exactly to bf16 and adds two f32
  // scalings by kv_scale (S and O), the reference reading the cache as
  // fp8 value * kv_scale.
  const int64_t extraRoundings = fp8 ? 2 : 0;
  prob.toleranceRule = std::string(kToleranceRule) + ", D = 576 (scores), 512 values, uIn = 2^-8 (bf16)" +
                       (fp8 ? "; fp8 cache: +2 f32 roundings (kv_scale on S and O) in E's (D+3) and in g" : "");
  const MlaDecodeConfig cfg = c;
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &q = v[0];
    std::vector<double> cache = v[1];
    for (double &x : cache)
      x *= fp8 ? kvScale : 1.0;
    std::vector<double> out(seqs * H * L, 0.0), outTol(seqs * H * L, 0.0);
    std::vector<double> lse(seqs * H, 0.0), lseTol(seqs * H, 0.0);
    for (int64_t s = 0; s < seqs; ++s) {
      auto latent = [&, s](int64_t j) { return &cache[(tables[s][j / BS] * BS + j % BS) * W]; };
      RowKeys keys;
      keys.count = contextLens[s];
      keys.visible = [](int64_t) { return true; };
      keys.k = latent;
      keys.v = latent;  // V is the latent's first 512 values
      for (int64_t h = 0; h < H; ++h) {
        const int64_t row = s * H + h;
        attendRow(&q[row * W], W, scale, uIn, cfg.blockN, keys, &out[row * L], &outTol[row * L], lse[row],
                  lseTol[row], cfg.splits, L, extraRoundings);
      }
    }
    expected = {std::move(out), std::move(lse)};
    tolerance = {std::move(outTol), std::move(lseTol)};
  };
  return prob;
}

KernelInfo mlaDecodeKernelInfo() {
  KernelInfo info;
  info.name = "mla_decode";
  info.summary = "multi-head latent attention decode (DeepSeek, absorbed form) over a paged latent cache "
                 "[blocks, block_size, 576]; all query heads share each latent tile read";
  info.params = {
      {"batch", "4", "sequences (run-time; used by --run)", ParamSpec::integer(1, 1024)},
      {"heads", "16", "query heads (DeepSeek-V3: 128; 16 per tensor-parallel rank of 8)", ParamSpec::integer(16, 256)},
      {"seq_k", "300", "the longest context length; --run gives the sequences different lengths up to it "
                       "and a shuffled block table (run-time)", ParamSpec::integer(1, int64_t(1) << 17)},
      {"block_size", "64", "tokens per latent-cache block: 16 | 32 | 64", ParamSpec::oneOf({"16", "32", "64"})},
      {"dtype", "bf16", "Q and O: bf16", ParamSpec::dtype({DType::bf16})},
      {"kv_dtype", "bf16",
       "the latent cache: bf16 | fp8 (e4m3fnuz with a per-tensor scale; AMD targets) | e4m3 (OCP, with a "
       "per-tensor scale; NVIDIA targets)",
       ParamSpec::dtype({DType::bf16, DType::fp8e4m3fnuz, DType::e4m3})},
      {"kv_scale", "1", "kv_dtype=fp8|e4m3: the cache's per-tensor scale (a kernel argument; used by --run)",
       ParamSpec::real()},
      {"scale", "auto", "softmax scale, a kernel argument (auto: 1/sqrt(192), DeepSeek-V3's query-key head "
                        "size before absorption)", ParamSpec::real({"auto"})},
      {"splits", "1", "split-KV: workgroups per (sequence, head group), each over a share of the key steps, "
                      "then a combine kernel (1: none)", ParamSpec::integer(1, 64)},
      splitKvPartParam(),
      {"block_h", "16", "query heads per workgroup (a multiple of 16 dividing heads)", ParamSpec::integer(16, 128)},
      {"block_n", "32", "tokens per key step (a multiple of 16 dividing block_size)", ParamSpec::integer(16, 64)},
      {"waves", "1", "wavefronts per workgroup", ParamSpec::integer(1, 16)},
      {"stages", "1",
       "software-pipelining depth of the key loop with a bf16 cache: 2 copies the next step's rows during a "
       "step",
       ParamSpec::integer(1, 4)},
      {"value_split", "1", "workgroups sharing one head group's 512 value columns (each computes S in full): "
                           "1 | 2 | 4", ParamSpec::oneOf({"1", "2", "4"})},
      {"latent_chunk", "128", "columns of the latent per LDS tile, O accumulator and matrix product: 64 | 128 | "
                              "256 | 512", ParamSpec::oneOf({"64", "128", "256", "512"})},
  };
  struct Read {
    MlaDecodeConfig config;
    int64_t batch = 1, seqK = 1;
    double scale = 0, kvScale = 1;
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<Read> {
    ParamReader p(name, params, given);
    Read r;
    MlaDecodeConfig &c = r.config;
    // --run builds the whole block table on the host.
    r.batch = p.integer("batch");
    c.heads = p.integer("heads");
    r.seqK = p.integer("seq_k");
    c.blockSize = std::stoll(p.choice("block_size"));
    c.dtype = p.dtype("dtype");
    c.kvDtype = p.dtype("kv_dtype");
    r.kvScale = p.real("kv_scale");
    r.scale = p.raw("scale") == "auto" ? 1.0 / std::sqrt(192.0) : p.real("scale");
    c.splits = p.integer("splits");
    c.part = p.choice("part") == "combine" ? MlaDecodeConfig::Part::Combine
                                           : MlaDecodeConfig::Part::Attend;
    c.blockH = p.integer("block_h");
    c.blockN = p.integer("block_n");
    c.waves = static_cast<int>(p.integer("waves"));
    c.stages = static_cast<int>(p.integer("stages"));
    c.valueSplit = std::stoll(p.choice("value_split"));
    c.latentChunk = std::stoll(p.choice("latent_chunk"));
    if (!p.ok())
      return Error{p.error()};
    if (given.count("kv_scale") && c.kvDtype == DType::bf16)
      return Error{"kernel '" + name + "': parameter 'kv_scale' applies to kv_dtype=fp8 or e4m3 only"};
    if (!(r.kvScale > 0))
      return Error{"kernel '" + name + "': parameter 'kv_scale' must be positive"};
    if (auto e = mlaConfigError(c))
      return Error{"kernel '" + name + "': " + e->message.substr(std::string("mla_decode: ").size())};
    return r;
  };
  // Per target, heads x tokens per step within its LDS (mlaDecodeLdsBytes)
  // and the O accumulator [block_h, 512] f32 within its registers.
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    if (t.vendor == Vendor::NVIDIA) {
      // 8 warps; 32 heads x 32 tokens when heads is a multiple of 32, else
      // 16 x 64 (one 16-row band, the warps side by side over the keys).
      auto heads = p.find("heads");
      const bool even = heads != p.end() && heads->second.find_first_not_of("0123456789") == std::string::npos &&
                        heads->second.size() < 6 && std::stoll(heads->second) % 32 == 0;
      p.try_emplace("block_h", even ? "32" : "16");
      p.try_emplace("block_n", even ? "32" : "64");
      p.try_emplace("waves", "8");
      p.try_emplace("latent_chunk", "64");
    } else if (t.waveSize == 32) {
      // Two wave32s hold O [16, 512] in 128 VGPRs each, which with a
      // 576-wide step spills: two workgroups share the value columns.
      p.try_emplace("waves", "2");
      p.try_emplace("value_split", "2");
    } else if (auto kv = p.find("kv_dtype"); kv != p.end() && (kv->second == "fp8" || kv->second == "e4m3")) {
      // The fp8 cache's conversions next to 128-column latent chunks need
      // more than a wave's 256 VGPRs (492 bytes of scratch on gfx942); 64
      // columns fit.
      p.try_emplace("latent_chunk", "64");
    }
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    return buildMlaDecode(r->config);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    // Context lengths descending from seq_k, most not a multiple of the block size.
    std::vector<int64_t> lens;
    for (int64_t s = 0; s < r->batch; ++s)
      lens.push_back(std::max<int64_t>(1, r->seqK - (s * (2 * r->seqK + 7)) / (2 * r->batch + 1)));
    return mlaDecodeProblem(r->config, lens, r->scale, r->kvScale, /*seed=*/r->batch * 1000 + r->seqK);
  };
  return info;
}

} // namespace tilec::kernels
