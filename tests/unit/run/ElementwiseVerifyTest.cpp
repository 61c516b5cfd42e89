// The shipped elementwise kernels (kernels/elementwise), as `tilec --run` runs
// them: compiled for every target and verified in the CPU emulator against
// their double-precision references, with ragged sizes (1 and 333 tokens, rows
// not a multiple of the chunk, and odd ones that allow no vector access).
// rms_norm with and without the fused residual add and fp8 output; silu_and_mul
// with and without fp8 output; softmax;
// rope in both rotation styles.
#include "Registry.h"
#include "Run.h"
#include "RunChecks.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

using namespace tilec;
using namespace tilec::kernels;

namespace {

const runcheck::Case kCases[] = {
    {"t1_h1000_bf16", {{"tokens", "1"}, {"hidden", "1000"}, {"dtype", "bf16"}}},
    {"t333_h264_bf16_residual", {{"tokens", "333"}, {"hidden", "264"}, {"dtype", "bf16"}, {"residual", "1"}}},
    {"t9_h77_f16", {{"tokens", "9"}, {"hidden", "77"}, {"dtype", "f16"}, {"rows", "2"}, {"chunk", "64"}}},
    {"t5_h100_f32_residual", {{"tokens", "5"}, {"hidden", "100"}, {"dtype", "f32"}, {"residual", "1"}}},
    // fp8 out: values up to ~350 before saturation at 240 (scale 1/200), and
    // small ones on the subnormal grid.
    {"t33_h1000_bf16_fp8", {{"tokens", "33"}, {"hidden", "1000"}, {"dtype", "bf16"}, {"fp8_out", "1"}}},
    {"t5_h264_f32_residual_fp8",
     {{"tokens", "5"}, {"hidden", "264"}, {"dtype", "f32"}, {"residual", "1"}, {"fp8_out", "1"}, {"scale", "0.01"}}},
    // Per-token dynamic scales (token_scale checked too): rows of several
    // chunks (three passes), with the residual, and ragged token counts.
    {"t1_h1000_bf16_token_scale",
     {{"tokens", "1"}, {"hidden", "1000"}, {"dtype", "bf16"}, {"fp8_out", "1"}, {"fp8_scale", "token"}, {"chunk", "256"}}},
    {"t7_h264_f32_residual_token_scale",
     {{"tokens", "7"}, {"hidden", "264"}, {"dtype", "f32"}, {"residual", "1"}, {"fp8_out", "1"},
      {"fp8_scale", "token"}, {"chunk", "64"}, {"rows", "2"}}},
    {"t333_h200_f16_token_scale",
     {{"tokens", "333"}, {"hidden", "200"}, {"dtype", "f16"}, {"fp8_out", "1"}, {"fp8_scale", "token"}}},
    // Per-group scales (group_scale checked too): 1 x 128 groups, rows of
    // several chunks, with the residual.
    {"t1_h1024_bf16_group_scale",
     {{"tokens", "1"}, {"hidden", "1024"}, {"dtype", "bf16"}, {"fp8_out", "1"}, {"fp8_scale", "group"}, {"chunk", "256"}}},
    {"t7_h384_f32_residual_group_scale",
     {{"tokens", "7"}, {"hidden", "384"}, {"dtype", "f32"}, {"residual", "1"}, {"fp8_out", "1"},
      {"fp8_scale", "group"}, {"chunk", "128"}, {"rows", "2"}}},
    {"t333_h256_f16_group_scale",
     {{"tokens", "333"}, {"hidden", "256"}, {"dtype", "f16"}, {"fp8_out", "1"}, {"fp8_scale", "group"}}},
    // The whole row in one chunk (read once, kept in registers), rows over
    // waves and along them.
    {"t3_h4000_bf16_residual_one_chunk",
     {{"tokens", "3"}, {"hidden", "4000"}, {"dtype", "bf16"}, {"residual", "1"}, {"rows", "2"}, {"chunk", "4096"},
      {"waves", "8"}}},
};

class RmsNormVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(RmsNormVerify, MatchesTheReferenceInTheEmulator) {
  const std::string arch = std::get<0>(GetParam());
  const runcheck::Case &c = kCases[std::get<1>(GetParam())];
  const KernelInfo *k = findKernel("rms_norm");
  ASSERT_NE(k, nullptr);
  Result<RunResult> r = runAndVerify(*k, withTargetDefaults(*k, c.params, arch), runcheck::emulatorOn(arch, 11));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  for (const std::string &m : r->firstMismatches)
    ADD_FAILURE() << m;
}

INSTANTIATE_TEST_SUITE_P(Cases, RmsNormVerify, runcheck::overTargets(kCases), runcheck::caseNames(kCases));

const runcheck::Case kSiluCases[] = {
    {"t1_i1000_bf16", {{"tokens", "1"}, {"intermediate", "1000"}, {"dtype", "bf16"}}},
    {"t333_i200_bf16", {{"tokens", "333"}, {"intermediate", "200"}, {"dtype", "bf16"}, {"chunk", "128"}}},
    {"t6_i77_f32", {{"tokens", "6"}, {"intermediate", "77"}, {"dtype", "f32"}, {"rows", "2"}, {"chunk", "64"}}},
    // fp8 out (e4m3fnuz on AMD, OCP e4m3 on sm_90a): |silu(g) up| < 0.74, so
    // scale 1/200 gives values up to ~146 and small ones on the subnormal
    // grid; scale 1/1000 saturates both formats (+-240, +-448).
    {"t7_i333_bf16_fp8", {{"tokens", "7"}, {"intermediate", "333"}, {"dtype", "bf16"}, {"fp8_out", "1"}}},
    {"t333_i200_f16_fp8_saturating",
     {{"tokens", "333"}, {"intermediate", "200"}, {"dtype", "f16"}, {"fp8_out", "1"}, {"scale", "0.001"},
      {"chunk", "128"}}},
    {"t1_i77_f32_fp8", {{"tokens", "1"}, {"intermediate", "77"}, {"dtype", "f32"}, {"fp8_out", "1"}, {"chunk", "64"}}},
};

class SiluAndMulVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(SiluAndMulVerify, MatchesTheReferenceInTheEmulator) {
  const std::string arch = std::get<0>(GetParam());
  const runcheck::Case &c = kSiluCases[std::get<1>(GetParam())];
  const KernelInfo *k = findKernel("silu_and_mul");
  ASSERT_NE(k, nullptr);
  Result<RunResult> r = runAndVerify(*k, withTargetDefaults(*k, c.params, arch), runcheck::emulatorOn(arch, 13));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  for (const std::string &m : r->firstMismatches)
    ADD_FAILURE() << m;
}

INSTANTIATE_TEST_SUITE_P(Cases, SiluAndMulVerify, runcheck::overTargets(kSiluCases), runcheck::caseNames(kSiluCases));

// Both rotation styles; a ragged last workgroup (33 and 1 tokens), head
// sizes whose half is no power of two (80) and allows no vector access (26).
const runcheck::Case kRopeCases[] = {
    {"t33_neox_bf16", {{"tokens", "33"}, {"style", "neox"}, {"dtype", "bf16"}}},
    {"t1_gptj_bf16", {{"tokens", "1"}, {"style", "gptj"}, {"dtype", "bf16"}}},
    {"t7_neox_d80_f16", {{"tokens", "7"}, {"style", "neox"}, {"dtype", "f16"}, {"head_dim", "80"}, {"heads", "12"},
                         {"kv_heads", "3"}, {"max_position", "100"}}},
    {"t5_gptj_d26_f32", {{"tokens", "5"}, {"style", "gptj"}, {"dtype", "f32"}, {"head_dim", "26"}, {"heads", "3"},
                         {"kv_heads", "1"}, {"tokens_per_group", "2"}}},
    {"t3_neox_d26_bf16", {{"tokens", "3"}, {"style", "neox"}, {"dtype", "bf16"}, {"head_dim", "26"}, {"heads", "5"},
                          {"kv_heads", "5"}}},
};

class RopeVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(RopeVerify, MatchesTheReferenceInTheEmulator) {
  const std::string arch = std::get<0>(GetParam());
  const runcheck::Case &c = kRopeCases[std::get<1>(GetParam())];
  const KernelInfo *k = findKernel("rope");
  ASSERT_NE(k, nullptr);
  Result<RunResult> r = runAndVerify(*k, withTargetDefaults(*k, c.params, arch), runcheck::emulatorOn(arch, 19));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  for (const std::string &m : r->firstMismatches)
    ADD_FAILURE() << m;
}

INSTANTIATE_TEST_SUITE_P(Cases, RopeVerify, runcheck::overTargets(kRopeCases), runcheck::caseNames(kRopeCases));

} // namespace

namespace {

// Rows longer than a chunk: the online rescaling runs (2 to 3 chunks).
const runcheck::Case kSoftmaxCases[] = {
    {"r1_c1000_bf16", {{"rows", "1"}, {"cols", "1000"}, {"dtype", "bf16"}}},
    {"r333_c264_bf16", {{"rows", "333"}, {"cols", "264"}, {"dtype", "bf16"}, {"chunk", "128"}}},
    {"r5_c77_f32", {{"rows", "5"}, {"cols", "77"}, {"dtype", "f32"}, {"block_rows", "2"}, {"chunk", "32"}}},
    // The largest chunk, over 16 waves: a row of 9000 in one chunk (read once).
    {"r3_c9000_bf16_one_chunk",
     {{"rows", "3"}, {"cols", "9000"}, {"dtype", "bf16"}, {"block_rows", "1"}, {"chunk", "16384"}, {"waves", "16"}}},
};

class SoftmaxVerify : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(SoftmaxVerify, MatchesTheReferenceInTheEmulator) {
  const std::string arch = std::get<0>(GetParam());
  const runcheck::Case &c = kSoftmaxCases[std::get<1>(GetParam())];
  const KernelInfo *k = findKernel("softmax");
  ASSERT_NE(k, nullptr);
  Result<RunResult> r = runAndVerify(*k, withTargetDefaults(*k, c.params, arch), runcheck::emulatorOn(arch, 17));
  ASSERT_TRUE(r.ok()) << r.error();
  runcheck::expectVerifiedAndClean(*r);
  for (const std::string &m : r->firstMismatches)
    ADD_FAILURE() << m;
}

INSTANTIATE_TEST_SUITE_P(Cases, SoftmaxVerify, runcheck::overTargets(kSoftmaxCases),
                         runcheck::caseNames(kSoftmaxCases));

} // namespace
