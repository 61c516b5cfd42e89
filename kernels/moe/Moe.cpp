// Mixture-of-experts kernels in the DSL (docs/moe.md). Their problems and CPU
// references: MoeReference.cpp; their `-p` parameters: MoeEntry.cpp.
//
// Tile configurations (the defaults; LDS and registers as `tilec --kernel=...
// --emit=report` gives them on gfx942, no spills):
//   moe_gate     16 tokens per wave, 4 waves: 64 tokens x the experts (padded to a
//                multiple of 16) per workgroup, all in registers: 0 bytes LDS, 28 VGPRs
//   gate_up      block_m x block_n x block_k = 32 x 64 x 32, 4 waves, 2 stages; A's rows
//                gathered through the sorted ids, the gate and up slices of W13 as two
//                N x K tiles: 18432 bytes LDS, 52 VGPRs + 16 AGPRs
//   down         32 x 64 x 32, 4 waves, 2 stages: 12288 bytes LDS, 32 VGPRs + 8 AGPRs
//   combine      64 tokens (16 per wave) x 64 columns, Y's rows staged in LDS:
//                16384 bytes LDS, 54 VGPRs
//   moe_align    one workgroup of 4 waves, 64 (token, expert) pairs per step over
//                8 experts' [EC, R] tiles: 49152 bytes LDS, 128 VGPRs + 16 AGPRs
#include "moe/Moe.h"

#include <algorithm>

namespace tilec::kernels {

// ---- Gating -------------------------------------------------------------------
//
// One workgroup holds 16 tokens per wave, all experts as columns (padded to a
// multiple of 16 and masked to -inf). Softmax: p = exp2((x - max) log2 e) / sum.
// Top-k runs on the logits, not on p: the logits are exact inputs, so the
// selection is the reference's exactly (p could round two different logits to
// one value). Step j: m = rowmax(x); the lowest column holding m is
// rowmin(col + 1024 * (x != m)) (1024 > any column; every value an exact
// integer in f32); its weight is rowsum(p * onehot) (one nonzero term, exact);
// x becomes -inf there for the next step.

std::string moeGateKernelName(const MoeGateConfig &c) {
  return "moe_gate_" + std::string(dtypeName(c.dtype)) + "_e" + std::to_string(c.experts) + "_k" +
         std::to_string(c.topk) + (c.renormalize ? "_renorm" : "") + "_w" + std::to_string(c.waves);
}

Result<Kernel> buildMoeGate(const MoeGateConfig &c) {
  using namespace dsl;
  if (c.experts < 1 || c.experts > 128)
    return Error{"moe_gate: experts must be in [1, 128], got " + std::to_string(c.experts)};
  if (c.topk < 1 || c.topk > 8 || c.topk > c.experts)
    return Error{"moe_gate: topk must be in [1, min(8, experts)], got " + std::to_string(c.topk) +
                 " with " + std::to_string(c.experts) + " experts"};
  const int64_t BM = 16 * c.waves, EC = roundUp(c.experts, 16);
  const double log2e = 1.4426950408889634, notHit = 1024;

  KernelBuilder kb(moeGateKernelName(c), {.numWaves = c.waves});
  Tensor logits = kb.tensor("logits", c.dtype, 2);
  Tensor weights = kb.tensor("topk_weights", DType::f32, 2);
  Tensor ids = kb.tensor("topk_ids", DType::i32, 2);
  kb.grid({GridExtent::ceilDiv(logits, 0, BM)});
  Index r0 = kb.blockId(0) * BM;

  Tile x = kb.regTile("x", {BM, EC}, DType::f32);
  Tile p = kb.regTile("p", {BM, EC}, DType::f32);
  Tile col = kb.regTile("col", {BM, EC}, DType::f32);
  Tile hit = kb.regTile("hit", {BM, EC}, DType::f32);
  Tile m = kb.regTile("m", {BM}, DType::f32), l = kb.regTile("l", {BM}, DType::f32);
  Tile idx = kb.regTile("idx", {BM}, DType::f32), sum = kb.regTile("sum", {BM}, DType::f32);
  std::vector<Tile> w;
  for (int64_t j = 0; j < c.topk; ++j)
    w.push_back(kb.regTile("w" + std::to_string(j), {BM}, DType::f32));

  if (c.dtype == DType::f32) {
    kb.load(logits, {r0, 0}, x);
  } else {
    Tile in = kb.regTile("logits_in", {BM, EC}, c.dtype);
    kb.load(logits, {r0, 0}, in);
    kb.convert(x, in);
  }
  kb.mask(x, 0, 0, logits.dim(1));  // the padding columns: -inf

  // Softmax over the experts.
  kb.reduce(ReduceKind::max, x, m);
  kb.scale(p, x, log2e);
  kb.scale(l, m, log2e);
  kb.subExp2(p, p, l);
  kb.reduce(ReduceKind::sum, p, l);
  kb.safeDiv(p, p, l);

  // Top-k on the logits, ties to the lowest expert.
  kb.iota(col, 1);
  kb.fill(sum, 0.0);
  for (int64_t j = 0; j < c.topk; ++j) {
    kb.reduce(ReduceKind::max, x, m);
    kb.eq(hit, x, m);
    kb.scale(hit, hit, -notHit);
    kb.addScalar(hit, hit, notHit);
    kb.add(hit, hit, col);
    kb.reduce(ReduceKind::min, hit, idx);
    kb.store(idx, ids, {r0, Index(j)});
    kb.eq(hit, col, idx);  // one-hot of the chosen expert
    kb.negInfWhere(x, x, hit);
    kb.mul(hit, hit, p);
    kb.reduce(ReduceKind::sum, hit, w[j]);
    kb.add(sum, sum, w[j]);
  }
  for (int64_t j = 0; j < c.topk; ++j) {
    if (c.renormalize)
      kb.div(w[j], w[j], sum);
    kb.store(w[j], weights, {r0, Index(j)});
  }

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}


// ---- Expert GEMMs and combine ------------------------------------------------
//
// gate_up and down: one workgroup per (block of block_m sorted positions,
// block_n output columns). The block's expert comes from block_experts; a
// block past the padded total (-1) runs no k step and writes zeros. A's rows
// are gathered through the sorted token ids (the sentinel `tokens` reads as 0),
// B is the expert's slice of the weights, a window into W13 or W2 given as
// N x K (transposed operand). combine: one workgroup per (block_m tokens,
// block_n columns) gathers each token's j-th expert row of Y through the
// positions, scales it by the weight and adds, j in order.

int64_t moeDivisibility(int64_t extent, DType dtype) {
  int64_t d = 1;
  while (d < 16 / dtypeBytes(dtype) && extent % (2 * d) == 0)
    d *= 2;
  return d;
}

std::string moeExpertsKernelName(const MoeExpertsConfig &c) {
  const char *part = c.part == MoeExpertsConfig::Part::GateUp ? "gate_up"
                     : c.part == MoeExpertsConfig::Part::Down ? "down"
                                                               : "combine";
  std::string name = "moe_" + std::string(part) + "_" + dtypeName(c.dtype) + "_" + std::to_string(c.blockM) + "x" +
                     std::to_string(c.blockN);
  // What the rows are assumed to be multiples of: the hidden size's, then
  // the intermediate size's (none: rows of any length).
  const std::string div = c.divisibilityHidden > 1 || c.divisibilityInter > 1
                              ? "_div" + std::to_string(c.divisibilityHidden) + "x" + std::to_string(c.divisibilityInter)
                              : "";
  if (c.part == MoeExpertsConfig::Part::Combine)
    return "moe_combine_" + std::string(dtypeName(c.dtype)) + "_" + std::to_string(16 * c.waves) + "x" +
           std::to_string(c.blockN) + "_k" + std::to_string(c.topk) + "_w" + std::to_string(c.waves) + div;
  return name + "x" + std::to_string(c.blockK) + "_w" + std::to_string(c.waves) +
         (c.stages > 1 ? "_s" + std::to_string(c.stages) : "") + div;
}

namespace {

/// The block's expert e (-1: no block), the expert clamped to 0 for window
/// origins, and 1 when the block is active (e >= 0), else 0.
struct BlockExpert {
  dsl::Index expert, safe, active;
};
BlockExpert blockExpert(dsl::KernelBuilder &kb, const dsl::Tensor &blockExperts, const dsl::Index &block) {
  dsl::Index e = kb.loadIndex(blockExperts, block);
  return {e, max(e, 0), min(e + 1, 1)};
}

Result<Kernel> buildExpertGemm(const MoeExpertsConfig &c) {
  using namespace dsl;
  const bool gateUp = c.part == MoeExpertsConfig::Part::GateUp;
  const int64_t BM = c.blockM, BN = c.blockN, BK = c.blockK;
  KernelBuilder kb(moeExpertsKernelName(c), {.numWaves = c.waves});
  // The k extent (hidden for gate_up, intermediate for down) is a multiple of
  // dk: A's and W's rows load (and gather) dk elements at a time.
  const TensorOptions rowsOfK{.divisibility = gateUp ? c.divisibilityHidden : c.divisibilityInter};
  Tensor A = kb.tensor(gateUp ? "X" : "H", c.dtype, 2, rowsOfK);     // [tokens, hidden] or [P, I]
  Tensor W = kb.tensor(gateUp ? "W13" : "W2", c.dtype, 2, rowsOfK);  // [E * 2I, hidden] or [E * hidden, I]
  std::optional<Tensor> sorted;
  if (gateUp)
    sorted = kb.tensor("sorted_token_ids", DType::i32, 1);
  Tensor blockExperts = kb.tensor("block_experts", DType::i32, 1);
  Tensor Out = gateUp ? kb.tensor("H", c.dtype, 2) : kb.tensor("Y", DType::f32, 2);  // [P, I] or [P, hidden]
  kb.grid({GridExtent::ceilDiv(Out, 0, BM), GridExtent::ceilDiv(Out, 1, BN)});
  Index block = kb.blockId(0), row = block * BM, col = kb.blockId(1) * BN;
  BlockExpert be = blockExpert(kb, blockExperts, block);
  Index K = A.dim(1), N = Out.dim(1);
  Index numK = cdiv(K, BK) * be.active;

  Tile a = kb.ldsTile("a_lds", {BM, BK}, c.dtype);
  Tile acc = kb.regTile("acc", {BM, BN}, DType::f32);
  kb.fill(acc, 0.0);
  if (gateUp) {
    // The expert's I gate rows, then its I up rows.
    Tensor Wg = kb.window(W, {be.safe * 2 * N, 0}, {N, K});
    Tensor Wu = kb.window(W, {be.safe * 2 * N + N, 0}, {N, K});
    Tile bg = kb.ldsTile("wg_lds", {BN, BK}, c.dtype), bu = kb.ldsTile("wu_lds", {BN, BK}, c.dtype);
    Tile up = kb.regTile("up", {BM, BN}, DType::f32);
    kb.fill(up, 0.0);
    kb.forLoop(0, numK, 1, {.numStages = c.stages, .name = "kt"}, [&](Index kt) {
      Index k = kt * BK;
      kb.gather(A, *sorted, row, k, a);
      kb.load(Wg, {col, k}, bg);
      kb.load(Wu, {col, k}, bu);
      kb.gemm(a, bg, acc, {.transposeB = true});
      kb.gemm(a, bu, up, {.transposeB = true});
    });
    kb.silu(acc, acc);
    kb.mul(acc, acc, up);
  } else {
    Tensor We = kb.window(W, {be.safe * N, 0}, {N, K});
    Tile b = kb.ldsTile("w_lds", {BN, BK}, c.dtype);
    kb.forLoop(0, numK, 1, {.numStages = c.stages, .name = "kt"}, [&](Index kt) {
      Index k = kt * BK;
      kb.load(A, {row, k}, a);
      kb.load(We, {col, k}, b);
      kb.gemm(a, b, acc, {.transposeB = true});
    });
  }
  kb.store(acc, Out, {row, col});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

Result<Kernel> buildCombine(const MoeExpertsConfig &c) {
  using namespace dsl;
  // 16 tokens per wave: the weights are row vectors of the tokens' rows.
  const int64_t BM = 16 * c.waves, BN = c.blockN;
  KernelBuilder kb(moeExpertsKernelName(c), {.numWaves = c.waves});
  // Y's rows (hidden f32 elements) gather in runs of what hidden is a multiple of, up to 16 bytes.
  Tensor Y = kb.tensor("Y", DType::f32, 2, {.divisibility = std::min<int64_t>(c.divisibilityHidden, 4)});  // [P, hidden]
  Tensor pos = kb.tensor("positions", DType::i32, 1);     // [k * tokens]
  Tensor weights = kb.tensor("topk_weights", DType::f32, 2);  // [tokens, k]
  Tensor Out = kb.tensor("out", c.dtype, 2);              // [tokens, hidden]
  kb.grid({GridExtent::ceilDiv(Out, 0, BM), GridExtent::ceilDiv(Out, 1, BN)});
  Index t0 = kb.blockId(0) * BM, col = kb.blockId(1) * BN, tokens = Out.dim(0);
  Tile y = kb.ldsTile("y_lds", {BM, BN}, DType::f32);
  Tile yr = kb.regTile("y", {BM, BN}, DType::f32), acc = kb.regTile("acc", {BM, BN}, DType::f32);
  Tile w = kb.regTile("w", {BM}, DType::f32);
  kb.fill(acc, 0.0);
  // A loop rather than k unrolled copies: clang would hoist all k gathers and
  // spill (gfx1151, k = 8).
  kb.forLoop(0, c.topk, 1, {.name = "j"}, [&](Index j) {
    kb.gather(Y, pos, tokens * j + t0, col, y);
    kb.copy(y, yr);
    kb.load(weights, {t0, j}, w);
    kb.mul(yr, yr, w);
    kb.add(acc, acc, yr);
  });
  kb.store(acc, Out, {t0, col});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

} // namespace

Result<Kernel> buildMoeExperts(const MoeExpertsConfig &c) {
  if (c.dtype != DType::bf16 && c.dtype != DType::f16)
    return Error{"moe_experts: dtype must be bf16 or f16"};
  return c.part == MoeExpertsConfig::Part::Combine ? buildCombine(c) : buildExpertGemm(c);
}


// ---- Token alignment ------------------------------------------------------------
//
// One workgroup, R = 16 * waves pairs per step: step (j, c) takes choice j of
// tokens [c R, c R + R). Experts are the rows of [EC, R] tiles (EC = experts
// rounded up to R), pairs their columns:
//   onehot[e][i] = (ids[t0 + i][j] == e), 0 past the last token
// (the ids, a row vector of an [R, EC] tile, are broadcast along its rows and
// transposed through LDS). Three passes:
//  1. counts[e] = sum of onehot over all steps (row sums);
//  2. blocks = ceil(counts / block_m); offsets = (strictly lower triangular
//     ones) @ blocks, a matrix product in f16 (integers below 2048 are exact:
//     up to 65536 tokens with block_m 32), times block_m;
//  3. per step, the pair's rank within its expert so far:
//     rank = onehot @ U (U[i'][i] = i' <= i) + the expert's count in earlier
//     steps, slot = offset + rank - 1, scattered as the token id; the slots
//     of the pairs are stored as the positions. The sentinel (tokens) fills
//     sorted_token_ids first, a barrier orders the two kinds of store.
//  4. block b's expert = the number of experts whose segment ends at or before
//     b block_m (-1 when all do: past the total).
// Every value is an integer held exactly in f32.

std::string moeAlignKernelName(const MoeAlignConfig &c) {
  return "moe_align_e" + std::to_string(c.experts) + "_bm" + std::to_string(c.blockM) + "_w" + std::to_string(c.waves);
}

Result<Kernel> buildMoeAlign(const MoeAlignConfig &c) {
  using namespace dsl;
  if (c.experts < 1 || c.experts > 64)
    return Error{"moe_align: experts must be in [1, 64], got " + std::to_string(c.experts)};
  const int64_t R = 16 * c.waves, EC = roundUp(c.experts, R), BM = c.blockM, E = c.experts;
  KernelBuilder kb(moeAlignKernelName(c), {.numWaves = c.waves});
  Tensor ids = kb.tensor("topk_ids", DType::i32, 2);
  Tensor sorted = kb.tensor("sorted_token_ids", DType::i32, 1);
  Tensor blockExperts = kb.tensor("block_experts", DType::i32, 1);
  Tensor positions = kb.tensor("positions", DType::i32, 1);
  Tensor total = kb.tensor("total_padded", DType::i32, 1);
  kb.grid({GridExtent::fixed(1)});
  Index T = ids.dim(0), K = ids.dim(1), chunks = cdiv(T, R);

  // The one-hot matrix of step (j, t0).
  Tile idsRows = kb.regTile("ids", {R}, DType::i32);
  Tile z = kb.regTile("ids_bcast", {R, EC}, DType::f32);
  Tile zT = kb.ldsTile("ids_t_lds", {EC, R}, DType::f32);
  Tile idsT = kb.regTile("ids_t", {EC, R}, DType::f32);
  Tile expertOf = kb.regTile("expert_of_row", {EC, R}, DType::f32);
  Tile onehot = kb.regTile("onehot", {EC, R}, DType::f32);
  kb.iota(expertOf, 0);
  auto onehotOf = [&](const Index &j, const Index &t0) {
    kb.load(ids, {t0, j}, idsRows);
    kb.fill(z, 0.0);
    kb.add(z, z, idsRows);
    kb.copy(z, zT, {.transpose = true});
    kb.copy(zT, idsT);
    kb.eq(onehot, idsT, expertOf);
    kb.mask(onehot, 0, t0, T);  // tokens past the end: -inf, then 0
    kb.relu(onehot, onehot);
  };

  // 1. counts per expert.
  Tile counts = kb.regTile("counts", {EC}, DType::f32);
  kb.fill(counts, 0.0);
  kb.forLoop(0, K, 1, {.name = "j"}, [&](Index j) {
    kb.forLoop(0, chunks, 1, {.name = "c"}, [&](Index ch) {
      onehotOf(j, ch * R);
      kb.reduce(ReduceKind::sum, onehot, counts, {.axis = 1, .accumulate = true});
    });
  });

  // 2. block-padded offsets: an exclusive prefix sum over the experts.
  Tile blocks = kb.regTile("blocks", {EC}, DType::f32);
  kb.scale(blocks, counts, 1.0 / double(BM));
  kb.ceil(blocks, blocks);
  Tile lower = kb.regTile("lower", {EC, EC}, DType::f32);
  kb.fill(lower, 1.0);
  kb.mask(lower, -1, 0, EC, {.causal = true});  // keeps column < row
  kb.relu(lower, lower);
  Tile lowerLds = kb.ldsTile("lower_lds", {EC, EC}, DType::f16);
  kb.copy(lower, lowerLds);
  Tile blocksMat = kb.regTile("blocks_mat", {EC, 16}, DType::f32);
  kb.fill(blocksMat, 0.0);
  kb.add(blocksMat, blocksMat, blocks);
  Tile blocksLds = kb.ldsTile("blocks_lds", {EC, 16}, DType::f16);
  kb.copy(blocksMat, blocksLds);
  Tile offsetsMat = kb.regTile("offsets_mat", {EC, 16}, DType::f32);
  kb.fill(offsetsMat, 0.0);
  kb.gemm(lowerLds, blocksLds, offsetsMat);
  Tile offset = kb.regTile("offset", {EC}, DType::f32), segEnd = kb.regTile("seg_end", {EC}, DType::f32);
  kb.reduce(ReduceKind::max, offsetsMat, offset);
  kb.scale(offset, offset, double(BM));
  kb.scale(segEnd, blocks, double(BM));
  kb.add(segEnd, segEnd, offset);

  // 3. sentinels, then every pair's slot.
  Tile val = kb.regTile("slots", {R, EC}, DType::f32);
  Tile pos = kb.regTile("pos", {R}, DType::f32), tok = kb.regTile("token", {R}, DType::f32);
  Tile sentinel = kb.regTile("sentinel", {R}, DType::f32);
  kb.iota(tok, 0);
  kb.iota(sentinel, 0, T);
  kb.sub(sentinel, sentinel, tok);  // = tokens in every row
  kb.forLoop(0, cdiv(sorted.dim(0), R), 1, {.name = "p"}, [&](Index p) { kb.store(sentinel, sorted, {p * R}); });
  kb.barrier();

  Tile upper = kb.regTile("upper", {R, R}, DType::f32);
  kb.fill(upper, 1.0);
  kb.mask(upper, 0, 0, R, {.causal = true});  // L[i][i'] = i' <= i
  kb.relu(upper, upper);
  Tile upperLds = kb.ldsTile("upper_lds", {R, R}, DType::f16);
  kb.copy(upper, upperLds, {.transpose = true});  // U[i'][i] = i' <= i
  Tile onehotLds = kb.ldsTile("onehot_lds", {EC, R}, DType::f16);
  Tile rank = kb.regTile("rank", {EC, R}, DType::f32);
  Tile valT = kb.ldsTile("slots_t_lds", {R, EC}, DType::f32);
  Tile seen = kb.regTile("seen", {EC}, DType::f32), base = kb.regTile("base", {EC}, DType::f32);
  kb.fill(seen, 0.0);
  kb.forLoop(0, K, 1, {.name = "j"}, [&](Index j) {
    kb.forLoop(0, chunks, 1, {.name = "c"}, [&](Index ch) {
      Index t0 = ch * R;
      onehotOf(j, t0);
      kb.copy(onehot, onehotLds);
      kb.fill(rank, 0.0);
      kb.gemm(onehotLds, upperLds, rank);  // pairs of the expert up to this one, in this step
      kb.add(base, offset, seen);
      kb.add(rank, rank, base);
      kb.mul(rank, rank, onehot);  // slot + 1 on the pair's expert, 0 elsewhere
      kb.copy(rank, valT, {.transpose = true});
      kb.copy(valT, val);
      kb.reduce(ReduceKind::sum, val, pos);
      kb.addScalar(pos, pos, -1.0);  // -1: no pair (past the last token)
      kb.iota(tok, 0, t0);
      kb.scatter(tok, pos, sorted);
      kb.store(pos, kb.window(positions, {j * T}, {T}), {t0});
      kb.reduce(ReduceKind::sum, onehot, seen, {.axis = 1, .accumulate = true});
    });
  });

  // 4. the expert of every block, and the padded total.
  Tile se = kb.regTile("seg_end_bcast", {EC, R}, DType::f32);
  kb.fill(se, 0.0);
  kb.add(se, se, segEnd);
  Tile seT = kb.ldsTile("seg_end_t_lds", {R, EC}, DType::f32);
  kb.copy(se, seT, {.transpose = true});
  Tile ends = kb.regTile("ends", {R, EC}, DType::f32);  // ends[b][e] = segment end of expert e
  Tile start = kb.regTile("block_start", {R}, DType::f32), count = kb.regTile("count", {R}, DType::f32);
  Tile flag = kb.regTile("past_total", {R}, DType::f32);
  kb.copy(seT, ends);
  kb.mask(ends, 0, 0, E);  // padding experts: -inf
  kb.reduce(ReduceKind::max, ends, count);
  kb.store(count, total, {0});  // the padded total (one element lands)
  kb.forLoop(0, cdiv(blockExperts.dim(0), R), 1, {.name = "b"}, [&](Index b) {
    kb.copy(seT, ends);
    kb.iota(start, 0, b * R);
    kb.scale(start, start, double(BM));
    kb.le(ends, ends, start);
    kb.mask(ends, 0, 0, E);
    kb.relu(ends, ends);
    kb.reduce(ReduceKind::sum, ends, count);  // experts that end at or before the block
    kb.addScalar(flag, count, -double(E));
    kb.scale(start, count, 0.0);
    kb.eq(flag, flag, start);  // 1: every expert ends before (past the total)
    kb.scale(flag, flag, -double(E + 1));
    kb.add(count, count, flag);
    kb.store(count, blockExperts, {b * R});
  });

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

} // namespace tilec::kernels
