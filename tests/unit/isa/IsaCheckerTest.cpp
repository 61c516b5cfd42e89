// The ISA checker (lib/JIT/IsaCheck.h) on hand-written instruction sequences:
// each property's violation is found, and the corrected sequence passes. The
// sequences are assembled in process with LLVM MC into a relocatable object,
// then decoded the way code objects are.

#include "JIT/IsaCheck.h"

#include "llvm/MC/MCAsmBackend.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCObjectWriter.h"
#include "llvm/MC/MCParser/MCAsmParser.h"
#include "llvm/MC/MCParser/MCTargetAsmParser.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::jit;

namespace {

/// `source` assembled for `arch` into an ELF relocatable object.
std::vector<char> assemble(const std::string &source, const std::string &arch) {
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmParser();
  const std::string tripleName = "amdgcn-amd-amdhsa";
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(tripleName, error);
  EXPECT_NE(target, nullptr) << error;
  if (!target)
    return {};
  llvm::Triple triple(tripleName);
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCRegisterInfo> registers(target->createMCRegInfo(tripleName));
  std::unique_ptr<llvm::MCAsmInfo> asmInfo(target->createMCAsmInfo(*registers, tripleName, options));
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(target->createMCSubtargetInfo(tripleName, arch, ""));
  std::unique_ptr<llvm::MCInstrInfo> instrInfo(target->createMCInstrInfo());
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source), llvm::SMLoc());
  std::string diagnostics;
  sources.setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *out) {
        llvm::raw_string_ostream os(*static_cast<std::string *>(out));
        d.print("asm", os);
      },
      &diagnostics);
  llvm::MCContext context(triple, asmInfo.get(), registers.get(), subtarget.get(), &sources, &options);
  std::unique_ptr<llvm::MCObjectFileInfo> fileInfo(target->createMCObjectFileInfo(context, /*PIC=*/false));
  context.setObjectFileInfo(fileInfo.get());
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  std::unique_ptr<llvm::MCAsmBackend> backend(target->createMCAsmBackend(*subtarget, *registers, options));
  std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(os);
  std::unique_ptr<llvm::MCCodeEmitter> emitter(target->createMCCodeEmitter(*instrInfo, context));
  std::unique_ptr<llvm::MCStreamer> streamer(target->createMCObjectStreamer(
      triple, context, std::move(backend), std::move(writer), std::move(emitter), *subtarget));
  std::unique_ptr<llvm::MCAsmParser> parser(llvm::createMCAsmParser(sources, context, *streamer, *asmInfo));
  std::unique_ptr<llvm::MCTargetAsmParser> targetParser(
      target->createMCAsmParser(*subtarget, *parser, *instrInfo, options));
  parser->setTargetParser(*targetParser);
  EXPECT_FALSE(parser->Run(/*NoInitialTextSection=*/false)) << diagnostics;
  streamer->finish();
  return std::vector<char>(object.begin(), object.end());
}

/// The violations checkIsa finds in `source` (assembled for `arch`).
std::vector<IsaViolation> violationsOf(const std::string &source, const std::string &arch) {
  const TargetInfo &target = *lookupTarget(arch);
  llvm::Expected<IsaProgram> program = decodeProgram(assemble(source, arch), target);
  EXPECT_TRUE(!!program) << llvm::toString(program.takeError());
  if (!program)
    return {{"decode", 0, "failed"}};
  return checkIsa(*program, target);
}

/// Only violations of `check`, at least one, and their text mentions `what`.
void expectOnly(const std::vector<IsaViolation> &violations, const std::string &check, const std::string &what) {
  ASSERT_FALSE(violations.empty()) << "expected a " << check << " violation";
  for (const IsaViolation &v : violations) {
    EXPECT_EQ(v.check, check) << formatViolations(violations);
    EXPECT_NE(v.message.find(what), std::string::npos) << formatViolations(violations);
  }
}

TEST(IsaChecker, BarrierAfterAnLdsWriteNeedsLgkmcntZero) {
  const std::string bad = R"(
    ds_write_b64 v1, v[2:3]
    s_waitcnt lgkmcnt(1)
    s_barrier
    s_endpgm
  )";
  expectOnly(violationsOf(bad, "gfx942"), "lds-barrier", "ds_write_b64");
  const std::string good = R"(
    ds_write_b64 v1, v[2:3]
    s_waitcnt vmcnt(0) lgkmcnt(0)
    s_barrier
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(violationsOf(good, "gfx942")), "");
}

TEST(IsaChecker, BarrierAfterAnLdsWriteOnTheBackEdge) {
  // The wait before the loop covers its first trip only: the store at the
  // end of the body reaches the barrier at its top through the back edge.
  const std::string bad = R"(
    ds_store_b32 v1, v2
    s_waitcnt lgkmcnt(0)
  loop:
    s_barrier
    ds_load_b32 v3, v1
    s_waitcnt lgkmcnt(0)
    ds_store_b32 v1, v3
    s_cmp_eq_u32 s0, 0
    s_cbranch_scc0 loop
    s_endpgm
  )";
  expectOnly(violationsOf(bad, "gfx1151"), "lds-barrier", "ds_store_b32");
  const std::string good = R"(
    ds_store_b32 v1, v2
    s_waitcnt lgkmcnt(0)
  loop:
    s_barrier
    ds_load_b32 v3, v1
    s_waitcnt lgkmcnt(0)
    ds_store_b32 v1, v3
    s_cmp_eq_u32 s0, 0
    s_waitcnt lgkmcnt(0)
    s_cbranch_scc0 loop
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(violationsOf(good, "gfx1151")), "");
}

TEST(IsaChecker, BufferDescriptorWord3IsTheTargets) {
  // gfx1151's word 3 is 0x31004000; 0x20000 is the CDNA value.
  const std::string bad = R"(
    s_mov_b32 s7, 0x20000
    buffer_load_b32 v1, v0, s[4:7], 0 offen
    s_endpgm
  )";
  expectOnly(violationsOf(bad, "gfx1151"), "buffer-rsrc", "0x20000");
  const std::string unknown = R"(
    s_load_b128 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    buffer_load_b32 v1, v0, s[4:7], 0 offen
    s_endpgm
  )";
  expectOnly(violationsOf(unknown, "gfx1151"), "buffer-rsrc", "not a constant");
  // Through a copy, as the compiler shares one constant between descriptors.
  const std::string good = R"(
    s_mov_b32 s11, 0x31004000
    s_mov_b32 s7, s11
    buffer_load_b32 v1, v0, s[4:7], 0 offen
    buffer_store_b32 v1, v0, s[8:11], 0 offen
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(violationsOf(good, "gfx1151")), "");
  // Through an SGPR spill to a VGPR lane and back.
  const std::string spilled = R"(
    s_mov_b32 s7, 0x20000
    v_writelane_b32 v1, s7, 5
    s_mov_b32 s7, 0
    v_readlane_b32 s7, v1, 5
    buffer_load_dword v2, v0, s[4:7], 0 offen
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(violationsOf(spilled, "gfx90a")), "");
  const std::string otherLane = R"(
    s_mov_b32 s7, 0x20000
    v_writelane_b32 v1, s7, 5
    s_mov_b32 s8, 0
    v_writelane_b32 v1, s8, 6
    v_readlane_b32 s7, v1, 6
    buffer_load_dword v2, v0, s[4:7], 0 offen
    s_endpgm
  )";
  expectOnly(violationsOf(otherLane, "gfx90a"), "buffer-rsrc", "is 0x0, not gfx90a's 0x20000");
}

TEST(IsaChecker, MatrixOperandsAreTheRegistersTheLdsReadsLoaded) {
  // The MFMA names v[6:7] as B, but the second ds_read loaded v[8:9].
  const std::string unloaded = R"(
    ds_read_b64 v[4:5], v1
    ds_read_b64 v[8:9], v1 offset:256
    s_waitcnt lgkmcnt(0)
    v_mfma_f32_32x32x8_bf16 v[16:31], v[4:5], v[6:7], v[16:31]
    s_endpgm
  )";
  expectOnly(violationsOf(unloaded, "gfx942"), "matrix-operands", "v6 is read before any instruction writes it");
  // A register the ds_read loaded, overwritten on one path before the MFMA.
  const std::string overwritten = R"(
    ds_read_b64 v[4:5], v1
    ds_read_b64 v[6:7], v1 offset:256
    s_cmp_eq_u32 s0, 0
    s_cbranch_scc1 skip
    v_mov_b32 v5, 0
  skip:
    s_waitcnt lgkmcnt(0)
    v_mfma_f32_32x32x8_bf16 v[16:31], v[4:5], v[6:7], v[16:31]
    s_endpgm
  )";
  expectOnly(violationsOf(overwritten, "gfx942"), "matrix-operands", "v_mov_b32_e32 v5, 0 at");
  const std::string good = R"(
    ds_read_b64 v[4:5], v1
    ds_read_b64 v[6:7], v1 offset:256
    s_waitcnt lgkmcnt(0)
    v_mfma_f32_32x32x8_bf16 v[16:31], v[4:5], v[6:7], v[16:31]
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(violationsOf(good, "gfx942")), "");
  const std::string wmma = R"(
    ds_load_b128 v[0:3], v40
    ds_load_b128 v[4:7], v40 offset:16
    ds_load_b128 v[8:11], v41
    ds_load_b128 v[12:15], v41 offset:16
    s_waitcnt lgkmcnt(0)
    v_wmma_f32_16x16x16_bf16 v[16:23], v[0:7], v[8:15], v[16:23]
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(violationsOf(wmma, "gfx1151")), "");
  // Loaded registers moved before the WMMA (as the register allocator does)
  // are still the loaded values.
  const std::string moved = R"(
    ds_load_b128 v[20:23], v40
    ds_load_b128 v[4:7], v40 offset:16
    ds_load_b128 v[8:11], v41
    ds_load_b128 v[12:15], v41 offset:16
    s_waitcnt lgkmcnt(0)
    v_dual_mov_b32 v0, v20 :: v_dual_mov_b32 v1, v21
    v_mov_b32 v2, v22
    v_mov_b32 v3, v23
    v_wmma_f32_16x16x16_bf16 v[16:23], v[0:7], v[8:15], v[16:23]
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(violationsOf(moved, "gfx1151")), "");
  // B's high half is computed, not loaded.
  const std::string mixed = R"(
    ds_load_b128 v[0:3], v40
    ds_load_b128 v[4:7], v40 offset:16
    ds_load_b128 v[8:11], v41
    v_lshlrev_b32 v12, 16, v41
    v_lshlrev_b32 v13, 16, v41
    v_lshlrev_b32 v14, 16, v41
    v_lshlrev_b32 v15, 16, v41
    s_waitcnt lgkmcnt(0)
    v_wmma_f32_16x16x16_bf16 v[16:23], v[0:7], v[8:15], v[16:23]
    s_endpgm
  )";
  expectOnly(violationsOf(mixed, "gfx1151"), "matrix-operands", "B operand");
}

TEST(IsaChecker, GemmOperandsComeFromLds) {
  const TargetInfo &target = *lookupTarget("gfx942");
  auto fromLds = [&](const std::string &source) {
    llvm::Expected<IsaProgram> program = decodeProgram(assemble(source, "gfx942"), target);
    EXPECT_TRUE(!!program) << llvm::toString(program.takeError());
    return program ? checkMatrixOperandsFromLds(*program) : std::vector<IsaViolation>{{"decode", 0, "failed"}};
  };
  // B computed in registers: fine for checkIsa, not for a GEMM of LDS tiles.
  const std::string computed = R"(
    ds_read_b64 v[4:5], v1
    v_add_u32 v6, 16, v1
    v_add_u32 v7, 16, v1
    s_waitcnt lgkmcnt(0)
    v_mfma_f32_32x32x8_bf16 v[16:31], v[4:5], v[6:7], v[16:31]
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(violationsOf(computed, "gfx942")), "");
  expectOnly(fromLds(computed), "matrix-from-lds", "B operand");
  const std::string loaded = R"(
    ds_read_b64 v[4:5], v1
    ds_read_b64 v[8:9], v1 offset:512
    s_waitcnt lgkmcnt(0)
    v_mov_b32 v6, v8
    v_mov_b32 v7, v9
    v_mfma_f32_32x32x8_bf16 v[16:31], v[4:5], v[6:7], v[16:31]
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(fromLds(loaded)), "");
  // B's 16-bit elements read one by one and packed in pairs.
  const std::string packed = R"(
    ds_read_b64 v[4:5], v1
    ds_read_u16 v6, v2
    ds_read_u16 v10, v2 offset:256
    ds_read_u16 v7, v2 offset:512
    ds_read_u16 v11, v2 offset:768
    s_waitcnt lgkmcnt(0)
    v_lshl_or_b32 v6, v10, 16, v6
    v_lshl_or_b32 v7, v11, 16, v7
    v_mfma_f32_32x32x8_bf16 v[16:31], v[4:5], v[6:7], v[16:31]
    s_endpgm
  )";
  EXPECT_EQ(formatViolations(fromLds(packed)), "");
  // ... but one element packed with a constant instead of its load.
  const std::string packedConstant = R"(
    ds_read_b64 v[4:5], v1
    ds_read_u16 v6, v2
    ds_read_u16 v7, v2 offset:512
    ds_read_u16 v11, v2 offset:768
    v_mov_b32 v10, 0x3f80
    s_waitcnt lgkmcnt(0)
    v_lshl_or_b32 v6, v10, 16, v6
    v_lshl_or_b32 v7, v11, 16, v7
    v_mfma_f32_32x32x8_bf16 v[16:31], v[4:5], v[6:7], v[16:31]
    s_endpgm
  )";
  expectOnly(fromLds(packedConstant), "matrix-from-lds", "v_mov_b32_e32 v10, 0x3f80");
}

} // namespace
