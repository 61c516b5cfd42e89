// tilec-hashes: compiles every shipped kernel variant (Variants.h) for every
// target with the caches bypassed and records the SHA-256 of the emitted kernel
// source and of the code object (AMD: the code object ELF; NVIDIA: the PTX and
// the cubin), one line per kernel x target x parameters, sorted, under a header
// naming the toolchain. `--check FILE` compares with FILE and lists every
// variant whose hashes differ; `--write FILE` (re)writes it. The test
// `codeobjects.hashes` runs the check on tests/data/code-object-hashes.txt, so a
// change that alters a shipped kernel's code object is seen and must be
// recorded with a reason (docs/design.md, "Code-object hashes").

#include "Variants.h"

#include "JIT/CacheFiles.h"
#include "JIT/JIT.h"
#include "tilec/tilec.hpp"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>

using namespace llvm;

namespace {

cl::OptionCategory category("tilec-hashes options");
// Read once, right after parsing: the in-process linker resets every
// registered option's occurrences when it runs.
cl::opt<std::string> checkFileOpt("check", cl::desc("compare the hashes with FILE; exit 1 when any differs"),
                               cl::value_desc("FILE"), cl::cat(category));
cl::opt<std::string> writeFileOpt("write", cl::desc("write the hashes to FILE"), cl::value_desc("FILE"),
                               cl::cat(category));

std::string checkFile, writeFile;

/// The command that regenerates the data file, from the repository's root.
constexpr const char *kRegenerate = "build/bin/tilec-hashes --write tests/data/code-object-hashes.txt";

std::string sha256(StringRef bytes) { return toHex(SHA256::hash(arrayRefFromStringRef(bytes)), true); }

/// The toolchain the code objects depend on, as the header's "# name: value" lines.
std::vector<std::pair<std::string, std::string>> toolchain() {
  auto orNone = [](std::string s) { return s.empty() ? std::string("none") : s; };
  return {{"clang", tilec::jit::clangFullVersion()},
          {"hiprtc", orNone(tilec::jit::hipRTCIdentity())},
          {"nvjitlink", orNone(tilec::jit::nvJitLinkIdentity())}};
}

/// One variant's line: "<kernel> <arch> <params> <symbol> <jit> source=<sha> hsaco=<sha>"
/// (NVIDIA: "ptx=<sha> cubin=<sha>" for the code object). `key` is the part
/// up to the parameters, which names the variant.
struct Line {
  std::string key;
  std::string rest;
  std::string text() const { return key + " " + rest; }
};

/// Variants that record the same kernel for the same target are the same
/// compile: the first one's result, by (arch, recorded kernel), serves the others.
using Memo = std::map<std::pair<std::string, std::string>, std::string>;

/// Compiles `v` (caches off) and hashes what came out.
tilec::Result<Line> hashVariant(const tilec::hashes::Variant &v, Memo &memo) {
  Line line{v.kernel + " " + v.arch + " " + v.paramsText(), ""};
  const tilec::kernels::KernelInfo *info = tilec::kernels::findKernel(v.kernel);
  if (!info)
    return tilec::Error{line.key + ": not a shipped kernel"};
  tilec::Result<tilec::Kernel> kernel = info->build(tilec::kernels::withTargetDefaults(*info, v.params, v.arch));
  if (!kernel)
    return tilec::Error{line.key + ": " + kernel.error()};
  const std::pair<std::string, std::string> memoKey{v.arch, kernel->toJson()};
  if (auto it = memo.find(memoKey); it != memo.end()) {
    line.rest = it->second;
    return line;
  }
  tilec::CompileOptions options;
  options.arch = v.arch;
  options.useCache = false;
  tilec::Result<tilec::CompiledKernel> ck = tilec::compile(*kernel, options);
  if (!ck)
    return tilec::Error{line.key + ": " + ck.error()};
  const StringRef object(ck->codeObject.data(), ck->codeObject.size());
  line.rest = ck->name + " " + ck->report.jit + " source=" + sha256(ck->hip);
  if (ck->assembly.empty())
    line.rest += " hsaco=" + sha256(object);
  else
    line.rest += " ptx=" + sha256(ck->assembly) + " cubin=" + sha256(object);
  memo.emplace(memoKey, line.rest);
  return line;
}

/// Every variant's line, sorted; nullopt after printing the failures. The
/// compiles run one after another: two at a time in one process were seen to
/// give a different code object between runs (the in-process compiler's
/// backend options are process-wide, and its linker resets them).
std::optional<std::vector<Line>> hashAll() {
  std::vector<Line> out;
  std::vector<std::string> errors;
  Memo memo;
  for (const tilec::hashes::Variant &v : tilec::hashes::shippedVariants()) {
    if (tilec::Result<Line> l = hashVariant(v, memo))
      out.push_back(std::move(*l));
    else
      errors.push_back(l.error());
  }
  if (!errors.empty()) {
    for (const std::string &e : errors)
      errs() << "tilec-hashes: error: " << e << "\n";
    return std::nullopt;
  }
  std::sort(out.begin(), out.end(), [](const Line &a, const Line &b) { return a.key < b.key; });
  return out;
}

std::string render(const std::vector<Line> &lines) {
  std::string s = "# SHA-256 of the emitted kernel source and the code object of every shipped kernel variant\n"
                  "# (tools/tilec-hashes/Variants.cpp) on every target, compiled with the caches bypassed.\n"
                  "# Line: kernel target params symbol jit source=... then hsaco=... (AMD) or ptx=... cubin=... (NVIDIA).\n"
                  "# Regenerate (from the repository's root, after a build): " +
                  std::string(kRegenerate) + "\n";
  for (const auto &[name, value] : toolchain())
    s += "# " + name + ": " + value + "\n";
  for (const Line &l : lines)
    s += l.text() + "\n";
  return s;
}

/// The header's toolchain lines and the variant lines (key -> rest) of a data file.
struct DataFile {
  std::map<std::string, std::string> toolchain;
  std::map<std::string, std::string> lines;
};

std::optional<DataFile> parse(StringRef text, const std::string &path) {
  DataFile f;
  SmallVector<StringRef> rows;
  text.split(rows, '\n', -1, false);
  size_t lineNo = 0;
  for (StringRef row : rows) {
    ++lineNo;
    if (row.consume_front("# ")) {
      auto [name, value] = row.split(": ");
      if (name == "clang" || name == "hiprtc" || name == "nvjitlink")
        f.toolchain[name.str()] = value.str();
      continue;
    }
    // key = the first three fields (kernel, target, params).
    size_t end = 0;
    for (int field = 0; field < 3 && end != StringRef::npos; ++field)
      end = row.find(' ', end + (field ? 1 : 0));
    if (end == StringRef::npos) {
      errs() << path << ":" << lineNo << ": error: expected 'kernel target params symbol jit hashes...'\n";
      return std::nullopt;
    }
    f.lines[row.take_front(end).str()] = row.drop_front(end + 1).str();
  }
  return f;
}

/// Field `name=` of a line's rest, or "".
std::string field(StringRef rest, StringRef name) {
  SmallVector<StringRef> parts;
  rest.split(parts, ' ');
  for (StringRef p : parts)
    if (p.consume_front(name) && p.consume_front("="))
      return p.str();
  return "";
}

/// What differs between two lines' rests, e.g. "hsaco changed (source unchanged)".
std::string describeChange(StringRef expected, StringRef actual) {
  std::string what;
  for (StringRef f : {"hsaco", "ptx", "cubin"})
    if (field(expected, f) != field(actual, f))
      what += (what.empty() ? "" : ", ") + f.str();
  what = what.empty() ? "code object unchanged" : what + " changed";
  what += field(expected, "source") == field(actual, "source") ? " (source unchanged)" : " (source changed)";
  SmallVector<StringRef> e, a;
  expected.split(e, ' ');
  actual.split(a, ' ');
  if (e[0] != a[0])
    what += "; symbol " + e[0].str() + " -> " + a[0].str();
  if (e.size() > 1 && a.size() > 1 && e[1] != a[1])
    what += "; jit " + e[1].str() + " -> " + a[1].str();
  return what;
}

int check(const std::vector<Line> &lines) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(checkFile);
  if (!buf) {
    errs() << "tilec-hashes: error: cannot read '" << checkFile << "': " << buf.getError().message()
           << "\nwrite it with: " << kRegenerate << "\n";
    return 1;
  }
  std::optional<DataFile> data = parse((*buf)->getBuffer(), checkFile);
  if (!data)
    return 1;
  int status = 0;
  for (const auto &[name, value] : toolchain()) {
    auto it = data->toolchain.find(name);
    std::string recorded = it == data->toolchain.end() ? "(not recorded)" : it->second;
    if (recorded != value) {
      errs() << "tilec-hashes: toolchain differs from " << checkFile << ": " << name << " is '" << value
             << "', the hashes were recorded with '" << recorded << "'\n";
      status = 1;
    }
  }
  std::map<std::string, std::string> actual;
  for (const Line &l : lines)
    actual[l.key] = l.rest;
  size_t changed = 0;
  for (const auto &[key, rest] : actual) {
    auto it = data->lines.find(key);
    if (it == data->lines.end()) {
      errs() << "  new:     " << key << " (" << rest << ")\n";
      ++changed;
    } else if (it->second != rest) {
      errs() << "  changed: " << key << ": " << describeChange(it->second, rest) << "\n";
      ++changed;
    }
  }
  for (const auto &[key, rest] : data->lines)
    if (!actual.count(key)) {
      errs() << "  gone:    " << key << "\n";
      ++changed;
    }
  if (changed) {
    errs() << "tilec-hashes: " << changed << " of " << actual.size() << " variants differ from " << checkFile
           << " (kernel target params: what differs)\n";
    status = 1;
  }
  if (status)
    errs() << "If the change is intended, regenerate with\n  " << kRegenerate
           << "\nand say in the commit message which kernels changed and why.\n";
  else
    outs() << "tilec-hashes: " << actual.size() << " variants match " << checkFile << "\n";
  return status;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "tilec-hashes: SHA-256 of every shipped kernel's source and code object\n\n"
                              "  tilec-hashes --write tests/data/code-object-hashes.txt\n"
                              "  tilec-hashes --check tests/data/code-object-hashes.txt\n");
  checkFile = checkFileOpt;
  writeFile = writeFileOpt;
  if (checkFile.empty() == writeFile.empty()) {
    errs() << "tilec-hashes: error: give one of --check FILE or --write FILE\n";
    return 2;
  }
  if (std::vector<std::string> missing = tilec::hashes::uncoveredKernels(); !missing.empty()) {
    errs() << "tilec-hashes: error: shipped kernels without a variant in tools/tilec-hashes/Variants.cpp:";
    for (const std::string &k : missing)
      errs() << " " << k;
    errs() << "\n";
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  std::optional<std::vector<Line>> lines = hashAll();
  if (!lines)
    return 1;
  errs() << "tilec-hashes: " << lines->size() << " variants hashed in "
         << format("%.1f", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count())
         << " s\n";
  if (!checkFile.empty())
    return check(*lines);
  if (std::string err = tilec::cachefiles::writeAtomically(writeFile, render(*lines)); !err.empty()) {
    errs() << "tilec-hashes: error: cannot write '" << writeFile << "': " << err << "\n";
    return 1;
  }
  outs() << "tilec-hashes: wrote " << lines->size() << " variants to " << writeFile << "\n";
  return 0;
}
