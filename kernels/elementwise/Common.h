// What the elementwise kernels share: access widths from a row length, the
// registry plumbing of their -p values, and the host arithmetic of their
// references.
#pragma once

#include "Params.h"
#include "Registry.h"

#include "tilec/dsl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilec::kernels::elementwise {

/// The unit roundoff of a dtype's values: what rounding an f32 result to it
/// costs, relative.
inline double unitRoundoff(DType t) {
  return t == DType::bf16 ? 0x1p-8 : t == DType::f16 ? 0x1p-11 : 0x1p-24;
}

/// Half the spacing of a dtype's subnormals: the absolute error rounding a
/// result below its smallest normal to it can add.
inline double subnormalHalfUlp(DType t) {
  return t == DType::bf16 ? 0x1p-134 : t == DType::f16 ? 0x1p-25 : 0x1p-150;
}

/// The largest power of two that divides a row length `n` and keeps a run of
/// elements within 16 bytes: the tensors' divisibility, so that loads and
/// stores move whole runs (launches check it).
inline int64_t divisibilityFor(int64_t n, DType t) {
  int64_t d = t == DType::f32 ? 4 : 8;
  while (d > 1 && n % d != 0)
    d /= 2;
  return d;
}

/// v rounded to nearest even in dtype t (bf16: 8 significant bits, f16: 11
/// down to its subnormals below 2^-14, f32: 24), as storing it keeps it.
inline double roundTo(DType t, double v) {
  if (v == 0 || !std::isfinite(v))
    return v;
  const int bits = t == DType::bf16 ? 8 : t == DType::f16 ? 11 : 24;
  const int minExp = t == DType::f16 ? -14 : -126;  // exponent of the smallest normal
  int e = 0;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  const double ulp = std::ldexp(1.0, std::max(e - 1, minExp) - (bits - 1));
  return std::nearbyint(v / ulp) * ulp;
}

/// The fp8 output of rms_norm and silu_and_mul (vLLM's static fp8
/// quantisation): the f32 result times inv_scale, which the store rounds to
/// nearest even in `type` and saturates. AMD targets hold e4m3fnuz (+-240,
/// 3 mantissa bits above 2^-7, a grid of 2^-10 below), NVIDIA's OCP e4m3
/// (+-448, 3 bits above 2^-6, a grid of 2^-9 below).
struct Fp8Output {
  DType type = DType::fp8e4m3fnuz;

  bool ocp() const { return type == DType::e4m3; }
  double max() const { return ocp() ? 448.0 : 240.0; }
  /// Relative error of rounding a normal value to 3 mantissa bits.
  static constexpr double unitRoundoff = 0x1p-4;
  /// Absolute error of rounding a value below the smallest normal.
  double subnormalHalfSpacing() const { return ocp() ? 0x1p-10 : 0x1p-11; }
  /// vLLM's smallest dynamic scale, 1 / (512 max): a row of zeros gets a
  /// finite inverse.
  double minDynamicScale() const { return 1.0 / (512.0 * max()); }
  /// What kernel names carry: "_fp8out" (fnuz) or "_e4m3out".
  std::string nameSuffix() const { return ocp() ? "_e4m3out" : "_fp8out"; }
};

/// The -p parameters of an fp8 output: fp8_out, fp8_dtype and the run-time
/// scale --run passes as inv_scale = 1 / scale.
inline std::vector<KernelParam> fp8OutputParams(const std::string &result) {
  return {{"fp8_out", "0",
           "1: " + result + " in fp8 (fp8_dtype), times inv_scale = 1 / scale, saturated (vLLM's static fp8 quant)",
           ParamSpec::integer(0, 1)},
          {"fp8_dtype", "fp8",
           "fp8_out's format: fp8 (e4m3fnuz; AMD targets) | e4m3 (OCP; NVIDIA targets, their default)",
           ParamSpec::dtype({DType::fp8e4m3fnuz, DType::e4m3})},
          {"scale", "0.005", "the fp8 output's scale (run-time; used by --run)", ParamSpec::real()}};
}

/// Reads fp8OutputParams' values through `p`; "" or why they do not fit.
inline std::string readFp8Output(ParamReader &p, const std::string &kernel, bool &fp8Out, DType &type,
                                 double &scale) {
  fp8Out = p.integer("fp8_out") == 1;
  type = p.dtype("fp8_dtype");
  scale = p.real("scale");
  return p.ok() && !(scale > 0) ? "kernel '" + kernel + "': scale must be positive" : "";
}

/// NVIDIA targets hold the OCP fp8 formats (AMD's fnuz ones are an error
/// there, reported where the kernel declares the tensor).
inline void nvidiaFp8Output(KernelParams &p) { p.try_emplace("fp8_dtype", "e4m3"); }

/// The -p parameters of how a workgroup walks its rows: `rowsParam` rows per
/// workgroup, in steps of `chunk` columns, with `waves` wavefronts.
inline std::vector<KernelParam> blockingParams(const std::string &rowsParam, const std::string &rowsWhat) {
  return {{rowsParam, "4", rowsWhat + " per workgroup, 1..64", ParamSpec::integer(1, 64)},
          {"chunk", "512", "columns per step: 32..16384, a power of two", ParamSpec::integer(32, 16384)},
          {"waves", "4", "wavefronts per workgroup", ParamSpec::integer(1, 16)}};
}

/// The defaults for blockingParams on every target: rows longer than 512
/// elements go one to a workgroup, in one chunk of the row's length rounded up
/// to a power of two (up to 4096), so that a row is read from memory once
/// and a few rows still fill many workgroups. On the H200
/// (docs/perf/h200/2026-12-01-h200-run7.json): rms_norm 4096 x 4096 0.032 ms
/// against 0.035 ms for 4 rows of 512-column chunks, softmax 4096 x 4096 0.032
/// against 0.038 ms, softmax 16 x 32768 0.023 against 0.078 ms. On the AMD
/// targets the compiled-code model (docs/performance.md) prices both blockings
/// alike at 4096 x 4096 (bound by memory) and this one 2.4x (rms_norm), 4.2x
/// (silu_and_mul) and 2.5x (softmax) faster at 16 x 8192 on MI300X, where the
/// 4 workgroups of 4 rows step through 16 chunks one dependent load after
/// another. `maxChunk` caps the chunk (silu_and_mul on NVIDIA: 1024).
inline void rowBlocking(KernelParams &p, const std::string &rowsParam, int64_t rowLength, int64_t maxChunk = 4096) {
  if (rowLength <= 512)
    return;
  int64_t chunk = 1024;
  while (chunk < rowLength && chunk < maxChunk)
    chunk *= 2;
  p.try_emplace(rowsParam, "1");
  p.try_emplace("chunk", std::to_string(chunk));
}

/// Reads blockingParams' values through `p`; "" or why they do not fit together.
inline std::string readBlocking(ParamReader &p, const std::string &kernel, const std::string &rowsParam,
                                int64_t &rows, int64_t &chunk, int &waves) {
  rows = p.integer(rowsParam);
  chunk = p.integer("chunk");
  waves = static_cast<int>(p.integer("waves"));
  if (p.ok() && (chunk & (chunk - 1)) != 0)
    return "kernel '" + kernel + "': chunk must be a power of two, got " + std::to_string(chunk);
  return "";
}

/// Sets info.build and info.problem (info.name and info.params set first)
/// from one reader: read(p, config, run) reads the compiled code's
/// configuration and the run-time values only --run uses (tokens, eps) through
/// `p`, and returns "" or why the values do not fit together; build(config)
/// and problem(config, run) make the kernel and its verified problem.
template <class Config, class RunTime>
void bindKernel(KernelInfo &info, std::function<std::string(ParamReader &, Config &, RunTime &)> read,
                std::function<Result<Kernel>(const Config &)> build,
                std::function<Problem(const Config &, const RunTime &)> problem) {
  auto parse = [name = info.name, params = info.params, read](const KernelParams &given, Config &c,
                                                              RunTime &run) -> std::optional<Error> {
    ParamReader p(name, params, given);
    const std::string bad = read(p, c, run);
    if (!p.ok())
      return p.error();
    if (!bad.empty())
      return Error{bad};
    return std::nullopt;
  };
  info.build = [parse, build](const KernelParams &given) -> Result<Kernel> {
    Config c;
    RunTime run;
    if (std::optional<Error> e = parse(given, c, run))
      return *e;
    return build(c);
  };
  info.problem = [parse, problem](const KernelParams &given) -> Result<Problem> {
    Config c;
    RunTime run;
    if (std::optional<Error> e = parse(given, c, run))
      return *e;
    return problem(c, run);
  };
}

} // namespace tilec::kernels::elementwise
