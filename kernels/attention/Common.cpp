#include "attention/Common.h"

#include <algorithm>
#include <charconv>

namespace tilec::kernels::attention {

std::optional<Error> kvHeadsError(const std::string &who, int64_t heads, int64_t kvHeads) {
  if (kvHeads >= 1 && heads % kvHeads == 0)
    return std::nullopt;
  return Error{who + ": kv_heads (" + std::to_string(kvHeads) + ") must divide heads (" + std::to_string(heads) + ")"};
}

ParamSpec headDimSpec(std::vector<std::string> keywords) {
  for (const char *d : {"64", "80", "96", "128", "192", "256"})
    keywords.push_back(d);
  return ParamSpec::oneOf(std::move(keywords));
}

std::pair<int64_t, int64_t> givenHeadDims(const KernelParams &p) {
  const int64_t d = givenInteger(p, "head_dim", 128);
  return {d, givenInteger(p, "head_dim_v", d)};
}

int64_t keyBlockForLds(const TargetInfo &t, int64_t BM, int64_t BN, int64_t D, int64_t Dv, int64_t stages) {
  auto bytes = [&](int64_t bn) { return 2 * (BM * D + stages * bn * (D + Dv) + BM * bn); };
  while (BN > 16 && bytes(BN) > t.ldsBytesPerWorkgroup)
    BN /= 2;
  return BN;
}

HeadParams readHeads(ParamReader &p) {
  HeadParams h;
  h.heads = p.integer("heads");
  h.kvHeads = p.integer("kv_heads");
  h.headDim = std::stoll(p.choice("head_dim"));
  h.dtype = p.dtype("dtype");
  h.scale = p.raw("scale") == "auto" ? 0 : p.real("scale");
  return h;
}

std::string headDimsName(const AttentionConfig &c) {
  return "d" + std::to_string(c.headDim) + (c.valueDim() != c.headDim ? "v" + std::to_string(c.valueDim()) : "");
}

Sequence sequenceOf(dsl::KernelBuilder &kb, const dsl::Tensor &cuQ, const dsl::Tensor &cuK, const dsl::Index &b) {
  using namespace dsl;
  Index qStart = kb.loadIndex(cuQ, b), kStart = kb.loadIndex(cuK, b);
  return {qStart, kStart, max(kb.loadIndex(cuQ, b + 1), qStart) - qStart,
          max(kb.loadIndex(cuK, b + 1), kStart) - kStart};
}

std::pair<dsl::Index, dsl::Index> keysSeenBy(const AttentionConfig &c, const Sequence &sq, const dsl::Index &q0,
                                             int64_t BM) {
  using namespace dsl;
  Index active = min(sq.lq - min(sq.lq, q0), 1);
  Index end = sq.lk;
  if (c.causal)
    end = min(sq.lk, max(q0 + BM + sq.lk, sq.lq) - sq.lq);
  Index begin = 0;
  if (c.window > 0)
    begin = max(q0 + sq.lk + 1, sq.lq + c.window) - (sq.lq + c.window);
  return {begin, end * active};
}

std::pair<dsl::Index, dsl::Index> queriesSeeing(const AttentionConfig &c, const Sequence &sq, const dsl::Index &k0,
                                                int64_t BN) {
  using namespace dsl;
  Index active = min(sq.lk - min(sq.lk, k0), 1);
  Index begin = 0;
  if (c.causal)  // query q sees key k0 once q >= k0 - (lk - lq)
    begin = max(k0 + sq.lq, sq.lk) - sq.lk;
  Index end = sq.lq;
  if (c.window > 0)  // query q sees the block's last key while q < k0 + BN - 1 - lk + lq + window
    end = min(sq.lq, max(k0 + BN - 1 + sq.lq + c.window, sq.lk) - sq.lk);
  return {min(begin, end), end * active};
}

dsl::TensorOptions headRows(DType t) { return {.divisibility = 16 / dtypeBytes(t)}; }

void runLengths(int64_t batch, int64_t seqQ, int64_t seqK, bool varlen, std::vector<int64_t> &lq,
                std::vector<int64_t> &lk) {
  lq.clear();
  lk.clear();
  for (int64_t b = 0; b < batch; ++b) {
    int64_t q = varlen ? std::max<int64_t>(1, seqQ - (b * (2 * seqQ + 7)) / (2 * batch + 1)) : seqQ;
    int64_t k = varlen ? std::max<int64_t>(1, seqK - (seqQ - q)) : seqK;
    lq.push_back(q);
    lk.push_back(k);
  }
}

Result<AttentionParams> readParams(const std::string &name, const std::vector<KernelParam> &params,
                                   const KernelParams &given) {
  ParamReader p(name, params, given);
  AttentionParams a;
  AttentionConfig &c = a.config;
  a.batch = p.integer("batch");
  HeadParams h = readHeads(p);
  a.seqQ = p.integer("seq_q");
  a.seqK = p.raw("seq_k") == "seq_q" ? a.seqQ : p.integer("seq_k");
  const std::string headDimV = p.choice("head_dim_v");
  c.causal = p.integer("causal") == 1;
  c.window = p.integer("window");
  a.varlen = p.integer("varlen") == 1;
  c.blockM = p.integer("block_m");
  c.blockN = p.integer("block_n");
  c.waves = static_cast<int>(p.integer("waves"));
  c.stages = static_cast<int>(p.integer("stages"));
  if (!p.ok())
    return p.error();
  if (auto e = applyHeads(name, h, c))
    return *e;
  c.headDimV = headDimV == "head_dim" ? 0 : std::stoll(headDimV);
  a.scale = h.scale;
  return a;
}

} // namespace tilec::kernels::attention
