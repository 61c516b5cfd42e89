// tilec: the public C++ API. Write a kernel with the DSL (tilec/dsl.hpp),
// compile it for an AMD target at run time, get its code object and report.
//
//   tilec::Kernel k = myKernel();                        // DSL
//   auto ck = tilec::compile(k, {.arch = "gfx942"});     // DSL -> tile IR -> HIP -> code object
//   if (!ck) { fprintf(stderr, "%s\n", ck.error().c_str()); return 1; }
//   puts(ck->report.toText().c_str());
//
// The compiler behind these declarations is the tilec library (target
// tilec::tilec); this header includes neither MLIR nor LLVM.
#pragma once

#include "tilec/arch.hpp"
#include "tilec/dsl.hpp"
#include "tilec/report.hpp"
#include "tilec/result.hpp"
#include "tilec/tensor_map.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilec {

/// Which JIT compiles the generated HIP: hipRTC where the installed ROCm
/// supports the target, otherwise the in-process clang/lld path.
enum class JitChoice { Auto, HipRTC, Clang };

struct CompileOptions {
  std::string arch = kDefaultArch;  ///< gfx942, gfx90a, gfx1151, sm_90a
  JitChoice jit = JitChoice::Auto;
  bool useCache = true;         ///< persistent on-disk caches of compiled kernels and code objects
  std::string cacheDir;         ///< empty: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec
};

/// The launch grid: one GridDim per axis (see tilec/dsl.hpp).
using GridSpec = std::vector<GridDim>;

/// One parameter of a compiled kernel as the caller sees it: a tensor
/// (passed as a pointer plus one int per dimension) or a scalar.
struct KernelParamInfo {
  enum Kind { Tensor, F32, I32 } kind = Tensor;
  std::string elemType;  ///< tensors: bf16, f16, f32, i32, ...
  int rank = 0;          ///< tensors: 1 or 2
  std::string name;      ///< the DSL's argument name (may be empty)
  /// tensors: the innermost extent must be a multiple of this many elements
  /// and the data aligned to as many elements' bytes (up to 16); see
  /// dsl::TensorOptions. i32 scalars: the value must be a multiple of it
  /// (dsl::ScalarOptions). Launches check it.
  int64_t divisibility = 1;
  /// Tensors the kernel reads with tensor copies (NVIDIA TMA): the box of its
  /// tensor map, which follows the extents among the kernel's parameters and
  /// which the runtime encodes per launch (docs/runtime.md, tensor_map).
  TensorMapBox tensorMap;
};

/// Wall-clock time of each stage of one compile or compileTileIR call, in
/// milliseconds. A DSL kernel is already recorded when compile() receives it:
/// the time to record it (the DSL stage) is the caller's to measure.
struct CompileTimings {
  double contextMs = 0;   ///< MLIR context and dialect loading
  double parseMs = 0;     ///< tile IR text, or a recorded kernel, -> MLIR module
  double pipelineMs = 0;  ///< the target pass pipeline
  double emitMs = 0;      ///< HIP emission
  double jitMs = 0;       ///< hipRTC / clang + lld, or the cache lookup on a hit
  double reportMs = 0;    ///< code-object report (metadata notes, disassembly)
  double totalMs = 0;     ///< the whole call, the above plus assembling the result
  bool cacheHit = false;  ///< the code object came from the on-disk cache
  /// The whole result came from the compiled-kernel cache (keyed on the tile
  /// IR text or the recorded kernel's JSON, and the options): no stage ran;
  /// jitMs is the lookup.
  bool frontCacheHit = false;
  /// Each pass of the pipeline in run order, summed over the ops it ran on.
  std::vector<std::pair<std::string, double>> passMs;
};

struct CompiledKernel {
  std::string name;               ///< kernel symbol (encodes the configuration)
  std::string arch;
  std::string tileIR;             ///< tile IR after the target pipeline
  std::string hip;                ///< generated HIP C++ (without the prelude)
  std::vector<char> codeObject;   ///< AMDGPU ELF; NVIDIA: cubin (ELF)
  std::string assembly;           ///< NVIDIA: the PTX the cubin came from (AMD: empty; disassemble() reads the ELF)
  Report report;
  int numWaves = 0;               ///< waves per workgroup
  int waveSize = 0;
  /// Shared memory each launch passes dynamically. NVIDIA kernels address
  /// all the shared memory the compiler planned through one dynamic array:
  /// these bytes, which the report's ldsBytes exceeds by the static section
  /// ptxas reserves beside the array (asking for the report's total would
  /// cross the device's limit first). AMD: 0, the code object declares its LDS.
  int64_t dynamicLdsBytes = 0;
  GridSpec grid;
  std::vector<KernelParamInfo> params;  ///< in kernel-argument order
  std::vector<std::string> paramTypes;  ///< C types of the HIP parameters (after expansion)
  std::vector<std::string> remarks;     ///< what the compiler chose to say (e.g. stages lowered), with locations
  CompileTimings timings;               ///< where this compile spent its time
};

/// Compile a DSL kernel for `opts.arch`: its recording is built into tile IR
/// with MLIR's builders and checked by the dialect's verifiers, whose errors
/// name the kernel's file:line.
Result<CompiledKernel> compile(const Kernel &kernel, const CompileOptions &opts = {});
/// A DSL kernel's tile IR as the compiler receives it, before any pass, as
/// MLIR text (values are numbered, not named as in the kernel's C++).
Result<std::string> tileIR(const Kernel &kernel);
/// Reads a recorded kernel from JSON (Kernel::toJson's format, docs/design.md);
/// `bufferName` names the text in errors.
Result<Kernel> kernelFromJson(const std::string &json, const std::string &bufferName = "<kernel-json>");
/// Compile tile-dialect IR text (one kernel function). `bufferName` names the
/// text in diagnostics (e.g. the file name).
Result<CompiledKernel> compileTileIR(const std::string &mlir, const CompileOptions &opts = {},
                                     const std::string &bufferName = "<tile-ir>");

/// Disassembly of a compiled kernel's code object (as llvm-objdump -d prints
/// it); NVIDIA: its PTX.
std::string disassemble(const CompiledKernel &kernel);

/// The device prelude handed to the JIT compiler as "tilec_prelude.h".
const std::string &devicePrelude();

} // namespace tilec
