"""Counts the instructions of an AMD kernel's main loop in its disassembly
(`tilec --emit=asm`): the loop is the range from a backward branch's target to
the last backward branch to that target, and the main loop is the one holding
the most matrix instructions (the rule lib/Model uses, docs/cost-model.md).
Prints the counts per class, and the non-matrix instructions per 16 matrix
instructions; exits 1 when that exceeds --max-per-16."""
import argparse
import collections
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--max-per-16", type=float, required=True)
args = ap.parse_args()

insts = []  # (address, mnemonic, operands)
line_re = re.compile(r"^\s+([a-z_0-9]+)\s*(.*?)\s*//\s*([0-9A-Fa-f]+):")
for line in sys.stdin:
    m = line_re.match(line)
    if m:
        insts.append((int(m.group(3), 16), m.group(1), m.group(2)))
index = {a: i for i, (a, _, _) in enumerate(insts)}

# Backward branches: SOPP offsets count dwords from the next instruction.
loops = {}  # head index -> last back-branch index
for i, (addr, mn, ops) in enumerate(insts):
    if mn in ("s_branch",) or mn.startswith("s_cbranch_"):
        simm = int(ops.split()[0]) if ops else 0
        if simm >= 0x8000:
            simm -= 0x10000
        target = addr + 4 + 4 * simm
        if simm < 0 and target in index:
            head = index[target]
            loops[head] = max(loops.get(head, i), i)

def is_matrix(mn):
    return mn.startswith("v_mfma") or mn.startswith("v_wmma")

best = None
for head, last in loops.items():
    body = insts[head:last + 1]
    n = sum(is_matrix(mn) for _, mn, _ in body)
    key = (n, -(last - head))
    if n and (best is None or key > best[0]):
        best = (key, body)
if best is None:
    sys.exit("main-loop-overhead: no loop with matrix instructions")
body = best[1]

def kind(mn, ops):
    if is_matrix(mn):
        return "matrix"
    if mn.startswith(("buffer_", "global_")):
        return "global memory"
    if mn.startswith("ds_"):
        return "lds"
    if mn == "s_waitcnt":
        return "waitcnt"
    if mn == "s_barrier":
        return "barrier"
    if mn == "s_branch" or mn.startswith(("s_cbranch", "s_cmp")):
        return "branch and compare"
    if "exec" in ops or mn.startswith("v_cmp") or mn == "v_cndmask_b32_e32" or mn == "v_cndmask_b32_e64":
        return "vector compare, select, exec"
    if mn == "v_perm_b32":
        return "v_perm"
    if mn.startswith("v_mov") or mn.startswith("v_accvgpr"):
        return "move"
    if mn.startswith("v_"):
        return "vector address and other VALU"
    if mn == "s_nop":
        return "s_nop"
    return "scalar ALU"

counts = collections.Counter(kind(mn, ops) for _, mn, ops in body)
matrix = counts.pop("matrix")
other = sum(counts.values())
per16 = other * 16.0 / matrix
for k, v in sorted(counts.items(), key=lambda kv: -kv[1]):
    print(f"{k}: {v}")
print(f"matrix instructions: {matrix}")
print(f"non-matrix instructions: {other}")
print(f"non-matrix per 16 matrix: {per16:.1f}")
if per16 > args.max_per_16:
    print(f"FAIL: {per16:.1f} non-matrix instructions per 16 matrix instructions, more than {args.max_per_16}")
    sys.exit(1)
