"""CPU smoke test of run.py's references and baselines (needs torch, no GPU).

  python3 bench/gpu/test_run_cpu.py OUT_DIR      (OUT_DIR: what prepare.sh wrote)

Shrinks every case to a few rows, runs run.py's GPU path on the CPU and
requires every PyTorch baseline that runs on the CPU to agree with the
harness's reference within the case's bound: a wrong layout, mask, head
grouping, gather or routing in the reference would not. tilec's kernels do not
run on the CPU (their rows record the launch error), so this tests the
harness, not the kernels.
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan  # noqa: E402
import run   # noqa: E402

plan.GEMM_SHAPES = [(64, 48, 40), (16, 40, 24)]
plan.ATTN.update(batch=2, heads=2, seq=40, head_dim=32)
plan.ATTN_VARLEN = [40, 17, 9]
plan.DECODE.update(batch=3, heads=4, kv_heads=2, context=40, head_dim=32, block_size=16)
plan.MOE.update(experts=4, topk=2, hidden=32, intermediate=48)
plan.MOE_TOKENS = [7]
plan.BWD.update(batch=2, heads=2, seq=33, head_dim=32)

out = os.path.join(tempfile.mkdtemp(), "cpu.json")
sys.argv = ["run.py", sys.argv[1], "--device", "cpu", "--out", out, "--reps", "20", "--warmup", "1"]
run.main()
rows = json.load(open(out))["rows"]
failures, checked = [], 0
families = {r["family"] for r in rows}
for fam in ("gemm", "attention", "paged_decode", "moe", "attention_bwd"):
    if fam not in families:
        failures.append("no row of " + fam)
for r in rows:
    if "baseline_rel_err" not in r:
        failures.append("%s %s: setup failed: %s" % (r["family"], r["shape"], r.get("error")))
        continue
    bound = max(r["bounds"].values())
    for name, err in r["baseline_rel_err"].items():
        if isinstance(err, str):
            if "cudnn" in name:   # cuDNN has no CPU kernel
                continue
            failures.append("%s %s: baseline %s: %s" % (r["family"], r["shape"], name, err.splitlines()[0][:200]))
            continue
        for e in (err.values() if isinstance(err, dict) else [err]):
            checked += 1
            if not e < bound:
                failures.append("%s %s: baseline %s differs from the reference: %s" % (r["family"], r["shape"],
                                                                                     name, err))
    if r.get("verified"):
        failures.append("%s %s: verified on the CPU, where no tilec kernel runs" % (r["family"], r["shape"]))
print("\n%d baseline errors checked" % checked)
for f in failures:
    print("FAIL " + f)
sys.exit(1 if failures or checked == 0 else 0)
