// Inputs that crashed a fuzz target (tests/fuzz/regressions/<target>/, see
// docs/fuzzing.md) run through the same code here, so that the normal suite
// and its ASan build (scripts/sanitize.sh) keep them fixed.

#include "JIT/JIT.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace tilec;

namespace {

std::vector<std::string> regressionInputs(const std::string &target) {
  std::vector<std::string> files;
  std::error_code ec;
  std::string dir = std::string(TILEC_FUZZ_REGRESSIONS_DIR) + "/" + target;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    files.push_back(it->path());
  return files;
}

// Each input is read like tests/fuzz/FuzzCodeObject.cpp reads it: the reader
// returns an error or a report, and disassembly returns text; nothing crashes
// and nothing hangs (symbol-table-past-end-of-file.elf: a symbol table whose
// header points past the file made every symbol an error, walked once per
// text section, for more than 30 s).
TEST(FuzzRegression, CodeObjectReader) {
  const TargetInfo *target = lookupTarget("gfx942");
  ASSERT_NE(target, nullptr);
  std::vector<std::string> files = regressionInputs("code_object");
  ASSERT_FALSE(files.empty());
  for (const std::string &file : files) {
    SCOPED_TRACE(file);
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    ASSERT_TRUE(!!buffer);
    // An exact-size heap copy: reads past the end are caught by ASan.
    std::vector<char> bytes((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
    llvm::Expected<std::vector<char>> elf = jit::extractCodeObject(bytes, target->arch);
    ASSERT_TRUE(!!elf) << llvm::toString(elf.takeError());
    llvm::Expected<Report> report = jit::readReport(*elf, *target, 4);
    if (!report)
      llvm::consumeError(report.takeError());
    EXPECT_FALSE(jit::disassemble(*elf, *target).empty());
  }
}

// section-symbol-past-section-table.elf: a section symbol whose section index
// names no section, in a file whose section header table ends at the end of
// the file. LLVM 19's SymbolRef::getName() reads the header one past the
// table for it; the disassembler only names symbols of the section it prints.
TEST(FuzzRegression, SectionSymbolWithoutSectionStillDisassembles) {
  const TargetInfo *target = lookupTarget("gfx942");
  auto buffer = llvm::MemoryBuffer::getFile(std::string(TILEC_FUZZ_REGRESSIONS_DIR) +
                                                "/code_object/section-symbol-past-section-table.elf",
                                            /*IsText=*/false, /*RequiresNullTerminator=*/false);
  ASSERT_TRUE(!!buffer);
  std::vector<char> bytes((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  std::string text = jit::disassemble(bytes, *target);
  EXPECT_NE(text.find("Disassembly of section .text:"), std::string::npos) << text.substr(0, 400);
}

} // namespace
