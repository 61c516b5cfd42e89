// tilec DSL: element types of tensors and tiles.
//
// Standard library only (public header, house rule 7).
#pragma once

#include <optional>
#include <string_view>

namespace tilec {

/// Element type of a tensor or a tile.
/// fp8: the fnuz formats are AMD gfx942's (`-p dtype=fp8` / `bf8`); e4m3 and
/// e5m2 are the OCP 8-bit formats (OFP8: e4m3 "fn", max 448, no infinities;
/// e5m2 with infinities) that NVIDIA Hopper multiplies.
enum class DType { f32, f16, bf16, fp8e4m3fnuz, fp8e5m2fnuz, e4m3, e5m2, i32, i8 };

/// The short spelling used in kernel names and `-p dtype=...` parameters:
/// "f32", "f16", "bf16", "fp8e4m3fnuz", "fp8e5m2fnuz", "e4m3", "e5m2", "i32", "i8".
inline const char *dtypeName(DType t) {
  switch (t) {
  case DType::f32: return "f32";
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  case DType::fp8e4m3fnuz: return "fp8e4m3fnuz";
  case DType::fp8e5m2fnuz: return "fp8e5m2fnuz";
  case DType::e4m3: return "e4m3";
  case DType::e5m2: return "e5m2";
  case DType::i32: return "i32";
  case DType::i8: return "i8";
  }
  return "?";
}

/// The MLIR spelling of the element type ("f8E4M3FNUZ", "f8E5M2FNUZ",
/// "f8E4M3FN", "f8E5M2" for fp8).
inline const char *mlirTypeName(DType t) {
  switch (t) {
  case DType::fp8e4m3fnuz: return "f8E4M3FNUZ";
  case DType::fp8e5m2fnuz: return "f8E5M2FNUZ";
  case DType::e4m3: return "f8E4M3FN";
  case DType::e5m2: return "f8E5M2";
  default: return dtypeName(t);
  }
}

/// Bytes per element.
inline int dtypeBytes(DType t) {
  switch (t) {
  case DType::f32: case DType::i32: return 4;
  case DType::f16: case DType::bf16: return 2;
  case DType::fp8e4m3fnuz: case DType::fp8e5m2fnuz: case DType::e4m3: case DType::e5m2: case DType::i8: return 1;
  }
  return 0;
}

inline bool isFloat(DType t) { return t != DType::i32 && t != DType::i8; }

/// The 8-bit float types: AMD's fnuz formats and the OCP ones.
inline bool isFp8(DType t) {
  return t == DType::fp8e4m3fnuz || t == DType::fp8e5m2fnuz || t == DType::e4m3 || t == DType::e5m2;
}

/// Parses either spelling ("bf16", "fp8e4m3fnuz", "f8E4M3FNUZ", "e4m3",
/// "f8E4M3FN", ...); nullopt otherwise.
inline std::optional<DType> parseDType(std::string_view s) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::fp8e4m3fnuz, DType::fp8e5m2fnuz, DType::e4m3,
                  DType::e5m2, DType::i32, DType::i8})
    if (s == dtypeName(t) || s == mlirTypeName(t))
      return t;
  return std::nullopt;
}

} // namespace tilec
