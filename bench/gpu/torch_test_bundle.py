"""Builds the sm_90a bundle of the kernels that python/tests/test_torch.py's
GpuTest launches, so that those tests run on a GPU machine without the
compiler (no LLVM there: tilec.jit cannot compile, tilec.torch finds the
kernels in $TILEC_TORCH_BUNDLES instead).

It runs GpuTest on the build machine, on CPU tensors: torch's "cuda" device
is mapped to the CPU, the target is sm_90a, launches do nothing and the
tests' assertions are switched off (no output is computed). Every kernel the
operators ask tilec.jit for is compiled and added to the bundle. Needs
PyTorch (CPU is enough) and the build's libtilec_c / libtilec_rt:

  PYTHONPATH=python:SITE_PACKAGES_WITH_TORCH TILEC_COMPILER_LIBRARY=build/lib/libtilec_c.so.1 \\
  TILEC_RT_LIBRARY=build/lib/libtilec_rt.so LD_LIBRARY_PATH=build/tests/rt/stub-cuda \\
    python3 bench/gpu/torch_test_bundle.py OUT_DIR/bundle python/tests

then, on the GPU machine, with the package and test_torch.py copied to OUT_DIR:

  PYTHONPATH=OUT_DIR TILEC_TORCH_BUNDLES=OUT_DIR/bundle python3 -m unittest test_torch.GpuTest
"""
import functools
import sys
import unittest

import torch
from torch import nn


def _on_cpu(device):
    if isinstance(device, str) and device.startswith("cuda"):
        return "cpu"
    if isinstance(device, torch.device) and device.type == "cuda":
        return "cpu"
    return device


def _map_cuda_to_cpu():
    torch.cuda.is_available = lambda: True
    for name in ("randn", "randint", "arange", "zeros", "empty", "ones", "tensor", "full"):
        factory = getattr(torch, name)

        def on_cpu(factory):
            @functools.wraps(factory)
            def make(*args, **kwargs):
                if "device" in kwargs:
                    kwargs["device"] = _on_cpu(kwargs["device"])
                return factory(*args, **kwargs)
            return make
        setattr(torch, name, on_cpu(factory))
    torch.Tensor.cuda = lambda self, *a, **k: self
    nn.Module.cuda = lambda self, *a, **k: self
    to = torch.Tensor.to
    torch.Tensor.to = lambda self, *a, **k: to(self, *[_on_cpu(x) for x in a],
                                                **{key: _on_cpu(v) for key, v in k.items()})


def main(bundle, tests_dir):
    _map_cuda_to_cpu()
    import tilec
    import tilec.compiler
    import tilec.torch
    tilec.torch.device_target = lambda device: "sm_90a"
    tilec.torch._require_gpu = lambda op, **tensors: torch.device("cpu")
    compiled = []
    jit = tilec.compiler.jit

    def compile_into_bundle(kernel, target, **params):
        if (kernel, target, params) not in compiled:
            compiled.append((kernel, target, params))
            tilec.compile(kernel, target=target, **params).add_to_bundle(bundle)
        return jit(kernel, target, **params)

    tilec.compiler.jit = compile_into_bundle
    tilec.compiler.JitKernel.launch = lambda self, *a, **k: None
    unittest.TestCase.assertTrue = lambda self, *a, **k: None  # no output is computed here
    sys.path.insert(0, tests_dir)
    import test_torch
    result = unittest.TextTestRunner(verbosity=1).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(test_torch.GpuTest))
    for kernel, target, params in compiled:
        print("bundled %s for %s: %s" % (kernel, target, " ".join("%s=%s" % kv for kv in sorted(params.items()))))
    return 0 if result.wasSuccessful() and compiled else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
