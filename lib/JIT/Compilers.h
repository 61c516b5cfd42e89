// Internal to lib/JIT: the two compilers behind jit::compile and the cache.
#pragma once

#include "JIT/JIT.h"

#include "llvm/ADT/StringRef.h"

#include <iterator>
#include <optional>

namespace tilec::jit::detail {

/// In-process clang 19 + lld (ClangJIT.cpp).
llvm::Expected<CodeObject> compileWithClang(const CompileRequest &request);

/// A cubin and what the assembler said of it (nvJitLink's -verbose info log:
/// registers, stack frame, spills, shared memory).
struct Cubin {
  std::vector<char> bytes;
  std::string infoLog;
};
/// PTX -> cubin for `target` through the CUDA toolkit's nvJitLink, loaded
/// with dlopen (NvJitLink.cpp); an error names what is missing when no
/// nvJitLink loads.
llvm::Expected<Cubin> linkPtx(llvm::StringRef ptx, const TargetInfo &target, llvm::StringRef name);

/// hipRTC through dlopen (HipRTC.cpp).
llvm::Expected<CodeObject> compileWithHipRTC(const CompileRequest &request);

/// Flags every compiler gets before CompileRequest::options (and the
/// precompiled prelude is built with). -ffp-contract=off: no multiply and add
/// is fused unless the source calls fma (HIP's default is `fast`), so a kernel
/// rounds as the emulator's host build does (docs/design.md, "Device math").
inline constexpr const char *kDefaultOptions[] = {"-O3", "-std=c++17", "-ffp-contract=off"};

/// Name of the virtual source file for `request`: "<kernelName>.hip".
std::string sourceFileName(const CompileRequest &request);

/// Persistent code-object cache (Cache.cpp).
class Cache {
public:
  /// Resolves the folder; a disabled cache, or one without a usable folder,
  /// answers every lookup with a miss and drops every store.
  explicit Cache(const CacheOptions &options);

  /// Hex SHA-256 over everything that determines the code object.
  static std::string key(const CompileRequest &request, llvm::StringRef compilerIdentity);

  /// The cached code object, or nullopt. A corrupt entry is reported through
  /// the warning sink and removed.
  std::optional<CodeObject> load(llvm::StringRef key);
  /// Writes atomically; failures become warnings.
  void store(llvm::StringRef key, const CodeObject &code);

  const std::string &dir() const { return dir_; }

private:
  void warn(const std::string &message) const;
  std::string entryPath(llvm::StringRef key) const;

  const CacheOptions &options_;
  std::string dir_;
};

} // namespace tilec::jit::detail
