// Register tiles in the blocked layout (#tile.blocked), run in the CPU
// emulator on every target (gfx942 and gfx90a wave64, gfx1151 wave32, sm_90a
// warp 32) and compared with double precision:
// - the RMSNorm of docs/dsl-elementwise.md exactly as a user writes it
//   (tests/lit/Inputs/dsl-rms-norm.cpp: 16 rows per workgroup, chunks of 256
//   columns, a [1, H] weight), with ragged token counts and H not a multiple
//   of the chunk;
// - row and column reductions and [R, 1] / [1, C] broadcasts on tile shapes
//   the layout's footprint does not divide (lanes and waves that hold
//   replicas), so every path of the prelude's reductions runs: cross-lane only,
//   across waves through LDS, on either axis.
#include "DeviceMath.h"
#include "Registry.h"
#include "Run.h"
#include "RunChecks.h"

#include "tilec/dsl.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

namespace user_rms_norm {
#include "../../lit/Inputs/dsl-rms-norm.cpp"
} // namespace user_rms_norm

using namespace tilec;
using namespace tilec::kernels;
using namespace tilec::dsl;

namespace {

constexpr double kU = 0x1p-24;      // f32 unit roundoff
constexpr double kUBf16 = 0x1p-8;   // bf16 unit roundoff
constexpr double kRsqrt = tilec::kernels::devicemath::kRsqrt;
constexpr float kEps = 1e-5f;

const char *const kTargets[] = {"gfx942", "gfx90a", "gfx1151", "sm_90a"};

/// The user's RMSNorm on `tokens` x `hidden` bf16 inputs.
KernelInfo rmsNormInfo(int64_t tokens, int64_t hidden) {
  KernelInfo info;
  info.name = "rms_norm_user";
  info.build = [](const KernelParams &) -> Result<Kernel> {
    Kernel k = user_rms_norm::kernel();
    if (!k.ok())
      return Error{k.error()};
    return k;
  };
  info.problem = [tokens, hidden](const KernelParams &) -> Result<Problem> {
    Problem p;
    p.tensors.push_back({"X", DType::bf16, {tokens, hidden}});
    p.tensors.push_back({"W", DType::bf16, {1, hidden}});
    p.tensors.push_back({"Y", DType::bf16, {tokens, hidden}, /*output=*/true});
    p.scalars.push_back({"eps", kEps, 3});
    p.scalars.push_back({"inv_h", static_cast<float>(1.0 / double(hidden)), 4});
    // Y = x r w with r = 1 / sqrt(sum(x^2) / H + eps). In f32: the sum of H
    // non-negative terms errs by at most (H - 1) u relative in any order,
    // the product with 1/H (itself rounded) and the sum with eps add 3 u;
    // the square root halves that, rsqrt adds kRsqrt u and the two products
    // 2 u. Rounding the f32 result to bf16 adds kUBf16 relative (of the f32
    // value, hence the (1 + kUBf16) on the f32 error).
    p.toleranceRule = "|Y - ref| <= 2^-8 |ref| + (1 + 2^-8) ((H + 2) / 2 + 2.2 + 2) u |ref|";
    p.reference = [tokens, hidden](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                                   std::vector<std::vector<double>> &tolerance) {
      const std::vector<double> &x = v[0], &w = v[1];
      std::vector<double> y(tokens * hidden), tol(tokens * hidden);
      const double k = (double(hidden) + 2) / 2 + kRsqrt + 2;
      for (int64_t t = 0; t < tokens; ++t) {
        double ss = 0;
        for (int64_t h = 0; h < hidden; ++h)
          ss += x[t * hidden + h] * x[t * hidden + h];
        const double r = 1 / std::sqrt(ss / double(hidden) + double(kEps));
        for (int64_t h = 0; h < hidden; ++h) {
          const double ref = x[t * hidden + h] * r * w[h];
          y[t * hidden + h] = ref;
          tol[t * hidden + h] = kUBf16 * std::fabs(ref) + (1 + kUBf16) * k * kU * std::fabs(ref);
        }
      }
      expected = {std::move(y)};
      tolerance = {std::move(tol)};
    };
    return p;
  };
  return info;
}

struct RmsCase {
  const char *name;
  int64_t tokens, hidden;
};
const RmsCase kRmsCases[] = {{"one_token_h1000", 1, 1000}, {"t333_h264", 333, 264}, {"t40_h512", 40, 512}};

class UserRmsNorm : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(UserRmsNorm, VerifiesInTheEmulator) {
  const char *arch = kTargets[std::get<0>(GetParam())];
  const RmsCase &c = kRmsCases[std::get<1>(GetParam())];
  Result<RunResult> r = runAndVerify(rmsNormInfo(c.tokens, c.hidden), {}, runcheck::emulatorOn(arch, /*seed=*/3));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  EXPECT_EQ(r->elements, c.tokens * c.hidden);
  // The layout runs 8 bf16 (16 bytes) per lane: one global access each.
  EXPECT_NE(r->kernel.hip.find("tl::BlockedLayout<8,"), std::string::npos) << r->kernel.hip;
}

INSTANTIATE_TEST_SUITE_P(Targets, UserRmsNorm,
                         ::testing::Combine(::testing::Range(0, int(std::size(kTargets))),
                                            ::testing::Range(0, int(std::size(kRmsCases)))),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>> &info) {
                           return std::string(kTargets[std::get<0>(info.param)]) + "_" +
                                  kRmsCases[std::get<1>(info.param)].name;
                         });

/// Per R x C tile of X (f32): S = row sums ([R, 1], into a [rows, 1]
/// tensor), M = column maxima ([1, C], one row of M per tile row block), and
/// Z = (X - M) * S, both broadcasts. One workgroup per tile.
Result<Kernel> buildReductions(int64_t R, int64_t C, int waves) {
  KernelBuilder kb("blocked_reductions", {.numWaves = waves});
  Tensor X = kb.tensor("X", DType::f32, 2);
  Tensor S = kb.tensor("S", DType::f32, 2);
  Tensor M = kb.tensor("M", DType::f32, 2);
  Tensor Z = kb.tensor("Z", DType::f32, 2);
  kb.grid({GridExtent::ceilDiv(X, 0, R), GridExtent::ceilDiv(X, 1, C)});
  Index b = kb.blockId(0), r0 = b * R, c0 = kb.blockId(1) * C;
  Tile x = kb.regTile("x", {R, C}, DType::f32), s = kb.regTile("s", {R, 1}, DType::f32),
       m = kb.regTile("m", {1, C}, DType::f32);
  kb.load(X, {r0, c0}, x);
  kb.reduce(ReduceKind::sum, x, s, {.axis = 1});
  kb.reduce(ReduceKind::max, x, m, {.axis = 0});
  kb.store(s, S, {r0, kb.blockId(1)});
  kb.store(m, M, {b, c0});
  kb.sub(x, x, m);
  kb.mul(x, x, s);
  kb.store(x, Z, {r0, c0});
  Kernel k = kb.finish();
  if (!k.ok())
    return Error{k.error()};
  return k;
}

struct ReductionCase {
  const char *name;
  int64_t R, C;
  int waves;
  int64_t rows, cols;  ///< X's extent (ragged against the tile)
};
// 5 x 24: footprints larger than the tile on both axes (replicas), row sums
// across waves through LDS. 64 x 8: column maxima across waves through LDS.
// 16 x 256: the RMSNorm shape.
const ReductionCase kReductionCases[] = {
    {"t5x24_w4", 5, 24, 4, 13, 40}, {"t64x8_w4", 64, 8, 4, 100, 20}, {"t16x256_w4", 16, 256, 4, 40, 300}};

class BlockedReductions : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BlockedReductions, MatchTheReference) {
  const char *arch = kTargets[std::get<0>(GetParam())];
  const ReductionCase c = kReductionCases[std::get<1>(GetParam())];
  KernelInfo info;
  info.name = "blocked_reductions";
  info.build = [c](const KernelParams &) { return buildReductions(c.R, c.C, c.waves); };
  info.problem = [c](const KernelParams &) -> Result<Problem> {
    const int64_t rb = (c.rows + c.R - 1) / c.R, cb = (c.cols + c.C - 1) / c.C;
    Problem p;
    p.tensors.push_back({"X", DType::f32, {c.rows, c.cols}});
    p.tensors.push_back({"S", DType::f32, {c.rows, cb}, true});
    p.tensors.push_back({"M", DType::f32, {rb, c.cols}, true});
    p.tensors.push_back({"Z", DType::f32, {c.rows, c.cols}, true});
    // Row sums of C terms of magnitude < 1: (C - 1) u sum|x| in any order.
    // Maxima are exact (over the tile's rows inside X; rows past X read 0).
    // Z = (x - m) s: the difference rounds (u), so does the product (u), and
    // s's error enters multiplied by |x - m|.
    p.toleranceRule = "S: (C-1) u sum|x|; M: exact; Z: 2 u |ref| + |x - m| (C-1) u sum|x|";
    p.reference = [c, rb, cb](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                              std::vector<std::vector<double>> &tolerance) {
      const std::vector<double> &x = v[0];
      std::vector<double> s(c.rows * cb), sTol(c.rows * cb), m(rb * c.cols), mTol(rb * c.cols, 0.0),
          z(c.rows * c.cols), zTol(c.rows * c.cols);
      for (int64_t i = 0; i < rb; ++i)
        for (int64_t j = 0; j < c.cols; ++j) {
          double mx = -INFINITY;
          for (int64_t r = i * c.R; r < (i + 1) * c.R; ++r)
            mx = std::max(mx, r < c.rows ? x[r * c.cols + j] : 0.0);
          m[i * c.cols + j] = mx;
        }
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t jb = 0; jb < cb; ++jb) {
          double sum = 0, abs = 0;
          for (int64_t j = jb * c.C; j < std::min(c.cols, (jb + 1) * c.C); ++j) {
            sum += x[r * c.cols + j];
            abs += std::fabs(x[r * c.cols + j]);
          }
          const double sErr = double(c.C - 1) * kU * abs;
          s[r * cb + jb] = sum;
          sTol[r * cb + jb] = sErr;
          for (int64_t j = jb * c.C; j < std::min(c.cols, (jb + 1) * c.C); ++j) {
            const double d = x[r * c.cols + j] - m[(r / c.R) * c.cols + j];
            z[r * c.cols + j] = d * sum;
            zTol[r * c.cols + j] = 2 * kU * std::fabs(d * sum) + std::fabs(d) * sErr * (1 + 4 * kU);
          }
        }
      expected = {std::move(s), std::move(m), std::move(z)};
      tolerance = {std::move(sTol), std::move(mTol), std::move(zTol)};
    };
    return p;
  };
  Result<RunResult> r = runAndVerify(info, {}, runcheck::emulatorOn(arch, /*seed=*/5));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  for (const std::string &msg : r->firstMismatches)
    ADD_FAILURE() << msg;
}

INSTANTIATE_TEST_SUITE_P(Targets, BlockedReductions,
                         ::testing::Combine(::testing::Range(0, int(std::size(kTargets))),
                                            ::testing::Range(0, int(std::size(kReductionCases)))),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>> &info) {
                           return std::string(kTargets[std::get<0>(info.param)]) + "_" +
                                  kReductionCases[std::get<1>(info.param)].name;
                         });

/// Y = Y + X * W in place (mul_add, one rounding) on a blocked tile, W a
/// [1, cols] row broadcast over the rows: the update reads the destination.
TEST(BlockedMulAdd, ReadsTheDestinationAndRoundsOnce) {
  constexpr int64_t R = 8, C = 64, rows = 13, cols = 100;
  KernelInfo info;
  info.name = "blocked_mul_add";
  info.build = [](const KernelParams &) -> Result<Kernel> {
    KernelBuilder kb("blocked_mul_add", {.numWaves = 2});
    Tensor X = kb.tensor("X", DType::f32, 2), W = kb.tensor("W", DType::f32, 2), Y = kb.tensor("Y", DType::f32, 2);
    kb.grid({GridExtent::ceilDiv(X, 0, R), GridExtent::ceilDiv(X, 1, C)});
    Index r0 = kb.blockId(0) * R, c0 = kb.blockId(1) * C;
    Tile x = kb.regTile("x", {R, C}, DType::f32), y = kb.regTile("y", {R, C}, DType::f32),
         w = kb.regTile("w", {1, C}, DType::f32);
    kb.load(X, {r0, c0}, x);
    kb.load(Y, {r0, c0}, y);
    kb.load(W, {0, c0}, w);
    kb.mulAdd(y, x, w);
    kb.store(y, Y, {r0, c0});
    Kernel k = kb.finish();
    if (!k.ok())
      return Error{k.error()};
    return k;
  };
  info.problem = [](const KernelParams &) -> Result<Problem> {
    Problem p;
    // Y is read and written: its initial contents are random like the inputs'.
    std::vector<double> y0(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i)
      y0[i] = double(int64_t(i * 7919 % 2001) - 1000) / 1024.0;  // exact in f32
    p.tensors.push_back({"X", DType::f32, {rows, cols}});
    p.tensors.push_back({"W", DType::f32, {1, cols}});
    p.tensors.push_back({"Y", DType::f32, {rows, cols}, true, y0});
    // One rounding of the exact y + x w (a fused multiply-add): u |ref|.
    p.toleranceRule = "u |y + x w| (one rounding)";
    p.reference = [](const std::vector<std::vector<double>> &v, std::vector<std::vector<double>> &expected,
                     std::vector<std::vector<double>> &tolerance) {
      const std::vector<double> &x = v[0], &w = v[1], &y = v[2];
      std::vector<double> out(rows * cols), tol(rows * cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          out[r * cols + c] = y[r * cols + c] + x[r * cols + c] * w[c];
          tol[r * cols + c] = kU * std::fabs(out[r * cols + c]);
        }
      expected = {std::move(out)};
      tolerance = {std::move(tol)};
    };
    return p;
  };
  for (const char *arch : kTargets) {
    SCOPED_TRACE(arch);
    Result<RunResult> r = runAndVerify(info, {}, runcheck::emulatorOn(arch, /*seed=*/3));
    ASSERT_TRUE(r.ok()) << r.error();
    runcheck::expectVerifiedAndClean(*r);
  }
}

} // namespace
