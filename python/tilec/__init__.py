"""tilec from Python, through its two C ABIs with ctypes (no compiled extension):

- launch the kernels of a bundle (``tilec --emit=bundle -o DIR``) with
  libtilec_rt, which needs no compiler::

      bundle = tilec.Bundle("kernels")
      bundle.launch("gemm_bf16_f32_128x128x32_w4_s2", a, b, c)   # on PyTorch's current stream

- compile kernels with libtilec_c, the compiler's C ABI::

      k = tilec.compile("gemm", target="gfx942", N=4096, K=4096)
      k.code_object, k.manifest_entry, k.report
      tilec.jit("gemm", "gfx942", N=4096, K=4096).launch(a, b, c)

- ``tilec.torch``: PyTorch custom operators (``torch.ops.tilec.gemm``, ...).

Where the libraries are found: docs/integration.md.
"""

from ._runtime import Bundle, LaunchDims, TilecError, load_library
from .compiler import (CompileError, CompiledKernel, JitKernel, compile, compile_tile_ir, jit, kernels,
                       load_compiler_library)

__version__ = "0.1.0"

__all__ = ["Bundle", "CompileError", "CompiledKernel", "JitKernel", "LaunchDims", "TilecError", "compile",
           "compile_tile_ir", "jit", "kernels", "load_compiler_library", "load_library"]
