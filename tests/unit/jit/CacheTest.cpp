// The persistent code-object cache: hits, damaged entries, unusable folders,
// and the key recipe.

#include "JIT/Compilers.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace tilec;
using namespace tilec::jit;

namespace {

constexpr const char *kKernel = R"(
extern "C" __attribute__((global)) void scale(float *p, float s) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  p[i] *= s;
}
)";

class CacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tilec-cache-test", dir_));
    options_.dir = std::string(dir_);
    options_.onWarning = [this](const std::string &m) { warnings_.push_back(m); };
    request_.source = kKernel;
    request_.kernelName = "scale";
    request_.target = lookupTarget("gfx942");
    request_.preference = JitPreference::Clang;
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  /// The one entry in the cache folder.
  std::string onlyEntry() {
    std::vector<std::string> entries;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
      entries.push_back(it->path());
    EXPECT_EQ(entries.size(), 1u);
    return entries.empty() ? std::string() : entries.front();
  }

  static std::string readFile(const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  }
  static void writeFile(const std::string &path, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }

  CodeObject compileOk() {
    llvm::Expected<CodeObject> code = compile(request_, options_);
    EXPECT_TRUE(!!code) << llvm::toString(code.takeError());
    return code ? std::move(*code) : CodeObject();
  }

  /// Damages the entry with `damage`, then checks: reported once, removed,
  /// recompiled to the same bytes, and cached again.
  void expectRecovery(const std::function<std::string(std::string)> &damage,
                      const char *reason) {
    CodeObject first = compileOk();
    std::string entry = onlyEntry();
    writeFile(entry, damage(readFile(entry)));

    CodeObject second = compileOk();
    EXPECT_FALSE(second.fromCache);
    EXPECT_EQ(second.elf, first.elf);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("tilec: warning: removing corrupt cache entry " + entry),
              std::string::npos)
        << warnings_[0];
    EXPECT_NE(warnings_[0].find(reason), std::string::npos) << warnings_[0];

    CodeObject third = compileOk();
    EXPECT_TRUE(third.fromCache);
    EXPECT_EQ(third.elf, first.elf);
    EXPECT_EQ(warnings_.size(), 1u);
  }

  llvm::SmallString<256> dir_;
  CacheOptions options_;
  CompileRequest request_;
  std::vector<std::string> warnings_;
};

TEST_F(CacheTest, SecondCompileIsAHit) {
  CodeObject first = compileOk();
  EXPECT_FALSE(first.fromCache);
  CodeObject second = compileOk();
  EXPECT_TRUE(second.fromCache);
  EXPECT_EQ(second.elf, first.elf);
  EXPECT_EQ(second.compiler, first.compiler);
  EXPECT_EQ(second.compilerIdentity, first.compilerIdentity);
  EXPECT_TRUE(warnings_.empty());
  EXPECT_TRUE(llvm::StringRef(onlyEntry()).ends_with(".co"));
}

TEST_F(CacheTest, DisabledCacheNeverHits) {
  options_.enabled = false;
  compileOk();
  EXPECT_FALSE(compileOk().fromCache);
  std::error_code ec;
  EXPECT_EQ(llvm::sys::fs::directory_iterator(dir_, ec), llvm::sys::fs::directory_iterator());
}

TEST_F(CacheTest, TruncatedEntryIsRemovedAndRecompiled) {
  expectRecovery([](std::string bytes) { return bytes.substr(0, bytes.size() / 2); }, "size");
}

TEST_F(CacheTest, TruncatedHeaderIsRemovedAndRecompiled) {
  expectRecovery([](std::string bytes) { return bytes.substr(0, 12); }, "truncated header");
}

TEST_F(CacheTest, FlippedByteIsRemovedAndRecompiled) {
  expectRecovery(
      [](std::string bytes) {
        bytes[bytes.size() - 100] ^= 0x40;
        return bytes;
      },
      "checksum mismatch");
}

TEST_F(CacheTest, UnwritableFolderStillCompiles) {
  // A folder below a regular file cannot be created, even by root.
  llvm::SmallString<256> blocker(dir_);
  llvm::sys::path::append(blocker, "not-a-folder");
  writeFile(std::string(blocker), "x");
  llvm::sys::path::append(blocker, "cache");
  options_.dir = std::string(blocker);

  CodeObject code = compileOk();
  EXPECT_FALSE(code.fromCache);
  EXPECT_FALSE(code.elf.empty());
  ASSERT_FALSE(warnings_.empty());
  EXPECT_NE(warnings_[0].find("tilec: warning:"), std::string::npos);
  EXPECT_FALSE(compileOk().fromCache);
}

TEST_F(CacheTest, FolderFromEnvironment) {
  CacheOptions options;
  options.onWarning = options_.onWarning;
  ASSERT_EQ(setenv("TILEC_CACHE_DIR", dir_.c_str(), 1), 0);
  EXPECT_EQ(detail::Cache(options).dir(), std::string(dir_));
  ASSERT_EQ(unsetenv("TILEC_CACHE_DIR"), 0);
  const char *xdg = getenv("XDG_CACHE_HOME");
  std::string savedXdg = xdg ? xdg : "";
  ASSERT_EQ(setenv("XDG_CACHE_HOME", dir_.c_str(), 1), 0);
  EXPECT_EQ(detail::Cache(options).dir(), std::string(dir_) + "/tilec");
  if (xdg)
    setenv("XDG_CACHE_HOME", savedXdg.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
}

// Property: every input of a compile changes the key.
TEST(CacheKey, EveryFieldMatters) {
  CompileRequest base;
  base.source = kKernel;
  base.kernelName = "scale";
  base.target = lookupTarget("gfx942");
  base.headers = {{"a.h", "int a;"}};
  base.options = {"-O3"};
  const std::string identity = "clang 19.1.7 (in-process)";
  const std::string key = detail::Cache::key(base, identity);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, detail::Cache::key(base, identity));

  std::vector<CompileRequest> variants(8, base);
  variants[0].source += " ";
  variants[1].kernelName = "scale2";
  variants[2].target = lookupTarget("gfx90a");
  variants[3].headers = {{"a.h", "int b;"}};
  variants[4].headers = {{"b.h", "int a;"}};
  variants[5].headers = {{"a.h", "int a;"}, {"", ""}};
  variants[6].options = {"-O2"};
  variants[7].options = {"-O", "3"};
  for (const CompileRequest &v : variants)
    EXPECT_NE(detail::Cache::key(v, identity), key);
  EXPECT_NE(detail::Cache::key(base, "hipRTC (ROCm 5.2.21153)"), key);
}

} // namespace
