"""H200 benchmark: verify tilec's sm_90a kernels against PyTorch references and
time them next to PyTorch's own (cuBLAS, FlashAttention-2 / cuDNN through
SDPA, an expert loop) in the same process.

  python3 DIR/run.py [DIR] [--out results.json] [--only gemm,attention,...]
  python3 DIR/run.py [DIR] --check-args          # no GPU, no torch

DIR is what bench/gpu/prepare.sh wrote (bundle/, plan.json, tilec/ with
libtilec_rt.so); it defaults to this script's folder.

Per case (a kernel family at one shape) and tilec configuration:
 1. verify: fresh random inputs; outputs and scratch (never inputs) poisoned
    (NaN, i32 -7); one launch sequence; every output element must be written (no NaN left)
    and ||out - ref|| / ||ref|| below the case's stated bound, ref computed by
    PyTorch in float32 or float64 from the same inputs;
 2. time: CUDA events around each call on PyTorch's current stream, median
    of --reps calls after --warmup; the baselines likewise, once per case.
A failing case or configuration (an exception) is recorded and the run goes on.
The JSON is rewritten after every case, so a run cut short keeps what it did.

--check-args builds every launch that the GPU run makes with placeholder
pointers and checks it against the bundle's manifest through libtilec_rt
(tilec_check_launch: argument names, kinds, dtypes, ranks, divisibility,
grid limits), plus the argument names against the kernels' parameter names.

Modules: cases.py (what each row allocates and launches), harness.py
(verification and timing), setups_compute.py and setups_memory.py (inputs,
references, PyTorch baselines), triton_baselines.py and triton_kernels.py (the
Triton peer); this file is the command line and runs each family in a process
of its own.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan  # noqa: E402
from cases import FAMILIES, all_cases, kernel_arg_name, launch_sequences  # noqa: E402


# ---- --check-args ---------------------------------------------------------------------------

def check_args(root):
    import tilec
    with open(os.path.join(root, "plan.json")) as f:
        planned = json.load(f)
    bundle = tilec.Bundle(os.path.join(root, "bundle"))
    fake = 1 << 20   # a non-null pointer aligned to 16 bytes
    checked, missing, failures = 0, [], []
    for case in all_cases():
        for launches in launch_sequences(case):
            for key, names in launches:
                if key not in planned["kernels"]:
                    missing.append("%s %s: %s not in the bundle (%s)" % (case.family, case.shape, key,
                                                                       planned["skipped"].get(key, "not planned")))
                    continue
                name = planned["kernels"][key]["name"]
                spec = bundle.entries(name)[0]["args"]
                expected = [a["name"] for a in spec]
                given = [kernel_arg_name(case, n) for n in names]
                if given != expected:
                    failures.append("%s %s: %s takes %s, the harness passes %s" % (case.family, case.shape, name,
                                                                                   expected, given))
                    continue
                args = []
                for n in names:
                    if n in case.tensors:
                        shape, dtype = case.tensors[n]
                        args.append((fake, shape, dtype))
                    else:
                        args.append(case.scalars[n])
                try:
                    dims = bundle.check(name, *args, target=planned["arch"])
                    checked += 1
                    print("ok  %-14s %-34s %-58s grid=%s block=%s shared=%d" % (
                        case.family, case.shape, name, dims.grid[:3], dims.block[0], dims.shared_bytes))
                except tilec.TilecError as e:
                    failures.append("%s %s: %s" % (case.family, case.shape, e))
    for m in missing:
        print("MISSING " + m)
    for f in failures:
        print("FAIL " + f)
    print("check-args: %d launches checked, %d missing, %d failed" % (checked, len(missing), len(failures)))
    required = {k for k, _, _, r in plan.compile_jobs() if r}
    return 1 if failures or any(m.split(": ")[1].split()[0] in required for m in missing) else 0




# ---- GPU run --------------------------------------------------------------------------------

def gpu_main(root, args):
    import harness
    rows = harness.run_cases(root, args)
    if not args.child:
        print_table(rows, args.table)
        print("\nwrote %s" % args.out)
    return 0 if all(r.get("verified") for r in rows) else 1


def print_table(rows, mode):
    print("\n%-13s %-34s %-22s %-5s %9s %10s  %s" % ("kernel", "shape", "tilec config", "ok", "tilec ms", "rate",
                                                     "baselines ms (tilec speedup)"))
    for r in rows:
        if "tilec_ms" not in r and "error" not in r:
            continue
        if r.get("family") != "attention_bwd" and not r.get("best") and r.get("verified") and mode == "best":
            continue
        if "tilec_ms" not in r or "speedup_vs" not in r:
            print("%-13s %-34s %-22s ERROR %s" % (r.get("family"), r.get("shape"), r.get("config", "-"),
                                                   r["error"].strip().splitlines()[-1][:100]))
            continue
        speedup = r.get("speedup_vs", {})
        bl = ", ".join("%s %.3f%s" % (k, v, " (%.2fx)" % speedup[k] if speedup.get(k) else "")
                       for k, v in r["baseline_ms"].items() if v)
        rate = "%6.0f %s" % (r["tilec_rate"], r["rate_unit"]) if "tilec_rate" in r else "-"
        print("%-13s %-34s %-22s %-5s %9.3f %s  %s%s" % (r["family"], r["shape"], r["config"],
                                                         "yes" if r["verified"] else "NO", r["tilec_ms"], rate, bl,
                                                         "  ERROR" if "error" in r else ""))


def isolated(args):
    """Runs each family in its own process: a kernel that faults leaves a
    CUDA context unusable for the rest of its process, and one that hangs is
    stopped after --family-timeout; either is recorded as an error row of its
    family, and the rows it finished before are kept."""
    meta, rows = None, []
    deadline = time.time() + args.budget
    for family in FAMILIES:
        left = int(deadline - time.time())
        timeout = min(args.family_timeout, left)
        if left < 10:
            rows.append({"family": family, "shape": "-", "verified": False,
                         "error": "not run: the --budget of %d s was spent" % args.budget})
            continue
        part = "%s.%s.json" % (args.out, family)
        if os.path.exists(part):
            os.remove(part)
        cmd = [sys.executable, os.path.abspath(__file__), args.root, "--only", family, "--child", "--out", part,
               "--warmup", str(args.warmup), "--reps", str(args.reps), "--seed", str(args.seed), "--device", args.device]
        print("== %s" % family, flush=True)
        try:
            rc = subprocess.run(cmd, timeout=timeout).returncode
            problem = None if rc in (0, 1) else "the %s process exited with status %d" % (family, rc)
        except subprocess.TimeoutExpired:
            problem = "the %s process ran past its %d s (--family-timeout, --budget) and was stopped" % (family, timeout)
        if os.path.exists(part):
            with open(part) as f:
                done = json.load(f)
            os.remove(part)
            meta = meta or done["meta"]
            rows += done["rows"]
        elif problem is None:
            problem = "the %s process wrote no results" % family
        if problem:
            print(problem, flush=True)
            rows.append({"family": family, "shape": "-", "verified": False,
                         "error": problem + "; the rows before are what it finished"})
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print_table(rows, args.table)
    print("\nwrote %s" % args.out)
    return 0 if all(r.get("verified") for r in rows) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", default=HERE, help="what prepare.sh wrote (default: this script's folder)")
    ap.add_argument("--check-args", action="store_true", help="check every launch against the manifest; no GPU")
    ap.add_argument("--out", default="gpubench.json")
    ap.add_argument("--only", default="", help="comma-separated families (%s), run in this process; "
                    "without it each family runs in a process of its own" % ",".join(FAMILIES))
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--family-timeout", type=int, default=240,
                    help="seconds one family's process may run (without --only)")
    ap.add_argument("--budget", type=int, default=540,
                    help="seconds all families' processes may run together (without --only); families "
                         "left when it is spent are recorded as not run")
    ap.add_argument("--device", default="cuda", help=argparse.SUPPRESS)   # cpu: test_run_cpu.py
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # one family of isolated()
    ap.add_argument("--table", choices=["best", "all"], default="best",
                    help="table rows: the fastest verified configuration per case, or all")
    args = ap.parse_args()
    if args.reps < 20:
        ap.error("--reps must be at least 20")
    sys.path.insert(0, args.root)   # the tilec package prepare.sh copied
    if args.check_args:
        return check_args(args.root)
    if not args.only:
        return isolated(args)
    unknown = set(args.only.split(",")) - set(FAMILIES)
    if unknown:
        ap.error("--only: unknown families %s (known: %s)" % (sorted(unknown), ",".join(FAMILIES)))
    return gpu_main(args.root, args)


if __name__ == "__main__":
    sys.exit(main())
