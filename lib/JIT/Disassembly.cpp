// In-process disassembly of AMDGPU code objects (LLVM MC): the text of
// `disassemble` and the decoded instructions the ISA checks read (decodeProgram).

#include "JIT/ElfFile.h"
#include "JIT/IsaCheck.h"
#include "JIT/JIT.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrAnalysis.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <map>
#include <mutex>

namespace tilec::jit {
namespace {

constexpr llvm::StringLiteral kTriple = "amdgcn-amd-amdhsa";

void initializeAMDGPUMC() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
  });
}

} // namespace

namespace {

/// True when every symbol table of `object` lies inside the file.
bool symbolTableReadable(const llvm::object::ELF64LEObjectFile &object) {
  const auto &elf = object.getELFFile();
  auto sections = elf.sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return false;
  }
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_SYMTAB)
      continue;
    auto symbols = elf.symbols(&section);
    if (!symbols) {
      llvm::consumeError(symbols.takeError());
      return false;
    }
  }
  return true;
}

} // namespace

/// Whether LLVM 19's AMDGPU instruction printer can print `inst` safely. The
/// printer trusts the decoder: it reads operands where the instruction
/// description puts them and indexes name tables with immediate fields. A
/// damaged or mutated encoding can decode into an MCInst that breaks those
/// assumptions; fuzzing found an SDWA instruction whose select field is 7
/// (valid: 0..6, BYTE_0..DWORD), which the printer uses as a table index
/// (tests/fuzz/regressions/code_object/printinst-segv.elf). Checked here:
/// every operand is valid, registers are registers the target knows and sit
/// where the description wants a register, and an SDWA instruction's
/// immediate fields (clamp, omod, dst_sel, dst_unused, src*_sel) are 0..6.
static bool printable(const llvm::MCInst &inst, const llvm::MCInstrInfo &instrs, const llvm::MCRegisterInfo &regs) {
  if (inst.getOpcode() >= instrs.getNumOpcodes())
    return false;
  const llvm::MCInstrDesc &desc = instrs.get(inst.getOpcode());
  const bool sdwa = instrs.getName(inst.getOpcode()).contains("_sdwa");
  for (unsigned i = 0; i < inst.getNumOperands(); ++i) {
    const llvm::MCOperand &op = inst.getOperand(i);
    if (!op.isValid() || (op.isReg() && op.getReg() >= regs.getNumRegs()))
      return false;
    if (i >= desc.getNumOperands())
      continue;
    const llvm::MCOperandInfo &info = desc.operands()[i];
    if (info.OperandType == llvm::MCOI::OPERAND_REGISTER && !op.isReg())
      return false;
    if (sdwa && info.OperandType == llvm::MCOI::OPERAND_IMMEDIATE && op.isImm() &&
        (op.getImm() < 0 || op.getImm() > 6))
      return false;
  }
  return true;
}

namespace {

/// The AMDGPU MC layer for one target: decoder, printer and instruction facts.
struct McLayer {
  const llvm::Target *target = nullptr;
  llvm::Triple triple{kTriple};
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asmInfo;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instrInfo;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis;
};

llvm::Expected<std::unique_ptr<McLayer>> createMcLayer(const TargetInfo &target) {
  initializeAMDGPUMC();
  auto mc = std::make_unique<McLayer>();
  std::string lookupError;
  mc->target = llvm::TargetRegistry::lookupTarget(kTriple, lookupError);
  if (!mc->target)
    return llvm::createStringError(lookupError);
  llvm::MCTargetOptions options;
  mc->registers.reset(mc->target->createMCRegInfo(kTriple));
  if (mc->registers)
    mc->asmInfo.reset(mc->target->createMCAsmInfo(*mc->registers, kTriple, options));
  // No explicit wave size: the AMDGPU MC layer picks the generation's default
  // (wave64 before gfx10, wave32 from gfx10 on), as llvm-objdump does.
  mc->subtarget.reset(mc->target->createMCSubtargetInfo(kTriple, target.arch, ""));
  mc->instrInfo.reset(mc->target->createMCInstrInfo());
  if (!mc->registers || !mc->asmInfo || !mc->subtarget || !mc->instrInfo)
    return llvm::createStringError("cannot create the AMDGPU MC layer for " + target.arch);
  mc->context = std::make_unique<llvm::MCContext>(mc->triple, mc->asmInfo.get(), mc->registers.get(),
                                                  mc->subtarget.get());
  mc->disassembler.reset(mc->target->createMCDisassembler(*mc->subtarget, *mc->context));
  mc->printer.reset(mc->target->createMCInstPrinter(mc->triple, mc->asmInfo->getAssemblerDialect(),
                                                    *mc->asmInfo, *mc->instrInfo, *mc->registers));
  mc->analysis.reset(mc->target->createMCInstrAnalysis(mc->instrInfo.get()));
  if (!mc->disassembler || !mc->printer || !mc->analysis)
    return llvm::createStringError("cannot create the AMDGPU disassembler for " + target.arch);
  return mc;
}

} // namespace

std::string disassemble(llvm::ArrayRef<char> elf, const TargetInfo &target) {
  llvm::Expected<llvm::object::ELF64LEObjectFile> object = openElf(elf);
  if (!object)
    return "error: " + llvm::toString(object.takeError()) + "\n";
  llvm::Expected<std::unique_ptr<McLayer>> mc = createMcLayer(target);
  if (!mc)
    return "error: " + llvm::toString(mc.takeError()) + "\n";
  llvm::MCDisassembler &disassembler = *(*mc)->disassembler;
  llvm::MCInstPrinter &printer = *(*mc)->printer;

  // Function labels per text section, from one walk over the symbols. A
  // symbol table that does not fit in the file is skipped: every symbol would
  // be an error, and their count comes from its (damaged) header.
  std::map<uint64_t, std::map<uint64_t, std::string>> labelsBySection;
  if (symbolTableReadable(*object)) {
    for (const llvm::object::ELFSymbolRef &symbol : object->symbols()) {
      // The section first: getName() of a section symbol whose index names no
      // section reads the header one past the table (LLVM 19), so names are
      // read only for symbols of a text section.
      llvm::Expected<llvm::object::section_iterator> in = symbol.getSection();
      if (!in || *in == object->section_end() || !(*in)->isText()) {
        llvm::consumeError(in.takeError());
        continue;
      }
      llvm::Expected<llvm::StringRef> symbolName = symbol.getName();
      llvm::Expected<uint64_t> address = symbol.getAddress();
      if (symbolName && address && !symbolName->empty())
        labelsBySection[(*in)->getIndex()].emplace(*address, symbolName->str());
      else {
        llvm::consumeError(symbolName.takeError());
        llvm::consumeError(address.takeError());
      }
    }
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  for (const llvm::object::SectionRef &section : object->sections()) {
    if (!section.isText())
      continue;
    llvm::Expected<llvm::StringRef> name = section.getName();
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!name || !contents) {
      llvm::consumeError(name.takeError());
      llvm::consumeError(contents.takeError());
      continue;
    }
    uint64_t base = section.getAddress();
    const std::map<uint64_t, std::string> &labels = labelsBySection[section.getIndex()];

    os << "\nDisassembly of section " << *name << ":\n";
    llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(contents->data()),
                                  contents->size());
    uint64_t size = 0;
    for (uint64_t index = 0; index < bytes.size(); index += size) {
      uint64_t address = base + index;
      if (auto label = labels.find(address); label != labels.end())
        os << "\n" << llvm::format_hex_no_prefix(address, 16) << " <" << label->second << ">:\n";
      llvm::MCInst inst;
      std::string line;
      llvm::raw_string_ostream lineOS(line);
      llvm::MCDisassembler::DecodeStatus status = disassembler.getInstruction(
          inst, size, bytes.slice(index), address, llvm::nulls());
      if (status == llvm::MCDisassembler::Fail) {
        size = std::min<uint64_t>(4, bytes.size() - index);
        lineOS << "<unknown>";
      } else if (!printable(inst, *(*mc)->instrInfo, *(*mc)->registers)) {
        lineOS << "<malformed>";
      } else {
        printer.printInst(&inst, address, "", *(*mc)->subtarget, lineOS);
      }
      llvm::StringRef trimmed = llvm::StringRef(line).trim();
      os << "\t" << trimmed;
      os.indent(trimmed.size() < 56 ? 56 - trimmed.size() : 1);
      os << "// " << llvm::format_hex_no_prefix(address, 12, /*Upper=*/true) << ":";
      for (uint64_t w = 0; w + 4 <= size; w += 4)
        os << " "
           << llvm::format_hex_no_prefix(
                  llvm::support::endian::read32le(bytes.data() + index + w), 8, /*Upper=*/true);
      os << "\n";
    }
  }
  return text;
}

namespace {

/// The 32-bit registers `reg` covers: a VGPR/AGPR/SGPR, a tuple of them
/// (VGPR4_VGPR5), or the 16-bit half of one (VGPR4_HI16: the whole slot).
/// Other registers (EXEC, VCC, M0, SCC, ...) cover none.
std::vector<RegSlot> regSlots(llvm::MCRegister reg, const llvm::MCRegisterInfo &registers) {
  auto slotOf = [](llvm::StringRef name, RegSlot &slot) {
    name.consume_back("_LO16") || name.consume_back("_HI16");
    for (auto [prefix, file] : {std::pair{"VGPR", 'v'}, {"AGPR", 'a'}, {"SGPR", 's'}}) {
      llvm::StringRef digits = name;
      if (digits.consume_front(prefix) && !digits.empty() && llvm::all_of(digits, llvm::isDigit) &&
          !digits.getAsInteger(10, slot.index)) {
        slot.file = file;
        return true;
      }
    }
    return false;
  };
  std::vector<RegSlot> slots;
  RegSlot slot;
  if (slotOf(registers.getName(reg), slot))
    return {slot};
  for (llvm::MCSubRegIterator sub(reg, &registers); sub.isValid(); ++sub)
    if (slotOf(registers.getName(*sub), slot) && llvm::find(slots, slot) == slots.end())
      slots.push_back(slot);
  llvm::sort(slots);
  return slots;
}

} // namespace

llvm::Expected<IsaProgram> decodeProgram(llvm::ArrayRef<char> elf, const TargetInfo &target) {
  llvm::Expected<llvm::object::ELF64LEObjectFile> object = openElf(elf);
  if (!object)
    return object.takeError();
  llvm::Expected<std::unique_ptr<McLayer>> mcOr = createMcLayer(target);
  if (!mcOr)
    return mcOr.takeError();
  McLayer &mc = **mcOr;

  IsaProgram program;
  for (const llvm::object::SectionRef &section : object->sections()) {
    if (!section.isText() || section.getSize() == 0)
      continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents)
      return contents.takeError();
    llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(contents->data()),
                                  contents->size());
    const uint64_t base = section.getAddress();
    std::map<uint64_t, size_t> indexOf;
    std::vector<std::pair<size_t, uint64_t>> branches;  // (instruction, target address)
    uint64_t size = 0;
    for (uint64_t offset = 0; offset < bytes.size(); offset += size) {
      llvm::MCInst inst;
      const uint64_t address = base + offset;
      if (mc.disassembler->getInstruction(inst, size, bytes.slice(offset), address, llvm::nulls()) !=
              llvm::MCDisassembler::Success ||
          !printable(inst, *mc.instrInfo, *mc.registers))
        return llvm::createStringError("undecodable instruction at 0x%llx",
                                       (unsigned long long)address);
      const llvm::MCInstrDesc &desc = mc.instrInfo->get(inst.getOpcode());
      IsaInstr in;
      in.address = address;
      llvm::raw_string_ostream text(in.text);
      mc.printer->printInst(&inst, address, "", *mc.subtarget, text);
      in.text = llvm::StringRef(in.text).trim().str();
      in.mnemonic = llvm::StringRef(in.text).split(' ').first.str();
      llvm::StringRef mnemonic = in.mnemonic;
      for (unsigned i = 0; i < inst.getNumOperands(); ++i) {
        const llvm::MCOperand &op = inst.getOperand(i);
        if (!op.isReg() || !op.getReg())
          continue;
        std::vector<RegSlot> slots = regSlots(op.getReg(), *mc.registers);
        if (slots.empty())
          continue;
        std::vector<RegSlot> &into = i < desc.getNumDefs() ? in.defs : in.uses;
        into.insert(into.end(), slots.begin(), slots.end());
        in.regOperands.push_back(std::move(slots));
      }
      const bool ds = mnemonic.starts_with("ds_");
      const bool crossLane = mnemonic.starts_with("ds_bpermute") ||
                             mnemonic.starts_with("ds_permute") ||
                             mnemonic.starts_with("ds_swizzle");
      in.ldsWrite = ds && !crossLane && desc.mayStore();
      in.ldsRead = mnemonic.starts_with("ds_read") || mnemonic.starts_with("ds_load");
      // s_waitcnt prints each counter it waits on; gfx10+ also has the
      // separate s_waitcnt_lgkmcnt null, 0.
      in.lgkmDrained = (mnemonic == "s_waitcnt" && llvm::StringRef(in.text).contains("lgkmcnt(0)")) ||
                       (mnemonic == "s_waitcnt_lgkmcnt" && inst.getNumOperands() == 2 &&
                        inst.getOperand(1).isImm() && inst.getOperand(1).getImm() == 0);
      in.barrier = mnemonic == "s_barrier";
      in.matrix = mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac") ||
                  mnemonic.starts_with("v_wmma") || mnemonic.starts_with("v_swmmac");
      in.buffer = mnemonic.starts_with("buffer_load") || mnemonic.starts_with("buffer_store") ||
                  mnemonic.starts_with("buffer_atomic");
      // Moves: a constant, or a register copied slot by slot. v_readfirstlane
      // copies one lane, which is the value when every lane holds the same.
      const bool move = llvm::is_contained({"s_mov_b32", "s_mov_b64", "v_mov_b32_e32", "v_mov_b32_e64",
                                            "v_mov_b64_e32", "v_mov_b64_e64", "v_accvgpr_read_b32",
                                            "v_accvgpr_write_b32", "v_accvgpr_mov_b32", "v_readfirstlane_b32"},
                                           mnemonic);
      if (move && in.defs.size() == 1 && inst.getNumOperands() >= 2 && inst.getOperand(1).isImm()) {
        in.hasImmediate = true;
        in.immediate = inst.getOperand(1).getImm();
      } else if (move && in.uses.size() == in.defs.size()) {
        in.copyFrom = in.uses;
      } else if (mnemonic == "v_pk_mov_b32" && in.defs.size() == 2 && in.uses.size() == 4 &&
                 llvm::StringRef(in.text).ends_with("op_sel:[0,1]")) {
        in.copyFrom = {in.uses[0], in.uses[3]};  // low half of src0, high half of src1
      } else if (mnemonic.starts_with("v_dual_") && in.defs.size() == 2 && !in.uses.empty()) {
        // Two operations issued together (gfx11), X :: Y; X's sources come
        // first. A half that moves a register copies it.
        auto [x, y] = llvm::StringRef(in.text).split(" :: ");
        auto movesRegister = [](llvm::StringRef half) {
          llvm::StringRef source = half.split(", ").second.trim();
          return half.starts_with("v_dual_mov_b32 ") && source.size() > 1 &&
                 (source[0] == 'v' || source[0] == 's') && llvm::isDigit(source[1]);
        };
        in.copyFrom.assign(2, RegSlot{});
        if (movesRegister(x))
          in.copyFrom[0] = in.uses.front();
        if (movesRegister(y))
          in.copyFrom[1] = in.uses.back();
      } else if ((mnemonic == "v_writelane_b32" || mnemonic == "v_readlane_b32") && in.defs.size() == 1 &&
                 in.uses.size() >= 1 && inst.getNumOperands() >= 3 && inst.getOperand(2).isImm()) {
        // SGPRs spilled to (and restored from) a lane of a VGPR: the lane is
        // a slot of its own ('l', VGPR * 64 + lane).
        const RegSlot vgpr = mnemonic == "v_writelane_b32" ? in.defs[0] : in.uses[0];
        const RegSlot lane{'l', vgpr.index * 64 + int(inst.getOperand(2).getImm())};
        if (mnemonic == "v_writelane_b32") {
          in.defs.insert(in.defs.begin(), lane);
          in.copyFrom = {in.uses[0], RegSlot{}};
        } else {
          in.uses.push_back(lane);
          in.copyFrom = {lane};
        }
      }
      const size_t index = program.instrs.size();
      indexOf[address] = index;
      const bool ends = desc.isReturn() || mnemonic == "s_endpgm" || mnemonic == "s_setpc_b64";
      uint64_t branchTarget = 0;
      if (desc.isBranch() && mc.analysis->evaluateBranch(inst, address, size, branchTarget))
        branches.push_back({index, branchTarget});
      if (!ends && !(desc.isBranch() && desc.isUnconditionalBranch()))
        in.successors.push_back(index + 1);
      program.instrs.push_back(std::move(in));
    }
    for (auto [index, address] : branches) {
      auto target = indexOf.find(address);
      if (target == indexOf.end())
        return llvm::createStringError("branch at 0x%llx to 0x%llx, not an instruction",
                                       (unsigned long long)program.instrs[index].address,
                                       (unsigned long long)address);
      program.instrs[index].successors.push_back(target->second);
    }
    // Fall-through past the last instruction leads nowhere.
    if (!program.instrs.empty())
      llvm::erase(program.instrs.back().successors, program.instrs.size());
    return program;
  }
  return llvm::createStringError("no executable section");
}

} // namespace tilec::jit
