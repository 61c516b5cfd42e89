// The compiled-kernel cache (see FrontCache.h).
#include "JIT/FrontCache.h"

#include "JIT/CacheFiles.h"
#include "JIT/SourceFingerprint.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilec::jit {
namespace {

constexpr std::string_view kEntryMagic = "TILECCK1";
constexpr size_t kEntryHeader = 8 + 4 + 8 + 8;

// Every CompileOptions field is part of the key or says where the cache is
// (frontCacheKey). A new field changes the struct's size: add it to the key,
// then update this layout (arch, jit, useCache, cacheDir).
static_assert(sizeof(CompileOptions) == 2 * sizeof(std::string) + alignof(std::string),
              "CompileOptions changed: add the new field to frontCacheKey");

std::string hex(llvm::ArrayRef<uint8_t> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

/// What decides which hipRTC library dlopen finds, without loading it.
std::string hipRTCEnvironment() {
  const char *ldPath = std::getenv("LD_LIBRARY_PATH");
  std::string out = std::string("LD_LIBRARY_PATH=") + (ldPath ? ldPath : "");
  struct stat st;
  if (stat("/etc/ld.so.cache", &st) == 0)
    out += " ld.so.cache=" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  return out;
}

//===----------------------------------------------------------------------===//
// Payload: fields in a fixed order; integers are i64 LE, strings and byte
// arrays a u64 LE length and the bytes, lists a u64 LE count and the items.
//===----------------------------------------------------------------------===//

class Writer {
public:
  void i64(int64_t v) {
    char b[8];
    llvm::support::endian::write64le(b, static_cast<uint64_t>(v));
    out.append(b, 8);
  }
  void str(std::string_view s) {
    i64(static_cast<int64_t>(s.size()));
    out.append(s.data(), s.size());
  }
  std::string out;
};

class Reader {
public:
  explicit Reader(std::string_view in) : in(in) {}
  bool i64(int64_t &v) {
    if (in.size() - pos < 8)
      return fail();
    v = static_cast<int64_t>(llvm::support::endian::read64le(in.data() + pos));
    pos += 8;
    return true;
  }
  template <typename Int> bool integer(Int &v) {
    int64_t x;
    if (!i64(x))
      return false;
    v = static_cast<Int>(x);
    return true;
  }
  bool str(std::string &s) {
    int64_t n;
    if (!i64(n) || n < 0 || static_cast<uint64_t>(n) > in.size() - pos)
      return fail();
    s.assign(in.data() + pos, static_cast<size_t>(n));
    pos += static_cast<size_t>(n);
    return true;
  }
  bool bytes(std::vector<char> &v) {
    std::string s;
    if (!str(s))
      return false;
    v.assign(s.begin(), s.end());
    return true;
  }
  /// A list count no larger than the bytes left (each item takes >= 8).
  bool count(size_t &n) {
    int64_t x;
    if (!i64(x) || x < 0 || static_cast<uint64_t>(x) > (in.size() - pos) / 8)
      return fail();
    n = static_cast<size_t>(x);
    return true;
  }
  bool done() const { return ok && pos == in.size(); }

private:
  bool fail() {
    ok = false;
    return false;
  }
  std::string_view in;
  size_t pos = 0;
  bool ok = true;
};

std::string readWholeFile(const std::string &path, bool &found) {
  found = false;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return {};
  found = true;
  std::string data;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    data.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    data.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return data;
}

} // namespace

std::string frontCacheKey(std::string_view tileIR, std::string_view bufferName,
                          const CompileOptions &opts) {
  llvm::SHA256 hash;
  // Every field is length-prefixed so that no two inputs share a byte stream.
  auto field = [&](std::string_view s) {
    uint8_t length[8];
    llvm::support::endian::write64le(length, s.size());
    hash.update(llvm::ArrayRef<uint8_t>(length));
    hash.update(llvm::StringRef(s.data(), s.size()));
  };
  field(kEntryMagic);
  field(std::to_string(kFrontCacheFormatVersion));
  field(TILEC_VERSION_STRING);
  field(TILEC_SOURCE_FINGERPRINT);
  field(LLVM_VERSION_STRING);
  field(opts.arch);
  field(std::to_string(static_cast<int>(opts.jit)));
  field(opts.jit == JitChoice::Clang ? std::string() : hipRTCEnvironment());
  field(bufferName);
  field(tileIR);
  // opts.useCache and opts.cacheDir choose whether and where to look, not
  // what is compiled.
  return hex(hash.final());
}

std::string encodeCompiledKernel(const CompiledKernel &k) {
  Writer w;
  w.str(k.name);
  w.str(k.arch);
  w.str(k.tileIR);
  w.str(k.hip);
  w.str(std::string_view(k.codeObject.data(), k.codeObject.size()));
  w.str(k.assembly);
  const Report &r = k.report;
  w.str(r.kernel);
  w.str(r.target);
  w.str(r.jit);
  w.str(r.compilerIdentity);
  for (int64_t v : {int64_t(r.vgpr), int64_t(r.agpr), int64_t(r.sgpr), r.ldsBytes, r.scratchBytes,
                    int64_t(r.vgprSpills), int64_t(r.sgprSpills), int64_t(r.waveSize),
                    int64_t(r.occupancy), int64_t(r.matrixInstructions), r.codeObjectBytes})
    w.i64(v);
  w.i64(k.numWaves);
  w.i64(k.waveSize);
  w.i64(k.dynamicLdsBytes);
  w.i64(static_cast<int64_t>(k.grid.size()));
  for (const GridDim &g : k.grid) {
    w.i64(g.arg);
    w.i64(g.axis);
    w.i64(g.tile);
  }
  w.i64(static_cast<int64_t>(k.params.size()));
  for (const KernelParamInfo &p : k.params) {
    w.i64(p.kind);
    w.str(p.elemType);
    w.i64(p.rank);
    w.str(p.name);
    w.i64(p.divisibility);
    for (int v : {p.tensorMap.boxRows, p.tensorMap.boxCols, p.tensorMap.swizzleBytes})
      w.i64(v);
  }
  w.i64(static_cast<int64_t>(k.paramTypes.size()));
  for (const std::string &t : k.paramTypes)
    w.str(t);
  w.i64(static_cast<int64_t>(k.remarks.size()));
  for (const std::string &m : k.remarks)
    w.str(m);
  w.i64(static_cast<int64_t>(r.ldsTiles.size()));
  for (const LdsTileReport &t : r.ldsTiles) {
    w.str(t.name);
    w.str(t.role);
    for (int64_t v : {t.bytes, int64_t(t.readBytes), int64_t(t.writeBytes), t.bankConflicts})
      w.i64(v);
  }
  return std::move(w.out);
}

std::optional<CompiledKernel> decodeCompiledKernel(std::string_view payload) {
  Reader in(payload);
  CompiledKernel k;
  Report &r = k.report;
  bool ok = in.str(k.name) && in.str(k.arch) && in.str(k.tileIR) && in.str(k.hip) &&
            in.bytes(k.codeObject) && in.str(k.assembly) && in.str(r.kernel) && in.str(r.target) && in.str(r.jit) &&
            in.str(r.compilerIdentity) && in.integer(r.vgpr) && in.integer(r.agpr) &&
            in.integer(r.sgpr) && in.integer(r.ldsBytes) && in.integer(r.scratchBytes) &&
            in.integer(r.vgprSpills) && in.integer(r.sgprSpills) && in.integer(r.waveSize) &&
            in.integer(r.occupancy) && in.integer(r.matrixInstructions) &&
            in.integer(r.codeObjectBytes) && in.integer(k.numWaves) && in.integer(k.waveSize) &&
            in.i64(k.dynamicLdsBytes);
  size_t n = 0;
  if (!ok || !in.count(n))
    return std::nullopt;
  k.grid.resize(n);
  for (GridDim &g : k.grid)
    if (!in.integer(g.arg) || !in.integer(g.axis) || !in.integer(g.tile))
      return std::nullopt;
  if (!in.count(n))
    return std::nullopt;
  k.params.resize(n);
  for (KernelParamInfo &p : k.params) {
    int64_t kind;
    if (!in.i64(kind) || kind < KernelParamInfo::Tensor || kind > KernelParamInfo::I32 ||
        !in.str(p.elemType) || !in.integer(p.rank) || !in.str(p.name) || !in.i64(p.divisibility) ||
        p.divisibility < 1 || !in.integer(p.tensorMap.boxRows) || !in.integer(p.tensorMap.boxCols) ||
        !in.integer(p.tensorMap.swizzleBytes))
      return std::nullopt;
    p.kind = static_cast<KernelParamInfo::Kind>(kind);
  }
  for (std::vector<std::string> *list : {&k.paramTypes, &k.remarks}) {
    if (!in.count(n))
      return std::nullopt;
    list->resize(n);
    for (std::string &s : *list)
      if (!in.str(s))
        return std::nullopt;
  }
  if (!in.count(n))
    return std::nullopt;
  r.ldsTiles.resize(n);
  for (LdsTileReport &t : r.ldsTiles)
    if (!in.str(t.name) || !in.str(t.role) || !in.integer(t.bytes) || !in.integer(t.readBytes) ||
        !in.integer(t.writeBytes) || !in.integer(t.bankConflicts))
      return std::nullopt;
  if (!in.done())
    return std::nullopt;
  return k;
}

FrontCache::FrontCache(const CompileOptions &opts,
                       std::function<void(const std::string &)> onWarning)
    : onWarning_(std::move(onWarning)) {
  if (opts.useCache)
    dir_ = opts.cacheDir.empty() ? cachefiles::defaultDir() : opts.cacheDir;
}

void FrontCache::warn(const std::string &message) const {
  if (onWarning_)
    onWarning_(message);
  else
    std::fprintf(stderr, "%s\n", message.c_str());
}

std::string FrontCache::entryPath(const std::string &key) const { return dir_ + "/" + key + ".ck"; }

std::optional<CompiledKernel> FrontCache::load(const std::string &key) {
  using namespace llvm::support;
  if (dir_.empty())
    return std::nullopt;
  const std::string path = entryPath(key);
  bool found = false;
  std::string data = readWholeFile(path, found);
  if (!found)
    return std::nullopt;  // a miss (or unreadable: compiling again is the remedy)

  auto corrupt = [&](const std::string &reason) -> std::optional<CompiledKernel> {
    warn("tilec: warning: removing corrupt cache entry " + path + ": " + reason);
    unlink(path.c_str());
    return std::nullopt;
  };
  if (data.size() < kEntryHeader || std::string_view(data).substr(0, 8) != kEntryMagic)
    return corrupt(data.size() < kEntryHeader ? "truncated header" : "bad magic");
  const char *p = data.data() + kEntryMagic.size();
  uint32_t version = endian::read32le(p);
  uint64_t payloadSize = endian::read64le(p + 4);
  uint64_t checksum = endian::read64le(p + 12);
  if (version != kFrontCacheFormatVersion)
    return corrupt("format version " + std::to_string(version) + ", expected " +
                   std::to_string(kFrontCacheFormatVersion));
  if (payloadSize != data.size() - kEntryHeader)
    return corrupt("size " + std::to_string(data.size()) + " bytes, expected " +
                   std::to_string(kEntryHeader + payloadSize));
  std::string_view payload = std::string_view(data).substr(kEntryHeader);
  if (llvm::xxh3_64bits(llvm::StringRef(payload.data(), payload.size())) != checksum)
    return corrupt("checksum mismatch");
  std::optional<CompiledKernel> kernel = decodeCompiledKernel(payload);
  if (!kernel)
    return corrupt("malformed payload");
  kernel->report.fromCache = true;
  kernel->timings.cacheHit = true;
  return kernel;
}

void FrontCache::store(const std::string &key, const CompiledKernel &kernel) {
  using namespace llvm::support;
  if (dir_.empty())
    return;
  const std::string path = entryPath(key);
  // An unusable folder was reported by the code-object cache, which opened the
  // same folder for this compile.
  if (!cachefiles::createDirectories(dir_).empty())
    return;
  cachefiles::removeStaleTemporaries(dir_);

  std::string payload = encodeCompiledKernel(kernel);
  std::string entry(kEntryHeader, '\0');
  char *p = entry.data();
  memcpy(p, kEntryMagic.data(), kEntryMagic.size());
  endian::write32le(p + 8, kFrontCacheFormatVersion);
  endian::write64le(p + 12, payload.size());
  endian::write64le(p + 20, llvm::xxh3_64bits(llvm::StringRef(payload)));
  entry += payload;
  if (std::string err = cachefiles::writeAtomically(path, entry); !err.empty())
    warn("tilec: warning: cannot write cache entry " + path + ": " + err);
}

} // namespace tilec::jit
