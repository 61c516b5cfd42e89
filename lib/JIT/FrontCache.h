// The compiled-kernel cache ("front cache"): tilec::compile's results kept on
// disk, keyed on what the caller gives (the tile IR text, locations included,
// its buffer name, the target and the compile options) and on the compiler
// build. A hit rebuilds the CompiledKernel (code object, HIP, tile IR after the
// pipeline, report, launch description, remarks) without parsing, the pass
// pipeline, HIP emission, the JIT or the disassembly.
//
// It sits in front of the code-object cache of jit::compile (keyed on the
// generated HIP) and shares its folder and its guarantees: entries are written
// to a temporary file and renamed into place, carry a checksum checked on
// load, and a damaged entry is reported once, removed and compiled again.
//
// Entry ("<key>.ck"):
//   "TILECCK1"        8 bytes magic
//   format version    u32 LE
//   payload size      u64 LE
//   payload checksum  u64 LE (xxh3_64 of the payload)
//   payload           the CompiledKernel, field by field (FrontCache.cpp)
//
// Only LLVM's header-only code, SHA256 and xxhash are used, and no MLIR: the
// `tilec` launcher links this file with the static LLVMSupport archive and
// answers a cached kernel without loading the compiler's shared libraries.
#pragma once

#include "tilec/tilec.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tilec::jit {

/// Bump when the entry layout, the payload or the key recipe changes.
inline constexpr uint32_t kFrontCacheFormatVersion = 6;

/// Hex SHA-256 over everything that determines a compileTileIR result: the
/// tile IR text, `bufferName` (it names the text in remarks), opts.arch,
/// opts.jit, the tilec version, a fingerprint of the compiler's sources
/// (generated at build time), the clang version and, unless opts.jit is
/// Clang, what decides which hipRTC loads ($LD_LIBRARY_PATH and the
/// loader cache's modification time).
std::string frontCacheKey(std::string_view tileIR, std::string_view bufferName,
                          const CompileOptions &opts);

/// The payload of an entry, and back. `decodeCompiledKernel` returns nullopt
/// for bytes that are not a complete payload.
std::string encodeCompiledKernel(const CompiledKernel &kernel);
std::optional<CompiledKernel> decodeCompiledKernel(std::string_view payload);

class FrontCache {
public:
  /// The folder is opts.cacheDir, else the default (CacheFiles.h); a cache
  /// with opts.useCache off, or without a folder, misses and drops stores.
  /// Warnings go to `onWarning`, else to stderr.
  explicit FrontCache(const CompileOptions &opts,
                      std::function<void(const std::string &)> onWarning = {});

  /// The cached kernel (report.fromCache and timings.cacheHit set), or
  /// nullopt. A damaged entry is reported through the warning sink and removed.
  std::optional<CompiledKernel> load(const std::string &key);
  /// Writes atomically, after removing temporary files that dead writers left
  /// in the folder; a failed write becomes a warning (a folder that cannot be
  /// created does not: jit::compile reports it for the same compile).
  void store(const std::string &key, const CompiledKernel &kernel);

  const std::string &dir() const { return dir_; }
  std::string entryPath(const std::string &key) const;

private:
  void warn(const std::string &message) const;

  std::function<void(const std::string &)> onWarning_;
  std::string dir_;
};

} // namespace tilec::jit
