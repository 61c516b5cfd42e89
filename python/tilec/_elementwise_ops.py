"""The element-wise kernels (kernels/elementwise) as PyTorch operators; part of
tilec.torch, which imports this module after its helpers are defined.

- ``tilec::rms_norm(x, weight, eps=1e-6)``: y = x / sqrt(mean(x^2) + eps) *
  weight over the rows of x [tokens, hidden], weight [hidden].
- ``tilec::fused_add_rms_norm(x, residual, weight, eps=1e-6)``: residual +=
  x (written back to `residual`, in place), then y = rms_norm(residual).
- ``tilec::silu_and_mul(x)``: silu(x[:, :I]) * x[:, I:] for x [tokens, 2 I].
- ``tilec::softmax(x)``: softmax over the rows of x [rows, cols].
- ``tilec::rotary_embedding(positions, query, key, head_size, cos_sin_cache,
  is_neox=True)``: vLLM's rotary embedding, in place on query [tokens, heads *
  head_size] and key [tokens, kv_heads * head_size], from cos_sin_cache
  [max_position, head_size] (cos, then sin, of each pair's angle) at
  `positions` [tokens] (any integer dtype; converted to int32). NeoX style
  rotates halves, GPT-J style interleaved pairs.

With fp8 output (vLLM's static fp8 quantisation, fused: the result times
1 / scale, rounded to nearest even and saturated to the format's largest
value; `scale` a float; `out_dtype` torch.float8_e4m3fnuz on AMD GPUs,
torch.float8_e4m3fn on NVIDIA ones, by default the one of this PyTorch
build's GPUs):

- ``tilec::rms_norm_static_fp8_quant(x, weight, scale, eps=1e-6,
  out_dtype=None)`` and ``tilec::fused_add_rms_norm_static_fp8_quant(x,
  residual, weight, scale, eps=1e-6, out_dtype=None)``;
- ``tilec::silu_and_mul_quant(x, scale, out_dtype=None)``;
- ``tilec::rms_norm_dynamic_per_token_quant(x, weight, eps=1e-6,
  out_dtype=None)`` and ``tilec::fused_add_rms_norm_dynamic_per_token_quant(x,
  residual, weight, eps=1e-6, out_dtype=None)``: the scales computed per token
  (max |y| / fp8 max, at least 1 / (512 fp8 max)); return (y, scales [tokens,
  1] float32);
- ``tilec::rms_norm_per_group_quant(x, weight, eps=1e-6, out_dtype=None)`` and
  ``tilec::fused_add_rms_norm_per_group_quant(x, residual, weight, eps=1e-6,
  out_dtype=None)``: the same per group of 128 columns (hidden a multiple of
  128); scales [tokens, hidden / 128].

All take bf16, f16 or f32 tensors of one dtype and compute in f32.
"""

from typing import Optional, Tuple

import torch

# Through the module (not its names): tests stand in for its device helpers.
from . import torch as _base

__all__ = ["rms_norm", "fused_add_rms_norm", "silu_and_mul", "softmax", "rotary_embedding",
           "rms_norm_static_fp8_quant", "fused_add_rms_norm_static_fp8_quant", "silu_and_mul_quant",
           "rms_norm_dynamic_per_token_quant", "fused_add_rms_norm_dynamic_per_token_quant",
           "rms_norm_per_group_quant", "fused_add_rms_norm_per_group_quant"]

# The columns that share a scale in the per-group operators (the kernel's).
FP8_SCALE_GROUP = 128

_ELEMENTWISE_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}

# The fp8 outputs' formats (the kernels' -p fp8_dtype): AMD's targets hold
# e4m3fnuz, NVIDIA's the OCP e4m3.
_FP8_OUT = {torch.float8_e4m3fnuz: "fp8", torch.float8_e4m3fn: "e4m3"}


def _fp8_dtype(op, out_dtype):
    """out_dtype, or this PyTorch build's GPUs' fp8 format; checked."""
    if out_dtype is None:
        out_dtype = torch.float8_e4m3fnuz if getattr(torch.version, "hip", None) else torch.float8_e4m3fn
    _base._require(op, out_dtype in _FP8_OUT, "out_dtype %s: the kernel writes torch.float8_e4m3fnuz (AMD GPUs) or "
                   "torch.float8_e4m3fn (NVIDIA GPUs)" % out_dtype)
    return out_dtype


def _fp8_params(op, device, out_dtype, scale):
    """The kernel's fp8 parameters for out_dtype on `device`'s target; scale
    "token" or "group": scales the kernel computes."""
    dynamic = scale in ("token", "group")
    if not dynamic:
        _base._require(op, scale > 0, "scale must be positive, got %g" % scale)
    nvidia = _base.device_target(device).startswith("sm_")
    _base._require(op, (out_dtype == torch.float8_e4m3fn) == nvidia,
                   "out_dtype %s: %s GPUs hold %s" % (out_dtype, "NVIDIA" if nvidia else "AMD",
                                                      "torch.float8_e4m3fn" if nvidia else "torch.float8_e4m3fnuz"))
    return dict(fp8_out=1, fp8_dtype=_FP8_OUT[out_dtype], **({"fp8_scale": scale} if dynamic else {}))


def _rows(op, name, x):
    """x as [rows, cols]; its dtype's name."""
    _base._require(op, x.dim() == 2, "%s must be 2-D [rows, cols], got %s" % (name, tuple(x.shape)))
    return _base._dtype(op, name, x, _ELEMENTWISE_DTYPES)


def _same(op, x, **others):
    for name, t in others.items():
        _base._require(op, t.dtype == x.dtype, "%s is %s, x %s: they must have one dtype" % (name, t.dtype, x.dtype))


# --- rms_norm ---------------------------------------------------------------

def _norm_shapes(op, x, weight, residual=None):
    dtype = _rows(op, "x", x)
    _base._require(op, weight.dim() == 1 and weight.shape[0] == x.shape[1],
             "weight %s must be [hidden] = [%d]" % (tuple(weight.shape), x.shape[1]))
    if residual is not None:
        _base._require(op, residual.shape == x.shape, "residual %s and x %s differ" % (tuple(residual.shape), tuple(x.shape)))
        _same(op, x, weight=weight, residual=residual)
    else:
        _same(op, x, weight=weight)
    return dtype


def _launch_norm(op, x, weight, eps, residual, scale=None, out_dtype=None, scales=None):
    """y = rms_norm(x [+ residual]); with `scale`, in fp8 (out_dtype) times 1
    / scale; scale "token" or "group": the kernel's scales, written to
    `scales`."""
    dtype = _norm_shapes(op, x, weight, residual)
    tensors = dict(x=x, weight=weight) if residual is None else dict(x=x, residual=residual, weight=weight)
    _base._require_contiguous(op, **tensors)
    device = _base._require_gpu(op, **tensors)
    _base._require(op, eps >= 0, "eps must not be negative, got %g" % eps)
    fp8 = {} if scale is None else _fp8_params(op, device, out_dtype, scale)
    y = torch.empty_like(x) if scale is None else torch.empty(x.shape, dtype=out_dtype, device=x.device)
    tokens, hidden = x.shape
    if tokens == 0 or hidden == 0:
        return y
    kernel = _base._kernel("rms_norm", device, hidden=hidden, dtype=dtype, residual=int(residual is not None), **fp8)
    args = [x] + ([residual] if residual is not None else []) + [weight.view(1, hidden), y]
    args += ([scales] if scales is not None else []) + [float(eps), 1.0 / hidden]
    if scales is None and scale is not None:
        args.append(1.0 / scale)
    kernel.launch(*args)
    return y


@torch.library.custom_op("tilec::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return _launch_norm("rms_norm", x, weight, eps, None)


@rms_norm.register_fake
def _(x, weight, eps=1e-6):
    _norm_shapes("rms_norm", x, weight)
    return torch.empty_like(x)


@torch.library.custom_op("tilec::fused_add_rms_norm", mutates_args=("residual",))
def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                       eps: float = 1e-6) -> torch.Tensor:
    return _launch_norm("fused_add_rms_norm", x, weight, eps, residual)


@fused_add_rms_norm.register_fake
def _(x, residual, weight, eps=1e-6):
    _norm_shapes("fused_add_rms_norm", x, weight, residual)
    return torch.empty_like(x)


@torch.library.custom_op("tilec::rms_norm_static_fp8_quant", mutates_args=())
def rms_norm_static_fp8_quant(x: torch.Tensor, weight: torch.Tensor, scale: float, eps: float = 1e-6,
                              out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    op = "rms_norm_static_fp8_quant"
    return _launch_norm(op, x, weight, eps, None, scale, _fp8_dtype(op, out_dtype))


@rms_norm_static_fp8_quant.register_fake
def _(x, weight, scale, eps=1e-6, out_dtype=None):
    op = "rms_norm_static_fp8_quant"
    _norm_shapes(op, x, weight)
    return torch.empty(x.shape, dtype=_fp8_dtype(op, out_dtype), device=x.device)


@torch.library.custom_op("tilec::fused_add_rms_norm_static_fp8_quant", mutates_args=("residual",))
def fused_add_rms_norm_static_fp8_quant(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, scale: float,
                                        eps: float = 1e-6, out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    op = "fused_add_rms_norm_static_fp8_quant"
    return _launch_norm(op, x, weight, eps, residual, scale, _fp8_dtype(op, out_dtype))


@fused_add_rms_norm_static_fp8_quant.register_fake
def _(x, residual, weight, scale, eps=1e-6, out_dtype=None):
    op = "fused_add_rms_norm_static_fp8_quant"
    _norm_shapes(op, x, weight, residual)
    return torch.empty(x.shape, dtype=_fp8_dtype(op, out_dtype), device=x.device)


def _scales_shape(op, x, weight, residual, scaling):
    """The scales' shape for "token" or "group" scaling; checks the shapes."""
    _norm_shapes(op, x, weight, residual)
    if scaling == "token":
        return (x.shape[0], 1)
    _base._require(op, x.shape[1] % FP8_SCALE_GROUP == 0, "x %s: groups of %d columns need hidden to be a multiple "
                   "of %d" % (tuple(x.shape), FP8_SCALE_GROUP, FP8_SCALE_GROUP))
    return (x.shape[0], x.shape[1] // FP8_SCALE_GROUP)


def _launch_dynamic(op, x, weight, eps, residual, out_dtype, scaling):
    scales = torch.empty(_scales_shape(op, x, weight, residual, scaling), dtype=torch.float32, device=x.device)
    y = _launch_norm(op, x, weight, eps, residual, scaling, _fp8_dtype(op, out_dtype), scales)
    return y, scales


def _fake_dynamic(op, x, weight, residual, out_dtype, scaling):
    shape = _scales_shape(op, x, weight, residual, scaling)
    return (torch.empty(x.shape, dtype=_fp8_dtype(op, out_dtype), device=x.device),
            torch.empty(shape, dtype=torch.float32, device=x.device))


@torch.library.custom_op("tilec::rms_norm_dynamic_per_token_quant", mutates_args=())
def rms_norm_dynamic_per_token_quant(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6,
                                     out_dtype: Optional[torch.dtype] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _launch_dynamic("rms_norm_dynamic_per_token_quant", x, weight, eps, None, out_dtype, "token")


@rms_norm_dynamic_per_token_quant.register_fake
def _(x, weight, eps=1e-6, out_dtype=None):
    return _fake_dynamic("rms_norm_dynamic_per_token_quant", x, weight, None, out_dtype, "token")


@torch.library.custom_op("tilec::fused_add_rms_norm_dynamic_per_token_quant", mutates_args=("residual",))
def fused_add_rms_norm_dynamic_per_token_quant(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                                               eps: float = 1e-6, out_dtype: Optional[torch.dtype] = None
                                               ) -> Tuple[torch.Tensor, torch.Tensor]:
    return _launch_dynamic("fused_add_rms_norm_dynamic_per_token_quant", x, weight, eps, residual, out_dtype, "token")


@fused_add_rms_norm_dynamic_per_token_quant.register_fake
def _(x, residual, weight, eps=1e-6, out_dtype=None):
    return _fake_dynamic("fused_add_rms_norm_dynamic_per_token_quant", x, weight, residual, out_dtype, "token")


@torch.library.custom_op("tilec::rms_norm_per_group_quant", mutates_args=())
def rms_norm_per_group_quant(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6,
                             out_dtype: Optional[torch.dtype] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _launch_dynamic("rms_norm_per_group_quant", x, weight, eps, None, out_dtype, "group")


@rms_norm_per_group_quant.register_fake
def _(x, weight, eps=1e-6, out_dtype=None):
    return _fake_dynamic("rms_norm_per_group_quant", x, weight, None, out_dtype, "group")


@torch.library.custom_op("tilec::fused_add_rms_norm_per_group_quant", mutates_args=("residual",))
def fused_add_rms_norm_per_group_quant(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                                       eps: float = 1e-6, out_dtype: Optional[torch.dtype] = None
                                       ) -> Tuple[torch.Tensor, torch.Tensor]:
    return _launch_dynamic("fused_add_rms_norm_per_group_quant", x, weight, eps, residual, out_dtype, "group")


@fused_add_rms_norm_per_group_quant.register_fake
def _(x, residual, weight, eps=1e-6, out_dtype=None):
    return _fake_dynamic("fused_add_rms_norm_per_group_quant", x, weight, residual, out_dtype, "group")


# --- silu_and_mul -----------------------------------------------------------

def _silu_shapes(x, op="silu_and_mul"):
    dtype = _rows(op, "x", x)
    _base._require(op, x.shape[1] % 2 == 0,
             "x %s must be [tokens, 2 * intermediate]: its width is odd" % (tuple(x.shape),))
    return dtype, x.shape[1] // 2


@torch.library.custom_op("tilec::silu_and_mul", mutates_args=())
def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    dtype, inter = _silu_shapes(x)
    _base._require_contiguous("silu_and_mul", x=x)
    device = _base._require_gpu("silu_and_mul", x=x)
    out = x.new_empty((x.shape[0], inter))
    if x.shape[0] == 0 or inter == 0:
        return out
    _base._kernel("silu_and_mul", device, intermediate=inter, dtype=dtype).launch(x, out)
    return out


@silu_and_mul.register_fake
def _(x):
    _dtype, inter = _silu_shapes(x)
    return x.new_empty((x.shape[0], inter))


@torch.library.custom_op("tilec::silu_and_mul_quant", mutates_args=())
def silu_and_mul_quant(x: torch.Tensor, scale: float, out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    op = "silu_and_mul_quant"
    out_dtype = _fp8_dtype(op, out_dtype)
    dtype, inter = _silu_shapes(x, op)
    _base._require_contiguous(op, x=x)
    device = _base._require_gpu(op, x=x)
    fp8 = _fp8_params(op, device, out_dtype, scale)
    out = torch.empty((x.shape[0], inter), dtype=out_dtype, device=x.device)
    if x.shape[0] == 0 or inter == 0:
        return out
    _base._kernel("silu_and_mul", device, intermediate=inter, dtype=dtype, **fp8).launch(x, out, 1.0 / scale)
    return out


@silu_and_mul_quant.register_fake
def _(x, scale, out_dtype=None):
    op = "silu_and_mul_quant"
    _dtype, inter = _silu_shapes(x, op)
    return torch.empty((x.shape[0], inter), dtype=_fp8_dtype(op, out_dtype), device=x.device)


# --- softmax ----------------------------------------------------------------

@torch.library.custom_op("tilec::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    dtype = _rows("softmax", "x", x)
    _base._require_contiguous("softmax", x=x)
    device = _base._require_gpu("softmax", x=x)
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    _base._kernel("softmax", device, cols=x.shape[1], dtype=dtype).launch(x, y)
    return y


@softmax.register_fake
def _(x):
    _rows("softmax", "x", x)
    return torch.empty_like(x)


# --- rotary_embedding -------------------------------------------------------

def _rope_shapes(positions, query, key, head_size, cos_sin_cache) -> Tuple[str, int, int]:
    op = "rotary_embedding"
    dtype = _rows(op, "query", query)
    _base._require(op, key.dim() == 2 and positions.dim() == 1 and cos_sin_cache.dim() == 2,
             "positions %s must be [tokens], key %s [tokens, kv_heads * head_size] and cos_sin_cache %s "
             "[max_position, head_size]" % (tuple(positions.shape), tuple(key.shape), tuple(cos_sin_cache.shape)))
    tokens = positions.shape[0]
    _base._require(op, query.shape[0] == tokens and key.shape[0] == tokens,
             "query has %d rows and key %d for %d positions" % (query.shape[0], key.shape[0], tokens))
    _base._require(op, head_size > 0 and head_size % 2 == 0, "head_size %d: expected an even size" % head_size)
    _base._require(op, query.shape[1] % head_size == 0 and key.shape[1] % head_size == 0 and key.shape[1] > 0,
             "query %s and key %s must be whole heads of %d" % (tuple(query.shape), tuple(key.shape), head_size))
    _base._require(op, cos_sin_cache.shape[1] == head_size,
             "cos_sin_cache %s: the kernel rotates whole heads, so its rows must hold head_size = %d values "
             "(cos then sin)" % (tuple(cos_sin_cache.shape), head_size))
    _base._require(op, not positions.is_floating_point(), "positions is %s; it must be an integer tensor" % positions.dtype)
    _same(op, query, key=key, cos_sin_cache=cos_sin_cache)
    return dtype, query.shape[1] // head_size, key.shape[1] // head_size


@torch.library.custom_op("tilec::rotary_embedding", mutates_args=("query", "key"))
def rotary_embedding(positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor, head_size: int,
                     cos_sin_cache: torch.Tensor, is_neox: bool = True) -> None:
    op = "rotary_embedding"
    dtype, heads, kv_heads = _rope_shapes(positions, query, key, head_size, cos_sin_cache)
    _base._require_contiguous(op, positions=positions, query=query, key=key, cos_sin_cache=cos_sin_cache)
    device = _base._require_gpu(op, positions=positions, query=query, key=key, cos_sin_cache=cos_sin_cache)
    tokens = positions.shape[0]
    if tokens == 0:
        return
    kernel = _base._kernel("rope", device, heads=heads, kv_heads=kv_heads, head_dim=head_size,
                     style="neox" if is_neox else "gptj", dtype=dtype)
    # The kernel's views (kernels/elementwise/Rope.h): rows of head_size (neox)
    # or columns of pairs (gptj), of the same memory.
    if is_neox:
        q, k, cache = query.view(-1, head_size), key.view(-1, head_size), cos_sin_cache
    else:
        q, k, cache = query.view(-1, 2), key.view(-1, 2), cos_sin_cache.view(-1, 1)
    kernel.launch(positions.to(torch.int32), q, k, cache)


@rotary_embedding.register_fake
def _(positions, query, key, head_size, cos_sin_cache, is_neox=True):
    _rope_shapes(positions, query, key, head_size, cos_sin_cache)
