// Parsing tile IR text, guarded against an MLIR 19 parser defect.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace tilec::tile {

/// Parses the main buffer of `sm` as a module. Before MLIR's parser sees it,
/// the text is scanned for a value used before its definition (in each
/// function, textually): MLIR 19's parser frees the placeholder of such a
/// forward reference and then crashes when the reference is an operand of an
/// op whose own region defines the value (`scf.for %i = %c0 to %x ... { %x =
/// ... }`). Tile IR is structured (scf, no block branches), so a use before
/// the definition is never valid there. Errors go to the context's
/// diagnostic handler, with the use's location; the result is then null.
mlir::OwningOpRef<mlir::ModuleOp> parseTileIR(llvm::SourceMgr &sm, mlir::MLIRContext *ctx);

/// The scan parseTileIR runs before parsing: false, after one error through
/// the context's diagnostic handler, when the main buffer of `sm` uses a value
/// before its definition. (tilec-opt runs it before MLIR's own driver.)
bool definitionsPrecedeUses(llvm::SourceMgr &sm, mlir::MLIRContext *ctx);

} // namespace tilec::tile
