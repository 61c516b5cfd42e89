"""The compiled-code cost model (lib/Model, docs/cost-model.md) next to an H200
run: for each measured row whose launch shape it knows (GEMM, fp8 GEMM with
tensor or block scales, attention forward, paged decode without splits, the
element-wise kernels),
runs `tilec-model` on the same sm_90a kernel and writes
{row key: {model_ms, bound, terms_ms, ...}} as JSON for report.py.

  python3 bench/gpu/model.py RUN.json --tilec-model build/bin/tilec-model --out RUN-model.json

The model reads the loop from the compiled code; what it cannot read there is
the launch: the workgroups, the matrix work each does (which gives the loop's
trip count) and the distinct bytes of the problem. They come from the shapes
below, the same ones run.py launches.
"""
import argparse
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan  # noqa: E402


def row_key(r):
    return "%s|%s|%s" % (r.get("family"), r.get("shape"), r.get("config"))


def gemm_launch(r):
    """None for split-K rows: two kernels, of which the model prices one at a time."""
    if plan.gemm_split_k(r["config"]) > 1:
        return None
    m, n, k = (int(x) for x in r["shape"].split("x"))
    bm, bn, bk = (int(x) for x in r["config"].split()[:3])
    params = plan._gemm_params(m, n, k, r["config"])
    wgs = math.ceil(m / bm) * math.ceil(n / bn)
    return "gemm", params, {"workgroups": wgs, "flops-per-workgroup": 2.0 * bm * bn * bk * math.ceil(k / bk),
                            "hbm-bytes": 2.0 * (m * k + k * n + m * n)}


def strided_gemm_launch(r):
    """The strided kernel over A's leading K columns: the GEMM's work and
    traffic (the padding columns are not read)."""
    m, n, k = (int(x) for x in r["shape"].split()[0].split("x"))
    bm, bn, bk = (int(x) for x in r["config"].split()[:3])
    wgs = math.ceil(m / bm) * math.ceil(n / bn)
    return "gemm", plan._strided_gemm_params(m, n, k, r["config"]), {
        "workgroups": wgs, "flops-per-workgroup": 2.0 * bm * bn * bk * math.ceil(k / bk),
        "hbm-bytes": 2.0 * (m * k + k * n + m * n)}


def _fp8_gemm_launch(params_of):
    """fp8 GEMM rows ("MxNxK e4m3"): 1-byte A and B, bf16 C; block scales add
    one f32 per 1x128 group of A and per 128x128 block of B."""
    def launch(r):
        m, n, k = (int(x) for x in r["shape"].split()[0].split("x"))
        bm, bn, bk = (int(x) for x in r["config"].split()[:3])
        params = params_of(m, n, k, r["config"])
        scales = 4.0 * (m + math.ceil(n / 128)) * math.ceil(k / 128) if params.get("scaling") == "block" else 0.0
        return "gemm", params, {"workgroups": math.ceil(m / bm) * math.ceil(n / bn),
                                "flops-per-workgroup": 2.0 * bm * bn * bk * math.ceil(k / bk),
                                "hbm-bytes": 1.0 * (m * k + k * n) + 2.0 * m * n + scales}
    return launch


def attention_launch(r):
    """Forward attention, one workgroup per block_m query rows of one head;
    causal blocks see the keys up to their last row (block_m is a multiple of
    block_n in every configuration of plan.py). None for the other head sizes'
    rows, which run the target's default tiles (their block_m is not known here)."""
    cfg = next((c for c in plan.ATTN_CONFIGS if plan.attn_config_name(c) == r["config"]), None)
    if cfg is None:
        return None
    causal = "causal" in r["shape"]
    heads, d = plan.ATTN["heads"], plan.ATTN["head_dim"]
    seqs = plan.ATTN_VARLEN if r["shape"].startswith("attention varlen") or "varlen" in r["shape"] else \
        [plan.ATTN["seq"]] * plan.ATTN["batch"]
    bm = cfg["block_m"]
    wgs, flops = 0, 0.0
    for s in seqs:
        for b in range(math.ceil(s / bm)):
            keys = min(s, (b + 1) * bm) if causal else s
            wgs += heads
            flops += heads * 4.0 * bm * d * keys  # S = Q K^T and O = P V over padded query rows
    return "attention", plan._attn_params(heads, causal, cfg), {
        "workgroups": wgs, "flops-per-workgroup": flops / wgs, "hbm-bytes": 4.0 * sum(seqs) * heads * d * 2}


def decode_launch(r):
    """Paged decode without splits, one workgroup per (sequence, kv head): S and
    P V over the max(16, G) padded rows of its G query heads, the whole context
    (every sequence has plan.DECODE's). None for split-KV rows: two kernels."""
    d = plan.DECODE
    splits = next((s for s in plan.DECODE_SPLITS for st in plan.DECODE_STAGES
                   if plan.decode_label(s, st) == r["config"]), None)
    stages = next((st for s in plan.DECODE_SPLITS for st in plan.DECODE_STAGES
                   if plan.decode_label(s, st) == r["config"]), None)
    if splits != 1:
        return None
    rows = max(16, -(-(d["heads"] // d["kv_heads"]) // 16) * 16)
    wgs = d["batch"] * d["kv_heads"]
    kv_bytes = 2.0 * d["batch"] * d["context"] * d["kv_heads"] * d["head_dim"] * 2
    return "paged_decode", plan._decode_params(1, "attend", stages), {
        "workgroups": wgs, "flops-per-workgroup": 4.0 * rows * d["head_dim"] * d["context"],
        "hbm-bytes": kv_bytes + 2.0 * 2 * d["batch"] * d["heads"] * d["head_dim"]}


def _extents(shape):
    """'T4096 hidden4096' -> (4096, 4096); 'R16 cols32768' -> (16, 32768)."""
    first, second = shape.split()[:2]
    return int(first[1:]), int("".join(ch for ch in second if ch.isdigit()))


def _rowwise_launch(kernel, configs, params):
    """A kernel over rows in blocks of `rows` (one workgroup each), stepping
    through a row `chunk` columns at a time: the main loop's trips. Two-pass
    kernels (rows longer than a chunk: a sum or maximum first) have a second
    loop of as many trips, which the model prices once, as code outside its
    main loop (docs/cost-model.md, "What the model does not see")."""
    def launch(r):
        cfg = next((c for c in configs if plan.norm_config_label(c) == r["config"]), None)
        if cfg is None:
            return None
        rows, cols = _extents(r["shape"])
        return kernel, params(cols, cfg), {"workgroups": math.ceil(rows / cfg["rows"]),
                                           "trips": math.ceil(cols / cfg["chunk"]), "hbm-bytes": r["bytes"]}
    return launch


def rope_launch(r):
    """tokens_per_group tokens per workgroup, one after the other: the loop's trips."""
    cfg = next((c for c in plan.ROPE_CONFIGS if plan.rope_config_label(c) == r["config"]), None)
    if cfg is None:
        return None
    tokens = int(r["shape"].split()[0][1:])
    return "rope", plan._rope_params(cfg), {"workgroups": math.ceil(tokens / cfg["tokens_per_group"]),
                                           "trips": cfg["tokens_per_group"], "hbm-bytes": r["bytes"]}


LAUNCHES = {"gemm": gemm_launch, "strided_gemm": strided_gemm_launch, "attention": attention_launch,
            "fp8_gemm": _fp8_gemm_launch(plan._fp8_gemm_params),
            "fp8_block_gemm": _fp8_gemm_launch(plan._fp8_block_gemm_params),
            "paged_decode": decode_launch,
            "rms_norm": _rowwise_launch("rms_norm", plan.NORM_CONFIGS, plan._norm_params),
            "rms_norm_fp8": _rowwise_launch("rms_norm", plan.NORM_FP8_CONFIGS,
                                            lambda n, c: plan._norm_fp8_params(n, c, "static")),
            "rms_norm_fp8_token": _rowwise_launch("rms_norm", plan.NORM_FP8_CONFIGS,
                                                  lambda n, c: plan._norm_fp8_params(n, c, "token")),
            "rms_norm_fp8_group": _rowwise_launch("rms_norm", plan.NORM_FP8_GROUP_CONFIGS,
                                                  lambda n, c: plan._norm_fp8_params(n, c, "group")),
            "silu_and_mul": _rowwise_launch("silu_and_mul", plan.SILU_CONFIGS, plan._silu_params),
            "silu_and_mul_fp8": _rowwise_launch("silu_and_mul", plan.SILU_FP8_CONFIGS, plan._silu_fp8_params),
            "softmax": _rowwise_launch("softmax", plan.SOFTMAX_CONFIGS, plan._softmax_params),
            "rope": rope_launch}


def model_row(tool, r):
    launch = LAUNCHES.get(r.get("family"))
    if not launch or "tilec_ms" not in r:
        return None
    known = launch(r)
    if known is None:
        return None
    kernel, params, shape = known
    cmd = [tool, "--kernel=" + kernel, "--offload-arch=" + plan.ARCH, "--json"]
    for kv in params.items():
        cmd += ["-p", "%s=%s" % kv]
    cmd += ["--%s=%s" % kv for kv in shape.items()]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return {"error": p.stderr.strip()[-300:]}
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--tilec-model", default="build/bin/tilec-model")
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    rows = json.load(open(a.run))["rows"]
    with ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(lambda r: (row_key(r), model_row(a.tilec_model, r)), rows))
    out = {k: v for k, v in results if v is not None}
    json.dump(out, open(a.out, "w"), indent=1, sort_keys=True)
    print("%d rows modelled, %d errors" % (len(out), sum(1 for v in out.values() if "error" in v)))


if __name__ == "__main__":
    main()
