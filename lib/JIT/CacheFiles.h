// File-level pieces shared by the two on-disk caches (the code-object cache of
// jit::compile and the compiled-kernel cache of tilec::compile): where the
// cache folder is, atomic writes, and removal of temporary files that killed
// writers left behind.
//
// Plain C++ and POSIX, no LLVM: the `tilec` launcher links these without
// loading the compiler's shared libraries (see tools/tilec/main.cpp).
#pragma once

#include <string>
#include <string_view>

namespace tilec::cachefiles {

/// $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else $HOME/.cache/tilec;
/// empty when none of them is set.
std::string defaultDir();

/// Temporary files are named "<entry>" + kTempInfix + 8 random characters.
inline constexpr std::string_view kTempInfix = ".tmp-";

/// A temporary file untouched for this long belongs to a writer that died
/// (a write of a cache entry takes milliseconds).
inline constexpr int kStaleTempSeconds = 10 * 60;

/// Writes `bytes` to a unique temporary file next to `path`, then renames it
/// over `path`, so that readers see the old file or the whole new one. Returns
/// an empty string, or why the write failed (the temporary file is removed).
std::string writeAtomically(const std::string &path, std::string_view bytes);

/// Removes the files in `dir` whose names contain kTempInfix and that were
/// last modified more than `maxAgeSeconds` ago. Returns how many were removed.
/// Errors (a file another process removed first, an unreadable folder) are
/// ignored: this is housekeeping.
int removeStaleTemporaries(const std::string &dir, int maxAgeSeconds = kStaleTempSeconds);

/// Creates `dir` and its parents. Returns an empty string, or why not.
std::string createDirectories(const std::string &dir);

} // namespace tilec::cachefiles
