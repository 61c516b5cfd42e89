// The GEMM's registry entry (GemmEntry.cpp).
#pragma once

#include "Registry.h"

namespace tilec::kernels {

/// The registry entry (`tilec --kernel=gemm -p M=... -p dtype=...`).
KernelInfo gemmKernelInfo();

} // namespace tilec::kernels
