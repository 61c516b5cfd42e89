// The autotuner: enumerate a kernel's configuration space, prune it with the
// target's budgets, compile the survivors in parallel, rank them (timed on a
// HIP GPU, else by the cost model) and cache the result per shape class.
// See docs/autotuning.md.
#pragma once

#include "Tune/CostModel.h"
#include "Tune/Prune.h"
#include "Tune/Space.h"
#include "Tune/TuneCache.h"

#include "tilec/result.hpp"
#include "tilec/runtime.hpp"
#include "tilec/tilec.hpp"

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilec::tune {

/// Progress of the compile phase, reported after each candidate.
struct TuneProgress {
  size_t compiled = 0;  ///< candidates done (compiled or failed)
  size_t total = 0;     ///< candidates to compile
  double elapsedSeconds = 0;
};

struct TuneOptions {
  std::string arch = kDefaultArch;
  JitChoice jit = JitChoice::Auto;
  bool useCodeObjectCache = true;
  bool useTuneCache = true;
  std::string cacheDir;  ///< empty: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec
  /// Auto: time on a HIP GPU when one opens for `arch`, else the cost model.
  /// Emulator: always the cost model (the emulator's time says nothing about a GPU).
  /// Hip: a GPU is required.
  DeviceKind device = DeviceKind::Auto;
  unsigned threads = 0;  ///< compile threads; 0: std::thread::hardware_concurrency()
  /// The space to search; the kernel's tuning parameters given as -p values
  /// are pinned on top of it.
  GemmSpace space;
  /// Most candidates compiled: when more survive pruning, the cost model
  /// (with estimated registers) ranks them and the rest are pruned as
  /// PruneReason::ModelRank. 0: no limit.
  size_t maxCompiles = 100;
  size_t keep = 5;       ///< candidates kept in the result (and the cache)
  int timedLaunches = 5; ///< GPU: launches timed per candidate after one warm-up
  std::function<void(const TuneProgress &)> onProgress;  ///< called from worker threads, serialised
  std::function<void(const std::string &)> onWarning;    ///< empty: stderr
};

struct TuneStats {
  size_t spaceSize = 0;
  std::array<size_t, kNumPruneReasons> pruned{};  ///< by PruneReason (index Kept unused)
  size_t compiled = 0;           ///< compiled successfully
  size_t compileFailed = 0;
  size_t droppedScratch = 0;     ///< compiled with scratch or spills
  size_t droppedOccupancy = 0;   ///< compiled kernel does not fit on a unit
  size_t instrMismatch = 0;      ///< compiler chose another instruction than predicted
  unsigned threads = 0;
  double compileSeconds = 0;
  double rankSeconds = 0;
  double totalSeconds = 0;
  std::string firstCompileError;
};

struct TuneResult {
  GemmProblem problem;
  std::string shapeClass;
  std::string arch;
  TuneRecord record;       ///< the ranking, best first (from the cache on a hit)
  bool fromCache = false;
  std::string cachePath;   ///< empty when the cache is off
  TuneStats stats;         ///< zero on a cache hit
};

/// The identity of the compiler that builds the candidates, part of the cache
/// key: tilec version, LLVM version, device prelude hash, the library's
/// build (size and mtime of the file holding tilec::compile) and the JIT choice.
std::string compilerIdentity(JitChoice jit);

/// One tensor of the launch a GPU times (zero-filled).
struct TimedTensor {
  DType dtype;
  std::vector<int64_t> shape;
};

/// An f32 scalar argument of that launch, at index `position` of the
/// kernel's arguments (tensors and scalars counted together).
struct TimedScalar {
  float value = 0;
  size_t position = 0;
};

/// A GEMM kernel to tune, as the tuner sees it: the problem, how to build a
/// candidate, and what identifies the code apart from the tiles. The kernel
/// registry makes one from a shipped kernel's -p values
/// (kernels/Tuning.h).
struct TunableGemm {
  std::string name;     ///< names the kernel in the cache key and in messages
  GemmProblem problem;
  /// The parameters that shape the code other than the tiles, defaults
  /// included ("dtype=bf16;out=f32;..."): part of the cache key.
  std::string codeKey;
  /// Tuning parameters the caller fixed (names of gemmTuningParams()).
  std::map<std::string, int64_t> pinned;
  /// Builds the kernel for one point of the space.
  std::function<Result<Kernel>(const GemmTile &)> build;
  /// The launch a GPU times, its arguments in order.
  std::vector<TimedTensor> tensors;
  std::vector<TimedScalar> scalars;  ///< in increasing `position`
};

/// The matrix instruction and wave grid tilec-select-matrix-instr chose for
/// the first tile.gemm of compiled tile IR (`tilec::CompiledKernel::tileIR`):
/// its `#tile.matrix<"instr", wave_grid = [wm, wn], ...>` layout; nullopt when
/// the IR has no tile.gemm or the gemm has no such layout.
struct ChosenTiling {
  std::string instr;
  int wm = 0, wn = 0;
};
std::optional<ChosenTiling> chosenTiling(const std::string &tileIR);

/// Tunes `kernel`: enumerates the space (with `kernel.pinned` fixed), prunes,
/// compiles and ranks. Errors: an unknown arch, no candidate left or none
/// compiled.
Result<TuneResult> tuneKernel(const TunableGemm &kernel, const TuneOptions &options);

} // namespace tilec::tune
