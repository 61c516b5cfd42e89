// Shared by the emulator verification tests: run options for the emulator,
// and the checks every verified run must pass.
#pragma once

#include "Run.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>

namespace tilec::kernels::runcheck {

/// Compile for `arch` and run on the CPU emulator with inputs from `seed`.
inline RunOptions emulatorOn(const std::string &arch, uint64_t seed) {
  RunOptions o;
  o.compile.arch = arch;
  o.device = DeviceKind::Emulator;
  o.seed = seed;
  return o;
}

/// The checkers' findings, one a line.
inline std::string checkerMessages(const LaunchStats &s) {
  std::string text;
  for (const std::string &m : s.messages)
    text += m + "\n";
  return text;
}

/// Every output element within its tolerance (the first mismatch printed), and
/// the emulator's checkers ran and saw no out-of-bounds access, race,
/// uninitialized or misaligned LDS access, deadlock or invalid instruction.
inline void expectVerifiedAndClean(const RunResult &r) {
  EXPECT_EQ(r.mismatches, 0) << r.verifiedLine() << "\n" << (r.firstMismatches.empty() ? "" : r.firstMismatches[0]);
  EXPECT_GT(r.elements, 0);
  EXPECT_TRUE(r.stats.checked);
  EXPECT_EQ(r.stats.outOfBounds, 0) << r.stats.checksLine();
  EXPECT_EQ(r.stats.races, 0) << r.stats.checksLine();
  EXPECT_EQ(r.stats.uninitializedLdsReads, 0) << r.stats.checksLine() << "\n" << checkerMessages(r.stats);
  EXPECT_EQ(r.stats.misalignedLdsAccesses, 0) << r.stats.checksLine() << "\n" << checkerMessages(r.stats);
  EXPECT_FALSE(r.stats.deadlock);
  EXPECT_EQ(r.stats.invalidInstructions, 0) << r.stats.checksLine() << "\n" << checkerMessages(r.stats);
}

/// One named set of -p values of a verification table.
struct Case {
  const char *name;
  KernelParams params;
};

/// The three targets times a case table (TEST_P parameters (arch, index)),
/// and the test names "<arch>_<case>".
template <size_t N> auto overTargets(const Case (&)[N]) {
  return ::testing::Combine(::testing::Values("gfx942", "gfx1151", "gfx90a", "sm_90a"), ::testing::Range(0, int(N)));
}
template <size_t N> auto caseNames(const Case (&cases)[N]) {
  return [&cases](const ::testing::TestParamInfo<std::tuple<std::string, int>> &info) {
    return std::get<0>(info.param) + "_" + cases[std::get<1>(info.param)].name;
  };
}

} // namespace tilec::kernels::runcheck
