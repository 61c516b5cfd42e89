// The box of an NVIDIA tensor map (TMA): how a kernel parameter read with
// tensor copies is described to the launch that encodes its map. Plain C++,
// part of the public API; the compiler's emitter, CompiledKernel's parameters
// and the bundle manifest (libtilec_rt) share this one definition.
#pragma once

namespace tilec {

/// Boxes of boxRows x boxCols elements of a rank-2 tensor, written into
/// shared memory with a swizzle span of swizzleBytes (32, 64 or 128; 0:
/// unswizzled). boxRows 0: the parameter has no tensor map.
struct TensorMapBox {
  int boxRows = 0, boxCols = 0;
  int swizzleBytes = 0;

  bool present() const { return boxRows > 0; }
  bool operator==(const TensorMapBox &o) const {
    return boxRows == o.boxRows && boxCols == o.boxCols && swizzleBytes == o.swizzleBytes;
  }
  bool operator!=(const TensorMapBox &o) const { return !(*this == o); }
};

} // namespace tilec
