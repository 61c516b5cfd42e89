#include "Tuning.h"

#include <algorithm>
#include <cstdlib>

namespace tilec::kernels {

namespace {

/// The role of `kernel`'s parameter `name` (Code for an unknown name, which
/// the kernel's reader then rejects).
ParamRole roleOf(const KernelInfo &kernel, const std::string &name) {
  for (const KernelParam &kp : kernel.params)
    if (kp.name == name)
      return kp.role;
  return ParamRole::Code;
}

} // namespace

Result<tune::TunableGemm> tunableGemm(const KernelInfo &kernel, const KernelParams &params) {
  if (kernel.name != "gemm")
    return Error{"tilec: error: kernel '" + kernel.name + "' has no tuning space (tunable kernels: gemm)"};
  // The problem and the fixed parameters, validated by the kernel's own reader.
  if (std::any_of(params.begin(), params.end(),
                  [&](const auto &kv) { return roleOf(kernel, kv.first) == ParamRole::Tuning; }))
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
    if (kp.role == ParamRole::Tuning) {
      if (given != params.end())
        g.pinned[kp.name] = std::strtoll(value.c_str(), nullptr, 10);
      continue;
    }
    if (given != params.end())
      fixed[kp.name] = value;
    if (kp.role == ParamRole::Code)  // ... and those that shape the code, defaults included
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
