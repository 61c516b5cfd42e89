// The JIT: HIP C++ text -> AMDGPU code object, in process, with a persistent
// on-disk cache, plus the readers that turn a code object into a tilec::Report.
//
// Two compilers (docs/design.md section 5, "Compiler choice"):
//   - hipRTC, loaded with dlopen at run time (never linked), where the installed
//     ROCm knows the target (ROCm 5.x: gfx90a and older; ROCm >= 6: also gfx942,
//     gfx1151);
//   - clang 19 in process (Driver -> cc1 EmitObjAction -> lld), for every target.
// No subprocess is ever started. All entry points are thread-safe.
#pragma once

#include "Target/Target.h"
#include "tilec/report.hpp"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tilec::jit {

/// Which compiler `compile` should use. Auto: hipRTC where `hipRTCSupports`
/// says so, else clang.
enum class JitPreference { Auto, HipRTC, Clang };

struct CompileRequest {
  /// HIP C++ text. No ROCm headers are available on the clang path
  /// (-nogpuinc): use __attribute__((global)), __attribute__((shared)) and
  /// builtins, or a prelude from `headers`.
  std::string source;
  /// Virtual include files (name, contents), reachable with #include "name".
  std::vector<std::pair<std::string, std::string>> headers;
  /// Kernel symbol; names the virtual source file and appears in messages.
  std::string kernelName;
  const TargetInfo *target = nullptr;
  /// Extra compiler flags, appended after the defaults (-O3 -std=c++17).
  std::vector<std::string> options;
  JitPreference preference = JitPreference::Auto;
};

struct CacheOptions {
  bool enabled = true;
  /// Cache folder. Empty: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else
  /// $HOME/.cache/tilec.
  std::string dir;
  /// Receives cache warnings (corrupt entry removed, folder not writable).
  /// Empty: the line is written to stderr.
  std::function<void(const std::string &)> onWarning;
};

struct CodeObject {
  std::vector<char> elf;         ///< the AMDGPU code object (ELF, never a bundle); NVIDIA: the cubin (ELF)
  std::string assembly;          ///< NVIDIA: the PTX the cubin was assembled from (AMD: empty)
  std::string assemblerLog;      ///< NVIDIA: nvJitLink's resource report (registers, stack, spills)
  JitKind compiler = JitKind::Clang;
  std::string compilerIdentity;  ///< "hipRTC (ROCm 5.2.21153)", "clang 19.1.7 (in-process)"
  std::string log;               ///< compiler warnings of a successful compile
  std::string precompiledHeader; ///< the precompiled header a clang compile loaded, if any
  bool fromCache = false;
};

/// Compiles `request` (or loads it from the cache). A compile error is an
/// llvm::Error whose message carries the compiler's log (clang diagnostics with
/// file:line:col, or the hipRTC program log).
llvm::Expected<CodeObject> compile(const CompileRequest &request, const CacheOptions &cache);

/// True when a hipRTC library can be loaded and its ROCm version knows
/// `target.arch` (older hipRTCs crash on newer archs instead of failing).
bool hipRTCSupports(const TargetInfo &target);

/// The hipRTC in use, e.g. "hipRTC (ROCm 5.2.21153)"; empty when none loads.
std::string hipRTCIdentity();

/// "clang 19.1.7 (in-process)".
std::string clangIdentity();

/// The in-process clang's full version, as `clang --version` prints it
/// (vendor and package revision included: "Debian clang version 19.1.7 (...)").
std::string clangFullVersion();

/// The nvJitLink in use (its version is the CUDA toolkit's), e.g. "nvJitLink 13.0";
/// empty when none loads.
std::string nvJitLinkIdentity();

/// Precompiled headers (clang path only). A request whose first header has a
/// precompiled header in `precompiledHeaderDir()`, named
/// `precompiledHeaderName(request)`, and whose options are among -O2, -O3 and
/// -fno-slp-vectorize, loads that header instead of parsing it; the code
/// object is the same. A header clang cannot read is parsed instead, with a
/// warning in CodeObject::log. The build precompiles the device prelude for
/// every known target (tools/tilec-pch).
///
/// File name of the precompiled first header of `request`: its stem, the
/// arch and a hash of the clang version, the default flags and the header's
/// text, e.g. "tilec_prelude-gfx942-0123456789abcdef.pch". Empty without a
/// header or a target.
std::string precompiledHeaderName(const CompileRequest &request);
/// $TILEC_PCH_DIR, else the build tree's folder of precompiled headers when it
/// exists, else the installed one (<prefix>/share/tilec/pch).
std::string precompiledHeaderDir();
/// Precompiles the first header of `request` for its target with the default
/// flags (its source and options are not used).
llvm::Expected<std::vector<char>> precompileHeader(const CompileRequest &request);

/// Disassembly of the executable sections, in the style of `llvm-objdump -d`:
/// a "<symbol>:" line per function, then one instruction per line followed by
/// "// offset: encoding". Returns an "error: ..." line when `elf` cannot be read.
std::string disassemble(llvm::ArrayRef<char> elf, const TargetInfo &target);

/// Reads the first kernel of the NT_AMDGPU_METADATA note (registers, LDS,
/// scratch, spills, wave size), computes the occupancy for workgroups of
/// `wavesPerWorkgroup` waves and counts matrix instructions (v_mfma, v_smfmac,
/// v_wmma, v_swmmac) in the disassembly. `jit`, `compilerIdentity` and
/// `fromCache` are left for the caller (see the CodeObject overload).
llvm::Expected<Report> readReport(llvm::ArrayRef<char> elf, const TargetInfo &target,
                                  int wavesPerWorkgroup);

/// readReport plus the compiler facts of `code`. NVIDIA targets: the report
/// of the cubin (readCubinReport); `launchLdsBytes` is the dynamic shared
/// memory a launch adds to the cubin's static shared memory.
llvm::Expected<Report> readReport(const CodeObject &code, const TargetInfo &target,
                                  int wavesPerWorkgroup, int64_t launchLdsBytes = 0);
/// The report of an NVIDIA cubin (Cubin.cpp): registers and stack frame from
/// its .nv.info attributes (`vgpr`: registers per thread, `scratch_bytes`:
/// the stack frame in local memory), shared memory from its sections plus
/// `launchLdsBytes`, spills from `code.assemblerLog`, mma instructions counted
/// in `code.assembly` (PTX), occupancy in warps per SM sub-partition.
llvm::Expected<Report> readCubinReport(const CodeObject &code, const TargetInfo &target, int wavesPerWorkgroup,
                                       int64_t launchLdsBytes);

/// The facts of a code object's ELF header and its first kernel's
/// NT_AMDGPU_METADATA entry that must agree with the launch: the ISA checks
/// compare them with the compiled kernel (tests/unit/isa).
struct KernelNote {
  unsigned eFlags = 0;  ///< ELF e_flags: EF_AMDGPU_MACH_* and the xnack/sramecc feature bits
  std::string name;     ///< .name
  int64_t wavefrontSize = 0;
  int64_t maxFlatWorkgroupSize = 0;
  int64_t kernargSegmentSize = 0;
  int64_t privateSegmentFixedSize = 0;
  struct Arg {
    int64_t offset = 0, size = 0;
    std::string valueKind;  ///< global_buffer, by_value, ...
  };
  std::vector<Arg> args;  ///< .args in order
};
llvm::Expected<KernelNote> readKernelNote(llvm::ArrayRef<char> elf);

/// Code objects returned by ROCm 5.x hipRTC may be clang offload bundles
/// ("__CLANG_OFFLOAD_BUNDLE__", or a compressed "CCOB" bundle): returns the
/// amdgcn ELF for `arch`. An ELF input is returned unchanged.
llvm::Expected<std::vector<char>> extractCodeObject(llvm::ArrayRef<char> blob,
                                                    llvm::StringRef arch);

} // namespace tilec::jit
