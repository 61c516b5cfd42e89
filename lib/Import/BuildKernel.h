// Building tile IR from a recorded kernel.
#pragma once

#include "tilec/dsl/kernel.hpp"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

namespace tilec::import {

/// Builds `kernel`'s recording as a module holding its func.func (with the
/// tile.kernel, tile.num_waves and tile.grid attributes) and verifies it.
/// Every operation carries the location it was recorded at, so a verifier's
/// error names the kernel's file:line. Errors go to the context's diagnostic
/// handler; the result is then null. The context must have the tile, func,
/// arith, scf and memref dialects loaded.
mlir::OwningOpRef<mlir::ModuleOp> buildTileIR(const Kernel &kernel, mlir::MLIRContext &ctx);

/// Reads a kernel written as JSON in Kernel::toJson's format (docs/design.md,
/// "The recorded kernel"). `bufferName` prefixes error messages.
llvm::Expected<Kernel> kernelFromJson(llvm::StringRef json, llvm::StringRef bufferName);

} // namespace tilec::import
