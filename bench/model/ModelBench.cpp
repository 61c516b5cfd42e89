// The roofline cost model of lib/Tune (CostModel.h; assumptions in
// docs/autotuning.md, "Cost model") applied to the shipped GEMM as tilec
// compiles it (default parameters: bf16 -> f32, 128x128x32 tiles, 4 waves,
// 2 stages) for each target's device (MI300X, one MI250X GCD, Strix Halo),
// at a few problem sizes. The instruction, wave grid and stage count are read
// from the compiled tile IR, the registers and LDS from its code-object report.
//   BM_ModelGemm    counters: modelled time, TFLOP/s, % of peak, matrix
//                   instructions and cycles, bytes, arithmetic intensity.
//   BM_GpuGemm      the same kernel timed on a HIP GPU (median of launches,
//                   Device::launch wall clock), TFLOP/s and GB/s. Without a
//                   GPU: skipped with "not run: ...", never estimated.
//   BM_RocblasGemm / BM_HipblasltGemm  the vendor libraries on the same
//                   problem: "not run" unless a GPU and the library are there.
#include "ModelCommon.h"
#include "Registry.h"
#include "Tune/CostModel.h"

#include "tilec/runtime.hpp"
#include "tilec/tilec.hpp"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include "MachineContext.h"

#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using tilec::tune::CostEstimate;
using tilec::tune::DevicePeaks;

const char *const kTargets[] = {"gfx942", "gfx1151", "gfx90a"};
const std::array<int64_t, 3> kSizes[] = {{1024, 1024, 1024}, {4096, 4096, 4096}, {1000, 3000, 777}};

std::string sizeName(const std::array<int64_t, 3> &s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
}

/// Code objects are cached here for the process's lifetime.
const std::string &cacheDir() {
  static const std::string dir = [] {
    llvm::SmallString<128> p;
    return llvm::sys::fs::createUniqueDirectory("tilec-bench-model", p) ? std::string() : std::string(p);
  }();
  return dir;
}

/// The shipped GEMM for one problem and target: compiled, and what the model
/// needs from it.
struct ModelCase {
  tilec::CompiledKernel kernel;
  tilec::kernels::Problem problem;
  tilec::tune::CostInputs inputs;
  const tilec::TargetInfo *target = nullptr;
  const DevicePeaks *peaks = nullptr;
};

/// The value of `key = ` (an integer) in the tile IR text.
std::optional<std::string> irAttr(const std::string &ir, const std::string &key, size_t from = 0) {
  size_t at = ir.find(key + " = ", from);
  if (at == std::string::npos)
    return std::nullopt;
  at += key.size() + 3;
  size_t end = ir.find_first_not_of("0123456789", at);
  return ir.substr(at, end - at);
}

tilec::Result<ModelCase> makeCase(const std::string &arch, const std::array<int64_t, 3> &size) {
  const tilec::kernels::KernelInfo *gemm = tilec::kernels::findKernel("gemm");
  if (!gemm)
    return tilec::Error{"no shipped gemm kernel"};
  tilec::kernels::KernelParams params = {
      {"M", std::to_string(size[0])}, {"N", std::to_string(size[1])}, {"K", std::to_string(size[2])}};
  ModelCase c;
  c.target = tilec::lookupTarget(arch);
  c.peaks = tilec::tune::devicePeaks(arch);
  if (!c.target || !c.peaks)
    return tilec::Error{"unknown target " + arch};
  tilec::Result<tilec::Kernel> k = gemm->build(params);
  if (!k)
    return tilec::Error{k.error()};
  tilec::Result<tilec::CompiledKernel> ck = tilec::compile(*k, {arch, tilec::JitChoice::Auto, true, cacheDir()});
  if (!ck)
    return tilec::Error{ck.error()};
  c.kernel = std::move(*ck);
  tilec::Result<tilec::kernels::Problem> prob = gemm->problem(params);
  if (!prob)
    return tilec::Error{prob.error()};
  c.problem = std::move(*prob);

  tilec::tune::GemmProblem &p = c.inputs.problem;
  p.M = size[0];
  p.N = size[1];
  p.K = size[2];
  p.in = *tilec::parseElemType(tilec::mlirTypeName(c.problem.tensors[0].dtype));
  p.out = *tilec::parseElemType(tilec::mlirTypeName(c.problem.tensors[2].dtype));
  // The tile: the kernel's default parameters, with what the compiler chose.
  auto param = [&](const std::string &name) { return tilec::bench::param(*gemm, {}, name); };
  tilec::tune::GemmTile &t = c.inputs.tile;
  t.blockM = param("block_m");
  t.blockN = param("block_n");
  t.blockK = param("block_k");
  t.waves = static_cast<int>(param("waves"));
  const std::string &ir = c.kernel.tileIR;
  std::optional<tilec::tune::ChosenTiling> chosen = tilec::tune::chosenTiling(ir);
  std::optional<std::string> stages = irAttr(ir, "tile.num_stages");
  if (!chosen || !stages)
    return tilec::Error{"compiled tile IR of " + c.kernel.name + " lacks a tile.gemm layout or tile.num_stages"};
  t.stages = std::atoi(stages->c_str());
  c.inputs.tiling.instr = c.target->findInstr(chosen->instr);
  if (!c.inputs.tiling.instr)
    return tilec::Error{"unknown instruction " + chosen->instr};
  c.inputs.tiling.wm = chosen->wm;
  c.inputs.tiling.wn = chosen->wn;
  const tilec::Report &r = c.kernel.report;
  c.inputs.workgroupsPerUnit =
      tilec::tune::residentWorkgroups(*c.target, *c.peaks, r.vgpr, r.agpr, r.ldsBytes, t.waves);
  return c;
}

void BM_ModelGemm(benchmark::State &state, std::string arch, std::array<int64_t, 3> size) {
  tilec::Result<ModelCase> c = makeCase(arch, size);
  if (!c) {
    state.SkipWithError(c.error().c_str());
    return;
  }
  CostEstimate e;
  for (auto _ : state) {
    e = tilec::tune::modelGemm(c->inputs, *c->target, *c->peaks);
    benchmark::DoNotOptimize(e);
  }
  const tilec::tune::GemmProblem &p = c->inputs.problem;
  const DevicePeaks &pk = *c->peaks;
  const double flops = 2.0 * p.M * p.N * p.K;
  const double peak = tilec::tune::peakFlops(*c->target, pk, p.in);
  auto &k = state.counters;
  k["M"] = static_cast<double>(p.M);
  k["N"] = static_cast<double>(p.N);
  k["K"] = static_cast<double>(p.K);
  k["flop"] = flops;
  k["peak_tflops"] = peak / 1e12;
  k["mem_tbs"] = pk.hbmBytesPerSec / 1e12;
  k["modelled_us"] = e.seconds * 1e6;
  k["compute_us"] = e.computeSeconds * 1e6;
  k["memory_us"] = e.memorySeconds * 1e6;
  k["modelled_tflops"] = flops / e.seconds / 1e12;
  k["pct_peak"] = e.pctOfPeak;
  k["workgroups"] = static_cast<double>(e.workgroups);
  k["rounds"] = static_cast<double>(e.rounds);
  k["wg_per_unit"] = c->inputs.workgroupsPerUnit;
  k["memory_bound"] = e.memoryBound;
  k["matrix_instr"] = e.matrixInstructions;
  k["matrix_cycles"] = e.matrixCycles;
  // Matrix cycles spread evenly over every SIMD: the time the matrix cores
  // alone would need with perfect balance.
  k["matrix_us"] = e.matrixCycles / (double(pk.units) * pk.simdsPerUnit * pk.clockHz) * 1e6;
  k["global_bytes"] = e.globalBytes;
  k["memory_bytes"] = e.memoryBytes;
  k["intensity"] = flops / e.memoryBytes;  // FLOP per byte of memory traffic
  state.SetLabel(pk.part + ", " + c->kernel.name + ", " + c->inputs.tiling.instr->name + ", " +
                 std::to_string(c->inputs.tile.stages) + " stage(s)");
}

/// Why no GPU measurement can be taken for `arch`, or "" when a HIP device opens.
std::string noGpuReason(const std::string &arch, std::unique_ptr<tilec::Device> *out = nullptr) {
  tilec::Result<std::unique_ptr<tilec::Device>> d = tilec::Device::open(tilec::DeviceKind::Hip, arch);
  if (!d)
    return "not run: no HIP device for " + arch + " (" + d.error().substr(0, d.error().find('\n')) + ")";
  if (out)
    *out = std::move(*d);
  return "";
}

void BM_GpuGemm(benchmark::State &state, std::string arch, std::array<int64_t, 3> size) {
  std::unique_ptr<tilec::Device> dev;
  if (std::string why = noGpuReason(arch, &dev); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  tilec::Result<ModelCase> c = makeCase(arch, size);
  if (!c) {
    state.SkipWithError(c.error().c_str());
    return;
  }
  // Zero-filled operands of the problem's shapes, in kernel-argument order.
  std::vector<void *> buffers;
  std::vector<tilec::LaunchArg> args;
  double bytes = 0;
  size_t nextTensor = 0, nextScalar = 0;
  for (size_t pos = 0; nextTensor < c->problem.tensors.size() || nextScalar < c->problem.scalars.size(); ++pos) {
    if (nextScalar < c->problem.scalars.size() && c->problem.scalars[nextScalar].position == pos) {
      args.push_back(tilec::LaunchArg::f32(c->problem.scalars[nextScalar++].value));
      continue;
    }
    const tilec::kernels::TensorSpec &t = c->problem.tensors[nextTensor++];
    size_t n = tilec::dtypeBytes(t.dtype);
    for (int64_t d : t.shape)
      n *= static_cast<size_t>(d);
    tilec::Result<void *> buf = dev->allocate(n);
    if (!buf) {
      state.SkipWithError(buf.error().c_str());
      return;
    }
    std::vector<char> zeros(n, 0);
    dev->copyToDevice(*buf, zeros.data(), n);
    buffers.push_back(*buf);
    args.push_back(tilec::LaunchArg::tensor(*buf, t.shape));
    bytes += static_cast<double>(n);
  }
  std::vector<double> times;
  if (auto warm = dev->launch(c->kernel, args); !warm)
    state.SkipWithError(warm.error().c_str());
  for (auto _ : state) {
    if (state.error_occurred())
      break;
    tilec::Result<tilec::LaunchStats> r = dev->launch(c->kernel, args);
    if (!r) {
      state.SkipWithError(r.error().c_str());
      break;
    }
    state.SetIterationTime(r->seconds);
    times.push_back(r->seconds);
  }
  for (void *b : buffers)
    dev->release(b);
  if (times.empty())
    return;
  std::sort(times.begin(), times.end());
  const double med = times[times.size() / 2];
  const double flops = 2.0 * size[0] * size[1] * size[2];
  state.counters["median_us"] = med * 1e6;
  state.counters["tflops"] = flops / med / 1e12;
  state.counters["gbs"] = bytes / med / 1e9;  // A, B and C once
  state.SetLabel(dev->description() + ", " + c->kernel.name + " (Device::launch wall clock)");
}

/// A vendor GEMM library on the same problem. Only its absence (or the
/// GPU's) can be reported here: the comparison is not implemented.
void BM_VendorGemm(benchmark::State &state, std::string arch, std::string library, std::string soname) {
  std::string why = noGpuReason(arch);
  if (why.empty()) {
    void *lib = dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
    why = lib ? "not run: " + library + " found, but the comparison is not implemented yet"
              : "not run: " + library + " not installed (" + soname + ")";
    if (lib)
      dlclose(lib);
  }
  state.SkipWithError(why.c_str());
  for (auto _ : state) {
  }
}


} // namespace

namespace tilec::bench {
void registerAttentionModels();  // AttentionModelBench.cpp
void registerMoeModels();        // MoeModelBench.cpp
void registerAsmModels();        // AsmModelBench.cpp
void registerMlaModels();        // MlaModelBench.cpp
} // namespace tilec::bench

int main(int argc, char **argv) {
  tilec::bench::addMachineContext();
  tilec::bench::registerAttentionModels();
  tilec::bench::registerMoeModels();
  tilec::bench::registerAsmModels();
  tilec::bench::registerMlaModels();
  for (const char *arch : kTargets)
    for (const auto &size : kSizes) {
      std::string suffix = std::string("/gemm/") + arch + "/" + sizeName(size);
      benchmark::RegisterBenchmark(("BM_ModelGemm" + suffix).c_str(), BM_ModelGemm, std::string(arch), size)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("BM_GpuGemm" + suffix).c_str(), BM_GpuGemm, std::string(arch), size)
          ->Unit(benchmark::kMicrosecond)->UseManualTime()->Iterations(20);
      benchmark::RegisterBenchmark(("BM_RocblasGemm" + suffix).c_str(), BM_VendorGemm, std::string(arch),
                                   std::string("rocBLAS"), std::string("librocblas.so"))
          ->Iterations(1);
      benchmark::RegisterBenchmark(("BM_HipblasltGemm" + suffix).c_str(), BM_VendorGemm, std::string(arch),
                                   std::string("hipBLASLt"), std::string("libhipblaslt.so"))
          ->Iterations(1);
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!cacheDir().empty())
    llvm::sys::fs::remove_directories(cacheDir());
  return 0;
}
