"""The H200 harness's core (run.py --only): per case, allocate its tensors, set
up inputs, reference and baselines (setups_compute.py, setups_memory.py),
time the baselines, then per tilec configuration verify one launch sequence
against the reference on poisoned outputs and time it. Rows go to a JSON file
rewritten after each one.
"""
import json
import math
import os
import statistics
import subprocess
import time
import traceback

from cases import AttentionBwd, Moe, all_cases, poison


def driver_version():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True).stdout.strip()
    except OSError as e:
        return "nvidia-smi: %s" % e


class Env:
    """The run's device, random generator and measuring tools, shared by every setup."""

    def __init__(self, args):
        import torch
        self.torch = torch
        torch.backends.cuda.matmul.allow_tf32 = False   # float32 references are float32
        torch.backends.cudnn.allow_tf32 = False
        self.dev = torch.device(args.device)
        self.on_gpu = self.dev.type == "cuda"
        self.warmup, self.reps = args.warmup, args.reps
        self.gen = torch.Generator(device=self.dev)
        self.gen.manual_seed(args.seed)

    def sync(self):
        if self.on_gpu:
            self.torch.cuda.synchronize()

    def randn(self, shape, scale=1.0):
        torch = self.torch
        return (torch.randn(shape, device=self.dev, generator=self.gen, dtype=torch.float32) * scale).to(torch.bfloat16)

    def time_ms(self, fn, warmup=None, reps=None):
        """Median (and min, max) of reps timed calls after warmup calls (default: --warmup, --reps)."""
        torch = self.torch
        for _ in range(self.warmup if warmup is None else warmup):
            fn()
        self.sync()
        times = []
        for _ in range(self.reps if reps is None else reps):
            if self.on_gpu:   # on PyTorch's current stream, where bundle.launch launches too
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record(torch.cuda.current_stream())
                fn()
                b.record(torch.cuda.current_stream())
                b.synchronize()
                times.append(a.elapsed_time(b))
            else:        # the CPU smoke test of the harness itself (test_run_cpu.py)
                start = time.perf_counter()
                fn()
                times.append((time.perf_counter() - start) * 1e3)
        return {"ms": statistics.median(times), "ms_min": min(times), "ms_max": max(times), "reps": len(times)}

    @staticmethod
    def rel_err(out, ref):
        diff = (out.double() - ref.double()).norm().item()
        den = ref.double().norm().item()
        return diff / den if den > 0 else diff

    @staticmethod
    def baseline_errors(base, error):
        """{label: error(fn())} for each baseline {label: fn}; a baseline that
        raises (a backend refusing the layout) records "error: ..." instead,
        and its timing fails too, recorded by the harness."""
        errs = {}
        for label, fn in base.items():
            try:
                errs[label] = error(fn())
            except Exception as e:
                errs[label] = "error: %s" % e
        return errs

    def fill_randn(self, T, *names):
        """Fills T[n] for each name, in order, with randn samples (bf16)."""
        for n in names:
            T[n].copy_(self.randn(T[n].shape))

    @staticmethod
    def bhsd(x, B, S, H, D):
        """[B*S, H*D] -> [B, H, S, D] view."""
        return x.view(B, S, H, D).transpose(1, 2)


def run_cases(root, args):
    """Runs the cases of the families in --only; returns the rows (also written to --out)."""
    import torch
    import tilec
    import setups_compute
    import setups_memory

    env = Env(args)
    dev, on_gpu, sync, time_ms, rel_err = env.dev, env.on_gpu, env.sync, env.time_ms, env.rel_err
    DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32, "i32": torch.int32, "f8E4M3FN": torch.float8_e4m3fn}
    with open(os.path.join(root, "plan.json")) as f:
        planned = json.load(f)
    bundle = tilec.Bundle(os.path.join(root, "bundle"))
    setups = {**setups_compute.bind(env), **setups_memory.bind(env)}

    def setup(case, T):
        """Fills the inputs; returns (reference {output: tensor}, bounds {output: rel bound},
        baselines {name: callable}, extra baseline errors {name: rel err})."""
        return setups[case.family](case, T)

    # ---- the launches
    def allocate(case):
        T = {}
        for n, (shape, dtype) in case.tensors.items():
            if n not in case.views:
                T[n] = torch.empty(shape, device=dev, dtype=DTYPES[dtype])
        for n, base in case.views.items():
            T[n] = T[base][:case.tensors[n][0][0]]
        return T

    def launcher(case, T, launches):
        calls = []
        for key, names in launches:
            name = planned["kernels"][key]["name"]
            calls.append((name, [T[n] if n in T else case.scalars[n] for n in names]))

        def run():
            for name, a in calls:
                bundle.launch(name, *a)
        return run

    def prepared_launcher(case, T, launches):
        """The same launches with their C arguments built once: each call is
        one tilec_launch per kernel (the runtime still checks every launch),
        so the timing holds no Python argument marshalling, which would
        dominate kernels of a few microseconds."""
        lib, handle = bundle._lib, bundle._handle
        stream = torch.cuda.current_stream().cuda_stream or None
        packed = []
        for key, names in launches:
            name = planned["kernels"][key]["name"]
            args = [T[n] if n in T else case.scalars[n] for n in names]
            raw, keep = bundle._args(name, args)
            packed.append((name.encode(), raw, len(args), keep))

        def run():
            for name, raw, n, _ in packed:
                code = lib.tilec_launch(handle, name, raw, n, stream)
                if code:
                    tilec._check(lib, code)
        return run

    def unit(case):
        return ("TFLOP/s", case.work["flop"] / 1e9) if "flop" in case.work else ("GB/s", case.work["bytes"] / 1e6)

    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "device": torch.cuda.get_device_name() if on_gpu else str(dev), "driver": driver_version(),
            "torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "warmup": args.warmup, "reps": args.reps, "seed": args.seed,
            "timing": "CUDA events on torch's current stream around each call; median of reps after warmup; "
                      "tilec calls: tilec_launch with arguments prepared once (row: launch_path)",
            "error": "||out - ref|| / ||ref||, ref in float32 (float64 for gemm) by PyTorch from the same inputs"}
    rows = []

    def save():
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)

    only = set(args.only.split(",")) if args.only else None
    for case in all_cases():
        if only and case.family not in only:
            continue
        scale_unit, per = unit(case)
        T = None
        try:
            T = allocate(case)
            ref, bounds, base, base_err = setup(case, T)
            base_times = {}
            for label, fn in base.items():
                try:
                    base_times[label] = time_ms(fn)["ms"]
                except Exception as e:
                    base_times[label] = None
                    base_err[label] = "error: %s" % e
        except Exception as e:
            rows.append({"family": case.family, "shape": case.shape, "error": "setup: %s" % traceback.format_exc()})
            print("%s %s: setup failed: %s" % (case.family, case.shape, e), flush=True)
            del T
            if on_gpu:
                torch.cuda.empty_cache()
            save()
            continue
        for config, launches in case.variants:
            row = {"family": case.family, "shape": case.shape, "config": config, **case.work,
                   "kernels": [planned["kernels"].get(k, {}).get("name", k) for k, _ in launches],
                   "reports": [planned["kernels"].get(k, {}).get("report") for k, _ in launches],
                   "baseline_ms": base_times, "baseline_rel_err": base_err, "bounds": bounds}
            if case.baseline_config:   # how autotuned baselines (Triton) chose their configuration
                row["baseline_config"] = case.baseline_config
            rows.append(row)
            try:
                needed = launches + (case.forward if isinstance(case, AttentionBwd) else [])
                missing = [k for k, _ in needed if k not in planned["kernels"]]
                if missing:
                    raise RuntimeError("not in the bundle: %s (%s)" % (missing, [planned["skipped"].get(k) for k in missing]))
                for n in case.in_place:
                    T[n].copy_(case.initial[n])
                poison(case, T)
                if isinstance(case, AttentionBwd):
                    launcher(case, T, case.forward)()
                run = launcher(case, T, launches)
                run()
                sync()
                # (fp8 outputs widened: isnan need not cover 8-bit floats.)
                row["unwritten"] = {n: int(torch.isnan(T[n].float() if T[n].element_size() == 1 else T[n]).sum().item())
                                    for n in case.outputs}
                row["rel_err"] = {n: rel_err(T[n], ref[n]) for n in case.outputs}
                if isinstance(case, Moe):   # the gate's choices must be the reference's exactly
                    row["gate_id_mismatches"] = int((T["topk_ids"].long() != case.ref_ids).sum().item())
                row["verified"] = all(row["unwritten"][n] == 0 and math.isfinite(row["rel_err"][n]) and
                                      row["rel_err"][n] < bounds[n] for n in case.outputs) and \
                    row.get("gate_id_mismatches", 0) == 0
                row["launch_path"] = "Bundle.launch"
                if on_gpu:
                    try:   # falls back to Bundle.launch, and says so, should the prepared path fail
                        fast = prepared_launcher(case, T, launches)
                        fast()
                        sync()
                        run, row["launch_path"] = fast, "tilec_launch, arguments prepared once"
                    except Exception as e:
                        row["launch_path"] = "Bundle.launch (prepared path failed: %s)" % e
                t = time_ms(run)
                row.update({"tilec_" + k: v for k, v in t.items()})
                row["tilec_rate"] = per / t["ms"]
                row["rate_unit"] = scale_unit
                row["baseline_rate"] = {k: (per / v if v else None) for k, v in base_times.items()}
                row["speedup_vs"] = {k: (v / t["ms"] if v else None) for k, v in base_times.items()}
            except Exception:
                row["error"] = traceback.format_exc()
                row["verified"] = False
            print("%-13s %-34s %-22s %s" % (case.family, case.shape, config, "ok" if row.get("verified") else
                                            "FAILED " + (row["error"][-300:] if "error" in row else "rel_err %s, unwritten %s, bounds %s" % (
                                                row.get("rel_err"), row.get("unwritten"), bounds))), flush=True)
            save()
        # The fastest verified configuration is the one the report uses.
        done = [r for r in rows if r.get("shape") == case.shape and r.get("family") == case.family and
                r.get("verified") and "tilec_ms" in r]
        for r in done:   # MoE's blockings are cases of one shape each
            r.pop("best", None)
        if done:
            min(done, key=lambda r: r["tilec_ms"])["best"] = True
        del T, ref, base
        if on_gpu:
            torch.cuda.empty_cache()
        save()
    return rows
