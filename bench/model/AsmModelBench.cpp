// The compiled-code cost model (lib/Model, docs/cost-model.md) for the shipped
// kernels that docs/performance.md reports: each is compiled for the target,
// its main loop read from the code object's disassembly, and priced for the
// launch below (modelled, not measured).
//   BM_AsmModel/<case>/<arch>  counters: modelled_us and each term's us
//                              (matrix, valu, issue, latency, lds, l2,
//                              outside_loop, hbm), % of matrix peak or of
//                              memory bandwidth, the loop's instructions and
//                              exposed latency; label: bound term and kernel.
#include "ModelCommon.h"
#include "Model/AsmModel.h"
#include "Tune/CostModel.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace {

struct AsmCase {
  const char *name;
  const char *kernel;
  tilec::kernels::KernelParams params;
  /// The launch: GEMM M,N,K; attention / decode: batch, query rows per
  /// sequence, keys per sequence; the element-wise kernels: rows (tokens) and
  /// columns (hidden, intermediate, cols; rope: heads x head_dim).
  int64_t a, b, c;
};

const AsmCase kCases[] = {
    {"gemm_4096", "gemm", {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}}, 4096, 4096, 4096},
    {"gemm_4096_256x256x32_w8_s2", "gemm",
     {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}, {"block_m", "256"}, {"block_n", "256"}, {"block_k", "32"},
      {"waves", "8"}, {"stages", "2"}},
     4096, 4096, 4096},
    {"prefill_b1_h32_kv8_s4096_d128_causal", "attention",
     {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}, {"causal", "1"}}, 1, 4096, 4096},
    {"prefill_b1_h32_kv8_s4096_d128", "attention", {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}}, 1,
     4096, 4096},
    // The default split-KV follows the batch and context given (paged_decode's
    // target defaults): MI300X 2 ways, the others unsplit.
    {"decode_b64_h32_kv8_ctx8192_d128", "paged_decode",
     {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}, {"batch", "64"}, {"seq_k", "8192"}}, 64, 1, 8192},
    // The same decode split 2 ways over the context (512 one-wave workgroups
    // leave most of MI300X's 1,216 SIMDs idle): the attend kernel and the
    // combine kernel, priced one after the other.
    {"decode_b64_h32_kv8_ctx8192_d128_split2", "paged_decode",
     {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}, {"batch", "64"}, {"seq_k", "8192"}, {"splits", "2"}},
     64, 1, 8192},
    // The element-wise kernels at 4096 x 4096 and 16 x 8192 (bf16, each
    // target's default blocking): rows of `rows` per workgroup, a row in
    // chunks (the loop's trips).
    {"rms_norm_t4096_h4096", "rms_norm", {{"hidden", "4096"}}, 4096, 4096, 0},
    {"rms_norm_t16_h8192", "rms_norm", {{"hidden", "8192"}}, 16, 8192, 0},
    {"silu_and_mul_t4096_i4096", "silu_and_mul", {{"intermediate", "4096"}}, 4096, 4096, 0},
    {"silu_and_mul_t16_i8192", "silu_and_mul", {{"intermediate", "8192"}}, 16, 8192, 0},
    {"softmax_r4096_c4096", "softmax", {{"cols", "4096"}}, 4096, 4096, 0},
    {"softmax_r16_c8192", "softmax", {{"cols", "8192"}}, 16, 8192, 0},
    {"rope_t4096_h32_kv8_d128", "rope", {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}}, 4096, 4096, 0},
    {"rope_t16_h32_kv8_d128", "rope", {{"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"}}, 16, 4096, 0},
};

using tilec::bench::param;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

void BM_AsmModel(benchmark::State &state, std::string arch, AsmCase c) {
  const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel(c.kernel);
  const tilec::TargetInfo *target = tilec::lookupTarget(arch);
  const tilec::model::DeviceFacts *device = tilec::model::deviceFacts(arch);
  if (!info || !target || !device) {
    state.SkipWithError("unknown kernel or target");
    return;
  }
  const tilec::kernels::KernelParams params = tilec::kernels::withTargetDefaults(*info, c.params, arch);
  tilec::Result<tilec::CompiledKernel> ck = tilec::bench::compileShipped(*info, params, arch);
  if (!ck) {
    state.SkipWithError(ck.error().c_str());
    return;
  }
  // The launch, from the problem: workgroups, the matrix work (or bytes) of
  // each workgroup's main loop, the distinct bytes.
  const std::string kernel = c.kernel;
  tilec::model::LaunchShape launch;
  launch.wavesPerWorkgroup = ck->numWaves;
  launch.occupancy = ck->report.occupancy;
  launch.ldsWorkgroupsPerUnit = target->ldsWorkgroupsPerCU(ck->report.ldsBytes);
  double flops = 0, bytes = 0;
  std::optional<tilec::CompiledKernel> combine;  // split-KV decode: its second kernel
  tilec::model::LaunchShape combineLaunch;
  combineLaunch.hbmBytes = 0;
  if (kernel == "rms_norm" || kernel == "silu_and_mul" || kernel == "softmax") {
    // Bytes as bench/gpu/cases.py counts them: X read and Y written once (rms_norm: the
    // weight too; silu_and_mul reads 2 I columns per row and writes I).
    const int64_t rows = param(*info, params, kernel == "softmax" ? "block_rows" : "rows");
    launch.workgroups = ceilDiv(c.a, rows);
    launch.loopTrips = double(ceilDiv(c.b, param(*info, params, "chunk")));
    bytes = kernel == "rms_norm"       ? 2.0 * (2 * c.a * c.b + c.b)
            : kernel == "silu_and_mul" ? 2.0 * 3 * c.a * c.b
                                       : 2.0 * 2 * c.a * c.b;
  } else if (kernel == "rope") {
    // tokens_per_group tokens per workgroup, one after the other; q and k read
    // and written in place, the cos/sin cache row and the position read.
    const int64_t H = param(*info, params, "heads"), KH = param(*info, params, "kv_heads");
    const int64_t D = param(*info, params, "head_dim"), t = param(*info, params, "tokens_per_group");
    launch.workgroups = ceilDiv(c.a, t);
    launch.loopTrips = double(t);
    bytes = 2.0 * (2 * c.a * (H + KH) * D + c.a * D) + 4.0 * c.a;
  } else if (kernel == "gemm") {
    const int64_t bm = param(*info, params, "block_m"), bn = param(*info, params, "block_n");
    const int64_t bk = param(*info, params, "block_k");
    launch.workgroups = ceilDiv(c.a, bm) * ceilDiv(c.b, bn);
    launch.matrixFlopsPerWorkgroup = 2.0 * bm * bn * bk * ceilDiv(c.c, bk);
    bytes = 2.0 * (c.a * c.c + c.c * c.b) + 4.0 * c.a * c.b;  // bf16 in, f32 out (the default)
    flops = 2.0 * c.a * c.b * c.c;
  } else {
    const int64_t H = param(*info, params, "heads"), KH = param(*info, params, "kv_heads");
    const int64_t D = param(*info, params, "head_dim");
    if (kernel == "attention") {
      const int64_t bm = param(*info, params, "block_m");
      const bool causal = param(*info, params, "causal") == 1;
      double work = 0;
      for (int64_t q0 = 0; q0 < c.b; q0 += bm) {
        work += 4.0 * bm * D * double(causal ? std::min(c.c, q0 + bm) : c.c);  // padded rows, whole key blocks
        for (int64_t i = q0; i < std::min(c.b, q0 + bm); ++i)
          flops += 4.0 * D * double(causal ? i + 1 : c.c);
      }
      launch.workgroups = c.a * H * ceilDiv(c.b, bm);
      launch.matrixFlopsPerWorkgroup = work / double(ceilDiv(c.b, bm));
      flops *= double(c.a * H);
      bytes = double(c.a) * (2.0 * c.b * H * D * 2 + 2.0 * c.c * KH * D * 2 + 4.0 * c.b * H);
    } else {
      // paged_decode: one workgroup per (token, kv head, split), reading
      // that head's K and V over its share of the context.
      const int64_t splits = param(*info, params, "splits");
      launch.workgroups = c.a * c.b * KH * splits;
      launch.loadBytesPerWorkgroup = 2.0 * c.c * D * 2 / double(splits);
      flops = 4.0 * D * double(c.a * c.b * H * c.c);
      bytes = double(c.a) * (2.0 * c.c * KH * D * 2 + c.b * H * (2.0 * D * 2 + 4));
      if (splits > 1) {
        // The partial O and LSE of every split, written and read back once.
        const double partials = double(splits) * double(c.a * c.b * H) * (D * 4.0 + 4.0);
        bytes += 2 * partials;
        tilec::kernels::KernelParams cp = params;
        cp["part"] = "combine";
        tilec::Result<tilec::CompiledKernel> cc = tilec::bench::compileShipped(*info, cp, arch);
        if (!cc) {
          state.SkipWithError(cc.error().c_str());
          return;
        }
        combine = std::move(*cc);
        // One workgroup per 16 query rows (a matrix instruction's rows), its
        // loop over the splits; it reads the partials and writes O and LSE.
        combineLaunch.workgroups = (c.a * c.b * H + 15) / 16;
        combineLaunch.wavesPerWorkgroup = combine->numWaves;
        combineLaunch.loopTrips = double(splits);
        combineLaunch.hbmBytes = partials + double(c.a * c.b * H) * (D * 2.0 + 4.0);
        combineLaunch.occupancy = combine->report.occupancy;
        combineLaunch.ldsWorkgroupsPerUnit = target->ldsWorkgroupsPerCU(combine->report.ldsBytes);
      }
    }
  }
  launch.hbmBytes = bytes - combineLaunch.hbmBytes;
  tilec::model::KernelEstimate e;
  for (auto _ : state) {
    tilec::model::CodeCost code = tilec::model::analyzeAmdAssembly(tilec::disassemble(*ck), *target, *device);
    e = tilec::model::estimateKernel(code, launch, *device);
    if (combine) {
      const tilec::model::KernelEstimate ce = tilec::model::estimateKernel(
          tilec::model::analyzeAmdAssembly(tilec::disassemble(*combine), *target, *device), combineLaunch, *device);
      if (e.error.empty())
        e.error = ce.error;
      e.seconds += ce.seconds;
      state.counters["combine_us"] = ce.seconds * 1e6;
    }
    if (code.mainLoop >= 0) {
      const tilec::model::IterationCost &l = code.loops[size_t(code.mainLoop)].cost;
      state.counters["loop_instructions"] = l.instructions;
      state.counters["loop_matrix_instructions"] = l.matrixInstructions;
      state.counters["loop_exposed_cycles"] = l.exposedLatencyCycles;
    }
  }
  if (!e.error.empty()) {
    state.SkipWithError(e.error.c_str());
    return;
  }
  auto &k2 = state.counters;
  for (const tilec::model::Term &t : e.terms) {
    std::string name = t.name == "outside-loop" ? "outside_loop" : t.name;
    k2[name + "_us"] = t.seconds * 1e6;
  }
  k2["modelled_us"] = e.seconds * 1e6;
  k2["flop"] = flops;
  k2["memory_bytes"] = bytes;
  const tilec::tune::DevicePeaks *peaks = tilec::tune::devicePeaks(arch);
  if (peaks)
    k2["pct_peak"] = 100.0 * flops / e.seconds / tilec::tune::peakFlops(*target, *peaks, tilec::ElemType::BF16);
  k2["pct_bandwidth"] = 100.0 * bytes / e.seconds / device->hbmBytesPerSec;
  k2["loop_trips"] = e.loopTrips;
  k2["wg_per_unit"] = e.workgroupsPerUnit;
  k2["occupancy"] = ck->report.occupancy;
  state.SetLabel(e.bound + "; " + device->part + ", " + ck->name);
}

} // namespace

namespace tilec::bench {

void registerAsmModels() {
  for (const char *arch : {"gfx942", "gfx90a", "gfx1151"})
    for (const AsmCase &c : kCases)
      benchmark::RegisterBenchmark((std::string("BM_AsmModel/") + c.name + "/" + arch).c_str(), BM_AsmModel,
                                   std::string(arch), c)
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(1);
}

} // namespace tilec::bench
