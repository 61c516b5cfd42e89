"""tilec's kernels as PyTorch operators (``torch.library``):

    import torch, tilec.torch
    y = torch.ops.tilec.gemm(x, linear.weight, "nt")      # x @ W^T, the weight of nn.Linear as it is

- ``tilec::gemm(a, b, layout="nn", out_dtype=None)``: C = op(A) @ op(B); layout
  "nn" takes A [M, K] and B [K, N], "nt" B as [N, K] (nn.Linear's weight),
  "tn" A as [K, M], "tt" both. Strided views are read in place: rows with a
  leading dimension (a slice of a bigger matrix) and transposed views
  (``w.t()``, read with the other layout letter). 3-D operands [batch, ...]
  give a batched GEMM, C [batch, M, N]; a 2-D operand, or a batch of 1, is
  shared by the whole batch (a weight).
- ``tilec::w8a8_block_fp8_matmul(a, b, scale_a, scale_b, block_size, out_dtype=torch.bfloat16)``:
  vLLM's fp8 GEMM with DeepSeek-V3's block scales, C = A @ B^T: a [M, K] and
  b [N, K] in the GPU's fp8 format (torch.float8_e4m3fnuz on AMD,
  torch.float8_e4m3fn on NVIDIA), scale_a [M, ceil(K / 128)] f32 (per 1 x 128
  group of a row, what ``rms_norm_per_group_quant`` writes), scale_b
  [ceil(N / 128), ceil(K / 128)] f32 (per 128 x 128 block), block_size
  [128, 128].
- ``tilec::attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
  max_seqlen_k, softmax_scale=None, causal=False, window=0)``: FlashAttention
  forward over a packed variable-length batch (flash-attn's varlen
  convention): returns (out [total_q, heads, D], lse [total_q, heads] f32).
- ``tilec::paged_decode(query, key_cache, value_cache, block_tables, seq_lens,
  softmax_scale=None)``: decode attention over vLLM's paged KV cache
  ([num_blocks, block_size, kv_heads, D], block tables [num_seqs, max_blocks]
  i32, seq_lens [num_seqs] i32).
- ``tilec::moe(hidden_states, router_logits, w13, w2, topk, renormalize=True)``:
  a mixture-of-experts layer (softmax top-k gating, SwiGLU experts) on vLLM's
  fused-MoE weights (w13 [E, 2I, hidden], gate rows then up rows; w2
  [E, hidden, I]).

- the element-wise kernels: ``tilec::rms_norm``, ``tilec::fused_add_rms_norm``,
  ``tilec::silu_and_mul``, ``tilec::softmax`` and ``tilec::rotary_embedding``
  (vLLM's signatures; tilec/_elementwise_ops.py), and the fp8-output forms
  ``tilec::rms_norm_static_fp8_quant``,
  ``tilec::fused_add_rms_norm_static_fp8_quant`` and
  ``tilec::silu_and_mul_quant`` (a float scale), and with per-token scales
  ``tilec::rms_norm_dynamic_per_token_quant`` and
  ``tilec::fused_add_rms_norm_dynamic_per_token_quant``, per group of 128
  columns ``tilec::rms_norm_per_group_quant`` and
  ``tilec::fused_add_rms_norm_per_group_quant``.

Each operator has a fake implementation (shapes only), so ``torch.compile``
traces it without running it. A call launches on PyTorch's current stream of
the tensors' GPU. Its kernel comes from a bundle given to use_bundle() (or
``$TILEC_TORCH_BUNDLES``, folders separated by ':') that holds it for the
device's target, else it is compiled on the first call through libtilec_c
(with the compiler's on-disk cache) and kept for the process.

The other kernels take row-major contiguous tensors: a tensor with other
strides gets a ValueError that says so (``tensor.contiguous()`` makes one), as
do a GEMM operand without a unit stride or with a batch stride that is not a
whole number of its rows, a CPU tensor, a dtype the kernel does not have or
mismatched shapes.
"""

import functools
import math
import os
import threading
from typing import List, Optional, Tuple

import torch

from . import _gemm_operands, _runtime, compiler

__all__ = ["device_target", "use_bundle", "gemm", "attention", "paged_decode", "moe", "rms_norm",
           "fused_add_rms_norm", "silu_and_mul", "softmax", "rotary_embedding", "rms_norm_static_fp8_quant",
           "fused_add_rms_norm_static_fp8_quant", "silu_and_mul_quant", "rms_norm_dynamic_per_token_quant",
           "fused_add_rms_norm_dynamic_per_token_quant", "rms_norm_per_group_quant", "fused_add_rms_norm_per_group_quant"]

# tilec's element-type names (the -p dtype values) of the torch dtypes its
# kernels take.
_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}

_bundles = []  # Bundle objects use_bundle() opened, searched in order
_kernels = {}  # (kernel, target, params) -> JitKernel, for this process
_lock = threading.Lock()


def use_bundle(path):
    """Looks for kernels in the bundle folder `path` (``tilec --emit=bundle
    -o PATH``) before compiling them; later calls' folders come after."""
    with _lock:
        _bundles.append(_runtime.Bundle(path))
        _kernels.clear()


for _path in filter(None, os.environ.get("TILEC_TORCH_BUNDLES", "").split(os.pathsep)):
    use_bundle(_path)


def device_target(device):
    """The tilec target of a torch GPU device: gfx942, gfx90a, gfx1151 or
    sm_90a (a CUDA device of compute capability 9.0)."""
    props = torch.cuda.get_device_properties(device)
    if getattr(torch.version, "hip", None):
        target = props.gcnArchName.split(":")[0]
    else:
        target = "sm_%d%d%s" % (props.major, props.minor, "a" if (props.major, props.minor) == (9, 0) else "")
    if target not in ("gfx942", "gfx90a", "gfx1151", "sm_90a"):
        raise RuntimeError("tilec has no target for %s (%s); it compiles for gfx942, gfx90a, gfx1151 and sm_90a"
                           % (props.name, target))
    return target


def _kernel(kernel, device, **params):
    """The launchable kernel `kernel` with `params` for `device`'s target:
    from a bundle of use_bundle() whose entry has these parameters, else
    compiled (once per process; the compiler caches it on disk)."""
    target = device_target(device)
    params = {k: compiler._param_text(v) for k, v in params.items()}
    key = (kernel, target, tuple(sorted(params.items())))
    with _lock:
        found = _kernels.get(key)
        if found is None:
            for bundle in _bundles:
                for entry in bundle.manifest["kernels"]:
                    if (entry["kernel"] == kernel and entry["target"] == target
                            and all(entry["params"].get(k) == v for k, v in params.items())):
                        found = compiler.JitKernel(bundle, entry["name"], target)
                        break
                if found is not None:
                    break
            else:
                try:
                    found = compiler.jit(kernel, target, **params)
                except OSError as e:  # no compiler library: say what no bundle had
                    raise RuntimeError("tilec: no bundle of use_bundle() (%s) has %s (%s) for %s, and it cannot be "
                                       "compiled: %s" % (", ".join(b.path for b in _bundles) or "none", kernel,
                                                         " ".join("%s=%s" % kv for kv in sorted(params.items())),
                                                         target, e)) from e
            _kernels[key] = found
    return found


def _fail(op, message):
    raise ValueError("tilec::%s: %s" % (op, message))


def _require_gpu(op, **tensors):
    """All of `tensors` on one GPU; returns it."""
    devices = {name: t.device for name, t in tensors.items()}
    for name, device in devices.items():
        if device.type != "cuda":
            _fail(op, "%s is on %s; tilec's kernels run on a GPU" % (name, device))
    if len(set(devices.values())) > 1:
        _fail(op, "the tensors are on different devices: %s"
              % ", ".join("%s on %s" % (n, d) for n, d in devices.items()))
    return next(iter(devices.values()))


def _require_contiguous(op, **tensors):
    for name, t in tensors.items():
        if not t.is_contiguous():
            _fail(op, "%s (shape %s, strides %s) is not row-major contiguous, which tilec's kernels need: "
                  "pass %s.contiguous()" % (name, tuple(t.shape), t.stride(), name))


def _dtype(op, name, t, allowed=_DTYPES):
    if t.dtype not in allowed:
        _fail(op, "%s is %s; the kernel takes %s" % (name, t.dtype, " or ".join(str(d) for d in allowed)))
    return allowed[t.dtype]


def _require(op, condition, message):
    if not condition:
        _fail(op, message)


# --- gemm -------------------------------------------------------------------

_GEMM_OUT = {torch.float32: "f32", torch.bfloat16: "bf16"}


def _gemm_shape(a, b, layout):
    """batch, M, N, K of C = op(A) @ op(B) for `layout`, checked: a and b
    2-D, or 3-D with the batch first (a batch of 1, or a 2-D operand, is
    shared by the whole batch)."""
    _require("gemm", layout in ("nn", "nt", "tn", "tt"), "layout '%s': expected nn, nt, tn or tt" % layout)
    _require("gemm", a.dim() in (2, 3) and b.dim() in (2, 3), "a and b must be 2-D, or 3-D with the batch first, "
             "got %s and %s" % (tuple(a.shape), tuple(b.shape)))
    M, K = (a.shape[-2], a.shape[-1]) if layout[0] == "n" else (a.shape[-1], a.shape[-2])
    Kb, N = (b.shape[-2], b.shape[-1]) if layout[1] == "n" else (b.shape[-1], b.shape[-2])
    _require("gemm", K == Kb, "layout %s: a %s and b %s disagree on K (%d vs %d)"
             % (layout, tuple(a.shape), tuple(b.shape), K, Kb))
    batches = {t.shape[0] for t in (a, b) if t.dim() == 3 and t.shape[0] != 1}
    _require("gemm", len(batches) <= 1, "a %s and b %s disagree on the batch" % (tuple(a.shape), tuple(b.shape)))
    return (batches.pop() if batches else 1), M, N, K


def _gemm_out_shape(a, b, batch, M, N):
    return (batch, M, N) if a.dim() == 3 or b.dim() == 3 else (M, N)


def _gemm_out_dtype(a, out_dtype):
    out_dtype = a.dtype if out_dtype is None else out_dtype
    _require("gemm", out_dtype in _GEMM_OUT, "out_dtype %s: the kernel writes torch.float32 or torch.bfloat16"
             % out_dtype)
    return out_dtype


@torch.library.custom_op("tilec::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor, layout: str = "nn", out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    batch, M, N, K = _gemm_shape(a, b, layout)
    out_dtype = _gemm_out_dtype(a, out_dtype)
    dtype = _dtype("gemm", "a", a)
    _require("gemm", b.dtype == a.dtype, "a is %s but b is %s" % (a.dtype, b.dtype))
    try:  # how the kernel reads each operand's rows, or why it cannot
        ops = [_gemm_operands.gemm_operand(n, t.shape, t.stride(), letter)
               for n, t, letter in (("a", a, layout[0]), ("b", b, layout[1]))]
    except ValueError as e:
        _fail("gemm", str(e))
    device = _require_gpu("gemm", a=a, b=b)
    c = torch.empty(_gemm_out_shape(a, b, batch, M, N), dtype=out_dtype, device=device)
    if M == 0 or N == 0 or batch == 0:
        return c
    if K == 0:
        return c.zero_()
    kernel_layout = ops[0].letter + ops[1].letter
    inner = [M if ops[0].letter == "t" else K, K if ops[1].letter == "t" else N]
    # A and B as the buffers their rows lie in; C a torch tensor, so that the
    # launch runs on its device and PyTorch's current stream there.
    args = [(t.data_ptr(), (_gemm_operands.buffer_rows(op, batch), op.ld), t.dtype)
            for t, op in ((a, ops[0]), (b, ops[1]))]
    params = dict(dtype=dtype, out=_GEMM_OUT[out_dtype], **({"layout": kernel_layout} if kernel_layout != "nn" else {}))
    if batch == 1 and all(op.ld == n and _gemm_operands.aligned_for_contiguous(t.data_ptr(), n, t.element_size())
                          for t, op, n in zip((a, b), ops, inner)):
        # Rows without padding: the contiguous kernel, specialised on what the
        # inner extents are multiples of (16-byte loads where they allow; M
        # is A's inner extent for layout t), from data aligned as it needs.
        sizes = dict(N=N, K=K, **({"M": M} if kernel_layout[0] == "t" else {}))
        _kernel("gemm", device, **sizes, **params).launch(*args, c.view(M, N))
    else:
        # Padded rows, a batch, or data not aligned for the contiguous
        # kernel's vector loads: the strided kernel, specialised on what the
        # inner extents, leading dimensions and pointers are multiples of
        # (element-wise accesses where that is 1).
        rows = [(t.data_ptr(), n, op.ld) for t, op, n in zip((a, b), ops, inner)]
        divisibility = _gemm_operands.strided_divisibility(rows, a.element_size())
        _kernel("gemm", device, strided=True, divisibility=divisibility, **params).launch(
            *args, c.view(batch * M, N), M, N, K, batch, ops[0].batch_stride, ops[1].batch_stride, M)
    return c


@gemm.register_fake
def _(a, b, layout="nn", out_dtype=None):
    batch, M, N, _K = _gemm_shape(a, b, layout)
    return a.new_empty(_gemm_out_shape(a, b, batch, M, N), dtype=_gemm_out_dtype(a, out_dtype))


# --- fp8 GEMM with block scales ---------------------------------------------

_SCALE_BLOCK = 128  # the k and n extent of one scale (kGemmScaleBlock in kernels/gemm/Gemm.h)
# The operands' fp8 formats (the kernel's -p dtype): AMD's targets hold
# e4m3fnuz, NVIDIA's the OCP e4m3.
_FP8_IN = {torch.float8_e4m3fnuz: "fp8", torch.float8_e4m3fn: "e4m3"}


def _block_fp8_shapes(a, b, scale_a, scale_b, block_size, out_dtype):
    """M, N, K of a [M, K] @ b[N, K]^T, checked with the scales' shapes
    (a scale tensor of another shape would be read out of bounds as zeros)."""
    op = "w8a8_block_fp8_matmul"
    _require(op, list(block_size) == [_SCALE_BLOCK, _SCALE_BLOCK],
             "block_size %s: the kernel takes [128, 128] (DeepSeek-V3's)" % (list(block_size),))
    _require(op, a.dim() == 2 and b.dim() == 2, "a [M, K] and b [N, K] must be 2-D, got %s and %s"
             % (tuple(a.shape), tuple(b.shape)))
    (M, K), (N, Kb) = a.shape, b.shape
    _require(op, K == Kb, "a %s and b %s disagree on K (%d vs %d)" % (tuple(a.shape), tuple(b.shape), K, Kb))
    _require(op, a.dtype in _FP8_IN and b.dtype == a.dtype,
             "a and b must both be torch.float8_e4m3fnuz (AMD GPUs) or torch.float8_e4m3fn (NVIDIA GPUs), got %s "
             "and %s" % (a.dtype, b.dtype))
    kb, nb = -(-K // _SCALE_BLOCK), -(-N // _SCALE_BLOCK)
    _require(op, scale_a.dtype == torch.float32 and scale_b.dtype == torch.float32,
             "scale_a and scale_b must be torch.float32, got %s and %s" % (scale_a.dtype, scale_b.dtype))
    _require(op, tuple(scale_a.shape) == (M, kb),
             "scale_a %s must be [M, ceil(K / 128)] = [%d, %d]: one scale per 128 columns of a row of a"
             % (tuple(scale_a.shape), M, kb))
    _require(op, tuple(scale_b.shape) == (nb, kb),
             "scale_b %s must be [ceil(N / 128), ceil(K / 128)] = [%d, %d]: one scale per 128 x 128 block of b"
             % (tuple(scale_b.shape), nb, kb))
    _require(op, out_dtype in _GEMM_OUT, "out_dtype %s: the kernel writes torch.float32 or torch.bfloat16"
             % out_dtype)
    return M, N, K


@torch.library.custom_op("tilec::w8a8_block_fp8_matmul", mutates_args=())
def w8a8_block_fp8_matmul(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
                          block_size: List[int], out_dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    op = "w8a8_block_fp8_matmul"
    M, N, K = _block_fp8_shapes(a, b, scale_a, scale_b, block_size, out_dtype)
    _require_contiguous(op, a=a, b=b, scale_a=scale_a, scale_b=scale_b)
    device = _require_gpu(op, a=a, b=b, scale_a=scale_a, scale_b=scale_b)
    nvidia = device_target(device).startswith("sm_")
    _require(op, (a.dtype == torch.float8_e4m3fn) == nvidia,
             "a is %s: %s GPUs hold %s" % (a.dtype, "NVIDIA" if nvidia else "AMD",
                                           "torch.float8_e4m3fn" if nvidia else "torch.float8_e4m3fnuz"))
    _require(op, all(_gemm_operands.aligned_for_contiguous(t.data_ptr(), K, 1) for t in (a, b)),
             "a and b must start where their rows' 16-byte loads can (a tensor of its own is; a slice may not be)")
    c = torch.empty((M, N), dtype=out_dtype, device=device)
    if M == 0 or N == 0:
        return c
    if K == 0:
        return c.zero_()
    kernel = _kernel("gemm", device, dtype=_FP8_IN[a.dtype], scaling="block", layout="nt", out=_GEMM_OUT[out_dtype],
                     N=N, K=K)
    kernel.launch((a.data_ptr(), (M, K), a.dtype), (b.data_ptr(), (N, K), b.dtype), c, scale_a, scale_b)
    return c


@w8a8_block_fp8_matmul.register_fake
def _(a, b, scale_a, scale_b, block_size, out_dtype=torch.bfloat16):
    M, N, _K = _block_fp8_shapes(a, b, scale_a, scale_b, block_size, out_dtype)
    return a.new_empty((M, N), dtype=out_dtype)


# --- attention --------------------------------------------------------------

def _attention_shapes(q, k, v, cu_seqlens_q, cu_seqlens_k):
    op = "attention"
    _require(op, q.dim() == 3 and k.dim() == 3 and v.dim() == 3,
             "q, k and v must be [tokens, heads, head_dim], got %s, %s, %s"
             % (tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    _require(op, k.shape[:2] == v.shape[:2], "k %s and v %s differ in tokens or heads" % (tuple(k.shape), tuple(v.shape)))
    heads, kv_heads, head_dim = q.shape[1], k.shape[1], q.shape[2]
    _require(op, k.shape[2] == head_dim, "q's head_dim %d, k's %d" % (head_dim, k.shape[2]))
    _require(op, kv_heads > 0 and heads % kv_heads == 0,
             "kv heads (%d) must divide the query heads (%d)" % (kv_heads, heads))
    _require(op, cu_seqlens_q.dim() == 1 and cu_seqlens_q.shape == cu_seqlens_k.shape and cu_seqlens_q.shape[0] >= 2,
             "cu_seqlens_q %s and cu_seqlens_k %s must both be [batch + 1]"
             % (tuple(cu_seqlens_q.shape), tuple(cu_seqlens_k.shape)))
    for name, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        _require(op, t.dtype == torch.int32, "%s is %s; it must be torch.int32" % (name, t.dtype))
    return heads, kv_heads, head_dim, v.shape[2]


@torch.library.custom_op("tilec::attention", mutates_args=())
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
              cu_seqlens_k: torch.Tensor, max_seqlen_q: int, max_seqlen_k: int,
              softmax_scale: Optional[float] = None, causal: bool = False,
              window: int = 0) -> Tuple[torch.Tensor, torch.Tensor]:
    heads, kv_heads, head_dim, head_dim_v = _attention_shapes(q, k, v, cu_seqlens_q, cu_seqlens_k)
    dtype = _dtype("attention", "q", q)
    _require("attention", k.dtype == q.dtype and v.dtype == q.dtype, "q, k and v must have one dtype")
    _require_contiguous("attention", q=q, k=k, v=v, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k)
    device = _require_gpu("attention", q=q, k=k, v=v, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k)
    _require("attention", max_seqlen_q >= 0 and max_seqlen_k >= 0 and window >= 0,
             "max_seqlen_q, max_seqlen_k and window must be >= 0")
    out = q.new_empty((q.shape[0], heads, head_dim_v))
    lse = torch.empty((q.shape[0], heads), dtype=torch.float32, device=device)
    scale = 1.0 / math.sqrt(head_dim) if softmax_scale is None else float(softmax_scale)
    # V's head size only when it differs (DeepSeek's prefill: 192 for Q and K, 128 for V).
    value_dim = {} if head_dim_v == head_dim else {"head_dim_v": head_dim_v}
    kernel = _kernel("attention", device, dtype=dtype, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                     causal=causal, window=window, **value_dim)
    total_q, total_k = q.shape[0], k.shape[0]
    kernel.launch(q.view(total_q, heads * head_dim), k.view(total_k, kv_heads * head_dim),
                  v.view(total_k, kv_heads * head_dim_v), out.view(total_q, heads * head_dim_v), lse,
                  cu_seqlens_q, cu_seqlens_k, scale, max_seqlen_q, cu_seqlens_q.shape[0] - 1)
    return out, lse


@attention.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale=None, causal=False, window=0):
    heads, _kv_heads, _head_dim, head_dim_v = _attention_shapes(q, k, v, cu_seqlens_q, cu_seqlens_k)
    return q.new_empty((q.shape[0], heads, head_dim_v)), q.new_empty((q.shape[0], heads), dtype=torch.float32)


# --- paged decode -----------------------------------------------------------

def _paged_decode_shapes(query, key_cache, value_cache, block_tables, seq_lens):
    op = "paged_decode"
    _require(op, query.dim() == 3, "query must be [num_tokens, heads, head_dim], got %s" % (tuple(query.shape),))
    _require(op, key_cache.dim() == 4 and key_cache.shape == value_cache.shape,
             "key_cache %s and value_cache %s must both be [num_blocks, block_size, kv_heads, head_dim]"
             % (tuple(key_cache.shape), tuple(value_cache.shape)))
    num_tokens, heads, head_dim = query.shape
    _num_blocks, block_size, kv_heads, cache_dim = key_cache.shape
    _require(op, cache_dim == head_dim, "query's head_dim %d, the cache's %d" % (head_dim, cache_dim))
    _require(op, kv_heads > 0 and heads % kv_heads == 0,
             "kv heads (%d) must divide the query heads (%d)" % (kv_heads, heads))
    _require(op, block_tables.dim() == 2 and seq_lens.dim() == 1 and block_tables.shape[0] == seq_lens.shape[0],
             "block_tables %s must be [num_seqs, max_blocks] and seq_lens %s [num_seqs]"
             % (tuple(block_tables.shape), tuple(seq_lens.shape)))
    num_seqs = seq_lens.shape[0]
    _require(op, num_seqs > 0 and num_tokens % num_seqs == 0,
             "%d query tokens for %d sequences: each sequence must have the same number of new tokens"
             % (num_tokens, num_seqs))
    for name, t in (("block_tables", block_tables), ("seq_lens", seq_lens)):
        _require(op, t.dtype == torch.int32, "%s is %s; it must be torch.int32" % (name, t.dtype))
    return heads, kv_heads, head_dim, block_size, num_tokens // num_seqs


@torch.library.custom_op("tilec::paged_decode", mutates_args=())
def paged_decode(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                 block_tables: torch.Tensor, seq_lens: torch.Tensor,
                 softmax_scale: Optional[float] = None) -> torch.Tensor:
    heads, kv_heads, head_dim, block_size, q_per_seq = _paged_decode_shapes(query, key_cache, value_cache,
                                                                            block_tables, seq_lens)
    op = "paged_decode"
    dtype = _dtype(op, "query", query)
    _require(op, key_cache.dtype == query.dtype and value_cache.dtype == query.dtype,
             "query and the KV cache must have one dtype")
    _require_contiguous(op, query=query, key_cache=key_cache, value_cache=value_cache, block_tables=block_tables,
                        seq_lens=seq_lens)
    device = _require_gpu(op, query=query, key_cache=key_cache, value_cache=value_cache, block_tables=block_tables,
                          seq_lens=seq_lens)
    rows = query.shape[0] * heads
    out = torch.empty_like(query)
    lse = torch.empty((rows, 1), dtype=torch.float32, device=device)
    scale = 1.0 / math.sqrt(head_dim) if softmax_scale is None else float(softmax_scale)
    kernel = _kernel("paged_decode", device, dtype=dtype, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                     block_size=block_size, q_per_seq=q_per_seq)
    cache_rows = key_cache.shape[0] * block_size
    kernel.launch(query.view(rows, head_dim), key_cache.view(cache_rows, kv_heads * head_dim),
                  value_cache.view(cache_rows, kv_heads * head_dim), out.view(rows, head_dim), lse,
                  block_tables, seq_lens, scale)
    return out


@paged_decode.register_fake
def _(query, key_cache, value_cache, block_tables, seq_lens, softmax_scale=None):
    _paged_decode_shapes(query, key_cache, value_cache, block_tables, seq_lens)
    return torch.empty_like(query)


# --- moe --------------------------------------------------------------------

_MOE_BLOCK_M = 32  # sorted rows per expert-GEMM block: the alignment pads each expert's rows to it


def _moe_shapes(hidden_states, router_logits, w13, w2, topk):
    op = "moe"
    _require(op, hidden_states.dim() == 2 and router_logits.dim() == 2,
             "hidden_states %s must be [tokens, hidden] and router_logits %s [tokens, experts]"
             % (tuple(hidden_states.shape), tuple(router_logits.shape)))
    tokens, hidden = hidden_states.shape
    experts = router_logits.shape[1]
    _require(op, router_logits.shape[0] == tokens, "router_logits has %d rows for %d tokens"
             % (router_logits.shape[0], tokens))
    _require(op, w13.dim() == 3 and w13.shape[0] == experts and w13.shape[2] == hidden and w13.shape[1] % 2 == 0,
             "w13 %s must be [experts=%d, 2 * intermediate, hidden=%d]" % (tuple(w13.shape), experts, hidden))
    intermediate = w13.shape[1] // 2
    _require(op, tuple(w2.shape) == (experts, hidden, intermediate),
             "w2 %s must be [experts, hidden, intermediate] = %s" % (tuple(w2.shape), (experts, hidden, intermediate)))
    _require(op, 1 <= topk <= min(8, experts), "topk %d: expected 1..min(8, experts=%d)" % (topk, experts))
    _require(op, 1 <= experts <= 64, "%d experts: the kernels take 1..64" % experts)
    return tokens, hidden, experts, intermediate


@torch.library.custom_op("tilec::moe", mutates_args=())
def moe(hidden_states: torch.Tensor, router_logits: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor,
        topk: int, renormalize: bool = True) -> torch.Tensor:
    op = "moe"
    T, hidden, E, inter = _moe_shapes(hidden_states, router_logits, w13, w2, topk)
    dtype = _dtype(op, "hidden_states", hidden_states)
    for name, t in (("router_logits", router_logits), ("w13", w13), ("w2", w2)):
        _require(op, t.dtype == hidden_states.dtype, "%s is %s, hidden_states %s: they must have one dtype"
                 % (name, t.dtype, hidden_states.dtype))
    _require_contiguous(op, hidden_states=hidden_states, router_logits=router_logits, w13=w13, w2=w2)
    device = _require_gpu(op, hidden_states=hidden_states, router_logits=router_logits, w13=w13, w2=w2)
    out = torch.empty_like(hidden_states)
    if T == 0:
        return out
    BM = _MOE_BLOCK_M
    P = -(-(T * topk + E * (BM - 1)) // BM) * BM  # the alignment's bound on the padded rows

    def empty(shape, dt):
        return torch.empty(shape, dtype=dt, device=device)

    weights, ids = empty((T, topk), torch.float32), empty((T, topk), torch.int32)
    sorted_ids, block_experts = empty((P,), torch.int32), empty((P // BM,), torch.int32)
    positions, total = empty((topk * T,), torch.int32), empty((1,), torch.int32)
    h, y = empty((P, inter), hidden_states.dtype), empty((P, hidden), torch.float32)

    def part(name):
        return _kernel("moe", device, part=name, dtype=dtype, experts=E, topk=topk, renormalize=renormalize,
                       block_m=BM)

    # The five kernels of the layer, in order on the current stream.
    part("gate").launch(router_logits, weights, ids)
    part("align").launch(ids, sorted_ids, block_experts, positions, total)
    part("gate_up").launch(hidden_states, w13.view(E * 2 * inter, hidden), sorted_ids, block_experts, h)
    part("down").launch(h, w2.view(E * hidden, inter), block_experts, y)
    part("combine").launch(y, positions, weights, out)
    return out


@moe.register_fake
def _(hidden_states, router_logits, w13, w2, topk, renormalize=True):
    _moe_shapes(hidden_states, router_logits, w13, w2, topk)
    return torch.empty_like(hidden_states)


# The element-wise operators use the helpers above.
from ._elementwise_ops import (fused_add_rms_norm, fused_add_rms_norm_dynamic_per_token_quant,  # noqa: E402,F401
                               fused_add_rms_norm_per_group_quant, fused_add_rms_norm_static_fp8_quant, rms_norm,
                               rms_norm_dynamic_per_token_quant, rms_norm_per_group_quant, rms_norm_static_fp8_quant,
                               rotary_embedding, silu_and_mul, silu_and_mul_quant, softmax)
