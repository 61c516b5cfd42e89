#include "Run.h"

#include "Target/Float8.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

namespace tilec::kernels {

namespace {

uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                     // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
float fromBf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string indexStr(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s;
  for (int64_t i : idx)
    s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(3);
  os << std::scientific << v;
  return os.str();
}

/// What an output or scratch element holds before the first launch, so that
/// an element the kernels never write cannot pass: NaN, or for the integer
/// types, which have none, their lowest value (converting NaN to an integer
/// is undefined behaviour).
double unwrittenValue(DType t) {
  switch (t) {
  case DType::i32: return std::numeric_limits<int32_t>::lowest();
  case DType::i8: return std::numeric_limits<int8_t>::lowest();
  default: return NAN;
  }
}

} // namespace

double loadElement(DType t, const void *base, int64_t i) {
  switch (t) {
  case DType::f32: return static_cast<const float *>(base)[i];
  case DType::bf16: return fromBf16(static_cast<const uint16_t *>(base)[i]);
  case DType::f16: return static_cast<double>(static_cast<const _Float16 *>(base)[i]);
  case DType::i32: return static_cast<const int32_t *>(base)[i];
  case DType::i8: return static_cast<const int8_t *>(base)[i];
  case DType::fp8e4m3fnuz: return Fp8E4M3Fnuz::decode(static_cast<const uint8_t *>(base)[i]);
  case DType::fp8e5m2fnuz: return Fp8E5M2Fnuz::decode(static_cast<const uint8_t *>(base)[i]);
  case DType::e4m3: return Fp8E4M3Fn::decode(static_cast<const uint8_t *>(base)[i]);
  case DType::e5m2: return Fp8E5M2::decode(static_cast<const uint8_t *>(base)[i]);
  }
  return NAN;
}

void storeElement(DType t, void *base, int64_t i, double v) {
  switch (t) {
  case DType::f32: static_cast<float *>(base)[i] = static_cast<float>(v); return;
  case DType::bf16: static_cast<uint16_t *>(base)[i] = toBf16(static_cast<float>(v)); return;
  case DType::f16: static_cast<_Float16 *>(base)[i] = static_cast<_Float16>(v); return;
  case DType::i32: static_cast<int32_t *>(base)[i] = static_cast<int32_t>(v); return;
  case DType::i8: static_cast<int8_t *>(base)[i] = static_cast<int8_t>(v); return;
  case DType::fp8e4m3fnuz: static_cast<uint8_t *>(base)[i] = Fp8E4M3Fnuz::encode(v); return;
  case DType::fp8e5m2fnuz: static_cast<uint8_t *>(base)[i] = Fp8E5M2Fnuz::encode(v); return;
  case DType::e4m3: static_cast<uint8_t *>(base)[i] = Fp8E4M3Fn::encode(v); return;
  case DType::e5m2: static_cast<uint8_t *>(base)[i] = Fp8E5M2::encode(v); return;
  }
}

std::string RunResult::verifiedLine() const {
  std::string s = mismatches == 0 ? "verified: " : "MISMATCH: ";
  s += std::to_string(elements) + " elements, " + std::to_string(mismatches) + " outside tolerance; max_abs_err=" +
       fmt(maxAbsError) + " max_rel_err=" + fmt(maxRelError) + " max_tolerance=" + fmt(maxTolerance) +
       " (" + toleranceRule + ")";
  return s;
}

Result<RunResult> runAndVerify(const KernelInfo &info, const KernelParams &given, const RunOptions &options) {
  const KernelParams params = withTargetDefaults(info, given, options.compile.arch);
  if (!info.problem)
    return Error{"tilec: error: kernel '" + info.name + "' has no CPU reference to run against"};
  Result<Problem> problem = info.problem(params);
  if (!problem)
    return Error{problem.error()};
  // The launches: one of the kernel over every argument, or the problem's list.
  std::vector<Launch> launches = problem->launches;
  if (launches.empty()) {
    Launch all;
    for (size_t t = 0; t < problem->tensors.size(); ++t)
      all.tensors.push_back(t);
    all.scalars = problem->scalars;
    launches.push_back(std::move(all));
  }
  std::vector<CompiledKernel> kernels;
  for (const Launch &l : launches) {
    KernelParams p = params;
    for (const auto &[k, v] : l.params)
      p[k] = v;
    Result<Kernel> kernel = info.build(p);
    if (!kernel)
      return Error{kernel.error()};
    Result<CompiledKernel> compiled = compile(*kernel, options.compile);
    if (!compiled)
      return Error{compiled.error()};
    kernels.push_back(std::move(*compiled));
  }
  // Launch k's arguments over `buffers`, the tensors' device memory (null
  // before it is allocated).
  const std::vector<TensorSpec> &specs = problem->tensors;
  auto launchArgs = [&](size_t k, const std::vector<void *> &buffers) -> Result<std::vector<LaunchArg>> {
    const Launch &l = launches[k];
    std::vector<LaunchArg> args;
    for (size_t t : l.tensors) {
      if (t >= specs.size())
        return Error{"tilec: error: kernel '" + info.name + "': launch " + std::to_string(k) + " names tensor " +
                     std::to_string(t) + " of " + std::to_string(specs.size())};
      args.push_back(LaunchArg::tensor(buffers[t], specs[t].shape));
    }
    // Scalar arguments go in at their positions (ascending, so earlier
    // inserts do not move later ones).
    for (const ScalarSpec &sc : l.scalars) {
      if (sc.position > args.size())
        return Error{"tilec: error: kernel '" + info.name + "': scalar argument '" + sc.name + "' at position " +
                     std::to_string(sc.position) + " is past the " + std::to_string(args.size()) +
                     " arguments before it"};
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(sc.position),
                  sc.i32 ? LaunchArg::i32(static_cast<int32_t>(sc.value)) : LaunchArg::f32(sc.value));
    }
    return args;
  };
  // The launches are checked on their sizes before any memory is made for
  // them: a tensor too large to launch fails here, not after its data.
  for (size_t k = 0; k < launches.size(); ++k) {
    Result<std::vector<LaunchArg>> args = launchArgs(k, std::vector<void *>(specs.size(), nullptr));
    if (!args)
      return Error{args.error()};
    if (Status s = checkLaunchArgs(kernels[k], *args); !s)
      return Error{"tilec: error: " + s.error()};
  }

  Result<std::unique_ptr<Device>> device = Device::open(options.device, options.compile.arch);
  if (!device)
    return Error{device.error()};
  Device &dev = **device;

  RunResult result;
  result.kernel = kernels.back();
  result.kernels = kernels;
  result.device = dev.description();
  result.toleranceRule = problem->toleranceRule;

  // Host data: inputs uniform in [-1, 1) rounded to their type; outputs and
  // scratch unwrittenValue.
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<char>> host(specs.size());
  std::vector<std::vector<double>> values(specs.size());
  std::vector<void *> buffers(specs.size(), nullptr);
  auto releaseAll = [&] {
    for (void *b : buffers)
      if (b)
        dev.release(b);
  };
  for (size_t t = 0; t < specs.size(); ++t) {
    int64_t n = numElements(specs[t].shape);
    host[t].resize(std::max<int64_t>(n, 1) * dtypeBytes(specs[t].dtype));
    values[t].resize(n);
    for (int64_t i = 0; i < n; ++i) {
      double v = !specs[t].values.empty()                 ? specs[t].values[i]
                 : specs[t].output || specs[t].scratch ? unwrittenValue(specs[t].dtype)
                                                       : dist(rng);
      storeElement(specs[t].dtype, host[t].data(), i, v);
      values[t][i] = loadElement(specs[t].dtype, host[t].data(), i);
    }
    Result<void *> buf = dev.allocate(host[t].size());
    if (!buf) {
      releaseAll();
      return Error{buf.error()};
    }
    buffers[t] = *buf;
    if (Status s = dev.copyToDevice(buffers[t], host[t].data(), host[t].size()); !s) {
      releaseAll();
      return Error{s.error()};
    }
  }
  for (size_t k = 0; k < launches.size(); ++k) {
    Result<std::vector<LaunchArg>> args = launchArgs(k, buffers);
    if (!args) {
      releaseAll();
      return Error{args.error()};
    }
    Result<LaunchStats> stats = dev.launch(kernels[k], *args);
    if (!stats) {
      releaseAll();
      return Error{stats.error()};
    }
    // Checker findings and times add up over the launches; the grid is the last one's.
    LaunchStats merged = std::move(*stats);
    if (k > 0) {
      merged.outOfBounds += result.stats.outOfBounds;
      merged.races += result.stats.races;
      merged.uninitializedLdsReads += result.stats.uninitializedLdsReads;
      merged.misalignedLdsAccesses += result.stats.misalignedLdsAccesses;
      merged.bankConflicts += result.stats.bankConflicts;
      merged.deadlock = merged.deadlock || result.stats.deadlock;
      merged.invalidInstructions += result.stats.invalidInstructions;
      merged.laneInstructions += result.stats.laneInstructions;
      merged.seconds += result.stats.seconds;
      merged.messages.insert(merged.messages.begin(), result.stats.messages.begin(), result.stats.messages.end());
    }
    result.stats = std::move(merged);
  }

  std::vector<std::vector<double>> expected, tolerance;
  problem->reference(values, expected, tolerance);
  size_t out = 0;
  for (size_t t = 0; t < specs.size(); ++t) {
    if (!specs[t].output)
      continue;
    if (Status s = dev.copyToHost(host[t].data(), buffers[t], host[t].size()); !s) {
      releaseAll();
      return Error{s.error()};
    }
    result.outputBytes.push_back(host[t]);
    const std::vector<double> &exp = expected[out], &tol = tolerance[out];
    ++out;
    for (int64_t i = 0; i < static_cast<int64_t>(exp.size()); ++i) {
      double got = loadElement(specs[t].dtype, host[t].data(), i);
      double err = std::fabs(got - exp[i]);
      ++result.elements;
      result.maxTolerance = std::max(result.maxTolerance, tol[i]);
      // false for NaN; an exact infinity (the -inf logsumexp of a row that saw no key) matches itself
      bool ok = err <= tol[i] || (std::isinf(exp[i]) && got == exp[i]);
      if (std::isinf(exp[i]) && got == exp[i])
        err = 0;
      if (!std::isnan(err)) {
        result.maxAbsError = std::max(result.maxAbsError, err);
        if (exp[i] != 0)
          result.maxRelError = std::max(result.maxRelError, err / std::fabs(exp[i]));
      } else {
        result.maxAbsError = INFINITY;
      }
      if (!ok) {
        ++result.mismatches;
        if (result.firstMismatches.size() < 8)
          result.firstMismatches.push_back(specs[t].name + "[" + indexStr(specs[t].shape, i) + "] (of " +
                                           shapeStr(specs[t].shape) + "): got " + fmt(got) + ", expected " +
                                           fmt(exp[i]) + " (tolerance " + fmt(tol[i]) + ")");
      }
    }
  }
  releaseAll();
  return result;
}

} // namespace tilec::kernels
