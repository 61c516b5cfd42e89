#include "Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace tilec {

void buildTilecPipeline(OpPassManager &pm, const PipelineOptions &options) {
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // Instructions first: pipelining keeps a warpgroup gemm's instructions in
  // flight across iterations, and needs to know it has one.
  fpm.addPass(createTilecSelectMatrixInstr(TilecSelectMatrixInstrOptions{options.arch}));
  fpm.addPass(createTilecPipelineLoops(TilecPipelineLoopsOptions{options.arch}));
  fpm.addPass(mlir::createCanonicalizerPass());
  fpm.addPass(mlir::createCSEPass());
  fpm.addPass(createTilecInferLayouts());
  fpm.addPass(createTilecAllocateLDS(TilecAllocateLDSOptions{options.arch}));
  fpm.addPass(createTilecInsertBarriers());
  fpm.addPass(createTilecScheduleWaves(TilecScheduleWavesOptions{options.arch}));
}

namespace {
struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> arch{*this, "arch", llvm::cl::desc("target architecture"),
                           llvm::cl::init(kDefaultArch)};
};
} // namespace

void registerAllTilecPasses() {
  registerTilecPasses();
  PassPipelineRegistration<PipelineCLOptions>(
      "tilec-pipeline", "The tile -> target pipeline (as run by tilec and the JIT API)",
      [](OpPassManager &pm, const PipelineCLOptions &o) {
        buildTilecPipeline(pm, PipelineOptions{o.arch});
      });
}

} // namespace tilec
