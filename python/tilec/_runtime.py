"""Launch the kernels of a tilec bundle (``tilec --emit=bundle -o DIR``) on a
CUDA or HIP device, through libtilec_rt with ctypes.

    bundle = tilec.Bundle("kernels")
    bundle.launch("gemm_bf16_f32_128x128x32_w4_s2", a, b, c)          # torch tensors
    bundle.launch("scaled_rows", (ptr, (1024,), "f16"), 0.5, 130)    # (pointer, shape, dtype)

Tensor arguments are objects with ``data_ptr()``, ``shape``, ``dtype`` and
``stride()`` (PyTorch tensors), row-major contiguous on the GPU, or
``(pointer, shape, dtype)`` tuples. Scalars are Python floats and ints.
The runtime checks every launch against the bundle's manifest and raises
TilecError with its status and message (docs/runtime.md).
"""

import contextlib
import ctypes
import json
import os
import sys

__all__ = ["Bundle", "TilecError", "LaunchDims", "load_library", "open_library"]

_ARG_TENSOR, _ARG_F32, _ARG_I32 = 0, 1, 2

# Element types as the manifest names them (MLIR's spelling), by the
# dtype's name ("torch.bfloat16" and "bfloat16" alike).
_DTYPES = {
    "bfloat16": "bf16",
    "float16": "f16",
    "half": "f16",
    "float32": "f32",
    "float": "f32",
    "int32": "i32",
    "int8": "i8",
    "float8_e4m3fnuz": "f8E4M3FNUZ",
    "float8_e5m2fnuz": "f8E5M2FNUZ",
    "float8_e4m3fn": "f8E4M3FN",
    "float8_e5m2": "f8E5M2",
}


class _Arg(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("dtype", ctypes.c_char_p),
        ("data", ctypes.c_void_p),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("f32", ctypes.c_float),
        ("i32", ctypes.c_int32),
    ]


class _LaunchDims(ctypes.Structure):
    _fields_ = [
        ("grid", ctypes.c_int64 * 3),
        ("block", ctypes.c_int32 * 3),
        ("shared_bytes", ctypes.c_int64),
    ]


class LaunchDims:
    """Grid and block of a launch, and the dynamic shared memory it passes."""

    def __init__(self, grid, block, shared_bytes):
        self.grid, self.block, self.shared_bytes = grid, block, shared_bytes

    def __repr__(self):
        return "LaunchDims(grid=%r, block=%r, shared_bytes=%r)" % (self.grid, self.block, self.shared_bytes)


class TilecError(RuntimeError):
    """A failed runtime call: ``status`` is its name (TILEC_ERROR_DTYPE, ...),
    ``code`` its value, the message names the kernel and argument."""

    def __init__(self, code, status, message):
        super().__init__("%s: %s" % (status, message))
        self.code, self.status, self.message = code, status, message


_lib = None


def _candidates():
    env = os.environ.get("TILEC_RT_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, n) for n in ("libtilec_rt.so", "libtilec_rt.so.0")] + ["libtilec_rt.so.0"]


def open_library(candidates, what, env_var):
    """The first of `candidates` (paths, or names for the dynamic loader)
    that loads; OSError lists why each one did not."""
    errors = []
    for path in candidates:
        if os.sep in path and not os.path.exists(path):
            errors.append("%s: no such file" % path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
    raise OSError("cannot load %s (set %s to its path): %s" % (what, env_var, "; ".join(errors)))


def load_library():
    """libtilec_rt: $TILEC_RT_LIBRARY, else next to this package, else the
    dynamic loader's search path. Loaded once."""
    global _lib
    if _lib is not None:
        return _lib
    lib = open_library(_candidates(), "libtilec_rt", "TILEC_RT_LIBRARY")
    lib.tilec_bundle_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.tilec_bundle_close.argtypes = [ctypes.c_void_p]
    lib.tilec_bundle_close.restype = None
    lib.tilec_bundle_kernel_count.argtypes = [ctypes.c_void_p]
    lib.tilec_bundle_kernel_name.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.tilec_bundle_kernel_name.restype = ctypes.c_char_p
    lib.tilec_device_target.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.tilec_check_launch.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_Arg),
                                       ctypes.c_int, ctypes.POINTER(_LaunchDims)]
    lib.tilec_launch.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_Arg), ctypes.c_int,
                                 ctypes.c_void_p]
    lib.tilec_last_error.restype = ctypes.c_char_p
    lib.tilec_status_name.argtypes = [ctypes.c_int]
    lib.tilec_status_name.restype = ctypes.c_char_p
    _lib = lib
    return lib


def _check(lib, code):
    if code != 0:
        raise TilecError(code, lib.tilec_status_name(code).decode(), lib.tilec_last_error().decode())


def _dtype_name(dtype):
    name = str(dtype)
    name = name[len("torch."):] if name.startswith("torch.") else name
    return _DTYPES.get(name, name)


def _torch_device(args):
    """The device of the first torch GPU tensor among `args`, or None."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_cuda:
            return a.device
    return None


def _stream_handle(stream, device):
    """A CUstream / hipStream_t as an int: given, or PyTorch's current stream
    of `device` (a torch tensor's), else 0 (the default stream)."""
    if stream is None:
        if device is not None:
            return sys.modules["torch"].cuda.current_stream(device).cuda_stream
        return 0
    return int(getattr(stream, "cuda_stream", stream))


class Bundle:
    """A bundle folder opened with libtilec_rt."""

    def __init__(self, path):
        self._lib = load_library()
        self._handle = ctypes.c_void_p()
        self.path = os.fspath(path)
        _check(self._lib, self._lib.tilec_bundle_open(self.path.encode(), ctypes.byref(self._handle)))
        with open(os.path.join(self.path, "manifest.json")) as f:
            self.manifest = json.load(f)

    @property
    def kernels(self):
        """The distinct kernel names, in manifest order."""
        lib, h = self._lib, self._handle
        return [lib.tilec_bundle_kernel_name(h, i).decode() for i in range(lib.tilec_bundle_kernel_count(h))]

    def entries(self, name):
        """The manifest entries of kernel `name`, one per target."""
        return [k for k in self.manifest["kernels"] if k["name"] == name]

    def device_target(self):
        """The bundle target the current device runs (sm_90a, gfx942, ...)."""
        buf = ctypes.create_string_buffer(64)
        _check(self._lib, self._lib.tilec_device_target(self._handle, buf, len(buf)))
        return buf.value.decode()

    def check(self, name, *args, target):
        """Checks a launch of `name` as compiled for `target` without a
        device; returns its LaunchDims."""
        raw, _keep = self._args(name, args)
        dims = _LaunchDims()
        _check(self._lib, self._lib.tilec_check_launch(self._handle, name.encode(), target.encode(), raw, len(args),
                                                       ctypes.byref(dims)))
        return LaunchDims(tuple(dims.grid), tuple(dims.block), dims.shared_bytes)

    def launch(self, name, *args, stream=None):
        """Launches `name` for the current device on `stream` (an int
        handle or an object with ``cuda_stream``; None: PyTorch's current
        stream for torch tensors, else the default stream). Asynchronous."""
        raw, _keep = self._args(name, args)
        device = _torch_device(args)
        handle = _stream_handle(stream, device)
        # The runtime launches on the current device (CUDA: the current
        # context); make it the tensors' device, as PyTorch does.
        guard = sys.modules["torch"].cuda.device(device) if device is not None else contextlib.nullcontext()
        with guard:
            _check(self._lib, self._lib.tilec_launch(self._handle, name.encode(), raw, len(args), handle or None))

    def close(self):
        if getattr(self, "_handle", None) and self._handle.value:
            self._lib.tilec_bundle_close(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _args(self, name, args):
        """The C arguments, and the buffers they point into (kept alive by the caller)."""
        entries = self.entries(name)
        specs = entries[0]["args"] if entries else []
        raw = (_Arg * max(1, len(args)))()
        keep = []
        for i, value in enumerate(args):
            spec = specs[i] if i < len(specs) else None
            label = "argument %d%s" % (i, " ('%s')" % spec["name"] if spec and spec["name"] else "")
            raw[i] = self._arg(name, label, spec, value, keep)
        return raw, keep

    @staticmethod
    def _arg(name, label, spec, value, keep):
        where = "launch of %s: %s" % (name, label)
        if isinstance(value, bool):
            raise TypeError("%s: a bool is not a kernel argument" % where)
        if isinstance(value, (int, float)):
            # An int where the kernel takes f32 is that float; the runtime
            # reports a float where it takes i32.
            if isinstance(value, int) and not (spec and spec["kind"] == "f32"):
                return _Arg(kind=_ARG_I32, dtype=b"i32", i32=value)
            return _Arg(kind=_ARG_F32, dtype=b"f32", f32=float(value))
        if hasattr(value, "data_ptr"):
            shape = tuple(int(d) for d in value.shape)
            strides = tuple(int(s) for s in value.stride())
            device = getattr(value, "device", None)
            if device is not None and getattr(device, "type", "cuda") != "cuda":
                raise ValueError("%s: the tensor is on %s, not on a GPU" % (where, device))
            expected = 1
            for extent, stride in reversed(list(zip(shape, strides))):
                if extent != 1 and stride != expected:
                    raise ValueError("%s: the tensor is not row-major contiguous (shape %s, strides %s); "
                                     "pass tensor.contiguous()" % (where, shape, strides))
                expected *= extent
            ptr, dtype = value.data_ptr(), value.dtype
        elif isinstance(value, tuple) and len(value) == 3:
            ptr, shape, dtype = value
            shape = tuple(int(d) for d in shape)
        else:
            raise TypeError("%s: expected a tensor (an object with data_ptr(), shape, dtype and stride(), or a "
                            "(pointer, shape, dtype) tuple), a float or an int, got %s" % (where, type(value).__name__))
        dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        dtype_bytes = _dtype_name(dtype).encode()
        keep.extend([dims, dtype_bytes])
        return _Arg(kind=_ARG_TENSOR, dtype=dtype_bytes, data=int(ptr) or None, rank=len(shape), shape=dims)
