// Roofline model of the shipped attention kernels (issue 5), as tilec compiles
// them for each target's device (MI300X, Strix Halo, one MI250X GCD) with the
// target's default tiles. Modelled, never measured: no AMD GPU is involved.
//
//   BM_ModelAttention/<kernel>/<arch>/<case>  counters:
//     flop            useful FLOPs: 2 * (D + Dv) per visible (query, key) pair (S over
//                     head_dim D, P V over head_dim_v Dv)
//     matrix_instr    matrix instructions the kernel issues (whole blocks, masked or
//                     not; the instruction and tile shapes read from the compiled IR)
//     matrix_us       their cycles spread evenly over every SIMD of the device
//     step_overhead_us  kKStepOverheadCycles per key step and workgroup (barriers,
//                     loop control), divided among the workgroups resident at once
//     memory_bytes    distinct bytes read and written once (Q, K, V or the KV cache, O, LSE)
//     l2_bytes        bytes the workgroups load (K/V blocks re-read per query block or token)
//     memory_us       memory_bytes at the device's memory bandwidth
//     modelled_us     max(matrix_us + step_overhead_us, memory_us): a lower bound
//                     (the softmax's VALU work and latency are not modelled)
//     modelled_tflops, pct_peak (of the device's dense matrix peak for the type),
//     pct_bandwidth (of its memory bandwidth: what bounds decode)
#include "attention/Attention.h"
#include "ModelCommon.h"
#include "Registry.h"
#include "Tune/CostModel.h"

#include "tilec/tilec.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct AttentionCase {
  const char *name;
  const char *kernel;  ///< attention | paged_decode
  tilec::kernels::KernelParams params;
  int64_t batch, seqQ, seqK;  ///< per sequence (decode: seqQ = q_per_seq, seqK = context)
};

const AttentionCase kCases[] = {
    {"prefill_b1_h32_kv8_s4096_d128_causal", "attention",
     {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}, {"causal", "1"}}, 1, 4096, 4096},
    {"prefill_b1_h32_kv8_s4096_d128", "attention",
     {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}}, 1, 4096, 4096},
    {"prefill_b8_h16_kv16_s1024_d64_causal", "attention",
     {{"heads", "16"}, {"kv_heads", "16"}, {"head_dim", "64"}, {"causal", "1"}}, 8, 1024, 1024},
    // Head size 256 (Gemma 2: 16 heads over 8 kv heads) and DeepSeek-V3's prefill
    // (128 heads, 192 for Q and K, 128 for V).
    {"prefill_b1_h16_kv8_s4096_d256_causal", "attention",
     {{"heads", "16"}, {"kv_heads", "8"}, {"head_dim", "256"}, {"causal", "1"}}, 1, 4096, 4096},
    {"prefill_b1_h128_kv128_s4096_d192v128_causal", "attention",
     {{"heads", "128"}, {"kv_heads", "128"}, {"head_dim", "192"}, {"head_dim_v", "128"}, {"causal", "1"}}, 1, 4096,
     4096},
    {"decode_b32_h32_kv8_ctx4096_d128", "paged_decode",
     {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}}, 32, 1, 4096},
};

using tilec::bench::param;

void BM_ModelAttention(benchmark::State &state, std::string arch, AttentionCase c) {
  const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel(c.kernel);
  const tilec::TargetInfo *target = tilec::lookupTarget(arch);
  const tilec::tune::DevicePeaks *peaks = tilec::tune::devicePeaks(arch);
  if (!info || !target || !peaks) {
    state.SkipWithError("unknown kernel or target");
    return;
  }
  const tilec::kernels::KernelParams params = tilec::kernels::withTargetDefaults(*info, c.params, arch);
  tilec::Result<tilec::Kernel> k = info->build(params);
  if (!k) {
    state.SkipWithError(k.error().c_str());
    return;
  }
  tilec::Result<tilec::CompiledKernel> ck = tilec::compile(*k, {.arch = arch});
  if (!ck) {
    state.SkipWithError(ck.error().c_str());
    return;
  }
  const tilec::MatrixInstr *mi = tilec::bench::matrixInstrOf(*ck, *target);
  if (!mi) {
    state.SkipWithError("no matrix instruction in the compiled IR");
    return;
  }
  const bool decode = std::string(c.kernel) == "paged_decode";
  const int64_t H = param(*info, params, "heads"), KH = param(*info, params, "kv_heads");
  const int64_t D = param(*info, params, "head_dim"), G = H / KH;
  auto dv = params.find("head_dim_v");  // attention's default: head_dim
  const int64_t Dv = dv != params.end() && dv->second != "head_dim" ? std::stoll(dv->second) : D;
  const bool causal = param(*info, params, "causal") == 1;
  const int64_t BM = decode ? std::max<int64_t>(16, (G + 15) / 16 * 16) : param(*info, params, "block_m");
  const int64_t BN = decode ? param(*info, params, "block_size") : param(*info, params, "block_n");
  const double elem = 2;  // bf16

  double flops = 0, steps = 0, l2 = 0, memory = 0;
  for (auto _ : state) {
    flops = steps = l2 = 0;
    if (decode) {
      // One workgroup per (token, kv head): ceil(ctx / BN) key blocks, each read once.
      const double blocks = double((c.seqK + BN - 1) / BN);
      steps = double(c.batch) * c.seqQ * KH * blocks;
      flops = 4.0 * D * double(c.batch) * c.seqQ * H * c.seqK;
      l2 = steps * BN * D * 2 * elem;
      memory = double(c.batch) * (c.seqK * KH * D * 2 * elem + c.seqQ * H * (2 * D * elem + 4));
    } else {
      for (int64_t q0 = 0; q0 < c.seqQ; q0 += BM) {
        const int64_t end = causal ? std::min(c.seqK, q0 + BM + c.seqK - c.seqQ) : c.seqK;
        steps += double((std::max<int64_t>(end, 0) + BN - 1) / BN);
        for (int64_t i = q0; i < std::min(c.seqQ, q0 + BM); ++i)
          flops += 2.0 * (D + Dv) *
                   double(causal ? std::min(c.seqK, std::max<int64_t>(0, i + c.seqK - c.seqQ + 1)) : c.seqK);
      }
      steps *= double(c.batch * H);
      flops *= double(c.batch * H);
      l2 = steps * BN * (D + Dv) * elem + double(c.batch) * H * c.seqQ * D * elem;
      memory = double(c.batch) * (c.seqQ * H * (D + Dv) * elem + c.seqK * KH * (D + Dv) * elem + c.seqQ * H * 4);
    }
    benchmark::DoNotOptimize(flops);
  }
  // Two gemms per key step: S = Q K^T (BM x BN x D) and P V (BM x Dv x BN).
  const double instr = steps * double(BM * BN * (D + Dv)) / double(mi->m * mi->n * mi->k);
  const double cycles = instr * mi->cycles;
  // Each key step also costs its barriers and loop control, which the waves
  // of one workgroup cannot hide behind their own matrix work (the GEMM
  // model's kKStepOverheadCycles); workgroups resident together overlap.
  const int waves = static_cast<int>(param(*info, params, "waves"));
  const int resident = std::max(1, tilec::tune::residentWorkgroups(*target, *peaks, ck->report.vgpr, ck->report.agpr,
                                                                    ck->report.ldsBytes, waves));
  const double overheadSec =
      steps * tilec::tune::kKStepOverheadCycles / (double(peaks->units) * resident * peaks->clockHz);
  const double matrixSec =
      cycles / (double(peaks->units) * peaks->simdsPerUnit * peaks->clockHz) + overheadSec;
  const double memorySec = memory / peaks->hbmBytesPerSec;
  const double sec = std::max(matrixSec, memorySec);
  const double peak = tilec::tune::peakFlops(*target, *peaks, tilec::ElemType::BF16);
  auto &k2 = state.counters;
  k2["flop"] = flops;
  k2["matrix_instr"] = instr;
  k2["matrix_us"] = (matrixSec - overheadSec) * 1e6;
  k2["step_overhead_us"] = overheadSec * 1e6;
  k2["wg_per_unit"] = resident;
  k2["memory_bytes"] = memory;
  k2["l2_bytes"] = l2;
  k2["memory_us"] = memorySec * 1e6;
  k2["modelled_us"] = sec * 1e6;
  k2["modelled_tflops"] = flops / sec / 1e12;
  k2["pct_peak"] = 100.0 * flops / sec / peak;
  k2["memory_bound"] = memorySec > matrixSec;
  k2["pct_bandwidth"] = 100.0 * memory / sec / peaks->hbmBytesPerSec;
  k2["vgpr"] = ck->report.vgpr;
  k2["lds_bytes"] = static_cast<double>(ck->report.ldsBytes);
  k2["scratch_bytes"] = static_cast<double>(ck->report.scratchBytes);
  state.SetLabel(peaks->part + ", " + ck->name + ", " + mi->name);
}

} // namespace

namespace tilec::bench {

void registerAttentionModels() {
  for (const char *arch : {"gfx942", "gfx1151", "gfx90a"})
    for (const AttentionCase &c : kCases)
      benchmark::RegisterBenchmark((std::string("BM_ModelAttention/") + c.name + "/" + arch).c_str(),
                                   BM_ModelAttention, std::string(arch), c)
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(1);
}

} // namespace tilec::bench
