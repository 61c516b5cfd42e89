// jit::compile: picks the compiler, and keeps code objects in a persistent
// on-disk cache.
//
// Cache entry (one file per key, named by the hex key):
//   "TILECCO1"           8 bytes magic
//   format version       u32 LE
//   compiler kind        u32 LE (JitKind)
//   payload size         u64 LE
//   payload checksum     u64 LE (xxh3_64 of the payload)
//   identity length      u32 LE, then the compiler identity
//   payload              the ELF code object
// Entries are written to a unique temporary file in the same folder and
// renamed into place, so readers never see a partial entry from a writer; a
// damaged entry (truncated file, flipped byte) fails the size or checksum
// check, is reported once, removed and compiled again. Temporary files that
// killed writers left are removed by later writers once they are
// cachefiles::kStaleTempSeconds old.

#include "JIT/Compilers.h"

#include "JIT/CacheFiles.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

namespace tilec::jit {
namespace detail {
namespace {

constexpr llvm::StringLiteral kEntryMagic = "TILECCO1";
/// Bump when the entry layout or the key recipe changes.
constexpr uint32_t kCacheFormatVersion = 1;
constexpr size_t kEntryFixedHeader = 8 + 4 + 4 + 8 + 8 + 4;

} // namespace

Cache::Cache(const CacheOptions &options) : options_(options) {
  if (!options.enabled)
    return;
  dir_ = options.dir.empty() ? cachefiles::defaultDir() : options.dir;
  if (dir_.empty())
    return;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir_)) {
    warn("tilec: warning: cache folder " + dir_ + " is not usable: " + ec.message());
    dir_.clear();
  }
}

void Cache::warn(const std::string &message) const {
  if (options_.onWarning)
    options_.onWarning(message);
  else
    llvm::errs() << message << "\n";
}

std::string Cache::entryPath(llvm::StringRef key) const {
  llvm::SmallString<256> path(dir_);
  llvm::sys::path::append(path, key + ".co");
  return std::string(path);
}

std::string Cache::key(const CompileRequest &request, llvm::StringRef compilerIdentity) {
  llvm::SHA256 hash;
  // Every field is length-prefixed so that no two requests share a byte stream.
  auto field = [&](llvm::StringRef s) {
    uint8_t length[8];
    llvm::support::endian::write64le(length, s.size());
    hash.update(llvm::ArrayRef<uint8_t>(length));
    hash.update(s);
  };
  field(kEntryMagic);
  field(std::to_string(kCacheFormatVersion));
  field(compilerIdentity);
  field(request.target->arch);
  field(request.kernelName);
  field(request.source);
  field(std::to_string(request.headers.size()));
  for (const auto &[name, contents] : request.headers) {
    field(name);
    field(contents);
  }
  // The flags every compile gets, then the request's own.
  field(std::to_string(std::size(kDefaultOptions) + request.options.size()));
  for (const char *opt : kDefaultOptions)
    field(opt);
  for (const std::string &opt : request.options)
    field(opt);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

std::optional<CodeObject> Cache::load(llvm::StringRef key) {
  using namespace llvm::support;
  if (dir_.empty())
    return std::nullopt;
  std::string path = entryPath(key);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;  // a miss (or unreadable: compiling again is the remedy)

  llvm::StringRef data = (*buffer)->getBuffer();
  auto corrupt = [&](const std::string &reason) -> std::optional<CodeObject> {
    warn("tilec: warning: removing corrupt cache entry " + path + ": " + reason);
    llvm::sys::fs::remove(path);
    return std::nullopt;
  };
  if (data.size() < kEntryFixedHeader || !data.starts_with(kEntryMagic))
    return corrupt(data.size() < kEntryFixedHeader ? "truncated header" : "bad magic");
  const char *p = data.data() + kEntryMagic.size();
  uint32_t version = endian::read32le(p);
  uint32_t kind = endian::read32le(p + 4);
  uint64_t payloadSize = endian::read64le(p + 8);
  uint64_t checksum = endian::read64le(p + 16);
  uint32_t identitySize = endian::read32le(p + 24);
  if (version != kCacheFormatVersion)
    return corrupt("format version " + std::to_string(version) + ", expected " +
                   std::to_string(kCacheFormatVersion));
  if (kind > static_cast<uint32_t>(JitKind::Clang))
    return corrupt("unknown compiler kind " + std::to_string(kind));
  uint64_t expected = kEntryFixedHeader + uint64_t(identitySize) + payloadSize;
  if (identitySize > data.size() || payloadSize > data.size() || data.size() != expected)
    return corrupt("size " + std::to_string(data.size()) + " bytes, expected " +
                   std::to_string(expected));
  llvm::StringRef identity = data.substr(kEntryFixedHeader, identitySize);
  llvm::StringRef payload = data.substr(kEntryFixedHeader + identitySize);
  if (llvm::xxh3_64bits(payload) != checksum)
    return corrupt("checksum mismatch");

  CodeObject code;
  code.elf.assign(payload.begin(), payload.end());
  code.compiler = static_cast<JitKind>(kind);
  code.compilerIdentity = identity.str();
  code.fromCache = true;
  return code;
}

void Cache::store(llvm::StringRef key, const CodeObject &code) {
  using namespace llvm::support;
  if (dir_.empty())
    return;
  std::string path = entryPath(key);
  llvm::StringRef payload(code.elf.data(), code.elf.size());

  std::string header(kEntryFixedHeader, '\0');
  char *p = header.data();
  memcpy(p, kEntryMagic.data(), kEntryMagic.size());
  p += kEntryMagic.size();
  endian::write32le(p, kCacheFormatVersion);
  endian::write32le(p + 4, static_cast<uint32_t>(code.compiler));
  endian::write64le(p + 8, payload.size());
  endian::write64le(p + 16, llvm::xxh3_64bits(payload));
  endian::write32le(p + 24, static_cast<uint32_t>(code.compilerIdentity.size()));

  auto failed = [&](const std::string &reason) {
    warn("tilec: warning: cannot write cache entry " + path + ": " + reason);
  };
  // A writer killed between createUniqueFile and rename leaves its temporary
  // file behind; writers (a miss, so a compile of a second or more) sweep
  // the old ones.
  cachefiles::removeStaleTemporaries(dir_);
  int fd = -1;
  llvm::SmallString<256> tempPath;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tempPath))
    return failed(ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << header << code.compilerIdentity << payload;
    os.close();
    if (os.has_error()) {
      std::string reason = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(tempPath);
      return failed(reason);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, path)) {
    llvm::sys::fs::remove(tempPath);
    return failed(ec.message());
  }
}

} // namespace detail

llvm::Expected<CodeObject> compile(const CompileRequest &request, const CacheOptions &cacheOptions) {
  if (!request.target)
    return llvm::createStringError("jit::compile: no target given for '%s'",
                                   request.kernelName.c_str());
  if (request.target->vendor == Vendor::NVIDIA) {
    // clang (CUDA -> PTX) and nvJitLink (PTX -> cubin). Not kept in this cache:
    // an entry holds one ELF, and a cubin's report also needs its PTX and the
    // assembler's log; the compiled-kernel cache (FrontCache) keeps all three.
    if (request.preference == JitPreference::HipRTC)
      return llvm::createStringError("hipRTC compiles for AMD targets only, not %s",
                                     request.target->arch.c_str());
    return detail::compileWithClang(request);
  }
  JitKind kind = JitKind::Clang;
  switch (request.preference) {
  case JitPreference::Auto:
    kind = hipRTCSupports(*request.target) ? JitKind::HipRTC : JitKind::Clang;
    break;
  case JitPreference::HipRTC: kind = JitKind::HipRTC; break;
  case JitPreference::Clang: kind = JitKind::Clang; break;
  }
  std::string identity = kind == JitKind::HipRTC ? hipRTCIdentity() : clangIdentity();

  detail::Cache cache(cacheOptions);
  std::string key = detail::Cache::key(request, identity);
  if (std::optional<CodeObject> hit = cache.load(key))
    return std::move(*hit);

  llvm::Expected<CodeObject> code = kind == JitKind::HipRTC ? detail::compileWithHipRTC(request)
                                                            : detail::compileWithClang(request);
  if (code)
    cache.store(key, *code);
  return code;
}

} // namespace tilec::jit
