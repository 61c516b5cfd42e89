"""The Triton baseline's kernels (triton_kernels.py) on the CPU in Triton's
interpreter (TRITON_INTERPRET=1), at small shapes against float64 PyTorch:
every tile configuration the run autotunes over, shapes that are not
multiples of any block (the masks), causal and not, a head size that is not a
power of two (padded) and different Q/K and V head sizes. Needs torch and
triton; without them it prints why and exits 0, since they are optional here
(the GPU run records an unavailable Triton in its rows).

  python3 bench/gpu/test_triton_cpu.py
"""
import math
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"   # before triton is imported
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_baselines  # noqa: E402


def widen_bf16_dot_operands():
    """Triton's interpreter (3.9) keeps bf16 as its raw uint16 bits and its
    tl.dot multiplies those integers; widen bf16 operands to the f32 values
    they stand for (exact) before its dot, which is what the GPU's MMA does."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter
    dot = interpreter.InterpreterBuilder.create_dot

    def widened(t):
        if t.dtype != tl.bfloat16:
            return t
        return interpreter.TensorHandle((t.data.astype(np.uint32) << 16).view(np.float32), tl.float32)

    def create_dot(self, a, b, d, *rest):
        return dot(self, widened(a), widened(b), d, *rest)
    interpreter.InterpreterBuilder.create_dot = create_dot


def randn(gen, *shape):
    import torch
    return torch.randn(*shape, generator=gen).to(torch.bfloat16)


def rel_err(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


def attention_ref(q, k, v, causal, scale):
    import torch
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    if causal:
        S = s.shape[-1]
        s.masked_fill_(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v.double()


def check(torch, triton_kernels):
    gen = torch.Generator().manual_seed(0)
    # bf16 outputs of f32 sums: one rounding (2^-9 relative on average);
    # attention also rounds P to bf16 before P V. The harness's bound, 1e-2,
    # holds both; a wrong mask, tile offset or rescaling gives errors of order one.
    bound = 1e-2
    failures, checked = [], 0
    for (m, n, k) in [(64, 48, 40), (33, 70, 45), (16, 40, 24), (130, 260, 136)]:
        a, w = randn(gen, m, k), randn(gen, n, k)
        ref = a.double() @ w.double().t()
        for cfg in triton_baselines.GEMM_CONFIGS:
            c = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
            err = rel_err(triton_kernels.gemm(a, w, c, cfg), ref)
            checked += 1
            if not err < bound:
                failures.append("gemm %dx%dx%d %s: rel err %s" % (m, n, k, triton_baselines.label(cfg), err))
    for (B, H, S, D, Dv) in [(2, 3, 70, 64, 64), (1, 2, 129, 48, 32), (1, 2, 128, 32, 32)]:
        # [B, S, H, D] storage seen as [B, H, S, D], as the harness passes it
        q, k = randn(gen, B, S, H, D).transpose(1, 2), randn(gen, B, S, H, D).transpose(1, 2)
        v = randn(gen, B, S, H, Dv).transpose(1, 2)
        scale = 1.0 / math.sqrt(D)
        for causal in (False, True):
            ref = attention_ref(q, k, v, causal, scale)
            for cfg in triton_baselines.ATTENTION_CONFIGS:
                o = torch.full((B, H, S, Dv), float("nan"), dtype=torch.bfloat16)
                err = rel_err(triton_kernels.attention(q, k, v, o, causal, scale, cfg), ref)
                checked += 1
                if not err < bound:
                    failures.append("attention B%d H%d S%d D%d/%d%s %s: rel err %s" % (
                        B, H, S, D, Dv, " causal" if causal else "", triton_baselines.label(cfg), err))
    for f in failures:
        print("FAIL " + f)
    print("%d Triton kernel runs checked in the interpreter, %d failed" % (checked, len(failures)))
    return 1 if failures else 0


def main():
    try:
        import torch
        import triton_kernels
    except ImportError as e:
        print("skipped: %s (the Triton baseline needs torch and triton)" % e)
        return 0
    widen_bf16_dot_operands()
    return check(torch, triton_kernels)


if __name__ == "__main__":
    sys.exit(main())
