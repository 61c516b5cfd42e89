#include "Variants.h"

#include "Target/Target.h"

#include <set>

namespace tilec::hashes {

std::string Variant::paramsText() const {
  std::string s;
  for (const auto &[key, value] : params)  // a std::map: key order
    s += (s.empty() ? "" : ",") + key + "=" + value;
  return s.empty() ? "-" : s;
}

namespace {

using Params = kernels::KernelParams;

/// Which targets a variant is compiled for.
enum class On {
  Every,
  Amd,
  Cdna,  ///< AMD's wave64 targets (gfx1151 keeps one stage, too few for ping-pong)
  Gfx942,
  Sm90a,
};

struct Entry {
  const char *kernel;
  Params params;
  On on = On::Every;
};

/// The variants, per kernel. Sizes that are run-time arguments only (M, seq_q,
/// tokens, ...) do not change the code and are left at their defaults, except
/// the GEMM's N and K, whose divisibility selects the `_div<K>x<N>` kernels.
const std::vector<Entry> &entries() {
  static const std::vector<Entry> list = {
      // GEMM: A/B and C types, ragged shapes (K and N odd: element-wise loads,
      // `_div1x1`; K a multiple of 4 and N of 2: `_div4x2`), the wave schedules
      // of the k loop, the naive LDS layout and the grouped tile order.
      {"gemm", {}},
      {"gemm", {{"dtype", "f16"}}},
      {"gemm", {{"out", "bf16"}}},
      {"gemm", {{"dtype", "f16"}, {"out", "bf16"}}},
      {"gemm", {{"M", "100"}, {"N", "71"}, {"K", "33"}}},
      {"gemm", {{"M", "100"}, {"N", "70"}, {"K", "36"}, {"dtype", "f16"}}},
      {"gemm", {{"dtype", "fp8"}}, On::Gfx942},
      {"gemm", {{"dtype", "fp8"}, {"out", "bf16"}}, On::Gfx942},
      {"gemm", {{"dtype", "bf8"}}, On::Gfx942},
      {"gemm", {{"dtype", "bf8"}, {"out", "bf16"}}, On::Gfx942},
      {"gemm", {{"dtype", "fp8"}, {"M", "100"}, {"N", "71"}, {"K", "33"}}, On::Gfx942},
      // OCP fp8 on sm_90a (mma.sync m16n8k32): both formats, bf16 out, the
      // layout torch._scaled_mm takes (nt) and ragged sizes.
      {"gemm", {{"dtype", "e4m3"}}, On::Sm90a},
      {"gemm", {{"dtype", "e4m3"}, {"out", "bf16"}}, On::Sm90a},
      {"gemm", {{"dtype", "e5m2"}}, On::Sm90a},
      {"gemm", {{"dtype", "e4m3"}, {"layout", "nt"}, {"out", "bf16"}}, On::Sm90a},
      {"gemm", {{"dtype", "e4m3"}, {"M", "100"}, {"N", "71"}, {"K", "33"}}, On::Sm90a},
      // Block-scaled fp8 (scaling=block, DeepSeek-V3's recipe) in its layout
      // (nt) with bf16 out, and ragged.
      {"gemm", {{"dtype", "fp8"}, {"scaling", "block"}, {"layout", "nt"}, {"out", "bf16"}}, On::Gfx942},
      {"gemm", {{"dtype", "fp8"}, {"scaling", "block"}, {"M", "100"}, {"N", "71"}, {"K", "33"}}, On::Gfx942},
      {"gemm", {{"dtype", "e4m3"}, {"scaling", "block"}, {"layout", "nt"}, {"out", "bf16"}}, On::Sm90a},
      {"gemm", {{"dtype", "e4m3"}, {"scaling", "block"}, {"M", "100"}, {"N", "71"}, {"K", "33"}}, On::Sm90a},
      {"gemm", {{"schedule", "interleave+setprio"}}, On::Amd},
      {"gemm", {{"schedule", "pingpong+interleave+setprio"}, {"stages", "3"}}, On::Cdna},
      {"gemm", {{"lds_layout", "naive"}}, On::Gfx942},
      {"gemm", {{"group_m", "8"}, {"xcds", "8"}}, On::Gfx942},
      // Strided operands and a batch (lda, ldb, ldc, batch strides): rows
      // of 16-byte multiples, and any stride and alignment.
      {"gemm", {{"strided", "1"}}},
      {"gemm", {{"strided", "1"}, {"layout", "nt"}, {"out", "bf16"}}},
      {"gemm", {{"strided", "1"}, {"divisibility", "1"}}},
      // Attention forward: types, causal and sliding-window masks, GQA, the
      // smaller head, and a packed ragged batch (varlen).
      {"attention", {}},
      {"attention", {{"dtype", "f16"}}},
      {"attention", {{"causal", "1"}}},
      {"attention", {{"causal", "1"}, {"window", "64"}}},
      {"attention", {{"kv_heads", "2"}}},
      {"attention", {{"varlen", "1"}, {"batch", "3"}, {"causal", "1"}, {"kv_heads", "2"}}},
      {"attention", {{"head_dim", "64"}}},
      // The other head sizes, with each target's tiles for them, and DeepSeek's
      // prefill (192 for Q and K, 128 for V).
      {"attention", {{"head_dim", "80"}}},
      {"attention", {{"head_dim", "96"}}},
      {"attention", {{"head_dim", "192"}}},
      {"attention", {{"head_dim", "256"}}},
      {"attention", {{"head_dim", "192"}, {"head_dim_v", "128"}, {"causal", "1"}}},
      // Attention backward: its three kernels, plain and causal with GQA.
      {"attention_bwd", {{"part", "fwd"}}},
      {"attention_bwd", {{"part", "dq"}}},
      {"attention_bwd", {{"part", "dkdv"}}},
      {"attention_bwd", {{"part", "dq"}, {"causal", "1"}, {"kv_heads", "2"}}},
      {"attention_bwd", {{"part", "dkdv"}, {"causal", "1"}, {"kv_heads", "2"}}},
      {"attention_bwd", {{"part", "dq"}, {"dtype", "f16"}}},
      {"attention_bwd", {{"part", "dq"}, {"head_dim", "80"}}},
      {"attention_bwd", {{"part", "dkdv"}, {"head_dim", "256"}}},
      {"attention_bwd", {{"part", "fwd"}, {"head_dim", "192"}, {"head_dim_v", "128"}}},
      {"attention_bwd", {{"part", "dq"}, {"head_dim", "192"}, {"head_dim_v", "128"}}},
      {"attention_bwd", {{"part", "dkdv"}, {"head_dim", "192"}, {"head_dim_v", "128"}}},
      // Paged decode: one pass, split-KV (attend and combine), GQA, 32-token
      // blocks, several new queries per sequence.
      {"paged_decode", {}},
      {"paged_decode", {{"dtype", "f16"}}},
      {"paged_decode", {{"splits", "4"}, {"part", "attend"}}},
      {"paged_decode", {{"splits", "4"}, {"part", "combine"}}},
      {"paged_decode", {{"kv_heads", "2"}}},
      {"paged_decode", {{"block_size", "32"}}},
      {"paged_decode", {{"q_per_seq", "4"}}},
      // MoE: the layer's five kernels and the stand-alone entries.
      {"moe", {{"part", "gate"}}},
      {"moe", {{"part", "align"}}},
      {"moe", {{"part", "gate_up"}}},
      {"moe", {{"part", "down"}}},
      {"moe", {{"part", "combine"}}},
      {"moe", {{"part", "gate_up"}, {"dtype", "f16"}}},
      {"moe_gate", {}},
      {"moe_gate", {{"dtype", "f32"}}},
      {"moe_align", {}},
      {"moe_experts", {{"part", "gate_up"}}},
      {"moe_experts", {{"part", "down"}}},
      {"moe_experts", {{"part", "combine"}}},
      // MLA decode: one pass, split-KV (attend and combine), 128 heads, the
      // fp8 latent cache (gfx942).
      {"mla_decode", {}},
      {"mla_decode", {{"splits", "4"}, {"part", "attend"}}},
      {"mla_decode", {{"splits", "4"}, {"part", "combine"}}},
      {"mla_decode", {{"heads", "128"}}},
      {"mla_decode", {{"kv_dtype", "fp8"}}, On::Gfx942},
      // Elementwise kernels (blocked layouts): types, the fused residual add,
      // and a hidden size that is not a multiple of 16 bytes.
      {"rms_norm", {}},
      {"rms_norm", {{"residual", "1"}}},
      {"rms_norm", {{"dtype", "f32"}}},
      {"rms_norm", {{"hidden", "1000"}}},
      {"rms_norm", {{"fp8_out", "1"}}},
      {"rms_norm", {{"fp8_out", "1"}, {"fp8_scale", "token"}}},
      {"rms_norm", {{"fp8_out", "1"}, {"fp8_scale", "group"}}},
      {"silu_and_mul", {}},
      {"silu_and_mul", {{"dtype", "f16"}}},
      {"silu_and_mul", {{"fp8_out", "1"}}},
      {"softmax", {}},
      {"softmax", {{"dtype", "f32"}}},
      {"rope", {}},
      {"rope", {{"style", "gptj"}}},
      {"rope", {{"dtype", "f32"}, {"head_dim", "80"}}},
  };
  return list;
}

bool compiledOn(On on, const TargetInfo &target) {
  switch (on) {
  case On::Every: return true;
  case On::Amd: return target.vendor == Vendor::AMD;
  case On::Cdna: return target.vendor == Vendor::AMD && target.waveSize == 64;
  case On::Gfx942: return target.arch == "gfx942";
  case On::Sm90a: return target.arch == "sm_90a";
  }
  return false;
}

} // namespace

std::vector<Variant> shippedVariants() {
  std::vector<Variant> out;
  for (const TargetInfo &target : knownTargets())
    for (const Entry &e : entries())
      if (compiledOn(e.on, target))
        out.push_back(Variant{e.kernel, target.arch, e.params});
  return out;
}

std::vector<std::string> uncoveredKernels() {
  std::set<std::string> covered;
  for (const Entry &e : entries())
    covered.insert(e.kernel);
  std::vector<std::string> out;
  for (const kernels::KernelInfo &k : kernels::shippedKernels())
    if (!covered.count(k.name))
      out.push_back(k.name);
  return out;
}

} // namespace tilec::hashes
