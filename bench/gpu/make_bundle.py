"""Compiles every job of plan.compile_jobs() for sm_90a into one bundle and
writes plan.json beside it (job key -> kernel name, parameters, code-object
report), and copies the harness (HARNESS) beside them. Build machine only
(needs tilec).

  python3 bench/gpu/make_bundle.py TILEC OUT_DIR     (writes OUT_DIR/bundle, OUT_DIR/plan.json, OUT_DIR/run.py ...)
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan  # noqa: E402

# What runs on the GPU machine: run.py and every module it imports.
HARNESS = ["run.py", "cases.py", "harness.py", "setups_compute.py", "setups_memory.py", "triton_baselines.py",
           "triton_kernels.py", "plan.py", "README.md", "device_facts.py"]


def tilec(binary, kernel, params, *extra):
    cmd = [binary, "--kernel=" + kernel, "--offload-arch=" + plan.ARCH]
    for k, v in params.items():
        cmd += ["-p", "%s=%s" % (k, v)]
    return subprocess.run(cmd + list(extra), capture_output=True, text=True)


def main():
    binary, out = sys.argv[1], sys.argv[2]
    bundle = os.path.join(out, "bundle")
    os.makedirs(bundle, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.abspath(out) != here:
        for name in HARNESS:
            shutil.copy(os.path.join(here, name), os.path.join(out, name))
    jobs = plan.compile_jobs()
    kernels, skipped = {}, {}
    for i, (key, kernel, params, required) in enumerate(jobs, 1):
        start = time.time()
        # The report compiles (and fills tilec's code-object cache); the
        # bundle call then reuses the cached code object.
        r = tilec(binary, kernel, params, "--emit=report", "--json")
        if r.returncode == 0:
            b = tilec(binary, kernel, params, "--emit=bundle", "-o", bundle)
            if b.returncode != 0:
                r = b
        if r.returncode != 0:
            message = (r.stderr or r.stdout).strip()
            if required:
                sys.exit("make_bundle: required job %s (tilec --kernel=%s %s) failed:\n%s" %
                         (key, kernel, " ".join("-p %s=%s" % kv for kv in params.items()), message))
            skipped[key] = message
            print("[%2d/%d] %-45s SKIPPED: %s" % (i, len(jobs), key, message.splitlines()[0] if message else "?"),
                  flush=True)
            continue
        report = json.loads(r.stdout)
        with open(os.path.join(bundle, "manifest.json")) as f:
            entries = [e for e in json.load(f)["kernels"] if e["entry"] == report["kernel"]]
        if len(entries) != 1:
            sys.exit("make_bundle: %s: the manifest has %d entries for %s" % (key, len(entries), report["kernel"]))
        kernels[key] = {"name": entries[0]["name"], "kernel": kernel, "params": params, "report": report}
        print("[%2d/%d] %-45s %-55s %4.1fs vgpr=%s spills=%s lds=%s" %
              (i, len(jobs), key, entries[0]["name"], time.time() - start, report.get("vgpr"),
               report.get("vgpr_spills"), report.get("lds_bytes")), flush=True)
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump({"arch": plan.ARCH, "kernels": kernels, "skipped": skipped}, f, indent=1, sort_keys=True)
    print("make_bundle: %d kernels, %d skipped -> %s" % (len(kernels), len(skipped), bundle))


if __name__ == "__main__":
    main()
