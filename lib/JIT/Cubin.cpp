// Reading NVIDIA cubins: the Report of a kernel from the cubin's .nv.info
// attributes (registers, stack frame), its shared-memory sections, the
// assembler's log (spills) and the PTX (matrix instructions).
//
// .nv.info holds records of (format u8, attribute u8, then a u16 value, or for
// format 0x04 a u16 size and that many bytes). EIATTR_REGCOUNT (0x2f) and
// EIATTR_FRAME_SIZE (0x11) carry (symbol index u32, value u32) per kernel.

#include "JIT/JIT.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <map>

namespace tilec::jit {
namespace {

constexpr uint8_t kFormatSizedValue = 0x04;  // EIFMT_SVAL
constexpr uint8_t kAttrRegCount = 0x2f;      // EIATTR_REGCOUNT
constexpr uint8_t kAttrFrameSize = 0x11;     // EIATTR_FRAME_SIZE

/// Per-kernel (symbol index -> value) of attribute `attr` in `.nv.info`.
std::map<uint32_t, uint32_t> kernelAttribute(llvm::StringRef info, uint8_t attr) {
  std::map<uint32_t, uint32_t> out;
  size_t i = 0;
  while (i + 4 <= info.size()) {
    const uint8_t format = info[i], a = info[i + 1];
    const uint16_t size = llvm::support::endian::read16le(info.data() + i + 2);
    if (format != kFormatSizedValue) {
      i += 4;
      continue;
    }
    if (a == attr && size >= 8 && i + 4 + size <= info.size())
      out[llvm::support::endian::read32le(info.data() + i + 4)] = llvm::support::endian::read32le(info.data() + i + 8);
    i += 4 + size;
  }
  return out;
}

/// The first number of `pattern` (one group) in `log`, or 0.
int64_t firstNumber(llvm::StringRef log, const char *pattern) {
  llvm::SmallVector<llvm::StringRef, 2> m;
  if (!llvm::Regex(pattern).match(log, &m) || m.size() < 2)
    return 0;
  int64_t v = 0;
  return m[1].getAsInteger(10, v) ? 0 : v;
}

} // namespace

llvm::Expected<Report> readCubinReport(const CodeObject &code, const TargetInfo &target, int wavesPerWorkgroup,
                                       int64_t launchLdsBytes) {
  llvm::Expected<llvm::object::ELF64LEObjectFile> object = llvm::object::ELF64LEObjectFile::create(
      llvm::MemoryBufferRef(llvm::StringRef(code.elf.data(), code.elf.size()), "cubin"));
  if (!object)
    return llvm::createStringError("cannot read the cubin: %s", llvm::toString(object.takeError()).c_str());

  Report report;
  report.target = target.arch;
  uint32_t kernelIndex = 0;
  for (const llvm::object::ELFSymbolRef &sym : object->symbols()) {
    llvm::Expected<llvm::object::SymbolRef::Type> type = sym.getType();
    llvm::Expected<llvm::StringRef> name = sym.getName();
    if (type && *type == llvm::object::SymbolRef::ST_Function && name && report.kernel.empty()) {
      report.kernel = name->str();
      kernelIndex = static_cast<uint32_t>(sym.getRawDataRefImpl().d.b);
    } else {
      if (!type)
        llvm::consumeError(type.takeError());
      if (!name)
        llvm::consumeError(name.takeError());
    }
  }
  if (report.kernel.empty())
    return llvm::createStringError("the cubin defines no kernel");

  int64_t staticShared = 0;
  for (const llvm::object::SectionRef &section : object->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == ".nv.info") {
      llvm::Expected<llvm::StringRef> contents = section.getContents();
      if (!contents)
        return contents.takeError();
      auto regs = kernelAttribute(*contents, kAttrRegCount), frame = kernelAttribute(*contents, kAttrFrameSize);
      report.vgpr = static_cast<int>(regs.count(kernelIndex) ? regs[kernelIndex] : 0);
      report.scratchBytes = frame.count(kernelIndex) ? frame[kernelIndex] : 0;
    } else if (*name == ".nv.shared." + report.kernel) {
      staticShared = static_cast<int64_t>(section.getSize());
    }
  }
  report.ldsBytes = staticShared + launchLdsBytes;
  report.vgprSpills = static_cast<int>(firstNumber(code.assemblerLog, "([0-9]+) bytes spill stores"));
  report.waveSize = target.waveSize;
  report.occupancy = target.occupancy(report.vgpr, 0, report.ldsBytes, std::max(wavesPerWorkgroup, 1));
  llvm::SmallVector<llvm::StringRef, 0> lines;
  llvm::StringRef(code.assembly).split(lines, '\n');
  for (llvm::StringRef line : lines)
    report.matrixInstructions += line.ltrim().starts_with("mma.sync") || line.ltrim().starts_with("wgmma.mma_async");
  report.codeObjectBytes = static_cast<int64_t>(code.elf.size());
  return report;
}

} // namespace tilec::jit
