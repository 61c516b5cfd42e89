// The benchmark entries of Google Benchmark JSON files, and number formatting.
#include "BenchReport.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdio>

using namespace llvm;

namespace tilec::benchreport {

namespace {

const char *const kStandardKeys[] = {"name", "family_index", "per_family_instance_index", "run_name",
                                     "run_type", "repetitions", "repetition_index", "threads",
                                     "iterations", "real_time", "cpu_time", "time_unit", "label",
                                     "error_occurred", "error_message", "aggregate_name", "aggregate_unit"};

} // namespace

Error readFile(const std::string &path, Data &data) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(path);
  if (!buf)
    return createStringError(buf.getError(), "cannot read %s", path.c_str());
  Expected<json::Value> root = json::parse((*buf)->getBuffer());
  if (!root)
    return createStringError(inconvertibleErrorCode(), "%s: %s", path.c_str(),
                             toString(root.takeError()).c_str());
  const json::Object *obj = root->getAsObject();
  if (!obj)
    return createStringError(inconvertibleErrorCode(), "%s: not a JSON object", path.c_str());
  if (const json::Object *ctx = obj->getObject("context"))
    for (const auto &kv : *ctx) {
      std::string key = kv.first.str();
      if (data.context.count(key))
        continue;
      if (std::optional<StringRef> s = kv.second.getAsString())
        data.context[key] = s->str();
      else if (std::optional<double> d = kv.second.getAsNumber()) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", *d);
        data.context[key] = text;
      } else if (const json::Array *a = kv.second.getAsArray()) {  // load_avg
        std::string joined;
        for (const json::Value &e : *a)
          if (std::optional<double> d = e.getAsNumber())
            joined += (joined.empty() ? "" : ", ") + num(*d, 2);
        data.context[key] = joined;
      }
    }
  const json::Array *benches = obj->getArray("benchmarks");
  if (!benches)
    return createStringError(inconvertibleErrorCode(), "%s: no \"benchmarks\" array", path.c_str());
  for (const json::Value &v : *benches) {
    const json::Object *b = v.getAsObject();
    if (!b)
      continue;
    if (std::optional<StringRef> rt = b->getString("run_type"); rt && *rt != "iteration")
      continue;  // aggregates (mean/median of repetitions) are not rendered
    Bench out;
    // "BM_CompileCold/gemm/gfx942/iterations:10/real_time": the run options
    // Google Benchmark appends are not part of the name used here.
    SmallVector<StringRef> parts;
    b->getString("name").value_or("").split(parts, '/');
    for (StringRef p : parts) {
      if (p.contains(':') || p == "real_time" || p == "manual_time")
        continue;
      out.name += (out.name.empty() ? "" : "/") + p.str();
      out.parts.push_back(p.str());
    }
    out.label = b->getString("label").value_or("").str();
    out.realTime = b->getNumber("real_time").value_or(0);
    out.timeUnit = b->getString("time_unit").value_or("").str();
    out.iterations = b->getNumber("iterations").value_or(0);
    out.skipped = b->getBoolean("error_occurred").value_or(false);
    out.message = b->getString("error_message").value_or("").str();
    for (const auto &kv : *b) {
      StringRef key = kv.first;
      if (std::find(std::begin(kStandardKeys), std::end(kStandardKeys), key) != std::end(kStandardKeys))
        continue;
      if (std::optional<double> d = kv.second.getAsNumber())
        out.counters[key.str()] = *d;
    }
    data.benches.push_back(std::move(out));
  }
  return Error::success();
}

// ---------------------------------------------------------------- formatting

/// `v` with `digits` decimals; "-" for NaN.
std::string num(double v, int digits) {
  if (std::isnan(v))
    return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

/// 1234567 -> "1.23 M" style, for counts and bytes.
std::string si(double v, const char *unit) {
  if (std::isnan(v))
    return "-";
  const char *prefixes[] = {"", " k", " M", " G", " T", " P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  char text[64];
  std::snprintf(text, sizeof text, i == 0 && v == std::floor(v) ? "%.0f%s%s" : "%.3g%s%s", v, prefixes[i],
                *unit ? (i ? unit : (std::string(" ") + unit).c_str()) : "");
  return text;
}

std::string xmlEscape(StringRef s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

/// The benchmark's time in milliseconds.
double toMs(const Bench &b) {
  double scale = b.timeUnit == "ns" ? 1e-6 : b.timeUnit == "us" ? 1e-3 : b.timeUnit == "s" ? 1e3 : 1;
  return b.realTime * scale;
}


} // namespace tilec::benchreport
