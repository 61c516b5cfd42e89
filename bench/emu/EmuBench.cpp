// Emulator speed on the shipped GEMM (kernels/gemm/Gemm.cpp, default configuration:
// 128x128x32 tiles, 4 waves, MFMA 32x32x8 on gfx942), 256x256x256 bf16 -> f32,
// compiled by tilec and launched through tilec::Device on the CPU wavefront
// emulator. Target: <= 2 s per launch on the 2-core machine.
// Counters: lane_instr_per_s = emulated hardware-layer operations (buffer
// loads/stores, LDS accesses, barriers, cross-lane and matrix instructions)
// summed over lanes, per second; the checkers' counts of the last launch.
#include "Registry.h"
#include "Run.h"

#include "tilec/runtime.hpp"

#include <benchmark/benchmark.h>

#include <vector>

namespace {

void BM_EmuGemmBf16(benchmark::State &state) {
  const int64_t n = state.range(0), M = n, N = n, K = n;
  tilec::Result<tilec::Kernel> kernel = tilec::kernels::buildKernel("gemm", {{"dtype", "bf16"}, {"out", "f32"}});
  tilec::Result<tilec::CompiledKernel> ck = kernel ? tilec::compile(*kernel, {}) : tilec::Error{kernel.error()};
  auto dev = tilec::Device::open(tilec::DeviceKind::Emulator, "gfx942");
  if (!ck || !dev) {
    state.SkipWithError((!ck ? ck.error() : dev.error()).c_str());
    return;
  }
  tilec::Device &d = **dev;
  std::vector<uint16_t> a(M * K), b(K * N);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<uint16_t>(0x3f80 + i % 64);  // bf16 values in [1, 2)
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<uint16_t>(0xbf80 + i % 32);  // bf16 values in (-2, -1]
  void *A = *d.allocate(a.size() * 2), *B = *d.allocate(b.size() * 2), *C = *d.allocate(M * N * 4);
  d.copyToDevice(A, a.data(), a.size() * 2);
  d.copyToDevice(B, b.data(), b.size() * 2);
  std::vector<tilec::LaunchArg> args = {tilec::LaunchArg::tensor(A, {M, K}), tilec::LaunchArg::tensor(B, {K, N}),
                                        tilec::LaunchArg::tensor(C, {M, N})};
  tilec::LaunchStats last;
  double laneInstr = 0, seconds = 0;
  for (auto _ : state) {
    tilec::Result<tilec::LaunchStats> r = d.launch(*ck, args);
    if (!r) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    last = *r;
    laneInstr += static_cast<double>(r->laneInstructions);
    seconds += r->seconds;
  }
  state.counters["lane_instr_per_s"] = benchmark::Counter(laneInstr / seconds);
  state.counters["lane_instr"] = benchmark::Counter(static_cast<double>(last.laneInstructions));
  state.counters["flop_per_s"] = benchmark::Counter(2.0 * M * N * K * state.iterations() / seconds);
  state.counters["bank_conflict_cycles"] = benchmark::Counter(static_cast<double>(last.bankConflicts));
  state.counters["out_of_bounds"] = benchmark::Counter(static_cast<double>(last.outOfBounds));
  state.counters["races"] = benchmark::Counter(static_cast<double>(last.races));
  d.release(A);
  d.release(B);
  d.release(C);
}
BENCHMARK(BM_EmuGemmBf16)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
