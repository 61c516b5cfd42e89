// Emulator speed on a 256x256x256 bf16 GEMM (issue 3 target: <= 2 s on the
// 2-core machine). The kernel has the emitted GEMM's structure (128x128x32
// tiles, 4 waves, MFMA 32x32x8, LDS staging) written with the tile primitives.
// Counters: lane_instr_per_s = emulated hardware-layer operations summed over
// lanes per second (LaunchReport::laneInstructions), and the checkers' counts.
#include "Emu/Emulator.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>

namespace {

const char *kGemm = R"(#include "tilec_prelude.h"
extern "C" __global__ TL_LAUNCH_BOUNDS(256) void gemm_bf16_f32_128x128x32_w4(const tl::bf16 *A, int A_d0, int A_d1,
    const tl::bf16 *B, int B_d0, int B_d1, float *C, int C_d0, int C_d1) {
  __shared__ __attribute__((aligned(16))) unsigned char tl_lds[2 * 128 * 40 * 2];
  const tl::Global<tl::bf16, 0x00020000u> A_g(A, A_d0, A_d1);
  const tl::Global<tl::bf16, 0x00020000u> B_g(B, B_d0, B_d1);
  const tl::Global<float, 0x00020000u> C_g(C, C_d0, C_d1);
  const tl::Lds<tl::bf16, 128, 32, 40> t_a{(tl::bf16 *)(tl_lds + 0)};
  const tl::Lds<tl::bf16, 128, 32, 40> t_b{(tl::bf16 *)(tl_lds + 128 * 40 * 2)};
  tl::Acc<tl::Mfma32x32x8<tl::bf16>, 128, 128, 2, 2> acc;
  tl::fill(acc, 0.0f);
  const int r0 = tl::block_id(0) * 128, c0 = tl::block_id(1) * 128;
  for (int k = 0; k < A_d1; k += 32) {
    tl::barrier();
    tl::load_tile<256>(t_a, A_g, r0, k);
    tl::load_tile<256>(t_b, B_g, c0, k);
    tl::barrier();
    tl::gemm<tl::Mfma32x32x8<tl::bf16>, true>(acc, t_a, t_b);
  }
  tl::store_tile(acc, C_g, r0, c0);
}
)";

void BM_EmuGemmBf16_256(benchmark::State &state) {
  const int M = 256, N = 256, K = 256;
  tilec::emu::Emulator emu(*tilec::lookupTarget("gfx942"));
  auto image = emu.load(kGemm, "gemm_bf16_f32_128x128x32_w4");
  if (!image) {
    state.SkipWithError(llvm::toString(image.takeError()).c_str());
    return;
  }
  auto *A = (uint16_t *)emu.allocate(M * K * 2), *Bt = (uint16_t *)emu.allocate(N * K * 2);
  auto *C = (float *)emu.allocate(M * N * 4);
  for (int i = 0; i < M * K; ++i)
    A[i] = (uint16_t)(0x3f80 + i % 64);
  for (int i = 0; i < N * K; ++i)
    Bt[i] = (uint16_t)(0xbf80 + i % 32);
  using tilec::emu::Arg;
  std::vector<Arg> args = {Arg::pointer(A), Arg::integer(M), Arg::integer(K), Arg::pointer(Bt), Arg::integer(N),
                           Arg::integer(K), Arg::pointer(C), Arg::integer(M), Arg::integer(N)};
  tilec::emu::LaunchReport last;
  double laneInstr = 0, seconds = 0;
  for (auto _ : state) {
    auto r = emu.launch(**image, {{M / 128, N / 128, 1}, 256}, args);
    if (!r) {
      state.SkipWithError(llvm::toString(r.takeError()).c_str());
      return;
    }
    last = *r;
    laneInstr += (double)r->laneInstructions;
    seconds += r->seconds;
  }
  state.counters["lane_instr_per_s"] = benchmark::Counter(laneInstr / seconds);
  state.counters["lane_instr"] = benchmark::Counter((double)last.laneInstructions);
  state.counters["lanes"] = benchmark::Counter((double)last.lanes);
  state.counters["flop_per_s"] = benchmark::Counter(2.0 * M * N * K * state.iterations() / seconds);
  state.counters["bank_conflict_cycles"] = benchmark::Counter((double)last.bankConflictCycles);
  state.counters["out_of_bounds"] = benchmark::Counter((double)last.outOfBounds);
  state.counters["races"] = benchmark::Counter((double)last.races);
}
BENCHMARK(BM_EmuGemmBf16_256)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
