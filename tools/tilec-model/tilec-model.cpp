// tilec-model: the modelled time of one shipped kernel (lib/Model, see
// docs/cost-model.md) for a launch whose shape the caller gives: the model
// reads the loop from the compiled code but the loop's trip count and the
// number of workgroups are runtime values.
//
//   tilec-model --kernel=gemm --offload-arch=sm_90a -p M=4096 ... \
//       --workgroups=1024 --flops-per-workgroup=1.34e11 --hbm-bytes=1e8 [--trips=N] [--json]
#include "Model/AsmModel.h"
#include "Registry.h"

#include "tilec/tilec.hpp"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
cl::OptionCategory category("tilec-model options");
cl::opt<std::string> kernelOpt("kernel", cl::desc("Shipped kernel (required)"), cl::cat(category));
cl::opt<std::string> archOpt("offload-arch", cl::desc("Target"), cl::init("gfx942"), cl::cat(category));
cl::list<std::string> paramOpt("p", cl::desc("Kernel parameter key=value"), cl::value_desc("key=value"),
                               cl::cat(category));
cl::opt<long long> workgroupsOpt("workgroups", cl::desc("Workgroups of the launch (required)"), cl::init(0),
                                 cl::cat(category));
cl::opt<double> tripsOpt("trips", cl::desc("Main-loop iterations per workgroup"), cl::init(0), cl::cat(category));
cl::opt<double> flopsOpt("flops-per-workgroup", cl::desc("Matrix work of the loop per workgroup"), cl::init(0),
                         cl::cat(category));
cl::opt<double> bytesOpt("load-bytes-per-workgroup", cl::desc("Bytes the loop loads per workgroup"), cl::init(0),
                         cl::cat(category));
cl::opt<double> hbmOpt("hbm-bytes", cl::desc("Distinct bytes the launch moves to or from memory"), cl::init(0),
                       cl::cat(category));
cl::opt<bool> jsonOpt("json", cl::desc("One JSON object"), cl::cat(category));

/// The flags' values, copied once after parsing: the in-process lld driver
/// (AMD targets) resets every llvm::cl option of the process when it links,
/// so nothing reads the cl::opt objects after the compile (as in tilec.cpp).
struct Flags {
  std::string kernel, arch;
  std::vector<std::string> params;
  long long workgroups;
  double trips, flops, loadBytes, hbmBytes;
  bool json;
};
Flags snapshotFlags() {
  return Flags{kernelOpt,  archOpt,  {paramOpt.begin(), paramOpt.end()}, workgroupsOpt, tripsOpt, flopsOpt,
               bytesOpt,   hbmOpt,   jsonOpt};
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "tilec compiled-code cost model\n");
  const Flags flags = snapshotFlags();
  auto fail = [](const std::string &m) {
    errs() << "tilec-model: error: " << m << "\n";
    return 1;
  };
  // --kernel and --workgroups are checked here, not declared cl::Required:
  // lld, linking in process for AMD targets, parses its -plugin-opt flags
  // through the same option registry, and that parse fails on a Required
  // option it does not see.
  if (flags.kernel.empty())
    return fail("--kernel is required (see tilec --list-kernels)");
  if (flags.workgroups <= 0)
    return fail("--workgroups is required and must be positive");
  const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel(flags.kernel);
  if (!info)
    return fail("unknown kernel '" + flags.kernel + "'");
  const tilec::TargetInfo *target = tilec::lookupTarget(flags.arch);
  const tilec::model::DeviceFacts *device = tilec::model::deviceFacts(flags.arch);
  if (!target || !device)
    return fail("no device facts for '" + flags.arch + "' (known: " + tilec::knownTargetsList() + ")");
  tilec::kernels::KernelParams params;
  for (const std::string &kv : flags.params) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos)
      return fail("-p " + kv + ": expected key=value");
    params[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  tilec::Result<tilec::Kernel> kernel = info->build(tilec::kernels::withTargetDefaults(*info, params, flags.arch));
  if (!kernel)
    return fail(kernel.error());
  tilec::CompileOptions opts;
  opts.arch = flags.arch;
  tilec::Result<tilec::CompiledKernel> ck = tilec::compile(*kernel, opts);
  if (!ck)
    return fail(ck.error());
  tilec::model::CodeCost code = target->vendor == tilec::Vendor::NVIDIA
                                    ? tilec::model::analyzePtx(tilec::disassemble(*ck), *target, *device)
                                    : tilec::model::analyzeAmdAssembly(tilec::disassemble(*ck), *target, *device);
  tilec::model::LaunchShape launch;
  launch.workgroups = flags.workgroups;
  launch.wavesPerWorkgroup = ck->numWaves;
  launch.loopTrips = flags.trips;
  launch.matrixFlopsPerWorkgroup = flags.flops;
  launch.loadBytesPerWorkgroup = flags.loadBytes;
  launch.hbmBytes = flags.hbmBytes;
  launch.occupancy = ck->report.occupancy;
  launch.ldsWorkgroupsPerUnit = target->ldsWorkgroupsPerCU(ck->report.ldsBytes);
  tilec::model::KernelEstimate e = tilec::model::estimateKernel(code, launch, *device);
  if (!e.error.empty())
    return fail(ck->name + ": " + e.error);
  if (!flags.json) {
    outs() << ck->name << ": " << tilec::model::describe(e) << "\n";
    return 0;
  }
  json::Object terms;
  for (const tilec::model::Term &t : e.terms)
    terms[t.name] = t.seconds * 1e3;
  json::Object loop;
  if (code.mainLoop >= 0) {
    const tilec::model::IterationCost &c = code.loops[size_t(code.mainLoop)].cost;
    loop = json::Object{{"instructions", c.instructions},       {"matrix_instructions", c.matrixInstructions},
                        {"valu", c.valuInstructions},           {"salu", c.saluInstructions},
                        {"lds_instructions", c.ldsInstructions}, {"lds_cycles", c.ldsCycles},
                        {"global_load_bytes", c.globalLoadBytes}, {"chain_cycles", c.chainCycles},
                        {"exposed_latency_cycles", c.exposedLatencyCycles}};
  }
  json::Object out{{"kernel", ck->name},
                   {"arch", flags.arch},
                   {"model_ms", e.seconds * 1e3},
                   {"bound", e.bound},
                   {"terms_ms", std::move(terms)},
                   {"loop", std::move(loop)},
                   {"loop_trips", e.loopTrips},
                   {"workgroups_per_unit", e.workgroupsPerUnit},
                   {"rounds", e.rounds},
                   {"occupancy", ck->report.occupancy}};
  outs() << formatv("{0:2}", json::Value(std::move(out))) << "\n";
  return 0;
}
