// tilec-bench-report's pieces: the benchmark entries read from the JSON
// (BenchData.cpp), number formatting, the SVG plots (Svg.cpp) and the Markdown
// report (Markdown.cpp); tilec-bench-report.cpp holds the options and main.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace tilec::benchreport {

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

/// Appends the benchmarks of the Google Benchmark JSON file `path` to `data`.
llvm::Error readFile(const std::string &path, Data &data);

// ---------------------------------------------------------------- formatting

/// `v` with `digits` decimals; "-" for NaN.
std::string num(double v, int digits = 1);
/// 1234567 -> "1.23 M" style, for counts and bytes.
std::string si(double v, const char *unit = "");
std::string xmlEscape(llvm::StringRef s);
/// The benchmark's time in milliseconds.
double toMs(const Bench &b);

// ---------------------------------------------------------------- SVG

struct Stage {
  const char *counter;
  const char *name;
  const char *color;
};
inline const Stage kStages[] = {
    {"dsl_ms", "DSL build", "#8dd3c7"},   {"context_ms", "MLIR context", "#ffffb3"},
    {"parse_ms", "parse", "#bebada"},     {"pipeline_ms", "pass pipeline", "#fb8072"},
    {"emit_ms", "HIP emission", "#80b1d3"}, {"jit_ms", "JIT (clang/hipRTC) or cache", "#fdb462"},
    {"report_ms", "report", "#b3de69"},   {"other_ms", "other", "#d9d9d9"},
};

/// "cold", "warm" (compiled-kernel cache hit) or "warm code object" (only the
/// code object cached) for a compile benchmark.
std::string compileKind(const Bench &b);
bool isCompileBench(const Bench &b);
/// Horizontal stacked bars, one per cold/warm compile benchmark.
std::string compileSvg(const std::vector<const Bench *> &rows);
/// Log-log roofline of one target: the memory and compute ceilings, and the
/// modelled points (FLOP per byte of memory traffic, modelled TFLOP/s).
std::string rooflineSvg(const std::string &arch, const std::vector<const Bench *> &points);

// ---------------------------------------------------------------- Markdown

/// Writes the report to `md` (`notes` copied after the targets table) and the
/// SVG plots it links (under `svgLink`) into `svgs`, by file name.
void writeReport(const Data &d, const std::string &notes, const std::string &svgLink, llvm::raw_ostream &md,
                 std::map<std::string, std::string> &svgs);

} // namespace tilec::benchreport
