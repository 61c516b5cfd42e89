"""The Python package against the CUDA stub (tests/rt/stub_cuda.c, found as
libcuda.so.1 on LD_LIBRARY_PATH) and the hand-written sm_90a bundle
($TILEC_RT_TEST_BUNDLE). Run by ctest (rt.python)."""

import ctypes
import os
import struct
import unittest

import tilec

GEMM = "gemm_bf16_f32_128x128x32_w4_s2"


class FakeTensor:
    """What Bundle.launch reads of a torch tensor, at a made-up address."""

    def __init__(self, ptr, shape, dtype, strides=None):
        self.ptr, self.shape, self.dtype = ptr, tuple(shape), dtype
        if strides is None:
            strides, expected = [], 1
            for extent in reversed(shape):
                strides.insert(0, expected)
                expected *= extent
        self.strides = tuple(strides)

    def data_ptr(self):
        return self.ptr

    def stride(self):
        return self.strides


class Stream:
    def __init__(self, handle):
        self.cuda_stream = handle


def stub():
    lib = ctypes.CDLL("libcuda.so.1")
    lib.tilec_stub_last_launch.restype = ctypes.c_char_p
    lib.tilec_stub_calls.argtypes = [ctypes.c_char_p]
    return lib


def record(entry, grid, block, shared, stream, params):
    """The stub's line for a launch (stub_cuda.c)."""
    return "entry=%s grid=%d,%d,%d block=%d,1,1 shared=%d stream=%s params=%s" % (
        entry, grid[0], grid[1], grid[2], block, shared, "0x%x" % stream if stream else "(nil)",
        ",".join(str(p) for p in params))


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


class BundleTest(unittest.TestCase):
    def setUp(self):
        self.stub = stub()
        self.bundle = tilec.Bundle(os.environ["TILEC_RT_TEST_BUNDLE"])

    def tearDown(self):
        self.bundle.close()

    def last_launch(self):
        return self.stub.tilec_stub_last_launch().decode()

    def test_kernels_and_target(self):
        self.assertEqual(self.bundle.kernels, [GEMM, "scaled_rows", "tma_rows"])
        self.assertEqual(self.bundle.device_target(), "sm_90a")
        self.assertEqual([e["target"] for e in self.bundle.entries(GEMM)], ["sm_90a", "gfx942"])

    def test_gemm_passes_pointer_then_extents(self):
        M, N, K = 256, 384, 64
        a = FakeTensor(0x10000, (M, K), "torch.bfloat16")
        b = FakeTensor(0x20000, (K, N), "torch.bfloat16")
        c = FakeTensor(0x30000, (M, N), "torch.float32")
        self.bundle.launch(GEMM, a, b, c, stream=Stream(0x1234))
        # Grid ceil(C.shape[0] / 128) x ceil(C.shape[1] / 128), as the manifest says.
        grid = (-(-M // 128), -(-N // 128), 1)
        self.assertEqual(self.last_launch(), record(GEMM + "_sm_90a", grid, 128, 32768, 0x1234,
                                                    [0x10000, M, K, 0x20000, K, N, 0x30000, M, N]))

    def test_tuples_and_scalars(self):
        n, rows = 1024, 130
        self.bundle.launch("scaled_rows", (0x40000, (n,), "f16"), 0.5, rows, stream=0x99)
        grid = (-(-rows // 64), 2, -(-n // 256))
        self.assertEqual(self.last_launch(), record("scaled_rows_sm_90a", grid, 256, 65536, 0x99,
                                                    [0x40000, n, f32_bits(0.5), rows]))
        # An int where the kernel takes f32 is that float.
        self.bundle.launch("scaled_rows", (0x40000, (n,), "f16"), 2, rows)
        self.assertIn("params=%d,%d,%d,%d" % (0x40000, n, f32_bits(2.0), rows), self.last_launch())

    def test_tensor_map_follows_the_extents(self):
        # The runtime encodes the tensor map (the stub's starts with the address).
        self.bundle.launch("tma_rows", (0x50000, (300, 128), "bf16"))
        self.assertEqual(self.last_launch(), record("tma_rows_sm_90a", (5, 1, 1), 128, 16448, 0,
                                                    [0x50000, 300, 128, 0x50000]))

    def test_check_without_a_device(self):
        dims = self.bundle.check(GEMM, FakeTensor(0x10000, (256, 64), "bfloat16"),
                                 FakeTensor(0x20000, (64, 512), "bfloat16"),
                                 FakeTensor(0x30000, (256, 512), "float32"), target="gfx942")
        self.assertEqual((dims.grid, dims.block, dims.shared_bytes), ((2, 4, 1), (256, 1, 1), 0))

    def test_errors(self):
        a = FakeTensor(0x10000, (128, 64), "torch.bfloat16")
        b = FakeTensor(0x20000, (64, 128), "torch.bfloat16")
        c = FakeTensor(0x30000, (128, 128), "torch.float32")
        cases = [
            ((FakeTensor(0x10000, (128, 64), "torch.float16"), b, c), "TILEC_ERROR_DTYPE",
             "argument 0 ('A'): element type f16 given, bf16 expected"),
            ((a, b), "TILEC_ERROR_ARG_COUNT", "2 arguments given, the kernel takes 3"),
            ((FakeTensor(0x10000, (128, 60), "torch.bfloat16"), b, c), "TILEC_ERROR_DIVISIBILITY",
             "innermost extent 60 is not a multiple of 8"),
            ((FakeTensor(0x10002, (128, 64), "torch.bfloat16"), b, c), "TILEC_ERROR_ALIGNMENT",
             "not aligned to 16 bytes"),
            ((FakeTensor(0, (128, 64), "torch.bfloat16"), b, c), "TILEC_ERROR_NULL_POINTER", "null data pointer"),
        ]
        for args, status, message in cases:
            with self.assertRaises(tilec.TilecError) as e:
                self.bundle.launch(GEMM, *args)
            self.assertEqual(e.exception.status, status)
            self.assertIn(message, e.exception.message)
        with self.assertRaises(tilec.TilecError) as e:
            self.bundle.launch("scaled_rows", (0x40000, (256,), "f16"), 1.0, 2.5)
        self.assertEqual(e.exception.status, "TILEC_ERROR_ARG_KIND")
        self.assertIn("argument 2 ('rows') must be an i32 scalar", e.exception.message)
        with self.assertRaises(tilec.TilecError) as e:
            self.bundle.launch("gemm", a, b, c)
        self.assertEqual(e.exception.status, "TILEC_ERROR_UNKNOWN_KERNEL")

    def test_non_contiguous_tensor(self):
        transposed = FakeTensor(0x10000, (128, 64), "torch.bfloat16", strides=(1, 128))
        b = FakeTensor(0x20000, (64, 128), "torch.bfloat16")
        c = FakeTensor(0x30000, (128, 128), "torch.float32")
        with self.assertRaises(ValueError) as e:
            self.bundle.launch(GEMM, transposed, b, c)
        self.assertIn("launch of %s: argument 0 ('A'): the tensor is not row-major contiguous "
                      "(shape (128, 64), strides (1, 128)); pass tensor.contiguous()" % GEMM, str(e.exception))
        with self.assertRaises(TypeError) as e:
            self.bundle.launch(GEMM, "A", b, c)
        self.assertIn("argument 0 ('A'): expected a tensor", str(e.exception))

    def test_missing_bundle(self):
        with self.assertRaises(tilec.TilecError) as e:
            tilec.Bundle("/nonexistent/bundle")
        self.assertEqual(e.exception.status, "TILEC_ERROR_BUNDLE")
        self.assertIn("cannot read /nonexistent/bundle/manifest.json", e.exception.message)


if __name__ == "__main__":
    unittest.main()
