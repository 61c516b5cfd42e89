// In-process clang 19 + lld: the route of
//   clang -x hip --offload-arch=<arch> --offload-device-only --no-gpu-bundle-output
//         -nogpulib -nogpuinc -O3 -std=c++17 k.hip -o k.co
// (toolchain.md), run as library calls. The driver plans the two jobs (cc1,
// then lld); the cc1 job runs through CompilerInstance + EmitObjAction with the
// source and headers in an in-memory file system and the object in memory; the
// link job runs through lld::lldMain in a private temporary folder.

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
#include "clang/Frontend/TextDiagnosticPrinter.h"
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

#include <mutex>

LLD_HAS_DRIVER(elf)

namespace tilec::jit {

std::string clangIdentity() { return "clang " CLANG_VERSION_STRING " (in-process)"; }

namespace detail {
namespace {

/// Folder of the in-memory file system that holds the source and the headers.
constexpr llvm::StringLiteral kVirtualDir = "/tilec-jit";

void initializeAMDGPUBackend() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
  });
}

/// Backend flags of every in-process compile (before the request's options).
/// `-enable-gvn-memdep=false`: GVN stops looking for redundant loads through
/// memory dependences. The emitted code never loads a value twice (the tile
/// primitives keep values in registers), so the search finds nothing: the code
/// objects of every shipped kernel on every target are byte-identical with and
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

llvm::Expected<CodeObject> compileWithClang(const CompileRequest &request) {
  initializeAMDGPUBackend();

  // Source and headers live in memory, over the real file system (for the
  // builtin headers of the resource folder).
  auto memoryFS = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  auto fs = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  fs->pushOverlay(memoryFS);
  auto addVirtual = [&](llvm::StringRef name, llvm::StringRef contents) {
    llvm::SmallString<256> p(kVirtualDir);
    llvm::sys::path::append(p, name);
    memoryFS->addFile(p, 0, llvm::MemoryBuffer::getMemBufferCopy(contents, p));
    return std::string(p);
  };
  for (const auto &[name, contents] : request.headers)
    addVirtual(name, contents);
  std::string sourcePath = addVirtual(sourceFileName(request), request.source);

  TempDir temp;
  if (llvm::Error err = temp.create())
    return std::move(err);
  std::string outputPath = temp.file("kernel.co");

  // Everything clang and lld print goes to `log`.
  std::string log;
  llvm::raw_string_ostream logOS(log);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> driverDiagOpts(new clang::DiagnosticOptions);
  clang::TextDiagnosticPrinter driverPrinter(logOS, driverDiagOpts.get());
  clang::DiagnosticsEngine driverDiags(
      llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs>(new clang::DiagnosticIDs), driverDiagOpts,
      &driverPrinter, /*ShouldOwnClient=*/false);

  // 1. The driver plans the jobs.
  std::string archFlag = "--offload-arch=" + request.target->arch;
  std::string includeFlag = ("-I" + kVirtualDir).str();
  // The compilation-unit id names a symbol (__hip_cuid_*) in the code object;
  // the driver picks a random one. Derive it from the request instead, so equal
  // requests give byte-identical code objects.
  std::string cuidFlag =
      "-cuid=" + llvm::utohexstr(llvm::xxh3_64bits(request.kernelName + "\n" + request.source),
                                 /*LowerCase=*/true);
  std::vector<const char *> args = {"clang",     "-x",          "hip",
                                    archFlag.c_str(), "--offload-device-only",
                                    "--no-gpu-bundle-output",   "-nogpulib",
                                    "-nogpuinc", "-resource-dir", TILEC_CLANG_RESOURCE_DIR,
                                    includeFlag.c_str(), cuidFlag.c_str()};
  for (const char *opt : kDefaultOptions)
    args.push_back(opt);
  for (const char *opt : kBackendFlags)
    args.push_back(opt);
  for (const std::string &opt : request.options)
    args.push_back(opt.c_str());
  args.insert(args.end(), {sourcePath.c_str(), "-o", outputPath.c_str()});

  clang::driver::Driver driver(TILEC_CLANG_EXECUTABLE, llvm::sys::getDefaultTargetTriple(),
                               driverDiags, "tilec JIT", fs);
  driver.setCheckInputsExist(false);
  driver.ResourceDir = TILEC_CLANG_RESOURCE_DIR;
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(args));
  if (!compilation || driverDiags.hasErrorOccurred())
    return compileError(request, "plan the compile of", log);
  struct CleanTempFiles {
    clang::driver::Compilation &c;
    ~CleanTempFiles() { c.CleanupFileList(c.getTempFiles()); }
  } cleanTempFiles{*compilation};

  const clang::driver::Command *cc1Job = nullptr;
  const clang::driver::Command *linkJob = nullptr;
  for (const clang::driver::Command &job : compilation->getJobs()) {
    const llvm::opt::ArgStringList &jobArgs = job.getArguments();
    if (!jobArgs.empty() && llvm::StringRef(jobArgs.front()) == "-cc1")
      cc1Job = &job;
    else if (llvm::sys::path::filename(job.getExecutable()).contains("lld"))
      linkJob = &job;  // AMDGCN::Linker: lld -flavor gnu
  }
  if (!cc1Job || !linkJob || cc1Job->getOutputFilenames().size() != 1)
    return compileError(request, "plan the compile of",
                        "unexpected driver jobs (expected one cc1 job and one link job)");

  // 2. cc1: HIP -> AMDGPU object, in memory.
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(
          *invocation, llvm::ArrayRef(cc1Job->getArguments()).drop_front(), driverDiags,
          TILEC_CLANG_EXECUTABLE))
    return compileError(request, "configure the compile of", log);
  invocation->getFrontendOpts().DisableFree = false;
  invocation->getCodeGenOpts().DisableFree = false;
  if (llvm::Error err = applyBackendFlags(invocation->getFrontendOpts().LLVMArgs))
    return std::move(err);

  clang::CompilerInstance instance;
  instance.setInvocation(invocation);
  clang::TextDiagnosticPrinter printer(logOS, &invocation->getDiagnosticOpts());
  instance.createDiagnostics(&printer, /*ShouldOwnClient=*/false);
  instance.createFileManager(fs);
  instance.setVerboseOutputStream(logOS);  // "N errors generated" goes to the log
  llvm::SmallString<0> object;
  instance.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(object));
  clang::EmitObjAction action;
  bool compiled = instance.ExecuteAction(action);
  printer.finish();
  if (!compiled || instance.getDiagnostics().hasErrorOccurred())
    return compileError(request, "compile", log);

  // 3. lld: object -> code object. The object goes where the driver planned it.
  const std::string &objectPath = cc1Job->getOutputFilenames().front();
  {
    std::error_code ec;
    llvm::raw_fd_ostream objectOS(objectPath, ec);
    if (ec)
      return compileError(request, "write the object of", ec.message());
    objectOS << object;
  }
  std::vector<const char *> linkArgs = {"ld.lld"};
  for (const char *arg : linkJob->getArguments())
    linkArgs.push_back(arg);
  {
    std::lock_guard<std::mutex> lock(lldMutex());
    static bool lldUsable = true;
    if (!lldUsable)
      return compileError(request, "link",
                          "lld failed earlier in a way that forbids another link in this process");
    lld::Result result =
        lld::lldMain(linkArgs, logOS, logOS, {{lld::Gnu, &lld::elf::link}});
    lldUsable = result.canRunAgain;
    if (result.retCode != 0)
      return compileError(request, "link", log);
  }

  auto buffer = llvm::MemoryBuffer::getFile(outputPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return compileError(request, "read the code object of", buffer.getError().message());

  CodeObject code;
  code.elf.assign((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  code.compiler = JitKind::Clang;
  code.compilerIdentity = clangIdentity();
  code.log = std::move(log);
  return code;
}

} // namespace detail
} // namespace tilec::jit
