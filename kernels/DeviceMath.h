// Error bounds of the device prelude's math (lib/Emit/prelude/tilec_scalars.h,
// "math"), for the tolerances of the references: relative, in units of
// u = 2^-24 (one f32 rounding), to first order. They hold on every target:
// the GPU's v_exp_f32, v_log_f32 and v_rcp_f32 are within 1 ulp, a relative
// 2u (an ulp of a normal f32 y is at most 2^-23 |y|); the emulator's host
// libm and division are at least that accurate (docs/design.md, "Device
// math"). Second-order terms are below k^2 u^2 <= 2^-10 k u for the bounds
// k u here, so a tolerance of (1 + 2^-10) k u covers them.
#pragma once

namespace tilec::kernels::devicemath {

/// hw::exp2, hw::log2, hw::rcp: 1 ulp.
inline constexpr double kApprox = 2;
/// exp2(x) = hw::exp2(x).
inline constexpr double kExp2 = kApprox;
/// exp(x) = 2^t (1 + c ln2): 2^t from hw::exp2 (kApprox), the final fma
/// rounds once (1); c, exact but for its own rounding and the f32 tail of
/// log2(e), and the first-order 2^c = 1 + c ln2 (|c| <= 2^-16) add below
/// 2^-30 relative (the 1/64).
inline constexpr double kExp = kApprox + 1 + 1.0 / 64;
/// log(x) = log2(x) * ln2: hw::log2 (kApprox), ln2 rounded to f32 (0.05) and
/// the product (1); a subnormal x adds the subtraction of 32 (1: the result
/// is larger in magnitude than the log2 it comes from).
inline constexpr double kLog = kApprox + 0.05 + 1 + 1;
/// recip(x) = s * rcp(x * s), s a power of two: hw::rcp.
inline constexpr double kRecip = kApprox;
/// div(x, y) = s * (x * rcp(y * s)): hw::rcp and the product; safe_div the same.
inline constexpr double kDiv = kApprox + 1;
/// sigmoid(x) from e = exp(-|x|) <= 1: 1 + e errs by at most kExp / 2 + 1
/// (e's error shrinks by e / (1 + e) <= 1/2, then the sum rounds), its
/// reciprocal adds kRecip, and for x < 0 the product with e adds kExp + 1.
inline constexpr double kSigmoid = (kExp / 2 + 1) + kRecip + kExp + 1;
/// silu(x) = x * sigmoid(x).
inline constexpr double kSilu = kSigmoid + 1;
/// gelu_tanh(x) = x * sigmoid(w), w = 2z = x (a + b x^2): kSilu, plus w's own
/// error, relative 5 (a and b rounded to f32, x^2, b x^2, the sum of two terms
/// of one sign, the product with x), through sigmoid's logarithmic slope
/// 1 - sigmoid(w) <= 1: kGeluTanhPerW * |w| more.
inline constexpr double kGeluTanh = kSilu;
inline constexpr double kGeluTanhPerW = 5;
/// sub_exp2(x, y) = exp2(x - y): the subtraction's rounding, u |x - y| in the
/// exponent, scales the result by up to ln2 u |x - y|: kSubExp2 + ln2 |x - y|.
inline constexpr double kSubExp2 = kApprox;

/// sqrt(x) and rsqrt(x): hw::sqrt and hw::rsq (a subnormal x scaled by 2^32
/// first and the result by 2^-16 or 2^16 after: exact). AMD's v_sqrt_f32 and
/// v_rsq_f32 are within 1 ulp (kApprox); NVIDIA's sqrt.approx and
/// rsqrt.approx within 2^-22.9 relative (PTX ISA), 2.15 u: 2.2 covers both.
inline constexpr double kSqrt = 2.2;
inline constexpr double kRsqrt = 2.2;

/// tanh(x): below |x| = 1/2 the polynomial's truncation (1.7), the final sum
/// (1) and its correction term x y p, at most |x| / 12, carrying y's, p's and
/// the products' roundings (about 6, so 0.5 of the result); above, with
/// e = e^-2|x| <= e^-1 (kExp: 2|x| is exact), 1 - e magnifies e's error by
/// e / (1 - e) <= 0.582 and rounds (1), 1 + e by e / (1 + e) <= 0.269 and
/// rounds (1), and the quotient adds kDiv: 0.851 kExp + 2 + kDiv = 7.6.
inline constexpr double kTanh = 0.851 * kExp + 2 + kDiv;

/// Absolute: hw::exp2 may give 0 for a result below 2^-126 (subnormal), and a
/// subnormal result of a division rounds to a multiple of 2^-149; a function
/// that multiplies such a value by m afterwards (silu, gelu_tanh: by x) errs
/// by up to m times this.
inline constexpr double kSubnormal = 0x1p-126;

} // namespace tilec::kernels::devicemath
