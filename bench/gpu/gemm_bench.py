"""H200: verify tilec's sm_90a GEMM cubins against PyTorch and time them next to
cuBLAS (torch.matmul, F.linear) in the same process.

  python3 bench/gpu/gemm_bench.py KERNEL_DIR OUT.json

KERNEL_DIR holds what bench/gpu/build_gemm.sh wrote on the build machine.
Times: CUDA events around each launch on PyTorch's current stream, median of
`--reps` launches after `--warmup`; inputs are fresh normal random bf16.
"""
import argparse, glob, json, os, statistics, sys, time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_launch import Kernel, tensor_args  # noqa: E402


def time_ms(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels")
    ap.add_argument("out")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    torch.manual_seed(0)
    entries = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(args.kernels, "gemm_*.json")))]
    shapes = sorted({(e["M"], e["N"], e["K"]) for e in entries}, key=lambda s: s[0] * s[1] * s[2])
    stream = torch.cuda.current_stream().cuda_stream
    results = []
    for (M, N, K) in shapes:
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        Bt = B.t().contiguous()
        ref = (A.double() @ B.double())
        flop = 2.0 * M * N * K
        row = {"M": M, "N": N, "K": K, "variants": []}
        mm = time_ms(lambda: torch.matmul(A, B), args.warmup, args.reps)
        lin = time_ms(lambda: F.linear(A, Bt), args.warmup, args.reps)
        row["cublas_matmul_ms"], row["cublas_linear_ms"] = mm[0], lin[0]
        for e in [e for e in entries if (e["M"], e["N"], e["K"]) == (M, N, K)]:
            cubin = open(os.path.join(args.kernels, e["kernel"] + ".cubin"), "rb").read()
            k = Kernel(cubin, e["kernel"], e["threads"], e["report"]["lds_bytes"])
            C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            grid = ((M + e["block_m"] - 1) // e["block_m"], (N + e["block_n"] - 1) // e["block_n"])
            kargs = tensor_args(A) + tensor_args(B) + tensor_args(C)
            k.launch(grid, kargs, stream)
            torch.cuda.synchronize()
            err = ((C.double() - ref).norm() / ref.norm()).item()
            unwritten = int(torch.isnan(C).sum().item())
            t = time_ms(lambda: k.launch(grid, kargs, stream), args.warmup, args.reps)
            v = {"kernel": e["kernel"], "report": e["report"], "rel_err": err, "nan": unwritten,
                 "verified": err < 1e-2 and unwritten == 0, "ms": t[0], "ms_min": t[1], "ms_max": t[2],
                 "tflops": flop / t[0] / 1e9}
            row["variants"].append(v)
            print(f"{M}x{N}x{K} {e['kernel']:55s} err={err:.2e} nan={unwritten} {t[0]:.3f} ms "
                  f"{v['tflops']:.0f} TF/s  (cuBLAS {mm[0]:.3f} ms {flop / mm[0] / 1e9:.0f} TF/s, linear {lin[0]:.3f})",
                  flush=True)
        results.append(row)
    meta = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "driver": os.popen("nvidia-smi --query-gpu=driver_version --format=csv,noheader").read().strip()}
    json.dump({"meta": meta, "gemm": results}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
