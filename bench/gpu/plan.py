"""What the H200 benchmark compiles and runs: the one list both sides read.

make_bundle.py (build machine) compiles every job of `compile_jobs()` into one
sm_90a bundle and writes plan.json (job key -> kernel name and code-object
report); run.py (GPU machine) launches the kernels by those keys over the
shapes below. No torch here: both sides import it.
"""
import math

ARCH = "sm_90a"

# ---- GEMM: C[M,N] (bf16) = x @ W^T as F.linear computes it: x [M,K] row-major, W [N,K] ---------
# (nn.Linear's weight), both bf16: tilec's layout nt, no transposed copy.
GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4097, 4097, 4097), (4095, 4095, 4095),
               (1000, 1000, 777), (16, 4096, 4096), (4096, 14336, 4096)]
GEMM_LAYOUT = "nt"
# "block_m block_n block_k waves stages group_m [instr] [split_k]"; skinny ones
# for M <= 64. The first three are the NVIDIA defaults (kernels/gemm/GemmEntry.cpp; sm_90a
# picks warpgroup wgmma for these tiles): 128 x 256 over 4 stages (one wgmma
# group in flight) where C has at least 2048 rows and columns, 128 x 128 over
# 3 below, 2 stages for rows of an odd number of elements (realigned through
# registers). The others are what the tuner would weigh them against; "mma"
# ones the warp-level mma.sync path for comparison. A split_k > 1 launches
# the partial-sum kernel over split_k slices of K, then the fixed-order
# reduction.
GEMM_BIG = ["128 256 64 8 4 8", "128 128 64 8 3 8", "128 128 64 8 2 8", "128 256 64 8 3 8", "128 128 64 8 4 8",
            "128 128 32 8 3 1", "64 128 32 4 4 1", "128 128 64 8 3 8 mma"]
GEMM_SKINNY = ["16 64 64 4 4 1", "16 64 128 4 4 1", "16 32 128 2 4 1", "32 64 64 4 4 1", "16 128 64 4 4 1",
               "16 64 64 4 4 1 4", "16 64 64 4 4 1 8", "16 128 64 4 4 1 8"]
GEMM_SKINNY_MAX_M = 64


def gemm_divisibility(extent, elem_bytes=2):
    """The largest power of two dividing `extent`, up to 16 bytes of elements:
    what the gemm kernel assumes of an operand's inner extent (kernels/gemm/Gemm.cpp,
    gemmDivisibility)."""
    d = 1
    while d < 16 // elem_bytes and extent % (2 * d) == 0:
        d *= 2
    return d


def gemm_configs(m):
    return GEMM_SKINNY if m <= GEMM_SKINNY_MAX_M else GEMM_BIG


def gemm_split_k(config):
    extra = [f for f in config.split()[6:] if f.isdigit()]
    return int(extra[0]) if extra else 1


def gemm_instr(config):
    extra = [f for f in config.split()[6:] if not f.isdigit()]
    return extra[0] if extra else "auto"


def gemm_key(m, n, k, config, part=None):
    """Kernels depend on the configuration and on the divisibility of the
    operands' inner extents only (layout nt: K for both)."""
    return "gemm/%s/div%dx%d/%s%s" % (GEMM_LAYOUT, gemm_divisibility(k), gemm_divisibility(k),
                                      config.replace(" ", "_"), "/" + part if part else "")


def _gemm_params(m, n, k, config, part=None):
    bm, bn, bk, w, st, gm = config.split()[:6]
    p = {"M": m, "N": n, "K": k, "layout": GEMM_LAYOUT, "out": "bf16", "block_m": bm, "block_n": bn,
         "block_k": bk, "waves": w, "stages": st, "group_m": gm, "instr": gemm_instr(config)}
    if gemm_split_k(config) > 1:
        p["split_k"] = gemm_split_k(config)
        p["part"] = part
    return p


def gemm_parts(config):
    """The kernels one launch sequence of `config` runs, in order."""
    return ["partial", "reduce"] if gemm_split_k(config) > 1 else [None]


# ---- fp8 GEMM (OCP e4m3, per-tensor scales): C[M,N] (bf16) = scale_a * scale_b * (A @ B^T), A
# [M,K] and B [N,K] row-major e4m3 (tilec's layout nt; torch._scaled_mm takes B^T column-major),
# through mma.sync m16n8k32. Configurations as GEMM_BIG's; the first is the NVIDIA default for
# 8-bit operands of layout nt (kernels/gemm/GemmEntry.cpp).
FP8_GEMM_SHAPES = [(4096, 4096, 4096)]
FP8_GEMM_DTYPE = "e4m3"
FP8_GEMM_SCALES = {"scale_a": 0.5, "scale_b": 0.25}
FP8_GEMM_CONFIGS = ["128 256 128 8 4 8", "128 128 64 8 3 8", "128 128 128 8 3 8"]


def fp8_gemm_key(m, n, k, config):
    return "gemm_fp8/%s/%s/div%dx%d/%s" % (GEMM_LAYOUT, FP8_GEMM_DTYPE, gemm_divisibility(k, 1),
                                          gemm_divisibility(k, 1), config.replace(" ", "_"))


def _fp8_gemm_params(m, n, k, config):
    bm, bn, bk, w, st, gm = config.split()[:6]
    return {"M": m, "N": n, "K": k, "layout": GEMM_LAYOUT, "dtype": FP8_GEMM_DTYPE, "out": "bf16",
            "block_m": bm, "block_n": bn, "block_k": bk, "waves": w, "stages": st, "group_m": gm}


# ---- Block-scaled fp8 GEMM (DeepSeek-V3's recipe, -p scaling=block): C[M,N] (bf16) = sum over k
# blocks b of scale_a[m, b] * scale_b[n // 128, b] * (A_b @ B_b^T), A [M,K] and B [N,K] row-major
# e4m3, scale_a [M, K/128] per 1x128 group of A's rows and scale_b [N/128, K/128] per 128x128 block
# of B. block_n and block_k divide 128 (one scale of B per workgroup and k step); the first
# configuration is the NVIDIA default (kernels/gemm/GemmEntry.cpp).
FP8_BLOCK_GEMM_SHAPES = [(4096, 4096, 4096)]
FP8_BLOCK_GEMM_CONFIGS = ["128 128 128 8 3 8", "128 64 128 8 3 8", "128 64 128 8 4 8", "64 128 128 4 3 8", "64 128 128 4 4 8",
                          "64 64 128 4 4 8"]


def fp8_block_gemm_key(m, n, k, config):
    return "gemm_fp8_block/%s/%s/div%dx%d/%s" % (GEMM_LAYOUT, FP8_GEMM_DTYPE, gemm_divisibility(k, 1),
                                                gemm_divisibility(k, 1), config.replace(" ", "_"))


def _fp8_block_gemm_params(m, n, k, config):
    p = _fp8_gemm_params(m, n, k, config)
    p["scaling"] = "block"
    return p


# ---- Strided GEMM: C = x @ W^T with x a view of padded rows (x = buf[:, :K], buf [M, K + pad]),
# as a slice of a wider activation is: tilec's strided kernel (-p lda) against F.linear on the
# same view (cuBLAS takes the leading dimension) and, in the same run, the tight GEMM row of
# GEMM_SHAPES. A pad of 64 keeps rows 16-byte multiples apart: the kernel's 16-byte loads
# (docs/gemm.md). The first configuration is the NVIDIA default (the tight kernel's); "div1"
# compiles the kernel for any stride and alignment (-p divisibility=1: element-wise loads).
STRIDED_GEMM_SHAPES = [(4096, 4096, 4096)]
STRIDED_GEMM_PAD = 64
STRIDED_GEMM_CONFIGS = ["128 256 64 8 4 8", "128 128 64 8 3 8", "128 128 32 8 3 8", "128 128 32 8 3 8 div1",
                        "128 256 64 8 4 8 div1"]


def _strided_divisibility(k, config):
    return 1 if "div1" in config.split()[6:] else gemm_divisibility(math.gcd(k, k + STRIDED_GEMM_PAD))


def strided_gemm_key(m, n, k, config):
    return "gemm_strided/%s/div%d/%s" % (GEMM_LAYOUT, _strided_divisibility(k, config),
                                         "_".join(config.split()[:6]))


def _strided_gemm_params(m, n, k, config):
    bm, bn, bk, w, st, gm = config.split()[:6]
    return {"M": m, "N": n, "K": k, "layout": GEMM_LAYOUT, "out": "bf16", "lda": k + STRIDED_GEMM_PAD,
            "strided": 1, "divisibility": _strided_divisibility(k, config), "block_m": bm, "block_n": bn,
            "block_k": bk, "waves": w, "stages": st, "group_m": gm}


# ---- Attention forward: packed [total, heads * D] layout -------------------------------------
ATTN = {"batch": 4, "heads": 32, "seq": 4096, "head_dim": 128}
# The NVIDIA default first (128 x 128 blocks over two warpgroups: S = Q K^T and O += P V on
# wgmma, P read from registers, the key loop pipelined 2 stages deep: K and V of the next
# step copied during this one), then 128 x 64, and 64-row blocks over one warpgroup.
ATTN_CONFIGS = [{"block_m": 128, "block_n": 128, "waves": 8, "stages": 2},
                {"block_m": 128, "block_n": 64, "waves": 8, "stages": 2},
                {"block_m": 64, "block_n": 64, "waves": 4, "stages": 2}]
# A ragged causal prefill batch: lengths not multiples of the blocks.
ATTN_VARLEN = [4096, 3001, 1537, 513]


# Head sizes of other models (Gemma, Llama-3.2-vision: 256; DeepSeek-V3's prefill: 192 for Q and K,
# 128 for V), causal, at the target's default tiles for the head size (kernels/attention).
ATTN_HEAD_SIZES = {"batch": 4, "heads": 16, "seq": 4096, "head_dims": [(256, 256), (192, 128)]}
ATTN_DEFAULT = {}  # no tile parameters: the target's defaults


def attn_config_name(cfg):
    """"128x32_w8", and "_s2" when the key loop is pipelined 2 stages deep; "default" for the
    target's default tiles."""
    if not cfg:
        return "default"
    stages = cfg.get("stages", 1)
    return "%dx%d_w%d%s" % (cfg["block_m"], cfg["block_n"], cfg["waves"], "_s%d" % stages if stages > 1 else "")


def attn_key(heads, causal, cfg, head_dim=None, head_dim_v=None):
    dims = "" if head_dim in (None, ATTN["head_dim"]) and head_dim_v in (None, head_dim) else \
        "/d%d%s" % (head_dim, "v%d" % head_dim_v if head_dim_v not in (None, head_dim) else "")
    return "attention/h%d/%s%s/%s" % (heads, "causal" if causal else "full", dims, attn_config_name(cfg))


def _attn_params(heads, causal, cfg, head_dim=None, head_dim_v=None):
    p = {"heads": heads, "kv_heads": heads, "head_dim": head_dim or ATTN["head_dim"], "causal": int(causal), **cfg}
    if head_dim_v not in (None, head_dim):
        p["head_dim_v"] = head_dim_v
    return p


# ---- Attention backward -----------------------------------------------------------------------
BWD = {"batch": 2, "heads": 16, "seq": 2048, "head_dim": 128, "causal": 1}
BWD_FWD_CONFIG = ATTN_CONFIGS[0]  # the forward (O and LSE) is the attention kernel


# (label, dq's -p values, dkdv's -p values): the target defaults first (head
# size 128: 128 x 64 blocks over 8 warps, the loops pipelined 2 deep), the
# same unpipelined and with dq 3 deep, then smaller blocks (32 x 32, the
# defaults before run19; 64-row blocks). All compile for sm_90a without
# spills. dq: block_m query rows per workgroup, block_n keys per step; dkdv:
# block_n keys per workgroup, block_m query rows per step.
BWD_CONFIGS = [
    ("128x64_w8_s2", {}, {}),
    ("128x64_w8", {"stages": 1}, {"stages": 1}),
    ("dq128x64_s3 dkdv128x64_s2 w8", {"stages": 3}, {"stages": 2}),
    ("32x32_w8", {"block_m": 32, "block_n": 32, "waves": 8, "stages": 1},
     {"block_m": 32, "block_n": 32, "waves": 8, "stages": 1}),
    ("dq64x64 dkdv64x32 w8", {"block_m": 64, "block_n": 64, "waves": 8, "stages": 1},
     {"block_m": 64, "block_n": 32, "waves": 8, "stages": 1}),
    ("dq64x64 dkdv128x64 w8", {"block_m": 64, "block_n": 64, "waves": 8, "stages": 1},
     {"block_m": 128, "block_n": 64, "waves": 8, "stages": 1}),
]


def bwd_key(part, cfg=BWD_CONFIGS[0]):
    return "attention_bwd/%s/%s" % (part, cfg[0].replace(" ", "_"))


def _bwd_params(part, cfg=BWD_CONFIGS[0]):
    return {"heads": BWD["heads"], "kv_heads": BWD["heads"], "head_dim": BWD["head_dim"], "causal": BWD["causal"],
            "part": part, **(cfg[1] if part == "dq" else cfg[2])}


# ---- Paged decode -----------------------------------------------------------------------------
DECODE = {"batch": 64, "heads": 32, "kv_heads": 8, "context": 8192, "head_dim": 128, "block_size": 16}
DECODE_SPLITS = [1, 4, 8]
# Software-pipelining depths of the block loop (the next blocks' K and V copied
# through the block table during a step): the first is the NVIDIA default
# (kernels/attention/PagedDecode.cpp); 1 is the loop without it.
DECODE_STAGES = [3, 2, 1]


def decode_label(splits, stages):
    return "splits%d" % splits + ("_s%d" % stages if stages > 1 else "")


def decode_key(splits, part="attend", stages=DECODE_STAGES[0]):
    """The combine kernel does not depend on the pipelining depth."""
    return "paged_decode/splits%d/%s" % (splits, part) + ("/s%d" % stages if part == "attend" else "")


def _decode_params(splits, part, stages):
    p = {k: DECODE[k] for k in ("heads", "kv_heads", "head_dim", "block_size")}
    p["seq_k"] = DECODE["context"]
    p["splits"] = splits
    p["stages"] = stages
    if splits > 1:
        p["part"] = part
    return p


# ---- MLA decode: DeepSeek-V3's absorbed attention over a paged 576-wide latent cache ------------
MLA = {"batch": 64, "heads": 128, "context": 8192, "block_size": 64}
MLA_SPLITS = [1, 4]


def mla_key(splits, part="attend"):
    return "mla_decode/h%d/splits%d/%s" % (MLA["heads"], splits, part)


def _mla_params(splits, part):
    p = {"heads": MLA["heads"], "block_size": MLA["block_size"], "seq_k": MLA["context"], "splits": splits}
    if splits > 1:
        p["part"] = part
    return p


# ---- MoE layer: gate -> align -> gate_up -> down -> combine ------------------------------------
MOE = {"experts": 8, "topk": 2, "hidden": 4096, "intermediate": 14336, "renormalize": 1}
MOE_TOKENS = [16, 4096]
MOE_CONFIGS = [{"block_m": 32, "block_n": 64, "block_k": 32, "waves": 4},
               {"block_m": 64, "block_n": 128, "block_k": 32, "waves": 8},
               {"block_m": 64, "block_n": 128, "block_k": 64, "waves": 8, "stages": 3},
               {"block_m": 16, "block_n": 128, "block_k": 64, "waves": 4, "stages": 4},
               {"block_m": 128, "block_n": 128, "block_k": 64, "waves": 8, "stages": 3},
               {"block_m": 128, "block_n": 128, "block_k": 64, "waves": 8, "stages": 4},
               {"block_m": 64, "block_n": 128, "block_k": 64, "waves": 4, "stages": 4}]
MOE_PARTS = ["gate", "align", "gate_up", "down", "combine"]


def moe_config_label(cfg):
    return "%dx%dx%d_w%d_s%d" % (cfg["block_m"], cfg["block_n"], cfg["block_k"], cfg["waves"], cfg.get("stages", 2))


def moe_key(cfg, part):
    return "moe/%s/%s" % (moe_config_label(cfg), part)


def _moe_params(cfg, part):
    # hidden and intermediate: the expert kernels are specialised on what they are multiples of.
    return {"experts": MOE["experts"], "topk": MOE["topk"], "renormalize": MOE["renormalize"],
            "hidden": MOE["hidden"], "intermediate": MOE["intermediate"], "part": part, **cfg}


# ---- RMSNorm (kernels/elementwise): Y = X / rms(X) * W, X [tokens, hidden] bf16, W [1, hidden] --------
NORM_SHAPES = [(4096, 4096), (16, 8192), (333, 5120)]
NORM_EPS = 1e-6
# Tokens per workgroup, columns per step, warps: 4 tokens of 4 warps (one
# each), and one token over 4 warps (short token counts: more workgroups).
# The kernels keep their last chunk in registers: where the row fits one chunk
# (hidden <= chunk) X is read once, and the chunk sets the 16-byte loads each
# thread has in flight before its first reduction (chunk / (8 * 32 * warps
# along the row)): 4 for r1_c4096_w4, r2_c4096_w8, r4_c1024_w4 and
# r1_c8192_w8, 2 for r1_c4096_w8, against 2 for r4_c512_w4 and 1 for
# r1_c1024_w4.
NORM_CONFIGS = [{"rows": 4, "chunk": 512, "waves": 4}, {"rows": 1, "chunk": 1024, "waves": 4},
                {"rows": 1, "chunk": 4096, "waves": 4}, {"rows": 1, "chunk": 4096, "waves": 8},
                {"rows": 2, "chunk": 4096, "waves": 8}, {"rows": 4, "chunk": 1024, "waves": 4},
                {"rows": 1, "chunk": 8192, "waves": 8}]


def norm_config_label(cfg):
    return "r%d_c%d_w%d" % (cfg["rows"], cfg["chunk"], cfg["waves"])


def norm_key(hidden, cfg):
    """The kernel depends on the configuration and on the divisibility of hidden."""
    return "rms_norm/div%d/%s" % (gemm_divisibility(hidden), norm_config_label(cfg))


def _norm_params(hidden, cfg):
    return {"hidden": hidden, "dtype": "bf16", "residual": 0, **cfg}


# ---- silu_and_mul (kernels/elementwise): out = silu(X[:, :I]) * X[:, I:], bf16 ------------------
SILU_SHAPES = [(4096, 14336), (16, 14336), (333, 11008), (4096, 4096), (16, 8192)]   # (tokens, intermediate)
SILU_CONFIGS = [{"rows": 4, "chunk": 512, "waves": 4}, {"rows": 1, "chunk": 1024, "waves": 4}, {"rows": 1, "chunk": 4096, "waves": 4}]


def silu_key(intermediate, cfg):
    """The kernel holds I (the up half's offset)."""
    return "silu_and_mul/i%d/%s" % (intermediate, norm_config_label(cfg))


def _silu_params(intermediate, cfg):
    return {"intermediate": intermediate, "dtype": "bf16", **cfg}


# ---- fp8 outputs (kernels/elementwise, OCP e4m3 on sm_90a): rms_norm with a static scale
# (vLLM's rms_norm_static_fp8_quant), per-token scales (rms_norm_dynamic_per_token_quant) or
# per-1x128-group scales, silu_and_mul with a static scale (silu_and_mul_quant); the shapes
# of the bf16 cases.
NORM_FP8_SCALES = ("static", "token", "group")
FP8_OUT_SCALE = 0.02   # static scale: N(0, 1) inputs give |y / scale| up to ~500, some saturating at 448
NORM_FP8_CONFIGS = [{"rows": 1, "chunk": 4096, "waves": 4}, {"rows": 4, "chunk": 512, "waves": 4}]
# Per-group scales step through [rows, 128] tiles: 8 rows of 16 threads fill 4 warps (the
# kernel's sm_90a default), 16 rows 8 warps; one row per warp gives short token counts one
# workgroup per token. With 128-column chunks the sum-of-squares pass's tiles have the group
# tiles' shape, and so a layout without copies (lanes [2, 16], docs/perf/notes.md, run16).
NORM_FP8_GROUP_CONFIGS = [{"rows": 8, "chunk": 1024, "waves": 4}, {"rows": 16, "chunk": 1024, "waves": 8},
                          {"rows": 1, "chunk": 1024, "waves": 1}, {"rows": 8, "chunk": 128, "waves": 4},
                          {"rows": 16, "chunk": 128, "waves": 8}, {"rows": 2, "chunk": 128, "waves": 1}]


def norm_fp8_configs(scales):
    return NORM_FP8_GROUP_CONFIGS if scales == "group" else NORM_FP8_CONFIGS
SILU_FP8_CONFIGS = SILU_CONFIGS


def norm_fp8_key(hidden, cfg, scales):
    """scales: one of NORM_FP8_SCALES."""
    return "rms_norm_fp8_%s/div%d/%s" % (scales, gemm_divisibility(hidden), norm_config_label(cfg))


def _norm_fp8_params(hidden, cfg, scales):
    return {**_norm_params(hidden, cfg), "fp8_out": 1, "fp8_dtype": "e4m3", "fp8_scale": scales}


def silu_fp8_key(intermediate, cfg):
    return "silu_and_mul_fp8/i%d/%s" % (intermediate, norm_config_label(cfg))


def _silu_fp8_params(intermediate, cfg):
    return {**_silu_params(intermediate, cfg), "fp8_out": 1, "fp8_dtype": "e4m3"}


# ---- softmax (kernels/elementwise): rows of X [rows, cols] bf16, online over chunks ----------------
SOFTMAX_SHAPES = [(4096, 4096), (16, 32768), (333, 5000), (16, 8192)]   # (rows, cols)
# Rows per workgroup, columns per step, warps (the labels say rows as r). A
# few long rows (16 x 32768) leave most SMs idle whatever the blocking: there
# each pass over a row is one dependent round trip per chunk, so the large
# chunks over 16 warps (2 chunks of 16384: 4 16-byte loads per thread, 32 KiB
# per workgroup in flight) take 3 round trips where r1_c1024_w4 takes 64.
# Rows that fit one chunk (5000 in 8192, 4096 in 4096) are read once.
SOFTMAX_CONFIGS = [{"rows": 4, "chunk": 512, "waves": 4}, {"rows": 1, "chunk": 1024, "waves": 4},
                   {"rows": 1, "chunk": 4096, "waves": 4}, {"rows": 1, "chunk": 4096, "waves": 8},
                   {"rows": 1, "chunk": 8192, "waves": 8}, {"rows": 1, "chunk": 8192, "waves": 16},
                   {"rows": 1, "chunk": 16384, "waves": 16}]


def softmax_key(cols, cfg):
    """The kernel depends on the configuration and on the divisibility of cols."""
    return "softmax/div%d/%s" % (gemm_divisibility(cols), norm_config_label(cfg))


def _softmax_params(cols, cfg):
    return {"cols": cols, "dtype": "bf16", "block_rows": cfg["rows"], "chunk": cfg["chunk"], "waves": cfg["waves"]}


# ---- rope (kernels/elementwise): NeoX rotary embedding of Q and K in place, bf16 ------------------
ROPE = {"heads": 32, "kv_heads": 8, "head_dim": 128, "max_position": 8192}
ROPE_TOKENS = [4096, 16, 333]
# Tokens per workgroup, warps: 4 tokens one after the other, or one token
# (short token counts: more workgroups).
ROPE_CONFIGS = [{"tokens_per_group": 4, "waves": 4}, {"tokens_per_group": 1, "waves": 4}]


def rope_config_label(cfg):
    return "t%d_w%d" % (cfg["tokens_per_group"], cfg["waves"])


def rope_key(cfg):
    return "rope/neox_h%d_kv%d_d%d/%s" % (ROPE["heads"], ROPE["kv_heads"], ROPE["head_dim"], rope_config_label(cfg))


def _rope_params(cfg):
    return {"heads": ROPE["heads"], "kv_heads": ROPE["kv_heads"], "head_dim": ROPE["head_dim"], "style": "neox",
            "dtype": "bf16", **cfg}


def compile_jobs():
    """(key, shipped kernel, -p parameters, required): a required job that
    fails to compile stops make_bundle.py; an optional one is recorded as
    skipped (the harness then leaves that configuration out)."""
    jobs, seen = [], set()

    def add(key, kernel, params, required):
        if key not in seen:
            seen.add(key)
            jobs.append((key, kernel, {k: str(v) for k, v in params.items()}, required))

    for (m, n, k) in GEMM_SHAPES:
        for i, c in enumerate(gemm_configs(m)):
            for part in gemm_parts(c):
                add(gemm_key(m, n, k, c, part), "gemm", _gemm_params(m, n, k, c, part), False)
    for (m, n, k) in FP8_GEMM_SHAPES:
        for i, c in enumerate(FP8_GEMM_CONFIGS):
            add(fp8_gemm_key(m, n, k, c), "gemm", _fp8_gemm_params(m, n, k, c), i == 0)
    for (m, n, k) in FP8_BLOCK_GEMM_SHAPES:
        for i, c in enumerate(FP8_BLOCK_GEMM_CONFIGS):
            add(fp8_block_gemm_key(m, n, k, c), "gemm", _fp8_block_gemm_params(m, n, k, c), i == 0)
    for (m, n, k) in STRIDED_GEMM_SHAPES:
        for i, c in enumerate(STRIDED_GEMM_CONFIGS):
            add(strided_gemm_key(m, n, k, c), "gemm", _strided_gemm_params(m, n, k, c), False)
    for causal in (1, 0):
        for i, cfg in enumerate(ATTN_CONFIGS):
            add(attn_key(ATTN["heads"], causal, cfg), "attention", _attn_params(ATTN["heads"], causal, cfg), i == 0)
    h = ATTN_HEAD_SIZES
    for (d, dv) in h["head_dims"]:
        add(attn_key(h["heads"], 1, ATTN_DEFAULT, d, dv), "attention", _attn_params(h["heads"], 1, ATTN_DEFAULT, d, dv),
            False)
    add(attn_key(BWD["heads"], BWD["causal"], BWD_FWD_CONFIG), "attention",
        _attn_params(BWD["heads"], BWD["causal"], BWD_FWD_CONFIG), True)
    for i, cfg in enumerate(BWD_CONFIGS):
        for part in ("dq", "dkdv"):
            add(bwd_key(part, cfg), "attention_bwd", _bwd_params(part, cfg), i == 0)
    for st in DECODE_STAGES:
        for s in DECODE_SPLITS:
            for part in (["attend"] if s == 1 else ["attend", "combine"]):
                add(decode_key(s, part, st), "paged_decode", _decode_params(s, part, st),
                    s == 1 and st == DECODE_STAGES[0])
    for s in MLA_SPLITS:
        for part in (["attend"] if s == 1 else ["attend", "combine"]):
            add(mla_key(s, part), "mla_decode", _mla_params(s, part), s == 1)
    for i, cfg in enumerate(MOE_CONFIGS):
        for part in MOE_PARTS:
            add(moe_key(cfg, part), "moe", _moe_params(cfg, part), i == 0)
    for (_, hidden) in NORM_SHAPES:
        for i, cfg in enumerate(NORM_CONFIGS):
            add(norm_key(hidden, cfg), "rms_norm", _norm_params(hidden, cfg), i == 0)
    for (_, inter) in SILU_SHAPES:
        for i, cfg in enumerate(SILU_CONFIGS):
            add(silu_key(inter, cfg), "silu_and_mul", _silu_params(inter, cfg), i == 0)
    for (_, hidden) in NORM_SHAPES:
        for scales in NORM_FP8_SCALES:
            for i, cfg in enumerate(norm_fp8_configs(scales)):
                add(norm_fp8_key(hidden, cfg, scales), "rms_norm", _norm_fp8_params(hidden, cfg, scales), i == 0)
    for (_, inter) in SILU_SHAPES:
        for i, cfg in enumerate(SILU_FP8_CONFIGS):
            add(silu_fp8_key(inter, cfg), "silu_and_mul", _silu_fp8_params(inter, cfg), i == 0)
    for (_, cols) in SOFTMAX_SHAPES:
        for i, cfg in enumerate(SOFTMAX_CONFIGS):
            add(softmax_key(cols, cfg), "softmax", _softmax_params(cols, cfg), i == 0)
    for i, cfg in enumerate(ROPE_CONFIGS):
        add(rope_key(cfg), "rope", _rope_params(cfg), i == 0)
    return jobs


if __name__ == "__main__":
    for key, kernel, params, required in compile_jobs():
        print(key, kernel, " ".join("%s=%s" % kv for kv in params.items()), "required" if required else "")
