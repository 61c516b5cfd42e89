// tilec-pch OUT_DIR: precompiles the device prelude for every known target
// into OUT_DIR (run by the build; the JIT loads these instead of parsing the
// prelude for each kernel, see jit::precompiledHeaderName). Precompiled
// headers left there by an earlier prelude or clang are removed. Each file is
// written to a temporary name and renamed into place, so the JIT never reads a
// partial one.

#include "Emit/Prelude.h"
#include "JIT/CacheFiles.h"
#include "JIT/JIT.h"
#include "Target/Target.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: tilec-pch OUT_DIR\n";
    return 2;
  }
  std::string dir = argv[1];
  if (std::string err = tilec::cachefiles::createDirectories(dir); !err.empty()) {
    llvm::errs() << "tilec-pch: error: cannot create " << dir << ": " << err << "\n";
    return 1;
  }
  llvm::StringSet<> written;
  for (const tilec::TargetInfo &target : tilec::knownTargets()) {
    tilec::jit::CompileRequest request;
    request.headers = {{tilec::kPreludeHeaderName, tilec::devicePreludeText(target.vendor)}};
    request.kernelName = "tilec_prelude";
    request.target = &target;
    llvm::Expected<std::vector<char>> pch = tilec::jit::precompileHeader(request);
    if (!pch) {
      llvm::errs() << "tilec-pch: error: " << llvm::toString(pch.takeError()) << "\n";
      return 1;
    }
    std::string name = tilec::jit::precompiledHeaderName(request);
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    if (std::string err = tilec::cachefiles::writeAtomically(std::string(path),
                                                             std::string_view(pch->data(), pch->size()));
        !err.empty()) {
      llvm::errs() << "tilec-pch: error: cannot write " << path << ": " << err << "\n";
      return 1;
    }
    written.insert(name);
  }
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    llvm::StringRef file = llvm::sys::path::filename(it->path());
    if (file.ends_with(".pch") && !written.contains(file))
      llvm::sys::fs::remove(it->path());
  }
  return 0;
}
