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

    # fp8 outputs (OCP e4m3): the baselines are PyTorch's eager composition
    # (the bf16 result, then scaled, clamped to +-448 and converted) and its
    # torch.compile; the reference is the f32 result scaled and clamped.
    fp8, fmax = torch.float8_e4m3fn, 448.0

    def quantise(y, inv_scale):
        return (y.float() * inv_scale).clamp(-fmax, fmax).to(fp8)

    def baselines(fn, ref, args):
        """eager_and_compiled(fn, *args) and their errors against every output of ref."""
        base = eager_and_compiled(fn, *args)
        return base, baseline_errors(base, lambda out: max(
            rel_err(o.float(), ref[n]) for n, o in zip(ref, out if isinstance(out, tuple) else (out,))))

    # fp8 output: one rounding to 3 mantissa bits (at most 2^-4 relative of
    # each element, so of the norm) over f32 terms far below it; token_scale
    # in f32: the row maximum's few roundings.
    FP8_BOUND, SCALE_BOUND = 0.07, 1e-4

    def setup_norm_fp8(case, T):
        env.fill_randn(T, "X", "W")
        eps, H = plan.NORM_EPS, case.H
        x32 = T["X"].float()
        y32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * T["W"].float()
        X, w = T["X"], T["W"][0]
        if case.scales == "static":
            inv = case.scalars["inv_scale"]
            ref = {"Y": (y32 * inv).clamp(-fmax, fmax)}

            def norm_quant(x, wt):
                return quantise(F.rms_norm(x, (H,), wt, eps), inv)
            base, errs = baselines(norm_quant, ref, (X, w))
            return ref, {"Y": FP8_BOUND}, base, errs
        # Per token: one group of H columns; per group: 128.
        group = H if case.scales == "token" else 128
        name = "token_scale" if case.scales == "token" else "group_scale"

        def dynamic(y):
            g = y.view(y.shape[0], H // group, group)
            s = (g.abs().amax(-1, keepdim=True) / fmax).clamp(min=1.0 / (512 * fmax))
            return (g / s).clamp(-fmax, fmax).view(y.shape), s.view(y.shape[0], H // group)
        q32, s32 = dynamic(y32)
        ref = {"Y": q32, name: s32}

        def norm_dynamic_quant(x, wt):   # vLLM's rms_norm_dynamic_per_token_quant (or per group), composed
            q, s = dynamic(F.rms_norm(x, (H,), wt, eps).float())
            return q.to(fp8), s
        base, errs = baselines(norm_dynamic_quant, ref, (X, w))
        # The baselines' scales come from the bf16-rounded y: 2^-9 relative.
        return ref, {"Y": FP8_BOUND, name: SCALE_BOUND}, base, errs

    def setup_silu_fp8(case, T):
        env.fill_randn(T, "X")
        I, X, inv = case.I, T["X"], case.scalars["inv_scale"]
        x32 = X.float()
        ref = {"out": (F.silu(x32[:, :I]) * x32[:, I:] * inv).clamp(-fmax, fmax)}

        def silu_and_mul_quant(x):
            return quantise(F.silu(x[:, :I]) * x[:, I:], inv)
        base, errs = baselines(silu_and_mul_quant, ref, (X,))
        return ref, {"out": FP8_BOUND}, base, errs

    return {"rms_norm": setup_norm, "silu_and_mul": setup_silu, "softmax": setup_softmax, "rope": setup_rope,
            "rms_norm_fp8": setup_norm_fp8, "rms_norm_fp8_token": setup_norm_fp8, "rms_norm_fp8_group": setup_norm_fp8,
            "silu_and_mul_fp8": setup_silu_fp8}
