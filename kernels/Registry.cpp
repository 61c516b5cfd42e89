#include "Registry.h"

#include "attention/Attention.h"
#include "gemm/GemmEntry.h"
#include "moe/MoeEntry.h"
#include "elementwise/RmsNorm.h"
#include "elementwise/Rope.h"
#include "elementwise/SiluAndMul.h"
#include "elementwise/Softmax.h"
#include "mla/MlaDecode.h"

namespace tilec::kernels {

const std::vector<KernelInfo> &shippedKernels() {
  static const std::vector<KernelInfo> kernels = {
      gemmKernelInfo(),
      attentionKernelInfo(),
      attentionBwdKernelInfo(),
      pagedDecodeKernelInfo(),
      mlaDecodeKernelInfo(),
      moeKernelInfo(),
      moeGateKernelInfo(),
      moeAlignKernelInfo(),
      moeExpertsKernelInfo(),
      rmsNormKernelInfo(),
      siluAndMulKernelInfo(),
      softmaxKernelInfo(),
      ropeKernelInfo(),
  };
  return kernels;
}

const KernelInfo *findKernel(const std::string &name) {
  for (const KernelInfo &k : shippedKernels())
    if (k.name == name)
      return &k;
  return nullptr;
}

Result<Kernel> buildKernel(const std::string &name, const KernelParams &params) {
  if (const KernelInfo *k = findKernel(name))
    return k->build(params);
  std::string names;
  for (const KernelInfo &k : shippedKernels())
    names += (names.empty() ? "" : ", ") + k.name;
  return Error{"unknown kernel '" + name + "'; shipped kernels: " + names};
}

KernelParams withTargetDefaults(const KernelInfo &kernel, const KernelParams &given, const std::string &arch) {
  KernelParams out = given;
  const TargetInfo *target = lookupTarget(arch.substr(0, arch.find(',')));
  if (kernel.targetDefaults && target)
    kernel.targetDefaults(out, *target);
  return out;
}

} // namespace tilec::kernels
