#include "Tuning.h"

#include <algorithm>
#include <cstdlib>

namespace tilec::kernels {

namespace {

/// Parameters that describe the problem, not the code: left out of the cache
/// key's fixed parameters (M, N, K go in as the shape class).
bool isProblemOnlyParam(const std::string &name) {
  return name == "M" || name == "N" || name == "K" || name == "scale_a" || name == "scale_b";
}

bool isTuningParam(const std::string &name) {
  const std::vector<std::string> &t = tune::gemmTuningParams();
  return std::find(t.begin(), t.end(), name) != t.end();
}

} // namespace

Result<tune::TunableGemm> tunableGemm(const KernelInfo &kernel, const KernelParams &params) {
  if (kernel.name != "gemm")
    return Error{"tilec: error: kernel '" + kernel.name + "' has no tuning space (tunable kernels: gemm)"};
  // The problem and the fixed parameters, validated by the kernel's own reader.
  if (std::any_of(params.begin(), params.end(), [](const auto &kv) { return isTuningParam(kv.first); }))
    if (Result<Kernel> k = kernel.build(params); !k)  // validates the pinned values
      return Error{k.error()};
  Result<Problem> prob = kernel.problem(params);
  if (!prob)
    return Error{prob.error()};
  tune::TunableGemm g;
  g.name = kernel.name;
  // C is [M, N]; A holds M*K elements whichever way it is stored (layout).
  g.problem.M = prob->tensors[2].shape[0];
  g.problem.N = prob->tensors[2].shape[1];
  g.problem.K = prob->tensors[0].shape[0] * prob->tensors[0].shape[1] / g.problem.M;
  g.problem.in = *parseElemType(mlirTypeName(prob->tensors[0].dtype));
  g.problem.out = *parseElemType(mlirTypeName(prob->tensors[2].dtype));

  KernelParams fixed;  // the -p values every candidate shares
  for (const KernelParam &kp : kernel.params) {
    auto given = params.find(kp.name);
    const std::string &value = given != params.end() ? given->second : kp.defaultValue;
    if (isTuningParam(kp.name)) {
      if (given != params.end())
        g.pinned[kp.name] = std::strtoll(value.c_str(), nullptr, 10);
      continue;
    }
    if (given != params.end())
      fixed[kp.name] = value;
    if (!isProblemOnlyParam(kp.name))  // ... and those that shape the code, defaults included
      g.codeKey += (g.codeKey.empty() ? "" : ";") + kp.name + "=" + value;
  }
  g.build = [build = kernel.build, fixed](const tune::GemmTile &tile) {
    KernelParams ps = fixed;
    for (auto &[k, v] : tile.params())
      ps[k] = v;
    return build(ps);
  };
  for (const TensorSpec &t : prob->tensors)
    g.tensors.push_back({t.dtype, t.shape});
  for (const ScalarSpec &s : prob->scalars)
    g.scalars.push_back({s.value, s.position});
  return g;
}

Result<tune::TuneResult> tuneShippedKernel(const KernelInfo &kernel, const KernelParams &params,
                                           const tune::TuneOptions &options) {
  Result<tune::TunableGemm> g = tunableGemm(kernel, params);
  if (!g)
    return Error{g.error()};
  return tune::tuneKernel(*g, options);
}

} // namespace tilec::kernels
