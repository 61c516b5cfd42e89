// Decode over a paged KV cache in the tilec DSL, the paged problem (shuffled
// block tables) and the registry entry.
#include "attention/Common.h"

#include "Model/AsmModel.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace tilec::kernels {

using namespace attention;

std::string pagedDecodeKernelName(const PagedDecodeConfig &c) {
  return "paged_decode_" + std::string(dtypeName(c.dtype)) + "_h" + std::to_string(c.heads) + "_kv" +
         std::to_string(c.kvHeads) + "_d" + std::to_string(c.headDim) + "_bs" + std::to_string(c.blockSize) +
         "_q" + std::to_string(c.qPerSeq) + "_w" + std::to_string(c.waves) +
         (c.stages > 1 && c.part == PagedDecodeConfig::Part::Attend ? "_s" + std::to_string(c.stages) : "") +
         (c.splits > 1 ? (c.part == PagedDecodeConfig::Part::Combine ? "_combine" : "_split") + std::to_string(c.splits)
                       : "");
}

/// Rows of the query tile: the heads sharing one kv head, at least one
/// 16-row matrix-instruction block.
static int64_t decodeRows(const PagedDecodeConfig &c) {
  int64_t g = c.heads / c.kvHeads;
  return std::max<int64_t>(16, (g + 15) / 16 * 16);
}

// Decode over a paged KV cache. Grid: tokens x kv_heads. A workgroup takes one
// query token and the G = heads / kv_heads query heads that share one kv head
// (GQA): Q's rows t*heads + kvh*G .. + G are one [G, D] tile (rows past G read 0
// and are not stored), so each K/V block is read once for the whole group.
// The token sees keys [0, context_len - q_per_seq + t % q_per_seq]; the key
// loop walks the sequence's block table, cutting block `phys` out of the cache
// with a window (rows phys*block_size .., the kv head's columns).
Result<Kernel> buildPagedDecode(const PagedDecodeConfig &c) {
  using namespace dsl;
  if (auto e = kvHeadsError("paged_decode", c.heads, c.kvHeads))
    return *e;
  if (c.splits < 1)
    return Error{"paged_decode: splits must be >= 1"};
  if (c.part == PagedDecodeConfig::Part::Combine)
    return c.splits > 1 ? buildSplitKvCombine(pagedDecodeKernelName(c), c.dtype, c.headDim, c.splits, c.waves)
                        : Result<Kernel>(Error{"paged_decode: part=combine needs splits > 1 (one split writes O directly)"});
  const int64_t G = c.heads / c.kvHeads, BM = decodeRows(c), BS = c.blockSize, D = c.headDim;
  const bool split = c.splits > 1;

  KernelBuilder kb(pagedDecodeKernelName(c), {.numWaves = c.waves});

  const dsl::TensorOptions headRowOpts = headRows(c.dtype);
  Tensor Q = kb.tensor("Q", c.dtype, 2, headRowOpts);
  Tensor Kc = kb.tensor("K_cache", c.dtype, 2, headRowOpts);
  Tensor Vc = kb.tensor("V_cache", c.dtype, 2, headRowOpts);
  Tensor O = kb.tensor(split ? "O_part" : "O", split ? DType::f32 : c.dtype, 2, split ? dsl::TensorOptions{} : headRowOpts);
  Tensor LSE = kb.tensor(split ? "LSE_part" : "LSE", DType::f32, 2);
  Tensor table = kb.tensor("block_tables", DType::i32, 2);
  Tensor ctxLens = kb.tensor("context_lens", DType::i32, 1);
  Scalar scale = kb.scalarF32("softmax_scale");

  kb.grid({GridExtent::ceilDiv(Q, 0, c.heads), GridExtent::fixed(c.kvHeads), GridExtent::fixed(c.splits)});
  Index t = kb.blockId(0), kvh = kb.blockId(1);
  Index seq = t / c.qPerSeq;
  Index ctx = kb.loadIndex(ctxLens, seq);
  Index keyEnd = max(ctx + t % c.qPerSeq + 1, c.qPerSeq) - c.qPerSeq;  // keys [0, keyEnd)
  Index row0 = t * c.heads + kvh * G;
  // This split's blocks: [first, last) of the sequence's cdiv(keyEnd, BS).
  Index blocks = cdiv(keyEnd, BS), first = 0, last = blocks, outRow = row0;
  if (split) {
    Index s = kb.blockId(2), per = cdiv(blocks, c.splits);
    first = min(s * per, blocks);
    last = min(first + per, blocks);
    outRow = s * Q.dim(0) + row0;
  }
  Tensor Qs = kb.window(Q, {row0, 0}, {G, D});
  Tensor Os = kb.window(O, {outRow, 0}, {G, D});
  Tensor Ls = kb.window(LSE, {outRow, 0}, {G, 1});

  OnlineSoftmax sm(kb, BM, BS, D, D, c.dtype, /*vTransposed=*/false);
  kb.load(Qs, {0, 0}, sm.q);
  sm.init();
  // With stages >= 2, tilec-pipeline-loops copies the K and V blocks of the
  // next steps (their rows read from the block table ahead) during a step.
  kb.forLoop(first, last, 1, {.numStages = c.stages, .name = "blk"}, [&](Index j) {
    Index phys = kb.loadIndex(table, {seq, j});
    Tensor Kb = kb.window(Kc, {phys * BS, kvh * D}, {BS, D});
    Tensor Vb = kb.window(Vc, {phys * BS, kvh * D}, {BS, D});
    kb.load(Kb, {0, 0}, sm.k);
    sm.loadV(Vb, 0);
    sm.step(scale, 0, j * BS, keyEnd, {});
  });
  sm.finish(Os, Ls, 0);

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

ShuffledBlockTable shuffledBlockTable(const std::vector<int64_t> &contextLens, int64_t blockSize, uint64_t seed) {
  const int64_t seqs = static_cast<int64_t>(contextLens.size()), BS = blockSize;
  ShuffledBlockTable bt;
  int64_t needed = 0;
  for (int64_t len : contextLens) {
    needed += (len + BS - 1) / BS;
    bt.maxBlocks = std::max(bt.maxBlocks, (len + BS - 1) / BS);
  }
  bt.numBlocks = needed + 3;
  std::vector<int64_t> perm(bt.numBlocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  bt.tableValues.assign(seqs * bt.maxBlocks, -1.0);
  bt.tables.resize(seqs);
  int64_t next = 0;
  for (int64_t s = 0; s < seqs; ++s) {
    bt.contextValues.push_back(static_cast<double>(contextLens[s]));
    for (int64_t b = 0; b < (contextLens[s] + BS - 1) / BS; ++b) {
      bt.tables[s].push_back(perm[next++]);
      bt.tableValues[s * bt.maxBlocks + b] = static_cast<double>(bt.tables[s].back());
    }
  }
  return bt;
}

Problem pagedDecodeProblem(const PagedDecodeConfig &c, const std::vector<int64_t> &contextLens, double scale,
                           uint64_t seed) {
  const int64_t seqs = static_cast<int64_t>(contextLens.size()), H = c.heads, KH = c.kvHeads, D = c.headDim;
  const int64_t BS = c.blockSize, tokens = seqs * c.qPerSeq;
  ShuffledBlockTable bt = shuffledBlockTable(contextLens, BS, seed);
  const int64_t numBlocks = bt.numBlocks, maxBlocks = bt.maxBlocks;
  const std::vector<std::vector<int64_t>> &tables = bt.tables;

  Problem prob;
  prob.tensors = {
      {"Q", c.dtype, {tokens * H, D}},
      {"K_cache", c.dtype, {numBlocks * BS, KH * D}},
      {"V_cache", c.dtype, {numBlocks * BS, KH * D}},
      {"O", c.dtype, {tokens * H, D}, /*output=*/true},
      {"LSE", DType::f32, {tokens * H, 1}, /*output=*/true},
      {"block_tables", DType::i32, {seqs, maxBlocks}, false, bt.tableValues},
      {"context_lens", DType::i32, {seqs}, false, bt.contextValues},
  };
  prob.scalars = {{"softmax_scale", static_cast<float>(scale), 7}};
  if (c.splits > 1)
    addSplitKvLaunches(prob, c.splits, /*oTensor=*/3, /*lseTensor=*/4);
  const double uIn = unitRoundoff(c.dtype);
  prob.toleranceRule = std::string(kToleranceRule) + ", uIn = " + (c.dtype == DType::bf16 ? "2^-8 (bf16)" : "2^-11 (f16)");
  const PagedDecodeConfig cfg = c;
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &q = v[0], &kc = v[1], &vc = v[2];
    std::vector<double> out(tokens * H * D, 0.0), outTol(tokens * H * D, 0.0);
    std::vector<double> lse(tokens * H, 0.0), lseTol(tokens * H, 0.0);
    const int64_t group = H / cfg.kvHeads;
    for (int64_t t = 0; t < tokens; ++t) {
      const int64_t s = t / cfg.qPerSeq;
      const int64_t visibleEnd = std::max<int64_t>(contextLens[s] - cfg.qPerSeq + t % cfg.qPerSeq + 1, 0);
      for (int64_t h = 0; h < H; ++h) {
        const int64_t kh = h / group;
        auto cacheRow = [&, s](int64_t j) { return tables[s][j / BS] * BS + j % BS; };
        RowKeys keys;
        keys.count = contextLens[s];
        keys.visible = [&](int64_t j) { return j < visibleEnd; };
        keys.k = [&](int64_t j) { return &kc[cacheRow(j) * KH * D + kh * D]; };
        keys.v = [&](int64_t j) { return &vc[cacheRow(j) * KH * D + kh * D]; };
        const int64_t row = t * H + h;
        attendRow(&q[row * D], D, scale, uIn, BS, keys, &out[row * D], &outTol[row * D], lse[row], lseTol[row],
                  cfg.splits);
      }
    }
    expected = {std::move(out), std::move(lse)};
    tolerance = {std::move(outTol), std::move(lseTol)};
  };
  return prob;
}

namespace {
/// Contexts a split covers at least, in KV-cache blocks: below it the second
/// kernel (the combine, reading every split's O and LSE back) costs more than
/// the idle units it fills.
constexpr int64_t kMinBlocksPerSplit = 32;

/// The default split-KV of `p` (its batch, q_per_seq, kv_heads, seq_k and
/// block_size, as given or defaulted) on `t`'s device: one workgroup per
/// (token, kv head) fills a device with half its SIMDs (SM sub-partitions) or
/// more, so 1; fewer get split as many ways as their workgroups still fit the
/// SIMDs once (a further split starts a partial second round), each split at
/// least kMinBlocksPerSplit blocks long. MI300X at batch 64, 8 KV heads,
/// context 8192: 512 one-wave workgroups on 1,216 SIMDs, 2 splits (the model:
/// 50% of HBM bandwidth unsplit, 99% split 2 ways, 74% 3 ways;
/// docs/performance.md); the H200 (528 sub-partitions): 1, as measured
/// (splits 4 and 8 were slower, docs/perf/h200.md).
int64_t pagedDecodeSplits(const KernelParams &p, const TargetInfo &t) {
  const model::DeviceFacts *device = model::deviceFacts(t.arch);
  if (!device)
    return 1;
  const int64_t waves = givenInteger(p, "waves", 1);
  const int64_t workgroups = givenInteger(p, "batch", 4) * givenInteger(p, "q_per_seq", 1) * givenInteger(p, "kv_heads", 8);
  const int64_t slots = int64_t(device->units) * device->simdsPerUnit / waves;  // one-wave workgroups: SIMDs
  const int64_t blockSize = givenInteger(p, "block_size", 16);
  const int64_t blocks = (givenInteger(p, "seq_k", 300) + blockSize - 1) / blockSize;
  if (workgroups <= 0 || 2 * workgroups >= slots)
    return 1;
  const int64_t fill = slots / workgroups;
  return std::clamp<int64_t>(std::min(fill, blocks / kMinBlocksPerSplit), 1, 64);
}
} // namespace

KernelInfo pagedDecodeKernelInfo() {
  KernelInfo info;
  info.name = "paged_decode";
  info.summary = "attention decode over a paged KV cache [blocks, block_size, kv_heads, D] through a block table; "
                 "GQA heads share each K/V block read";
  info.params = {
      {"batch", "4", "sequences (run-time; used by --run)", ParamSpec::integer(1, 1024)},
      {"heads", "8", "query heads", ParamSpec::integer(1, 256)},
      {"kv_heads", "8", "key/value heads; divides heads (GQA; 1: MQA)", ParamSpec::integer(1, 256)},
      {"seq_k", "300", "the longest context length; --run gives the sequences different lengths up to it "
                       "and a shuffled block table (run-time)", ParamSpec::integer(1, int64_t(1) << 17)},
      {"head_dim", "128", "64 | 80 | 96 | 128 | 192 | 256", headDimSpec()},
      {"block_size", "16", "tokens per KV-cache block: 16 | 32", ParamSpec::oneOf({"16", "32"})},
      {"q_per_seq", "1", "new query tokens per sequence (causal among them)", ParamSpec::integer(1, 8)},
      {"dtype", "bf16", "bf16 | f16 (Q, KV cache, O; LSE is f32)", ParamSpec::dtype({DType::bf16, DType::f16})},
      {"scale", "auto", "softmax scale, a kernel argument (auto: 1/sqrt(head_dim))", ParamSpec::real({"auto"})},
      {"waves", "1", "wavefronts per workgroup (wave32 targets with block_size=32: 2)", ParamSpec::integer(1, 16)},
      {"stages", "1",
       "software-pipelining depth of the block loop: 2 copies the next blocks' K and V during a step (NVIDIA "
       "targets: 3)",
       ParamSpec::integer(1, 4)},
      {"splits", "1", "split-KV: workgroups per (token, kv head), each over a share of the blocks, then a "
                      "combine kernel (1: none). Target default: 1 where batch * q_per_seq * kv_heads workgroups fill "
                      "half the device's SIMDs, else as many as still fit them once, each split 32 blocks or more",
       ParamSpec::integer(1, 64)},
      splitKvPartParam(),
  };
  struct Read {
    PagedDecodeConfig config;
    int64_t batch = 1, seqK = 1;
    double scale = 0;
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<Read> {
    ParamReader p(name, params, given);
    Read r;
    PagedDecodeConfig &c = r.config;
    // --run builds the whole block table on the host: at most 1024 x 8192 blocks.
    r.batch = p.integer("batch");
    HeadParams h = readHeads(p);
    r.seqK = p.integer("seq_k");
    c.blockSize = std::stoll(p.choice("block_size"));
    c.qPerSeq = p.integer("q_per_seq");
    c.waves = static_cast<int>(p.integer("waves"));
    c.stages = static_cast<int>(p.integer("stages"));
    c.splits = p.integer("splits");
    c.part = p.choice("part") == "combine" ? PagedDecodeConfig::Part::Combine
                                           : PagedDecodeConfig::Part::Attend;
    if (!p.ok())
      return Error{p.error()};
    if (c.part == PagedDecodeConfig::Part::Combine && c.splits == 1)
      return Error{"kernel '" + name + "': part=combine needs splits > 1"};
    if (auto e = applyHeads(name, h, c))
      return *e;
    r.scale = h.scale;
    if (r.seqK < c.qPerSeq)
      return Error{"kernel '" + name + "': seq_k (" + std::to_string(r.seqK) + ") must be at least q_per_seq (" +
                   std::to_string(c.qPerSeq) + ")"};
    return r;
  };
  // Wave32 targets with 32-token blocks: two waves share the 16-byte loads of
  // a K/V block (one wave holds 16 loads of each in flight and spills).
  // NVIDIA with head sizes above 128: two warps share O [16, D] (one spills).
  // gfx1151 with 16-token blocks keeps one wave (a 16 x 16 S does not split)
  // and spills a few registers at head_dim 80 and 256 (--emit=report).
  // NVIDIA pipelines the block loop 3 deep (cp.async): on the H200 (B64, 32
  // heads over 8, context 8192) 0.52 ms against 0.94 ms unpipelined
  // (docs/performance.md).
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    auto bs = p.find("block_size");
    if (t.waveSize == 32 && bs != p.end() && bs->second == "32")
      p.try_emplace("waves", "2");
    if (t.vendor == Vendor::NVIDIA && givenHeadDims(p).first > 128)
      p.try_emplace("waves", "2");
    if (t.vendor == Vendor::NVIDIA)
      p.try_emplace("stages", "3");
    if (!p.count("splits"))  // from the waves chosen above
      p["splits"] = std::to_string(pagedDecodeSplits(p, t));
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    return buildPagedDecode(r->config);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    // Context lengths descending from seq_k, most not a multiple of the block size.
    std::vector<int64_t> lens;
    for (int64_t s = 0; s < r->batch; ++s)
      lens.push_back(std::max(r->config.qPerSeq, r->seqK - (s * (2 * r->seqK + 7)) / (2 * r->batch + 1)));
    return pagedDecodeProblem(r->config, lens, r->scale, /*seed=*/r->batch * 1000 + r->seqK);
  };
  return info;
}

} // namespace tilec::kernels
