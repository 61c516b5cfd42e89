"""Minimal CUDA driver-API launcher (ctypes over libcuda.so.1) for tilec cubins.

Used by the H200 harness before libtilec_rt is available there; it shares
PyTorch's primary context and launches on PyTorch's current stream.
"""
import ctypes

_cuda = ctypes.CDLL("libcuda.so.1")
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def _check(result, what):
    if result != 0:
        msg = ctypes.c_char_p()
        _cuda.cuGetErrorString(result, ctypes.byref(msg))
        raise RuntimeError(f"{what}: CUDA error {result}: {msg.value.decode() if msg.value else '?'}")


class Kernel:
    """A kernel loaded from a cubin: tensors pass as (pointer, int per dim), scalars as float/int."""

    def __init__(self, cubin_bytes, name, threads, lds_bytes):
        self._image = ctypes.create_string_buffer(cubin_bytes, len(cubin_bytes))
        self.module = ctypes.c_void_p()
        _check(_cuda.cuModuleLoadData(ctypes.byref(self.module), self._image), f"load {name}")
        self.func = ctypes.c_void_p()
        _check(_cuda.cuModuleGetFunction(ctypes.byref(self.func), self.module, name.encode()), f"find {name}")
        self.name, self.threads, self.lds = name, threads, lds_bytes
        if lds_bytes > 48 * 1024:
            _check(_cuda.cuFuncSetAttribute(self.func, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            ctypes.c_int(lds_bytes)), f"shared memory of {name}")

    def launch(self, grid, args, stream=0):
        """args: list of ('ptr', int) / ('int', int) / ('float', float)."""
        holders = []
        for kind, v in args:
            holders.append(ctypes.c_void_p(v) if kind == "ptr" else ctypes.c_int(v) if kind == "int" else ctypes.c_float(v))
        params = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
        gx, gy, gz = (list(grid) + [1, 1, 1])[:3]
        _check(_cuda.cuLaunchKernel(self.func, gx, gy, gz, self.threads, 1, 1, self.lds, ctypes.c_void_p(stream),
                                    params, None), f"launch {self.name}")


def tensor_args(t):
    """A tensor argument: its pointer and one int per dimension."""
    return [("ptr", t.data_ptr())] + [("int", int(d)) for d in t.shape]
