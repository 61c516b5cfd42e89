// libFuzzer target: the code-object reader on arbitrary (mutated) files:
// offload-bundle extraction, readReport (ELF notes + msgpack metadata +
// occupancy + matrix-instruction count) and disassemble. The seed corpus holds
// real code objects from `tilec --emit=obj`; the mutations damage their
// headers, section tables, notes and msgpack.
#include "JIT/JIT.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const tilec::TargetInfo *target = tilec::lookupTarget("gfx942");
  if (!target)
    return 0;
  llvm::ArrayRef<char> blob(reinterpret_cast<const char *>(data), size);
  llvm::Expected<std::vector<char>> elf = tilec::jit::extractCodeObject(blob, target->arch);
  if (!elf) {
    llvm::consumeError(elf.takeError());
    return 0;
  }
  llvm::Expected<tilec::Report> report = tilec::jit::readReport(*elf, *target, 4);
  if (!report)
    llvm::consumeError(report.takeError());
  // readReport disassembles only when the metadata reads; disassemble on its own too.
  (void)tilec::jit::disassemble(*elf, *target);
  return 0;
}
