#include "TuneCli.h"

#include "Tuning.h"

#include <cstdio>
#include <iostream>
#include <mutex>
#include <unistd.h>

namespace tilec::kernels {

using namespace tilec::tune;

namespace {

std::string format(const char *fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

/// "1.23 ms", "45.6 us", "2.10 s".
std::string duration(double s) {
  if (s >= 1)
    return format("%.2f s", s);
  if (s >= 1e-3)
    return format("%.2f ms", s * 1e3);
  return format("%.1f us", s * 1e6);
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width)
    s.append(width - s.size(), ' ');
  return s;
}

} // namespace

int runTuneCommand(const KernelInfo &kernel, const KernelParams &params,
                   const TuneCliOptions &cli, std::ostream &out, std::ostream &err) {
  TuneOptions o;
  o.arch = cli.arch;
  o.jit = cli.jit;
  o.useCodeObjectCache = cli.useCache;
  o.useTuneCache = cli.useCache;
  o.cacheDir = cli.cacheDir;
  o.device = cli.device;
  o.threads = cli.threads;
  o.onWarning = [&err](const std::string &m) { err << m << "\n"; };
  const bool tty = cli.progress == TuneCliOptions::Progress::Always ||
                   (cli.progress == TuneCliOptions::Progress::Auto && &err == &std::cerr && isatty(STDERR_FILENO));
  bool drewProgress = false;
  if (tty)
    o.onProgress = [&](const TuneProgress &pr) {
      err << "\r\033[Ktune: compiled " << pr.compiled << "/" << pr.total << ", "
          << format("%.1f s", pr.elapsedSeconds) << std::flush;
      drewProgress = true;
    };

  Result<TuneResult> r = tuneShippedKernel(kernel, params, o);
  if (drewProgress)
    err << "\r\033[K" << std::flush;
  if (!r) {
    err << r.error() << "\n";
    return 1;
  }
  const TuneResult &res = *r;
  const TuneRecord &rec = res.record;
  const GemmProblem &p = res.problem;
  const bool modelled = rec.method == "cost model";

  out << "tune: " << kernel.name << " M=" << p.M << " N=" << p.N << " K=" << p.K << " "
      << elemTypeName(p.in) << " -> " << elemTypeName(p.out) << " on " << res.arch << ", shape class "
      << res.shapeClass << "\n";
  if (res.fromCache) {
    out << "tune: cache hit (" << res.cachePath << "): tuned for M=" << rec.M << " N=" << rec.N
        << " K=" << rec.K << ", " << rec.method << "; nothing compiled\n";
  } else {
    const TuneStats &s = res.stats;
    size_t pruned = 0;
    std::string why;
    for (int i = 1; i < kNumPruneReasons; ++i) {
      pruned += s.pruned[i];
      if (s.pruned[i])
        why += std::string(why.empty() ? "" : ", ") + pruneReasonName(PruneReason(i)) + " " +
               std::to_string(s.pruned[i]);
    }
    out << "tune: " << s.spaceSize << " candidates, " << pruned << " pruned" << (why.empty() ? "" : " (" + why + ")")
        << ", " << (s.compiled + s.compileFailed) << " compiled in " << format("%.1f s", s.compileSeconds)
        << " on " << s.threads << " threads";
    if (s.compileFailed)
      out << ", " << s.compileFailed << " failed";
    if (s.droppedScratch)
      out << ", " << s.droppedScratch << " dropped (scratch/spills)";
    if (s.droppedOccupancy)
      out << ", " << s.droppedOccupancy << " dropped (occupancy)";
    out << "; ranked by " << rec.method << (modelled ? " (docs/autotuning.md)" : "") << " in "
        << format("%.1f s", s.totalSeconds) << "\n";
    if (s.compileFailed)
      out << "tune: first compile failure: " << s.firstCompileError.substr(0, s.firstCompileError.find('\n'))
          << "\n";
    if (res.cachePath.size())
      out << "tune: cached in " << res.cachePath << "\n";
  }

  const char *timeLabel = modelled ? "modelled" : "measured";
  out << "  #  block_m block_n block_k waves stages split_k  " << pad("instruction", 26) << "vgpr agpr   lds  occ  "
      << pad(timeLabel, 10) << "% peak\n";
  for (size_t i = 0; i < rec.ranking.size(); ++i) {
    const RankedCandidate &c = rec.ranking[i];
    char line[256];
    std::snprintf(line, sizeof line, "%3zu  %7lld %7lld %7lld %5d %6d %7d  %s%4d %4d %6lld %3d  %s%5.1f%%\n", i + 1,
                  (long long)c.tile.blockM, (long long)c.tile.blockN, (long long)c.tile.blockK, c.tile.waves,
                  c.tile.stages, c.tile.splitK, pad(c.instr, 26).c_str(), c.vgpr, c.agpr, (long long)c.ldsBytes, c.occupancy,
                  pad(duration(c.seconds), 10).c_str(), c.pctOfPeak);
    out << line;
  }
  const RankedCandidate &best = rec.ranking.front();
  out << "best: " << best.tile.flags() << " (" << best.instr << ", " << timeLabel << " " << duration(best.seconds)
      << ", " << format("%.0f", best.pctOfPeak) << "% of peak)\n";
  if (!best.why.empty())
    out << "why: the compiled-code model puts it first, bound by " << best.why << "\n";
  out.flush();
  return 0;
}

int runTuneCommand(const KernelInfo &kernel, const KernelParams &params,
                   const TuneCliOptions &options) {
  return runTuneCommand(kernel, params, options, std::cout, std::cerr);
}

} // namespace tilec::kernels
