// In-process clang 19 + lld: the route of
//   clang -x hip --offload-arch=<arch> --offload-device-only --no-gpu-bundle-output
//         -nogpulib -nogpuinc -O3 -std=c++17 k.hip -o k.co
// (docs/design.md section 5), run as library calls. The driver plans the two jobs (cc1,
// then lld); the cc1 job runs through CompilerInstance + EmitObjAction with the
// source and headers in an in-memory file system and the object in memory; the
// link job runs through lld::lldMain in a private temporary folder.
// NVIDIA targets take the CUDA route instead,
//   clang -x cuda --cuda-gpu-arch=<arch> --cuda-device-only -nocudainc -nocudalib -S
// (cc1 with EmitAssemblyAction: PTX in memory), and the CUDA toolkit's
// nvJitLink, loaded at run time, assembles the PTX into a cubin (NvJitLink.cpp).

#include "JIT/Compilers.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/Version.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Driver/Compilation.h"
#include "clang/Driver/Driver.h"
#include "clang/Driver/Job.h"
#include "clang/Driver/Tool.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "lld/Common/Driver.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdlib>
#include <map>
#include <mutex>

LLD_HAS_DRIVER(elf)

namespace tilec::jit {

std::string clangIdentity() { return "clang " CLANG_VERSION_STRING " (in-process)"; }

std::string clangFullVersion() { return clang::getClangFullVersion(); }

namespace detail {
namespace {

/// Folder of the in-memory file system that holds the source and the headers.
constexpr llvm::StringLiteral kVirtualDir = "/tilec-jit";

void initializeBackends() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// The PTX ISA version NVIDIA compiles use: 8.0 (CUDA 12.0), the first with
/// every sm_90a instruction the prelude uses; without a CUDA installation
/// clang would otherwise assume one too old for the warp-synchronous builtins.
constexpr const char *kPtxFeature = "--cuda-feature=+ptx80";

/// Backend flags of every in-process compile (before the request's options).
/// `-enable-gvn-memdep=false`: GVN stops looking for redundant loads through
/// memory dependences. The emitted code never loads a value twice (the tile
/// primitives keep values in registers), so the search finds nothing: the
/// assembly of every shipped kernel on every target is identical with and
/// without it (tests/lit/tilec/jit-backend-flags.test checks two), and it was
/// 5% of clang's work on the default GEMM (docs/perf/notes.md).
constexpr const char *kBackendFlags[] = {"-mllvm", "-enable-gvn-memdep=false"};

/// Applies the driver's `-mllvm` flags (e.g. -amdgpu-internalize-symbols) to
/// the registered cl::opts. cl::ParseCommandLineOptions is not used: it would
/// also validate the host tool's own (already parsed) options. Each distinct
/// flag is applied once per process; they are process-wide backend settings.
llvm::Error applyBackendFlags(llvm::ArrayRef<std::string> flags) {
  static std::mutex mutex;
  static llvm::StringSet<> applied;
  std::lock_guard<std::mutex> lock(mutex);
  llvm::StringMap<llvm::cl::Option *> &registered = llvm::cl::getRegisteredOptions();
  for (const std::string &flag : flags) {
    if (applied.contains(flag))
      continue;
    llvm::StringRef text = llvm::StringRef(flag).ltrim('-');
    auto [name, value] = text.split('=');
    auto it = registered.find(name);
    if (it == registered.end())
      return llvm::createStringError("clang: unknown backend flag -mllvm %s", flag.c_str());
    if (it->second->addOccurrence(0, name, value))
      return llvm::createStringError("clang: bad backend flag -mllvm %s", flag.c_str());
    applied.insert(flag);
  }
  return llvm::Error::success();
}

/// lld keeps its state in globals: one link at a time per process.
std::mutex &lldMutex() {
  static std::mutex mutex;
  return mutex;
}

/// Removes a temporary folder and everything directly in it.
class TempDir {
public:
  llvm::Error create() {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tilec-jit", path_))
      return llvm::createStringError(ec, "cannot create a temporary folder: %s",
                                     ec.message().c_str());
    return llvm::Error::success();
  }
  ~TempDir() {
    if (path_.empty())
      return;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path_, ec), end; !ec && it != end;
         it.increment(ec))
      llvm::sys::fs::remove(it->path());
    llvm::sys::fs::remove(path_);
  }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(path_);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

private:
  llvm::SmallString<256> path_;
};

llvm::Error compileError(const CompileRequest &request, llvm::StringRef stage,
                         llvm::StringRef log) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "clang (in-process) failed to %s '%s' for %s:\n%s",
                                 stage.str().c_str(), request.kernelName.c_str(),
                                 request.target->arch.c_str(), log.str().c_str());
}

} // namespace

std::string sourceFileName(const CompileRequest &request) {
  return (request.kernelName.empty() ? std::string("kernel") : request.kernelName) + ".hip";
}

namespace {

/// The request's files in memory, over the real file system (for the builtin
/// headers of the resource folder).
class VirtualFiles {
public:
  /// The file system with `headers` in it.
  explicit VirtualFiles(llvm::ArrayRef<std::pair<std::string, std::string>> headers)
      : memory_(llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>()),
        fs_(llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
            llvm::vfs::getRealFileSystem())) {
    fs_->pushOverlay(memory_);
    for (const auto &[name, contents] : headers)
      add(name, contents);
  }
  /// Where file `name` lives (in kVirtualDir).
  static std::string pathOf(llvm::StringRef name) {
    llvm::SmallString<256> p(kVirtualDir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  /// Adds `name` and returns its path.
  std::string add(llvm::StringRef name, std::unique_ptr<llvm::MemoryBuffer> contents) {
    std::string p = pathOf(name);
    memory_->addFile(p, 0, std::move(contents));
    return p;
  }
  std::string add(llvm::StringRef name, llvm::StringRef contents) {
    return add(name, llvm::MemoryBuffer::getMemBufferCopy(contents, name));
  }
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs() const { return fs_; }

private:
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory_;
  llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> fs_;
};

/// One compile's driver plan: its cc1 job as a CompilerInvocation and its
/// link job. Everything clang and lld print goes to `log`.
class ClangRun {
public:
  ClangRun(const CompileRequest &request, const VirtualFiles &files)
      : request_(request), files_(files), logOS_(log_),
        driverDiagOpts_(new clang::DiagnosticOptions),
        driverPrinter_(logOS_, driverDiagOpts_.get()),
        driverDiags_(llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs>(new clang::DiagnosticIDs),
                     driverDiagOpts_, &driverPrinter_, /*ShouldOwnClient=*/false) {}

  ~ClangRun() {
    if (compilation_)
      compilation_->CleanupFileList(compilation_->getTempFiles());
  }

  /// Plans `clang <flags> <inputPath> -o <outputPath>` and configures its cc1 job.
  /// AMD: HIP device code to an object, linked by lld into a code object.
  /// NVIDIA: CUDA device code to PTX (-S; nvJitLink makes the cubin), without
  /// the CUDA toolkit's headers or libraries, and with no CUDA installation
  /// (--cuda-path names the empty virtual folder), so the PTX version is
  /// clang's default for the arch whatever toolkit the machine has.
  llvm::Error plan(const std::string &inputPath, const std::string &outputPath) {
    const bool nvidia = request_.target->vendor == Vendor::NVIDIA;
    std::string archFlag = (nvidia ? "--cuda-gpu-arch=" : "--offload-arch=") + request_.target->arch;
    std::string cudaPathFlag = ("--cuda-path=" + kVirtualDir).str();
    std::string includeFlag = ("-I" + kVirtualDir).str();
    // The compilation-unit id names a symbol (__hip_cuid_*) in the code
    // object; the driver picks a random one. Derive it from the request
    // instead, so equal requests give byte-identical code objects.
    std::string cuidFlag =
        "-cuid=" + llvm::utohexstr(llvm::xxh3_64bits(request_.kernelName + "\n" + request_.source),
                                   /*LowerCase=*/true);
    std::vector<const char *> args;
    if (nvidia)
      args = {"clang", "-x", "cuda", archFlag.c_str(), "--cuda-device-only", "-nocudainc", "-nocudalib",
              cudaPathFlag.c_str(), kPtxFeature, "-S"};
    else
      args = {"clang", "-x", "hip", archFlag.c_str(), "--offload-device-only", "--no-gpu-bundle-output",
              "-nogpulib", "-nogpuinc"};
    args.insert(args.end(), {"-resource-dir", TILEC_CLANG_RESOURCE_DIR, includeFlag.c_str(), cuidFlag.c_str()});
    for (const char *opt : kDefaultOptions)
      args.push_back(opt);
    for (const char *opt : kBackendFlags)
      args.push_back(opt);
    for (const std::string &opt : request_.options)
      args.push_back(opt.c_str());
    args.insert(args.end(), {inputPath.c_str(), "-o", outputPath.c_str()});

    clang::driver::Driver driver(TILEC_CLANG_EXECUTABLE, llvm::sys::getDefaultTargetTriple(),
                                 driverDiags_, "tilec JIT", files_.fs());
    driver.setCheckInputsExist(false);
    driver.ResourceDir = TILEC_CLANG_RESOURCE_DIR;
    compilation_.reset(driver.BuildCompilation(args));
    if (!compilation_ || driverDiags_.hasErrorOccurred())
      return error("plan the compile of");
    for (const clang::driver::Command &job : compilation_->getJobs()) {
      const llvm::opt::ArgStringList &jobArgs = job.getArguments();
      if (!jobArgs.empty() && llvm::StringRef(jobArgs.front()) == "-cc1")
        cc1Job_ = &job;
      else if (llvm::sys::path::filename(job.getExecutable()).contains("lld"))
        linkJob_ = &job;  // AMDGCN::Linker: lld -flavor gnu
    }
    if (!cc1Job_ || (!nvidia && !linkJob_) || cc1Job_->getOutputFilenames().size() != 1)
      return error("plan the compile of", nvidia ? "unexpected driver jobs (expected one cc1 job)"
                                                 : "unexpected driver jobs (expected one cc1 job and one link job)");

    invocation_ = std::make_shared<clang::CompilerInvocation>();
    if (!clang::CompilerInvocation::CreateFromArgs(
            *invocation_, llvm::ArrayRef(cc1Job_->getArguments()).drop_front(), driverDiags_,
            TILEC_CLANG_EXECUTABLE))
      return error("configure the compile of");
    invocation_->getFrontendOpts().DisableFree = false;
    invocation_->getCodeGenOpts().DisableFree = false;
    return applyBackendFlags(invocation_->getFrontendOpts().LLVMArgs);
  }

  clang::CompilerInvocation &invocation() { return *invocation_; }

  /// Runs the cc1 job with `action`; `output` receives what the action writes
  /// to the output stream (EmitObjAction: the object).
  llvm::Error runFrontend(clang::FrontendAction &action, llvm::StringRef stage,
                          llvm::SmallVectorImpl<char> *output) {
    clang::CompilerInstance instance;
    instance.setInvocation(invocation_);
    clang::TextDiagnosticPrinter printer(logOS_, &invocation_->getDiagnosticOpts());
    instance.createDiagnostics(&printer, /*ShouldOwnClient=*/false);
    instance.createFileManager(files_.fs());
    instance.setVerboseOutputStream(logOS_);  // "N errors generated" goes to the log
    if (output)
      instance.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(*output));
    bool ok = instance.ExecuteAction(action);
    printer.finish();
    if (!ok || instance.getDiagnostics().hasErrorOccurred())
      return error(stage);
    return llvm::Error::success();
  }

  /// lld: `object` -> the code object at the planned output path.
  llvm::Error link(llvm::StringRef object) {
    // The object goes where the driver planned it.
    const std::string &objectPath = cc1Job_->getOutputFilenames().front();
    {
      std::error_code ec;
      llvm::raw_fd_ostream objectOS(objectPath, ec);
      if (ec)
        return error("write the object of", ec.message());
      objectOS << object;
    }
    std::vector<const char *> linkArgs = {"ld.lld"};
    for (const char *arg : linkJob_->getArguments())
      linkArgs.push_back(arg);
    std::lock_guard<std::mutex> lock(lldMutex());
    static bool lldUsable = true;
    if (!lldUsable)
      return error("link", "lld failed earlier in a way that forbids another link in this process");
    lld::Result result = lld::lldMain(linkArgs, logOS_, logOS_, {{lld::Gnu, &lld::elf::link}});
    lldUsable = result.canRunAgain;
    if (result.retCode != 0)
      return error("link");
    return llvm::Error::success();
  }

  std::string &log() { return log_; }

  llvm::Error error(llvm::StringRef stage) { return compileError(request_, stage, log_); }
  llvm::Error error(llvm::StringRef stage, llvm::StringRef detail) {
    return compileError(request_, stage, detail);
  }

private:
  const CompileRequest &request_;
  const VirtualFiles &files_;
  std::string log_;
  llvm::raw_string_ostream logOS_;
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> driverDiagOpts_;
  clang::TextDiagnosticPrinter driverPrinter_;
  clang::DiagnosticsEngine driverDiags_;
  std::unique_ptr<clang::driver::Compilation> compilation_;
  const clang::driver::Command *cc1Job_ = nullptr;
  const clang::driver::Command *linkJob_ = nullptr;
  std::shared_ptr<clang::CompilerInvocation> invocation_;
};

llvm::Expected<std::vector<char>> readWholeFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read %s: %s", path.c_str(),
                                   buffer.getError().message().c_str());
  return std::vector<char>((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
}

/// Options a precompiled header built with the defaults serves: they change
/// code generation only, never what the header's text means.
bool servedByPrecompiledHeader(llvm::ArrayRef<std::string> options) {
  return llvm::all_of(options, [](const std::string &opt) {
    return opt == "-O2" || opt == "-O3" || opt == "-fno-slp-vectorize";
  });
}

/// A precompiled header read from disk.
struct PrecompiledHeader {
  std::string path;
  std::vector<char> bytes;
};

/// Process-wide memory of the precompiled headers read from disk, by path.
/// A missing or unusable file is remembered too (as null), so it is looked
/// for, and reported, once.
class PrecompiledHeaders {
public:
  static std::shared_ptr<const PrecompiledHeader> load(const std::string &path) {
    std::lock_guard<std::mutex> lock(mutex());
    auto [it, inserted] = loaded().try_emplace(path);
    if (inserted) {
      if (llvm::Expected<std::vector<char>> bytes = readWholeFile(path))
        it->second = std::make_shared<const PrecompiledHeader>(PrecompiledHeader{path, std::move(*bytes)});
      else
        llvm::consumeError(bytes.takeError());
    }
    return it->second;
  }
  static void markUnusable(const std::string &path) {
    std::lock_guard<std::mutex> lock(mutex());
    loaded()[path] = nullptr;
  }

private:
  static std::mutex &mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<std::string, std::shared_ptr<const PrecompiledHeader>> &loaded() {
    static std::map<std::string, std::shared_ptr<const PrecompiledHeader>> m;
    return m;
  }
};

/// Compiles `request` to a code object; with `pch`, the request's first header
/// comes from that precompiled header instead of being parsed.
llvm::Expected<CodeObject> compileOnce(const CompileRequest &request, const PrecompiledHeader *pch) {
  VirtualFiles files(request.headers);
  std::string sourcePath = files.add(sourceFileName(request), request.source);
  std::string pchPath;
  if (pch)
    pchPath = files.add(llvm::sys::path::filename(pch->path),
                        llvm::MemoryBuffer::getMemBuffer(
                            llvm::StringRef(pch->bytes.data(), pch->bytes.size()), "pch",
                            /*RequiresNullTerminator=*/false));

  TempDir temp;
  if (llvm::Error err = temp.create())
    return std::move(err);
  std::string outputPath = temp.file(request.target->vendor == Vendor::NVIDIA ? "kernel.ptx" : "kernel.co");

  ClangRun run(request, files);
  if (llvm::Error err = run.plan(sourcePath, outputPath))
    return std::move(err);
  if (pch)
    run.invocation().getPreprocessorOpts().ImplicitPCHInclude = pchPath;

  CodeObject code;
  if (request.target->vendor == Vendor::NVIDIA) {
    // cc1: CUDA -> PTX, in memory; then nvJitLink: PTX -> cubin.
    llvm::SmallString<0> ptx;
    clang::EmitAssemblyAction action;
    if (llvm::Error err = run.runFrontend(action, "compile", &ptx))
      return std::move(err);
    llvm::Expected<Cubin> cubin = linkPtx(ptx, *request.target, request.kernelName);
    if (!cubin)
      return run.error("assemble the PTX of", llvm::toString(cubin.takeError()));
    code.elf = std::move(cubin->bytes);
    code.assembly = std::string(ptx);
    code.assemblerLog = std::move(cubin->infoLog);
  } else {
    // cc1: HIP -> AMDGPU object, in memory; then lld: object -> code object.
    llvm::SmallString<0> object;
    clang::EmitObjAction action;
    if (llvm::Error err = run.runFrontend(action, "compile", &object))
      return std::move(err);
    if (llvm::Error err = run.link(object))
      return std::move(err);
    llvm::Expected<std::vector<char>> elf = readWholeFile(outputPath);
    if (!elf)
      return run.error("read the code object of", llvm::toString(elf.takeError()));
    code.elf = std::move(*elf);
  }
  code.compiler = JitKind::Clang;
  code.compilerIdentity = clangIdentity();
  code.log = std::move(run.log());
  if (pch)
    code.precompiledHeader = pch->path;
  return code;
}

} // namespace

llvm::Expected<CodeObject> compileWithClang(const CompileRequest &request) {
  initializeBackends();
  std::shared_ptr<const PrecompiledHeader> pch;
  std::string pchName = precompiledHeaderName(request);
  llvm::SmallString<256> pchPath(precompiledHeaderDir());
  if (!pchName.empty() && !pchPath.empty() && servedByPrecompiledHeader(request.options)) {
    llvm::sys::path::append(pchPath, pchName);
    pch = PrecompiledHeaders::load(std::string(pchPath));
  }
  if (!pch)
    return compileOnce(request, nullptr);

  llvm::Expected<CodeObject> code = compileOnce(request, pch.get());
  if (code)
    return code;
  // A precompiled header clang cannot read (damaged, or from another clang
  // build) must not fail the compile: say so (once per process) and parse the
  // header instead, from now on.
  std::string message = llvm::toString(code.takeError());
  if (!llvm::StringRef(message).contains(pchName))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", message.c_str());
  PrecompiledHeaders::markUnusable(pch->path);
  llvm::Expected<CodeObject> parsed = compileOnce(request, nullptr);
  if (parsed)
    parsed->log = "tilec: warning: precompiled header " + pch->path +
                  " is not usable; the header was parsed instead:\n" + message + "\n" + parsed->log;
  return parsed;
}

} // namespace detail

std::string precompiledHeaderName(const CompileRequest &request) {
  using namespace detail;
  if (request.headers.empty() || !request.target)
    return "";
  const auto &[name, contents] = request.headers.front();
  std::string recipe = clangIdentity() + "\n" + request.target->arch + "\n" + name + "\n";
  for (const char *opt : kDefaultOptions)
    recipe += std::string(opt) + "\n";
  for (const char *opt : kBackendFlags)
    recipe += std::string(opt) + "\n";
  recipe += contents;
  return (llvm::sys::path::stem(name) + "-" + request.target->arch + "-" +
          llvm::utohexstr(llvm::xxh3_64bits(recipe), /*LowerCase=*/true) + ".pch")
      .str();
}

llvm::Expected<std::vector<char>> precompileHeader(const CompileRequest &request) {
  using namespace detail;
  initializeBackends();
  if (request.headers.empty())
    return compileError(request, "precompile a header of", "the request has no header");
  VirtualFiles files(request.headers);
  std::string headerPath = VirtualFiles::pathOf(request.headers.front().first);

  TempDir temp;
  if (llvm::Error err = temp.create())
    return std::move(err);
  CompileRequest defaults = request;
  defaults.options.clear();  // built with the defaults; servedByPrecompiledHeader says for what
  ClangRun run(defaults, files);
  if (llvm::Error err = run.plan(headerPath, temp.file("unused.co")))
    return std::move(err);
  std::string pchPath = temp.file("header.pch");
  run.invocation().getFrontendOpts().ProgramAction = clang::frontend::GeneratePCH;
  run.invocation().getFrontendOpts().OutputFile = pchPath;
  clang::GeneratePCHAction action;
  if (llvm::Error err = run.runFrontend(action, "precompile a header of", nullptr))
    return std::move(err);
  return readWholeFile(pchPath);
}

std::string precompiledHeaderDir() {
  if (const char *dir = std::getenv("TILEC_PCH_DIR"))
    return dir;
  if (llvm::sys::fs::is_directory(TILEC_BUILD_PCH_DIR))
    return TILEC_BUILD_PCH_DIR;
  return TILEC_INSTALLED_PCH_DIR;
}
} // namespace tilec::jit
