// The preludes the emitted HIP includes, embedded at build time. No MLIR, so
// tools that only need the text (tools/tilec-pch) stay cheap to build.
#pragma once

#include "Target/Target.h"

#include <string>

namespace tilec {

/// Name the emitted HIP includes the prelude by.
inline constexpr const char *kPreludeHeaderName = "tilec_prelude.h";
/// The AMD device prelude's text (embedded at build time): the AMDGPU hardware
/// layer and the tile primitives, handed to the JIT as kPreludeHeaderName.
const std::string &devicePreludeText();
/// The NVIDIA device prelude: the CUDA hardware layer and the same tile
/// primitives.
const std::string &cudaPreludeText();
/// The device prelude a kernel for a target of `vendor` includes.
inline const std::string &devicePreludeText(Vendor vendor) {
  return vendor == Vendor::NVIDIA ? cudaPreludeText() : devicePreludeText();
}
/// The emulator prelude: the same tile primitives over the CPU wavefront
/// emulator's hardware layer.
const std::string &emulatorPreludeText();

} // namespace tilec
