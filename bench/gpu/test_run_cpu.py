"""CPU smoke test of run.py's references and baselines (needs torch, no GPU).

  python3 bench/gpu/test_run_cpu.py OUT_DIR      (OUT_DIR: what prepare.sh wrote)

Shrinks every case to a few rows (keeping the head counts, which select the
bundle's kernels), runs run.py's GPU path on the CPU and requires
 - every PyTorch baseline that runs on the CPU to agree with the harness's
   reference within the case's bound: a wrong layout, mask, head grouping,
   block-table gather or routing in the reference would not;
 - every tilec row to fail verification through the NaN poison: tilec's
   kernels do not run on the CPU, so launches are replaced by no-ops that
   write nothing, and a harness that missed unwritten outputs would pass them
   (outputs updated in place: through the reference, as they keep setup's
   contents).
The Triton baseline (triton_baselines.py) runs here only in Triton's
interpreter: with TRITON_INTERPRET=1 set, its GEMM and attention rows must
agree with the reference and record the configuration autotuning chose;
without it they must record that Triton is unavailable on the CPU.
This tests the harness, not the kernels.

  TRITON_INTERPRET=1 python3 bench/gpu/test_run_cpu.py OUT_DIR   (with the Triton baseline)
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan  # noqa: E402
import run   # noqa: E402

interpret_triton = os.environ.get("TRITON_INTERPRET") == "1"
if interpret_triton:
    import test_triton_cpu  # noqa: E402
    import triton_baselines  # noqa: E402
    test_triton_cpu.widen_bf16_dot_operands()
    # The interpreter takes minutes per attention case and configuration; two
    # candidates exercise the autotuning (test_triton_cpu.py checks them all).
    triton_baselines.GEMM_CONFIGS = [triton_baselines.GEMM_CONFIGS[0], triton_baselines.GEMM_CONFIGS[-1]]
    triton_baselines.ATTENTION_CONFIGS = triton_baselines.ATTENTION_CONFIGS[-2:]

plan.GEMM_SHAPES = [(64, 48, 40), (16, 40, 24)]
plan.ATTN.update(batch=2, seq=40, head_dim=32)
plan.ATTN_VARLEN = [40, 17, 9]
plan.ATTN_HEAD_SIZES.update(batch=2, seq=40)   # the head sizes select the kernels
plan.DECODE.update(batch=3, heads=4, kv_heads=2, context=40, head_dim=32, block_size=16)
plan.MLA.update(batch=3, context=70)   # 128 heads and 64-token blocks: the bundle's kernels
plan.MOE.update(experts=4, topk=2, hidden=32, intermediate=48)
plan.MOE_TOKENS = [7]
plan.BWD.update(batch=2, seq=33, head_dim=32)
plan.NORM_SHAPES = [(5, 64)]   # hidden and cols keep their divisibility (8), which selects the kernel
plan.SILU_SHAPES = [(5, 14336)]   # the intermediate size selects the kernel
plan.SOFTMAX_SHAPES = [(5, 72)]
plan.ROPE_TOKENS = [5]   # head counts and head_dim select the kernel
plan.ROPE.update(max_position=64)

sys.path.insert(0, sys.argv[1])
import tilec  # noqa: E402  (the package prepare.sh copied, which run.py imports)


def fake_launch(self, name, *args, stream=None):
    """GEMM kernels compute with torch what they compute on the GPU, so the
    verifying path must pass them: C = A B^T (B the nn.Linear weight [N, K]),
    or split-K's s partial sums over slices of K ([s * M, N]) and the reduce
    kernel's sum of them. Every other kernel writes nothing."""
    if name.startswith("gemm_reduce_"):
        partials, c = args
        c.copy_(partials.view(-1, *c.shape).sum(0))
    elif name.startswith("gemm_") and len(args) == 3:   # the fp8 GEMM (scales) writes nothing
        a, b, c = args
        m, s = a.shape[0], c.shape[0] // a.shape[0]
        for i, (ak, bk) in enumerate(zip(a.float().tensor_split(s, 1), b.float().tensor_split(s, 1))):
            c[i * m:(i + 1) * m] = ak @ bk.t()


tilec.Bundle.launch = fake_launch

out = os.path.join(tempfile.mkdtemp(), "cpu.json")
sys.argv = ["run.py", sys.argv[1], "--device", "cpu", "--out", out, "--reps", "20", "--warmup", "1",
            "--only", ",".join(run.FAMILIES)]
run.main()
rows = json.load(open(out))["rows"]
failures, checked = [], 0
in_place = {c.family: bool(c.in_place) for c in run.all_cases()}
families = {r["family"] for r in rows}
for fam in ("gemm", "attention", "paged_decode", "mla_decode", "moe", "attention_bwd"):
    if fam not in families:
        failures.append("no row of " + fam)
for r in rows:
    if "baseline_rel_err" not in r:
        failures.append("%s %s: setup failed: %s" % (r["family"], r["shape"], r.get("error")))
        continue
    bound = max(r["bounds"].values())
    triton_expected = r["family"] == "gemm" or (r["family"] == "attention" and "varlen" not in r["shape"])
    if triton_expected:
        triton_err = r["baseline_rel_err"].get("triton")
        if interpret_triton and "triton" not in r.get("baseline_config", {}):
            failures.append("%s %s: no Triton autotuning recorded: %s" % (r["family"], r["shape"], triton_err))
        if not interpret_triton and not str(triton_err).startswith("unavailable"):
            failures.append("%s %s: Triton not recorded as unavailable: %s" % (r["family"], r["shape"], triton_err))
    for name, err in r["baseline_rel_err"].items():
        if isinstance(err, str):
            if name == "triton" and not interpret_triton and err.startswith("unavailable"):
                continue
            if "cudnn" in name:   # cuDNN has no CPU kernel
                continue
            if "No available kernel" in err:   # an SDPA backend that refuses the shape (flash: Q and V
                continue                         # head sizes differ) checks nothing here
            failures.append("%s %s: baseline %s: %s" % (r["family"], r["shape"], name, err.splitlines()[0][:200]))
            continue
        for e in (err.values() if isinstance(err, dict) else [err]):
            checked += 1
            if not e < bound:
                failures.append("%s %s: baseline %s differs from the reference: %s" % (r["family"], r["shape"],
                                                                                     name, err))
    if r["family"] == "gemm":
        if not r.get("verified"):
            failures.append("gemm %s %s: a correct C did not verify: %s" % (r["shape"], r.get("config"),
                                                                            r.get("error", r.get("rel_err"))))
        continue
    if in_place.get(r["family"]):
        # Updated in place: the no-op leaves setup's contents, which must not
        # pass as the result.
        if r.get("verified") or "error" in r:
            failures.append("%s %s %s: the no-op launch was not caught by the reference: %s" % (
                r["family"], r["shape"], r.get("config"), r.get("error", r.get("rel_err"))))
        continue
    if r.get("verified") or "error" in r or not r.get("unwritten") or 0 in r["unwritten"].values():
        failures.append("%s %s %s: the no-op launch was not caught as unwritten outputs: %s" % (
            r["family"], r["shape"], r.get("config"), r.get("error", r.get("unwritten"))))
for shape in {r["shape"] for r in rows if r["family"] == "gemm"}:
    if sum(1 for r in rows if r["shape"] == shape and r.get("best")) != 1:
        failures.append("gemm %s: not exactly one configuration marked best" % shape)
print("\n%d baseline errors checked" % checked)
for f in failures:
    print("FAIL " + f)
sys.exit(1 if failures or checked == 0 else 0)
