"""Triton as a baseline peer (triton_kernels.py), autotuned in the run:
before a case's baselines are timed, each candidate configuration below is
compiled, run once and timed with the harness's CUDA events (TUNE_WARMUP,
TUNE_REPS), and the fastest becomes the baseline; the row records it with
every candidate's time (`baseline_config`). A candidate that fails to compile
or launch (shared memory, registers) is recorded with its error and skipped.

Where triton cannot be imported, or cannot run on the device (the CPU without
TRITON_INTERPRET=1, Triton's interpreter), the baseline is absent and its
`baseline_rel_err` entry says why; the rest of the row runs as before.
"""
import os
import time

NAME = "triton"
TUNE_WARMUP, TUNE_REPS = 2, 10

# Hopper-sized tiles for bf16: 128 x 256 and 128 x 128 tiles over 8 warps (two
# warpgroups) and 4 warps, deep K pipelines; 64-row tiles (one warpgroup MMA)
# for mid-sized shapes, and a 16-row one for decode-like M (16 x 4096 x 4096),
# where a 64-row tile would compute three rows of padding for every real one.
GEMM_CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 16, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
]
# BLOCK_M a multiple of BLOCK_N (the causal kernel's unmasked/diagonal split).
ATTENTION_CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2},
    {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2},
]


def kernels(dev):
    """(triton_kernels, None), or (None, why Triton cannot run on dev)."""
    if dev.type != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        return None, "unavailable: Triton runs on the GPU, or on the CPU only in its interpreter (TRITON_INTERPRET=1)"
    try:
        import triton_kernels
    except Exception as e:   # ImportError, or a triton that does not match this torch
        return None, "unavailable: import triton failed: %s: %s" % (type(e).__name__, e)
    return triton_kernels, None


def label(cfg):
    return " ".join("%s=%s" % (k, v) for k, v in cfg.items())


def autotune(env, configs, launch):
    """Times launch(cfg) for every cfg; returns (the fastest cfg or None, record)."""
    start = time.time()
    tried, best, best_ms = {}, None, None
    for cfg in configs:
        try:
            launch(cfg)   # compiles
            env.sync()
            ms = env.time_ms(lambda: launch(cfg), warmup=TUNE_WARMUP, reps=TUNE_REPS)["ms"]
        except Exception as e:
            tried[label(cfg)] = "error: %s" % (str(e).splitlines() or [type(e).__name__])[0][:200]
            continue
        tried[label(cfg)] = ms
        if best_ms is None or ms < best_ms:
            best, best_ms = cfg, ms
    record = {"chosen": best, "tried_ms": tried, "tuning_s": round(time.time() - start, 2),
              "method": "each configuration compiled, then timed (median of %d after %d) by the harness" % (
                  TUNE_REPS, TUNE_WARMUP)}
    return best, record


def add_gemm(env, case, A, W, ref, base, errs):
    """Adds the Triton GEMM C = A W^T to base/errs (see the module doc)."""
    tk, why = kernels(env.dev)
    if tk is None:
        errs[NAME] = why
        return
    torch = env.torch
    C = torch.empty(A.shape[0], W.shape[0], device=env.dev, dtype=A.dtype)
    best, record = autotune(env, GEMM_CONFIGS, lambda cfg: tk.gemm(A, W, C, cfg))
    case.baseline_config[NAME] = record
    if best is None:
        errs[NAME] = "error: no configuration ran: %s" % record["tried_ms"]
        return
    C.fill_(float("nan"))   # what the chosen configuration writes is what is checked
    errs[NAME] = env.rel_err(tk.gemm(A, W, C, best), ref)
    base[NAME] = lambda: tk.gemm(A, W, C, best)


def add_attention(env, case, q, k, v, scale, base, errs):
    """Adds the Triton attention forward on [B, H, S, D] views to base (the
    caller verifies every baseline the same way), or its absence to errs."""
    tk, why = kernels(env.dev)
    if tk is None:
        errs[NAME] = why
        return
    torch = env.torch
    B, H, S, _ = q.shape
    O = torch.empty(B, H, S, v.shape[-1], device=env.dev, dtype=q.dtype)
    best, record = autotune(env, ATTENTION_CONFIGS, lambda cfg: tk.attention(q, k, v, O, case.causal, scale, cfg))
    case.baseline_config[NAME] = record
    if best is None:
        errs[NAME] = "error: no configuration ran: %s" % record["tried_ms"]
        return
    O.fill_(float("nan"))   # what the chosen configuration writes is what is checked
    base[NAME] = lambda: tk.attention(q, k, v, O, case.causal, scale, best)
