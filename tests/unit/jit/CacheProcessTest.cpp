// The code-object cache with real processes (issue 8, "JIT cache"): several
// processes compiling the same kernel into one folder at once, writers killed
// with SIGKILL in the middle of an entry (and the temporary files they leave),
// and a damaged entry met by a fresh process.
//
// The processes are this test binary itself, started with posix_spawn and
// `--gtest_also_run_disabled_tests --gtest_filter=CacheProcessChild.DISABLED_<role>`:
// the DISABLED_ tests below are the children's bodies (ctest never runs them),
// configured through TILEC_CACHE_CHILD_* environment variables.

#include "JIT/CacheFiles.h"
#include "JIT/Compilers.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <random>
#include <spawn.h>
#include <string>
#include <sys/time.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char **environ;

using namespace tilec;
using namespace tilec::jit;

namespace {

constexpr const char *kKernel = R"(
extern "C" __attribute__((global)) void scale_proc(float *p, float s) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  p[i] *= s;
}
)";

/// A large entry payload: writing it takes long enough for a kill to land in
/// the middle of the write.
constexpr size_t kLargePayloadBytes = 16u << 20;
constexpr llvm::StringLiteral kLargeKey = "0123456789abcdef-large";

CompileRequest scaleRequest() {
  CompileRequest request;
  request.source = kKernel;
  request.kernelName = "scale_proc";
  request.target = lookupTarget("gfx942");
  request.preference = JitPreference::Clang;
  return request;
}

CodeObject largeCode() {
  CodeObject code;
  code.elf.resize(kLargePayloadBytes);
  std::mt19937 rng(42);
  for (char &c : code.elf)
    c = static_cast<char>(rng());
  code.compilerIdentity = "test writer";
  return code;
}

std::string env(const char *name) {
  const char *value = getenv(name);
  return value ? value : "";
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

void writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << path;
  os << bytes;
}

/// Files in `dir` whose names end with `suffix`.
std::vector<std::string> filesEndingWith(llvm::StringRef dir, llvm::StringRef suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(suffix))
      out.push_back(it->path());
  return out;
}

/// A child: this binary running one DISABLED_ test with `vars` in its
/// environment, stdout and stderr into `logPath`.
pid_t spawnChild(const std::string &role, const std::vector<std::string> &vars,
                 const std::string &logPath) {
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  std::vector<std::string> args = {self, "--gtest_also_run_disabled_tests",
                                   "--gtest_filter=CacheProcessChild.DISABLED_" + role};
  std::vector<std::string> envs(vars);
  for (char **e = environ; *e; ++e)
    envs.push_back(*e);
  std::vector<char *> argv, envp;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string &e : envs)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "posix_spawn " << self;
  return rc == 0 ? pid : -1;
}

/// Waits for `pid`; the raw wait status.
int waitFor(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

bool exitedOk(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

//===----------------------------------------------------------------------===//
// Children
//===----------------------------------------------------------------------===//

// Compiles the scale kernel with the cache in $TILEC_CACHE_CHILD_DIR and
// writes the code object to $TILEC_CACHE_CHILD_OUT, plus "hit" or "miss" to
// $TILEC_CACHE_CHILD_OUT.status. Cache warnings go to stderr, as in tilec.
TEST(CacheProcessChild, DISABLED_Compile) {
  CacheOptions options;
  options.dir = env("TILEC_CACHE_CHILD_DIR");
  ASSERT_FALSE(options.dir.empty());
  llvm::Expected<CodeObject> code = compile(scaleRequest(), options);
  ASSERT_TRUE(!!code) << llvm::toString(code.takeError());
  std::string out = env("TILEC_CACHE_CHILD_OUT");
  writeFile(out, llvm::StringRef(code->elf.data(), code->elf.size()));
  writeFile(out + ".status", code->fromCache ? "hit" : "miss");
}

// Stores a 16 MiB entry under one key again and again until killed.
TEST(CacheProcessChild, DISABLED_StoreLarge) {
  CacheOptions options;
  options.dir = env("TILEC_CACHE_CHILD_DIR");
  ASSERT_FALSE(options.dir.empty());
  detail::Cache cache(options);
  CodeObject code = largeCode();
  writeFile(options.dir + "/writer-started", "");
  for (int i = 0; i < 1000; ++i)
    cache.store(kLargeKey, code);
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

class CacheProcessTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tilec-cache-proc", root_));
    cacheDir_ = std::string(root_) + "/cache";
    ASSERT_FALSE(llvm::sys::fs::create_directories(cacheDir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root_); }

  std::string path(const std::string &name) const { return std::string(root_) + "/" + name; }

  /// Runs the Compile child to completion; its wait status.
  int compileInChild(const std::string &name) {
    pid_t pid = spawnChild("Compile",
                           {"TILEC_CACHE_CHILD_DIR=" + cacheDir_, "TILEC_CACHE_CHILD_OUT=" + path(name)},
                           path(name + ".log"));
    return pid > 0 ? waitFor(pid) : -1;
  }

  /// The writers' temporary files ("<entry>.tmp-XXXXXXXX") in the cache folder.
  std::vector<std::string> tempFiles() const {
    std::vector<std::string> out;
    for (const std::string &f : filesEndingWith(cacheDir_, ""))
      if (llvm::StringRef(f).contains(".co.tmp-"))
        out.push_back(f);
    return out;
  }

  llvm::SmallString<256> root_;
  std::string cacheDir_;
};

// Several processes compile the same kernel into one empty cache at once: all
// succeed, they agree byte for byte, and one entry results, equal to the code
// object they returned.
TEST_F(CacheProcessTest, ConcurrentCompilesShareOneEntry) {
  constexpr int kProcesses = 6;
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcesses; ++i)
    pids.push_back(spawnChild("Compile",
                              {"TILEC_CACHE_CHILD_DIR=" + cacheDir_,
                               "TILEC_CACHE_CHILD_OUT=" + path("out" + std::to_string(i))},
                              path("out" + std::to_string(i) + ".log")));
  for (int i = 0; i < kProcesses; ++i) {
    ASSERT_GT(pids[i], 0);
    EXPECT_TRUE(exitedOk(waitFor(pids[i]))) << readFile(path("out" + std::to_string(i) + ".log"));
  }

  std::string first = readFile(path("out0"));
  ASSERT_FALSE(first.empty());
  for (int i = 1; i < kProcesses; ++i)
    EXPECT_EQ(readFile(path("out" + std::to_string(i))), first) << "process " << i;

  std::vector<std::string> entries = filesEndingWith(cacheDir_, ".co");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(filesEndingWith(cacheDir_, "").size(), 1u) << "temporary files left behind";
  EXPECT_TRUE(llvm::StringRef(readFile(entries[0])).ends_with(first));

  // Nobody warned about a damaged entry, and a later process hits it.
  for (int i = 0; i < kProcesses; ++i)
    EXPECT_EQ(readFile(path("out" + std::to_string(i) + ".log")).find("corrupt"), std::string::npos);
  ASSERT_TRUE(exitedOk(compileInChild("later")));
  EXPECT_EQ(readFile(path("later.status")), "hit");
  EXPECT_EQ(readFile(path("later")), first);
}

// A writer killed (SIGKILL) at random points while it writes a 16 MiB entry
// never leaves a damaged entry in place: the entry is absent (the next compile
// compiles) or complete and valid (the next compile hits), and reading it
// never warns. Only unnamed temporary files may be left behind.
TEST_F(CacheProcessTest, WriterKilledMidWriteLeavesNoCorruptEntry) {
  const CodeObject expected = largeCode();
  std::mt19937 rng(7);
  int killedWhileWriting = 0;
  for (int round = 0; round < 12; ++round) {
    std::string started = cacheDir_ + "/writer-started";
    llvm::sys::fs::remove(started);
    pid_t pid = spawnChild("StoreLarge", {"TILEC_CACHE_CHILD_DIR=" + cacheDir_},
                           path("writer" + std::to_string(round) + ".log"));
    ASSERT_GT(pid, 0);
    // Wait until the writer is about to write, then kill it after 0-60 ms:
    // inside the first write, or a later one.
    for (int i = 0; i < 2000 && !llvm::sys::fs::exists(started); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 60000));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = waitFor(pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the writer ended before the kill: " << readFile(path("writer" + std::to_string(round) + ".log"));
    // Each round starts without temporary files: one now means the kill cut a write.
    if (!tempFiles().empty())
      ++killedWhileWriting;

    std::vector<std::string> warnings;
    CacheOptions options;
    options.dir = cacheDir_;
    options.onWarning = [&](const std::string &m) { warnings.push_back(m); };
    detail::Cache cache(options);
    std::optional<CodeObject> entry = cache.load(kLargeKey);
    EXPECT_TRUE(warnings.empty()) << "round " << round << ": " << warnings.front();
    if (entry) {
      EXPECT_EQ(entry->elf, expected.elf) << "round " << round;
      EXPECT_EQ(entry->compilerIdentity, expected.compilerIdentity);
    }
    // Start the next round without temporary files, and from an empty folder
    // half of the time, so that kills land in the first write too.
    for (const std::string &f : tempFiles())
      llvm::sys::fs::remove(f);
    if (round % 2 == 0)
      llvm::sys::fs::remove(cacheDir_ + "/" + kLargeKey.str() + ".co");
  }
  // A 16 MiB write is most of the writer's loop: most kills cut one.
  EXPECT_GT(killedWhileWriting, 0);
}

// A writer killed in the middle of a write leaves its temporary file. Later
// writers keep it while it is young (it could be a live writer's) and remove
// it once it is older than cachefiles::kStaleTempSeconds.
TEST_F(CacheProcessTest, KilledWritersTemporaryFileIsRemovedOnceStale) {
  std::mt19937 rng(11);
  std::vector<std::string> left;
  for (int attempt = 0; attempt < 20 && left.empty(); ++attempt) {
    std::string started = cacheDir_ + "/writer-started";
    llvm::sys::fs::remove(started);
    pid_t pid = spawnChild("StoreLarge", {"TILEC_CACHE_CHILD_DIR=" + cacheDir_},
                           path("writer" + std::to_string(attempt) + ".log"));
    ASSERT_GT(pid, 0);
    for (int i = 0; i < 2000 && !llvm::sys::fs::exists(started); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 60000));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    waitFor(pid);
    left = tempFiles();
  }
  ASSERT_FALSE(left.empty()) << "no kill landed inside a write";
  llvm::sys::fs::remove(cacheDir_ + "/writer-started");

  // A compile that stores an entry (a miss) keeps the young temporary file.
  ASSERT_TRUE(exitedOk(compileInChild("young")));
  EXPECT_EQ(readFile(path("young.status")), "miss");
  EXPECT_EQ(tempFiles(), left);

  // Once old, the next writer removes it.
  for (const std::string &f : left) {
    struct timeval times[2];
    gettimeofday(&times[0], nullptr);
    times[0].tv_sec -= cachefiles::kStaleTempSeconds + 60;
    times[1] = times[0];
    ASSERT_EQ(utimes(f.c_str(), times), 0) << f;
  }
  for (const std::string &entry : filesEndingWith(cacheDir_, ".co"))
    if (!llvm::StringRef(entry).contains(kLargeKey))
      llvm::sys::fs::remove(entry);
  ASSERT_TRUE(exitedOk(compileInChild("old")));
  EXPECT_EQ(readFile(path("old.status")), "miss");
  EXPECT_TRUE(tempFiles().empty());
  EXPECT_EQ(readFile(path("old.log")).find("warning"), std::string::npos) << readFile(path("old.log"));
}

// A truncated entry met by a fresh process: that process reports it once on
// stderr, removes it and recompiles the same bytes; the next process hits the
// rewritten entry without a warning.
TEST_F(CacheProcessTest, DamagedEntryIsReportedOnceAndHealed) {
  ASSERT_TRUE(exitedOk(compileInChild("first")));
  EXPECT_EQ(readFile(path("first.status")), "miss");
  std::vector<std::string> entries = filesEndingWith(cacheDir_, ".co");
  ASSERT_EQ(entries.size(), 1u);
  std::string bytes = readFile(entries[0]);
  writeFile(entries[0], llvm::StringRef(bytes).take_front(bytes.size() / 2));

  ASSERT_TRUE(exitedOk(compileInChild("second")));
  EXPECT_EQ(readFile(path("second.status")), "miss");
  EXPECT_EQ(readFile(path("second")), readFile(path("first")));
  std::string log = readFile(path("second.log"));
  const std::string warning = "tilec: warning: removing corrupt cache entry " + entries[0];
  size_t at = log.find(warning);
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_EQ(log.find("removing corrupt cache entry", at + warning.size()), std::string::npos) << "reported twice:\n" << log;
  EXPECT_EQ(readFile(entries[0]), bytes);

  ASSERT_TRUE(exitedOk(compileInChild("third")));
  EXPECT_EQ(readFile(path("third.status")), "hit");
  EXPECT_EQ(readFile(path("third.log")).find("warning"), std::string::npos);
}

} // namespace
