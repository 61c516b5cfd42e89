// The autotuner (lib/Tune) on shipped kernels: a kernel's -p values become the
// tuner's view of it (tune::TunableGemm). The tuner itself knows no registry.
#pragma once

#include "Registry.h"
#include "Tune/Tuner.h"

namespace tilec::kernels {

/// The tuner's view of shipped kernel `kernel` for the problem and fixed
/// parameters in `params` (M, N, K, dtype, out, ...); tuning parameters given
/// there are pinned. Errors: a kernel with no tuning space, bad parameters.
Result<tune::TunableGemm> tunableGemm(const KernelInfo &kernel, const KernelParams &params);

/// Tunes shipped kernel `kernel` for `params` (tunableGemm, then
/// tune::tuneKernel). Errors: those of both.
Result<tune::TuneResult> tuneShippedKernel(const KernelInfo &kernel, const KernelParams &params,
                                           const tune::TuneOptions &options);

} // namespace tilec::kernels
