// The ISA checks of IsaCheck.h over a decoded program. Every check walks the
// control-flow graph backwards from the instruction it is about, so that a
// loop's back edge counts as a path like any other.

#include "JIT/IsaCheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <set>

namespace tilec::jit {
namespace {

using Predecessors = std::vector<std::vector<size_t>>;

Predecessors predecessorsOf(const IsaProgram &program) {
  Predecessors preds(program.instrs.size());
  for (size_t i = 0; i < program.instrs.size(); ++i)
    for (size_t s : program.instrs[i].successors)
      preds[s].push_back(i);
  return preds;
}

bool writes(const IsaInstr &in, RegSlot slot) {
  return std::find(in.defs.begin(), in.defs.end(), slot) != in.defs.end();
}

/// The instructions whose write of `slot` can reach instruction `at` (the
/// last writer on some path to it), and whether a path from the entry reaches
/// it without any write.
struct Writers {
  std::set<size_t> instrs;
  bool fromEntry = false;
};

Writers reachingWriters(const IsaProgram &program, const Predecessors &preds, size_t at, RegSlot slot) {
  Writers out;
  std::vector<bool> seen(program.instrs.size());
  std::vector<size_t> work = preds[at];
  if (at == 0)
    out.fromEntry = true;
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    if (seen[i])
      continue;
    seen[i] = true;
    if (writes(program.instrs[i], slot)) {
      out.instrs.insert(i);
      continue;
    }
    if (i == 0)
      out.fromEntry = true;
    work.insert(work.end(), preds[i].begin(), preds[i].end());
  }
  return out;
}

std::string slotName(RegSlot slot) { return std::string(1, slot.file) + std::to_string(slot.index); }

std::string hex(uint64_t address) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format_hex(address, 0);
  return s;
}

/// lds-barrier: from each s_barrier backwards, every path that meets an LDS
/// write must first meet a wait for lgkmcnt(0).
void checkLdsBarriers(const IsaProgram &program, const Predecessors &preds,
                      std::vector<IsaViolation> &out) {
  for (size_t b = 0; b < program.instrs.size(); ++b) {
    if (!program.instrs[b].barrier)
      continue;
    std::vector<bool> seen(program.instrs.size());
    std::vector<size_t> work = preds[b];
    std::optional<size_t> unwaited;
    while (!work.empty() && !unwaited) {
      size_t i = work.back();
      work.pop_back();
      if (seen[i])
        continue;
      seen[i] = true;
      const IsaInstr &in = program.instrs[i];
      if (in.lgkmDrained)
        continue;
      if (in.ldsWrite) {
        unwaited = i;
        break;
      }
      work.insert(work.end(), preds[i].begin(), preds[i].end());
    }
    if (unwaited)
      out.push_back({"lds-barrier", program.instrs[b].address,
                     "s_barrier reachable from the LDS write at " + hex(program.instrs[*unwaited].address) +
                         " (" + program.instrs[*unwaited].text + ") without s_waitcnt lgkmcnt(0) between them"});
  }
}

/// The constant values `slot` can hold at instruction `at`: s_mov_b32/_b64
/// of an immediate, through register copies. nullopt when some write is
/// something else or a path from the entry writes nothing.
std::optional<std::set<int64_t>> constantValues(const IsaProgram &program, const Predecessors &preds,
                                                size_t at, RegSlot slot, int depth = 0) {
  if (depth > 16)
    return std::nullopt;
  Writers writers = reachingWriters(program, preds, at, slot);
  if (writers.fromEntry || writers.instrs.empty())
    return std::nullopt;
  std::set<int64_t> values;
  for (size_t w : writers.instrs) {
    const IsaInstr &in = program.instrs[w];
    size_t position = std::find(in.defs.begin(), in.defs.end(), slot) - in.defs.begin();
    if (in.hasImmediate) {
      values.insert(in.immediate & 0xffffffff);
    } else if (position < in.copyFrom.size() && in.copyFrom[position].file) {
      std::optional<std::set<int64_t>> from = constantValues(program, preds, w, in.copyFrom[position], depth + 1);
      if (!from)
        return std::nullopt;
      values.insert(from->begin(), from->end());
    } else {
      return std::nullopt;
    }
  }
  return values;
}

/// buffer-rsrc: word 3 of every buffer instruction's descriptor.
void checkBufferResources(const IsaProgram &program, const Predecessors &preds, const TargetInfo &target,
                          std::vector<IsaViolation> &out) {
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    const IsaInstr &in = program.instrs[i];
    if (!in.buffer)
      continue;
    auto rsrc = std::find_if(in.regOperands.begin(), in.regOperands.end(), [](const std::vector<RegSlot> &slots) {
      return slots.size() == 4 && std::all_of(slots.begin(), slots.end(), [](RegSlot s) { return s.file == 's'; });
    });
    if (rsrc == in.regOperands.end()) {
      out.push_back({"buffer-rsrc", in.address, "no 4-SGPR descriptor operand in " + in.text});
      continue;
    }
    RegSlot word3 = (*rsrc)[3];
    std::optional<std::set<int64_t>> values = constantValues(program, preds, i, word3);
    const int64_t expected = target.bufferRsrcFlags;
    if (!values || values->size() != 1 || *values->begin() != expected) {
      std::string seen = "not a constant";
      if (values) {
        seen.clear();
        for (int64_t v : *values)
          seen += (seen.empty() ? "" : ", ") + hex(uint64_t(v));
      }
      out.push_back({"buffer-rsrc", in.address,
                     "descriptor word 3 (" + slotName(word3) + ") of " + in.text + " is " + seen + ", not " +
                         target.arch + "'s " + hex(uint64_t(expected))});
    }
  }
}

/// The instructions that produced the value `slot` holds at `at`: its
/// reaching writers, followed back through register copies.
Writers originWriters(const IsaProgram &program, const Predecessors &preds, size_t at, RegSlot slot,
                      std::set<std::pair<size_t, RegSlot>> &visited) {
  Writers out;
  if (!visited.insert({at, slot}).second)
    return out;
  Writers direct = reachingWriters(program, preds, at, slot);
  out.fromEntry = direct.fromEntry;
  for (size_t w : direct.instrs) {
    const IsaInstr &in = program.instrs[w];
    size_t position = std::find(in.defs.begin(), in.defs.end(), slot) - in.defs.begin();
    if (position < in.copyFrom.size() && in.copyFrom[position].file) {
      Writers from = originWriters(program, preds, w, in.copyFrom[position], visited);
      out.fromEntry |= from.fromEntry;
      out.instrs.insert(from.instrs.begin(), from.instrs.end());
    } else {
      out.instrs.insert(w);
    }
  }
  return out;
}

/// The A and B operands of every matrix instruction: (instruction, operand
/// index 0 = A / 1 = B, its slots).
template <class F> void forEachMatrixOperand(const IsaProgram &program, F &&f) {
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    const IsaInstr &in = program.instrs[i];
    if (!in.matrix)
      continue;
    // regOperands holds the destination first, then the sources in order.
    const size_t firstSource = in.defs.empty() ? 0 : 1;
    for (size_t operand = 0; operand < 2; ++operand)
      f(i, operand,
        firstSource + operand < in.regOperands.size() ? &in.regOperands[firstSource + operand] : nullptr);
  }
}

std::string operandName(size_t operand) { return operand ? "B" : "A"; }

/// matrix-operands: the A and B registers (the first two register operands
/// the instruction reads) are written on every path, and, when an LDS read
/// produced any of them, produced by LDS reads only (through register
/// copies).
void checkMatrixOperands(const IsaProgram &program, const Predecessors &preds, std::vector<IsaViolation> &out) {
  forEachMatrixOperand(program, [&](size_t i, size_t operand, const std::vector<RegSlot> *slots) {
    const IsaInstr &in = program.instrs[i];
    if (!slots) {
      out.push_back({"matrix-operands", in.address, "cannot find operand " + operandName(operand) + " of " + in.text});
      return;
    }
    std::set<size_t> writers;
    std::string problem;
    for (RegSlot slot : *slots) {
      std::set<std::pair<size_t, RegSlot>> visited;
      Writers w = originWriters(program, preds, i, slot, visited);
      if (w.fromEntry) {
        problem = slotName(slot) + " is read before any instruction writes it";
        break;
      }
      writers.insert(w.instrs.begin(), w.instrs.end());
    }
    const bool anyLds =
        std::any_of(writers.begin(), writers.end(), [&](size_t w) { return program.instrs[w].ldsRead; });
    if (problem.empty() && anyLds)
      for (size_t w : writers)
        if (!program.instrs[w].ldsRead) {
          problem = "loaded from LDS, but " + program.instrs[w].text + " at " + hex(program.instrs[w].address) +
                    " also writes it";
          break;
        }
    if (!problem.empty())
      out.push_back({"matrix-operands", in.address, operandName(operand) + " operand of " + in.text + ": " + problem});
  });
}

/// Bit-moving instructions that assemble an operand register from loaded
/// pieces (16-bit elements read one by one and packed in pairs): their
/// result is made of their VGPR sources' bits (shift amounts and byte
/// selectors are immediates or SGPRs).
bool packsBits(llvm::StringRef mnemonic) {
  mnemonic.consume_back("_e32") || mnemonic.consume_back("_e64") || mnemonic.consume_back("_sdwa");
  return llvm::is_contained({"v_lshl_or_b32", "v_perm_b32", "v_and_or_b32", "v_or_b32", "v_or3_b32",
                             "v_lshlrev_b32", "v_lshrrev_b32", "v_lshlrev_b16", "v_lshrrev_b16", "v_and_b32",
                             "v_bfi_b32", "v_alignbit_b32", "v_alignbyte_b32", "v_pack_b32_f16"},
                            mnemonic);
}

/// The instructions whose loaded or constant bits make up `slot` at `at`:
/// its reaching writers, followed back through copies and bit packing.
Writers dataOrigins(const IsaProgram &program, const Predecessors &preds, size_t at, RegSlot slot,
                    std::set<std::pair<size_t, RegSlot>> &visited) {
  Writers out;
  if (!visited.insert({at, slot}).second)
    return out;
  Writers direct = reachingWriters(program, preds, at, slot);
  out.fromEntry = direct.fromEntry;
  for (size_t w : direct.instrs) {
    const IsaInstr &in = program.instrs[w];
    size_t position = std::find(in.defs.begin(), in.defs.end(), slot) - in.defs.begin();
    std::vector<RegSlot> sources;
    if (position < in.copyFrom.size() && in.copyFrom[position].file)
      sources = {in.copyFrom[position]};
    else if (packsBits(in.mnemonic))  // the data are VGPRs; shift amounts and selectors scalar
      std::copy_if(in.uses.begin(), in.uses.end(), std::back_inserter(sources),
                   [](RegSlot s) { return s.file == 'v'; });
    if (sources.empty())
      out.instrs.insert(w);
    for (RegSlot source : sources) {
      Writers from = dataOrigins(program, preds, w, source, visited);
      out.fromEntry |= from.fromEntry;
      out.instrs.insert(from.instrs.begin(), from.instrs.end());
    }
  }
  return out;
}


} // namespace

std::vector<IsaViolation> checkMatrixOperandsFromLds(const IsaProgram &program) {
  std::vector<IsaViolation> out;
  Predecessors preds = predecessorsOf(program);
  forEachMatrixOperand(program, [&](size_t i, size_t operand, const std::vector<RegSlot> *slots) {
    const IsaInstr &in = program.instrs[i];
    if (!slots) {
      out.push_back({"matrix-from-lds", in.address, "cannot find operand " + operandName(operand) + " of " + in.text});
      return;
    }
    for (RegSlot slot : *slots) {
      std::set<std::pair<size_t, RegSlot>> visited;
      Writers w = dataOrigins(program, preds, i, slot, visited);
      auto notLds = std::find_if(w.instrs.begin(), w.instrs.end(), [&](size_t x) { return !program.instrs[x].ldsRead; });
      if (w.fromEntry || w.instrs.empty() || notLds != w.instrs.end()) {
        out.push_back({"matrix-from-lds", in.address,
                       operandName(operand) + " operand of " + in.text + ": " + slotName(slot) + " is " +
                           (notLds != w.instrs.end() ? "produced by " + program.instrs[*notLds].text + " at " +
                                                           hex(program.instrs[*notLds].address)
                                                     : std::string("not written on every path")) +
                           ", not an LDS read"});
        return;
      }
    }
  });
  return out;
}

std::vector<IsaViolation> checkIsa(const IsaProgram &program, const TargetInfo &target) {
  std::vector<IsaViolation> out;
  Predecessors preds = predecessorsOf(program);
  checkLdsBarriers(program, preds, out);
  checkBufferResources(program, preds, target, out);
  checkMatrixOperands(program, preds, out);
  return out;
}

std::string formatViolations(const std::vector<IsaViolation> &violations) {
  std::string text;
  for (const IsaViolation &v : violations)
    text += v.check + " at " + hex(v.address) + ": " + v.message + "\n";
  return text;
}

} // namespace tilec::jit
