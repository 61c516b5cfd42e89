// What the elementwise kernels share: access widths from a row length, and
// the host arithmetic of their references.
#pragma once

#include "tilec/dsl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tilec::kernels::elementwise {

/// The unit roundoff of a dtype's values: what rounding an f32 result to it
/// costs, relative.
inline double unitRoundoff(DType t) {
  return t == DType::bf16 ? 0x1p-8 : t == DType::f16 ? 0x1p-11 : 0x1p-24;
}

/// Half the spacing of a dtype's subnormals: the absolute error rounding a
/// result below its smallest normal to it can add.
inline double subnormalHalfUlp(DType t) {
  return t == DType::bf16 ? 0x1p-134 : t == DType::f16 ? 0x1p-25 : 0x1p-150;
}

/// The largest power of two that divides a row length `n` and keeps a run of
/// elements within 16 bytes: the tensors' divisibility, so that loads and
/// stores move whole runs (launches check it).
inline int64_t divisibilityFor(int64_t n, DType t) {
  int64_t d = t == DType::f32 ? 4 : 8;
  while (d > 1 && n % d != 0)
    d /= 2;
  return d;
}

/// v rounded to nearest even in dtype t (bf16: 8 significant bits, f16: 11
/// down to its subnormals below 2^-14, f32: 24), as storing it keeps it.
inline double roundTo(DType t, double v) {
  if (v == 0 || !std::isfinite(v))
    return v;
  const int bits = t == DType::bf16 ? 8 : t == DType::f16 ? 11 : 24;
  const int minExp = t == DType::f16 ? -14 : -126;  // exponent of the smallest normal
  int e = 0;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  const double ulp = std::ldexp(1.0, std::max(e - 1, minExp) - (bits - 1));
  return std::nearbyint(v / ulp) * ulp;
}

} // namespace tilec::kernels::elementwise
