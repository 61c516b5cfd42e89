// The target a compile is for when none is named. Plain C++, part of the public API.
#pragma once

namespace tilec {

/// The default target of tilec::compile, `tilec --offload-arch`, the tuner and
/// the pass pipeline: AMD MI300X (CDNA3).
inline constexpr const char kDefaultArch[] = "gfx942";

} // namespace tilec
