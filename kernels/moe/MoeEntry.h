// The registry entries of the MoE kernels (MoeEntry.cpp).
#pragma once

#include "Registry.h"

namespace tilec::kernels {

KernelInfo moeGateKernelInfo();
KernelInfo moeExpertsKernelInfo();
KernelInfo moeAlignKernelInfo();

/// The whole layer (`moe`): gate -> align -> gate_up -> down -> combine.
KernelInfo moeKernelInfo();

} // namespace tilec::kernels
