// Internal to lib/JIT: opening an AMDGPU code object's ELF, shared by the
// report and bundle reader (CodeObject.cpp) and the disassembler (Disassembly.cpp).
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Error.h"

namespace tilec::jit {

/// `bytes` as a StringRef (no copy).
inline llvm::StringRef asStringRef(llvm::ArrayRef<char> bytes) { return llvm::StringRef(bytes.data(), bytes.size()); }

/// The ELF file `elf`, or an error when it is not one.
llvm::Expected<llvm::object::ELF64LEObjectFile> openElf(llvm::ArrayRef<char> elf);

} // namespace tilec::jit
