// `tilec --kernel=NAME -p ... --tune`: runs the autotuner and prints the
// chosen configuration as -p flags plus a short table of the best candidates.
// The CLI (tools/tilec) parses the flags and calls runTuneCommand.
#pragma once

#include "Registry.h"

#include "tilec/runtime.hpp"
#include "tilec/tilec.hpp"

#include <ostream>
#include <string>

namespace tilec::kernels {

struct TuneCliOptions {
  std::string arch = kDefaultArch;
  JitChoice jit = JitChoice::Auto;
  bool useCache = true;   ///< false (--no-cache): neither the code-object nor the tuning cache
  std::string cacheDir;   ///< empty: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec
  DeviceKind device = DeviceKind::Auto;  ///< Auto: time on a HIP GPU if one opens, else the cost model
  unsigned threads = 0;   ///< 0: hardware_concurrency
  enum class Progress { Auto, Always, Never } progress = Progress::Auto;  ///< Auto: when stderr is a TTY
};

/// Tunes `kernel` for `params` (problem sizes, dtype, ...; tuning parameters
/// given there are pinned) and prints, on `out`, a summary, the top-5 table
/// and "best: -p block_m=... (instr, modelled 1.23 ms, 61% of peak)". A
/// one-line progress indicator goes to `err` when it is a TTY (Auto). Errors
/// go to `err`. Returns the exit status: 0 on success, 1 on an error.
int runTuneCommand(const KernelInfo &kernel, const KernelParams &params,
                   const TuneCliOptions &options, std::ostream &out, std::ostream &err);

/// The same on std::cout / std::cerr.
int runTuneCommand(const KernelInfo &kernel, const KernelParams &params,
                   const TuneCliOptions &options);

} // namespace tilec::kernels
