// Shared helpers of the emulator tests: an Emulator per target and kernel loading.
#pragma once

#include "Emu/Emulator.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tilec::emu::test {

inline std::unique_ptr<Emulator> makeEmulator(const char *arch) {
  const TargetInfo *t = lookupTarget(arch);
  EXPECT_NE(t, nullptr) << arch;
  return std::make_unique<Emulator>(*t);
}

/// Loads `source` (which must include "tilec_prelude.h") or fails the test.
inline std::shared_ptr<KernelImage> loadOrFail(Emulator &emu, const std::string &source, const std::string &name) {
  auto image = emu.load(source, name);
  if (!image) {
    ADD_FAILURE() << llvm::toString(image.takeError());
    return nullptr;
  }
  return *image;
}

inline LaunchReport launchOrFail(Emulator &emu, const KernelImage &k, LaunchConfig cfg, const std::vector<Arg> &args) {
  auto r = emu.launch(k, cfg, args);
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return {};
  }
  return *r;
}

} // namespace tilec::emu::test
