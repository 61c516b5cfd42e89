// libFuzzer target: arbitrary text as tile-dialect IR, through the steps of
// tilec::compileTileIR (lib/Driver/Driver.cpp) before the JIT: parse + verify,
// the target pipeline (buildTilecPipeline) and HIP emission. The JIT is left
// out (seconds per input); the code-object reader has its own target.
//
// The first input byte picks the target, the rest is the IR text. Any input
// may fail with diagnostics; none may crash, hang or trip a sanitizer.
#include "Dialect/Tile/TileDialect.h"
#include "Dialect/Tile/TileParse.h"
#include "Emit/EmitHIP.h"
#include "Target/Target.h"
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

#include <cstddef>
#include <cstdint>

using namespace mlir;

namespace {

constexpr const char *kArchs[] = {"gfx942", "gfx90a", "gfx1151"};

void compileToHip(llvm::StringRef text, const tilec::TargetInfo &target) {
  MLIRContext ctx(MLIRContext::Threading::DISABLED);
  ctx.printOpOnDiagnostic(false);
  ctx.loadDialect<tilec::tile::TileDialect, func::FuncDialect, arith::ArithDialect,
                  scf::SCFDialect, memref::MemRefDialect>();
  // Diagnostics are the expected outcome of most inputs: render them (the
  // driver does) and drop them.
  ScopedDiagnosticHandler handler(&ctx, [](Diagnostic &d) {
    (void)d.str();
    return success();
  });

  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = tilec::tile::parseTileIR(sm, &ctx);  // as the driver parses
  if (!module)
    return;

  // The driver's kernel choice: the one tile.kernel function, else the first.
  func::FuncOp kernel;
  int kernels = 0;
  module->walk([&](func::FuncOp f) {
    if (f->hasAttr(tilec::tile::attr::kKernel) || !kernel) {
      if (f->hasAttr(tilec::tile::attr::kKernel))
        ++kernels;
      kernel = f;
    }
  });
  if (!kernel || kernels > 1)
    return;

  PassManager pm(&ctx);
  tilec::buildTilecPipeline(pm, tilec::PipelineOptions{target.arch});
  if (failed(pm.run(*module)))
    return;
  (void)tilec::emitHIP(kernel, target);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const tilec::TargetInfo *target = tilec::lookupTarget(kArchs[data[0] % 3]);
  if (!target)
    return 0;
  compileToHip(llvm::StringRef(reinterpret_cast<const char *>(data) + 1, size - 1), *target);
  return 0;
}
