#include "Tune/TuneCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <mutex>
#include <set>

namespace tilec::tune {

namespace json = llvm::json;

/// Bump when the file layout changes.
constexpr int64_t kTuneCacheFormat = 1;

std::string TuneCacheKey::text() const {
  return "format=" + std::to_string(kTuneCacheFormat) + "\nkernel=" + kernel + "\nfixed=" + fixedParams +
         "\nshape_class=" + shapeClass + "\narch=" + arch + "\ncompiler=" + compilerIdentity +
         "\nspace=" + space + "\nmethod=" + method + "\n";
}

std::string TuneCacheKey::fileName() const {
  std::array<uint8_t, 32> h = llvm::SHA256::hash(llvm::arrayRefFromStringRef(text()));
  return llvm::toHex(llvm::ArrayRef<uint8_t>(h.data(), 16), /*LowerCase=*/true) + ".json";
}

std::string tuneCacheDir(const std::string &dir) {
  // The code-object cache's rules (lib/JIT/JIT.cpp).
  llvm::SmallString<256> path;
  if (!dir.empty()) {
    path = dir;
  } else if (std::optional<std::string> d = llvm::sys::Process::GetEnv("TILEC_CACHE_DIR"); d && !d->empty()) {
    path = *d;
  } else if (std::optional<std::string> xdg = llvm::sys::Process::GetEnv("XDG_CACHE_HOME"); xdg && !xdg->empty()) {
    path = *xdg;
    llvm::sys::path::append(path, "tilec");
  } else if (std::optional<std::string> home = llvm::sys::Process::GetEnv("HOME"); home && !home->empty()) {
    path = *home;
    llvm::sys::path::append(path, ".cache", "tilec");
  } else {
    return {};
  }
  llvm::sys::path::append(path, "tune");
  return std::string(path);
}

TuneCache::TuneCache(std::string dir, std::function<void(const std::string &)> onWarning)
    : dir_(tuneCacheDir(dir)), onWarning_(std::move(onWarning)) {}

std::string TuneCache::path(const TuneCacheKey &key) const {
  if (dir_.empty())
    return {};
  llvm::SmallString<256> p(dir_);
  llvm::sys::path::append(p, key.fileName());
  return std::string(p);
}

void TuneCache::warnOnce(const std::string &path, const std::string &message) const {
  static std::mutex mu;
  static std::set<std::string> reported;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!reported.insert(path).second)
      return;
  }
  if (onWarning_)
    onWarning_(message);
  else
    llvm::errs() << message << "\n";
}

namespace {

json::Value toJson(const RankedCandidate &c) {
  return json::Object{{"block_m", c.tile.blockM}, {"block_n", c.tile.blockN}, {"block_k", c.tile.blockK},
                      {"waves", c.tile.waves},    {"stages", c.tile.stages},  {"split_k", c.tile.splitK},
                      {"kernel", c.kernelName},   {"instr", c.instr},         {"vgpr", c.vgpr},
                      {"agpr", c.agpr},           {"lds_bytes", c.ldsBytes},  {"occupancy", c.occupancy},
                      {"seconds", c.seconds},     {"pct_of_peak", c.pctOfPeak}, {"why", c.why}};
}

/// Reads one candidate; false when a field is missing or has the wrong type.
bool fromJson(const json::Object &o, RankedCandidate &c) {
  auto i64 = [&](llvm::StringRef k, int64_t &out) {
    std::optional<int64_t> v = o.getInteger(k);
    if (v)
      out = *v;
    return v.has_value();
  };
  auto i32 = [&](llvm::StringRef k, int &out) {
    int64_t v = 0;
    bool ok = i64(k, v);
    out = static_cast<int>(v);
    return ok;
  };
  auto num = [&](llvm::StringRef k, double &out) {
    std::optional<double> v = o.getNumber(k);
    if (v)
      out = *v;
    return v.has_value();
  };
  auto str = [&](llvm::StringRef k, std::string &out) {
    std::optional<llvm::StringRef> v = o.getString(k);
    if (v)
      out = v->str();
    return v.has_value();
  };
  // split_k: records written before split-K was searched have none (1).
  if (!i32("split_k", c.tile.splitK))
    c.tile.splitK = 1;
  return i64("block_m", c.tile.blockM) && i64("block_n", c.tile.blockN) && i64("block_k", c.tile.blockK) &&
         i32("waves", c.tile.waves) && i32("stages", c.tile.stages) && str("kernel", c.kernelName) &&
         str("instr", c.instr) && i32("vgpr", c.vgpr) && i32("agpr", c.agpr) && i64("lds_bytes", c.ldsBytes) &&
         i32("occupancy", c.occupancy) && num("seconds", c.seconds) && num("pct_of_peak", c.pctOfPeak) &&
         str("why", c.why);
}

} // namespace

std::optional<TuneRecord> TuneCache::load(const TuneCacheKey &key) const {
  std::string file = path(key);
  if (file.empty() || !llvm::sys::fs::exists(file))
    return std::nullopt;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(file);
  auto corrupt = [&](const std::string &why) -> std::optional<TuneRecord> {
    warnOnce(file, "tilec: warning: ignoring corrupt tuning cache file " + file + ": " + why);
    return std::nullopt;
  };
  if (!buf)
    return corrupt(buf.getError().message());
  llvm::Expected<json::Value> value = json::parse((*buf)->getBuffer());
  if (!value)
    return corrupt(llvm::toString(value.takeError()));
  const json::Object *o = value->getAsObject();
  if (!o)
    return corrupt("not a JSON object");
  TuneRecord r;
  std::optional<int64_t> format = o->getInteger("format");
  std::optional<llvm::StringRef> k = o->getString("key"), method = o->getString("method");
  std::optional<int64_t> M = o->getInteger("M"), N = o->getInteger("N"), K = o->getInteger("K");
  const json::Array *ranking = o->getArray("ranking");
  if (!format || !k || !method || !M || !N || !K || !ranking)
    return corrupt("missing fields");
  if (*format != kTuneCacheFormat)
    return std::nullopt;  // another format: not ours, replaced on store
  r.key = k->str();
  r.method = method->str();
  r.M = *M, r.N = *N, r.K = *K;
  for (const json::Value &v : *ranking) {
    RankedCandidate c;
    const json::Object *co = v.getAsObject();
    if (!co || !fromJson(*co, c))
      return corrupt("bad ranking entry");
    r.ranking.push_back(std::move(c));
  }
  if (r.ranking.empty())
    return corrupt("empty ranking");
  if (r.key != key.text())
    return std::nullopt;  // a well-formed file for another key (hash collision): not ours
  return r;
}

bool TuneCache::store(const TuneCacheKey &key, const TuneRecord &record) const {
  std::string file = path(key);
  if (file.empty())
    return false;
  auto failed = [&](const std::string &reason) {
    warnOnce(file, "tilec: warning: cannot write tuning cache file " + file + ": " + reason);
    return false;
  };
  if (std::error_code ec = llvm::sys::fs::create_directories(dir_))
    return failed(ec.message());
  json::Array ranking;
  for (const RankedCandidate &c : record.ranking)
    ranking.push_back(toJson(c));
  json::Value doc = json::Object{{"format", kTuneCacheFormat}, {"key", key.text()},
                                 {"M", record.M},             {"N", record.N},
                                 {"K", record.K},             {"method", record.method},
                                 {"ranking", std::move(ranking)}};
  int fd = -1;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(file + ".tmp-%%%%%%%%", fd, temp))
    return failed(ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << llvm::formatv("{0:2}", doc) << "\n";
    os.close();
    if (os.has_error()) {
      std::string reason = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temp);
      return failed(reason);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, file)) {
    llvm::sys::fs::remove(temp);
    return failed(ec.message());
  }
  return true;
}

} // namespace tilec::tune
