"""The H200 harness's cases (run.py): per kernel family at one shape, the
tensors a row allocates, its scalars, the work it does and, per tilec
configuration, the launch sequence. Needs neither torch nor a GPU (run.py
--check-args and test_cases.py use it as is); inputs, references and
baselines are in setups_compute.py and setups_memory.py.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan  # noqa: E402

#
# A case declares its tensors ({name: (shape, dtype)}, dtypes as the manifest
# spells them), its scalars ({name: value}) and, per tilec configuration, the
# launch sequence: [(plan key, [argument names])]. An argument name is a
# tensor or a scalar of the case; it must equal the kernel's parameter name,
# which --check-args asserts. Inputs, references and baselines (GPU only) are
# in setups_compute.py and setups_memory.py, by family.


def cdiv(a, b):
    return (a + b - 1) // b


class Case:
    family = ""
    outputs = ()        # tensors compared with the reference
    scratch = ()        # tensors the kernels write and read (poisoned too)
    # Outputs the kernels update in place: not poisoned, but reset to the
    # contents setup gave them (case.initial) before the verifying launch.
    in_place = ()

    def __init__(self, shape_label):
        self.shape = shape_label
        self.tensors, self.scalars, self.variants = {}, {}, []
        # {view: base}: a view is the leading rows of a base tensor (its
        # declared shape), not memory of its own.
        self.views = {}
        self.work = {}     # {"flop": n} or {"bytes": n}, for TFLOP/s or GB/s
        self.baseline_config = {}   # {baseline: what its autotuning chose}, filled by setup

    def variant(self, config, launches):
        self.variants.append((config, launches))


class Gemm(Case):
    """C = A @ B^T with B the nn.Linear weight [N, K] (F.linear; tilec's layout nt).
    A split-K configuration writes f32 partial sums to `partials` (split_k
    slices of M rows), which the reduce kernel sums in a fixed order."""
    family = "gemm"
    outputs = ("C",)

    def __init__(self, m, n, k):
        super().__init__("%dx%dx%d" % (m, n, k))
        self.m, self.n, self.k = m, n, k
        self.tensors = {"A": ((m, k), "bf16"), "B": ((n, k), "bf16"), "C": ((m, n), "bf16")}
        split = max(plan.gemm_split_k(c) for c in plan.gemm_configs(m))
        if split > 1:
            self.tensors["partials"] = ((split * m, n), "f32")
            self.scratch = ("partials",)
        self.work = {"flop": 2.0 * m * n * k}
        for c in plan.gemm_configs(m):
            s = plan.gemm_split_k(c)
            if s == 1:
                self.variant(c, [(plan.gemm_key(m, n, k, c), ["A", "B", "C"])])
            else:
                view = "partials%d" % s
                self.tensors[view] = ((s * m, n), "f32")
                self.views[view] = "partials"
                self.variant(c, [(plan.gemm_key(m, n, k, c, "partial"), ["A", "B", view]),
                                 (plan.gemm_key(m, n, k, c, "reduce"), [view, "C"])])


class Fp8Gemm(Case):
    """C (bf16) = scale_a * scale_b * (A @ B^T), A [M, K] and B [N, K] OCP e4m3 with
    per-tensor f32 scales (tilec: -p dtype=e4m3 layout=nt; PyTorch: torch._scaled_mm
    with the same scales)."""
    family = "fp8_gemm"
    outputs = ("C",)

    def __init__(self, m, n, k):
        super().__init__("%dx%dx%d %s" % (m, n, k, plan.FP8_GEMM_DTYPE))
        self.m, self.n, self.k = m, n, k
        fp8 = "f8E4M3FN"
        self.tensors = {"A": ((m, k), fp8), "B": ((n, k), fp8), "C": ((m, n), "bf16")}
        self.scalars = dict(plan.FP8_GEMM_SCALES)
        self.work = {"flop": 2.0 * m * n * k}
        for c in plan.FP8_GEMM_CONFIGS:
            self.variant(c, [(plan.fp8_gemm_key(m, n, k, c), ["A", "B", "C", "scale_a", "scale_b"])])


class Fp8BlockGemm(Case):
    """C (bf16) = sum over k blocks b of scale_a[:, b] * scale_b[n // 128, b] * (A_b @ B_b^T), A
    [M, K] and B [N, K] OCP e4m3, scale_a [M, K/128] and scale_b [N/128, K/128] f32 (tilec: -p
    dtype=e4m3 layout=nt scaling=block; PyTorch: torch._scaled_mm's block-wise scaling where the
    installed version takes it, and the bf16 matmul of the dequantised operands)."""
    family = "fp8_block_gemm"
    outputs = ("C",)

    def __init__(self, m, n, k):
        super().__init__("%dx%dx%d %s" % (m, n, k, plan.FP8_GEMM_DTYPE))
        self.m, self.n, self.k = m, n, k
        fp8 = "f8E4M3FN"
        self.tensors = {"A": ((m, k), fp8), "B": ((n, k), fp8), "C": ((m, n), "bf16"),
                        "scale_a": ((m, cdiv(k, 128)), "f32"), "scale_b": ((cdiv(n, 128), cdiv(k, 128)), "f32")}
        self.work = {"flop": 2.0 * m * n * k}
        for c in plan.FP8_BLOCK_GEMM_CONFIGS:
            self.variant(c, [(plan.fp8_block_gemm_key(m, n, k, c), ["A", "B", "C", "scale_a", "scale_b"])])


class StridedGemm(Case):
    """C = A @ B^T as Gemm, with A the leading K columns of a buffer [M, K + pad]
    (plan.STRIDED_GEMM_PAD): tilec's strided kernel reads the buffer with lda = K + pad
    and the i32 sizes; the baselines take the view A = buf[:, :K]."""
    family = "strided_gemm"
    outputs = ("C",)

    def __init__(self, m, n, k):
        lda = k + plan.STRIDED_GEMM_PAD
        super().__init__("%dx%dx%d lda %d" % (m, n, k, lda))
        self.m, self.n, self.k = m, n, k
        self.tensors = {"A": ((m, lda), "bf16"), "B": ((n, k), "bf16"), "C": ((m, n), "bf16")}
        self.scalars = {"M": m, "N": n, "K": k, "batch": 1, "batch_stride_a": m, "batch_stride_b": n,
                        "batch_stride_c": m}
        self.work = {"flop": 2.0 * m * n * k}
        for c in plan.STRIDED_GEMM_CONFIGS:
            self.variant(c, [(plan.strided_gemm_key(m, n, k, c), ["A", "B", "C", "M", "N", "K", "batch",
                                                                   "batch_stride_a", "batch_stride_b",
                                                                   "batch_stride_c"])])


ATTN_ARGS = ["Q", "K", "V", "O", "LSE", "cu_seqlens_q", "cu_seqlens_k", "softmax_scale", "max_seqlen_q", "batch"]


class Attention(Case):
    """Forward over a packed batch of `lengths` (seq_k = seq_q per sequence)."""
    family = "attention"
    outputs = ("O", "LSE")

    def __init__(self, lengths, causal, heads=None, configs=None, label=None, head_dim=None, head_dim_v=None):
        heads = heads or plan.ATTN["heads"]
        D = head_dim or plan.ATTN["head_dim"]
        Dv = head_dim_v or D
        super().__init__(label or "B%d H%d S%d D%d%s%s" % (len(lengths), heads, max(lengths), D,
                                                             "/%d" % Dv if Dv != D else "", " causal" if causal else ""))
        self.lengths, self.causal, self.heads, self.D, self.Dv = list(lengths), causal, heads, D, Dv
        total = sum(lengths)
        self.tensors = {"Q": ((total, heads * D), "bf16"), "K": ((total, heads * D), "bf16"),
                        "V": ((total, heads * Dv), "bf16"), "O": ((total, heads * Dv), "bf16"),
                        "LSE": ((total, heads), "f32"), "cu_seqlens_q": ((len(lengths) + 1,), "i32"),
                        "cu_seqlens_k": ((len(lengths) + 1,), "i32")}
        self.scalars = {"softmax_scale": 1.0 / math.sqrt(D), "max_seqlen_q": max(lengths), "batch": len(lengths)}
        # 2 B H S^2 (D + Dv) for the two products; causal does half.
        self.work = {"flop": sum(2.0 * heads * s * s * (D + Dv) * (0.5 if causal else 1.0) for s in lengths)}
        for cfg in configs or plan.ATTN_CONFIGS:
            self.variant(plan.attn_config_name(cfg),
                         [(plan.attn_key(heads, causal, cfg, D, Dv), ATTN_ARGS)])


class AttentionBwd(Case):
    family = "attention_bwd"
    outputs = ("dQ", "dK", "dV")
    scratch = ("O", "LSE", "Delta")

    def __init__(self):
        B, H, S, D = (plan.BWD[k] for k in ("batch", "heads", "seq", "head_dim"))
        causal = bool(plan.BWD["causal"])
        super().__init__("B%d H%d S%d D%d%s" % (B, H, S, D, " causal" if causal else ""))
        self.B, self.H, self.S, self.D, self.causal = B, H, S, D, causal
        t, w = (B * S, H * D), "bf16"
        self.tensors = {"Q": (t, w), "K": (t, w), "V": (t, w), "O": (t, w), "LSE": ((B * S, H), "f32"),
                        "dO": (t, w), "dQ": (t, w), "dK": (t, w), "dV": (t, w), "Delta": ((B * S, H), "f32"),
                        "cu_seqlens_q": ((B + 1,), "i32"), "cu_seqlens_k": ((B + 1,), "i32")}
        self.scalars = {"softmax_scale": 1.0 / math.sqrt(D), "max_seqlen_q": S, "max_seqlen_k": S, "batch": B}
        # The backward's five products: 2.5 times the forward's two.
        self.work = {"flop": 2.5 * 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)}
        # The forward (O, LSE) runs before the verifying launch only; the
        # timed sequence is the backward proper (dq, dkdv).
        self.forward = [(plan.attn_key(H, causal, plan.BWD_FWD_CONFIG), ATTN_ARGS)]
        for cfg in plan.BWD_CONFIGS:
            self.variant("dq+dkdv " + cfg[0], [
                (plan.bwd_key("dq", cfg), ["Q", "K", "V", "O", "LSE", "dO", "cu_seqlens_q", "cu_seqlens_k", "dQ",
                                           "Delta", "softmax_scale", "max_seqlen_q", "batch"]),
                (plan.bwd_key("dkdv", cfg), ["Q", "K", "V", "LSE", "dO", "Delta", "cu_seqlens_q", "cu_seqlens_k",
                                             "dK", "dV", "softmax_scale", "max_seqlen_k", "batch"])])


class PagedDecode(Case):
    family = "paged_decode"
    outputs = ("O", "LSE")
    scratch = ("O_part", "LSE_part")
    SPARE_BLOCKS = 3   # cache blocks no sequence owns

    def __init__(self):
        p = plan.DECODE
        B, H, KH, C, D, BS = p["batch"], p["heads"], p["kv_heads"], p["context"], p["head_dim"], p["block_size"]
        super().__init__("B%d H%d/KV%d ctx%d D%d bs%d" % (B, H, KH, C, D, BS))
        self.B, self.H, self.KH, self.C, self.D, self.BS = B, H, KH, C, D, BS
        self.blocks_per_seq = cdiv(C, BS)
        self.num_blocks = B * self.blocks_per_seq + self.SPARE_BLOCKS
        self.tensors = {"Q": ((B * H, D), "bf16"), "K_cache": ((self.num_blocks * BS, KH * D), "bf16"),
                        "V_cache": ((self.num_blocks * BS, KH * D), "bf16"), "O": ((B * H, D), "bf16"),
                        "LSE": ((B * H, 1), "f32"), "block_tables": ((B, self.blocks_per_seq), "i32"),
                        "context_lens": ((B,), "i32")}
        self.scalars = {"softmax_scale": 1.0 / math.sqrt(D)}
        self.work = {"bytes": 2.0 * B * C * KH * D * 2}   # K and V of every context, bf16, read once
        max_splits = max(plan.DECODE_SPLITS)
        self.tensors["O_part"] = ((max_splits * B * H, D), "f32")
        self.tensors["LSE_part"] = ((max_splits * B * H, 1), "f32")
        attend = ["Q", "K_cache", "V_cache", "O", "LSE", "block_tables", "context_lens", "softmax_scale"]
        for st in plan.DECODE_STAGES:
            for s in plan.DECODE_SPLITS:
                if s == 1:
                    self.variant(plan.decode_label(1, st), [(plan.decode_key(1, "attend", st), attend)])
                    continue
                # The partials of s splits: the first s * tokens * heads rows
                # of O_part / LSE_part (views).
                self.variant(plan.decode_label(s, st), [
                    (plan.decode_key(s, "attend", st), ["Q", "K_cache", "V_cache", "O_part%d" % s, "LSE_part%d" % s,
                                                        "block_tables", "context_lens", "softmax_scale"]),
                    (plan.decode_key(s, "combine"), ["O_part%d" % s, "LSE_part%d" % s, "O", "LSE"])])
                self.tensors["O_part%d" % s] = ((s * B * H, D), "f32")
                self.tensors["LSE_part%d" % s] = ((s * B * H, 1), "f32")
                self.views.update({"O_part%d" % s: "O_part", "LSE_part%d" % s: "LSE_part"})

    @staticmethod
    def kernel_arg_name(name):
        """O_part4 is the kernel's O_part (a view of the largest)."""
        return name.rstrip("0123456789") if name.startswith(("O_part", "LSE_part")) else name


class MlaDecode(Case):
    """DeepSeek-V3's MLA decode: every query head attends to the one 576-wide
    latent per token (scores over all 576, values its first 512)."""
    family = "mla_decode"
    outputs = ("O", "LSE")
    scratch = ("O_part", "LSE_part")
    SPARE_BLOCKS = 3
    WIDTH, LATENT = 576, 512

    def __init__(self):
        p = plan.MLA
        B, H, C, BS = p["batch"], p["heads"], p["context"], p["block_size"]
        super().__init__("B%d H%d ctx%d latent512+64 bs%d" % (B, H, C, BS))
        self.B, self.H, self.C, self.BS = B, H, C, BS
        self.blocks_per_seq = cdiv(C, BS)
        self.num_blocks = B * self.blocks_per_seq + self.SPARE_BLOCKS
        W, L = self.WIDTH, self.LATENT
        self.tensors = {"Q": ((B * H, W), "bf16"), "KV_cache": ((self.num_blocks * BS, W), "bf16"),
                        "O": ((B * H, L), "bf16"), "LSE": ((B * H, 1), "f32"),
                        "block_tables": ((B, self.blocks_per_seq), "i32"), "context_lens": ((B,), "i32")}
        # DeepSeek-V3's softmax scale: 1/sqrt of the query-key head size before absorption (128 + 64).
        self.scalars = {"softmax_scale": 1.0 / math.sqrt(192)}
        self.work = {"bytes": 2.0 * B * C * W}   # the latent cache of every context, bf16, read once
        max_splits = max(plan.MLA_SPLITS)
        self.tensors["O_part"] = ((max_splits * B * H, L), "f32")
        self.tensors["LSE_part"] = ((max_splits * B * H, 1), "f32")
        attend = ["Q", "KV_cache", "O", "LSE", "block_tables", "context_lens", "softmax_scale"]
        for s in plan.MLA_SPLITS:
            if s == 1:
                self.variant("splits1", [(plan.mla_key(1), attend)])
            else:
                self.variant("splits%d" % s, [
                    (plan.mla_key(s, "attend"), ["Q", "KV_cache", "O_part%d" % s, "LSE_part%d" % s,
                                                 "block_tables", "context_lens", "softmax_scale"]),
                    (plan.mla_key(s, "combine"), ["O_part%d" % s, "LSE_part%d" % s, "O", "LSE"])])
                self.tensors["O_part%d" % s] = ((s * B * H, L), "f32")
                self.tensors["LSE_part%d" % s] = ((s * B * H, 1), "f32")
                self.views.update({"O_part%d" % s: "O_part", "LSE_part%d" % s: "LSE_part"})


class Moe(Case):
    family = "moe"
    outputs = ("out",)
    scratch = ("topk_weights", "topk_ids", "sorted_token_ids", "block_experts", "positions", "total_padded", "H", "Y")

    def __init__(self, tokens, cfg):
        p = plan.MOE
        E, K, Hd, I = p["experts"], p["topk"], p["hidden"], p["intermediate"]
        super().__init__("T%d E%d top%d hidden%d inter%d" % (tokens, E, K, Hd, I))
        self.T, self.E, self.K, self.Hd, self.I, self.BM = tokens, E, K, Hd, I, cfg["block_m"]
        # The padded bound of the sorted pairs (kernels/moe/Moe.cpp): every
        # expert's segment rounded up to block_m.
        P = cdiv(tokens * K + E * (self.BM - 1), self.BM) * self.BM
        self.tensors = {"logits": ((tokens, E), "bf16"), "X": ((tokens, Hd), "bf16"),
                        "W13": ((E * 2 * I, Hd), "bf16"), "W2": ((E * Hd, I), "bf16"),
                        "topk_weights": ((tokens, K), "f32"), "topk_ids": ((tokens, K), "i32"),
                        "sorted_token_ids": ((P,), "i32"), "block_experts": ((P // self.BM,), "i32"),
                        "positions": ((K * tokens,), "i32"), "total_padded": ((1,), "i32"),
                        "H": ((P, I), "bf16"), "Y": ((P, Hd), "f32"), "out": ((tokens, Hd), "bf16")}
        self.work = {"flop": 2.0 * tokens * K * 3 * Hd * I}
        self.variant(plan.moe_config_label(cfg), [
            (plan.moe_key(cfg, "gate"), ["logits", "topk_weights", "topk_ids"]),
            (plan.moe_key(cfg, "align"), ["topk_ids", "sorted_token_ids", "block_experts", "positions",
                                          "total_padded"]),
            (plan.moe_key(cfg, "gate_up"), ["X", "W13", "sorted_token_ids", "block_experts", "H"]),
            (plan.moe_key(cfg, "down"), ["H", "W2", "block_experts", "Y"]),
            (plan.moe_key(cfg, "combine"), ["Y", "positions", "topk_weights", "out"])])


class RmsNorm(Case):
    family = "rms_norm"
    outputs = ("Y",)

    def __init__(self, tokens, hidden):
        super().__init__("T%d hidden%d" % (tokens, hidden))
        self.T, self.H = tokens, hidden
        self.tensors = {"X": ((tokens, hidden), "bf16"), "W": ((1, hidden), "bf16"), "Y": ((tokens, hidden), "bf16")}
        self.scalars = {"eps": plan.NORM_EPS, "inv_h": 1.0 / hidden}
        # Bytes a memory-bound kernel must move: X read once, Y written, W read.
        self.work = {"bytes": 2.0 * (2 * tokens * hidden + hidden)}
        for cfg in plan.NORM_CONFIGS:
            self.variant(plan.norm_config_label(cfg), [(plan.norm_key(hidden, cfg), ["X", "W", "Y", "eps", "inv_h"])])


class SiluAndMul(Case):
    family = "silu_and_mul"
    outputs = ("out",)

    def __init__(self, tokens, intermediate):
        super().__init__("T%d inter%d" % (tokens, intermediate))
        self.T, self.I = tokens, intermediate
        self.tensors = {"X": ((tokens, 2 * intermediate), "bf16"), "out": ((tokens, intermediate), "bf16")}
        self.work = {"bytes": 2.0 * 3 * tokens * intermediate}   # X read, out written
        for cfg in plan.SILU_CONFIGS:
            self.variant(plan.norm_config_label(cfg), [(plan.silu_key(intermediate, cfg), ["X", "out"])])


class RmsNormFp8(Case):
    """rms_norm into OCP e4m3: a static scale (inv_scale argument), or per-token
    or per-group scales the kernel computes and writes (token_scale [tokens, 1]
    or group_scale [tokens, hidden / 128], f32)."""
    outputs = ("Y",)

    def __init__(self, tokens, hidden, scales):
        super().__init__("T%d hidden%d %s scale" % (tokens, hidden, scales))
        self.family = "rms_norm_fp8" if scales == "static" else "rms_norm_fp8_" + scales
        self.T, self.H, self.scales = tokens, hidden, scales
        self.tensors = {"X": ((tokens, hidden), "bf16"), "W": ((1, hidden), "bf16"),
                        "Y": ((tokens, hidden), "f8E4M3FN")}
        self.scalars = {"eps": plan.NORM_EPS, "inv_h": 1.0 / hidden}
        args = ["X", "W", "Y", "eps", "inv_h"]
        if scales == "static":
            self.scalars["inv_scale"] = 1.0 / plan.FP8_OUT_SCALE
            args.append("inv_scale")
        else:
            name, per_token = ("token_scale", 1) if scales == "token" else ("group_scale", hidden // 128)
            self.outputs = ("Y", name)
            self.tensors[name] = ((tokens, per_token), "f32")
            args.insert(3, name)
        # X (bf16) read once, W read, Y (1 byte) written, the f32 scales written.
        self.work = {"bytes": 2.0 * (tokens * hidden + hidden) + tokens * hidden +
                     4.0 * tokens * (0 if scales == "static" else 1 if scales == "token" else hidden // 128)}
        for cfg in plan.norm_fp8_configs(scales):
            self.variant(plan.norm_config_label(cfg), [(plan.norm_fp8_key(hidden, cfg, scales), args)])


class SiluAndMulFp8(Case):
    """silu_and_mul into OCP e4m3 with a static scale (vLLM's silu_and_mul_quant)."""
    family = "silu_and_mul_fp8"
    outputs = ("out",)

    def __init__(self, tokens, intermediate):
        super().__init__("T%d inter%d" % (tokens, intermediate))
        self.T, self.I = tokens, intermediate
        self.tensors = {"X": ((tokens, 2 * intermediate), "bf16"), "out": ((tokens, intermediate), "f8E4M3FN")}
        self.scalars = {"inv_scale": 1.0 / plan.FP8_OUT_SCALE}
        self.work = {"bytes": 2.0 * 2 * tokens * intermediate + tokens * intermediate}   # X read, out written
        for cfg in plan.SILU_FP8_CONFIGS:
            self.variant(plan.norm_config_label(cfg), [(plan.silu_fp8_key(intermediate, cfg), ["X", "out", "inv_scale"])])


class Softmax(Case):
    family = "softmax"
    outputs = ("Y",)

    def __init__(self, rows, cols):
        super().__init__("R%d cols%d" % (rows, cols))
        self.R, self.C = rows, cols
        self.tensors = {"X": ((rows, cols), "bf16"), "Y": ((rows, cols), "bf16")}
        self.work = {"bytes": 2.0 * 2 * rows * cols}   # X read once, Y written
        for cfg in plan.SOFTMAX_CONFIGS:
            self.variant(plan.norm_config_label(cfg), [(plan.softmax_key(cols, cfg), ["X", "Y"])])


class Rope(Case):
    """vLLM's rotary_embedding (NeoX style) on Q [T, heads * D] and K [T,
    kv_heads * D] in place; the kernel sees them as [T * heads, D] rows."""
    family = "rope"
    outputs = ("Q", "K")
    in_place = ("Q", "K")

    def __init__(self, tokens):
        r = plan.ROPE
        H, KH, D = r["heads"], r["kv_heads"], r["head_dim"]
        super().__init__("T%d H%d KV%d D%d neox" % (tokens, H, KH, D))
        self.T, self.H, self.KH, self.D = tokens, H, KH, D
        self.tensors = {"positions": ((tokens,), "i32"), "Q": ((tokens * H, D), "bf16"),
                        "K": ((tokens * KH, D), "bf16"), "cos_sin_cache": ((r["max_position"], D), "bf16")}
        # Q and K read and written, a cache row read per token.
        self.work = {"bytes": 2.0 * (2 * tokens * (H + KH) * D + tokens * D) + 4.0 * tokens}
        for cfg in plan.ROPE_CONFIGS:
            self.variant(plan.rope_config_label(cfg),
                         [(plan.rope_key(cfg), ["positions", "Q", "K", "cos_sin_cache"])])


FAMILIES = ["gemm", "fp8_gemm", "fp8_block_gemm", "strided_gemm", "attention", "paged_decode", "mla_decode", "moe", "attention_bwd", "rms_norm", "silu_and_mul", "softmax",
            "rope", "rms_norm_fp8", "rms_norm_fp8_token", "rms_norm_fp8_group", "silu_and_mul_fp8"]


def all_cases():
    cases = [Gemm(*s) for s in plan.GEMM_SHAPES]
    cases += [Fp8Gemm(*s) for s in plan.FP8_GEMM_SHAPES]
    cases += [Fp8BlockGemm(*s) for s in plan.FP8_BLOCK_GEMM_SHAPES]
    cases += [StridedGemm(*s) for s in plan.STRIDED_GEMM_SHAPES]
    a = plan.ATTN
    for causal in (True, False):
        cases.append(Attention([a["seq"]] * a["batch"], causal))
    cases.append(Attention(plan.ATTN_VARLEN, True, label="varlen %s H%d D%d causal" % (
        "+".join(map(str, plan.ATTN_VARLEN)), a["heads"], a["head_dim"])))
    h = plan.ATTN_HEAD_SIZES
    for (d, dv) in h["head_dims"]:
        cases.append(Attention([h["seq"]] * h["batch"], True, heads=h["heads"], configs=[plan.ATTN_DEFAULT],
                               head_dim=d, head_dim_v=dv))
    cases.append(PagedDecode())
    cases.append(MlaDecode())
    for t in plan.MOE_TOKENS:
        for cfg in plan.MOE_CONFIGS:
            cases.append(Moe(t, cfg))
    cases.append(AttentionBwd())
    for (t, h) in plan.NORM_SHAPES:
        cases.append(RmsNorm(t, h))
    for (t, i) in plan.SILU_SHAPES:
        cases.append(SiluAndMul(t, i))
    for (r, c) in plan.SOFTMAX_SHAPES:
        cases.append(Softmax(r, c))
    for t in plan.ROPE_TOKENS:
        cases.append(Rope(t))
    for scales in plan.NORM_FP8_SCALES:
        cases += [RmsNormFp8(t, h, scales) for (t, h) in plan.NORM_SHAPES]
    cases += [SiluAndMulFp8(t, i) for (t, i) in plan.SILU_SHAPES]
    return cases


def kernel_arg_name(case, name):
    if isinstance(case, Gemm) and name.startswith("partials"):
        return "partials"  # partials4 is the kernel's partials (a view of the largest)
    return PagedDecode.kernel_arg_name(name) if isinstance(case, (PagedDecode, MlaDecode)) else name


def poisoned(case):
    """The tensors the verifying launch fills with NaN (i32: -7) first: the
    outputs and the scratch, so that an element no kernel writes cannot pass.
    Inputs and outputs updated in place keep their values; a view is poisoned
    through its base."""
    return [n for n in case.outputs if n not in case.in_place] + list(case.scratch)


def poison(case, T):
    for n in poisoned(case):
        T[n].fill_(float("nan") if T[n].is_floating_point() else -7)


def launch_sequences(case):
    """Every launch list of the case: its variants' and (backward) the forward."""
    seqs = [launches for _, launches in case.variants]
    if isinstance(case, AttentionBwd):
        seqs.append(case.forward)
    return seqs
