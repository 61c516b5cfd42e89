#include "Tune/Tuner.h"

#include "Model/AsmModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace tilec::tune {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// modelGemm, and for a split-K candidate (S slices) the GEMM it launches
/// first, S times the workgroups each over a 1/S share of the k steps (as
/// the GEMM of S stacked copies of A's row tiles over K/S), plus the
/// reduction's memory traffic at the device's bandwidth: S f32 slices
/// written and read, C written.
CostEstimate modelCandidate(const CostInputs &in, const TargetInfo &target, const DevicePeaks &peaks) {
  const int64_t S = in.tile.splitK;
  if (S <= 1)
    return modelGemm(in, target, peaks);
  CostInputs split = in;
  const GemmProblem &p = in.problem;
  const int64_t steps = (p.K + in.tile.blockK - 1) / in.tile.blockK;
  split.problem.M = S * ((p.M + in.tile.blockM - 1) / in.tile.blockM) * in.tile.blockM;
  split.problem.K = (steps + S - 1) / S * in.tile.blockK;
  CostEstimate e = modelGemm(split, target, peaks);
  const double outBytes = p.out == ElemType::F32 ? 4 : 2;
  e.seconds += double(p.M) * double(p.N) * (2.0 * 4 * double(S) + outBytes) / peaks.hbmBytesPerSec;
  e.pctOfPeak = 100.0 * 2.0 * double(p.M) * double(p.N) * double(p.K) / e.seconds / peakFlops(target, peaks, p.in);
  return e;
}

} // namespace

std::optional<ChosenTiling> chosenTiling(const std::string &tileIR) {
  const std::string layout = "layout = #tile.matrix<\"", grid = "wave_grid = [";
  size_t g = tileIR.find("tile.gemm ");
  if (g == std::string::npos)
    return std::nullopt;
  size_t i = tileIR.find(layout, g), eol = tileIR.find('\n', g);
  size_t w = i == std::string::npos ? i : tileIR.find(grid, i);
  if (i == std::string::npos || w == std::string::npos || w > eol)
    return std::nullopt;
  i += layout.size();
  ChosenTiling t{tileIR.substr(i, tileIR.find('"', i) - i)};
  char *end = nullptr;
  t.wm = int(std::strtol(tileIR.c_str() + w + grid.size(), &end, 10));
  if (*end != ',')
    return std::nullopt;
  t.wn = int(std::strtol(end + 1, nullptr, 10));
  return t;
}

namespace {

struct Compiled {
  GemmTile tile;
  MatrixTiling predicted;
  std::optional<CompiledKernel> kernel;
  std::string error;
};

/// Median of `n` timed launches after one warm-up, on `device`.
/// The compiled-code model (lib/Model) of one compiled GEMM candidate: its
/// main loop read from the code, the launch from the problem (one workgroup
/// per block_m x block_n tile of C, each doing ceil(K / block_k) k steps of
/// matrix work; the distinct bytes are A, B and C once).
model::KernelEstimate modelCompiledGemm(const CompiledKernel &k, const GemmProblem &p, const GemmTile &t,
                                        const TargetInfo &target, const model::DeviceFacts &facts) {
  const std::string code = disassemble(k);
  model::CodeCost cost = target.vendor == Vendor::NVIDIA ? model::analyzePtx(code, target, facts)
                                                         : model::analyzeAmdAssembly(code, target, facts);
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  model::LaunchShape launch;
  launch.workgroups = ceilDiv(p.M, t.blockM) * ceilDiv(p.N, t.blockN);
  launch.wavesPerWorkgroup = k.numWaves;
  launch.matrixFlopsPerWorkgroup = 2.0 * t.blockM * t.blockN * t.blockK * ceilDiv(p.K, t.blockK);
  launch.hbmBytes = double(p.M * p.K + p.K * p.N) * elemTypeBytes(p.in) + double(p.M * p.N) * elemTypeBytes(p.out);
  launch.occupancy = k.report.occupancy;
  launch.ldsWorkgroupsPerUnit = target.ldsWorkgroupsPerCU(k.report.ldsBytes);
  return model::estimateKernel(cost, launch, facts);
}

/// "latency (matrix 0.125 ms, latency 0.181 ms, lds 0.125 ms)": the bounding
/// term, then the three largest.
std::string whyLine(const model::KernelEstimate &e) {
  std::vector<model::Term> terms = e.terms;
  std::sort(terms.begin(), terms.end(), [](const model::Term &a, const model::Term &b) { return a.seconds > b.seconds; });
  std::string s = e.bound + " (";
  for (size_t i = 0; i < terms.size() && i < 3; ++i)
    s += (i ? ", " : "") + terms[i].name + " " + llvm::formatv("{0:f3}", terms[i].seconds * 1e3).str() + " ms";
  return s + ")";
}

Result<double> timeOnDevice(Device &device, const CompiledKernel &k, const TunableGemm &prob, int n) {
  std::vector<void *> buffers;
  std::vector<LaunchArg> args;
  std::vector<size_t> tensorArgs;  // the argument of each of prob.tensors
  size_t scalar = 0;
  auto cleanup = [&] {
    for (void *b : buffers)
      device.release(b);
  };
  for (const TimedTensor &t : prob.tensors) {
    while (scalar < prob.scalars.size() && prob.scalars[scalar].position == args.size())
      args.push_back(LaunchArg::f32(prob.scalars[scalar++].value));
    tensorArgs.push_back(args.size());
    args.push_back(LaunchArg::tensor(nullptr, t.shape));
  }
  while (scalar < prob.scalars.size())
    args.push_back(LaunchArg::f32(prob.scalars[scalar++].value));
  // Sizes are checked before the tensors are allocated.
  if (Status s = checkLaunchArgs(k, args); !s)
    return Error{s.error()};
  for (size_t i = 0; i < prob.tensors.size(); ++i) {
    const TimedTensor &t = prob.tensors[i];
    size_t bytes = dtypeBytes(t.dtype);
    for (int64_t d : t.shape)
      bytes *= static_cast<size_t>(d);
    Result<void *> p = device.allocate(bytes);
    if (!p) {
      cleanup();
      return Error{p.error()};
    }
    buffers.push_back(*p);
    std::vector<char> zeros(bytes, 0);
    if (Status s = device.copyToDevice(*p, zeros.data(), bytes); !s) {
      cleanup();
      return Error{s.error()};
    }
    args[tensorArgs[i]].data = *p;
  }
  std::vector<double> times;
  for (int i = 0; i <= n; ++i) {
    Result<LaunchStats> s = device.launch(k, args);
    if (!s) {
      cleanup();
      return Error{s.error()};
    }
    if (i > 0)  // launch 0 warms up
      times.push_back(s->seconds);
  }
  cleanup();
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

std::string compilerIdentity(JitChoice jit) {
  std::string id = "tilec " TILEC_VERSION "; llvm " LLVM_VERSION_STRING "; prelude " +
                   llvm::utohexstr(llvm::xxh3_64bits(llvm::StringRef(devicePrelude())), true);
  // The compiler library's build: a rebuilt compiler gives another identity.
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&tilec::devicePrelude), &info) && info.dli_fname) {
    llvm::sys::fs::file_status st;
    if (!llvm::sys::fs::status(info.dli_fname, st))
      id += "; lib " + std::to_string(st.getSize()) + "@" +
            std::to_string(st.getLastModificationTime().time_since_epoch().count());
  }
  id += std::string("; jit ") + (jit == JitChoice::Auto ? "auto" : jit == JitChoice::HipRTC ? "hiprtc" : "clang");
  return id;
}

Result<TuneResult> tuneKernel(const TunableGemm &kernel, const TuneOptions &options) {
  const Clock::time_point start = Clock::now();
  const TargetInfo *target = lookupTarget(options.arch);
  const DevicePeaks *peaks = devicePeaks(options.arch);
  if (!target || !peaks)
    return Error{"tilec: error: unknown target '" + options.arch + "' (known: " + knownTargetsList() + ")"};

  TuneResult result;
  result.arch = options.arch;
  result.problem = kernel.problem;
  const GemmProblem &p = result.problem;
  result.shapeClass = shapeClass(p);
  GemmSpace space = options.space;
  for (const auto &[name, value] : kernel.pinned)
    space.pin(name, value);

  // ---- how candidates are ranked: a GPU when one opens, else the model
  std::unique_ptr<Device> gpu;
  std::string method = "cost model";
  if (options.device != DeviceKind::Emulator) {
    Result<std::unique_ptr<Device>> d = Device::open(DeviceKind::Hip, options.arch);
    if (d) {
      gpu = std::move(*d);
      method = "measured on " + gpu->description();
    } else if (options.device == DeviceKind::Hip) {
      return Error{d.error()};
    }
  }

  // Skinny problems: the model also weighs split-K (a GPU would time only
  // the partial-sum kernel of a split-K candidate, so measured tuning keeps
  // split_k=1 unless it is given).
  if (p.M <= kSkinnyMaxM && !gpu && !kernel.pinned.count("split_k"))
    space.splitK = kSkinnySplitK;

  TuneCacheKey key{kernel.name, kernel.codeKey, result.shapeClass, options.arch, compilerIdentity(options.jit),
                   space.signature(), gpu ? "measured:" + gpu->description() : "model"};
  TuneCache cache(options.cacheDir, options.onWarning);
  if (options.useTuneCache) {
    result.cachePath = cache.path(key);
    if (std::optional<TuneRecord> hit = cache.load(key)) {
      result.record = std::move(*hit);
      result.fromCache = true;
      result.stats.totalSeconds = since(start);
      return result;
    }
  }

  // ---- prune
  TuneStats &st = result.stats;
  std::vector<GemmTile> points = space.enumerate();
  st.spaceSize = points.size();
  std::vector<Compiled> work;
  std::vector<std::pair<double, size_t>> estimates;  // (modelled seconds, index in work)
  for (const GemmTile &t : points) {
    PruneVerdict v = prune(t, p, space, *target, *peaks);
    if (v.reason != PruneReason::Kept) {
      ++st.pruned[static_cast<size_t>(v.reason)];
      continue;
    }
    estimates.push_back({modelCandidate(CostInputs{p, t, *v.tiling, v.estimatedWorkgroupsPerUnit}, *target, *peaks).seconds,
                         work.size()});
    work.push_back(Compiled{t, *v.tiling, std::nullopt, {}});
  }
  // Too many: compile the model's favourites (ties: the space's order).
  if (options.maxCompiles && work.size() > options.maxCompiles) {
    std::sort(estimates.begin(), estimates.end());
    std::vector<Compiled> best;
    for (size_t i = 0; i < options.maxCompiles; ++i)
      best.push_back(std::move(work[estimates[i].second]));
    st.pruned[static_cast<size_t>(PruneReason::ModelRank)] = work.size() - best.size();
    work = std::move(best);
  }
  if (work.empty())
    return Error{"tilec: error: tuning " + kernel.name + " for " + options.arch +
                 ": every candidate was pruned (see docs/autotuning.md, \"Pruning\")"};

  // ---- compile in parallel
  const Clock::time_point compileStart = Clock::now();
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, work.size()));
  st.threads = threads;
  CompileOptions copts;
  copts.arch = options.arch;
  copts.jit = options.jit;
  copts.useCache = options.useCodeObjectCache;
  copts.cacheDir = options.cacheDir;
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex progressMu;
  auto worker = [&] {
    for (size_t i = next++; i < work.size(); i = next++) {
      Compiled &c = work[i];
      Result<Kernel> k = kernel.build(c.tile);
      if (!k) {
        c.error = k.error();
      } else if (Result<CompiledKernel> ck = compile(*k, copts)) {
        c.kernel = std::move(*ck);
      } else {
        c.error = ck.error();
      }
      std::lock_guard<std::mutex> lock(progressMu);
      ++done;
      if (options.onProgress)
        options.onProgress(TuneProgress{done, work.size(), since(compileStart)});
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(worker);
  for (std::thread &t : pool)
    t.join();
  st.compileSeconds = since(compileStart);

  // ---- read the reports; drop what spills or does not fit
  struct Scored {
    RankedCandidate c;
    int64_t lds;
    size_t order;  ///< position in the space
  };
  std::vector<Scored> scored;
  std::vector<const Compiled *> ranked;
  for (const Compiled &c : work) {
    if (!c.kernel) {
      ++st.compileFailed;
      if (st.firstCompileError.empty())
        st.firstCompileError = c.tile.flags() + ": " + c.error;
      continue;
    }
    ++st.compiled;
    const Report &r = c.kernel->report;
    if (r.scratchBytes > 0 || r.vgprSpills > 0 || r.sgprSpills > 0) {
      ++st.droppedScratch;
      continue;
    }
    MatrixTiling tiling = c.predicted;
    if (auto chosen = chosenTiling(c.kernel->tileIR)) {
      const MatrixInstr *mi = target->findInstr(chosen->instr);
      if (mi && (mi != c.predicted.instr || chosen->wm != c.predicted.wm))
        ++st.instrMismatch;
      if (mi)
        tiling = MatrixTiling{mi, chosen->wm, chosen->wn};
    }
    int perUnit = residentWorkgroups(*target, *peaks, r.vgpr, r.agpr, r.ldsBytes, c.tile.waves);
    if (perUnit < 1) {
      ++st.droppedOccupancy;
      continue;
    }
    RankedCandidate rc;
    rc.tile = c.tile;
    rc.kernelName = c.kernel->name;
    rc.instr = tiling.instr->name;
    rc.vgpr = r.vgpr;
    rc.agpr = r.agpr;
    rc.ldsBytes = r.ldsBytes;
    rc.occupancy = r.occupancy;
    CostEstimate e = modelCandidate(CostInputs{p, c.tile, tiling, perUnit}, *target, *peaks);
    rc.seconds = e.seconds;
    rc.pctOfPeak = e.pctOfPeak;
    // The compiled-code model where the target has its facts: it reads the
    // candidate's main loop, registers and LDS from what was compiled.
    if (const model::DeviceFacts *facts = model::deviceFacts(options.arch)) {
      model::KernelEstimate m = modelCompiledGemm(*c.kernel, p, c.tile, *target, *facts);
      if (m.error.empty()) {
        rc.seconds = m.seconds;
        rc.pctOfPeak = 100.0 * 2.0 * p.M * p.N * p.K / m.seconds / peakFlops(*target, *peaks, p.in);
        rc.why = whyLine(m);
      }
    }
    scored.push_back(Scored{rc, r.ldsBytes, scored.size()});
    ranked.push_back(&c);
  }
  if (scored.empty())
    return Error{"tilec: error: tuning " + kernel.name + " for " + options.arch + ": no candidate compiled cleanly" +
                 (st.firstCompileError.empty() ? "" : " (first failure: " + st.firstCompileError + ")")};

  // ---- rank: time on the GPU, else the model's figures stay (measured
  // times carry no model explanation)
  const Clock::time_point rankStart = Clock::now();
  if (gpu) {
    const double peak = peakFlops(*target, *peaks, p.in);
    for (size_t i = 0; i < scored.size(); ++i) {
      Result<double> t = timeOnDevice(*gpu, *ranked[i]->kernel, kernel, std::max(1, options.timedLaunches));
      if (!t)
        return Error{"tilec: error: timing " + scored[i].c.kernelName + ": " + t.error()};
      scored[i].c.seconds = *t;
      scored[i].c.why.clear();
      scored[i].c.pctOfPeak = 100.0 * 2.0 * p.M * p.N * p.K / *t / peak;
    }
  }
  // Faster first; ties (e.g. stage counts the compiler does not use yet) go
  // to less LDS, fewer stages, fewer waves, then the space's order.
  std::sort(scored.begin(), scored.end(), [](const Scored &a, const Scored &b) {
    if (a.c.seconds != b.c.seconds)
      return a.c.seconds < b.c.seconds;
    if (a.lds != b.lds)
      return a.lds < b.lds;
    if (a.c.tile.stages != b.c.tile.stages)
      return a.c.tile.stages < b.c.tile.stages;
    if (a.c.tile.waves != b.c.tile.waves)
      return a.c.tile.waves < b.c.tile.waves;
    return a.order < b.order;
  });
  st.rankSeconds = since(rankStart);

  TuneRecord &rec = result.record;
  rec.key = key.text();
  rec.M = p.M, rec.N = p.N, rec.K = p.K;
  rec.method = method;
  for (size_t i = 0; i < scored.size() && i < std::max<size_t>(options.keep, 1); ++i)
    rec.ranking.push_back(scored[i].c);
  if (options.useTuneCache)
    cache.store(key, rec);
  st.totalSeconds = since(start);
  return result;
}

} // namespace tilec::tune
