// The preludes the emitted HIP includes, embedded at build time. No MLIR, so
// tools that only need the text (tools/tilec-pch) stay cheap to build.
#pragma once

#include <string>

namespace tilec {

/// Name the emitted HIP includes the prelude by.
inline constexpr const char *kPreludeHeaderName = "tilec_prelude.h";
/// The device prelude's text (embedded at build time): the AMDGPU hardware
/// layer and the tile primitives, handed to the JIT as kPreludeHeaderName.
const std::string &devicePreludeText();
/// The emulator prelude: the same tile primitives over the CPU wavefront
/// emulator's hardware layer.
const std::string &emulatorPreludeText();

} // namespace tilec
