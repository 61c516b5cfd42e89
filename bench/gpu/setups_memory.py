"""Inputs, references and PyTorch baselines (eager and torch.compile) of the
memory-bound families (RMSNorm, SiLU-and-mul, softmax, rotary embedding);
harness.py runs them. Each setup(case, T) returns what setups_compute.py's do.
"""
import torch
import torch.nn.functional as F

import plan


def bind(env):
    """{family: setup(case, T)} for the run's device and random generator (harness.Env)."""
    dev, gen = env.dev, env.gen
    rel_err, baseline_errors = env.rel_err, env.baseline_errors

    def eager_and_compiled(fn, *args):
        """The PyTorch baselines of fn(*args): eager and under torch.compile."""
        compiled = torch.compile(fn)
        return {"torch_eager": lambda: fn(*args), "torch_compile": lambda: compiled(*args)}

    def setup_norm(case, T):
        env.fill_randn(T, "X", "W")
        eps, H = plan.NORM_EPS, case.H
        x32 = T["X"].float()
        ref = {"Y": x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * T["W"].float()}
        base = eager_and_compiled(lambda x, w: F.rms_norm(x, (H,), w, eps), T["X"], T["W"][0])
        errs = baseline_errors(base, lambda y: rel_err(y, ref["Y"]))
        # bf16 output: one rounding (2^-9 relative on average) over f32 sums.
        return ref, {"Y": 1e-2}, base, errs

    def setup_silu(case, T):
        env.fill_randn(T, "X")
        I = case.I
        x32 = T["X"].float()
        ref = {"out": F.silu(x32[:, :I]) * x32[:, I:]}

        def silu_and_mul(x):
            return F.silu(x[:, :I]) * x[:, I:]
        base = eager_and_compiled(silu_and_mul, T["X"])
        errs = baseline_errors(base, lambda out: rel_err(out, ref["out"]))
        return ref, {"out": 1e-2}, base, errs

    def setup_softmax(case, T):
        env.fill_randn(T, "X")
        ref = {"Y": torch.softmax(T["X"].float(), dim=-1)}
        base = eager_and_compiled(lambda x: torch.softmax(x, dim=-1), T["X"])
        errs = baseline_errors(base, lambda y: rel_err(y, ref["Y"]))
        return ref, {"Y": 1e-2}, base, errs

    def setup_rope(case, T):
        Tn, H, KH, D = case.T, case.H, case.KH, case.D
        half, P = D // 2, T["cos_sin_cache"].shape[0]
        T["positions"].copy_(torch.randint(0, P, (Tn,), device=dev, generator=gen, dtype=torch.int32))
        env.fill_randn(T, "Q", "K")
        # vLLM's RotaryEmbedding cache: cos then sin of p / 10000^(2i / D).
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, device=dev, dtype=torch.float64) / D))
        angles = torch.arange(P, device=dev, dtype=torch.float64)[:, None] * inv_freq[None, :]
        T["cos_sin_cache"].copy_(torch.cat((angles.cos(), angles.sin()), -1).to(torch.bfloat16))
        case.initial = {"Q": T["Q"].clone(), "K": T["K"].clone()}
        pos, cache = T["positions"].long(), T["cos_sin_cache"]

        def rope(q, k):
            """vLLM's RotaryEmbedding.forward_native (NeoX), out of place, in q's dtype."""
            cos, sin = cache[pos].chunk(2, dim=-1)
            c, s = cos[:, None, :], sin[:, None, :]

            def rot(x, heads):
                x = x.view(Tn, heads, D)
                x1, x2 = x[..., :half], x[..., half:]
                return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).view(Tn * heads, D)
            return rot(q, H), rot(k, KH)
        q32, k32 = case.initial["Q"].float(), case.initial["K"].float()
        cache32 = cache.float()
        cos, sin = cache32[pos].chunk(2, dim=-1)

        def rot32(x, heads):
            x = x.view(Tn, heads, D)
            x1, x2 = x[..., :half], x[..., half:]
            c, s = cos[:, None, :], sin[:, None, :]
            return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).view(Tn * heads, D)
        ref = {"Q": rot32(q32, H), "K": rot32(k32, KH)}
        base = eager_and_compiled(rope, case.initial["Q"], case.initial["K"])
        errs = baseline_errors(base, lambda qk: max(rel_err(qk[0], ref["Q"]), rel_err(qk[1], ref["K"])))
        # bf16 output: one rounding (2^-9 relative on average) of f32 products and sums.
        return ref, {"Q": 1e-2, "K": 1e-2}, base, errs

    return {"rms_norm": setup_norm, "silu_and_mul": setup_silu, "softmax": setup_softmax, "rope": setup_rope}
