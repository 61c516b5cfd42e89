// tilec::compile: tile IR -> target pipeline -> HIP -> JIT code object + report.
#include "tilec/tilec.hpp"

#include "Dialect/Tile/TileDialect.h"
#include "Dialect/Tile/TileParse.h"
#include "Emit/EmitHIP.h"
#include "Import/BuildKernel.h"
#include "JIT/FrontCache.h"
#include "JIT/JIT.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <map>
#include <mutex>

using namespace mlir;

namespace tilec {

namespace {

/// Collects MLIR diagnostics as "file:line:col: error: message" lines.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &ctx) : ctx(ctx) {
    id = ctx.getDiagEngine().registerHandler([this](Diagnostic &d) {
      std::string s;
      llvm::raw_string_ostream os(s);
      if (auto fl = dyn_cast<FileLineColLoc>(d.getLocation()))
        os << fl.getFilename().getValue() << ":" << fl.getLine() << ":" << fl.getColumn() << ": ";
      else if (auto nl = d.getLocation()->findInstanceOf<FileLineColLoc>())
        os << nl.getFilename().getValue() << ":" << nl.getLine() << ":" << nl.getColumn() << ": ";
      os << (d.getSeverity() == DiagnosticSeverity::Error     ? "error: "
             : d.getSeverity() == DiagnosticSeverity::Warning ? "warning: "
             : d.getSeverity() == DiagnosticSeverity::Remark  ? "remark: "
                                                              : "note: ")
         << d.str();
      for (const Diagnostic &note : d.getNotes())
        os << "\n  note: " << note.str();
      if (d.getSeverity() == DiagnosticSeverity::Remark)
        remarks.push_back(os.str());
      else
        text += (text.empty() ? "" : "\n") + os.str();
      return success();
    });
  }
  ~DiagnosticCollector() { ctx.getDiagEngine().eraseHandler(id); }
  const std::string &str() const { return text; }
  std::vector<std::string> remarks;

private:
  MLIRContext &ctx;
  DiagnosticEngine::HandlerID id;
  std::string text;
};

Error fail(const std::string &what, const std::string &detail) {
  return Error{detail.empty() ? what : what + ":\n" + detail};
}

/// Milliseconds since `start`, for CompileTimings.
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Sums each named pass's wall time into CompileTimings::passMs (in first-run
/// order). Pass adaptors (nested pipelines, no argument) are not counted:
/// their time is their passes'.
class PassTimer : public PassInstrumentation {
public:
  explicit PassTimer(std::vector<std::pair<std::string, double>> &out) : out(out) {}
  void runBeforePass(Pass *pass, Operation *op) override {
    std::lock_guard<std::mutex> lock(mu);
    started[{pass, op}] = Clock::now();
  }
  void runAfterPass(Pass *pass, Operation *op) override { record(pass, op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override { record(pass, op); }

private:
  void record(Pass *pass, Operation *op) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = started.find({pass, op});
    if (it == started.end())
      return;
    double ms = msSince(it->second);
    started.erase(it);
    if (pass->getArgument().empty())
      return;
    std::string name = pass->getArgument().str();
    for (auto &[n, t] : out)
      if (n == name) {
        t += ms;
        return;
      }
    out.emplace_back(std::move(name), ms);
  }
  std::vector<std::pair<std::string, double>> &out;
  std::mutex mu;
  std::map<std::pair<Pass *, Operation *>, Clock::time_point> started;
};

std::string printOp(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  return s;
}

} // namespace

const std::string &devicePrelude() { return devicePreludeText(); }

std::string disassemble(const CompiledKernel &kernel) {
  const TargetInfo *target = lookupTarget(kernel.arch);
  if (target && target->vendor == Vendor::NVIDIA)
    return kernel.assembly;
  return target ? jit::disassemble(kernel.codeObject, *target) : std::string();
}

namespace {

/// Makes the module to compile in the given context: parsed from text or
/// built from a recording. Errors go to the context's diagnostics; null then.
using ModuleSource = llvm::function_ref<OwningOpRef<ModuleOp>(MLIRContext &)>;

/// The dialects tile IR uses, loaded into a fresh context.
void loadDialects(MLIRContext &ctx) {
  ctx.printOpOnDiagnostic(false);  // one message with its location, not an IR dump
  ctx.loadDialect<tile::TileDialect, func::FuncDialect, arith::ArithDialect, scf::SCFDialect,
                  memref::MemRefDialect>();
}

/// Compiles the module `source` makes. `keyText` (the IR text or the
/// recording's JSON) keys the compiled-kernel cache with the options;
/// `invalid` heads the error when the module cannot be made.
Result<CompiledKernel> compileModule(ModuleSource source, std::string_view keyText, const std::string &bufferName,
                                     const std::string &invalid, const CompileOptions &opts) {
  const TargetInfo *target = lookupTarget(opts.arch);
  if (!target)
    return Error{"tilec: error: unknown target '" + opts.arch + "' (known: " + knownTargetsList() + ")"};

  CompileTimings timings;
  const Clock::time_point callStart = Clock::now();
  Clock::time_point stageStart = callStart;

  // The compiled-kernel cache answers a request it has seen without running
  // any stage below.
  jit::FrontCache front(opts);
  std::string frontKey;
  if (!front.dir().empty()) {
    frontKey = jit::frontCacheKey(keyText, bufferName, opts);
    if (std::optional<CompiledKernel> hit = front.load(frontKey)) {
      hit->timings.cacheHit = true;
      hit->timings.frontCacheHit = true;
      hit->timings.jitMs = msSince(stageStart);
      hit->timings.totalMs = msSince(callStart);
      return std::move(*hit);
    }
  }

  MLIRContext ctx;
  loadDialects(ctx);
  DiagnosticCollector diags(ctx);
  timings.contextMs = msSince(stageStart);

  stageStart = Clock::now();
  OwningOpRef<ModuleOp> module = source(ctx);
  if (!module)
    return fail(invalid, diags.str());
  timings.parseMs = msSince(stageStart);

  func::FuncOp kernel;
  int kernels = 0;
  module->walk([&](func::FuncOp f) {
    if (f->hasAttr(tile::attr::kKernel) || !kernel) {
      if (f->hasAttr(tile::attr::kKernel))
        ++kernels;
      kernel = f;
    }
  });
  if (!kernel)
    return Error{"tilec: error: " + bufferName + ": no kernel function (func.func with tile.kernel)"};
  if (kernels > 1)
    return Error{"tilec: error: " + bufferName + ": " + std::to_string(kernels) +
                 " kernel functions; compile one at a time"};

  stageStart = Clock::now();
  PassManager pm(&ctx);
  buildTilecPipeline(pm, PipelineOptions{opts.arch});
  pm.addInstrumentation(std::make_unique<PassTimer>(timings.passMs));
  if (failed(pm.run(*module)))
    return fail("tilec: error: compiling for " + opts.arch + " failed", diags.str());
  timings.pipelineMs = msSince(stageStart);

  // Emission, the JIT and the code object's report. A kernel emitted with its
  // accumulators in arch VGPRs (EmitOptions) that spills under the 256
  // registers this leaves is emitted and compiled again without.
  std::optional<EmittedKernel> hip;
  std::optional<jit::CodeObject> code;
  std::optional<Report> report;
  for (EmitOptions emitOpts; !report;) {
    stageStart = Clock::now();
    FailureOr<EmittedKernel> emitted = emitHIP(kernel, *target, emitOpts);
    if (failed(emitted))
      return fail("tilec: error: HIP emission failed", diags.str());
    hip = std::move(*emitted);
    timings.emitMs += msSince(stageStart);

    stageStart = Clock::now();
    jit::CompileRequest req;
    req.source = hip->source;
    req.headers = {{kPreludeHeaderName, devicePreludeText(target->vendor)}};
    req.kernelName = hip->name;
    req.target = target;
    req.options = hip->jitOptions;
    req.preference = opts.jit == JitChoice::HipRTC ? jit::JitPreference::HipRTC
                     : opts.jit == JitChoice::Clang ? jit::JitPreference::Clang
                                                    : jit::JitPreference::Auto;
    jit::CacheOptions cache;
    cache.enabled = opts.useCache;
    cache.dir = opts.cacheDir;
    llvm::Expected<jit::CodeObject> compiled = jit::compile(req, cache);
    if (!compiled)
      return fail("tilec: error: JIT compilation of " + hip->name + " for " + opts.arch + " failed",
                  llvm::toString(compiled.takeError()));
    code = std::move(*compiled);
    timings.jitMs += msSince(stageStart);
    timings.cacheHit = code->fromCache;

    stageStart = Clock::now();
    llvm::Expected<Report> read = jit::readReport(*code, *target, hip->numWaves, hip->ldsBytes);
    if (!read)
      return fail("tilec: error: reading the code object of " + hip->name + " failed",
                  llvm::toString(read.takeError()));
    timings.reportMs += msSince(stageStart);
    if (hip->vgprAccumulators && read->scratchBytes > 0) {
      emitRemark(kernel.getLoc()) << "accumulators kept in AGPRs: in arch VGPRs (at most 256 registers) the kernel "
                                  << "spilled " << read->scratchBytes << " bytes to scratch";
      emitOpts.vgprAccumulators = false;
      continue;
    }
    report = std::move(*read);
  }

  CompiledKernel out;
  out.name = hip->name;
  out.arch = opts.arch;
  out.tileIR = printOp(kernel);
  out.hip = hip->source;
  out.codeObject = std::move(code->elf);
  out.assembly = std::move(code->assembly);
  out.report = std::move(*report);
  for (const EmittedLdsTile &t : hip->ldsTiles)
    out.report.ldsTiles.push_back({t.name, t.role, t.bytes, t.readBytes, t.writeBytes, t.bankConflicts});
  out.numWaves = hip->numWaves;
  out.waveSize = hip->waveSize;
  out.dynamicLdsBytes = target->vendor == Vendor::NVIDIA ? hip->ldsBytes : 0;
  out.paramTypes = hip->paramTypes;
  out.remarks = diags.remarks;
  for (BlockArgument arg : kernel.getArguments()) {
    KernelParamInfo p;
    if (auto nm = kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(), tile::attr::kArgName))
      p.name = nm.str();
    if (auto mt = dyn_cast<MemRefType>(arg.getType())) {
      p.kind = KernelParamInfo::Tensor;
      p.rank = static_cast<int>(mt.getRank());
      llvm::raw_string_ostream os(p.elemType);
      os << mt.getElementType();
    } else {
      p.kind = arg.getType().isF32() ? KernelParamInfo::F32 : KernelParamInfo::I32;
    }
    if (auto d = kernel.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), tile::attr::kDivisibility))
      p.divisibility = d.getInt();
    out.params.push_back(std::move(p));
  }
  for (const EmittedTensorMap &m : hip->tensorMaps)
    out.params[m.arg].tensorMap = m.box;
  for (const auto &g : hip->grid)
    out.grid.push_back(GridDim{static_cast<int>(g[0]), static_cast<int>(g[1]), g[2]});
  if (!frontKey.empty())
    front.store(frontKey, out);
  timings.totalMs = msSince(callStart);
  out.timings = std::move(timings);
  return out;
}

} // namespace

Result<CompiledKernel> compileTileIR(const std::string &text, const CompileOptions &opts,
                                     const std::string &bufferName) {
  auto parse = [&](MLIRContext &ctx) {
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
    return tile::parseTileIR(sm, &ctx);
  };
  return compileModule(parse, text, bufferName, "tilec: error: invalid tile IR", opts);
}

Result<CompiledKernel> compile(const Kernel &kernel, const CompileOptions &opts) {
  if (!kernel.ok())
    return Error{kernel.error()};
  auto build = [&](MLIRContext &ctx) { return import::buildTileIR(kernel, ctx); };
  return compileModule(build, kernel.toJson(), kernel.name() + ".tile",
                       "tilec: error: kernel " + kernel.name() + " is not valid tile IR", opts);
}

Result<std::string> tileIR(const Kernel &kernel) {
  if (!kernel.ok())
    return Error{kernel.error()};
  MLIRContext ctx;
  loadDialects(ctx);
  DiagnosticCollector diags(ctx);
  OwningOpRef<ModuleOp> module = import::buildTileIR(kernel, ctx);
  if (!module)
    return fail("tilec: error: kernel " + kernel.name() + " is not valid tile IR", diags.str());
  return printOp(*module);
}

Result<Kernel> kernelFromJson(const std::string &json, const std::string &bufferName) {
  llvm::Expected<Kernel> kernel = import::kernelFromJson(json, bufferName);
  if (!kernel)
    return Error{"tilec: error: " + llvm::toString(kernel.takeError())};
  return std::move(*kernel);
}

} // namespace tilec
