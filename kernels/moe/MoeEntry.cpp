// The registry entries of the MoE kernels (`tilec --kernel=moe_gate | moe_align |
// moe_experts | moe`): their `-p` parameters, how the parameters become the
// configurations of Moe.h, and the problems of MoeReference.h they are run on.
#include "moe/MoeEntry.h"

#include "moe/Moe.h"
#include "moe/MoeReference.h"

#include "Params.h"

#include <random>

namespace tilec::kernels {

KernelInfo moeGateKernelInfo() {
  KernelInfo info;
  info.name = "moe_gate";
  info.summary = "MoE gating: softmax over the experts' logits, top-k experts per token (ties: lowest index), "
                 "optionally renormalised weights";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 24)},
      {"experts", "8", "experts, 1..128", ParamSpec::integer(1, 128)},
      {"topk", "2", "experts per token, 1..8", ParamSpec::integer(1, 8)},
      {"renormalize", "1", "1: the k weights are divided by their sum", ParamSpec::integer(0, 1)},
      {"dtype", "bf16", "bf16 | f16 | f32 (logits)", ParamSpec::dtype({DType::bf16, DType::f16, DType::f32})},
      {"waves", "4", "wavefronts per workgroup (16 tokens each)", ParamSpec::integer(1, 16)},
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given, int64_t *tokens)
      -> Result<MoeGateConfig> {
    ParamReader p(name, params, given);
    MoeGateConfig c;
    *tokens = p.integer("tokens");
    c.experts = p.integer("experts");
    c.topk = p.integer("topk");
    c.renormalize = p.integer("renormalize") == 1;
    c.dtype = p.dtype("dtype");
    c.waves = static_cast<int>(p.integer("waves"));
    if (!p.ok())
      return p.error();
    if (c.topk > c.experts)
      return Error{"kernel 'moe_gate': topk (" + std::to_string(c.topk) + ") exceeds experts (" +
                   std::to_string(c.experts) + ")"};
    return c;
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    int64_t tokens = 0;
    Result<MoeGateConfig> c = read(given, &tokens);
    if (!c)
      return Error{c.error()};
    return buildMoeGate(*c);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    int64_t tokens = 0;
    Result<MoeGateConfig> c = read(given, &tokens);
    if (!c)
      return Error{c.error()};
    return moeGateProblem(*c, tokens);
  };
  return info;
}

KernelInfo moeExpertsKernelInfo() {
  KernelInfo info;
  info.name = "moe_experts";
  info.summary = "MoE expert GEMMs over the token alignment: gate_up (gathered rows, fused SwiGLU), down, "
                 "and the deterministic weighted combine (three kernels; --run routes on the host)";
  info.params = {
      {"part", "gate_up", "gate_up | down | combine: the kernel --emit compiles (--run runs all three)",
       ParamSpec::oneOf({"gate_up", "down", "combine"})},
      {"tokens", "64", "tokens (run-time; used by --run)", ParamSpec::integer(1, int64_t(1) << 20)},
      {"experts", "8", "experts (run-time; used by --run)", ParamSpec::integer(1, 512)},
      {"topk", "2", "experts per token, 1..8 (combine)", ParamSpec::integer(1, 8)},
      {"hidden", "128", "hidden size (run-time; the expert kernels assume the powers of two dividing it, up to 16 bytes)",
       ParamSpec::integer(1, int64_t(1) << 16)},
      {"intermediate", "256", "intermediate size (run-time; the expert kernels assume the powers of two dividing it, up to 16 bytes)",
       ParamSpec::integer(1, int64_t(1) << 16)},
      {"routing", "random", "--run: random | one (every token's first choice is expert experts/2)",
       ParamSpec::oneOf({"random", "one"})},
      {"dtype", "bf16", "bf16 | f16", ParamSpec::dtype({DType::bf16, DType::f16})},
      {"block_m", "32", "sorted rows per block (the alignment's padding)", ParamSpec::integer(16, 256)},
      {"block_n", "64", "output columns per workgroup", ParamSpec::integer(16, 256)},
      {"block_k", "32", "k step", ParamSpec::integer(16, 128)},
      {"waves", "4", "wavefronts per workgroup", ParamSpec::integer(1, 16)},
      {"stages", "2", "software-pipelining depth of the gate_up and down k loops (1..4)", ParamSpec::integer(1, 4)},
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<MoeExpertsProblemConfig> {
    ParamReader p(name, params, given);
    MoeExpertsProblemConfig c;
    MoeExpertsConfig &k = c.kernels;
    std::string part = p.choice("part");
    k.part = part == "gate_up" ? MoeExpertsConfig::Part::GateUp
             : part == "down"  ? MoeExpertsConfig::Part::Down
                               : MoeExpertsConfig::Part::Combine;
    c.tokens = p.integer("tokens");
    c.experts = p.integer("experts");
    k.topk = p.integer("topk");
    c.hidden = p.integer("hidden");
    c.intermediate = p.integer("intermediate");
    c.routing = p.choice("routing") == "one" ? MoeExpertsProblemConfig::Routing::OneExpert
                                                                : MoeExpertsProblemConfig::Routing::Random;
    k.dtype = p.dtype("dtype");
    k.blockM = p.integer("block_m");
    k.blockN = p.integer("block_n");
    k.blockK = p.integer("block_k");
    k.waves = static_cast<int>(p.integer("waves"));
    k.stages = static_cast<int>(p.integer("stages"));
    if (!p.ok())
      return p.error();
    k.divisibilityHidden = moeDivisibility(c.hidden, k.dtype);
    k.divisibilityInter = moeDivisibility(c.intermediate, k.dtype);
    if (k.topk > c.experts)
      return Error{"kernel 'moe_experts': topk (" + std::to_string(k.topk) + ") exceeds experts (" +
                   std::to_string(c.experts) + ")"};
    return c;
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<MoeExpertsProblemConfig> c = read(given);
    if (!c)
      return Error{c.error()};
    return buildMoeExperts(c->kernels);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<MoeExpertsProblemConfig> c = read(given);
    if (!c)
      return Error{c.error()};
    return moeExpertsProblem(*c, 0);
  };
  return info;
}

KernelInfo moeAlignKernelInfo() {
  KernelInfo info;
  info.name = "moe_align";
  info.summary = "MoE token alignment: (token, expert) pairs sorted by expert into block-padded segments "
                 "(sorted token ids, block experts, positions, padded total)";
  info.params = {
      {"tokens", "64", "tokens (run-time; used by --run), at most 65536", ParamSpec::integer(1, 65536)},
      {"experts", "8", "experts, 1..64", ParamSpec::integer(1, 64)},
      {"topk", "2", "experts per token (run-time; used by --run)", ParamSpec::integer(1, 8)},
      {"routing", "random", "--run: random | one (every token's first choice is expert experts/2)",
       ParamSpec::oneOf({"random", "one"})},
      {"block_m", "32", "the expert GEMMs' block_m: segments are padded to it", ParamSpec::integer(16, 256)},
      {"waves", "4", "wavefronts per workgroup", ParamSpec::integer(1, 16)},
      {"stages", "2", "software-pipelining depth of the expert GEMMs' k loops (1..4)", ParamSpec::integer(1, 4)},
  };
  struct Read {
    MoeAlignConfig config;
    int64_t tokens = 0, topk = 0;
    bool one = false;
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<Read> {
    ParamReader p(name, params, given);
    Read r;
    r.tokens = p.integer("tokens");
    r.config.experts = p.integer("experts");
    r.topk = p.integer("topk");
    r.one = p.choice("routing") == "one";
    r.config.blockM = p.integer("block_m");
    r.config.waves = static_cast<int>(p.integer("waves"));
    if (!p.ok())
      return p.error();
    if (r.topk > r.config.experts)
      return Error{"kernel 'moe_align': topk (" + std::to_string(r.topk) + ") exceeds experts (" +
                   std::to_string(r.config.experts) + ")"};
    return r;
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    return buildMoeAlign(r->config);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    std::mt19937_64 rng(0x616c69676eull);
    const int64_t T = r->tokens, K = r->topk, E = r->config.experts, BM = r->config.blockM;
    std::vector<int64_t> ids = routeTokens(T, E, K, r->one, rng);
    MoeAlignment a = alignTokens(ids, T, K, E, BM);
    const int64_t P = static_cast<int64_t>(a.sortedTokenIds.size());
    Problem prob;
    prob.tensors = {
        {"topk_ids", DType::i32, {T, K}, false, std::vector<double>(ids.begin(), ids.end())},
        {"sorted_token_ids", DType::i32, {P}, true},
        {"block_experts", DType::i32, {P / BM}, true},
        {"positions", DType::i32, {K * T}, true},
        {"total_padded", DType::i32, {1}, true},
    };
    prob.toleranceRule = "exact (integers)";
    prob.reference = [a](const std::vector<std::vector<double>> &, std::vector<std::vector<double>> &expected,
                         std::vector<std::vector<double>> &tolerance) {
      auto d = [](const std::vector<int64_t> &v) { return std::vector<double>(v.begin(), v.end()); };
      expected = {d(a.sortedTokenIds), d(a.blockExperts), d(a.positions), {double(a.paddedTotal)}};
      tolerance.clear();
      for (const std::vector<double> &e : expected)
        tolerance.emplace_back(e.size(), 0.0);
    };
    return prob;
  };
  return info;
}

KernelInfo moeKernelInfo() {
  KernelInfo info;
  info.name = "moe";
  info.summary = "MoE layer: gate (softmax, top-k) -> token alignment -> gate_up (gathered, SwiGLU) -> down -> "
                 "combine, five kernels";
  info.params = {
      {"part", "gate_up", "gate | align | gate_up | down | combine: the kernel --emit compiles (--run runs all five)",
       ParamSpec::oneOf({"gate", "align", "gate_up", "down", "combine"})},
      {"tokens", "64", "tokens (run-time; used by --run), at most 65536", ParamSpec::integer(1, 65536)},
      {"experts", "8", "experts, 1..64", ParamSpec::integer(1, 64)},
      {"topk", "2", "experts per token, 1..8", ParamSpec::integer(1, 8)},
      {"hidden", "128", "hidden size (run-time; the expert kernels assume the powers of two dividing it, up to 16 bytes)",
       ParamSpec::integer(1, int64_t(1) << 16)},
      {"intermediate", "256", "intermediate size (run-time; the expert kernels assume the powers of two dividing it, up to 16 bytes)",
       ParamSpec::integer(1, int64_t(1) << 16)},
      {"renormalize", "1", "1: the k weights are divided by their sum", ParamSpec::integer(0, 1)},
      {"routing", "random", "--run: random logits | one (expert experts/2 has the largest logit of every token)",
       ParamSpec::oneOf({"random", "one"})},
      {"dtype", "bf16", "bf16 | f16 (logits, activations, weights, output)",
       ParamSpec::dtype({DType::bf16, DType::f16})},
      {"block_m", "32", "sorted rows per expert-GEMM block (the alignment's padding)", ParamSpec::integer(16, 256)},
      {"block_n", "64", "output columns per workgroup of the expert GEMMs and the combine",
       ParamSpec::integer(16, 256)},
      {"block_k", "32", "k step of the expert GEMMs", ParamSpec::integer(16, 128)},
      {"waves", "4", "wavefronts per workgroup", ParamSpec::integer(1, 16)},
      {"stages", "2", "software-pipelining depth of the expert GEMMs' k loops (1..4)", ParamSpec::integer(1, 4)},
  };
  struct Read {
    std::string part;
    MoeGateConfig gate;
    MoeAlignConfig align;
    MoeExpertsConfig experts;
    int64_t tokens = 0, hidden = 0, intermediate = 0;
    bool oneExpert = false;
  };
  auto read = [name = info.name, params = info.params](const KernelParams &given) -> Result<Read> {
    ParamReader p(name, params, given);
    Read r;
    r.part = p.choice("part");
    r.oneExpert = p.choice("routing") == "one";
    r.tokens = p.integer("tokens");
    const int64_t E = p.integer("experts"), K = p.integer("topk");
    r.hidden = p.integer("hidden");
    r.intermediate = p.integer("intermediate");
    const bool renorm = p.integer("renormalize") == 1;
    const DType dtype = p.dtype("dtype");
    const int64_t BM = p.integer("block_m"), BN = p.integer("block_n"),
                  BK = p.integer("block_k");
    const int waves = static_cast<int>(p.integer("waves"));
    const int stages = static_cast<int>(p.integer("stages"));
    if (!p.ok())
      return p.error();
    if (K > E)
      return Error{"kernel 'moe': topk (" + std::to_string(K) + ") exceeds experts (" + std::to_string(E) + ")"};
    r.gate = {dtype, E, K, renorm, waves};
    r.align = {E, BM, waves};
    r.experts.dtype = dtype;
    r.experts.topk = K;
    r.experts.blockM = BM;
    r.experts.blockN = BN;
    r.experts.blockK = BK;
    r.experts.waves = waves;
    r.experts.stages = stages;
    // The expert kernels assume what hidden and intermediate are multiples
    // of (specialised on that, not on the sizes).
    r.experts.divisibilityHidden = moeDivisibility(r.hidden, dtype);
    r.experts.divisibilityInter = moeDivisibility(r.intermediate, dtype);
    r.experts.part = r.part == "down"      ? MoeExpertsConfig::Part::Down
                     : r.part == "combine" ? MoeExpertsConfig::Part::Combine
                                           : MoeExpertsConfig::Part::GateUp;
    return r;
  };
  info.build = [read](const KernelParams &given) -> Result<Kernel> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    if (r->part == "gate")
      return buildMoeGate(r->gate);
    if (r->part == "align")
      return buildMoeAlign(r->align);
    return buildMoeExperts(r->experts);
  };
  info.problem = [read](const KernelParams &given) -> Result<Problem> {
    Result<Read> r = read(given);
    if (!r)
      return Error{r.error()};
    const int64_t T = r->tokens, E = r->gate.experts, K = r->gate.topk, Hd = r->hidden, I = r->intermediate;
    const int64_t BM = r->align.blockM;
    const int64_t P = roundUp(T * K + E * (BM - 1), BM);
    const DType dt = r->gate.dtype;
    // routing=one: logits k/64 (exact in bf16 and f16) with expert E/2 at 4
    // for every token; otherwise random inputs.
    std::vector<double> logits;
    if (r->oneExpert) {
      std::mt19937_64 rng(0x6c6f67ull);
      for (int64_t i = 0; i < T * E; ++i)
        logits.push_back(i % E == E / 2 ? 4.0 : double(std::uniform_int_distribution<int>(-64, 63)(rng)) / 64.0);
    }
    Problem prob;
    prob.tensors = {
        {"logits", dt, {T, E}, false, logits},                               // 0
        {"X", dt, {T, Hd}},                                                  // 1
        {"W13", dt, {E * 2 * I, Hd}},                                        // 2
        {"W2", dt, {E * Hd, I}},                                             // 3
        {"topk_weights", DType::f32, {T, K}, false, {}, /*scratch=*/true},   // 4
        {"topk_ids", DType::i32, {T, K}, false, {}, true},                   // 5
        {"sorted_token_ids", DType::i32, {P}, false, {}, true},              // 6
        {"block_experts", DType::i32, {P / BM}, false, {}, true},            // 7
        {"positions", DType::i32, {K * T}, false, {}, true},                 // 8
        {"total_padded", DType::i32, {1}, false, {}, true},                  // 9
        {"H", dt, {P, I}, false, {}, true},                                  // 10
        {"Y", DType::f32, {P, Hd}, false, {}, true},                         // 11
        {"out", dt, {T, Hd}, /*output=*/true},                               // 12
    };
    prob.launches = {
        {{{"part", "gate"}}, {0, 4, 5}, {}},
        {{{"part", "align"}}, {5, 6, 7, 8, 9}, {}},
        {{{"part", "gate_up"}}, {1, 2, 6, 7, 10}, {}},
        {{{"part", "down"}}, {10, 3, 7, 11}, {}},
        {{{"part", "combine"}}, {11, 8, 4, 12}, {}},
    };
    // The gate's choices are exact (the reference picks the same experts from
    // the same logits); its weights carry the gate's tolerance into the
    // experts' bound.
    prob.toleranceRule = "gate weights within (2X + 6 + E + K) 2^-24 relative, then " + expertsToleranceRule(dt);
    const MoeGateConfig gate = r->gate;
    prob.reference = [=](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                         std::vector<std::vector<double>> &tolerance) {
      GateReference g = gateReference(gate, T, v[0]);
      expected.assign(1, {});
      tolerance.assign(1, {});
      expertsReference({T, K, Hd, I, dt}, v[1], v[2], v[3], g.ids, g.weights, g.weightTol, expected[0],
                       tolerance[0]);
    };
    return prob;
  };
  return info;
}

} // namespace tilec::kernels
