"""Inputs, references and PyTorch baselines of the compute-bound families
(GEMM, fp8 GEMM, attention forward and backward, paged and MLA decode, MoE);
harness.py runs them. Each setup(case, T) fills the case's inputs in T and
returns (reference {output: tensor}, bounds {output: relative bound},
baselines {name: callable}, baseline errors {name: relative error}).
"""
import math

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import plan
import triton_baselines


def bind(env):
    """{family: setup(case, T)} for the run's device and random generator (harness.Env)."""
    dev, on_gpu, gen = env.dev, env.on_gpu, env.gen
    randn, rel_err, bhsd, baseline_errors = env.randn, env.rel_err, env.bhsd, env.baseline_errors

    def setup_gemm(case, T):
        env.fill_randn(T, "A", "B")
        ref = {"C": T["A"].double() @ T["B"].double().t()}
        A, W = T["A"], T["B"]  # W: the nn.Linear weight [N, K], as tilec reads it (layout nt)
        base = {"F.linear": lambda: F.linear(A, W), "torch.matmul": lambda: torch.matmul(A, W.t())}
        errs = {"F.linear": rel_err(F.linear(A, W), ref["C"])}
        triton_baselines.add_gemm(env, case, A, W, ref["C"], base, errs)
        # bf16 output: one rounding (2^-9 relative on average) over f32 sums.
        return ref, {"C": 1e-2}, base, errs

    def setup_strided_gemm(case, T):
        env.fill_randn(T, "A", "B")
        A, W = T["A"][:, :case.k], T["B"]  # the view the caller holds; tilec reads T["A"] with lda
        ref = {"C": A.double() @ W.double().t()}
        base = {"F.linear": lambda: F.linear(A, W)}
        errs = {"F.linear": rel_err(F.linear(A, W), ref["C"])}
        return ref, {"C": 1e-2}, base, errs

    def setup_fp8_gemm(case, T):
        # Inputs: normal samples (|x| < 6 or so) rounded to e4m3 (max 448), so the
        # per-tensor scales are what a quantised tensor carries, not saturation.
        T["A"].copy_(torch.randn(T["A"].shape, device=dev, generator=gen).to(torch.float8_e4m3fn))
        T["B"].copy_(torch.randn(T["B"].shape, device=dev, generator=gen).to(torch.float8_e4m3fn))
        sa, sb = case.scalars["scale_a"], case.scalars["scale_b"]
        A, B = T["A"], T["B"]
        ref = {"C": (A.double() @ B.double().t()) * (sa * sb)}

        def dequantised():   # what a kernel without fp8 support computes
            return ((A.float() @ B.float().t()) * (sa * sb)).to(torch.bfloat16)
        base = {"dequantised matmul": dequantised}
        if on_gpu:   # torch._scaled_mm: cuBLASLt's fp8 GEMM, B^T column-major, the same scales
            ta = torch.tensor(sa, device=dev, dtype=torch.float32)
            tb = torch.tensor(sb, device=dev, dtype=torch.float32)
            base["torch._scaled_mm"] = lambda: torch._scaled_mm(A, B.t(), scale_a=ta, scale_b=tb,
                                                                out_dtype=torch.bfloat16)
        errs = baseline_errors(base, lambda c: rel_err(c, ref["C"]))
        # Products of e4m3 values are exact; f32 sums, then one bf16 rounding
        # (2^-9 relative on average).
        return ref, {"C": 1e-2}, base, errs

    def setup_fp8_block_gemm(case, T):
        # Operands as setup_fp8_gemm's; scales positive, spread over a factor of 4 (what
        # per-block amax scaling gives a tensor whose blocks differ in range).
        T["A"].copy_(torch.randn(T["A"].shape, device=dev, generator=gen).to(torch.float8_e4m3fn))
        T["B"].copy_(torch.randn(T["B"].shape, device=dev, generator=gen).to(torch.float8_e4m3fn))
        for name in ("scale_a", "scale_b"):
            T[name].copy_(torch.rand(T[name].shape, device=dev, generator=gen) * 0.75 + 0.25)
        A, B, sa, sb = T["A"], T["B"], T["scale_a"], T["scale_b"]
        m, n, k = case.m, case.n, case.k

        def dequantise(dtype):   # A * scale_a per 1x128 group, B * scale_b per 128x128 block
            a = A.to(dtype) * sa.to(dtype).repeat_interleave(128, 1)[:, :k]
            b = B.to(dtype) * sb.to(dtype).repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
            return a, b
        a64, b64 = dequantise(torch.float64)
        ref = {"C": a64 @ b64.t()}
        del a64, b64
        a16, b16 = dequantise(torch.bfloat16)   # dequantised outside the timing
        base = {"bf16 matmul of the dequantised operands": lambda: a16 @ b16.t()}
        if on_gpu:
            # torch._scaled_mm's block-wise scaling (1x128 for A, 128x128 for B): scales
            # outer-dim-major, i.e. scale_a as [M, K/128] with stride (1, M) and scale_b as
            # [K/128, N/128] with stride (1, K/128), for B^T column-major.
            sa_t = sa.t().contiguous().t()
            sb_t = sb.t()
            base["torch._scaled_mm (block-wise)"] = lambda: torch._scaled_mm(
                A, B.t(), scale_a=sa_t, scale_b=sb_t, out_dtype=torch.bfloat16)
        errs = baseline_errors(base, lambda c: rel_err(c, ref["C"]))
        # Exact e4m3 products, f32 sums per k block, two f32 roundings of the scaled block
        # sum, then one bf16 rounding (2^-9 relative on average).
        return ref, {"C": 1e-2}, base, errs

    def attention_reference(q, k, v, causal, scale):
        """[.., S, D] float32 -> O, LSE (natural log), per leading index to bound memory."""
        outs, lses = [], []
        for i in range(q.shape[0]):
            s = (q[i].float() @ k[i].float().transpose(-1, -2)) * scale
            if causal:
                S = s.shape[-1]
                s.masked_fill_(torch.ones(S, S, device=dev, dtype=torch.bool).triu(1), float("-inf"))
            lse = torch.logsumexp(s, dim=-1)
            outs.append(torch.softmax(s, dim=-1) @ v[i].float())
            lses.append(lse)
            del s
        return torch.stack(outs), torch.stack(lses)

    def setup_attention(case, T):
        H, D, Dv, L = case.heads, case.D, case.Dv, case.lengths
        dims = {"Q": D, "K": D, "V": Dv}
        env.fill_randn(T, "Q", "K", "V")
        cu = torch.tensor([0] + list(torch.tensor(L).cumsum(0).tolist()), dtype=torch.int32, device=dev)
        T["cu_seqlens_q"].copy_(cu)
        T["cu_seqlens_k"].copy_(cu)
        scale = case.scalars["softmax_scale"]
        O_ref = torch.empty(T["O"].shape, device=dev, dtype=torch.float32)
        L_ref = torch.empty(T["LSE"].shape, device=dev, dtype=torch.float32)
        views = []
        for b, s in enumerate(L):
            r = slice(int(cu[b]), int(cu[b + 1]))
            q, k, v = (bhsd(T[n][r], 1, s, H, dims[n]) for n in ("Q", "K", "V"))
            views.append((q, k, v))
            o, lse = attention_reference(q[0], k[0], v[0], case.causal, scale)  # [H, s, Dv], [H, s]
            O_ref[r] = o.transpose(0, 1).reshape(s, H * Dv)
            L_ref[r] = lse.transpose(0, 1)
        base, errs = {}, {}
        if len(set(L)) == 1:
            B = len(L)
            q, k, v = (bhsd(T[n], B, L[0], H, dims[n]) for n in ("Q", "K", "V"))
            for label, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)):
                def run(backend=backend):
                    with sdpa_kernel(backend):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=case.causal, scale=scale)
                base[label] = run
            triton_baselines.add_attention(env, case, q, k, v, scale, base, errs)
        else:
            def loop():   # one SDPA call per sequence of the packed batch
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return [F.scaled_dot_product_attention(q, k, v, is_causal=case.causal, scale=scale)
                            for q, k, v in views]
            base["sdpa_flash_per_seq"] = loop

        def packed(o):   # [B, H, S, Dv] (a list of them per sequence) -> [tokens, H * Dv]
            return torch.cat([x[0].transpose(0, 1).reshape(-1, H * Dv) for x in o]) if isinstance(o, list) else \
                o.transpose(1, 2).reshape(-1, H * Dv)
        errs.update(baseline_errors(base, lambda o: rel_err(packed(o), O_ref)))
        # O in bf16: P and O each rounded once to 2^-8 units; the f32 softmax
        # adds ~1e-6. LSE is f32 throughout (exp2/log approximations ~2^-20).
        return {"O": O_ref, "LSE": L_ref}, {"O": 1e-2, "LSE": 1e-4}, base, errs

    def setup_decode(case, T):
        B, H, KH, C, D, BS = case.B, case.H, case.KH, case.C, case.D, case.BS
        G = H // KH
        env.fill_randn(T, "Q", "K_cache", "V_cache")
        perm = torch.randperm(case.num_blocks, device=dev, generator=gen).to(torch.int32)
        table = perm[:B * case.blocks_per_seq].view(B, case.blocks_per_seq)   # shuffled, 3 spare blocks unused
        T["block_tables"].copy_(table)
        T["context_lens"].fill_(C)
        # The same KV gathered contiguous: [B, KH, C, D].
        def gather(cache):
            blocks = cache.view(case.num_blocks, BS, KH, D)[table.long()]        # [B, nb, BS, KH, D]
            return blocks.reshape(B, -1, KH, D)[:, :C].permute(0, 2, 1, 3).contiguous()
        Kc, Vc = gather(T["K_cache"]), gather(T["V_cache"])
        q = T["Q"].view(B, KH, G, D)           # query head h = kvh * G + g
        scale = case.scalars["softmax_scale"]
        o, lse = attention_reference(q.reshape(B * KH, G, D), Kc.reshape(B * KH, C, D), Vc.reshape(B * KH, C, D),
                                     False, scale)
        ref = {"O": o.reshape(B * H, D), "LSE": lse.reshape(B * H, 1)}
        qh = T["Q"].view(B, H, 1, D)
        base = {
            # The G query heads of a kv head as G query rows: no GQA support needed.
            "sdpa_flash_grouped": lambda: _sdpa(SDPBackend.FLASH_ATTENTION, q, Kc, Vc, scale),
            "sdpa_cudnn_grouped": lambda: _sdpa(SDPBackend.CUDNN_ATTENTION, q, Kc, Vc, scale),
            "sdpa_gqa": lambda: F.scaled_dot_product_attention(qh, Kc, Vc, scale=scale, enable_gqa=True),
        }
        errs = baseline_errors(base, lambda o: rel_err(o.reshape(B * H, D), ref["O"]))
        return ref, {"O": 1e-2, "LSE": 1e-4}, base, errs

    def setup_mla(case, T):
        B, H, C, BS, W, L = case.B, case.H, case.C, case.BS, case.WIDTH, case.LATENT
        env.fill_randn(T, "Q", "KV_cache")
        perm = torch.randperm(case.num_blocks, device=dev, generator=gen).to(torch.int32)
        table = perm[:B * case.blocks_per_seq].view(B, case.blocks_per_seq)   # shuffled, 3 spare blocks unused
        T["block_tables"].copy_(table)
        T["context_lens"].fill_(C)
        # The latent cache gathered contiguous: [B, C, 576]; V is its first 512 columns.
        Kc = T["KV_cache"].view(case.num_blocks, BS, W)[table.long()].reshape(B, -1, W)[:, :C].contiguous()
        Vc = Kc[..., :L]
        q = T["Q"].view(B, H, W)
        scale = case.scalars["softmax_scale"]
        o, lse = attention_reference(q, Kc, Vc, False, scale)   # [B, H, 512], [B, H]
        ref = {"O": o.reshape(B * H, L), "LSE": lse.reshape(B * H, 1)}

        def matmuls():   # the absorbed MLA as PyTorch writes it: bf16 products, f32 softmax
            s = torch.matmul(q, Kc.transpose(1, 2)).float() * scale
            return torch.matmul(torch.softmax(s, dim=-1).to(torch.bfloat16), Vc)
        qh, kh, vh = q.view(B, H, 1, W), Kc.view(B, 1, C, W), Vc.view(B, 1, C, L)
        base = {
            "torch_matmul": matmuls,
            # SDPA with the latent as one KV head shared by all query heads
            # (its flash and cuDNN kernels refuse 576-wide heads; it picks what runs).
            "sdpa_gqa": lambda: F.scaled_dot_product_attention(qh, kh, vh, scale=scale, enable_gqa=True),
        }
        errs = baseline_errors(base, lambda o: rel_err(o.reshape(B * H, L), ref["O"]))
        return ref, {"O": 1e-2, "LSE": 1e-4}, base, errs

    def _sdpa(backend, q, k, v, scale):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, scale=scale)

    def moe_route(logits, K, renormalize):
        """tilec's gate: softmax over the experts (f32), top-k by logit with
        ties to the lowest expert (a stable descending sort), renormalised."""
        p = torch.softmax(logits.float(), dim=-1)
        ids = torch.sort(logits.float(), dim=-1, descending=True, stable=True).indices[:, :K]
        w = p.gather(1, ids)
        if renormalize:
            w = w / w.sum(dim=-1, keepdim=True)
        return ids, w

    def moe_layer(x, w13, w2, ids, w, E, I, dtype):
        """out[t] = sum_j w[t,j] * (silu(x Wg^T) * (x Wu^T)) W2^T of expert ids[t,j], in `dtype`."""
        out = torch.zeros(x.shape[0], w2.shape[0] // E, device=dev, dtype=torch.float32)
        for e in range(E):
            tok, j = torch.nonzero(ids == e, as_tuple=True)
            if tok.numel() == 0:
                continue
            xe = x[tok].to(dtype)
            we = w13[e * 2 * I:(e + 1) * 2 * I].to(dtype)
            g, u = F.linear(xe, we[:I]), F.linear(xe, we[I:])
            y = F.linear(F.silu(g) * u, w2[e * w2.shape[0] // E:(e + 1) * w2.shape[0] // E].to(dtype))
            out.index_add_(0, tok, (y.float() * w[tok, j].float()[:, None]))
        return out

    def setup_moe(case, T):
        E, K, Hd, I = case.E, case.K, case.Hd, case.I
        env.fill_randn(T, "logits", "X")
        # Weights scaled as trained layers keep activations O(1).
        T["W13"].copy_(randn(T["W13"].shape, 1 / math.sqrt(Hd)))
        T["W2"].copy_(randn(T["W2"].shape, 1 / math.sqrt(I)))
        ids, w = moe_route(T["logits"], K, plan.MOE["renormalize"])
        case.ref_ids = ids
        ref = {"out": moe_layer(T["X"], T["W13"], T["W2"], ids, w, E, I, torch.float32)}
        X, W13, W2, lg = T["X"], T["W13"], T["W2"], T["logits"]

        def torch_moe():   # the usual PyTorch MoE: route, then one loop over the experts, bf16
            i, ww = moe_route(lg, K, plan.MOE["renormalize"])
            return moe_layer(X, W13, W2, i, ww, E, I, torch.bfloat16)
        base = {"torch_expert_loop": torch_moe}
        errs = {"torch_expert_loop": rel_err(torch_moe(), ref["out"])}
        # bf16 H (the intermediate activation) and bf16 out: two roundings of
        # 2^-8 units, over f32 sums.
        return ref, {"out": 1e-2}, base, errs

    def setup_bwd(case, T):
        B, H, S, D = case.B, case.H, case.S, case.D
        env.fill_randn(T, "Q", "K", "V", "dO")
        cu = torch.arange(0, (B + 1) * S, S, dtype=torch.int32, device=dev)
        T["cu_seqlens_q"].copy_(cu)
        T["cu_seqlens_k"].copy_(cu)
        scale = case.scalars["softmax_scale"]
        leaves = [bhsd(T[n], B, S, H, D).float().detach().requires_grad_() for n in ("Q", "K", "V")]
        with sdpa_kernel(SDPBackend.MATH):
            o = F.scaled_dot_product_attention(*leaves, is_causal=case.causal, scale=scale)
        grads = torch.autograd.grad(o, leaves, bhsd(T["dO"], B, S, H, D).float())
        flat = lambda x: x.transpose(1, 2).reshape(B * S, H * D)   # noqa: E731
        ref = {"dQ": flat(grads[0]), "dK": flat(grads[1]), "dV": flat(grads[2])}
        del o, grads, leaves
        qb, kb, vb = (bhsd(T[n], B, S, H, D).detach().requires_grad_() for n in ("Q", "K", "V"))
        dO = bhsd(T["dO"], B, S, H, D)
        base, errs = {}, {}
        for label, backend in (("sdpa_flash_bwd", SDPBackend.FLASH_ATTENTION),
                               ("sdpa_cudnn_bwd", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel(backend):
                    out = F.scaled_dot_product_attention(qb, kb, vb, is_causal=case.causal, scale=scale)
                g = torch.autograd.grad(out, (qb, kb, vb), dO, retain_graph=True)
                errs[label] = {n: rel_err(flat(x), ref[n]) for n, x in zip(("dQ", "dK", "dV"), g)}
                base[label] = (lambda out=out: torch.autograd.grad(out, (qb, kb, vb), dO, retain_graph=True))
            except Exception as e:
                errs[label] = "error: %s" % e
        # dS = P (dP - Delta) is rounded to bf16 before two more products and
        # dP - Delta cancels, so gradients carry several bf16 roundings
        # (2^-8 each): 2e-2; the baselines' errors above are the yardstick.
        return ref, {"dQ": 2e-2, "dK": 2e-2, "dV": 2e-2}, base, errs

    return {"gemm": setup_gemm, "fp8_gemm": setup_fp8_gemm, "fp8_block_gemm": setup_fp8_block_gemm, "strided_gemm": setup_strided_gemm, "attention": setup_attention,
            "paged_decode": setup_decode, "mla_decode": setup_mla, "moe": setup_moe, "attention_bwd": setup_bwd}
