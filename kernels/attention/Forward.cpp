// Attention forward (prefill), FlashAttention-2 style, in the tilec DSL.
//
// Layout (packed variable-length batch, as inference engines pack prefill):
//   Q, O   [total_q, heads * D]      sequence b is rows cu_seqlens_q[b] .. cu_seqlens_q[b+1]
//   K, V   [total_k, kv_heads * D]   likewise with cu_seqlens_k; head h reads kv head
//                                     h / (heads / kv_heads) (GQA; MQA with one kv head)
//   LSE    [total_q, heads] f32       log-sum-exp of each query row's scores (natural log),
//                                     for the backward pass and split-KV combining
// Grid: ceil(max_seqlen_q / BM) x heads x batch; one workgroup computes BM query rows of
// one head of one sequence. Windows (tile.window) cut that sequence's rows and that head's
// columns out of the packed tensors, so ragged lengths need no padding: loads past the
// sequence read 0 and stores past it are dropped.
//
// Per workgroup (default BM = BN = 64, D = 128, 4 waves, bf16):
//   q_lds [BM, D]        the query block, loaded once               16 KiB
//   k_lds, v_lds [BN, D] one key/value block per step (per stage)    32 KiB
//   p.lds [BM, BN]       the probabilities, rounded to Q's type       8 KiB
//                        (only where S's accumulator layout is not the
//                        operand layout of P @ V: AMD; NVIDIA's mma.sync
//                        reads P from registers, tilec-infer-layouts)
//   registers: S [BM, BN] and O [BM, D] f32 accumulators, row vectors m, l (f32)
// Head sizes: D (Q, K) and Dv (V, O) each 64, 80, 96, 128, 192 or 256, unpadded;
// every one is a multiple of the matrix instructions' k and n (16 on AMD, 8 on
// NVIDIA), so the k loop and O's columns cover them exactly. Above 128 the
// buffers above outgrow AMD's 64 KiB of LDS at BN = 64: the target defaults
// halve BN (D = 192: 32 keys, 52 KiB; D = 256: 16 keys, 50 KiB) and give
// NVIDIA's O [64, D] 8 warps (4 spill) with 32-key steps.
// Online softmax in base 2: S is scaled by softmax_scale * log2(e), so P = exp2(S - m)
// and LSE = (m + log2(l)) * ln(2). Causal and sliding-window blocks that are wholly
// masked are skipped by the key loop's bounds; the blocks on the diagonal are masked
// (tile.mask). Causal masks align to the bottom right (query i sees keys up to
// i + seq_k - seq_q), as FlashAttention does when seq_q != seq_k.
#include "attention/Common.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilec::kernels {

using namespace attention;

std::string attentionKernelName(const AttentionConfig &c) {
  return "attn_fwd_" + std::string(dtypeName(c.dtype)) + "_h" + std::to_string(c.heads) + "_kv" +
         std::to_string(c.kvHeads) + "_" + headDimsName(c) + (c.causal ? "_causal" : "") +
         (c.window > 0 ? "_win" + std::to_string(c.window) : "") + "_" + std::to_string(c.blockM) + "x" +
         std::to_string(c.blockN) + "_w" + std::to_string(c.waves) +
         (c.stages > 1 ? "_s" + std::to_string(c.stages) : "") + (c.vTransposed ? "_vt" : "");
}

Result<Kernel> buildAttention(const AttentionConfig &c) {
  using namespace dsl;
  if (auto e = kvHeadsError("attention", c.heads, c.kvHeads))
    return *e;
  const int64_t BM = c.blockM, BN = c.blockN, D = c.headDim, Dv = c.valueDim();

  KernelBuilder kb(attentionKernelName(c), {.numWaves = c.waves});

  const dsl::TensorOptions headRowOpts = headRows(c.dtype);
  Tensor Q = kb.tensor("Q", c.dtype, 2, headRowOpts);
  Tensor K = kb.tensor("K", c.dtype, 2, headRowOpts);
  Tensor V = kb.tensor("V", c.dtype, 2, headRowOpts);
  Tensor O = kb.tensor("O", c.dtype, 2, headRowOpts);
  Tensor LSE = kb.tensor("LSE", DType::f32, 2);
  Tensor cuQ = kb.tensor("cu_seqlens_q", DType::i32, 1);
  Tensor cuK = kb.tensor("cu_seqlens_k", DType::i32, 1);
  Scalar scale = kb.scalarF32("softmax_scale");
  Index maxSeqQ = kb.scalarI32("max_seqlen_q");
  Index batch = kb.scalarI32("batch");

  kb.grid({GridExtent::ceilDiv(maxSeqQ, BM), GridExtent::fixed(c.heads), GridExtent::ceilDiv(batch, 1)});
  Index qb = kb.blockId(0), h = kb.blockId(1), b = kb.blockId(2);
  Index kvh = h / (c.heads / c.kvHeads);

  Sequence sq = sequenceOf(kb, cuQ, cuK, b);
  Tensor Qs = kb.window(Q, {sq.qStart, h * D}, {sq.lq, D});
  Tensor Ks = kb.window(K, {sq.kStart, kvh * D}, {sq.lk, D});
  Tensor Vs = kb.window(V, {sq.kStart, kvh * Dv}, {sq.lk, Dv});
  Tensor Os = kb.window(O, {sq.qStart, h * Dv}, {sq.lq, Dv});
  Tensor Ls = kb.window(LSE, {sq.qStart, h}, {sq.lq, 1});
  Index q0 = qb * BM;
  auto [keyBegin, keyEnd] = keysSeenBy(c, sq, q0, BM);
  Index maskRow = q0 + sq.lk - sq.lq;  // query row q0 in key coordinates (may be negative)
  Index lk = sq.lk;

  OnlineSoftmax sm(kb, BM, BN, D, Dv, c.dtype, c.vTransposed);
  kb.load(Qs, {q0, 0}, sm.q);
  sm.init();
  // With stages >= 2, tilec-pipeline-loops loads the K and V blocks of the
  // next steps while this one computes (past the end they read zeros).
  kb.forLoop(keyBegin / BN, cdiv(keyEnd, BN), 1, {.numStages = c.stages, .name = "kb"}, [&](Index j) {
    Index k0 = j * BN;
    kb.load(Ks, {k0, 0}, sm.k);
    sm.loadV(Vs, k0);
    sm.step(scale, maskRow, k0, lk, {.causal = c.causal, .window = c.window});
  });
  sm.finish(Os, Ls, q0);

  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

Problem attentionProblem(const AttentionConfig &c, const std::vector<int64_t> &seqQ,
                         const std::vector<int64_t> &seqK, double scale) {
  const int64_t batch = static_cast<int64_t>(seqQ.size()), H = c.heads, KH = c.kvHeads, D = c.headDim;
  const int64_t Dv = c.valueDim();
  std::vector<double> cuQ{0}, cuK{0};
  for (int64_t b = 0; b < batch; ++b) {
    cuQ.push_back(cuQ.back() + static_cast<double>(seqQ[b]));
    cuK.push_back(cuK.back() + static_cast<double>(seqK[b]));
  }
  const int64_t totalQ = static_cast<int64_t>(cuQ.back()), totalK = static_cast<int64_t>(cuK.back());
  const int64_t maxQ = *std::max_element(seqQ.begin(), seqQ.end());

  Problem prob;
  prob.tensors = {
      {"Q", c.dtype, {totalQ, H * D}},
      {"K", c.dtype, {totalK, KH * D}},
      {"V", c.dtype, {totalK, KH * Dv}},
      {"O", c.dtype, {totalQ, H * Dv}, /*output=*/true},
      {"LSE", DType::f32, {totalQ, H}, /*output=*/true},
      {"cu_seqlens_q", DType::i32, {batch + 1}, false, cuQ},
      {"cu_seqlens_k", DType::i32, {batch + 1}, false, cuK},
  };
  // Arguments: Q, K, V, O, LSE, cu_seqlens_q, cu_seqlens_k, then the scalars.
  prob.scalars = {{"softmax_scale", static_cast<float>(scale), 7},
                  {"max_seqlen_q", static_cast<float>(maxQ), 8, true},
                  {"batch", static_cast<float>(batch), 9, true}};

  const double uIn = unitRoundoff(c.dtype);
  const AttentionConfig cfg = c;
  prob.toleranceRule = std::string(kToleranceRule) + ", uIn = " + (c.dtype == DType::bf16 ? "2^-8 (bf16)" : "2^-11 (f16)");
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    const std::vector<double> &q = v[0], &k = v[1], &val = v[2];
    std::vector<double> out(totalQ * H * Dv, 0.0), outTol(totalQ * H * Dv, 0.0);
    std::vector<double> lse(totalQ * H, 0.0), lseTol(totalQ * H, 0.0);
    const int64_t group = H / cfg.kvHeads;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t lq = seqQ[b], lk = seqK[b], q0 = static_cast<int64_t>(cuQ[b]), k0 = static_cast<int64_t>(cuK[b]);
      for (int64_t h = 0; h < H; ++h) {
        const int64_t kh = h / group;
        for (int64_t i = 0; i < lq; ++i) {
          const int64_t pos = i + lk - lq;  // the query's position in key coordinates
          RowKeys keys;
          keys.count = lk;
          keys.visible = [&](int64_t j) {
            return !((cfg.causal && j > pos) || (cfg.window > 0 && j <= pos - cfg.window));
          };
          keys.k = [&](int64_t j) { return &k[(k0 + j) * KH * D + kh * D]; };
          keys.v = [&](int64_t j) { return &val[(k0 + j) * KH * Dv + kh * Dv]; };
          const int64_t row = (q0 + i) * H + h;
          attendRow(&q[row * D], D, scale, uIn, cfg.blockN, keys, &out[row * Dv], &outTol[row * Dv], lse[row],
                    lseTol[row], /*splits=*/1, Dv);
        }
      }
    }
    expected = {std::move(out), std::move(lse)};
    tolerance = {std::move(outTol), std::move(lseTol)};
  };
  return prob;
}

KernelInfo attentionKernelInfo() {
  KernelInfo info;
  info.name = "attention";
  info.summary = "FlashAttention-2 forward: O = softmax(Q K^T * scale) V and LSE over a packed varlen batch; "
                 "bf16/f16, causal, sliding window, GQA/MQA";
  info.params = {
      {"batch", "1", "sequences in the batch (run-time; used by --run)", ParamSpec::integer(1, 4096)},
      {"heads", "8", "query heads", ParamSpec::integer(1, 256)},
      {"kv_heads", "8", "key/value heads; divides heads (GQA; 1: MQA)", ParamSpec::integer(1, 256)},
      {"seq_q", "128", "query length, the longest with varlen=1 (run-time; used by --run)",
       ParamSpec::integer(1, int64_t(1) << 20)},
      {"seq_k", "seq_q", "key length (run-time; used by --run); causal masks align to the bottom right",
       ParamSpec::integer(1, int64_t(1) << 20, {"seq_q"})},
      {"head_dim", "128", "Q and K head size: 64 | 80 | 96 | 128 | 192 | 256", headDimSpec()},
      {"head_dim_v", "head_dim", "V and O head size (DeepSeek prefill: head_dim=192, head_dim_v=128)",
       headDimSpec({"head_dim"})},
      {"causal", "0", "1: causal mask", ParamSpec::integer(0, 1)},
      {"window", "0", "sliding window: each query sees this many keys up to its own (0: off)",
       ParamSpec::integer(0, int64_t(1) << 20)},
      {"dtype", "bf16", "bf16 | f16 (Q, K, V, O; LSE is f32)", ParamSpec::dtype({DType::bf16, DType::f16})},
      {"varlen", "0", "--run: 1 gives the sequences different lengths up to seq_q (packed, no padding)",
       ParamSpec::integer(0, 1)},
      {"scale", "auto", "softmax scale, a kernel argument (auto: 1/sqrt(head_dim))", ParamSpec::real({"auto"})},
      {"block_m", "64", "query rows per workgroup", ParamSpec::integer(16, 256)},
      {"block_n", "64", "keys per step of the key loop", ParamSpec::integer(16, 256)},
      {"waves", "4", "wavefronts per workgroup (gfx1151: block_n=32)", ParamSpec::integer(1, 16)},
      {"stages", "1",
       "software-pipelining depth of the key loop: 2 loads the next K and V blocks during a step (targets: 2; "
       "on AMD, where two LDS buffers of K and V do not fit, the next blocks wait in registers)",
       ParamSpec::integer(1, 4)},
      {"v_lds", "kn",
       "V's LDS tile: kn (as stored, [block_n, head_dim_v]) | nk (transposed on the way in: AMD's matrix "
       "instructions then read P V's operand 16 bytes at a time, not one element). AMD targets: nk",
       ParamSpec::oneOf({"kn", "nk"})},
  };
  info.build = [name = info.name, params = info.params](const KernelParams &given) -> Result<Kernel> {
    Result<AttentionParams> a = readParams(name, params, given);
    if (!a)
      return Error{a.error()};
    ParamReader p(name, params, given);
    a->config.vTransposed = p.choice("v_lds") == "nk";
    return buildAttention(a->config);
  };
  // NVIDIA: where the head sizes are multiples of 64 (rows of 128-byte
  // swizzle blocks), both products run on wgmma (S from Q and K in shared
  // memory, P @ V with P in registers), a warpgroup per 64 query rows, the key
  // loop pipelined 2 stages deep (K and V by tensor copies). On the H200 (B4
  // H32 S4096 D128, docs/perf/h200/2026-12-02-h200-run9.json): 128 x 128 over
  // two warpgroups, non-causal 415 TFLOP/s and causal 361, ahead of 64 x 64
  // over one (363, 331) and 128 x 64 (353, 313). Above 128
  // (256; DeepSeek's 192/128) 128 x 64 over two warpgroups: O [64, 256] is 128
  // registers a thread, no spills. Other head sizes (80, 96) keep mma.sync's
  // 64 x 64 over 4 warps, P read from registers likewise (run5: 195/223,
  // ahead of 128 x 64 and 128 x 32), with 8 warps and 32-key steps above 128.
  // gfx1151 (wave32 WMMA): 32 keys per step; with 16-byte K/V loads a 64-key
  // step takes 247-256 of its 256 VGPRs and spills with GQA; it keeps one
  // stage. gfx942 and gfx90a: 128 query rows over 8 waves, 32 keys per step
  // (Q, K, V and P in 56 KiB of LDS: one workgroup of 8 waves per CU, 2 waves
  // per SIMD, where 64 x 64 over 4 waves has one), the key loop pipelined 2
  // deep with one LDS buffer of K and V (the next blocks wait in registers,
  // tilec-pipeline-loops). AMD stores V transposed in LDS (v_lds=nk): P V's
  // operand reads then move 16 bytes, not 2. Modelled on MI300X (S4096 D128,
  // docs/perf/notes.md, "Attention's key loop on gfx942"): 516 us against
  // 834 us for 64 x 64 over 4 waves with the same changes, 1,338 us before them.
  // Head sizes above 128: AMD halves the key block until Q, K, V and P fit
  // the 64 KiB of LDS (D = 192: 32 keys, 52 KiB; D = 256: 16 keys, 50 KiB; the
  // registers then hold O [64, 256] in 64 of wave64's VGPRs, 128 of wave32's).
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    const auto [d, dv] = givenHeadDims(p);
    if (t.vendor == Vendor::NVIDIA) {
      p.try_emplace("stages", "2");
      if (d % 64 == 0 && dv % 64 == 0) {  // wgmma
        const bool wide = std::max(d, dv) > 128;
        p.try_emplace("block_m", "128");
        p.try_emplace("waves", "8");
        p.try_emplace("block_n", wide ? "64" : "128");
      } else if (std::max(d, dv) > 128) {
        p.try_emplace("waves", "8");
        p.try_emplace("block_n", "32");
      }
    } else {
      if (t.hasAgprs) {
        p.try_emplace("stages", "2");
        if (std::max(d, dv) <= 128) {  // Q [128, D] then takes at most 32 KiB
          p.try_emplace("block_m", "128");
          p.try_emplace("waves", "8");
        }
      }
      const int64_t bm = givenInteger(p, "block_m", 64), stages = givenInteger(p, "stages", 1);
      // gfx1151 prefetching K and V (stages 2) has no registers left for
      // transposing V on the way in (20 bytes of scratch at block_n 32).
      p.try_emplace("v_lds", t.hasAgprs || stages == 1 ? "nk" : "kn");
      const int64_t bn = givenInteger(p, "block_n", t.waveSize == 32 ? 32 : 64);
      p.try_emplace("block_n", std::to_string(keyBlockForLds(t, bm, bn, d, dv, t.hasAgprs ? 1 : stages)));
    }
  };
  info.problem = [name = info.name, params = info.params](const KernelParams &given) -> Result<Problem> {
    Result<AttentionParams> a = readParams(name, params, given);
    if (!a)
      return Error{a.error()};
    std::vector<int64_t> lq, lk;
    runLengths(a->batch, a->seqQ, a->seqK, a->varlen, lq, lk);
    return attentionProblem(a->config, lq, lk, a->scale);
  };
  return info;
}

} // namespace tilec::kernels
