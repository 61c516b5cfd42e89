// tilec's MLIR passes (declared in Passes.td) and the compilation pipeline.
#pragma once

#include "Target/Target.h"  // kDefaultArch

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace tilec {

#define GEN_PASS_DECL
#include "Transforms/Passes.h.inc"

/// Options of the tile -> target pipeline; the CLI, the JIT API and
/// `tilec-opt --tilec-pipeline` all run exactly this.
struct PipelineOptions {
  std::string arch = kDefaultArch;
};

/// Appends the target pipeline: pipeline-loops, select-matrix-instr,
/// infer-layouts, allocate-lds, insert-barriers, schedule-waves (each on every func.func).
void buildTilecPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers every tilec pass and the `tilec-pipeline` pipeline (for tilec-opt).
void registerAllTilecPasses();

#define GEN_PASS_REGISTRATION
#include "Transforms/Passes.h.inc"

} // namespace tilec
