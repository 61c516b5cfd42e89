// Compile time of tilec (issue 7): for every shipped kernel (default
// parameters) and every target,
//   BM_CompileCold   DSL build + tilec::compile into a fresh, empty cache;
//   BM_CompileWarm   the same with the kernel already cached (a hit of the
//                    compiled-kernel cache: no stage runs);
//   BM_CompileWarmCodeObject  the same with only the code object cached (the
//                    compiled-kernel entries are removed before each
//                    iteration): every stage but the JIT runs;
//   BM_ProcessToCodeObject  `tilec --kernel=K --emit=obj -o F` as a child
//                    process, cache warm: process start to code object on disk;
//   BM_Autotune100   tuneShippedKernel for a 4096^3 GEMM on gfx942 with empty caches
//                    (576 points, 100 compiled), one iteration;
//   BM_Autotune100/gemm/gfx942/after_2048  the same after tuning 2048^3 into
//                    the same (compiled-kernel) cache: the candidates both
//                    shapes keep are not compiled again.
// Counters (milliseconds, mean over iterations): dsl_ms (kernel build -> tile
// IR), context/parse/pipeline/emit/jit/report_ms (CompileTimings), other_ms
// (assembling the result), median_ms (the whole call, median of iterations),
// pass:<name>_ms per pipeline pass; the code-object report (vgpr, agpr, sgpr,
// lds_bytes, scratch_bytes, spills, occupancy, matrix_instructions).
// docs/performance.md is rendered from this binary's --benchmark_out JSON by
// tilec-bench-report.
#include "Registry.h"
#include "Tuning.h"

#include "tilec/tilec.hpp"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include "MachineContext.h"

#include <benchmark/benchmark.h>
#include <unistd.h>  // environ

#include <algorithm>
#include <cstdlib>  // getloadavg
#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

const char *const kTargets[] = {"gfx942", "gfx90a", "gfx1151"};

/// A fresh directory under the system temp folder, removed on destruction.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string &prefix) {
    llvm::SmallString<128> p;
    if (!llvm::sys::fs::createUniqueDirectory(prefix, p))
      path = std::string(p);
  }
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
};

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Sums of CompileTimings over iterations, reported as per-iteration means.
struct StageSums {
  double dsl = 0, context = 0, parse = 0, pipeline = 0, emit = 0, jit = 0, report = 0, other = 0;
  int cacheHits = 0;
  std::vector<double> totals;
  std::vector<std::pair<std::string, double>> passes;

  void add(double dslMs, const tilec::CompileTimings &t) {
    dsl += dslMs;
    context += t.contextMs;
    parse += t.parseMs;
    pipeline += t.pipelineMs;
    emit += t.emitMs;
    jit += t.jitMs;
    report += t.reportMs;
    other += t.totalMs - (t.contextMs + t.parseMs + t.pipelineMs + t.emitMs + t.jitMs + t.reportMs);
    cacheHits += t.cacheHit;
    totals.push_back(dslMs + t.totalMs);
    for (const auto &pass : t.passMs) {
      auto it = std::find_if(passes.begin(), passes.end(), [&](const auto &p) { return p.first == pass.first; });
      if (it == passes.end())
        passes.push_back(pass);
      else
        it->second += pass.second;
    }
  }

  void setCounters(benchmark::State &state) const {
    const double n = std::max<double>(static_cast<double>(totals.size()), 1);
    auto &c = state.counters;
    c["dsl_ms"] = dsl / n;
    c["context_ms"] = context / n;
    c["parse_ms"] = parse / n;
    c["pipeline_ms"] = pipeline / n;
    c["emit_ms"] = emit / n;
    c["jit_ms"] = jit / n;
    c["report_ms"] = report / n;
    c["other_ms"] = other / n;
    c["median_ms"] = median(totals);
    c["mean_ms"] = (dsl + context + parse + pipeline + emit + jit + report + other) / n;
    c["cache_hits"] = cacheHits;
    for (const auto &[name, ms] : passes)
      c["pass:" + name + "_ms"] = ms / n;
  }
};

void reportCounters(benchmark::State &state, const tilec::CompiledKernel &ck) {
  const tilec::Report &r = ck.report;
  auto &c = state.counters;
  c["vgpr"] = r.vgpr;
  c["agpr"] = r.agpr;
  c["sgpr"] = r.sgpr;
  c["lds_bytes"] = static_cast<double>(r.ldsBytes);
  c["scratch_bytes"] = static_cast<double>(r.scratchBytes);
  c["vgpr_spills"] = r.vgprSpills;
  c["sgpr_spills"] = r.sgprSpills;
  c["occupancy"] = r.occupancy;
  c["matrix_instructions"] = r.matrixInstructions;
  c["code_object_bytes"] = static_cast<double>(r.codeObjectBytes);
  state.SetLabel(ck.name + " (" + r.jit + ")");
}

/// One DSL build + compile; adds its stage times to `sums`.
tilec::Result<tilec::CompiledKernel> buildAndCompile(const tilec::kernels::KernelInfo &kernel,
                                                     const tilec::CompileOptions &opts, StageSums &sums) {
  Clock::time_point start = Clock::now();
  tilec::Result<tilec::Kernel> k = kernel.build({});
  double dslMs = msSince(start);
  if (!k)
    return tilec::Error{k.error()};
  tilec::Result<tilec::CompiledKernel> ck = tilec::compile(*k, opts);
  if (ck)
    sums.add(dslMs, ck->timings);
  return ck;
}

void BM_CompileCold(benchmark::State &state, const tilec::kernels::KernelInfo *kernel, std::string arch) {
  StageSums sums;
  tilec::Result<tilec::CompiledKernel> last = tilec::Error{"no iteration"};
  for (auto _ : state) {
    state.PauseTiming();
    auto dir = std::make_unique<TempDir>("tilec-bench-cold");
    tilec::CompileOptions opts{arch, tilec::JitChoice::Auto, true, dir->path};
    state.ResumeTiming();
    last = buildAndCompile(*kernel, opts, sums);
    state.PauseTiming();
    dir.reset();
    state.ResumeTiming();
    if (!last) {
      state.SkipWithError(last.error().c_str());
      return;
    }
  }
  sums.setCounters(state);
  reportCounters(state, *last);
}

void BM_CompileWarm(benchmark::State &state, const tilec::kernels::KernelInfo *kernel, std::string arch) {
  TempDir dir("tilec-bench-warm");
  tilec::CompileOptions opts{arch, tilec::JitChoice::Auto, true, dir.path};
  StageSums discard, sums;
  if (auto first = buildAndCompile(*kernel, opts, discard); !first) {  // fills the cache
    state.SkipWithError(first.error().c_str());
    return;
  }
  tilec::Result<tilec::CompiledKernel> last = tilec::Error{"no iteration"};
  for (auto _ : state) {
    last = buildAndCompile(*kernel, opts, sums);
    if (!last) {
      state.SkipWithError(last.error().c_str());
      return;
    }
  }
  sums.setCounters(state);
  reportCounters(state, *last);
}

/// Removes the compiled-kernel entries ("*.ck") of the cache in `dir`, keeping
/// the code objects.
void removeCompiledKernelEntries(const std::string &dir) {
  std::error_code ec;
  std::vector<std::string> entries;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".ck"))
      entries.push_back(it->path());
  for (const std::string &e : entries)
    llvm::sys::fs::remove(e);
}

void BM_CompileWarmCodeObject(benchmark::State &state, const tilec::kernels::KernelInfo *kernel,
                              std::string arch) {
  TempDir dir("tilec-bench-warm-co");
  tilec::CompileOptions opts{arch, tilec::JitChoice::Auto, true, dir.path};
  StageSums discard, sums;
  if (auto first = buildAndCompile(*kernel, opts, discard); !first) {  // fills the caches
    state.SkipWithError(first.error().c_str());
    return;
  }
  tilec::Result<tilec::CompiledKernel> last = tilec::Error{"no iteration"};
  for (auto _ : state) {
    state.PauseTiming();
    removeCompiledKernelEntries(dir.path);
    state.ResumeTiming();
    last = buildAndCompile(*kernel, opts, sums);
    if (!last) {
      state.SkipWithError(last.error().c_str());
      return;
    }
  }
  sums.setCounters(state);
  reportCounters(state, *last);
}

/// Runs `tilec args...` with TILEC_CACHE_DIR=cacheDir; "" on success, else why not.
std::string runTilec(const std::vector<std::string> &args, const std::string &cacheDir) {
  std::vector<llvm::StringRef> argv = {TILEC_BIN};
  for (const std::string &a : args)
    argv.push_back(a);
  // The parent's environment with TILEC_CACHE_DIR replaced; stderr (remarks) discarded.
  std::string cacheVar = "TILEC_CACHE_DIR=" + cacheDir;
  std::vector<llvm::StringRef> envp = {cacheVar};
  for (char **e = environ; *e; ++e)
    if (!llvm::StringRef(*e).starts_with("TILEC_CACHE_DIR="))
      envp.push_back(*e);
  const std::optional<llvm::StringRef> redirects[] = {std::nullopt, std::nullopt, llvm::StringRef("")};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(TILEC_BIN, argv, llvm::ArrayRef<llvm::StringRef>(envp), redirects, 0, 0, &err);
  if (rc != 0)
    return std::string(TILEC_BIN) + " exited with " + std::to_string(rc) + (err.empty() ? "" : ": " + err);
  return "";
}

void BM_ProcessToCodeObject(benchmark::State &state, const tilec::kernels::KernelInfo *kernel,
                            std::string arch) {
  TempDir dir("tilec-bench-process");
  const std::string out = dir.path + "/kernel.co", cache = dir.path + "/cache";
  const std::vector<std::string> args = {"--kernel=" + kernel->name, "--offload-arch=" + arch, "--emit=obj",
                                         "-o", out};
  if (std::string err = runTilec(args, cache); !err.empty()) {  // fills the cache
    state.SkipWithError(err.c_str());
    return;
  }
  std::vector<double> times;
  for (auto _ : state) {
    Clock::time_point start = Clock::now();
    std::string err = runTilec(args, cache);
    times.push_back(msSince(start));
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      return;
    }
  }
  state.counters["median_ms"] = median(times);
  state.SetLabel(std::string("tilec --kernel=") + kernel->name + " --offload-arch=" + arch + " --emit=obj (cached)");
}

/// `warmShape`: a problem size tuned (untimed) into the cache first; empty
/// for none.
void BM_Autotune100(benchmark::State &state, const tilec::kernels::KernelInfo *kernel, std::string arch,
                    std::string warmShape) {
  const tilec::kernels::KernelParams problem = {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}};
  tilec::tune::TuneStats stats;
  for (auto _ : state) {
    state.PauseTiming();
    auto dir = std::make_unique<TempDir>("tilec-bench-tune");
    tilec::tune::TuneOptions opts;
    opts.arch = arch;
    opts.cacheDir = dir->path;
    opts.useTuneCache = false;
    opts.device = tilec::DeviceKind::Auto;  // the cost model here: no GPU opens
    opts.maxCompiles = 100;
    opts.onWarning = [](const std::string &) {};
    if (!warmShape.empty()) {
      const tilec::kernels::KernelParams warm = {{"M", warmShape}, {"N", warmShape}, {"K", warmShape}};
      if (tilec::Result<tilec::tune::TuneResult> r = tilec::kernels::tuneShippedKernel(*kernel, warm, opts); !r) {
        state.SkipWithError(r.error().c_str());
        return;
      }
    }
    state.ResumeTiming();
    tilec::Result<tilec::tune::TuneResult> r = tilec::kernels::tuneShippedKernel(*kernel, problem, opts);
    state.PauseTiming();
    dir.reset();
    state.ResumeTiming();
    if (!r) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    stats = r->stats;
    state.SetLabel("best " + r->record.ranking.front().tile.flags());
  }
  size_t pruned = 0;
  for (size_t n : stats.pruned)
    pruned += n;
  auto &c = state.counters;
  c["space"] = static_cast<double>(stats.spaceSize);
  c["pruned"] = static_cast<double>(pruned);
  c["compiled"] = static_cast<double>(stats.compiled);
  c["compile_failed"] = static_cast<double>(stats.compileFailed);
  c["compile_threads"] = stats.threads;
  c["compile_s"] = stats.compileSeconds;
  c["rank_s"] = stats.rankSeconds;
  c["total_s"] = stats.totalSeconds;
  // The tune is CPU-bound on every core: other jobs on the machine show in it.
  double load[1] = {0};
  if (getloadavg(load, 1) == 1)
    c["load_1min_after"] = load[0];
}

/// "Intel(R) Xeon(R) ..." from /proc/cpuinfo, or "unknown".

} // namespace

int main(int argc, char **argv) {
  tilec::bench::addMachineContext();
  for (const tilec::kernels::KernelInfo &k : tilec::kernels::shippedKernels()) {
    for (const char *arch : kTargets) {
      std::string suffix = "/" + k.name + "/" + arch;
      benchmark::RegisterBenchmark(("BM_CompileCold" + suffix).c_str(), BM_CompileCold, &k, std::string(arch))
          ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);
      benchmark::RegisterBenchmark(("BM_CompileWarm" + suffix).c_str(), BM_CompileWarm, &k, std::string(arch))
          ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
      benchmark::RegisterBenchmark(("BM_CompileWarmCodeObject" + suffix).c_str(), BM_CompileWarmCodeObject, &k,
                                   std::string(arch))
          ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
      benchmark::RegisterBenchmark(("BM_ProcessToCodeObject" + suffix).c_str(), BM_ProcessToCodeObject, &k,
                                   std::string(arch))
          ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);
    }
  }
  if (const tilec::kernels::KernelInfo *gemm = tilec::kernels::findKernel("gemm")) {
    benchmark::RegisterBenchmark("BM_Autotune100/gemm/gfx942", BM_Autotune100, gemm, std::string("gfx942"),
                                 std::string())
        ->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);
    benchmark::RegisterBenchmark("BM_Autotune100/gemm/gfx942/after_2048", BM_Autotune100, gemm,
                                 std::string("gfx942"), std::string("2048"))
        ->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
