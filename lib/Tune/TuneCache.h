// The tuning-result cache: one JSON file per (kernel, fixed parameters, shape
// class, target, compiler identity, space, ranking method) under <cache>/tune/,
// where <cache> follows the code-object cache's rules ($TILEC_CACHE_DIR, else
// $XDG_CACHE_HOME/tilec, else ~/.cache/tilec). Files are written to a
// temporary file and renamed into place; a corrupt file is reported once per
// process and ignored (the next store replaces it).
#pragma once

#include "Tune/Space.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilec::tune {

/// One ranked candidate, as printed and as cached.
struct RankedCandidate {
  GemmTile tile;
  std::string kernelName;
  std::string instr;      ///< the matrix instruction the compiler chose
  int vgpr = 0, agpr = 0;
  int64_t ldsBytes = 0;
  int occupancy = 0;      ///< waves per SIMD (the report's)
  double seconds = 0;     ///< modelled or measured (median)
  double pctOfPeak = 0;
  /// Modelled: what bounds the time in the compiled-code model (lib/Model),
  /// with its terms, e.g. "matrix (matrix 0.125 ms, latency 0.118 ms, ...)".
  /// Empty when measured or when the roofline model ranked it.
  std::string why;
};

/// What a tuning run found: the best candidates, best first.
struct TuneRecord {
  std::string key;        ///< TuneCacheKey::text(); checked on load
  int64_t M = 0, N = 0, K = 0;  ///< the shape tuned for (any in the class hits)
  std::string method;     ///< "cost model" or "measured on <device>"
  std::vector<RankedCandidate> ranking;
};

struct TuneCacheKey {
  std::string kernel;
  std::string fixedParams;  ///< the non-shape, non-tuning -p values: "dtype=bf16;out=f32"
  std::string shapeClass;   ///< shapeClass()
  std::string arch;
  std::string compilerIdentity;
  std::string space;        ///< GemmSpace::signature() after pinning
  std::string method;       ///< "model" or "measured"

  /// Every field, one "name=value" line each.
  std::string text() const;
  /// File name: SHA-256 of text(), 32 hex digits, ".json".
  std::string fileName() const;
};

/// <cache root>/tune for `dir` (empty: the default rules above); empty when
/// no root can be found (no HOME).
std::string tuneCacheDir(const std::string &dir);

class TuneCache {
public:
  /// `dir`: the cache root (empty: default rules). `onWarning` receives
  /// warnings (empty: stderr).
  explicit TuneCache(std::string dir = {}, std::function<void(const std::string &)> onWarning = {});

  /// The file `key` is stored in.
  std::string path(const TuneCacheKey &key) const;
  /// The record for `key`, or nullopt (absent, corrupt or for another key).
  std::optional<TuneRecord> load(const TuneCacheKey &key) const;
  /// Writes `record` for `key` atomically; false (with a warning) on failure.
  bool store(const TuneCacheKey &key, const TuneRecord &record) const;

private:
  void warnOnce(const std::string &path, const std::string &message) const;

  std::string dir_;
  std::function<void(const std::string &)> onWarning_;
};

} // namespace tilec::tune
