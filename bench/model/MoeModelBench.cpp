// Roofline model of the shipped MoE layer (issue 6), as tilec compiles its
// expert kernels for each target's device (MI300X, Strix Halo, one MI250X
// GCD). Modelled, never measured: no AMD GPU is involved.
//
//   BM_ModelMoe/<case>/<arch>  counters:
//     flop           useful FLOPs of the expert GEMMs: 6 * hidden * intermediate per
//                    (token, expert) pair (gate, up and down projections)
//     padded_rows    sorted rows the GEMMs compute: each expert's pairs rounded up to
//                    block_m, with the pairs spread evenly over the experts
//     matrix_instr   matrix instructions of gate_up (two gemms) and down over the padded
//                    rows and whole blocks (instruction read from the compiled tile IR)
//     matrix_us      their cycles spread evenly over every SIMD of the device
//     memory_bytes   X, the weights of the experts that receive tokens, H and Y written
//                    and read back once, the output
//     memory_us      memory_bytes at the device's memory bandwidth
//     modelled_us    max(matrix_us, memory_us): a lower bound for gate_up + down +
//                    combine (the gate and the one-workgroup alignment are not modelled)
//     modelled_tflops, pct_peak (of the dense bf16 matrix peak), pct_bandwidth
#include "ModelCommon.h"
#include "Registry.h"
#include "Tune/CostModel.h"

#include "tilec/tilec.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

namespace {

struct MoeCase {
  const char *name;
  tilec::kernels::KernelParams params;  ///< of the `moe` entry
};

const MoeCase kCases[] = {
    {"prefill_t4096_e8_k2_h4096_i14336",
     {{"tokens", "4096"}, {"experts", "8"}, {"topk", "2"}, {"hidden", "4096"}, {"intermediate", "14336"}}},
    {"decode_t16_e8_k2_h4096_i14336",
     {{"tokens", "16"}, {"experts", "8"}, {"topk", "2"}, {"hidden", "4096"}, {"intermediate", "14336"}}},
    {"prefill_t1024_e64_k8_h2048_i1024",
     {{"tokens", "1024"}, {"experts", "64"}, {"topk", "8"}, {"hidden", "2048"}, {"intermediate", "1024"}}},
};

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

void BM_ModelMoe(benchmark::State &state, std::string arch, MoeCase c) {
  using tilec::bench::param;
  const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel("moe");
  const tilec::TargetInfo *target = tilec::lookupTarget(arch);
  const tilec::tune::DevicePeaks *peaks = tilec::tune::devicePeaks(arch);
  if (!info || !target || !peaks) {
    state.SkipWithError("unknown kernel or target");
    return;
  }
  // The two expert GEMMs as compiled for the target.
  const tilec::MatrixInstr *mi[2] = {nullptr, nullptr};
  std::string names;
  for (int i = 0; i < 2; ++i) {
    tilec::kernels::KernelParams p = c.params;
    p["part"] = i == 0 ? "gate_up" : "down";
    tilec::Result<tilec::CompiledKernel> ck = tilec::bench::compileShipped(*info, p, arch);
    if (!ck) {
      state.SkipWithError(ck.error().c_str());
      return;
    }
    mi[i] = tilec::bench::matrixInstrOf(*ck, *target);
    if (!mi[i]) {
      state.SkipWithError("no matrix instruction in the compiled IR");
      return;
    }
    names += (i ? ", " : "") + ck->name + " (" + mi[i]->name + ")";
  }
  const int64_t T = param(*info, c.params, "tokens"), E = param(*info, c.params, "experts");
  const int64_t K = param(*info, c.params, "topk"), H = param(*info, c.params, "hidden");
  const int64_t I = param(*info, c.params, "intermediate"), BM = param(*info, c.params, "block_m");
  const int64_t BN = param(*info, c.params, "block_n"), BK = param(*info, c.params, "block_k");
  const double elem = 2;  // bf16

  double flops = 0, rows = 0, active = 0;
  for (auto _ : state) {
    rows = active = 0;
    const int64_t pairs = T * K;
    for (int64_t e = 0; e < E; ++e) {
      const int64_t n = pairs / E + (e < pairs % E ? 1 : 0);
      rows += double(roundUp(n, BM));
      active += n > 0 ? 1 : 0;
    }
    flops = 6.0 * double(pairs) * double(H) * double(I);
    benchmark::DoNotOptimize(rows);
  }
  // gate_up: two gemms of (rows x I x H); down: one of (rows x H x I); whole blocks.
  const double instrUp = rows * 2.0 * double(roundUp(I, BN)) * double(roundUp(H, BK)) /
                         double(mi[0]->m * mi[0]->n * mi[0]->k);
  const double instrDown =
      rows * double(roundUp(H, BN)) * double(roundUp(I, BK)) / double(mi[1]->m * mi[1]->n * mi[1]->k);
  const double cycles = instrUp * mi[0]->cycles + instrDown * mi[1]->cycles;
  const double matrixSec = cycles / (double(peaks->units) * peaks->simdsPerUnit * peaks->clockHz);
  const double memory = double(T) * H * elem + active * 3.0 * double(H) * double(I) * elem +
                        rows * double(I) * elem * 2 + rows * double(H) * 4 * 2 + double(T) * H * elem;
  const double memorySec = memory / peaks->hbmBytesPerSec;
  const double sec = std::max(matrixSec, memorySec);
  const double peak = tilec::tune::peakFlops(*target, *peaks, tilec::ElemType::BF16);
  auto &k = state.counters;
  k["flop"] = flops;
  k["padded_rows"] = rows;
  k["matrix_instr"] = instrUp + instrDown;
  k["matrix_us"] = matrixSec * 1e6;
  k["memory_bytes"] = memory;
  k["memory_us"] = memorySec * 1e6;
  k["modelled_us"] = sec * 1e6;
  k["modelled_tflops"] = flops / sec / 1e12;
  k["pct_peak"] = 100.0 * flops / sec / peak;
  k["pct_bandwidth"] = 100.0 * memory / sec / peaks->hbmBytesPerSec;
  k["memory_bound"] = memorySec > matrixSec;
  state.SetLabel(peaks->part + ", " + names);
}

} // namespace

namespace tilec::bench {

void registerMoeModels() {
  for (const char *arch : {"gfx942", "gfx1151", "gfx90a"})
    for (const MoeCase &c : kCases)
      benchmark::RegisterBenchmark((std::string("BM_ModelMoe/") + c.name + "/" + arch).c_str(), BM_ModelMoe,
                                   std::string(arch), c)
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(1);
}

} // namespace tilec::bench
