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
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan  # noqa: E402

# ---- Cases: what each row allocates and launches (no torch needed) -------------------------
#
# A case declares its tensors ({name: (shape, dtype)}, dtypes as the manifest
# spells them), its scalars ({name: value}) and, per tilec configuration, the
# launch sequence: [(plan key, [argument names])]. An argument name is a
# tensor or a scalar of the case; it must equal the kernel's parameter name,
# which --check-args asserts. Inputs, references and baselines (GPU only) are
# the case's methods.


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
        self.variant("dq+dkdv 32x32_w4", [
            (plan.bwd_key("dq"), ["Q", "K", "V", "O", "LSE", "dO", "cu_seqlens_q", "cu_seqlens_k", "dQ", "Delta",
                                  "softmax_scale", "max_seqlen_q", "batch"]),
            (plan.bwd_key("dkdv"), ["Q", "K", "V", "LSE", "dO", "Delta", "cu_seqlens_q", "cu_seqlens_k", "dK", "dV",
                                    "softmax_scale", "max_seqlen_k", "batch"])])


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
        for s in plan.DECODE_SPLITS:
            if s == 1:
                self.variant("splits1", [(plan.decode_key(1), attend)])
            else:
                # The partials of s splits: the first s * tokens * heads rows
                # of O_part / LSE_part (views).
                self.variant("splits%d" % s, [
                    (plan.decode_key(s, "attend"), ["Q", "K_cache", "V_cache", "O_part%d" % s, "LSE_part%d" % s,
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


FAMILIES = ["gemm", "fp8_gemm", "attention", "paged_decode", "mla_decode", "moe", "attention_bwd", "rms_norm", "silu_and_mul", "softmax",
            "rope"]


def all_cases():
    cases = [Gemm(*s) for s in plan.GEMM_SHAPES]
    cases += [Fp8Gemm(*s) for s in plan.FP8_GEMM_SHAPES]
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

def driver_version():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True).stdout.strip()
    except OSError as e:
        return "nvidia-smi: %s" % e


def gpu_main(root, args):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import tilec

    torch.backends.cuda.matmul.allow_tf32 = False   # float32 references are float32
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(args.device)
    on_gpu = dev.type == "cuda"

    def sync():
        if on_gpu:
            torch.cuda.synchronize()
    DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32, "i32": torch.int32, "f8E4M3FN": torch.float8_e4m3fn}
    with open(os.path.join(root, "plan.json")) as f:
        planned = json.load(f)
    bundle = tilec.Bundle(os.path.join(root, "bundle"))
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)

    def randn(shape, scale=1.0):
        return (torch.randn(shape, device=dev, generator=gen, dtype=torch.float32) * scale).to(torch.bfloat16)

    def time_ms(fn):
        for _ in range(args.warmup):
            fn()
        sync()
        times = []
        for _ in range(args.reps):
            if on_gpu:   # on PyTorch's current stream, where bundle.launch launches too
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

    def rel_err(out, ref):
        diff = (out.double() - ref.double()).norm().item()
        den = ref.double().norm().item()
        return diff / den if den > 0 else diff

    def bhsd(x, B, S, H, D):
        """[B*S, H*D] -> [B, H, S, D] view."""
        return x.view(B, S, H, D).transpose(1, 2)

    # ---- inputs, references and baselines per family
    def setup(case, T):
        """Fills the inputs; returns (reference {output: tensor}, bounds {output: rel bound},
        baselines {name: callable}, extra baseline errors {name: rel err})."""
        if isinstance(case, Gemm):
            T["A"].copy_(randn(T["A"].shape))
            T["B"].copy_(randn(T["B"].shape))
            ref = {"C": T["A"].double() @ T["B"].double().t()}
            A, W = T["A"], T["B"]  # W: the nn.Linear weight [N, K], as tilec reads it (layout nt)
            base = {"F.linear": lambda: F.linear(A, W), "torch.matmul": lambda: torch.matmul(A, W.t())}
            # bf16 output: one rounding (2^-9 relative on average) over f32 sums.
            return ref, {"C": 1e-2}, base, {"F.linear": rel_err(F.linear(A, W), ref["C"])}
        if isinstance(case, Fp8Gemm):
            return setup_fp8_gemm(case, T)
        if isinstance(case, Attention):
            return setup_attention(case, T)
        if isinstance(case, PagedDecode):
            return setup_decode(case, T)
        if isinstance(case, MlaDecode):
            return setup_mla(case, T)
        if isinstance(case, Moe):
            return setup_moe(case, T)
        if isinstance(case, AttentionBwd):
            return setup_bwd(case, T)
        if isinstance(case, RmsNorm):
            return setup_norm(case, T)
        if isinstance(case, SiluAndMul):
            return setup_silu(case, T)
        if isinstance(case, Softmax):
            return setup_softmax(case, T)
        if isinstance(case, Rope):
            return setup_rope(case, T)
        raise ValueError(case.family)

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
        errs = {}
        for label, fn in base.items():
            try:
                errs[label] = rel_err(fn(), ref["C"])
            except Exception as e:
                errs[label] = "error: %s" % e
        # Products of e4m3 values are exact; f32 sums, then one bf16 rounding
        # (2^-9 relative on average).
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
        for n in ("Q", "K", "V"):
            T[n].copy_(randn(T[n].shape))
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
        else:
            def loop():   # one SDPA call per sequence of the packed batch
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return [F.scaled_dot_product_attention(q, k, v, is_causal=case.causal, scale=scale)
                            for q, k, v in views]
            base["sdpa_flash_per_seq"] = loop
        for label, fn in base.items():
            try:
                o = fn()
                o = torch.cat([x[0].transpose(0, 1).reshape(-1, H * Dv) for x in o]) if isinstance(o, list) else \
                    o.transpose(1, 2).reshape(-1, H * Dv)
                errs[label] = rel_err(o, O_ref)
            except Exception as e:  # a backend that refuses the layout: its timing fails too, recorded
                errs[label] = "error: %s" % e
        # O in bf16: P and O each rounded once to 2^-8 units; the f32 softmax
        # adds ~1e-6. LSE is f32 throughout (exp2/log approximations ~2^-20).
        return {"O": O_ref, "LSE": L_ref}, {"O": 1e-2, "LSE": 1e-4}, base, errs

    def setup_decode(case, T):
        B, H, KH, C, D, BS = case.B, case.H, case.KH, case.C, case.D, case.BS
        G = H // KH
        T["Q"].copy_(randn(T["Q"].shape))
        T["K_cache"].copy_(randn(T["K_cache"].shape))
        T["V_cache"].copy_(randn(T["V_cache"].shape))
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
        errs = {}
        for label, fn in base.items():
            try:
                errs[label] = rel_err(fn().reshape(B * H, D), ref["O"])
            except Exception as e:
                errs[label] = "error: %s" % e
        return ref, {"O": 1e-2, "LSE": 1e-4}, base, errs

    def setup_mla(case, T):
        B, H, C, BS, W, L = case.B, case.H, case.C, case.BS, case.WIDTH, case.LATENT
        T["Q"].copy_(randn(T["Q"].shape))
        T["KV_cache"].copy_(randn(T["KV_cache"].shape))
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
        errs = {}
        for label, fn in base.items():
            try:
                errs[label] = rel_err(fn().reshape(B * H, L), ref["O"])
            except Exception as e:
                errs[label] = "error: %s" % e
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
        T["logits"].copy_(randn(T["logits"].shape))
        T["X"].copy_(randn(T["X"].shape))
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
        for n in ("Q", "K", "V", "dO"):
            T[n].copy_(randn(T[n].shape))
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

    def setup_norm(case, T):
        T["X"].copy_(randn(T["X"].shape))
        T["W"].copy_(randn(T["W"].shape))
        eps, H = plan.NORM_EPS, case.H
        x32 = T["X"].float()
        ref = {"Y": x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * T["W"].float()}
        X, w = T["X"], T["W"][0]

        def eager():
            return F.rms_norm(X, (H,), w, eps)
        compiled = torch.compile(lambda x, wt: F.rms_norm(x, (H,), wt, eps))
        base = {"torch_eager": eager, "torch_compile": lambda: compiled(X, w)}
        errs = {}
        for label, fn in base.items():
            try:
                errs[label] = rel_err(fn(), ref["Y"])
            except Exception as e:
                errs[label] = "error: %s" % e
        # bf16 output: one rounding (2^-9 relative on average) over f32 sums.
        return ref, {"Y": 1e-2}, base, errs

    def setup_silu(case, T):
        T["X"].copy_(randn(T["X"].shape))
        I, X = case.I, T["X"]
        x32 = X.float()
        ref = {"out": F.silu(x32[:, :I]) * x32[:, I:]}

        def silu_and_mul(x):
            return F.silu(x[:, :I]) * x[:, I:]
        compiled = torch.compile(silu_and_mul)
        base = {"torch_eager": lambda: silu_and_mul(X), "torch_compile": lambda: compiled(X)}
        errs = {}
        for label, fn in base.items():
            try:
                errs[label] = rel_err(fn(), ref["out"])
            except Exception as e:
                errs[label] = "error: %s" % e
        return ref, {"out": 1e-2}, base, errs

    def setup_softmax(case, T):
        T["X"].copy_(randn(T["X"].shape))
        X = T["X"]
        ref = {"Y": torch.softmax(X.float(), dim=-1)}

        def softmax(x):
            return torch.softmax(x, dim=-1)
        compiled = torch.compile(softmax)
        base = {"torch_eager": lambda: softmax(X), "torch_compile": lambda: compiled(X)}
        errs = {}
        for label, fn in base.items():
            try:
                errs[label] = rel_err(fn(), ref["Y"])
            except Exception as e:
                errs[label] = "error: %s" % e
        return ref, {"Y": 1e-2}, base, errs

    def setup_rope(case, T):
        Tn, H, KH, D = case.T, case.H, case.KH, case.D
        half, P = D // 2, T["cos_sin_cache"].shape[0]
        T["positions"].copy_(torch.randint(0, P, (Tn,), device=dev, generator=gen, dtype=torch.int32))
        T["Q"].copy_(randn(T["Q"].shape))
        T["K"].copy_(randn(T["K"].shape))
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
        Q0, K0 = case.initial["Q"], case.initial["K"]
        compiled = torch.compile(rope)
        base = {"torch_eager": lambda: rope(Q0, K0), "torch_compile": lambda: compiled(Q0, K0)}
        errs = {}
        for label, fn in base.items():
            try:
                q, k = fn()
                errs[label] = max(rel_err(q, ref["Q"]), rel_err(k, ref["K"]))
            except Exception as e:
                errs[label] = "error: %s" % e
        # bf16 output: one rounding (2^-9 relative on average) of f32 products and sums.
        return ref, {"Q": 1e-2, "K": 1e-2}, base, errs

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
                row["unwritten"] = {n: int(torch.isnan(T[n]).sum().item()) for n in case.outputs}
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
