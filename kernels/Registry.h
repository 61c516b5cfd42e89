// The registry of shipped kernels: what `tilec --list-kernels` lists and
// `tilec --kernel=NAME -p key=value ...` builds. No MLIR: building a kernel runs
// its DSL function and gives a tilec::Kernel (tile IR plus launch description).
#pragma once

#include "Target/Target.h"
#include "tilec/dsl.hpp"
#include "tilec/result.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tilec::kernels {

/// The values a `-p` parameter takes: its type and its range or choices.
/// Parsing (ParamReader), the error messages, `tilec --list-kernels`, the C
/// ABI's kernel list and docs read it; kernels declare it once, with the
/// parameter.
struct ParamSpec {
  enum class Kind { Integer, Real, Choice, DType };
  Kind kind = Kind::Choice;
  int64_t min = 0, max = 0;  ///< Integer: the inclusive range
  /// Choice: the keywords. Integer and Real: keywords taken instead of a
  /// number (seq_k=seq_q, scale=auto), which the kernel interprets.
  std::vector<std::string> keywords;
  std::vector<DType> dtypes;  ///< DType: the element types ("fp8" and "bf8" name the fp8 formats)

  static ParamSpec integer(int64_t min, int64_t max, std::vector<std::string> keywords = {});
  static ParamSpec real(std::vector<std::string> keywords = {});
  static ParamSpec oneOf(std::vector<std::string> choices);
  static ParamSpec dtype(std::vector<DType> choices);

  /// What a valid value is, for messages: "an integer in [1, 64]", "one of
  /// nn, nt, tn, tt", "a finite real number or auto".
  std::string describe() const;
  /// Whether `value` is one of the keywords.
  bool isKeyword(const std::string &value) const;
  /// The error for `value` ("must be an integer in [1, 8], got '9'"), or
  /// empty when it is valid.
  std::string check(const std::string &value) const;
};

/// What a parameter is to the autotuner (kernels/Tuning.h). Code: it shapes
/// the compiled code, so the tuning cache's key holds its value. Problem: it
/// only describes the problem (a run-time size, a scale passed as a kernel
/// argument); the key holds the sizes' shape class instead. Tuning: the tuner
/// searches it (the kernel's space in lib/Tune names the same parameters).
enum class ParamRole { Code, Problem, Tuning };

/// One `-p name=value` parameter of a shipped kernel, declared once: its
/// name, default, help, the values it takes and its role for the tuner.
struct KernelParam {
  std::string name;
  std::string defaultValue;
  std::string help;
  ParamSpec spec;
  ParamRole role = ParamRole::Code;
};

using KernelParams = std::map<std::string, std::string>;

/// One tensor argument of a concrete problem.
struct TensorSpec {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  bool output = false;  ///< written by the kernel, checked against the reference
  /// Fixed contents (e.g. sequence offsets, a block table); empty: random
  /// inputs in [-1, 1) rounded to the type (outputs: NaN before the launch, or
  /// the lowest value of an integer type).
  std::vector<double> values = {};
  /// Written by one kernel of a multi-kernel problem and read by a later one
  /// (e.g. split-KV partial results): like an output before the first launch,
  /// not checked.
  bool scratch = false;
};

/// One f32 or i32 scalar argument of a concrete problem (e.g. an fp8 GEMM's scale),
/// passed by value. `position` is its index in the kernel's argument list,
/// tensors and scalars counted together (a tensor is one argument, whatever
/// its rank).
struct ScalarSpec {
  std::string name;
  float value = 0;
  size_t position = 0;
  bool i32 = false;  ///< an i32 argument (value holds an integer) rather than f32
};

/// A concrete problem for a shipped kernel (from its -p values): the tensors
/// in kernel-argument order, the scalar arguments placed among them by
/// position, and a CPU reference (which knows the scalars' values). `reference` receives every
/// tensor's values as doubles (outputs: their initial contents) and fills, for
/// each output tensor in order, the expected values and a per-element
/// tolerance. `toleranceRule` says how the tolerance is derived.
/// One kernel launch of a multi-kernel problem: the kernel that `build` gives
/// for the problem's parameters with `params` laid over them (e.g.
/// part=combine), and its arguments in order: `tensors` indexes
/// Problem::tensors, `scalars` Problem::scalars, placed at each scalar's
/// `position` in this launch.
struct Launch {
  std::map<std::string, std::string> params;
  std::vector<size_t> tensors;
  std::vector<ScalarSpec> scalars;  ///< in increasing `position`
};

struct Problem {
  std::vector<TensorSpec> tensors;
  std::vector<ScalarSpec> scalars;  ///< in increasing `position`
  /// Empty: one launch of the kernel with every tensor and scalar. Otherwise
  /// the launches, in order (all of them on the same buffers).
  std::vector<Launch> launches;
  std::function<void(const std::vector<std::vector<double>> &values,
                     std::vector<std::vector<double>> &expected,
                     std::vector<std::vector<double>> &tolerance)>
      reference;
  std::string toleranceRule;
};

struct KernelInfo {
  std::string name;
  std::string summary;
  std::vector<KernelParam> params;
  /// Builds the kernel from `-p` values; missing ones take their defaults. An
  /// unknown name or a bad value gives an error that lists the valid ones.
  std::function<Result<Kernel>(const KernelParams &)> build;
  /// The problem `tilec --run` executes and verifies for these -p values.
  std::function<Result<Problem>(const KernelParams &)> problem;
  /// Sets the -p values the caller left out whose best default depends on
  /// the target (NVIDIA's warps have 32 lanes where AMD's CDNA waves have 64,
  /// so the same tile wants twice the waves). Null: `params`' defaults serve
  /// every target.
  std::function<void(KernelParams &, const TargetInfo &)> targetDefaults;
};

/// `given` completed with `kernel`'s defaults for target `arch` (the first of
/// a comma-separated list); unchanged for an unknown arch. The CLI, --run and
/// the bundle export apply it before `build`.
KernelParams withTargetDefaults(const KernelInfo &kernel, const KernelParams &given, const std::string &arch);

/// Every shipped kernel, in a fixed order.
const std::vector<KernelInfo> &shippedKernels();

/// The shipped kernel called `name`, or nullptr.
const KernelInfo *findKernel(const std::string &name);

/// Builds shipped kernel `name`; an unknown name gives an error listing the shipped kernels.
Result<Kernel> buildKernel(const std::string &name, const KernelParams &params = {});

} // namespace tilec::kernels
