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
#include "BenchReport.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
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
using namespace tilec::benchreport;

namespace {

cl::OptionCategory category("tilec-bench-report options");
cl::list<std::string> inputsOpt(cl::Positional, cl::desc("<benchmark JSON>..."), cl::OneOrMore,
                                cl::cat(category));
cl::opt<std::string> mdOpt("md", cl::desc("Markdown output"), cl::value_desc("file"), cl::Required,
                           cl::cat(category));
cl::opt<std::string> svgDirOpt("svg-dir", cl::desc("Folder for the SVG plots"), cl::value_desc("dir"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> svgLinkOpt("svg-link", cl::desc("How the Markdown file refers to --svg-dir"),
                                cl::value_desc("path"), cl::init("perf"), cl::cat(category));
cl::opt<std::string> notesOpt("notes",
                              cl::desc("Markdown written by hand (the analysis of the numbers), placed "
                                       "after the targets"),
                              cl::value_desc("file"), cl::init(""), cl::cat(category));
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
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
  writeReport(data, notes, svgLinkOpt, os, svgs);
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
