// The shipped elementwise kernels (kernels/elementwise), as `tilec --run` runs
// them: compiled for every target and verified in the CPU emulator against
// their double-precision references, with ragged sizes (1 and 333 tokens, rows
// not a multiple of the chunk, and odd ones that allow no vector access).
// rms_norm with and without the fused residual add; silu_and_mul.
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

} // namespace

namespace {

// Rows longer than a chunk: the online rescaling runs (2 to 3 chunks).
const runcheck::Case kSoftmaxCases[] = {
    {"r1_c1000_bf16", {{"rows", "1"}, {"cols", "1000"}, {"dtype", "bf16"}}},
    {"r333_c264_bf16", {{"rows", "333"}, {"cols", "264"}, {"dtype", "bf16"}, {"chunk", "128"}}},
    {"r5_c77_f32", {{"rows", "5"}, {"cols", "77"}, {"dtype", "f32"}, {"block_rows", "2"}, {"chunk", "32"}}},
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
