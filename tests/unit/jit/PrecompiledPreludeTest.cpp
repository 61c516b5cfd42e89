// The device prelude precompiled (jit::precompileHeader; tools/tilec-pch ships
// one per target in the build): the JIT loads it instead of parsing the
// prelude for each kernel. It must change no code object, be found for every
// target, be left alone for options it does not serve, and a damaged one must
// cost a warning, never the compile.

#include "Emit/Prelude.h"
#include "JIT/JIT.h"
#include "Registry.h"
#include "tilec/tilec.hpp"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace tilec;

namespace {

/// Restores $TILEC_PCH_DIR when it goes out of scope.
class PchDirScope {
public:
  explicit PchDirScope(const std::string &dir) {
    if (const char *old = std::getenv("TILEC_PCH_DIR"))
      old_ = old;
    setenv("TILEC_PCH_DIR", dir.c_str(), 1);
  }
  ~PchDirScope() {
    if (old_)
      setenv("TILEC_PCH_DIR", old_->c_str(), 1);
    else
      unsetenv("TILEC_PCH_DIR");
  }

private:
  std::optional<std::string> old_;
};

class PrecompiledPrelude : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tilec-pch-test", dir));
    dir_ = std::string(dir);
    Result<Kernel> k = kernels::buildKernel("gemm");
    ASSERT_TRUE(k.ok()) << k.error();
    CompileOptions opts;
    opts.useCache = false;
    opts.jit = JitChoice::Clang;
    Result<CompiledKernel> ck = compile(*k, opts);
    ASSERT_TRUE(ck.ok()) << ck.error();
    request_.source = ck->hip;
    request_.headers = {{kPreludeHeaderName, devicePreludeText()}};
    request_.kernelName = ck->name;
    request_.target = lookupTarget("gfx942");
    request_.options = {"-O2", "-fno-slp-vectorize"};  // the default GEMM's (see its HIP)
    request_.preference = jit::JitPreference::Clang;
    ASSERT_NE(ck->hip.find("-O2 -fno-slp-vectorize"), std::string::npos);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  /// Writes `bytes` as the precompiled prelude the JIT looks for in dir_.
  void writePch(const std::vector<char> &bytes) {
    llvm::SmallString<256> path(dir_);
    llvm::sys::path::append(path, jit::precompiledHeaderName(request_));
    std::ofstream(std::string(path), std::ios::binary).write(bytes.data(), bytes.size());
  }

  jit::CodeObject compileIn(const std::string &pchDir) {
    PchDirScope scope(pchDir);
    jit::CacheOptions noCache;
    noCache.enabled = false;
    llvm::Expected<jit::CodeObject> code = jit::compile(request_, noCache);
    EXPECT_TRUE(static_cast<bool>(code)) << (code ? "" : llvm::toString(code.takeError()));
    return code ? std::move(*code) : jit::CodeObject{};
  }

  std::string dir_;
  jit::CompileRequest request_;
};

TEST_F(PrecompiledPrelude, SameCodeObjectAsParsingThePrelude) {
  llvm::Expected<std::vector<char>> pch = jit::precompileHeader(request_);
  ASSERT_TRUE(static_cast<bool>(pch)) << llvm::toString(pch.takeError());
  writePch(*pch);
  jit::CodeObject parsed = compileIn(dir_ + "/none");
  jit::CodeObject precompiled = compileIn(dir_);
  EXPECT_EQ(parsed.precompiledHeader, "");
  EXPECT_NE(precompiled.precompiledHeader.find(jit::precompiledHeaderName(request_)),
            std::string::npos);
  ASSERT_FALSE(parsed.elf.empty());
  EXPECT_EQ(parsed.elf, precompiled.elf) << "the precompiled prelude changed the code object";
  EXPECT_EQ(precompiled.log, "");
}

TEST_F(PrecompiledPrelude, NotUsedForOptionsItDoesNotServe) {
  llvm::Expected<std::vector<char>> pch = jit::precompileHeader(request_);
  ASSERT_TRUE(static_cast<bool>(pch)) << llvm::toString(pch.takeError());
  writePch(*pch);
  request_.options.push_back("-DTILEC_SOMETHING=1");  // would change what the header means
  jit::CodeObject code = compileIn(dir_);
  EXPECT_FALSE(code.elf.empty());
  EXPECT_EQ(code.precompiledHeader, "");
}

TEST_F(PrecompiledPrelude, DamagedOneIsParsedAroundWithAWarning) {
  writePch(std::vector<char>(4096, 'x'));
  jit::CodeObject code = compileIn(dir_);
  ASSERT_FALSE(code.elf.empty());
  EXPECT_EQ(code.precompiledHeader, "");
  EXPECT_NE(code.log.find("is not usable; the header was parsed instead"), std::string::npos)
      << code.log;
  EXPECT_NE(code.log.find(jit::precompiledHeaderName(request_)), std::string::npos) << code.log;
  // Said once: the next compile parses the prelude without trying it again.
  request_.kernelName += "_again";
  jit::CodeObject again = compileIn(dir_);
  ASSERT_FALSE(again.elf.empty());
  EXPECT_EQ(again.precompiledHeader, "");
  EXPECT_EQ(again.log, "");
}

// The build (tools/tilec-pch) precompiled the prelude for every target under
// the names the JIT looks for.
TEST_F(PrecompiledPrelude, TheBuildShipsOneForEveryTarget) {
  if (std::getenv("TILEC_PCH_DIR"))
    GTEST_SKIP() << "$TILEC_PCH_DIR points elsewhere";
  for (const TargetInfo &target : knownTargets()) {
    request_.target = &target;
    request_.headers = {{kPreludeHeaderName, devicePreludeText(target.vendor)}};
    llvm::SmallString<256> path(jit::precompiledHeaderDir());
    llvm::sys::path::append(path, jit::precompiledHeaderName(request_));
    EXPECT_TRUE(llvm::sys::fs::exists(path)) << path.str().str();
  }
}

TEST(PrecompiledHeaderName, DependsOnTargetAndText) {
  jit::CompileRequest a;
  a.headers = {{kPreludeHeaderName, devicePreludeText()}};
  a.target = lookupTarget("gfx942");
  jit::CompileRequest b = a;
  b.target = lookupTarget("gfx1151");
  jit::CompileRequest c = a;
  c.headers.front().second += "\n";
  std::string name = jit::precompiledHeaderName(a);
  EXPECT_EQ(name.rfind("tilec_prelude-gfx942-", 0), 0u) << name;
  EXPECT_NE(name, jit::precompiledHeaderName(b));
  EXPECT_NE(name, jit::precompiledHeaderName(c));
  c.headers.clear();
  EXPECT_EQ(jit::precompiledHeaderName(c), "");
}

} // namespace
