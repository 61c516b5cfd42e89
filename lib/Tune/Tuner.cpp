#include "Tune/Tuner.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
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

/// Parameters that describe the problem, not the code: left out of the cache
/// key's fixed parameters (M, N, K go in as the shape class).
bool isProblemOnlyParam(const std::string &name) {
  return name == "M" || name == "N" || name == "K" || name == "scale_a" || name == "scale_b";
}

bool isTuningParam(const std::string &name) {
  const std::vector<std::string> &t = gemmTuningParams();
  return std::find(t.begin(), t.end(), name) != t.end();
}

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
  e.seconds += double(p.M) * double(p.N) * (2.0 * 4 * double(S) + outBytes) / peaks.memoryBytesPerSec;
  e.pctOfPeak = 100.0 * 2.0 * double(p.M) * double(p.N) * double(p.K) / e.seconds / peakFlops(target, peaks, p.in);
  return e;
}

/// The instruction and wave grid tilec-select-matrix-instr wrote on the
/// tile.gemm of the compiled tile IR.
std::optional<std::pair<std::string, std::pair<int, int>>> chosenTiling(const std::string &tileIR) {
  size_t g = tileIR.find("tile.gemm ");
  if (g == std::string::npos)
    return std::nullopt;
  size_t i = tileIR.find("instr = \"", g), w = tileIR.find("wave_grid = array<i64: ", g);
  size_t eol = tileIR.find('\n', g);
  if (i == std::string::npos || w == std::string::npos || i > eol || w > eol)
    return std::nullopt;
  i += 9;
  std::string instr = tileIR.substr(i, tileIR.find('"', i) - i);
  w += 23;
  char *end = nullptr;
  long wm = std::strtol(tileIR.c_str() + w, &end, 10);
  if (*end != ',')
    return std::nullopt;
  long wn = std::strtol(end + 1, nullptr, 10);
  return std::make_pair(instr, std::make_pair(int(wm), int(wn)));
}

struct Compiled {
  GemmTile tile;
  MatrixTiling predicted;
  std::optional<CompiledKernel> kernel;
  std::string error;
};

/// Median of `n` timed launches after one warm-up, on `device`.
Result<double> timeOnDevice(Device &device, const CompiledKernel &k, const kernels::Problem &prob, int n) {
  std::vector<void *> buffers;
  std::vector<LaunchArg> args;
  std::vector<size_t> tensorArgs;  // the argument of each of prob.tensors
  size_t scalar = 0;
  auto cleanup = [&] {
    for (void *b : buffers)
      device.release(b);
  };
  for (const kernels::TensorSpec &t : prob.tensors) {
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
    const kernels::TensorSpec &t = prob.tensors[i];
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

Result<TuneResult> tuneKernel(const kernels::KernelInfo &kernel, const kernels::KernelParams &params,
                        const TuneOptions &options) {
  const Clock::time_point start = Clock::now();
  if (kernel.name != "gemm")
    return Error{"tilec: error: kernel '" + kernel.name + "' has no tuning space (tunable kernels: gemm)"};
  const TargetInfo *target = lookupTarget(options.arch);
  const DevicePeaks *peaks = devicePeaks(options.arch);
  if (!target || !peaks)
    return Error{"tilec: error: unknown target '" + options.arch + "' (known: " + knownTargetsList() + ")"};

  // ---- the problem and the fixed parameters (validated by the kernel's own reader)
  if (std::any_of(params.begin(), params.end(), [](const auto &kv) { return isTuningParam(kv.first); }))
    if (Result<Kernel> k = kernel.build(params); !k)  // validates the pinned values
      return Error{k.error()};
  Result<kernels::Problem> prob = kernel.problem(params);
  if (!prob)
    return Error{prob.error()};
  TuneResult result;
  result.arch = options.arch;
  GemmProblem &p = result.problem;
  // C is [M, N]; A holds M*K elements whichever way it is stored (layout).
  p.M = prob->tensors[2].shape[0];
  p.N = prob->tensors[2].shape[1];
  p.K = prob->tensors[0].shape[0] * prob->tensors[0].shape[1] / p.M;
  p.in = *parseElemType(mlirTypeName(prob->tensors[0].dtype));
  p.out = *parseElemType(mlirTypeName(prob->tensors[2].dtype));
  result.shapeClass = shapeClass(p);

  GemmSpace space = options.space;
  kernels::KernelParams fixed;  // the -p values every candidate shares
  std::string fixedKey;         // ... and those that shape the code, defaults included
  for (const kernels::KernelParam &kp : kernel.params) {
    auto given = params.find(kp.name);
    const std::string &value = given != params.end() ? given->second : kp.defaultValue;
    if (isTuningParam(kp.name)) {
      if (given != params.end())
        space.pin(kp.name, std::strtoll(value.c_str(), nullptr, 10));
      continue;
    }
    if (given != params.end())
      fixed[kp.name] = value;
    if (!isProblemOnlyParam(kp.name))
      fixedKey += (fixedKey.empty() ? "" : ";") + kp.name + "=" + value;
  }

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
  if (p.M <= kSkinnyMaxM && !gpu && params.find("split_k") == params.end())
    space.splitK = kSkinnySplitK;

  TuneCacheKey key{kernel.name, fixedKey, result.shapeClass, options.arch, compilerIdentity(options.jit),
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
      kernels::KernelParams ps = fixed;
      for (auto &[k, v] : c.tile.params())
        ps[k] = v;
      Result<Kernel> k = kernel.build(ps);
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
      const MatrixInstr *mi = target->findInstr(chosen->first);
      if (mi && (mi != c.predicted.instr || chosen->second.first != c.predicted.wm))
        ++st.instrMismatch;
      if (mi)
        tiling = MatrixTiling{mi, chosen->second.first, chosen->second.second};
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
    scored.push_back(Scored{rc, r.ldsBytes, scored.size()});
    ranked.push_back(&c);
  }
  if (scored.empty())
    return Error{"tilec: error: tuning " + kernel.name + " for " + options.arch + ": no candidate compiled cleanly" +
                 (st.firstCompileError.empty() ? "" : " (first failure: " + st.firstCompileError + ")")};

  // ---- rank: time on the GPU, else the model's figures stay
  const Clock::time_point rankStart = Clock::now();
  if (gpu) {
    const double peak = peakFlops(*target, *peaks, p.in);
    for (size_t i = 0; i < scored.size(); ++i) {
      Result<double> t = timeOnDevice(*gpu, *ranked[i]->kernel, *prob, std::max(1, options.timedLaunches));
      if (!t)
        return Error{"tilec: error: timing " + scored[i].c.kernelName + ": " + t.error()};
      scored[i].c.seconds = *t;
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
