#include "Dialect/Tile/TileParse.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringSet.h"

#include <cctype>

namespace tilec::tile {

namespace {

bool isIdChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == '-'; }

/// The first use of an SSA value before any definition of it in the same
/// function, or null. Definitions: a name followed by `=` (results, the
/// induction variable and iter_args of scf.for), directly by `:` (function
/// and block arguments, `%r:2 =`), or in a `%a, %b =` list. Comments and strings are
/// skipped; `func.func` starts a new scope.
const char *firstForwardReference(llvm::StringRef text) {
  llvm::StringSet<> defined;
  const char *p = text.begin(), *end = text.end();
  auto skipSpace = [&](const char *q) {
    while (q < end && std::isspace(static_cast<unsigned char>(*q)))
      ++q;
    return q;
  };
  auto readName = [&](const char *q, llvm::StringRef &name) {  // q at '%'
    const char *s = q + 1;
    while (s < end && isIdChar(*s))
      ++s;
    name = llvm::StringRef(q + 1, s - q - 1);
    return s;
  };
  while (p < end) {
    char c = *p;
    if (c == '/' && p + 1 < end && p[1] == '/') {
      while (p < end && *p != '\n')
        ++p;
    } else if (c == '"') {
      for (++p; p < end && *p != '"'; ++p)
        if (*p == '\\' && p + 1 < end)
          ++p;
      ++p;
    } else if (c == 'f' && llvm::StringRef(p, end - p).starts_with("func.func") && (p == text.begin() || !isIdChar(p[-1]))) {
      defined.clear();
      p += 9;
    } else if (c == '%') {
      llvm::StringRef name;
      const char *after = readName(p, name);
      if (name.empty()) {
        p = after;
        continue;
      }
      // A list `%a, %b, ... =` defines every name in it.
      llvm::SmallVector<llvm::StringRef> names = {name};
      const char *q = skipSpace(after);
      while (q < end && *q == ',') {
        const char *r = skipSpace(q + 1);
        llvm::StringRef next;
        if (r >= end || *r != '%')
          break;
        q = skipSpace(readName(r, next));
        names.push_back(next);
      }
      // `:` right after the name (`%arg0: index`, `%r:2 =`) defines it; a use's
      // type follows after a space (`%a : index`).
      const bool isDef = (q < end && *q == '=' && (q + 1 >= end || q[1] != '=')) ||
                         (names.size() == 1 && after < end && *after == ':');
      if (isDef) {
        for (llvm::StringRef n : names)
          defined.insert(n);
        p = q;
        continue;
      }
      if (!defined.contains(name))
        return p;
      p = after;
    } else {
      ++p;
    }
  }
  return nullptr;
}

} // namespace

bool definitionsPrecedeUses(llvm::SourceMgr &sm, mlir::MLIRContext *ctx) {
  const llvm::MemoryBuffer *buffer = sm.getMemoryBuffer(sm.getMainFileID());
  if (const char *use = firstForwardReference(buffer->getBuffer())) {
    auto [line, col] = sm.getLineAndColumn(llvm::SMLoc::getFromPointer(use));
    llvm::StringRef name(use, 1);
    while (name.end() < buffer->getBufferEnd() && isIdChar(*name.end()))
      name = llvm::StringRef(use, name.size() + 1);
    mlir::emitError(mlir::FileLineColLoc::get(ctx, buffer->getBufferIdentifier(), line, col))
        << "use of value '" << name << "' before its definition (tile IR is structured: a value is defined above its uses)";
    return false;
  }
  return true;
}

mlir::OwningOpRef<mlir::ModuleOp> parseTileIR(llvm::SourceMgr &sm, mlir::MLIRContext *ctx) {
  if (!definitionsPrecedeUses(sm, ctx))
    return nullptr;
  return mlir::parseSourceFile<mlir::ModuleOp>(sm, ctx);
}

} // namespace tilec::tile
