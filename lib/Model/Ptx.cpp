// Reads PTX into the model's ops. PTX is not SASS: ptxas schedules,
// allocates and rewrites the code after this point (it may fold address
// arithmetic, hoist loads, unroll), so the counts here are of the virtual
// instruction set, one issue slot each (docs/cost-model.md, "PTX is not SASS").
// Latencies follow the scoreboard: an instruction that reads a register a load
// writes waits for that load; cp.async copies complete by commit groups
// (cp.async.wait_group N: all but the N most recent groups).
#include "Model/Ops.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace tilec::model {
namespace {

using detail::Op;
using detail::OpKind;

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

/// Bytes per lane of a ld/st type suffix with its vector width (.v4.b32: 16).
int typeBytes(std::string_view opcode) {
  int elem = 4;
  static const std::pair<const char *, int> types[] = {
      {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}, {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4},
      {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2}, {".bf16", 2}, {".b8", 1}, {".u8", 1}, {".s8", 1}};
  for (auto [suffix, bytes] : types)
    if (contains(opcode, suffix)) {
      elem = bytes;
      break;
    }
  int vec = contains(opcode, ".v4") ? 4 : contains(opcode, ".v2") ? 2 : 1;
  return elem * vec;
}

/// The registers (%r12, %rd3, %f7, %p1...) named in `s`, in order.
std::vector<std::string> registers(std::string_view s) {
  std::vector<std::string> regs;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%')
      continue;
    size_t j = i + 1;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_'))
      ++j;
    if (j > i + 1)
      regs.emplace_back(s.substr(i, j - i));
    i = j - 1;
  }
  return regs;
}

} // namespace

CodeCost analyzePtx(std::string_view text, const TargetInfo &target, const DeviceFacts &device) {
  std::vector<Op> ops;
  std::map<std::string, size_t> labels;        // label -> index of the next op
  std::vector<std::pair<size_t, std::string>> branches;
  // Per op: registers a load writes, registers anything else writes, and
  // registers read.
  std::vector<std::vector<std::string>> regDefs, regKills, regUses;
  const int lanes = target.waveSize;
  // Statements: split on ';' and on the braces of inline-assembly blocks.
  std::string statement;
  auto flush = [&](std::string_view raw) {
    std::string_view s = trim(raw);
    if (s.empty() || s[0] == '.' || startsWith(s, "//"))
      return;
    if (s.back() == ':') {
      labels[std::string(s.substr(0, s.size() - 1))] = ops.size();
      return;
    }
    if (s[0] == '@') {  // a guard predicate: "@%p1 bra $L__BB0_2" (the guard is a use)
      size_t space = s.find_first_of(" \t");
      if (space == std::string_view::npos)
        return;
      s = trim(s.substr(space));
    }
    size_t space = s.find_first_of(" \t");
    std::string_view opcode = s.substr(0, space);
    std::string_view operands = space == std::string_view::npos ? "" : trim(s.substr(space));
    Op op;
    op.kind = OpKind::Valu;
    bool load = false, store = false;
    if (startsWith(opcode, "mma.sync") || startsWith(opcode, "wgmma.mma_async")) {
      op.kind = OpKind::Matrix;
      if (const MatrixInstr *mi = target.findInstr(opcode)) {
        // A warpgroup instruction (wgmma) appears once in each of its 4
        // warps' code: each warp carries a quarter of its work, and its
        // cycles are those of the warp's sub-partition.
        op.matrixCycles = mi->cycles;
        op.matrixFlops = 2.0 * mi->m * mi->n * mi->k / mi->waves;
      }
    } else if (startsWith(opcode, "ldmatrix")) {
      // .x1/.x2/.x4 8x8 matrices of 16-byte rows: 128 bytes, one shared
      // memory cycle (32 banks x 4 bytes) each.
      int matrices = contains(opcode, ".x4") ? 4 : contains(opcode, ".x2") ? 2 : 1;
      op.kind = OpKind::Lds;
      op.ldsCycles = matrices;
      op.bytes = 128.0 * matrices;
      load = true;
    } else if (startsWith(opcode, "ld.shared") || startsWith(opcode, "st.shared")) {
      op.kind = OpKind::Lds;
      op.bytes = double(typeBytes(opcode)) * lanes;
      op.ldsCycles = std::max(1.0, op.bytes / device.ldsBytesPerClkPerUnit);
      load = opcode[0] == 'l';
      store = !load;
    } else if (startsWith(opcode, "cp.async.commit_group")) {
      op.kind = OpKind::Commit;
    } else if (startsWith(opcode, "cp.async.wait_group")) {
      op.kind = OpKind::Wait;
      op.waitVm = std::atoi(std::string(operands).c_str());
    } else if (startsWith(opcode, "cp.async.wait_all")) {
      op.kind = OpKind::Wait;
      op.waitVm = 0;
    } else if (startsWith(opcode, "cp.async")) {
      // cp.async.cg.shared.global [dst], [src], 16(, src_size): global bytes
      // in, the same bytes written to shared memory.
      op.kind = OpKind::GlobalLoad;
      int size = 16;
      size_t comma = operands.find(',', operands.rfind(']') + 1);
      if (comma != std::string_view::npos)
        size = std::max(1, std::atoi(std::string(trim(operands.substr(comma + 1))).c_str()));
      op.bytes = double(size) * lanes;
      op.ldsCycles = std::max(1.0, op.bytes / device.ldsBytesPerClkPerUnit);
      store = true;  // no register result
    } else if (startsWith(opcode, "ld.global") || startsWith(opcode, "ld.volatile.global") ||
               startsWith(opcode, "ld.relaxed.gpu.global") || startsWith(opcode, "atom.global")) {
      op.kind = OpKind::GlobalLoad;
      op.bytes = double(typeBytes(opcode)) * lanes;
      load = true;
    } else if (startsWith(opcode, "st.global") || startsWith(opcode, "red.global")) {
      op.kind = OpKind::GlobalStore;
      op.bytes = double(typeBytes(opcode)) * lanes;
      store = true;
    } else if (startsWith(opcode, "bar.sync") || startsWith(opcode, "barrier")) {
      op.kind = OpKind::Barrier;
    } else if (startsWith(opcode, "bra")) {
      op.kind = OpKind::Salu;
      branches.push_back({ops.size(), std::string(trim(operands))});
      store = true;
    } else if (startsWith(opcode, "ld.param") || startsWith(opcode, "ret") || startsWith(opcode, "exit")) {
      op.kind = OpKind::Salu;
    }
    // Loop counters: a compare with a constant, a step by a constant.
    if (startsWith(opcode, "setp.lt.") || startsWith(opcode, "setp.le.") || startsWith(opcode, "setp.ne.")) {
      std::vector<std::string> regs = registers(operands);
      size_t last = operands.rfind(',');
      std::string limit(trim(operands.substr(last + 1)));
      if (regs.size() == 2 && !limit.empty() && (std::isdigit(static_cast<unsigned char>(limit[0])))) {
        op.compareReg = regs[1];
        op.compareLimit = std::strtoll(limit.c_str(), nullptr, 0);
        op.compareInclusive = startsWith(opcode, "setp.le.");
      }
    } else if (startsWith(opcode, "add.s32") || startsWith(opcode, "add.u32") || startsWith(opcode, "add.s64")) {
      std::vector<std::string> regs = registers(operands);
      size_t last = operands.rfind(',');
      std::string step(trim(operands.substr(last + 1)));
      if (regs.size() == 2 && !step.empty() && std::isdigit(static_cast<unsigned char>(step[0]))) {
        op.stepDst = regs[0];
        op.stepSrc = regs[1];
        op.step = std::strtoll(step.c_str(), nullptr, 0);
      }
    }
    // Registers: the first operand is the result, except for stores, copies
    // and branches, whose operands are all read.
    size_t comma = operands.find(',');
    std::string_view defs = store || comma == std::string_view::npos ? "" : operands.substr(0, comma);
    std::string_view uses = store || comma == std::string_view::npos ? operands : operands.substr(comma + 1);
    if (startsWith(opcode, "mma")) {
      size_t close = operands.find('}');
      defs = close == std::string_view::npos ? "" : operands.substr(0, close + 1);
      uses = close == std::string_view::npos ? operands : operands.substr(close + 1);
    }
    regDefs.push_back(load ? registers(defs) : std::vector<std::string>{});
    regKills.push_back(load ? std::vector<std::string>{} : registers(defs));
    regUses.push_back(registers(uses));
    ops.push_back(std::move(op));
  };
  for (char ch : text) {
    if (ch == '\n') {
      // A comment runs to the end of the line.
      if (size_t c = statement.find("//"); c != std::string::npos)
        statement.resize(c);
      std::string_view s = trim(statement);
      if (!s.empty() && s.back() == ':') {
        flush(s);
        statement.clear();
      } else if (!s.empty() && s[0] == '.') {
        statement.clear();  // a directive line
      }
      continue;
    }
    if (ch == ';' || ch == '{' || ch == '}') {
      if (ch == '{' && !trim(statement).empty()) {
        statement += ch;  // an operand list: "{%r1, %r2}"
        continue;
      }
      if (ch == '}' && statement.find('{') != std::string::npos) {
        statement += ch;
        continue;
      }
      flush(statement);
      statement.clear();
      continue;
    }
    statement += ch;
  }
  flush(statement);
  // Scoreboard dependences: the load that last wrote each register read.
  // Two sweeps over the program, so that a read at the top of a loop finds
  // the load at its bottom (the previous pass's).
  std::map<std::string, size_t> pendingLoad;
  for (int sweep = 0; sweep < 2; ++sweep)
    for (size_t i = 0; i < ops.size(); ++i) {
      for (const std::string &r : regUses[i])
        if (auto it = pendingLoad.find(r); it != pendingLoad.end() &&
                                            std::find(ops[i].deps.begin(), ops[i].deps.end(), it->second) ==
                                                ops[i].deps.end())
          ops[i].deps.push_back(it->second);
      for (const std::string &r : regDefs[i])
        pendingLoad[r] = i;
      for (const std::string &r : regKills[i])
        pendingLoad.erase(r);
    }
  for (auto [index, label] : branches)
    if (auto it = labels.find(label); it != labels.end())
      ops[index].branchTo = long(it->second);
  if (ops.empty()) {
    CodeCost none;
    none.error = "no instructions in the PTX";
    return none;
  }
  return detail::findLoops(ops, device, /*asyncGroups=*/true);
}

} // namespace tilec::model
