// Roofline model of the shipped mla_decode kernel (kernels/mla/MlaDecode.cpp)
// as tilec compiles it for each AMD target's device. Modelled, never
// measured: no AMD GPU is involved. The same model as AttentionModelBench's
// decode rows:
//
//   BM_ModelMla/<case>/<arch>  counters:
//     flop            useful FLOPs: 2 * (576 + 512) per (head, context token)
//     matrix_instr    matrix instructions issued: per key step of block_n tokens and
//                     workgroup (block_h heads), S = Q C^T (block_h x block_n x 576)
//                     and P C (block_h x 512/value_split x block_n), whole steps, masked or not
//     matrix_us       their cycles spread evenly over every SIMD, plus each key step's
//                     fixed overhead (kKStepOverheadCycles) among the resident workgroups
//     memory_bytes    distinct bytes: the latent cache of every context read once (bf16
//                     or fp8), Q, O and LSE
//     l2_bytes        bytes the workgroups load: each head group re-reads the latent
//     modelled_us     max(matrix, memory): a lower bound (softmax VALU work, the fp8
//                     conversion and latency are not modelled)
//     pct_bandwidth   of the device's memory bandwidth (what bounds decode)
#include "ModelCommon.h"
#include "Registry.h"
#include "Tune/CostModel.h"
#include "mla/MlaDecode.h"

#include "tilec/tilec.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

namespace {

struct MlaCase {
  const char *name;
  tilec::kernels::KernelParams params;
  int64_t batch, context;
};

const MlaCase kCases[] = {
    {"decode_b64_h128_ctx8192_bf16", {{"heads", "128"}}, 64, 8192},
    {"decode_b64_h16_ctx8192_bf16", {{"heads", "16"}}, 64, 8192},
    {"decode_b64_h128_ctx8192_fp8", {{"heads", "128"}, {"kv_dtype", "fp8"}}, 64, 8192},
};

using tilec::bench::param;

void BM_ModelMla(benchmark::State &state, std::string arch, MlaCase c) {
  const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel("mla_decode");
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
  const int64_t H = param(*info, params, "heads"), BH = param(*info, params, "block_h");
  const int64_t BN = param(*info, params, "block_n"), VS = param(*info, params, "value_split");
  const int64_t W = tilec::kernels::kMlaKeyDim, L = tilec::kernels::kMlaLatentDim;
  const auto kv = params.find("kv_dtype");
  const double cacheElem = kv != params.end() && kv->second == "fp8" ? 1 : 2, elem = 2;

  double flops = 0, steps = 0, l2 = 0, memory = 0;
  for (auto _ : state) {
    steps = double(c.batch) * double(H / BH * VS) * double((c.context + BN - 1) / BN);
    flops = 2.0 * (W + L) * double(c.batch) * H * c.context;
    l2 = steps * BN * W * cacheElem;
    memory = double(c.batch) * (c.context * W * cacheElem + H * (W * elem + L * elem + 4));
    benchmark::DoNotOptimize(flops);
  }
  // value_split VS: each of the VS workgroups of a head group computes S in full, P V for 512 / VS columns.
  const double instr = steps * double(BH * BN * (W + L / VS)) / double(mi->m * mi->n * mi->k);
  const int waves = static_cast<int>(param(*info, params, "waves"));
  const int resident = std::max(1, tilec::tune::residentWorkgroups(*target, *peaks, ck->report.vgpr, ck->report.agpr,
                                                                    ck->report.ldsBytes, waves));
  const double overheadSec =
      steps * tilec::tune::kKStepOverheadCycles / (double(peaks->units) * resident * peaks->clockHz);
  const double matrixSec =
      instr * mi->cycles / (double(peaks->units) * peaks->simdsPerUnit * peaks->clockHz) + overheadSec;
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
  k2["pct_bandwidth"] = 100.0 * memory / sec / peaks->hbmBytesPerSec;
  k2["vgpr"] = ck->report.vgpr;
  k2["agpr"] = ck->report.agpr;
  k2["lds_bytes"] = static_cast<double>(ck->report.ldsBytes);
  k2["scratch_bytes"] = static_cast<double>(ck->report.scratchBytes);
  state.SetLabel(peaks->part + ", " + ck->name + ", " + mi->name);
}

} // namespace

namespace tilec::bench {

void registerMlaModels() {
  for (const char *arch : {"gfx942", "gfx1151", "gfx90a"})
    for (const MlaCase &c : kCases) {
      const auto kv = c.params.find("kv_dtype");
      if (kv != c.params.end() && kv->second == "fp8" && std::string(arch) != "gfx942")
        continue;  // the fp8 (e4m3fnuz) cache is gfx942's format
      benchmark::RegisterBenchmark((std::string("BM_ModelMla/") + c.name + "/" + arch).c_str(), BM_ModelMla,
                                   std::string(arch), c)
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(1);
    }
}

} // namespace tilec::bench
