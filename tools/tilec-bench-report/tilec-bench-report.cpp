// tilec-bench-report: renders Google Benchmark JSON (--benchmark_out) of
// tilec_bench_compile, tilec_bench_model and tilec_bench_emu into
// docs/performance.md (Markdown tables, the issue-7 targets met or not) and
// hand-written SVG plots (a compile-time breakdown, a roofline per target).
//
//   tilec-bench-report compile.json model.json emu.json \
//       --md=docs/performance.md --svg-dir=docs/perf --svg-link=perf \
//       --notes=docs/perf/notes.md
//
// --notes names hand-written Markdown (the analysis: why a target is or is not
// met) that is copied after the targets table.
//
// Entries a benchmark skipped (a GPU that is not there, a library that is not
// installed) are shown with the benchmark's own "not run: ..." message.
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;

namespace {

cl::list<std::string> inputsOpt(cl::Positional, cl::desc("<benchmark JSON>..."), cl::OneOrMore);
cl::opt<std::string> mdOpt("md", cl::desc("Markdown output"), cl::value_desc("file"), cl::Required);
cl::opt<std::string> svgDirOpt("svg-dir", cl::desc("Folder for the SVG plots"), cl::value_desc("dir"),
                               cl::Required);
cl::opt<std::string> svgLinkOpt("svg-link", cl::desc("How the Markdown file refers to --svg-dir"),
                                cl::value_desc("path"), cl::init("perf"));
cl::opt<std::string> notesOpt("notes",
                              cl::desc("Markdown written by hand (the analysis of the numbers), placed "
                                       "after the targets"),
                              cl::value_desc("file"), cl::init(""));

// ---------------------------------------------------------------- the data

struct Bench {
  std::string name;                  ///< "BM_CompileCold/gemm/gfx942"
  std::vector<std::string> parts;    ///< name split at '/'
  std::string label;
  double realTime = 0;
  std::string timeUnit;
  double iterations = 0;
  bool skipped = false;
  std::string message;               ///< error_message of a skipped entry
  std::map<std::string, double> counters;

  double counter(const std::string &key, double otherwise = NAN) const {
    auto it = counters.find(key);
    return it == counters.end() ? otherwise : it->second;
  }
  const std::string &part(size_t i) const {
    static const std::string none;
    return i < parts.size() ? parts[i] : none;
  }
};

struct Data {
  std::map<std::string, std::string> context;  ///< first file's context, strings
  std::vector<Bench> benches;

  std::vector<const Bench *> family(const std::string &prefix) const {
    std::vector<const Bench *> out;
    for (const Bench &b : benches)
      if (b.part(0) == prefix)
        out.push_back(&b);
    return out;
  }
  const Bench *find(const std::string &name) const {
    for (const Bench &b : benches)
      if (b.name == name)
        return &b;
    return nullptr;
  }
};

const char *const kStandardKeys[] = {"name", "family_index", "per_family_instance_index", "run_name",
                                     "run_type", "repetitions", "repetition_index", "threads",
                                     "iterations", "real_time", "cpu_time", "time_unit", "label",
                                     "error_occurred", "error_message", "aggregate_name", "aggregate_unit"};

std::string num(double v, int digits = 1);

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
std::string si(double v, const char *unit = "") {
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

// ---------------------------------------------------------------- SVG

struct Stage {
  const char *counter;
  const char *name;
  const char *color;
};
const Stage kStages[] = {
    {"dsl_ms", "DSL build", "#8dd3c7"},   {"context_ms", "MLIR context", "#ffffb3"},
    {"parse_ms", "parse", "#bebada"},     {"pipeline_ms", "pass pipeline", "#fb8072"},
    {"emit_ms", "HIP emission", "#80b1d3"}, {"jit_ms", "JIT (clang/hipRTC) or cache", "#fdb462"},
    {"report_ms", "report", "#b3de69"},   {"other_ms", "other", "#d9d9d9"},
};

/// "cold", "warm" (compiled-kernel cache hit) or "warm code object" (only the
/// code object cached) for a compile benchmark.
std::string compileKind(const Bench &b) {
  return b.part(0) == "BM_CompileCold" ? "cold" : b.part(0) == "BM_CompileWarm" ? "warm" : "warm code object";
}

bool isCompileBench(const Bench &b) {
  return b.part(0) == "BM_CompileCold" || b.part(0) == "BM_CompileWarm" || b.part(0) == "BM_CompileWarmCodeObject";
}

/// Horizontal stacked bars, one per cold/warm compile benchmark.
std::string compileSvg(const std::vector<const Bench *> &rows) {
  const int left = 200, width = 560, rowH = 24, top = 40;
  double maxMs = 0;
  for (const Bench *b : rows)
    maxMs = std::max(maxMs, b->counter("mean_ms", 0));
  maxMs = maxMs > 0 ? maxMs * 1.05 : 1;
  const int legendRows = (std::size(kStages) + 3) / 4;
  const int height = top + rowH * int(rows.size()) + 40 + legendRows * 18;
  std::string s;
  raw_string_ostream os(s);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 80 << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"10\" y=\"20\" font-size=\"14\">Compile time per stage (mean of iterations, ms)</text>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Bench &b = *rows[i];
    int y = top + int(i) * rowH;
    std::string kind = compileKind(b);
    os << "<text x=\"" << left - 6 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">" << xmlEscape(b.part(1))
       << " " << xmlEscape(b.part(2)) << " " << kind << "</text>\n";
    double x = left;
    for (const Stage &st : kStages) {
      double w = b.counter(st.counter, 0) / maxMs * width;
      if (w <= 0)
        continue;
      os << "<rect x=\"" << num(x, 2) << "\" y=\"" << y + 3 << "\" width=\"" << num(w, 2)
         << "\" height=\"" << rowH - 6 << "\" fill=\"" << st.color << "\"><title>" << st.name << ": "
         << num(b.counter(st.counter, 0), 2) << " ms</title></rect>\n";
      x += w;
    }
    os << "<text x=\"" << num(x + 4, 2) << "\" y=\"" << y + 15 << "\">" << num(b.counter("mean_ms"), 1)
       << " ms</text>\n";
  }
  int axisY = top + rowH * int(rows.size()) + 4;
  os << "<line x1=\"" << left << "\" y1=\"" << axisY << "\" x2=\"" << left + width << "\" y2=\"" << axisY
     << "\" stroke=\"black\"/>\n";
  for (int t = 0; t <= 4; ++t) {
    double x = left + width * t / 4.0;
    os << "<text x=\"" << num(x, 1) << "\" y=\"" << axisY + 14 << "\" text-anchor=\"middle\">"
       << num(maxMs * t / 4.0, 0) << "</text>\n";
  }
  for (size_t i = 0; i < std::size(kStages); ++i) {
    int lx = 10 + int(i % 4) * 190, ly = axisY + 26 + int(i / 4) * 18;
    os << "<rect x=\"" << lx << "\" y=\"" << ly - 10 << "\" width=\"12\" height=\"12\" fill=\""
       << kStages[i].color << "\"/><text x=\"" << lx + 16 << "\" y=\"" << ly << "\">" << kStages[i].name
       << "</text>\n";
  }
  os << "</svg>\n";
  return s;
}

/// Log-log roofline of one target: the memory and compute ceilings, and the
/// modelled points (FLOP per byte of memory traffic, modelled TFLOP/s).
std::string rooflineSvg(const std::string &arch, const std::vector<const Bench *> &points) {
  const double peak = points.front()->counter("peak_tflops"), bw = points.front()->counter("mem_tbs");
  const int left = 70, top = 40, w = 520, h = 320;
  double xLo = 1, xHi = 1e4, yLo = peak / 1e3, yHi = peak * 2;
  for (const Bench *b : points) {
    xLo = std::min(xLo, b->counter("intensity") / 2);
    xHi = std::max(xHi, b->counter("intensity") * 2);
    yLo = std::min(yLo, b->counter("modelled_tflops") / 2);
  }
  xLo = std::pow(10, std::floor(std::log10(xLo)));
  xHi = std::pow(10, std::ceil(std::log10(xHi)));
  yLo = std::pow(10, std::floor(std::log10(yLo)));
  yHi = std::pow(10, std::ceil(std::log10(yHi)));
  auto X = [&](double v) { return left + w * (std::log10(v) - std::log10(xLo)) / (std::log10(xHi) - std::log10(xLo)); };
  auto Y = [&](double v) { return top + h - h * (std::log10(v) - std::log10(yLo)) / (std::log10(yHi) - std::log10(yLo)); };
  std::string s;
  raw_string_ostream os(s);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + w + 200 << "\" height=\"" << top + h + 50
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"10\" y=\"20\" font-size=\"14\">Roofline model, " << xmlEscape(arch) << ": " << num(peak, 1)
     << " TFLOP/s, " << num(bw * 1000, 0) << " GB/s (modelled, not measured)</text>\n";
  os << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << w << "\" height=\"" << h
     << "\" fill=\"none\" stroke=\"black\"/>\n";
  for (double v = xLo; v <= xHi * 1.001; v *= 10)
    os << "<line x1=\"" << num(X(v), 1) << "\" y1=\"" << top << "\" x2=\"" << num(X(v), 1) << "\" y2=\""
       << top + h << "\" stroke=\"#eee\"/><text x=\"" << num(X(v), 1) << "\" y=\"" << top + h + 16
       << "\" text-anchor=\"middle\">" << si(v) << "</text>\n";
  for (double v = yLo; v <= yHi * 1.001; v *= 10)
    os << "<line x1=\"" << left << "\" y1=\"" << num(Y(v), 1) << "\" x2=\"" << left + w << "\" y2=\""
       << num(Y(v), 1) << "\" stroke=\"#eee\"/><text x=\"" << left - 6 << "\" y=\"" << num(Y(v) + 4, 1)
       << "\" text-anchor=\"end\">" << si(v) << "</text>\n";
  os << "<text x=\"" << left + w / 2 << "\" y=\"" << top + h + 36
     << "\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte of memory traffic)</text>\n"
     << "<text x=\"16\" y=\"" << top + h / 2 << "\" transform=\"rotate(-90 16 " << top + h / 2
     << ")\" text-anchor=\"middle\">TFLOP/s</text>\n";
  // The ceilings: bandwidth x intensity up to the ridge, then the peak.
  double ridge = peak / bw;
  double x0 = std::max(xLo, yLo / bw);
  os << "<polyline fill=\"none\" stroke=\"#c00\" stroke-width=\"2\" points=\"" << num(X(x0), 1) << ","
     << num(Y(x0 * bw), 1) << " " << num(X(ridge), 1) << "," << num(Y(peak), 1) << " " << num(X(xHi), 1) << ","
     << num(Y(peak), 1) << "\"/>\n";
  const char *colors[] = {"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  for (size_t i = 0; i < points.size(); ++i) {
    const Bench &b = *points[i];
    double px = X(b.counter("intensity")), py = Y(b.counter("modelled_tflops"));
    const char *c = colors[i % std::size(colors)];
    os << "<circle cx=\"" << num(px, 1) << "\" cy=\"" << num(py, 1) << "\" r=\"5\" fill=\"" << c << "\"/>\n"
       << "<rect x=\"" << left + w + 12 << "\" y=\"" << top + 8 + 18 * int(i) << "\" width=\"10\" height=\"10\" fill=\""
       << c << "\"/><text x=\"" << left + w + 26 << "\" y=\"" << top + 17 + 18 * int(i) << "\">"
       << xmlEscape(b.part(3)) << ": " << num(b.counter("pct_peak"), 0) << "%</text>\n";
  }
  os << "</svg>\n";
  return s;
}

// ---------------------------------------------------------------- Markdown

struct TargetCheck {
  std::string what;
  double limit;
  std::string unit;
  const Bench *bench;
  double measured;  ///< NaN: not measured
};

void writeReport(const Data &d, const std::string &notes, raw_ostream &md,
                 std::map<std::string, std::string> &svgs) {
  auto ctx = [&](const char *key) {
    auto it = d.context.find(key);
    return it == d.context.end() ? std::string("unknown") : it->second;
  };
  md << "# Performance\n\n"
     << "Generated by `tilec-bench-report` from the Google Benchmark JSON of `tilec_bench_compile`, "
        "`tilec_bench_model` and `tilec_bench_emu` (issue 7). Do not edit by hand: rerun the benchmarks "
        "and the tool (see *Reproduce* at the end).\n\n"
     << "## Machine\n\n"
     << "| | |\n|---|---|\n"
     << "| CPU | " << ctx("cpu_model") << " |\n"
     << "| cores (`nproc`) | " << ctx("num_cpus") << " |\n"
     << "| date | " << ctx("date") << " |\n"
     << "| host | " << ctx("host_name") << " |\n"
     << "| load average at start (1, 5, 15 min) | " << ctx("load_avg")
     << " (other jobs sharing the 2 cores inflate the times) |\n"
     << "| GPU | none opened: every GPU entry below is *not run* |\n\n";

  // ---- targets
  auto counterOf = [&](const char *name, const char *key) -> std::pair<const Bench *, double> {
    const Bench *b = d.find(name);
    return {b, b && !b->skipped ? b->counter(key) : NAN};
  };
  std::vector<TargetCheck> checks;
  {
    auto [b, v] = counterOf("BM_CompileCold/gemm/gfx942", "median_ms");
    checks.push_back({"cold compile, default GEMM, gfx942 (median, all stages, DSL to code object)", 100, "ms", b, v});
  }
  {
    auto [b, v] = counterOf("BM_CompileWarm/gemm/gfx942", "median_ms");
    checks.push_back({"warm compile (cache hit), default GEMM, gfx942 (median)", 1, "ms", b, v});
  }
  {
    auto [b, v] = counterOf("BM_ProcessToCodeObject/gemm/gfx942", "median_ms");
    checks.push_back({"`tilec` process start to code object, cached kernel, gfx942 (median)", 50, "ms", b, v});
  }
  {
    const Bench *b = d.find("BM_Autotune100/gemm/gfx942");
    double v = b && !b->skipped ? toMs(*b) / 1000 : NAN;
    checks.push_back({"autotune 100 GEMM candidates (compile + rank), 4096^3, gfx942", 20, "s", b, v});
  }
  md << "## Targets (issue 7)\n\n"
     << "| target | limit | measured here | met |\n|---|---|---|---|\n";
  for (const TargetCheck &c : checks) {
    std::string status = std::isnan(c.measured) ? "not measured" : c.measured <= c.limit ? "**met**" : "**not met**";
    md << "| " << c.what << " | <= " << num(c.limit, 0) << " " << c.unit << " | "
       << (std::isnan(c.measured) ? std::string("-") : num(c.measured, c.unit == "s" ? 1 : 2) + " " + c.unit)
       << " | " << status << " |\n";
  }
  int met = 0, measured = 0;
  for (const TargetCheck &c : checks)
    if (!std::isnan(c.measured)) {
      ++measured;
      met += c.measured <= c.limit;
    }
  md << "\n" << met << " of the " << checks.size() << " targets met (" << measured
     << " measured). The stage tables below show where the time goes.\n\n";
  if (!notes.empty())
    md << notes << (StringRef(notes).ends_with("\n") ? "\n" : "\n\n");

  // ---- compile time per stage
  std::vector<const Bench *> compiles;
  for (const Bench &b : d.benches)
    if (isCompileBench(b) && !b.skipped)
      compiles.push_back(&b);
  if (!compiles.empty()) {
    md << "## Compile time per stage\n\n"
       << "Milliseconds per `tilec::compile` of the shipped kernel (default parameters) plus its DSL build: "
          "*median* of the whole call over the iterations, then the *mean* of each stage "
          "(`tilec::CompileTimings`). Cold: a fresh, empty cache each iteration; warm: the kernel is "
          "already in the compiled-kernel cache (keyed on the tile IR and the options), so no stage runs "
          "and the JIT column is the lookup; warm code object: only the code object is cached (keyed on "
          "the generated HIP), so every stage but the JIT runs.\n\n"
       << "| kernel | target | cache | iterations | median | mean | DSL | MLIR context | parse | pipeline | "
          "HIP emit | JIT | report | other |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Bench *b : compiles)
      md << "| " << b->part(1) << " | " << b->part(2) << " | "
         << compileKind(*b) << " | " << num(b->iterations, 0) << " | "
         << num(b->counter("median_ms"), 2) << " | " << num(b->counter("mean_ms"), 2) << " | "
         << num(b->counter("dsl_ms"), 2) << " | " << num(b->counter("context_ms"), 2) << " | "
         << num(b->counter("parse_ms"), 2) << " | " << num(b->counter("pipeline_ms"), 2) << " | "
         << num(b->counter("emit_ms"), 2) << " | " << num(b->counter("jit_ms"), 2) << " | "
         << num(b->counter("report_ms"), 2) << " | " << num(b->counter("other_ms"), 2) << " |\n";
    md << "\n![compile time per stage](" << svgLinkOpt << "/compile-time.svg)\n\n";
    svgs["compile-time.svg"] = compileSvg(compiles);

    // Where the time goes, for each measured compile: the two largest stages.
    md << "Where the time goes:\n\n";
    for (const Bench *b : compiles) {
      std::vector<std::pair<double, const char *>> parts;
      for (const Stage &st : kStages)
        parts.push_back({b->counter(st.counter, 0), st.name});
      std::sort(parts.rbegin(), parts.rend());
      double mean = b->counter("mean_ms", 0);
      md << "- " << b->part(1) << " " << b->part(2) << " " << compileKind(*b)
         << ": " << parts[0].second << " " << num(100 * parts[0].first / mean, 0) << "%, " << parts[1].second
         << " " << num(100 * parts[1].first / mean, 0) << "%\n";
    }
    md << "\n";

    // Per pass, cold compiles.
    std::vector<std::string> passes;
    std::vector<const Bench *> cold;
    for (const Bench *b : compiles)
      if (b->part(0) == "BM_CompileCold") {
        cold.push_back(b);
        for (const auto &[key, v] : b->counters)
          if (StringRef(key).starts_with("pass:") && !is_contained(passes, key))
            passes.push_back(key);
      }
    if (!passes.empty()) {
      md << "The pass pipeline, pass by pass (cold, mean ms):\n\n| pass |";
      for (const Bench *b : cold)
        md << " " << b->part(1) << " " << b->part(2) << " |";
      md << "\n|---|";
      for (size_t i = 0; i < cold.size(); ++i)
        md << "---|";
      md << "\n";
      for (const std::string &p : passes) {
        md << "| `" << StringRef(p).drop_front(5).drop_back(3) << "` |";
        for (const Bench *b : cold)
          md << " " << num(b->counter(p), 2) << " |";
        md << "\n";
      }
      md << "\n";
    }

    md << "## Code-object report\n\n"
       << "| kernel | target | symbol (JIT) | VGPR | AGPR | SGPR | LDS bytes | scratch | spills (V/S) | "
          "occupancy (waves/SIMD) | matrix instructions | code object bytes |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Bench *b : compiles)
      if (b->part(0) == "BM_CompileCold")
        md << "| " << b->part(1) << " | " << b->part(2) << " | " << b->label << " | " << num(b->counter("vgpr"), 0)
           << " | " << num(b->counter("agpr"), 0) << " | " << num(b->counter("sgpr"), 0) << " | "
           << num(b->counter("lds_bytes"), 0) << " | " << num(b->counter("scratch_bytes"), 0) << " | "
           << num(b->counter("vgpr_spills"), 0) << "/" << num(b->counter("sgpr_spills"), 0) << " | "
           << num(b->counter("occupancy"), 0) << " | " << num(b->counter("matrix_instructions"), 0) << " | "
           << num(b->counter("code_object_bytes"), 0) << " |\n";
    md << "\n";
  }

  // ---- process start
  if (std::vector<const Bench *> procs = d.family("BM_ProcessToCodeObject"); !procs.empty()) {
    md << "## `tilec` process start to code object (cached kernel)\n\n"
       << "Wall time of `tilec --kernel=K --offload-arch=T --emit=obj -o F` as a child process "
          "(`llvm::sys::ExecuteAndWait`), the kernel already in the cache: loading the `tilec` launcher "
          "(which links neither MLIR, clang nor libLLVM.so), the DSL build, the compiled-kernel cache hit "
          "and the write.\n\n"
       << "| kernel | target | iterations | median ms | mean ms |\n|---|---|---|---|---|\n";
    for (const Bench *b : procs)
      md << "| " << b->part(1) << " | " << b->part(2) << " | " << num(b->iterations, 0) << " | "
         << (b->skipped ? b->message : num(b->counter("median_ms"), 1)) << " | " << num(toMs(*b), 1) << " |\n";
    md << "\n";
  }

  // ---- autotune
  if (std::vector<const Bench *> tunes = d.family("BM_Autotune100"); !tunes.empty()) {
    md << "## Autotuning\n\n"
       << "`tune::tuneKernel` for a 4096x4096x4096 bf16 GEMM: enumerate, prune, compile up to 100 "
          "candidates on every core, rank by the cost model (no GPU here). *empty*: empty caches (the "
          "issue's target); *after 2048^3*: the caches hold a tune of 2048x2048x2048 (its tuning-cache "
          "record is not used), so candidates both shapes keep are compiled-kernel cache hits (a kernel's "
          "code does not depend on the run-time sizes). The tune keeps every core busy, so other jobs on "
          "the machine lengthen it: *load after* is the 1-minute load average when it ended.\n\n"
       << "| kernel | target | caches | total s | compile s | rank s | threads | load after | space | pruned | "
          "compiled | failed | best |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Bench *b : tunes)
      md << "| " << b->part(1) << " | " << b->part(2) << " | "
         << (b->part(3).empty() ? std::string("empty")
                                : StringRef(b->part(3)).starts_with("after_")
                                      ? "after " + StringRef(b->part(3)).drop_front(6).str() + "^3"
                                      : b->part(3))
         << " | "
         << (b->skipped ? b->message : num(toMs(*b) / 1000, 2)) << " | " << num(b->counter("compile_s"), 2)
         << " | " << num(b->counter("rank_s"), 3) << " | " << num(b->counter("compile_threads", std::atof(ctx("hardware_concurrency").c_str())), 0) << " | "
         << (std::isnan(b->counter("load_1min_after")) ? std::string("-") : num(b->counter("load_1min_after"), 2))
         << " | "
         << num(b->counter("space"), 0) << " | " << num(b->counter("pruned"), 0) << " | "
         << num(b->counter("compiled"), 0) << " | " << num(b->counter("compile_failed"), 0) << " | `"
         << b->label << "` |\n";
    md << "\n";
  }

  // ---- compiled-code model
  if (std::vector<const Bench *> asmModel = d.family("BM_AsmModel"); !asmModel.empty()) {
    md << "## Compiled-code cost model (modelled, not measured)\n\n"
       << "`bench/model/AsmModelBench.cpp`: lib/Model ([cost-model.md](cost-model.md)) reads each shipped "
          "kernel's main loop from its code object's disassembly and prices one iteration (matrix core, VALU "
          "port, issue slots, LDS at the accesses' widths, L2 bytes, one wave's in-order chain with the "
          "latency its waits expose), then the occupancy rounds over the CUs, the code outside the loop and "
          "the HBM bytes. *modelled* is the largest term; *bound* names it. The same model, checked against "
          "the H200 ([perf/h200.md](perf/h200.md)), is off by the factors docs/cost-model.md reports. The "
          "roofline tables below are ideal bounds (matrix cycles or bytes only).\n\n"
       << "| case | target | modelled us | bound | matrix | valu | issue | latency | lds | l2 | outside loop | "
          "hbm | % of matrix peak | % of bandwidth | loop instructions (matrix) | exposed cycles / iteration | "
          "kernel |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Bench *b : asmModel) {
      if (b->skipped) {
        md << "| " << b->part(1) << " | " << b->part(2) << " | " << b->message << " |||||||||||||||\n";
        continue;
      }
      std::string label = b->label;
      size_t semi = label.find("; ");
      md << "| " << b->part(1) << " | " << b->part(2) << " | " << num(b->counter("modelled_us"), 1) << " | "
         << label.substr(0, semi) << " | " << num(b->counter("matrix_us"), 1) << " | "
         << num(b->counter("valu_us"), 1) << " | " << num(b->counter("issue_us"), 1) << " | "
         << num(b->counter("latency_us"), 1) << " | " << num(b->counter("lds_us"), 1) << " | "
         << num(b->counter("l2_us"), 1) << " | " << num(b->counter("outside_loop_us"), 1) << " | "
         << num(b->counter("hbm_us"), 1) << " | " << num(b->counter("pct_peak"), 1) << "% | "
         << num(b->counter("pct_bandwidth"), 1) << "% | " << num(b->counter("loop_instructions"), 0) << " ("
         << num(b->counter("loop_matrix_instructions"), 0) << ") | " << num(b->counter("loop_exposed_cycles"), 0)
         << " | " << (semi == std::string::npos ? "" : label.substr(semi + 2)) << " |\n";
    }
    md << "\n";
  }

  // ---- attention model
  if (std::vector<const Bench *> attn = d.family("BM_ModelAttention"); !attn.empty()) {
    md << "## Attention kernels: roofline model (ideal bound, modelled, not measured)\n\n"
       << "`bench/model/AttentionModelBench.cpp` for the shipped `attention` (prefill) and "
          "`paged_decode` kernels as compiled for each target: the matrix instructions the kernel issues "
          "(from its compiled tile IR and block sizes; whole blocks, masked or not), their cycles spread "
          "over every SIMD plus each key step's fixed overhead, against the distinct bytes at the "
          "device's memory bandwidth. *modelled* is the larger: a lower bound that leaves out the "
          "softmax's vector work and latency. FLOPs count 4 * head_dim per visible (query, key) "
          "pair.\n\n"
       << "| case | target | device / kernel | GFLOP | matrix us | step overhead us | memory MB | memory us | "
          "modelled us | TFLOP/s | % of matrix peak | % of bandwidth |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Bench *b : attn)
      md << "| " << b->part(1) << " | " << b->part(2) << " | " << (b->skipped ? b->message : b->label) << " | "
         << num(b->counter("flop") / 1e9, 1) << " | " << num(b->counter("matrix_us"), 1) << " | "
         << num(b->counter("step_overhead_us"), 1) << " | " << num(b->counter("memory_bytes") / 1e6, 1) << " | "
         << num(b->counter("memory_us"), 1) << " | " << num(b->counter("modelled_us"), 1) << " | "
         << num(b->counter("modelled_tflops"), 1) << " | " << num(b->counter("pct_peak"), 1) << "% | "
         << num(b->counter("pct_bandwidth"), 1) << "% |\n";
    md << "\n";
  }

  // ---- MoE model
  if (std::vector<const Bench *> moe = d.family("BM_ModelMoe"); !moe.empty()) {
    md << "## MoE layer: roofline model (ideal bound, modelled, not measured)\n\n"
       << "`bench/model/MoeModelBench.cpp` for the shipped `moe` layer's expert GEMMs as compiled for each "
          "target: the pairs spread evenly over the experts, each expert's rows padded to block_m; the "
          "matrix instructions of gate_up (two gemms) and down over the padded rows, their cycles spread "
          "over every SIMD, against X, the weights of the experts that receive tokens, the intermediate "
          "H and Y (written and read back) and the output at the device's memory bandwidth. *modelled* "
          "is the larger: a lower bound that leaves out the gate and the one-workgroup alignment. FLOPs "
          "count 6 * hidden * intermediate per (token, expert) pair.\n\n"
       << "| case | target | device / kernels | GFLOP | padded rows | matrix us | memory MB | memory us | "
          "modelled us | TFLOP/s | % of matrix peak | % of bandwidth |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Bench *b : moe)
      md << "| " << b->part(1) << " | " << b->part(2) << " | " << (b->skipped ? b->message : b->label) << " | "
         << num(b->counter("flop") / 1e9, 1) << " | " << num(b->counter("padded_rows"), 0) << " | "
         << num(b->counter("matrix_us"), 1) << " | " << num(b->counter("memory_bytes") / 1e6, 1) << " | "
         << num(b->counter("memory_us"), 1) << " | " << num(b->counter("modelled_us"), 1) << " | "
         << num(b->counter("modelled_tflops"), 1) << " | " << num(b->counter("pct_peak"), 1) << "% | "
         << num(b->counter("pct_bandwidth"), 1) << "% |\n";
    md << "\n";
  }

  // ---- roofline model
  if (std::vector<const Bench *> model = d.family("BM_ModelGemm"); !model.empty()) {
    md << "## Roofline model (ideal bound, modelled, not measured)\n\n"
       << "`lib/Tune/CostModel` (`modelGemm`, the autotuner's model; assumptions in "
          "[autotuning.md](autotuning.md#cost-model-costmodelcpp)) for the shipped GEMM as compiled for "
          "each target (instruction, wave grid and stages read from the compiled tile IR, registers and "
          "LDS from its code object), against the peak figures of docs/hardware.md section 7. Matrix "
          "instructions and cycles count padded edge tiles; *ideal matrix* is those cycles spread "
          "evenly over every SIMD; *L2 bytes* are every workgroup's loads and stores, *memory bytes* the "
          "distinct panels each round reads (plus C), which sets the arithmetic intensity.\n\n"
       << "| target | device / kernel | problem | workgroups | rounds | matrix instructions | matrix "
          "cycles | ideal matrix us | L2 bytes | memory bytes | FLOP/byte | modelled us | TFLOP/s | % of "
          "peak | bound |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    std::map<std::string, std::vector<const Bench *>> byArch;
    for (const Bench *b : model) {
      if (b->skipped) {
        md << "| " << b->part(2) << " | " << b->message << " | " << b->part(3) << " |||||||||||||\n";
        continue;
      }
      byArch[b->part(2)].push_back(b);
      md << "| " << b->part(2) << " | " << b->label << " | " << b->part(3) << " | " << si(b->counter("workgroups"))
         << " | " << num(b->counter("rounds"), 0) << " | " << si(b->counter("matrix_instr")) << " | "
         << si(b->counter("matrix_cycles")) << " | " << num(b->counter("matrix_us"), 1) << " | "
         << si(b->counter("global_bytes"), "B") << " | " << si(b->counter("memory_bytes"), "B") << " | "
         << num(b->counter("intensity"), 0) << " | " << num(b->counter("modelled_us"), 1) << " | "
         << num(b->counter("modelled_tflops"), 1) << " | " << num(b->counter("pct_peak"), 1) << "% | "
         << (b->counter("memory_bound", 0) ? "memory" : "compute") << " |\n";
    }
    md << "\n";
    for (const auto &[arch, points] : byArch) {
      std::string file = "roofline-" + arch + ".svg";
      svgs[file] = rooflineSvg(arch, points);
      md << "![roofline " << arch << "](" << svgLinkOpt << "/" << file << ")\n";
    }
    md << "\n";
  }

  // ---- GPU and vendor libraries
  std::vector<const Bench *> gpu;
  for (const char *f : {"BM_GpuGemm", "BM_RocblasGemm", "BM_HipblasltGemm"})
    for (const Bench *b : d.family(f))
      gpu.push_back(b);
  if (!gpu.empty()) {
    md << "## Measured on a GPU\n\n"
       << "tilec's GEMM timed through `tilec::Device` (median of launches), and the same problem through "
          "rocBLAS and hipBLASLt, side by side. An entry that could not run says why; nothing here is "
          "estimated.\n\n"
       << "| what | target | problem | median us | TFLOP/s | GB/s | status |\n|---|---|---|---|---|---|---|\n";
    for (const Bench *b : gpu) {
      std::string what = b->part(0) == "BM_GpuGemm" ? "tilec gemm" : b->part(0) == "BM_RocblasGemm" ? "rocBLAS" : "hipBLASLt";
      md << "| " << what << " | " << b->part(2) << " | " << b->part(3) << " | ";
      if (b->skipped)
        md << "- | - | - | " << b->message << " |\n";
      else
        md << num(b->counter("median_us"), 1) << " | " << num(b->counter("tflops"), 1) << " | "
           << num(b->counter("gbs"), 0) << " | measured: " << b->label << " |\n";
    }
    md << "\n";
  }

  // ---- emulator
  if (std::vector<const Bench *> emu = d.family("BM_EmuGemmBf16"); !emu.empty()) {
    md << "## Emulator throughput\n\n"
       << "The CPU wavefront emulator running the default GEMM (gfx942, bf16 -> f32), N x N x N "
          "(`tilec_bench_emu`).\n\n"
       << "| N | iterations | ms per launch | lane instructions/s | FLOP/s | bank-conflict cycles |\n"
       << "|---|---|---|---|---|---|\n";
    for (const Bench *b : emu)
      md << "| " << b->part(1) << " | " << num(b->iterations, 0) << " | "
         << (b->skipped ? b->message : num(toMs(*b), 1)) << " | " << si(b->counter("lane_instr_per_s")) << " | "
         << si(b->counter("flop_per_s")) << " | " << si(b->counter("bank_conflict_cycles")) << " |\n";
    md << "\n";
  }

  md << "## Reproduce\n\n"
     << "```sh\n"
     << "ninja -C build tilec_bench_compile tilec_bench_model tilec_bench_emu tilec-bench-report\n"
     << "build/bin/tilec_bench_compile --benchmark_out=compile.json --benchmark_out_format=json\n"
     << "build/bin/tilec_bench_model --benchmark_out=model.json --benchmark_out_format=json\n"
     << "build/bin/tilec_bench_emu --benchmark_out=emu.json --benchmark_out_format=json\n"
     << "build/bin/tilec-bench-report compile.json model.json emu.json --md=docs/performance.md "
        "--svg-dir=docs/perf --notes=docs/perf/notes.md\n"
     << "```\n";
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "tilec-bench-report: benchmark JSON -> Markdown + SVG\n");
  Data data;
  for (const std::string &in : inputsOpt)
    if (Error e = readFile(in, data)) {
      errs() << "tilec-bench-report: error: " << toString(std::move(e)) << "\n";
      return 1;
    }
  std::string notes;
  if (!notesOpt.empty()) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(notesOpt);
    if (!buf) {
      errs() << "tilec-bench-report: error: cannot read " << notesOpt << ": " << buf.getError().message() << "\n";
      return 1;
    }
    notes = (*buf)->getBuffer().str();
  }
  std::string md;
  raw_string_ostream os(md);
  std::map<std::string, std::string> svgs;
  writeReport(data, notes, os, svgs);
  if (std::error_code ec = sys::fs::create_directories(svgDirOpt)) {
    errs() << "tilec-bench-report: error: cannot create " << svgDirOpt << ": " << ec.message() << "\n";
    return 1;
  }
  auto write = [](const std::string &path, const std::string &text) {
    std::error_code ec;
    raw_fd_ostream out(path, ec);
    if (ec) {
      errs() << "tilec-bench-report: error: cannot write " << path << ": " << ec.message() << "\n";
      return false;
    }
    out << text;
    return true;
  };
  for (const auto &[name, text] : svgs) {
    SmallString<256> path(svgDirOpt);
    sys::path::append(path, name);
    if (!write(std::string(path), text))
      return 1;
  }
  return write(mdOpt, md) ? 0 : 1;
}
