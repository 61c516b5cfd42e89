// Reads the AMD disassembly that lib/JIT prints with LLVM MC (disassemble():
// "\tmnemonic operands   // 00000000ADDR: WORD WORD") into the model's ops.
// Widths come from the mnemonics (docs/hardware.md sections 3, 4 and 11):
// an LDS access of b bytes per lane takes the phases of section 3; a vector
// memory access moves b bytes for each lane of the wave.
#include "Model/Ops.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>

namespace tilec::model {
namespace {

using detail::Op;
using detail::OpKind;

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

/// Bytes per lane of a memory mnemonic's data: its width suffix
/// (dwordx4, b128, ushort, u16, ...); 4 when it names none.
int accessBytes(std::string_view m) {
  static const std::pair<const char *, int> widths[] = {
      {"dwordx4", 16}, {"dwordx3", 12}, {"dwordx2", 8}, {"b128", 16}, {"b96", 12}, {"b64", 8},
      {"ushort", 2},   {"sshort", 2},   {"short", 2},   {"u16", 2},   {"i16", 2},  {"b16", 2},
      {"ubyte", 1},    {"sbyte", 1},    {"u8", 1},      {"i8", 1},    {"b8", 1},   {"dword", 4},
      {"b32", 4}};
  for (auto [suffix, bytes] : widths)
    if (contains(m, suffix))
      return bytes;
  return 4;
}

/// LDS phases (cycles) of one access of `bytes` per lane (docs/hardware.md
/// section 3): wave64 b32 and narrower 2, b64 4, b96/b128 8; wave32 half.
double ldsPhases(int bytes, int waveSize) {
  int phases = bytes <= 4 ? 2 : bytes <= 8 ? 4 : 8;
  return waveSize == 32 ? phases / 2 : phases;
}

/// The counter in "vmcnt(3)"; -1 when the wait does not name it.
int counter(std::string_view text, std::string_view name) {
  size_t at = text.find(name);
  if (at == std::string_view::npos || at + name.size() >= text.size() || text[at + name.size()] != '(')
    return -1;
  return std::atoi(std::string(text.substr(at + name.size() + 1)).c_str());
}

const MatrixInstr *matrixInstr(const TargetInfo &target, std::string_view mnemonic) {
  if (const MatrixInstr *mi = target.findInstr(mnemonic))
    return mi;
  // gfx90a prints bf16 MFMAs with their "_1k" name.
  for (const MatrixInstr &mi : target.matrixInstrs)
    if (startsWith(mnemonic, mi.name) || startsWith(mi.name, mnemonic))
      return &mi;
  return nullptr;
}

/// The issue rate of `target`'s fastest matrix instruction: 2*m*n*k / cycles.
double bestFlopsPerCycle(const TargetInfo &target) {
  double best = 0;
  for (const MatrixInstr &mi : target.matrixInstrs)
    best = std::max(best, 2.0 * mi.m * mi.n * mi.k / mi.cycles);
  return best;
}

} // namespace

CodeCost analyzeAmdAssembly(std::string_view text, const TargetInfo &target, const DeviceFacts &device) {
  std::vector<Op> ops;
  std::vector<uint64_t> address;
  std::vector<int64_t> branchAddress;  // target address of each op's branch, or -1
  const std::regex shape("_(\\d+)x(\\d+)x(\\d+)");
  uint64_t next = 0;
  size_t pos = 0;
  int lineNo = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? text.size() - pos : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    ++lineNo;
    // Instruction lines start with a tab; labels, headers and blank lines do not.
    if (line.empty() || line[0] != '\t')
      continue;
    std::string_view code = line.substr(1), comment;
    size_t slash = code.find("//");
    if (slash != std::string_view::npos) {
      comment = code.substr(slash + 2);
      code = code.substr(0, slash);
    }
    while (!code.empty() && std::isspace(static_cast<unsigned char>(code.back())))
      code.remove_suffix(1);
    if (code.empty())
      continue;
    if (code == "<unknown>" || code == "<malformed>") {
      CodeCost bad;
      bad.error = "line " + std::to_string(lineNo) + ": undecodable instruction";
      return bad;
    }
    // "// 0000000012AC: BF850007 ...": the address and the encoding's words.
    uint64_t at = next;
    int words = 1;
    if (size_t colon = comment.find(':'); colon != std::string_view::npos) {
      at = std::strtoull(std::string(comment.substr(0, colon)).c_str(), nullptr, 16);
      words = 0;
      for (size_t i = colon + 1; i < comment.size(); ++i)
        if (std::isxdigit(static_cast<unsigned char>(comment[i])) &&
            (i == colon + 1 || comment[i - 1] == ' '))
          ++words;
      words = std::max(words, 1);
    }
    next = at + 4 * uint64_t(words);
    std::string_view mnemonic = code.substr(0, code.find(' '));
    std::string_view operands = mnemonic.size() < code.size() ? code.substr(mnemonic.size() + 1) : "";

    Op op;
    int64_t branch = -1;
    if (startsWith(mnemonic, "v_mfma") || startsWith(mnemonic, "v_smfmac") || startsWith(mnemonic, "v_wmma") ||
        startsWith(mnemonic, "v_swmmac")) {
      op.kind = OpKind::Matrix;
      if (const MatrixInstr *mi = matrixInstr(target, mnemonic)) {
        op.matrixFlops = 2.0 * mi->m * mi->n * mi->k;
        op.matrixCycles = mi->cycles;
      } else {
        // Not in the target's table: its shape at the target's best rate.
        std::smatch m;
        std::string name(mnemonic);
        if (std::regex_search(name, m, shape))
          op.matrixFlops = 2.0 * std::stod(m[1]) * std::stod(m[2]) * std::stod(m[3]);
        double rate = bestFlopsPerCycle(target);
        op.matrixCycles = rate > 0 ? op.matrixFlops / rate : 0;
      }
    } else if (startsWith(mnemonic, "ds_")) {
      op.kind = OpKind::Lds;
      int bytes = accessBytes(mnemonic);
      // ds_read2 / ds_write2 (and their st64 forms) make two accesses.
      int accesses = contains(mnemonic, "2_") || contains(mnemonic, "2st64") ? 2 : 1;
      op.ldsCycles = accesses * ldsPhases(bytes, target.waveSize);
      op.bytes = double(accesses) * bytes * target.waveSize;
    } else if (startsWith(mnemonic, "buffer_load") || startsWith(mnemonic, "global_load") ||
               startsWith(mnemonic, "flat_load") || startsWith(mnemonic, "buffer_atomic") ||
               startsWith(mnemonic, "global_atomic")) {
      op.kind = OpKind::GlobalLoad;
      op.bytes = double(accessBytes(mnemonic)) * target.waveSize;
    } else if (startsWith(mnemonic, "buffer_store") || startsWith(mnemonic, "global_store") ||
               startsWith(mnemonic, "flat_store")) {
      op.kind = OpKind::GlobalStore;
      op.bytes = double(accessBytes(mnemonic)) * target.waveSize;
    } else if (startsWith(mnemonic, "s_load") || startsWith(mnemonic, "s_buffer_load")) {
      op.kind = OpKind::ScalarLoad;
    } else if (mnemonic == "s_waitcnt") {
      op.kind = OpKind::Wait;
      op.waitVm = counter(operands, "vmcnt");
      op.waitLgkm = counter(operands, "lgkmcnt");
    } else if (mnemonic == "s_waitcnt_lgkmcnt" || mnemonic == "s_waitcnt_vmcnt") {
      // gfx10+: "s_waitcnt_lgkmcnt null, 0x0".
      op.kind = OpKind::Wait;
      size_t comma = operands.find(',');
      int n = comma == std::string_view::npos ? 0
                                               : int(std::strtol(std::string(operands.substr(comma + 1)).c_str(),
                                                                 nullptr, 0));
      (mnemonic == "s_waitcnt_lgkmcnt" ? op.waitLgkm : op.waitVm) = n;
    } else if (mnemonic == "s_barrier") {
      op.kind = OpKind::Barrier;
    } else if (mnemonic == "s_nop") {
      op.extraIssueCycles = std::atoi(std::string(operands).c_str());
    } else if (startsWith(mnemonic, "s_branch") || startsWith(mnemonic, "s_cbranch")) {
      // SOPP: target = address + 4 + 4 * simm16 (the printer shows the
      // 16-bit field unsigned).
      long imm = std::strtol(std::string(operands).c_str(), nullptr, 0);
      int16_t simm = static_cast<int16_t>(static_cast<uint16_t>(imm));
      branch = int64_t(at) + 4 + 4 * int64_t(simm);
    } else if (startsWith(mnemonic, "v_")) {
      op.kind = OpKind::Valu;
    }
    // Scalar loop counters: "s_cmp_lt_u32 s4, 0x100" / "s_cmpk_lt_i32 s4, 0x100"
    // and "s_add_i32 s4, s4, 16" / "s_addk_i32 s4, 0x10".
    auto splitOperands = [](std::string_view o) {
      std::vector<std::string> parts;
      size_t start = 0;
      while (start <= o.size()) {
        size_t comma = o.find(',', start);
        std::string_view part = o.substr(start, comma == std::string_view::npos ? o.npos : comma - start);
        while (!part.empty() && part.front() == ' ')
          part.remove_prefix(1);
        parts.emplace_back(part);
        if (comma == std::string_view::npos)
          break;
        start = comma + 1;
      }
      return parts;
    };
    auto constant = [](const std::string &t, int64_t &out) {
      if (t.empty() || !(std::isdigit(static_cast<unsigned char>(t[0]))))
        return false;
      out = std::strtoll(t.c_str(), nullptr, 0);
      return true;
    };
    if (startsWith(mnemonic, "s_cmp_lt_") || startsWith(mnemonic, "s_cmpk_lt_") || startsWith(mnemonic, "s_cmp_le_") ||
        startsWith(mnemonic, "s_cmpk_le_") || startsWith(mnemonic, "s_cmp_lg_") || startsWith(mnemonic, "s_cmpk_lg_")) {
      std::vector<std::string> p = splitOperands(operands);
      if (p.size() == 2 && constant(p[1], op.compareLimit)) {
        op.compareReg = p[0];
        op.compareInclusive = contains(mnemonic, "_le_");
      }
    } else if (mnemonic == "s_add_i32" || mnemonic == "s_add_u32" || mnemonic == "s_addk_i32") {
      std::vector<std::string> p = splitOperands(operands);
      if (p.size() == 3 && constant(p[2], op.step)) {
        op.stepDst = p[0];
        op.stepSrc = p[1];
      } else if (p.size() == 2 && mnemonic == "s_addk_i32" && constant(p[1], op.step)) {
        op.stepDst = op.stepSrc = p[0];
      }
    }
    ops.push_back(op);
    address.push_back(at);
    branchAddress.push_back(branch);
  }
  std::map<uint64_t, size_t> indexOf;
  for (size_t i = 0; i < address.size(); ++i)
    indexOf.emplace(address[i], i);
  for (size_t i = 0; i < ops.size(); ++i)
    if (branchAddress[i] >= 0)
      if (auto it = indexOf.find(uint64_t(branchAddress[i])); it != indexOf.end())
        ops[i].branchTo = long(it->second);
  if (ops.empty()) {
    CodeCost none;
    none.error = "no instructions in the disassembly";
    return none;
  }
  return detail::findLoops(ops, device, /*asyncGroups=*/false);
}

} // namespace tilec::model
