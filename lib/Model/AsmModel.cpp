// The device facts and the kernel-level estimate (docs/cost-model.md).
#include "Model/AsmModel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tilec::model {

const DeviceFacts *deviceFacts(std::string_view arch) {
  // docs/hardware.md section 11 gives the source of every figure.
  // {arch, part, units, simds/unit, clock, memory B/s, L2 B/clk/unit, LDS B/clk/unit,
  //  issue cycles, kinds issue together, VALU cycles, global / LDS / scalar latency,
  //  launch s, sustained B/s}. The last two are measured on the H200 only
  //  (docs/perf/h200/2026-12-03-h200-device-facts.json); no AMD GPU was there
  //  to measure them, so the AMD rows leave them out.
  static const DeviceFacts table[] = {
      {"gfx942", "MI300X", 304, 4, 2.1e9, 5.3e12, 64, 128, 4, true, 4, 500, 64, 200},
      {"gfx90a", "MI250X (one GCD)", 110, 4, 1.7e9, 1.6e12, 64, 128, 4, true, 4, 500, 64, 200},
      {"gfx1151", "Radeon 8060S (Strix Halo)", 20, 4, 2.9e9, 256e9, 64, 128, 1, true, 1, 500, 64, 200},
      {"sm_90a", "H200", 132, 4, 1.98e9, 4.8e12, 64, 128, 1, false, 1, 600, 30, 200, 10.0e-6, 4.25e12},
  };
  for (const DeviceFacts &d : table)
    if (d.arch == arch)
      return &d;
  return nullptr;
}

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The per-iteration terms of one unit holding `r` workgroups, in cycles.
struct IterationTerms {
  double matrix, valu, issue, chain, lds, l2;
  double max() const { return std::max({matrix, valu, issue, chain, lds, l2}); }
};

IterationTerms iterationTerms(const IterationCost &c, int64_t r, int waves, const DeviceFacts &d) {
  const double w = double(ceilDiv(r * waves, d.simdsPerUnit));  // waves on the busiest SIMD
  const double onUnit = double(r * waves);
  IterationTerms t;
  t.matrix = w * c.matrixCycles;
  if (d.kindsIssueTogether) {
    // Matrix instructions issue through the VALU port.
    t.valu = w * (c.valuInstructions + c.matrixInstructions) * d.valuCycles;
    const int memory = c.globalLoads + (c.instructions - c.valuInstructions - c.matrixInstructions -
                                        c.saluInstructions - c.ldsInstructions - c.globalLoads - c.barriers);
    t.issue = w * d.issueCycles * std::max({double(c.saluInstructions + c.barriers), double(c.ldsInstructions),
                                            double(memory)});
  } else {
    t.valu = w * c.valuInstructions * d.valuCycles;
    t.issue = w * c.instructions * d.issueCycles;
  }
  t.chain = c.chainCycles;
  t.lds = onUnit * c.ldsCycles;
  t.l2 = onUnit * (c.globalLoadBytes + c.globalStoreBytes) / d.l2BytesPerClkPerUnit;
  return t;
}

} // namespace

KernelEstimate estimateKernel(const CodeCost &code, const LaunchShape &launch, const DeviceFacts &d) {
  KernelEstimate e;
  if (!code.error.empty()) {
    e.error = code.error;
    return e;
  }
  const int waves = std::max(launch.wavesPerWorkgroup, 1);
  IterationCost loop;
  if (code.mainLoop >= 0)
    loop = code.loops[size_t(code.mainLoop)].cost;
  // Iterations per workgroup: given, or the work the loop does per pass.
  double trips = launch.loopTrips;
  if (trips <= 0 && launch.matrixFlopsPerWorkgroup > 0 && loop.matrixFlops > 0)
    trips = launch.matrixFlopsPerWorkgroup / (loop.matrixFlops * waves);
  if (trips <= 0 && launch.loadBytesPerWorkgroup > 0 && loop.globalLoadBytes > 0)
    trips = launch.loadBytesPerWorkgroup / (loop.globalLoadBytes * waves);
  if (code.mainLoop < 0)
    trips = 0;
  else if (trips <= 0)
    trips = 1;
  e.loopTrips = trips;

  int64_t perUnit = int64_t(std::max(launch.occupancy, 0)) * d.simdsPerUnit / waves;
  if (launch.ldsWorkgroupsPerUnit > 0)
    perUnit = std::min(perUnit, launch.ldsWorkgroupsPerUnit);
  if (perUnit < 1) {
    e.error = "a workgroup of " + std::to_string(waves) + " waves does not fit at occupancy " +
              std::to_string(launch.occupancy);
    return e;
  }
  e.workgroupsPerUnit = int(perUnit);
  const int64_t concurrent = perUnit * d.units;
  const int64_t full = launch.workgroups / concurrent, rest = launch.workgroups % concurrent;
  e.rounds = full + (rest ? 1 : 0);
  e.tailFraction = rest ? 1.0 - double(rest) / double(concurrent) : 0.0;

  // Sum each term over the rounds: `full` rounds with perUnit workgroups on
  // the busiest unit, then the last one with ceil(rest / units).
  IterationTerms sum{0, 0, 0, 0, 0, 0};
  double loopCycles = 0;
  auto addRound = [&](int64_t r, double count) {
    IterationTerms t = iterationTerms(loop, r, waves, d);
    sum.matrix += count * trips * t.matrix;
    sum.valu += count * trips * t.valu;
    sum.issue += count * trips * t.issue;
    sum.chain += count * trips * t.chain;
    sum.lds += count * trips * t.lds;
    sum.l2 += count * trips * t.l2;
    loopCycles += count * trips * t.max();
  };
  if (full)
    addRound(perUnit, double(full));
  if (rest)
    addRound(ceilDiv(rest, d.units), 1.0);
  const double outsideCycles = double(e.rounds) * code.outside.chainCycles;
  e.loopSeconds = loopCycles / d.clockHz;
  e.outsideSeconds = outsideCycles / d.clockHz;
  const double compute = e.loopSeconds + e.outsideSeconds;
  const double hbm = launch.hbmBytes / (d.sustainedBytesPerSec > 0 ? d.sustainedBytesPerSec : d.hbmBytesPerSec);
  e.terms = {{"matrix", sum.matrix / d.clockHz}, {"valu", sum.valu / d.clockHz},
             {"issue", sum.issue / d.clockHz},   {"latency", sum.chain / d.clockHz},
             {"lds", sum.lds / d.clockHz},       {"l2", sum.l2 / d.clockHz},
             {"outside-loop", e.outsideSeconds}, {"hbm", hbm}};
  if (d.launchSeconds > 0)
    e.terms.push_back({"launch", d.launchSeconds});
  e.seconds = d.launchSeconds + std::max(compute, hbm);
  if (hbm >= compute) {
    e.bound = "hbm";
  } else {
    const Term *best = &e.terms[0];
    for (size_t i = 0; e.terms[i].name != "hbm"; ++i)  // the loop terms and outside-loop
      if (e.terms[i].seconds > best->seconds)
        best = &e.terms[i];
    e.bound = best->name;
  }
  return e;
}

std::string describe(const KernelEstimate &e) {
  if (!e.error.empty())
    return "no estimate: " + e.error;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.4f ms (model), bound by %s; %.0f loop trips, %d workgroups/unit, %lld rounds",
                e.seconds * 1e3, e.bound.c_str(), e.loopTrips, e.workgroupsPerUnit, (long long)e.rounds);
  std::string s = buf;
  s += " [";
  for (size_t i = 0; i < e.terms.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%s %.4f", i ? ", " : "", e.terms[i].name.c_str(), e.terms[i].seconds * 1e3);
    s += buf;
  }
  return s + " ms]";
}

} // namespace tilec::model
