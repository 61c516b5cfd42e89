// LDS layouts chosen by tilec-allocate-lds, checked by the CPU emulator's
// bank-conflict counter (docs/hardware.md section 3 phase model): the shipped
// GEMM's main loop is conflict-free with the compiler's layout, the naive
// row-major layout is not, and in both cases the compiler's model
// (bank_conflicts on each LDS tile, per k step of one workgroup) predicts the
// emulator's count exactly.
#include "Registry.h"
#include "Run.h"

#include <gtest/gtest.h>

#include <regex>

using namespace tilec;
using namespace tilec::kernels;

namespace {

/// Sum of the modelled per-k-step conflicts over the kernel's LDS tiles.
int64_t modelledPerStep(const std::string &tileIR) {
  int64_t sum = 0;
  std::regex re("bank_conflicts = ([0-9]+) : i64");
  for (auto it = std::sregex_iterator(tileIR.begin(), tileIR.end(), re); it != std::sregex_iterator(); ++it)
    sum += std::stoll((*it)[1]);
  return sum;
}

struct Case {
  const char *arch;
  const char *layout;
};

class LdsLayout : public ::testing::TestWithParam<Case> {};

TEST_P(LdsLayout, EmulatorCountMatchesTheModel) {
  const int64_t M = 256, N = 256, K = 256;  // 2x2 workgroups of 128x128, 8 k steps of 32
  RunOptions o;
  o.compile.arch = GetParam().arch;
  o.device = DeviceKind::Emulator;
  Result<RunResult> r = runAndVerify(*findKernel("gemm"),
                                     {{"M", std::to_string(M)},
                                      {"N", std::to_string(N)},
                                      {"K", std::to_string(K)},
                                      {"lds_layout", GetParam().layout}},
                                     o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->passed()) << r->verifiedLine() << "\n" << r->stats.checksLine();
  const int64_t perStep = modelledPerStep(r->kernel.tileIR);
  EXPECT_EQ(r->stats.bankConflicts, perStep * (M / 128) * (N / 128) * (K / 32)) << r->kernel.tileIR;
  if (std::string(GetParam().layout) == "auto")
    EXPECT_EQ(r->stats.bankConflicts, 0);
  else
    EXPECT_GT(r->stats.bankConflicts, 0);
}

INSTANTIATE_TEST_SUITE_P(Gemm, LdsLayout,
                         ::testing::Values(Case{"gfx942", "auto"}, Case{"gfx942", "naive"}, Case{"gfx90a", "auto"},
                                           Case{"gfx90a", "naive"}, Case{"gfx1151", "auto"},
                                           Case{"gfx1151", "naive"}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return std::string(info.param.arch) + "_" + info.param.layout;
                         });

} // namespace
