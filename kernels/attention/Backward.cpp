// The attention backward pass (dQ, dK, dV) in the tilec DSL, its problem and
// registry entry.
//
// With P = exp(S - LSE) recomputed from the forward's LSE (S = Q K^T * scale),
// Delta_i = rowsum(dO_i * O_i):
//   dV = P^T dO,   dP = dO V^T,   dS = P * (dP - Delta),   dK = scale * dS^T Q,   dQ = scale * dS K.
// dq: one workgroup per (query block, head, sequence) loops over the key
// blocks its rows see (the forward's bounds), writes Delta for dkdv.
// dkdv: one workgroup per (key block, kv head, sequence) loops over the query
// heads sharing the kv head and, for each, over the query blocks that see its
// keys; P^T and dS^T reach the matrix instructions through transposing copies
// into LDS. Both accumulate in f32 registers and store once.
#include "attention/Common.h"

#include <algorithm>
#include <cmath>

namespace tilec::kernels {

using namespace attention;

std::string attentionBwdKernelName(const AttentionBwdConfig &b) {
  const AttentionConfig &c = b.attn;
  if (b.part == AttentionBwdConfig::Part::Forward)
    return attentionKernelName(c);
  return std::string("attn_bwd_") + (b.part == AttentionBwdConfig::Part::DQ ? "dq_" : "dkdv_") +
         dtypeName(c.dtype) + "_h" + std::to_string(c.heads) + "_kv" + std::to_string(c.kvHeads) + "_" +
         headDimsName(c) + (c.causal ? "_causal" : "") +
         (c.window > 0 ? "_win" + std::to_string(c.window) : "") + "_" + std::to_string(b.blockM) + "x" +
         std::to_string(b.blockN) + "_w" + std::to_string(c.waves) + (c.stages > 1 ? "_s" + std::to_string(c.stages) : "");
}

static Result<Kernel> buildAttentionDQ(const AttentionBwdConfig &bc) {
  using namespace dsl;
  const AttentionConfig &c = bc.attn;
  const int64_t BM = bc.blockM, BN = bc.blockN, D = c.headDim, Dv = c.valueDim();
  const double log2e = 1.4426950408889634;
  KernelBuilder kb(attentionBwdKernelName(bc), {.numWaves = c.waves});
  const dsl::TensorOptions headRowOpts = headRows(c.dtype);
  Tensor Q = kb.tensor("Q", c.dtype, 2, headRowOpts), K = kb.tensor("K", c.dtype, 2, headRowOpts), V = kb.tensor("V", c.dtype, 2, headRowOpts);
  Tensor O = kb.tensor("O", c.dtype, 2, headRowOpts), LSE = kb.tensor("LSE", DType::f32, 2), dO = kb.tensor("dO", c.dtype, 2, headRowOpts);
  Tensor cuQ = kb.tensor("cu_seqlens_q", DType::i32, 1), cuK = kb.tensor("cu_seqlens_k", DType::i32, 1);
  Tensor dQ = kb.tensor("dQ", c.dtype, 2, headRowOpts), Delta = kb.tensor("Delta", DType::f32, 2);
  Scalar scale = kb.scalarF32("softmax_scale");
  Index maxSeqQ = kb.scalarI32("max_seqlen_q"), batch = kb.scalarI32("batch");
  kb.grid({GridExtent::ceilDiv(maxSeqQ, BM), GridExtent::fixed(c.heads), GridExtent::ceilDiv(batch, 1)});
  Index qb = kb.blockId(0), h = kb.blockId(1), b = kb.blockId(2);
  Index kvh = h / (c.heads / c.kvHeads);
  Sequence sq = sequenceOf(kb, cuQ, cuK, b);
  Tensor Qs = kb.window(Q, {sq.qStart, h * D}, {sq.lq, D}), dOs = kb.window(dO, {sq.qStart, h * Dv}, {sq.lq, Dv});
  Tensor Os = kb.window(O, {sq.qStart, h * Dv}, {sq.lq, Dv}), dQs = kb.window(dQ, {sq.qStart, h * D}, {sq.lq, D});
  Tensor Ls = kb.window(LSE, {sq.qStart, h}, {sq.lq, 1}), Ds = kb.window(Delta, {sq.qStart, h}, {sq.lq, 1});
  Tensor Ks = kb.window(K, {sq.kStart, kvh * D}, {sq.lk, D}), Vs = kb.window(V, {sq.kStart, kvh * Dv}, {sq.lk, Dv});
  Index q0 = qb * BM;
  auto keys = keysSeenBy(c, sq, q0, BM);
  Index maskRow = q0 + sq.lk - sq.lq, lk = sq.lk;

  Tile qT = kb.ldsTile("q_lds", {BM, D}, c.dtype), doT = kb.ldsTile("do_lds", {BM, Dv}, c.dtype);
  Tile kT = kb.ldsTile("k_lds", {BN, D}, c.dtype), vT = kb.ldsTile("v_lds", {BN, Dv}, c.dtype);
  Tile dsT = kb.ldsTile("ds_lds", {BM, BN}, c.dtype);
  Tile s = kb.regTile("s", {BM, BN}, DType::f32), dp = kb.regTile("dp", {BM, BN}, DType::f32);
  Tile dq = kb.regTile("dq", {BM, D}, DType::f32);
  Tile o = kb.regTile("o", {BM, Dv}, c.dtype), dor = kb.regTile("do", {BM, Dv}, c.dtype);  // as loaded
  Tile prod = kb.regTile("o_do", {BM, Dv}, DType::f32);
  Tile lse = kb.regTile("lse", {BM}, DType::f32), delta = kb.regTile("delta", {BM}, DType::f32);

  kb.load(Qs, {q0, 0}, qT);
  kb.load(dOs, {q0, 0}, doT);
  // ---- Delta = rowsum(dO * O), kept for dkdv
  kb.load(Os, {q0, 0}, o);
  kb.load(dOs, {q0, 0}, dor);
  kb.mul(prod, o, dor);
  kb.reduce(ReduceKind::sum, prod, delta);
  kb.store(delta, Ds, {q0, 0});
  kb.load(Ls, {q0, 0}, lse);
  kb.scale(lse, lse, log2e);  // base 2, as S below
  kb.fill(dq, 0.0);
  kb.forLoop(keys.first / BN, cdiv(keys.second, BN), 1, {.numStages = c.stages, .name = "kb"}, [&](Index j) {
    Index k0 = j * BN;
    kb.load(Ks, {k0, 0}, kT);
    kb.load(Vs, {k0, 0}, vT);
    // ---- P = exp2(S * scale * log2(e) - LSE * log2(e)), masked
    kb.fill(s, 0.0);
    kb.gemm(qT, kT, s, {.transposeB = true});
    kb.scale(s, s, scale, log2e);
    kb.mask(s, maskRow, k0, lk, {.causal = c.causal, .window = c.window});
    kb.subExp2(s, s, lse);
    // ---- dS = P * (dO V^T - Delta);  dQ += dS K
    kb.fill(dp, 0.0);
    kb.gemm(doT, vT, dp, {.transposeB = true});
    kb.sub(dp, dp, delta);
    kb.mul(dp, dp, s);
    kb.copy(dp, dsT);
    kb.gemm(dsT, kT, dq);
  });
  kb.scale(dq, dq, scale);
  kb.store(dq, dQs, {q0, 0});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

static Result<Kernel> buildAttentionDKDV(const AttentionBwdConfig &bc) {
  using namespace dsl;
  const AttentionConfig &c = bc.attn;
  const int64_t BM = bc.blockM, BN = bc.blockN, D = c.headDim, Dv = c.valueDim(), G = c.heads / c.kvHeads;
  const double log2e = 1.4426950408889634;
  KernelBuilder kb(attentionBwdKernelName(bc), {.numWaves = c.waves});
  const dsl::TensorOptions headRowOpts = headRows(c.dtype);
  Tensor Q = kb.tensor("Q", c.dtype, 2, headRowOpts), K = kb.tensor("K", c.dtype, 2, headRowOpts), V = kb.tensor("V", c.dtype, 2, headRowOpts);
  Tensor LSE = kb.tensor("LSE", DType::f32, 2), dO = kb.tensor("dO", c.dtype, 2, headRowOpts);
  Tensor Delta = kb.tensor("Delta", DType::f32, 2);
  Tensor cuQ = kb.tensor("cu_seqlens_q", DType::i32, 1), cuK = kb.tensor("cu_seqlens_k", DType::i32, 1);
  Tensor dK = kb.tensor("dK", c.dtype, 2, headRowOpts), dV = kb.tensor("dV", c.dtype, 2, headRowOpts);
  Scalar scale = kb.scalarF32("softmax_scale");
  Index maxSeqK = kb.scalarI32("max_seqlen_k"), batch = kb.scalarI32("batch");
  kb.grid({GridExtent::ceilDiv(maxSeqK, BN), GridExtent::fixed(c.kvHeads), GridExtent::ceilDiv(batch, 1)});
  Index kbk = kb.blockId(0), kvh = kb.blockId(1), b = kb.blockId(2);
  Sequence sq = sequenceOf(kb, cuQ, cuK, b);
  Tensor Ks = kb.window(K, {sq.kStart, kvh * D}, {sq.lk, D}), Vs = kb.window(V, {sq.kStart, kvh * Dv}, {sq.lk, Dv});
  Tensor dKs = kb.window(dK, {sq.kStart, kvh * D}, {sq.lk, D}), dVs = kb.window(dV, {sq.kStart, kvh * Dv}, {sq.lk, Dv});
  Index k0 = kbk * BN;
  auto queries = queriesSeeing(c, sq, k0, BN);
  Index lk = sq.lk, lq = sq.lq;

  Tile kT = kb.ldsTile("k_lds", {BN, D}, c.dtype), vT = kb.ldsTile("v_lds", {BN, Dv}, c.dtype);
  Tile qT = kb.ldsTile("q_lds", {BM, D}, c.dtype), doT = kb.ldsTile("do_lds", {BM, Dv}, c.dtype);
  Tile ptT = kb.ldsTile("pt_lds", {BN, BM}, c.dtype), dstT = kb.ldsTile("dst_lds", {BN, BM}, c.dtype);
  Tile s = kb.regTile("s", {BM, BN}, DType::f32), dp = kb.regTile("dp", {BM, BN}, DType::f32);
  Tile dk = kb.regTile("dk", {BN, D}, DType::f32), dv = kb.regTile("dv", {BN, Dv}, DType::f32);
  Tile lse = kb.regTile("lse", {BM}, DType::f32), delta = kb.regTile("delta", {BM}, DType::f32);

  kb.load(Ks, {k0, 0}, kT);
  kb.load(Vs, {k0, 0}, vT);
  kb.fill(dk, 0.0);
  kb.fill(dv, 0.0);
  kb.forLoop(0, G, 1, {.name = "g"}, [&](Index g) {
    Index h = kvh * G + g;
    Tensor Qs = kb.window(Q, {sq.qStart, h * D}, {lq, D}), dOs = kb.window(dO, {sq.qStart, h * Dv}, {lq, Dv});
    Tensor Ls = kb.window(LSE, {sq.qStart, h}, {lq, 1}), Ds = kb.window(Delta, {sq.qStart, h}, {lq, 1});
    kb.forLoop(queries.first / BM, cdiv(queries.second, BM), 1, {.numStages = c.stages, .name = "qb"}, [&](Index i) {
      Index q0 = i * BM;
      kb.load(Qs, {q0, 0}, qT);
      kb.load(dOs, {q0, 0}, doT);
      kb.load(Ls, {q0, 0}, lse);
      kb.load(Ds, {q0, 0}, delta);
      kb.scale(lse, lse, log2e);
      // ---- P = exp2(S * scale * log2(e) - LSE * log2(e)), masked;  dV += P^T dO
      kb.fill(s, 0.0);
      kb.gemm(qT, kT, s, {.transposeB = true});
      kb.scale(s, s, scale, log2e);
      kb.mask(s, q0 + lk - lq, k0, lk, {.causal = c.causal, .window = c.window});
      kb.subExp2(s, s, lse);
      kb.copy(s, ptT, {.transpose = true});
      kb.gemm(ptT, doT, dv);
      // ---- dS = P * (dO V^T - Delta);  dK += dS^T Q
      kb.fill(dp, 0.0);
      kb.gemm(doT, vT, dp, {.transposeB = true});
      kb.sub(dp, dp, delta);
      kb.mul(dp, dp, s);
      kb.copy(dp, dstT, {.transpose = true});
      kb.gemm(dstT, qT, dk);
    });
  });
  kb.scale(dk, dk, scale);
  kb.store(dk, dKs, {k0, 0});
  kb.store(dv, dVs, {k0, 0});
  Kernel kernel = kb.finish();
  if (!kernel.ok())
    return Error{kernel.error()};
  return kernel;
}

Result<Kernel> buildAttentionBwd(const AttentionBwdConfig &b) {
  if (auto e = kvHeadsError("attention_bwd", b.attn.heads, b.attn.kvHeads))
    return *e;
  switch (b.part) {
  case AttentionBwdConfig::Part::Forward: return buildAttention(b.attn);
  case AttentionBwdConfig::Part::DQ: return buildAttentionDQ(b);
  case AttentionBwdConfig::Part::DKDV: return buildAttentionDKDV(b);
  }
  return Error{"attention_bwd: unknown part"};
}

namespace {

/// The attention backward problem: the forward's outputs and the three
/// gradients, checked against a double-precision reference.
///
/// Tolerances (u = 2^-24, uIn = unit roundoff of Q's type). The forward's O
/// and LSE carry the forward's tolerances (attendRow: outTol, lseTol). Then,
/// for query row i and key j, with A_ij = |dP_ij - Delta_i|:
///   P: relative error eP_i = exp(E_i + lseTol_i) - 1 (recomputed scores as in
///      the forward, minus the kernel's LSE);
///   dP = dO.V_j in f32 over Dv values: eDP_ij = (Dv + 2) u sum|dO||V_j|;
///   Delta = dO.O in f32 from the kernel's O: eDelta_i = sum_d |dO_id| outTol_id + (Dv + 2) u sum|dO||O|;
///   dS, rounded to Q's type for the matrix instruction:
///      edS_ij = P_ij [(1 + eP)(1 + uIn)(1 + 2u)(A_ij + eDP_ij + eDelta_i) - A_ij] + sub(dS_ij, edS_ij);
///   sums over n terms in f32: gamma_n = (n + 8) u;
///   dV_jd: sum_i |dO_id| (P_ij [(1 + eP_i)(1 + uIn)(1 + gamma) - 1] + sub(P_ij, P_ij eP_i)),
///   dK_jd: |scale| sum_i (edS_ij + |dS_ij| gamma) |Q_id| (1 + 2u),
///   dQ_id: |scale| sum_j (edS_ij + |dS_ij| gamma) |K_jd| (1 + 2u),
///   each then rounded to Q's type: + uIn (|ref| + bound) + h.
/// Rounding to Q's type errs by uIn relative only in its normal range; below
/// it by up to h, half the smallest subnormal (2^-25 f16, 2^-134 bf16). And
/// gfx90a's MFMAs flush an operand below the smallest normal n (2^-14 f16,
/// 2^-126 bf16) to zero (TargetInfo::matrixFlushes16BitSubnormals), losing it
/// whole. So an operand x known to within e adds sub(x, e) = h + (|x| - e < n ? |x| : 0).
Problem attentionBwdProblem(const AttentionConfig &c, const std::vector<int64_t> &seqQ,
                            const std::vector<int64_t> &seqK, double scale) {
  Problem prob = attentionProblem(c, seqQ, seqK, scale);
  const int64_t batch = static_cast<int64_t>(seqQ.size()), H = c.heads, KH = c.kvHeads, D = c.headDim;
  const int64_t Dv = c.valueDim();
  const int64_t totalQ = prob.tensors[0].shape[0], totalK = prob.tensors[1].shape[0];
  const int64_t maxQ = *std::max_element(seqQ.begin(), seqQ.end());
  const int64_t maxK = *std::max_element(seqK.begin(), seqK.end());
  // Tensors 0..6 as the forward's (Q, K, V, O, LSE, cu_seqlens_q, cu_seqlens_k).
  prob.tensors.push_back({"dO", c.dtype, {totalQ, H * Dv}});
  prob.tensors.push_back({"dQ", c.dtype, {totalQ, H * D}, /*output=*/true});
  prob.tensors.push_back({"dK", c.dtype, {totalK, KH * D}, /*output=*/true});
  prob.tensors.push_back({"dV", c.dtype, {totalK, KH * Dv}, /*output=*/true});
  prob.tensors.push_back({"Delta", DType::f32, {totalQ, H}, false, {}, /*scratch=*/true});
  auto f32 = [](const char *n, double v, size_t pos) { return ScalarSpec{n, static_cast<float>(v), pos}; };
  auto i32 = [](const char *n, int64_t v, size_t pos) { return ScalarSpec{n, static_cast<float>(v), pos, true}; };
  prob.launches = {
      {{{"part", "fwd"}}, {0, 1, 2, 3, 4, 5, 6}, {f32("softmax_scale", scale, 7), i32("max_seqlen_q", maxQ, 8), i32("batch", batch, 9)}},
      {{{"part", "dq"}}, {0, 1, 2, 3, 4, 7, 5, 6, 8, 11}, {f32("softmax_scale", scale, 10), i32("max_seqlen_q", maxQ, 11), i32("batch", batch, 12)}},
      {{{"part", "dkdv"}}, {0, 1, 2, 4, 7, 11, 5, 6, 9, 10}, {f32("softmax_scale", scale, 10), i32("max_seqlen_k", maxK, 11), i32("batch", batch, 12)}},
  };
  prob.scalars.clear();
  prob.toleranceRule += "; gradients: P error e^(E+lseTol)-1, dP and Delta f32 dot products (Delta from the kernel's O), "
                        "dS rounded to Q's type, f32 sums (n+8)*2^-24, outputs rounded to Q's type; "
                        "below Q's normal range a rounding errs by half its smallest subnormal and P and dS may be "
                        "flushed to 0 (gfx90a)";
  auto forward = prob.reference;
  const double u = std::ldexp(1.0, -24), uIn = unitRoundoff(c.dtype), log2e = 1.4426950408889634;
  const double halfSubnormal = std::ldexp(1.0, c.dtype == DType::bf16 ? -134 : -25);
  const double minNormal = std::ldexp(1.0, c.dtype == DType::bf16 ? -126 : -14);
  auto sub = [=](double x, double e) {
    return halfSubnormal + (std::fabs(x) - e < minNormal ? std::fabs(x) : 0.0);
  };
  const AttentionConfig cfg = c;
  std::vector<double> cuQ = prob.tensors[5].values, cuK = prob.tensors[6].values;
  prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                       std::vector<std::vector<double>> &tolerance) {
    forward(v, expected, tolerance);  // O, LSE and their tolerances
    const std::vector<double> &q = v[0], &k = v[1], &val = v[2], &dO = v[7];
    const std::vector<double> &O = expected[0], &L = expected[1], &Otol = tolerance[0], &Ltol = tolerance[1];
    std::vector<double> dQ(totalQ * H * D, 0.0), dK(totalK * KH * D, 0.0), dV(totalK * KH * Dv, 0.0);
    std::vector<double> tQ(dQ.size(), 0.0), tK(dK.size(), 0.0), tV(dV.size(), 0.0);
    const int64_t group = H / cfg.kvHeads;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t lq = seqQ[b], lk = seqK[b], q0 = static_cast<int64_t>(cuQ[b]), k0 = static_cast<int64_t>(cuK[b]);
      const double gQ = double(lk + 8) * u, gK = double(lq * group + 8) * u;
      for (int64_t h = 0; h < H; ++h) {
        const int64_t kh = h / group;
        for (int64_t i = 0; i < lq; ++i) {
          const int64_t row = (q0 + i) * H + h, pos = i + lk - lq;
          if (L[row] == -INFINITY)
            continue;  // no key visible: P = 0
          const double *qi = &q[row * D], *doi = &dO[row * Dv], *oi = &O[row * Dv], *oti = &Otol[row * Dv];
          double delta = 0, eDelta = 0;
          for (int64_t d = 0; d < Dv; ++d) {
            delta += doi[d] * oi[d];
            eDelta += std::fabs(doi[d]) * oti[d] + double(Dv + 2) * u * std::fabs(doi[d] * oi[d]);
          }
          for (int64_t j = 0; j < lk; ++j) {
            if ((cfg.causal && j > pos) || (cfg.window > 0 && j <= pos - cfg.window))
              continue;
            const double *kj = &k[((k0 + j) * KH + kh) * D], *vj = &val[((k0 + j) * KH + kh) * Dv];
            double dot = 0, mag = 0, dp = 0, eDP = 0;
            for (int64_t d = 0; d < D; ++d) {
              dot += qi[d] * kj[d];
              mag += std::fabs(qi[d] * kj[d]);
            }
            for (int64_t d = 0; d < Dv; ++d) {
              dp += doi[d] * vj[d];
              eDP += std::fabs(doi[d] * vj[d]);
            }
            eDP *= double(Dv + 2) * u;
            const double sij = scale * dot, P = std::exp(sij - L[row]);
            const double E = double(D + 3) * u * std::fabs(scale) * mag +
                             std::ldexp(1.0, -20) * (1 + std::fabs(sij - L[row]) * log2e);
            const double eP = std::exp(E + Ltol[row]) - 1;
            const double A = std::fabs(dp - delta), dS = P * (dp - delta);
            const double edSRel = P * ((1 + eP) * (1 + uIn) * (1 + 2 * u) * (A + eDP + eDelta) - A);
            // dS and P as the matrix instructions' operands, in Q's type
            const double edS = edSRel + sub(dS, edSRel), ePOperand = sub(P, P * eP);
            double *dkj = &dK[((k0 + j) * KH + kh) * D], *dvj = &dV[((k0 + j) * KH + kh) * Dv];
            double *tkj = &tK[((k0 + j) * KH + kh) * D], *tvj = &tV[((k0 + j) * KH + kh) * Dv];
            for (int64_t d = 0; d < Dv; ++d) {
              dvj[d] += P * doi[d];
              tvj[d] += std::fabs(doi[d]) * (P * ((1 + eP) * (1 + uIn) * (1 + gK) - 1) + ePOperand);
            }
            for (int64_t d = 0; d < D; ++d) {
              dkj[d] += scale * dS * qi[d];
              tkj[d] += std::fabs(scale) * (edS + std::fabs(dS) * gK) * std::fabs(qi[d]) * (1 + 2 * u);
              dQ[row * D + d] += scale * dS * kj[d];
              tQ[row * D + d] += std::fabs(scale) * (edS + std::fabs(dS) * gQ) * std::fabs(kj[d]) * (1 + 2 * u);
            }
          }
        }
      }
    }
    for (std::vector<double> *ref : {&dQ, &dK, &dV}) {
      std::vector<double> &t = ref == &dQ ? tQ : ref == &dK ? tK : tV;
      for (size_t x = 0; x < ref->size(); ++x)
        t[x] += uIn * (std::fabs((*ref)[x]) + t[x]) + halfSubnormal;
    }
    expected.push_back(std::move(dQ));
    expected.push_back(std::move(dK));
    expected.push_back(std::move(dV));
    tolerance.push_back(std::move(tQ));
    tolerance.push_back(std::move(tK));
    tolerance.push_back(std::move(tV));
  };
  return prob;
}

} // namespace

KernelInfo attentionBwdKernelInfo() {
  KernelInfo info = attentionKernelInfo();
  info.name = "attention_bwd";
  info.summary = "attention backward: dQ, dK, dV for the attention forward (causal, window, GQA, varlen); "
                 "deterministic (no atomics); --run launches fwd, dq, dkdv";
  for (KernelParam &p : info.params) {
    if (p.name == "block_m")
      p = {"block_m", "32", "query rows per block of dq and dkdv", p.spec};
    else if (p.name == "block_n")  // 32: dkdv's dK and dV accumulators fit gfx1151's registers
      p = {"block_n", "32", "keys per block of dq and dkdv", p.spec};
  }
  info.params.push_back({"part", "dq", "the kernel to compile: fwd (the forward, for O and LSE) | dq | dkdv",
                         ParamSpec::oneOf({"fwd", "dq", "dkdv"})});
  info.params.push_back({"fwd_block_n", "64",
                         "keys per step of the forward that computes O and LSE (NVIDIA targets: 32; AMD with "
                         "head_dim 192: 32, 256: 16)",
                         ParamSpec::oneOf({"16", "32", "64"})});
  // NVIDIA: 8 warps (dK and dV of a 32-key block in 4 warps spill), and the
  // forward over 32-key steps (64 spill; one stage spills at 256). AMD: the forward's key block as the
  // forward entry picks it for the LDS, and dq's and dkdv's halved until their
  // tiles fit it too (dkdv's: K, V [BN, D + Dv], Q, dO [BM, D + Dv] and the
  // transposed P and dS [BN, BM]; head_dim 256: 16 keys). The waves split a
  // 32 x 32 block's tiles as a grid of 2 x 2 (AMD) or 2 x 4 (NVIDIA): a 16-key
  // block or a head size that is not a multiple of 32 (80) takes 2 waves on
  // AMD, 4 warps on NVIDIA. gfx1151 spills a few registers from head_dim 96
  // up (--emit=report), the price of its 256 VGPRs.
  // NVIDIA with head size 128: 128 x 64 blocks over 8 warps (dq: 128 query
  // rows per workgroup, 64 keys per step; dkdv: 64 keys per workgroup, 128
  // query rows per step), the largest that compile without spills (242 and
  // 254 registers). On the H200 (B2 H16 S2048 D128 causal,
  // docs/perf/h200/2026-12-03-h200-run19-bwd-tiles.json) dq + dkdv take
  // 0.633 ms against 1.697 ms at 32 x 32; other head sizes spill at 128 x 64
  // and keep 32 x 32. NVIDIA pipelines the loops of every part 2 deep (the
  // next blocks copied during a step, cp.async: no registers, no spills at
  // any head size): 0.587 ms against 0.649 ms at head size 128 (run20, the
  // same as FlashAttention-2's backward in that run); the other head sizes
  // are not measured.
  info.targetDefaults = [](KernelParams &p, const TargetInfo &t) {
    const auto [d, dv] = givenHeadDims(p);
    const bool oddHeads = d % 32 != 0 || dv % 32 != 0;
    if (t.vendor == Vendor::NVIDIA) {
      if (d == 128 && dv == 128) {
        p.try_emplace("block_m", "128");
        p.try_emplace("block_n", "64");
      }
      p.try_emplace("waves", oddHeads ? "4" : "8");
      p.try_emplace("fwd_block_n", "32");
      p.try_emplace("stages", "2");
      return;
    }
    p.try_emplace("fwd_block_n", std::to_string(keyBlockForLds(t, 64, 64, d, dv, 1)));
    int64_t bm = givenInteger(p, "block_m", 32), bn = givenInteger(p, "block_n", 32);
    while (bn > 16 && 2 * ((bm + bn) * (d + dv) + 2 * bm * bn) > t.ldsBytesPerWorkgroup)
      bn /= 2;
    p.try_emplace("block_n", std::to_string(bn));
    if (bn < 32 || oddHeads)
      p.try_emplace("waves", "2");
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<std::pair<AttentionBwdConfig, AttentionParams>> {
    ParamReader own(name, params, given);  // part and fwd_block_n are the backward's own
    const std::string part = own.choice("part"), fwdBlockN = own.choice("fwd_block_n");
    if (!own.ok())
      return own.error();
    KernelParams rest = given;
    rest.erase("part");
    rest.erase("fwd_block_n");
    std::vector<KernelParam> attnParams;
    for (const KernelParam &p : params)
      if (p.name != "part" && p.name != "fwd_block_n")
        attnParams.push_back(p);
    Result<AttentionParams> a = readParams(name, attnParams, rest);
    if (!a)
      return Error{a.error()};
    AttentionBwdConfig b;
    b.attn = a->config;
    b.blockM = a->config.blockM;
    b.blockN = a->config.blockN;
    b.attn.blockM = 64;  // the forward's own blocks
    b.attn.blockN = std::stoll(fwdBlockN);
    if (part == "fwd")
      b.part = AttentionBwdConfig::Part::Forward;
    else if (part == "dq")
      b.part = AttentionBwdConfig::Part::DQ;
    else
      b.part = AttentionBwdConfig::Part::DKDV;
    return std::pair{b, *a};
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    auto r = read(given);
    if (!r)
      return Error{r.error()};
    return buildAttentionBwd(r->first);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    auto r = read(given);
    if (!r)
      return Error{r.error()};
    const AttentionParams &a = r->second;
    std::vector<int64_t> lq, lk;
    runLengths(a.batch, a.seqQ, a.seqK, a.varlen, lq, lk);
    return attentionBwdProblem(r->first.attn, lq, lk, a.scale);
  };
  return info;
}

} // namespace tilec::kernels
