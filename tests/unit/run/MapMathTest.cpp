// Every elementwise function of tile.map, one kernel each: compiled for
// gfx942, gfx90a and gfx1151 by the in-process clang JIT (and for gfx90a by
// the JIT `auto` picks: hipRTC where present), so none may need a library call
// the GPU does not have, then run in the CPU emulator over inputs that span
// the function's range (subnormals, infinities, overflow and underflow of the
// result) and compared with the function in double precision.
//
// Tolerances. Functions that are one IEEE operation (add, mul, scale, ...) or
// exact (max, relu, ceil, eq, ...) must match f32 arithmetic on the host
// exactly: each rounds once, as here.
// The others are within their error bound from kernels/DeviceMath.h, derived
// there with the hardware's v_exp_f32, v_log_f32 and v_rcp_f32 at their
// documented 1 ulp (relative 2u, u = 2^-24), not the emulator's libm (at
// least as accurate): the tolerance this test passes with holds on the GPU.
// The bounds are first order; second-order terms are below 2^-10 of them.
#include "DeviceMath.h"
#include "Registry.h"
#include "Run.h"
#include "RunChecks.h"

#include "tilec/dsl.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace tilec;
using namespace tilec::kernels;
using namespace tilec::dsl;
namespace dm = tilec::kernels::devicemath;

namespace {

constexpr int64_t kRows = 16, kCols = 64, kBlocks = 2, kCount = kRows * kCols * kBlocks;
constexpr double kU = 0x1p-24, kInf = std::numeric_limits<double>::infinity();
/// The scalars of scale and add_scalar (the kernel holds them rounded to f32).
constexpr double kScale = 0.3, kAddend = 0.7;

/// dst = fn(X[, Y]) over kRows x kCols tiles, one tile per workgroup.
Result<Kernel> buildMapKernel(MapFn fn) {
  KernelBuilder kb(std::string("map_") + mapFnName(fn), {.numWaves = 1});
  Tensor X = kb.tensor("X", DType::f32, 2);
  Tensor Y = isBinary(fn) ? kb.tensor("Y", DType::f32, 2) : X;
  Tensor O = kb.tensor("O", DType::f32, 2);
  kb.grid({GridExtent::ceilDiv(X, 0, kRows)});
  Index r0 = kb.blockId(0) * kRows;
  Tile x = kb.regTile("x", {kRows, kCols}, DType::f32), o = kb.regTile("o", {kRows, kCols}, DType::f32);
  kb.load(X, {r0, 0}, x);
  if (isBinary(fn)) {
    Tile y = kb.regTile("y", {kRows, kCols}, DType::f32);
    kb.load(Y, {r0, 0}, y);
    kb.map(fn, o, x, y);
  } else if (fn == MapFn::scale) {
    kb.scale(o, x, kScale);
  } else if (fn == MapFn::add_scalar) {
    kb.addScalar(o, x, kAddend);
  } else {
    kb.map(fn, o, x);
  }
  kb.store(o, O, {r0, 0});
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

float f32(double v) { return static_cast<float>(v); }

/// A value in f32's range as the kernel's result is: beyond the largest
/// finite float by half an ulp or more it is an infinity.
double inF32Range(double v) {
  const double overflow = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
  return std::fabs(v) >= overflow ? std::copysign(kInf, v) : v;
}

/// n values from lo to hi, evenly spaced, rounded to f32.
std::vector<double> spaced(double lo, double hi, int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = f32(lo + (hi - lo) * double(i) / double(n - 1));
  return v;
}
/// n values 2^e, e evenly spaced from lo to hi, rounded to f32 (down to its
/// subnormals), with alternating signs when `signs`.
std::vector<double> powersOfTwo(double lo, double hi, int64_t n, bool signs) {
  std::vector<double> v = spaced(lo, hi, n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = f32((signs && i % 2 ? -1.0 : 1.0) * std::exp2(v[i]));
  return v;
}
/// `special` first, then `fill` up to kCount values.
std::vector<double> withSpecial(std::vector<double> special, const std::vector<double> &fill) {
  special.insert(special.end(), fill.begin(), fill.begin() + (kCount - int64_t(special.size())));
  return special;
}

/// What one map function is tested on and against.
struct MapCase {
  MapFn fn;
  std::vector<double> x, y;  ///< kCount inputs each (y: binary functions only)
  /// The exact result, in double; for an IEEE operation, the host's f32 result.
  std::function<double(double x, double y)> exact;
  /// The tolerance at (x, y) with exact result r.
  std::function<double(double x, double y, double r)> tolerance;
};

std::function<double(double, double, double)> exactly() {
  return [](double, double, double) { return 0.0; };
}
/// Within k u relative (with the 2^-10 second-order margin), plus `absolute`.
std::function<double(double, double, double)> within(double k, double absolute = dm::kSubnormal) {
  return [=](double, double, double r) { return (1 + 0x1p-10) * k * kU * std::fabs(r) + absolute; };
}

double sigmoid(double w) { return 1 / (1 + std::exp(-w)); }
/// 2z = 2 sqrt(2/pi) (x + 0.044715 x^3), gelu_tanh's argument of sigmoid.
double geluW(double x) { return 2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x); }

std::vector<MapCase> mapCases() {
  const std::vector<double> wide = withSpecial({0.0, -0.0, 1e-40, -1e-40, kInf, -kInf}, spaced(-100, 100, kCount));
  const std::vector<double> other = spaced(37, -63, kCount);
  std::vector<double> pairedWithWide = other;  // equal to `wide` at every third element
  for (int64_t i = 0; i < kCount; i += 3)
    pairedWithWide[i] = wide[i];
  // Divisions: y = +-2^e over f32's whole range (subnormals too), x = +-y 2^d,
  // |d| <= 40, so that quotients stay in range; then 0 and infinite operands.
  std::vector<double> divY = powersOfTwo(-130, 127.9, kCount, true), divX(kCount);
  for (int64_t i = 0; i < kCount; ++i)
    divX[i] = f32(std::clamp(divY[i] * std::exp2(40.0 * std::sin(double(i))) * (i % 3 ? 1 : -1),
                             -double(FLT_MAX), double(FLT_MAX)));
  divX = withSpecial({1.0, -2.0, 0.0, 3.0, 0.0}, divX);
  divY = withSpecial({0.0, 0.0, 5.0, kInf, -kInf}, divY);
  std::vector<double> divXNonZero = divX;  // div: 0 / 0 is NaN
  divXNonZero[2] = 7.0;
  divXNonZero[4] = 7.0;

  auto expRange = [](double v) { return inF32Range(v); };
  std::vector<MapCase> c;
  c.push_back({MapFn::copy, wide, {}, [](double x, double) { return x; }, exactly()});
  c.push_back({MapFn::neg, wide, {}, [](double x, double) { return -x; }, exactly()});
  c.push_back({MapFn::exp, withSpecial({0.0, kInf, -kInf, 100.0}, spaced(-104, 88.5, kCount)), {},
               [=](double x, double) { return expRange(std::exp(x)); }, within(dm::kExp)});
  c.push_back({MapFn::exp2, withSpecial({0.0, kInf, -kInf, 200.0}, spaced(-152, 127.5, kCount)), {},
               [=](double x, double) { return expRange(std::exp2(x)); }, within(dm::kExp2)});
  c.push_back({MapFn::log, withSpecial({0.0, 1.0, kInf}, powersOfTwo(-149, 127.9, kCount, false)), {},
               [](double x, double) { return std::log(x); }, within(dm::kLog, 0)});
  c.push_back({MapFn::recip, withSpecial({0.0, -0.0, kInf, -kInf, 0x1p-140}, powersOfTwo(-127.5, 127.9, kCount, true)),
               {}, [=](double x, double) { return expRange(1 / x); }, within(dm::kRecip)});
  c.push_back({MapFn::relu, wide, {}, [](double x, double) { return std::max(x, 0.0); }, exactly()});
  // silu and gelu_tanh multiply sigmoid by x: a flushed sigmoid errs by |x| 2^-126.
  c.push_back({MapFn::silu, withSpecial({0.0, kInf}, spaced(-100, 100, kCount)), {},
               [](double x, double) { return x * sigmoid(x); },
               [](double x, double, double r) { return within(dm::kSilu, (1 + std::fabs(x)) * dm::kSubnormal)(x, 0, r); }});
  c.push_back({MapFn::sigmoid, withSpecial({0.0, kInf, -kInf}, spaced(-100, 100, kCount)), {},
               [](double x, double) { return sigmoid(x); }, within(dm::kSigmoid)});
  // 0.5 x (1 + tanh(z)) = x sigmoid(2z): the reference takes the right-hand
  // side, which double evaluates without cancellation for z << 0 too.
  c.push_back({MapFn::gelu_tanh, withSpecial({0.0}, spaced(-100, 100, kCount)), {},
               [](double x, double) { return x * sigmoid(geluW(x)); },
               [](double x, double, double r) {
                 return within(dm::kGeluTanh + dm::kGeluTanhPerW * std::fabs(geluW(x)),
                               (1 + std::fabs(x)) * dm::kSubnormal)(x, 0, r);
               }});
  c.push_back({MapFn::scale, wide, {}, [](double x, double) { return double(f32(x) * f32(kScale)); }, exactly()});
  c.push_back({MapFn::add_scalar, wide, {}, [](double x, double) { return double(f32(x) + f32(kAddend)); },
               exactly()});
  c.push_back({MapFn::ceil, wide, {}, [](double x, double) { return std::ceil(x); }, exactly()});
  c.push_back({MapFn::sqrt, withSpecial({0.0, -0.0, kInf, 1e-40, 0x1p-149}, powersOfTwo(-149, 127.9, kCount, false)), {},
               [](double x, double) { return std::sqrt(x); }, within(dm::kSqrt, 0)});
  c.push_back({MapFn::rsqrt, withSpecial({0.0, kInf, 1e-40, 0x1p-149}, powersOfTwo(-149, 127.9, kCount, false)), {},
               [](double x, double) { return x == 0 ? kInf : 1 / std::sqrt(x); }, within(dm::kRsqrt, 0)});
  c.push_back({MapFn::abs, wide, {}, [](double x, double) { return std::fabs(x); }, exactly()});
  // Both branches (|x| below and above 1/2), the saturation (tanh = +-1 to
  // f32 beyond |x| ~ 9), infinities and a subnormal (tanh x = x).
  c.push_back({MapFn::tanh, withSpecial({0.0, 0.5, -0.5, kInf, -kInf, 1e-40}, spaced(-12, 12, kCount)), {},
               [](double x, double) { return std::tanh(x); }, within(dm::kTanh)});
  c.push_back({MapFn::add, wide, other, [](double x, double y) { return double(f32(x) + f32(y)); }, exactly()});
  c.push_back({MapFn::sub, wide, other, [](double x, double y) { return double(f32(x) - f32(y)); }, exactly()});
  c.push_back({MapFn::mul, wide, other, [](double x, double y) { return double(f32(x) * f32(y)); }, exactly()});
  c.push_back({MapFn::div, divXNonZero, divY, [=](double x, double y) { return expRange(x / y); }, within(dm::kDiv)});
  c.push_back({MapFn::max, wide, pairedWithWide, [](double x, double y) { return std::max(x, y); }, exactly()});
  c.push_back({MapFn::min, wide, pairedWithWide, [](double x, double y) { return std::min(x, y); }, exactly()});
  // sub_exp2: x - y from -160 to 120, and y = -inf (nothing seen yet: 0).
  c.push_back({MapFn::sub_exp2, withSpecial({-kInf, 1.0}, spaced(-150, 100, kCount)),
               withSpecial({-kInf, -kInf}, spaced(10, -20, kCount)),
               [](double x, double y) { return y == -kInf ? 0.0 : std::exp2(x - y); },
               [](double x, double y, double r) {
                 return y == -kInf ? 0.0 : within(dm::kSubExp2 + M_LN2 * std::fabs(x - y))(x, y, r);
               }});
  c.push_back({MapFn::safe_div, divX, divY, [=](double x, double y) { return y == 0 ? 0.0 : expRange(x / y); },
               within(dm::kDiv)});
  c.push_back({MapFn::eq, wide, pairedWithWide, [](double x, double y) { return x == y ? 1.0 : 0.0; }, exactly()});
  c.push_back({MapFn::neg_inf_where, wide, pairedWithWide, [](double x, double y) { return y != 0 ? -kInf : x; },
               exactly()});
  c.push_back({MapFn::le, wide, pairedWithWide, [](double x, double y) { return x <= y ? 1.0 : 0.0; }, exactly()});
  return c;
}

Problem mapProblem(const MapCase &mc) {
  Problem prob;
  const std::vector<int64_t> shape = {kRows * kBlocks, kCols};
  prob.tensors.push_back({"X", DType::f32, shape, false, mc.x});
  if (isBinary(mc.fn))
    prob.tensors.push_back({"Y", DType::f32, shape, false, mc.y});
  prob.tensors.push_back({"O", DType::f32, shape, /*output=*/true});
  prob.toleranceRule = "kernels/DeviceMath.h";
  const bool binary = isBinary(mc.fn);
  prob.reference = [mc, binary](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                                std::vector<std::vector<double>> &tolerance) {
    std::vector<double> out(kCount), tol(kCount);
    for (int64_t i = 0; i < kCount; ++i) {
      const double x = v[0][i], y = binary ? v[1][i] : 0.0;
      out[i] = mc.exact(x, y);
      tol[i] = mc.tolerance(x, y, out[i]);
    }
    expected = {std::move(out)};
    tolerance = {std::move(tol)};
  };
  return prob;
}

/// (arch, JIT) pairs: the in-process clang JIT on each target, and gfx90a
/// through the JIT `auto` picks (hipRTC of ROCm 5.x here).
struct Route {
  const char *arch;
  JitChoice jit;
  const char *name;
};
const Route kRoutes[] = {{"gfx942", JitChoice::Clang, "gfx942_clang"},
                         {"gfx90a", JitChoice::Clang, "gfx90a_clang"},
                         {"gfx1151", JitChoice::Clang, "gfx1151_clang"},
                         {"gfx90a", JitChoice::Auto, "gfx90a_auto"}};

class MapMath : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(MapMath, WithinItsBoundInTheEmulator) {
  const Route &route = kRoutes[std::get<0>(GetParam())];
  const MapCase mc = mapCases()[std::get<1>(GetParam())];
  KernelInfo info;
  info.name = std::string("map_") + mapFnName(mc.fn);
  info.build = [fn = mc.fn](const KernelParams &) { return buildMapKernel(fn); };
  info.problem = [mc](const KernelParams &) -> Result<Problem> { return mapProblem(mc); };
  RunOptions options = runcheck::emulatorOn(route.arch, /*seed=*/1);
  options.compile.jit = route.jit;
  Result<RunResult> r = runAndVerify(info, {}, options);
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  EXPECT_EQ(r->elements, kCount);
  for (const std::string &m : r->firstMismatches)
    ADD_FAILURE() << m;
  if (route.jit == JitChoice::Clang)
    EXPECT_EQ(r->kernel.report.jit, "clang");
}

INSTANTIATE_TEST_SUITE_P(AllFunctions, MapMath,
                         ::testing::Combine(::testing::Range(0, int(std::size(kRoutes))),
                                            ::testing::Range(0, int(mapCases().size()))),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>> &info) {
                           return std::string(kRoutes[std::get<0>(info.param)].name) + "_" +
                                  mapFnName(mapCases()[std::get<1>(info.param)].fn);
                         });

} // namespace
