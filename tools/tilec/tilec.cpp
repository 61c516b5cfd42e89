// tilec: the command-line compiler (libtilec-cli.so, loaded by the `tilec`
// launcher in main.cpp, which answers cached kernels without it).
//
//   tilec --list-kernels
//   tilec --kernel=gemm -p M=4096 -p N=4096 -p K=4096 --offload-arch=gfx942 --emit=asm
//   tilec kernel.mlir --emit=hip -o kernel.hip
//   tilec my_kernel.cpp --emit=report --json
//   tilec my_kernel.json --offload-arch=gfx942   (a recorded kernel, docs/design.md)
//   tilec --kernel=gemm -p M=4096 --offload-arch=gfx942,sm_90a --emit=bundle -o kernels/
#include "tilec/tilec.hpp"

#include "Bundle.h"
#include "Params.h"
#include "Registry.h"
#include "Run.h"
#include "TuneCli.h"

#include "Target/Target.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;

namespace {

cl::OptionCategory category("tilec options");

cl::opt<std::string> inputOpt(cl::Positional, cl::desc("[FILE.mlir | FILE.cpp | FILE.json]"), cl::init(""),
                           cl::cat(category));
cl::opt<bool> listKernelsOpt("list-kernels", cl::desc("List the shipped kernels and their parameters"),
                          cl::cat(category));
cl::opt<std::string> kernelNameOpt("kernel", cl::desc("Compile a shipped kernel (see --list-kernels)"),
                                cl::value_desc("name"), cl::cat(category));
cl::list<std::string> paramsOpt("p", cl::desc("Kernel parameter, e.g. -p M=4096"),
                             cl::value_desc("key=value"), cl::cat(category));
cl::opt<std::string> archOpt("offload-arch",
                          cl::desc("Target: gfx942 (default), gfx90a, gfx1151, sm_90a; --emit=bundle takes a comma-separated list"),
                          cl::value_desc("arch"), cl::init(tilec::kDefaultArch), cl::cat(category));
enum class EmitKind { Tile, Hip, Asm, Obj, Report, Bundle };
cl::opt<EmitKind> emitOpt("emit", cl::desc("What to produce"), cl::init(EmitKind::Report),
                       cl::values(clEnumValN(EmitKind::Tile, "tile", "tile IR after the target pipeline"),
                                  clEnumValN(EmitKind::Hip, "hip", "generated HIP C++ (with the prelude's name)"),
                                  clEnumValN(EmitKind::Asm, "asm", "disassembly of the code object"),
                                  clEnumValN(EmitKind::Obj, "obj", "the code object (ELF); needs -o"),
                                  clEnumValN(EmitKind::Report, "report", "code-object report (default)"),
                                  clEnumValN(EmitKind::Bundle, "bundle",
                                             "add the kernel for each --offload-arch to the bundle folder -o DIR "
                                             "(code objects, manifest.json, tilec_kernels.h; see docs/runtime.md)")),
                       cl::cat(category));
cl::opt<std::string> outputOpt("o", cl::desc("Output file (default: stdout)"), cl::value_desc("file"),
                            cl::init(""), cl::cat(category));
cl::opt<bool> jsonOpt("json", cl::desc("With --emit=report: one JSON object"), cl::cat(category));
cl::opt<tilec::JitChoice> jitChoiceOpt(
    "jit", cl::desc("JIT compiler"), cl::init(tilec::JitChoice::Auto),
    cl::values(clEnumValN(tilec::JitChoice::Auto, "auto", "hipRTC where it supports the target, else clang"),
               clEnumValN(tilec::JitChoice::HipRTC, "hiprtc", "hipRTC (loaded at run time)"),
               clEnumValN(tilec::JitChoice::Clang, "clang", "in-process clang/lld")),
    cl::cat(category));
cl::opt<bool> noCacheOpt("no-cache", cl::desc("Do not use the on-disk code-object cache"), cl::cat(category));
cl::opt<bool> runOpt("run", cl::desc("Run a shipped kernel on random inputs and verify it against its CPU reference"),
                  cl::cat(category));
cl::opt<tilec::DeviceKind> deviceOpt(
    "device", cl::desc("Device for --run"), cl::init(tilec::DeviceKind::Auto),
    cl::values(clEnumValN(tilec::DeviceKind::Auto, "auto", "a HIP GPU if present, else the emulator"),
               clEnumValN(tilec::DeviceKind::Emulator, "emulator", "the CPU wavefront emulator"),
               clEnumValN(tilec::DeviceKind::Hip, "hip", "a HIP GPU")),
    cl::cat(category));
cl::opt<bool> tuneOpt("tune",
                      cl::desc("Autotune a shipped kernel for the -p problem and print the best configuration as -p flags"),
                      cl::cat(category));
cl::opt<uint64_t> seedOpt("seed", cl::desc("Seed of the random inputs of --run"), cl::init(0), cl::cat(category));

// The flags' values, copied once after parsing: the in-process lld driver
// resets every llvm::cl option of the process when it runs, so nothing may
// read the cl::opt objects after the first JIT compile.
std::string input;
bool listKernels;
std::string kernelName;
std::vector<std::string> params;
std::string arch;
EmitKind emit;
std::string output;
bool json;
tilec::JitChoice jitChoice;
bool noCache;
bool run;
tilec::DeviceKind device;
uint64_t seed;
bool tune = false;
bool emitGiven = false, deviceGiven = false;

void snapshotFlags() {
  input = inputOpt;
  listKernels = listKernelsOpt;
  kernelName = kernelNameOpt;
  params.assign(paramsOpt.begin(), paramsOpt.end());
  arch = archOpt;
  emit = emitOpt;
  output = outputOpt;
  json = jsonOpt;
  jitChoice = jitChoiceOpt;
  noCache = noCacheOpt;
  run = runOpt;
  device = deviceOpt;
  seed = seedOpt;
  tune = tuneOpt;
  emitGiven = emitOpt.getNumOccurrences() > 0;
  deviceGiven = deviceOpt.getNumOccurrences() > 0;
}

/// Prints one diagnostic (prefixed "tilec: error: " unless it already names
/// its origin) and returns the exit status 1.
int error(const Twine &msg) {
  std::string text = msg.str();
  if (StringRef(text).starts_with("tilec: ") || StringRef(text).starts_with("tilec-"))
    errs() << text << "\n";
  else
    errs() << "tilec: error: " << text << "\n";
  return 1;
}

/// Writes `data` to -o atomically (temp file + rename) or to stdout.
int writeOutput(StringRef data) {
  if (output.empty()) {
    outs() << data;
    outs().flush();
    return 0;
  }
  if (Error e = writeToOutput(output, [&](raw_ostream &os) {
        os << data;
        return Error::success();
      })) {
    // LLVM names the path for some failures ("'x': No such file or
    // directory") but not for others ("Is a directory").
    std::string reason = toString(std::move(e));
    if (!StringRef(reason).contains(output))
      reason = "'" + output + "': " + reason;
    return error("tilec: error: cannot write " + reason);
  }
  return 0;
}

void printKernelList() {
  for (const tilec::kernels::KernelInfo &k : tilec::kernels::shippedKernels()) {
    outs() << k.name << ": " << k.summary << "\n";
    for (const tilec::kernels::KernelParam &p : k.params)
      outs() << "  -p " << p.name << "=" << p.defaultValue << "\t" << p.help << " [" << p.spec.describe() << "]\n";
  }
}

/// Builds and runs a DSL program as a generator: FILE.cpp defines
/// `tilec::Kernel kernel()`; tilec compiles it with a small main that prints
/// the recorded kernel as JSON, and reads that back.
tilec::Result<std::string> runGenerator(StringRef file) {
  ErrorOr<std::string> cxx = sys::findProgramByName("clang++-19");
  if (!cxx)
    cxx = sys::findProgramByName("c++");
  if (!cxx)
    return tilec::Error{"tilec: error: no C++ compiler (clang++-19 or c++) to build " + file.str()};
  SmallString<128> dir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("tilec-gen", dir))
    return tilec::Error{"tilec: error: cannot create a temporary directory: " + ec.message()};
  SmallString<128> mainCpp(dir), exe(dir), outFile(dir), errFile(dir);
  sys::path::append(mainCpp, "main.cpp");
  sys::path::append(exe, "generator");
  sys::path::append(outFile, "out.json");
  sys::path::append(errFile, "log.txt");
  SmallString<256> absFile(file);
  sys::fs::make_absolute(absFile);
  {
    std::error_code ec;
    raw_fd_ostream os(mainCpp, ec);
    os << "#include \"" << absFile << "\"\n#include <cstdio>\n"
       << "int main() {\n  tilec::Kernel k = kernel();\n"
       << "  if (!k.ok()) { std::fprintf(stderr, \"%s\\n\", k.error().c_str()); return 1; }\n"
       << "  std::fputs(k.toJson().c_str(), stdout);\n  return 0;\n}\n";
  }
  auto cleanup = [&] { sys::fs::remove_directories(dir); };
  std::string includeDir = TILEC_INCLUDE_DIR;
  SmallVector<StringRef> args = {*cxx, "-std=c++17", "-O0", "-I", includeDir, mainCpp, "-o", exe};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(errFile), StringRef(errFile)};
  std::string msg;
  if (sys::ExecuteAndWait(*cxx, args, std::nullopt, redirects, 0, 0, &msg) != 0) {
    auto log = MemoryBuffer::getFile(errFile);
    cleanup();
    return tilec::Error{"tilec: error: building the generator " + file.str() + " failed:\n" +
                        (log ? (*log)->getBuffer().str() : msg)};
  }
  std::optional<StringRef> runRedirects[] = {std::nullopt, StringRef(outFile), StringRef(errFile)};
  if (sys::ExecuteAndWait(exe, {exe}, std::nullopt, runRedirects, 60, 0, &msg) != 0) {
    auto log = MemoryBuffer::getFile(errFile);
    cleanup();
    return tilec::Error{"tilec: error: the generator " + file.str() + " failed:\n" +
                        (log ? (*log)->getBuffer().str() : msg)};
  }
  auto recorded = MemoryBuffer::getFile(outFile);
  cleanup();
  if (!recorded)
    return tilec::Error{"tilec: error: the generator wrote no kernel"};
  return (*recorded)->getBuffer().str();
}

/// The compiler's remarks (e.g. a stage count it lowered), on stderr.
void printRemarks(const tilec::CompiledKernel &ck) {
  for (const std::string &r : ck.remarks)
    errs() << r << "\n";
}

/// Writes what --emit asks for.
int emitKernel(const tilec::CompiledKernel &ck) {
  switch (emit) {
  case EmitKind::Tile:
    return writeOutput(ck.tileIR + "\n");
  case EmitKind::Hip:
    return writeOutput(ck.hip);
  case EmitKind::Asm:
    return writeOutput(tilec::disassemble(ck));
  case EmitKind::Obj:
    return writeOutput(StringRef(ck.codeObject.data(), ck.codeObject.size()));
  case EmitKind::Report:
    return writeOutput(json ? ck.report.toJson() + "\n" : ck.report.toText());
  case EmitKind::Bundle:
    break;  // exportBundle writes a folder, not one output
  }
  return 0;
}

/// The comma-separated --offload-arch list of --emit=bundle.
std::vector<std::string> splitArchList(const std::string &list) {
  std::vector<std::string> archs;
  for (StringRef rest = list; !rest.empty();) {
    auto [head, tail] = rest.split(',');
    archs.push_back(head.trim().str());
    rest = tail;
  }
  return archs;
}

/// --emit=bundle: compiles the shipped kernel for every target first, then
/// adds them to the bundle -o DIR (nothing is written when one fails).
int exportBundle(const tilec::kernels::KernelInfo &info, const tilec::Kernel &kernel,
                 const tilec::kernels::KernelParams &given, const std::vector<std::string> &archs,
                 const tilec::CompileOptions &base) {
  std::vector<tilec::cli::BundledKernel> kernels;
  for (const std::string &target : archs) {
    tilec::CompileOptions opts = base;
    opts.arch = target;
    tilec::Result<tilec::CompiledKernel> ck = tilec::compile(kernel, opts);
    if (!ck)
      return error(ck.error());
    printRemarks(*ck);
    tilec::cli::BundledKernel b;
    b.compiled = std::move(*ck);
    b.launchName = kernel.name();
    b.shippedKernel = info.name;
    b.params = given;
    b.compileOptions = tilec::cli::recordedCompileOptions(jitChoice, b.compiled);
    kernels.push_back(std::move(b));
  }
  if (std::string e = tilec::cli::exportBundle(output, kernels); !e.empty())
    return error("tilec: error: " + e);
  return 0;
}

/// --run: compile, run on random inputs, verify; exit 0 only when every
/// element matches and no checker fired.
int runKernel(const tilec::kernels::KernelInfo &info, const tilec::kernels::KernelParams &values,
              const tilec::CompileOptions &opts) {
  tilec::kernels::RunOptions ro;
  ro.compile = opts;
  ro.device = device;
  ro.seed = seed;
  tilec::Result<tilec::kernels::RunResult> r = tilec::kernels::runAndVerify(info, values, ro);
  if (!r)
    return error(r.error());
  const tilec::kernels::RunResult &res = *r;
  printRemarks(res.kernel);
  if (emitGiven) {
    if (int rc = emitKernel(res.kernel))
      return rc;
  }
  outs() << "kernel: " << res.kernel.name << " (" << res.kernel.report.jit << ") on " << res.device
         << ", grid " << res.stats.grid[0] << "x" << res.stats.grid[1] << "x" << res.stats.grid[2] << " of "
         << res.stats.threadsPerBlock << " threads, " << format("%.3f", res.stats.seconds) << " s\n";
  outs() << res.verifiedLine() << "\n";
  for (const std::string &m : res.firstMismatches)
    outs() << "  " << m << "\n";
  if (res.stats.checked)
    outs() << res.stats.checksLine() << "\n";
  else
    outs() << "checks: not run (the checkers run on the emulator)\n";
  for (const std::string &m : res.stats.messages)
    outs() << "  " << m << "\n";
  outs().flush();
  return res.passed() ? 0 : 1;
}

} // namespace

/// The compiler's entry point, called by the `tilec` launcher (main.cpp) when
/// the compiled-kernel cache cannot answer the command line.
extern "C" __attribute__((visibility("default"))) int tilecCliMain(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "tilec: tile-kernel compiler for AMD (gfx942, gfx90a, gfx1151) and NVIDIA (sm_90a) GPUs\n");
  snapshotFlags();

  if (listKernels) {
    printKernelList();
    return 0;
  }
  const std::vector<std::string> archs =
      emit == EmitKind::Bundle ? splitArchList(arch) : std::vector<std::string>{arch};
  if (archs.empty())
    return error("tilec: error: --offload-arch is empty");
  for (const std::string &a : archs)
    if (!tilec::lookupTarget(a))
      return error("tilec: error: unknown --offload-arch '" + a + "' (known: " + tilec::knownTargetsList() + ")");
  if (emit == EmitKind::Bundle && output.empty())
    return error("tilec: error: --emit=bundle writes a folder and needs -o DIR");
  if (emit == EmitKind::Bundle && (kernelName.empty() || run || tune))
    return error("tilec: error: --emit=bundle exports a shipped kernel: give --kernel=NAME (without --run or --tune)");
  if (emit == EmitKind::Obj && output.empty())
    return error("tilec: error: --emit=obj writes a binary code object and needs -o FILE");
  if (json && emit != EmitKind::Report)
    return error("tilec: error: --json only applies to --emit=report");
  if (run && kernelName.empty())
    return error("tilec: error: --run needs --kernel=NAME: CPU references exist for the shipped kernels");
  if (deviceGiven && !run && !tune)
    return error("tilec: error: --device only applies to --run and --tune");
  if (tune && kernelName.empty())
    return error("tilec: error: --tune needs --kernel=NAME");
  if (tune && run)
    return error("tilec: error: give --tune or --run, not both");
  if (kernelName.empty() == input.empty())
    return error("tilec: error: give exactly one of --kernel=NAME or an input FILE.mlir / FILE.cpp / FILE.json "
                 "(see --help)");
  if (kernelName.empty() && !params.empty())
    return error("tilec: error: -p parameters apply to --kernel");

  tilec::CompileOptions opts;
  opts.arch = arch;
  opts.jit = jitChoice;
  opts.useCache = !noCache;

  tilec::Result<tilec::CompiledKernel> compiled = tilec::Error{""};
  if (!kernelName.empty()) {
    const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel(kernelName);
    if (!info) {
      std::string known;
      for (const tilec::kernels::KernelInfo &k : tilec::kernels::shippedKernels())
        known += (known.empty() ? "" : ", ") + k.name;
      return error("tilec: error: unknown kernel '" + kernelName + "' (shipped: " + known + ")");
    }
    tilec::Result<tilec::kernels::KernelParams> parsed = tilec::kernels::parseParamFlags(params);
    if (!parsed)
      return error(parsed.error());
    const tilec::kernels::KernelParams values = tilec::kernels::withTargetDefaults(*info, *parsed, arch);
    if (tune) {
      tilec::kernels::TuneCliOptions to;
      to.arch = arch;
      to.jit = jitChoice;
      to.useCache = !noCache;
      to.device = device;
      return tilec::kernels::runTuneCommand(*info, values, to);
    }
    if (run)
      return runKernel(*info, values, opts);
    tilec::Result<tilec::Kernel> k = info->build(values);
    if (!k)
      return error(k.error());
    if (emit == EmitKind::Bundle)
      return exportBundle(*info, *k, values, archs, opts);
    compiled = tilec::compile(*k, opts);
  } else {
    StringRef ext = sys::path::extension(input);
    if (ext == ".mlir") {
      ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(input);
      if (!buf)
        return error("tilec: error: cannot read '" + input + "': " + buf.getError().message());
      compiled = tilec::compileTileIR((*buf)->getBuffer().str(), opts, input);
    } else if (ext == ".cpp" || ext == ".cc" || ext == ".cxx") {
      if (!sys::fs::exists(input))
        return error("tilec: error: cannot read '" + input + "': no such file");
      tilec::Result<std::string> json = runGenerator(input);
      if (!json)
        return error(json.error());
      tilec::Result<tilec::Kernel> kernel = tilec::kernelFromJson(*json, input);
      if (!kernel)
        return error(kernel.error());
      compiled = tilec::compile(*kernel, opts);
    } else if (ext == ".json") {
      ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(input);
      if (!buf)
        return error("tilec: error: cannot read '" + input + "': " + buf.getError().message());
      tilec::Result<tilec::Kernel> kernel = tilec::kernelFromJson((*buf)->getBuffer().str(), input);
      if (!kernel)
        return error(kernel.error());
      compiled = tilec::compile(*kernel, opts);
    } else {
      return error("tilec: error: '" + input +
                   "': expected a .mlir (tile IR), .cpp (DSL program) or .json (recorded kernel) file");
    }
  }
  if (!compiled)
    return error(compiled.error());

  printRemarks(*compiled);
  return emitKernel(*compiled);
}
