// tilec prelude: the register vector types every hardware layer
// (tilec_hw_*.h) and the tile primitives use, clang's vector
// extension (the reason every target's kernel text is compiled by clang). The
// embedded preludes put this file first (lib/Emit/CMakeLists.txt).
#pragma once

namespace tl {

typedef short short4_t __attribute__((ext_vector_type(4)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef short short16_t __attribute__((ext_vector_type(16)));
typedef _Float16 half16_t __attribute__((ext_vector_type(16)));
typedef float float8_t __attribute__((ext_vector_type(8)));
typedef char byte8_t __attribute__((ext_vector_type(8)));  // 8 packed 8-bit operand elements
typedef unsigned uint2_t __attribute__((ext_vector_type(2)));  // 8 raw bytes (one 64-bit access)
typedef unsigned uint4_t __attribute__((ext_vector_type(4)));  // 16 raw bytes (one 128-bit access)

} // namespace tl
