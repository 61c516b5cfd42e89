"""Compile tilec kernels from Python: ctypes over libtilec_c, the compiler's C
ABI (include/tilec/tilec.h).

    k = tilec.compile("gemm", target="gfx942", N=4096, K=4096, dtype="bf16")
    k.name, k.code_object, k.manifest_entry, k.report
    k.add_to_bundle("kernels")          # what `tilec --emit=bundle -o kernels` writes
    g = tilec.jit("gemm", target="gfx942", N=4096, K=4096)   # compiled once, then launchable
    g.launch(a, b, c)

The compiler library is ``$TILEC_COMPILER_LIBRARY``, else ``libtilec_c.so``
next to this package, else ``libtilec_c.so.1`` on the dynamic loader's
search path (an installed tilec's lib folder). It needs LLVM 19's shared
libraries; launching bundles (tilec.Bundle) does not.
"""

import ctypes
import hashlib
import json
import os
import threading

from . import _runtime

__all__ = ["CompileError", "CompiledKernel", "JitKernel", "compile", "compile_tile_ir", "jit", "kernels",
           "load_compiler_library"]

_ABI_VERSION = 1  # TILEC_COMPILER_ABI_VERSION of the tilec.h this module follows


class _Options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("target", ctypes.c_char_p),
        ("jit", ctypes.c_char_p),
        ("use_cache", ctypes.c_int32),
        ("cache_dir", ctypes.c_char_p),
    ]


class CompileError(_runtime.TilecError):
    """A failed compile: ``status`` is its name (TILEC_COMPILE_ERROR_PARAM,
    ...), the message what the compiler said, with locations."""


_lib = None


def _candidates():
    env = os.environ.get("TILEC_COMPILER_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, "libtilec_c.so"), "libtilec_c.so.1"]


def load_compiler_library():
    """libtilec_c, loaded once; OSError says where it looked."""
    global _lib
    if _lib is not None:
        return _lib
    lib = _runtime.open_library(_candidates(), "libtilec_c", "TILEC_COMPILER_LIBRARY")
    lib.tilec_compiler_abi_version.restype = ctypes.c_int
    if lib.tilec_compiler_abi_version() != _ABI_VERSION:
        raise OSError("libtilec_c implements compiler ABI version %d; this package needs %d"
                      % (lib.tilec_compiler_abi_version(), _ABI_VERSION))
    for name in ("tilec_compiler_version", "tilec_compiler_kernels", "tilec_compiler_cache_dir",
                 "tilec_compile_last_error"):
        getattr(lib, name).restype = ctypes.c_char_p
    lib.tilec_compile_status_name.argtypes = [ctypes.c_int]
    lib.tilec_compile_status_name.restype = ctypes.c_char_p
    lib.tilec_compile_kernel.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                                         ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                         ctypes.POINTER(_Options), ctypes.POINTER(ctypes.c_void_p)]
    lib.tilec_compile_tile_ir.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                          ctypes.POINTER(_Options), ctypes.POINTER(ctypes.c_void_p)]
    lib.tilec_compiled_free.argtypes = [ctypes.c_void_p]
    lib.tilec_compiled_free.restype = None
    lib.tilec_compiled_code_object.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    lib.tilec_compiled_code_object.restype = ctypes.c_void_p
    for name in ("name", "manifest_entry", "report", "tile_ir", "source"):
        fn = getattr(lib, "tilec_compiled_" + name)
        fn.argtypes = [ctypes.c_void_p]
        fn.restype = ctypes.c_char_p
    lib.tilec_compiled_add_to_bundle.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    _lib = lib
    return lib


def _check(lib, code):
    if code != 0:
        raise CompileError(code, lib.tilec_compile_status_name(code).decode(),
                           lib.tilec_compile_last_error().decode())


def _options(target, jit_compiler, use_cache, cache_dir):
    return _Options(ctypes.sizeof(_Options), target.encode(), jit_compiler.encode(), 1 if use_cache else 0,
                    os.fsencode(cache_dir) if cache_dir else None)


def _param_text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


class CompiledKernel:
    """One kernel compiled for one target (the C ABI's tilec_compiled)."""

    def __init__(self, lib, handle):
        self._lib, self._handle = lib, handle
        self.name = lib.tilec_compiled_name(handle).decode()
        """The launch name (the configuration, without the target)."""
        size = ctypes.c_size_t()
        ptr = lib.tilec_compiled_code_object(handle, ctypes.byref(size))
        self.code_object = ctypes.string_at(ptr, size.value)
        """AMDGPU ELF or NVIDIA cubin bytes."""
        self.manifest_entry = json.loads(lib.tilec_compiled_manifest_entry(handle))
        """Its entry of a bundle manifest (docs/runtime.md)."""
        self.report = json.loads(lib.tilec_compiled_report(handle))
        """Registers, LDS, occupancy, spills, ..."""
        self.tile_ir = lib.tilec_compiled_tile_ir(handle).decode()
        self.source = lib.tilec_compiled_source(handle).decode()

    @property
    def target(self):
        return self.manifest_entry["target"]

    def add_to_bundle(self, path):
        """Adds this kernel to the bundle folder `path` (created if absent), as
        ``tilec --emit=bundle -o PATH`` does."""
        _check(self._lib, self._lib.tilec_compiled_add_to_bundle(self._handle, os.fsencode(path)))

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.tilec_compiled_free(self._handle)
            self._handle = None

    def __repr__(self):
        return "CompiledKernel(%r, target=%r)" % (self.name, self.target)


def compile(kernel, target="gfx942", jit_compiler="auto", use_cache=True, cache_dir=None, **params):
    """Compiles shipped kernel `kernel` (see tilec.kernels()) for `target`
    with parameters given as keywords (``tilec -p KEY=VALUE``; values are
    turned into text, True/False into 1/0). `jit_compiler`: auto, hiprtc or
    clang. Raises CompileError."""
    lib = load_compiler_library()
    keys = (ctypes.c_char_p * max(1, len(params)))(*[k.encode() for k in params])
    values = (ctypes.c_char_p * max(1, len(params)))(*[_param_text(v).encode() for v in params.values()])
    opts = _options(target, jit_compiler, use_cache, cache_dir)
    handle = ctypes.c_void_p()
    _check(lib, lib.tilec_compile_kernel(kernel.encode(), keys, values, len(params), ctypes.byref(opts),
                                         ctypes.byref(handle)))
    return CompiledKernel(lib, handle.value)


def compile_tile_ir(text, target="gfx942", name="<tile-ir>", jit_compiler="auto", use_cache=True, cache_dir=None):
    """Compiles tile IR text (one kernel function) for `target`; `name` names
    it in diagnostics. Raises CompileError."""
    lib = load_compiler_library()
    data = text.encode() if isinstance(text, str) else bytes(text)
    opts = _options(target, jit_compiler, use_cache, cache_dir)
    handle = ctypes.c_void_p()
    _check(lib, lib.tilec_compile_tile_ir(data, len(data), name.encode(), ctypes.byref(opts), ctypes.byref(handle)))
    return CompiledKernel(lib, handle.value)


def kernels():
    """The shipped kernels: [{"name", "summary", "params": [{"name", "default", "help", "values"}]}]."""
    return json.loads(load_compiler_library().tilec_compiler_kernels())


class JitKernel:
    """A compiled kernel in a bundle, ready to launch: ``launch(*args,
    stream=None)`` as Bundle.launch, ``check(*args)`` for its target."""

    def __init__(self, bundle, name, target):
        self.bundle, self.name, self.target = bundle, name, target

    def launch(self, *args, stream=None):
        self.bundle.launch(self.name, *args, stream=stream)

    def check(self, *args):
        return self.bundle.check(self.name, *args, target=self.target)

    def __repr__(self):
        return "JitKernel(%r, target=%r, bundle=%r)" % (self.name, self.target, self.bundle.path)


def jit(kernel, target, bundle_cache=None, **params):
    """Shipped kernel `kernel` with `params`, compiled for `target` on the
    first call (through the compiler's on-disk cache) and kept in a
    one-kernel bundle under `bundle_cache` (default: the compiler's cache
    folder's ``bundles``): later calls, in this process or another, open that
    bundle without compiling. Returns a JitKernel."""
    key = json.dumps({"kernel": kernel, "target": target, "params": {k: _param_text(v) for k, v in params.items()}},
                     sort_keys=True)
    lib = load_compiler_library()
    if bundle_cache is None:
        root = lib.tilec_compiler_cache_dir().decode()
        if not root:
            raise CompileError(1, "TILEC_COMPILE_ERROR_INVALID_ARGUMENT",
                               "no cache folder for JIT bundles: set TILEC_CACHE_DIR (or HOME) or pass bundle_cache")
        bundle_cache = os.path.join(root, "bundles")
    # The bundle's name: a hash of what was asked and of the compiler's
    # version, so that another tilec never reuses it.
    version = lib.tilec_compiler_version().decode()
    path = os.path.join(bundle_cache, hashlib.sha256((version + "\n" + key).encode()).hexdigest()[:24])
    with _JIT_LOCK:
        found = _JIT_KERNELS.get(path)
        if found is None:
            if not os.path.exists(os.path.join(path, "manifest.json")):
                compile(kernel, target=target, **params).add_to_bundle(path)
            bundle = _runtime.Bundle(path)
            found = _JIT_KERNELS[path] = JitKernel(bundle, bundle.kernels[0], target)
    return found


_JIT_LOCK = threading.Lock()
_JIT_KERNELS = {}  # bundle folder -> JitKernel, for this process
