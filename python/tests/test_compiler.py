"""tilec.compile and tilec.jit over libtilec_c ($TILEC_COMPILER_LIBRARY), and
what they produce read back through libtilec_rt. No device: launches are
checked (Bundle.check) for the kernel's target. Run by ctest (python.package)."""

import hashlib
import os
import tempfile
import unittest

import tilec
import tilec.compiler


class FakeTensor:
    """A row-major tensor at a made-up address, as Bundle.check reads it."""

    def __init__(self, ptr, shape, dtype):
        self.ptr, self.shape, self.dtype = ptr, tuple(shape), dtype

    def data_ptr(self):
        return self.ptr

    def stride(self):
        strides, expected = [], 1
        for extent in reversed(self.shape):
            strides.insert(0, expected)
            expected *= extent
        return tuple(strides)


def gemm_args(M, N, K):
    return (FakeTensor(0x10000, (M, K), "bf16"), FakeTensor(0x20000, (K, N), "bf16"),
            FakeTensor(0x30000, (M, N), "f32"))


class PackageTest(unittest.TestCase):
    def test_the_installed_copy_is_tested(self):
        expected = os.environ.get("TILEC_EXPECT_PACKAGE_DIR")
        if not expected:
            self.skipTest("run from the source tree: TILEC_EXPECT_PACKAGE_DIR (set by python.package) is not set")
        self.assertEqual(os.path.realpath(os.path.dirname(tilec.__file__)), os.path.realpath(expected))


class CompileTest(unittest.TestCase):
    def test_kernels_lists_the_shipped_ones_with_parameters(self):
        kernels = {k["name"]: k for k in tilec.kernels()}
        self.assertIn("attention", kernels)
        gemm_params = {p["name"]: p["default"] for p in kernels["gemm"]["params"]}
        self.assertEqual(gemm_params["dtype"], "bf16")

    def test_compile_a_shipped_kernel(self):
        k = tilec.compile("gemm", target="gfx942", N=256, K=64, block_m=64, block_n=64)
        self.assertTrue(k.name.startswith("gemm_bf16_f32_64x64x32"), k.name)
        self.assertEqual(k.code_object[:4], b"\x7fELF")
        entry = k.manifest_entry
        self.assertEqual(entry["target"], "gfx942")
        self.assertEqual(entry["kernel"], "gemm")
        self.assertEqual(entry["params"]["block_m"], "64")
        self.assertEqual(entry["sha256"], hashlib.sha256(k.code_object).hexdigest())
        self.assertEqual([a["name"] for a in entry["args"]], ["A", "B", "C"])
        self.assertEqual(k.report["target"], "gfx942")
        self.assertGreater(k.report["vgpr"], 0)
        self.assertIn("tile.", k.tile_ir)

    def test_booleans_are_one_and_zero(self):
        k = tilec.compile("attention", target="gfx942", causal=True, head_dim=64)
        self.assertEqual(k.manifest_entry["params"]["causal"], "1")
        self.assertIn("causal", k.name)

    def test_errors_name_the_problem(self):
        cases = [
            (dict(kernel="gemmm"), "TILEC_COMPILE_ERROR_UNKNOWN_KERNEL", "unknown kernel 'gemmm'"),
            (dict(kernel="gemm", block_q=3), "TILEC_COMPILE_ERROR_PARAM", "unknown parameter 'block_q'"),
            (dict(kernel="gemm", waves=99), "TILEC_COMPILE_ERROR_PARAM", "waves"),
            (dict(kernel="gemm", target="gfx9000"), "TILEC_COMPILE_ERROR_UNKNOWN_TARGET", "gfx9000"),
            (dict(kernel="gemm", jit_compiler="nvcc"), "TILEC_COMPILE_ERROR_INVALID_ARGUMENT", "nvcc"),
        ]
        for kwargs, status, text in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(tilec.CompileError) as cm:
                    tilec.compile(**kwargs)
                self.assertEqual(cm.exception.status, status)
                self.assertIn(text, str(cm.exception))

    def test_tile_ir(self):
        bad = "func.func @bad() attributes {tile.kernel} {\n  tile.frobnicate\n  return\n}\n"
        with self.assertRaises(tilec.CompileError) as cm:
            tilec.compile_tile_ir(bad, name="bad.mlir")
        self.assertEqual(cm.exception.status, "TILEC_COMPILE_ERROR_COMPILE")
        self.assertIn("bad.mlir:2", str(cm.exception))

    def test_add_to_bundle_then_the_runtime_checks_launches(self):
        k = tilec.compile("gemm", target="gfx942", N=256, K=64, block_m=64, block_n=64)
        with tempfile.TemporaryDirectory() as d:
            k.add_to_bundle(d)
            with tilec.Bundle(d) as bundle:
                self.assertEqual(bundle.kernels, [k.name])
                dims = bundle.check(k.name, *gemm_args(256, 256, 64), target="gfx942")
                self.assertEqual(dims.grid[0] * dims.grid[1], 16)  # 256/64 x 256/64 tiles of C
                self.assertEqual(dims.block[0], k.manifest_entry["block_size"])
                with self.assertRaises(tilec.TilecError) as cm:
                    bundle.check(k.name, *gemm_args(256, 256, 63), target="gfx942")
                self.assertEqual(cm.exception.status, "TILEC_ERROR_DIVISIBILITY")

    def test_the_strided_gemm_takes_padded_rows_and_a_batch(self):
        # The kernel tilec.torch launches for views with a leading dimension
        # or a batch: buffers [rows, ld], then M, N, K, batch and the batch
        # strides in rows; grid axis 2 is the batch. divisibility=1 takes any
        # ld and alignment.
        k = tilec.compile("gemm", target="gfx942", strided=1, divisibility=1, layout="nt", out="bf16")
        self.assertTrue(k.name.endswith("_strided_div1x1"), k.name)
        names = [a["name"] for a in k.manifest_entry["args"]]
        self.assertEqual(names, ["A", "B", "C", "M", "N", "K", "batch", "batch_stride_a", "batch_stride_b",
                                 "batch_stride_c"])
        with tempfile.TemporaryDirectory() as d:
            k.add_to_bundle(d)
            with tilec.Bundle(d) as bundle:
                M, N, K, batch = 37, 300, 45, 3  # A rows of 51, B a shared weight rows of 49, C rows of 301
                args = (FakeTensor(0x10002, (2 * 40 + M, 51), "bf16"), FakeTensor(0x20006, (N, 49), "bf16"),
                        FakeTensor(0x30002, (batch * M, 301), "bf16"), M, N, K, batch, 40, 0, M)
                dims = bundle.check(k.name, *args, target="gfx942")
                self.assertEqual(dims.grid, (1, 3, batch))  # ceil(37/128) x ceil(300/128) tiles, per matrix
                with self.assertRaises(tilec.TilecError) as cm:  # a float where it takes the i32 K
                    bundle.check(k.name, *args[:5], 45.0, *args[6:], target="gfx942")
                self.assertEqual(cm.exception.status, "TILEC_ERROR_ARG_KIND")

    def test_the_strided_gemm_for_aligned_rows_checks_the_sizes(self):
        # Rows 4104 elements apart (multiples of 8, 16 bytes): the kernel
        # reads them 16 bytes at a time, and K, the inner extent of A and B
        # (layout nt), is an i32 argument that must be a multiple of 8 too.
        k = tilec.compile("gemm", target="gfx942", lda=4104, ldb=4104, layout="nt", out="bf16")
        self.assertTrue(k.name.endswith("_strided"), k.name)
        args_k = [a for a in k.manifest_entry["args"] if a["name"] == "K"]
        self.assertEqual(args_k, [{"name": "K", "kind": "i32", "divisibility": 8}])
        with tempfile.TemporaryDirectory() as d:
            k.add_to_bundle(d)
            with tilec.Bundle(d) as bundle:
                def args(K, ld=4104, ptr=0x10000):
                    return (FakeTensor(ptr, (64, ld), "bf16"), FakeTensor(0x20000, (64, ld), "bf16"),
                            FakeTensor(0x30000, (64, 64), "bf16"), 64, 64, K, 1, 64, 64, 64)
                bundle.check(k.name, *args(4096), target="gfx942")
                for bad in (args(4095), args(4096, ld=4100), args(4096, ptr=0x10008)):
                    with self.assertRaises(tilec.TilecError) as cm:
                        bundle.check(k.name, *bad, target="gfx942")
                    self.assertIn(cm.exception.status, ("TILEC_ERROR_DIVISIBILITY", "TILEC_ERROR_ALIGNMENT"))


class JitTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        tilec.compiler._JIT_KERNELS.clear()

    def tearDown(self):
        tilec.compiler._JIT_KERNELS.clear()
        self.dir.cleanup()

    def test_compiles_once_then_opens_the_bundle(self):
        k = tilec.jit("gemm", "gfx942", bundle_cache=self.dir.name, N=256, K=64, block_m=64, block_n=64)
        self.assertIs(tilec.jit("gemm", "gfx942", bundle_cache=self.dir.name, N=256, K=64, block_m=64, block_n=64), k)
        self.assertEqual(k.check(*gemm_args(128, 256, 64)).grid[0] * k.check(*gemm_args(128, 256, 64)).grid[1], 8)
        # Another process (here: a cleared table) opens the bundle on disk
        # without compiling.
        tilec.compiler._JIT_KERNELS.clear()
        compile_ = tilec.compiler.compile
        tilec.compiler.compile = lambda *a, **kw: self.fail("compiled again")
        try:
            again = tilec.jit("gemm", "gfx942", bundle_cache=self.dir.name, N=256, K=64, block_m=64, block_n=64)
        finally:
            tilec.compiler.compile = compile_
        self.assertEqual(again.name, k.name)
        self.assertEqual(len(os.listdir(os.path.join(self.dir.name))), 1)
        # Other parameters: another bundle.
        other = tilec.jit("gemm", "gfx942", bundle_cache=self.dir.name, N=256, K=64, block_m=128, block_n=64)
        self.assertNotEqual(other.name, k.name)
        self.assertEqual(len(os.listdir(self.dir.name)), 2)

    def test_a_failed_compile_leaves_no_bundle(self):
        with self.assertRaises(tilec.CompileError):
            tilec.jit("gemm", "gfx942", bundle_cache=self.dir.name, block_m=7)
        self.assertEqual(os.listdir(self.dir.name), [])


if __name__ == "__main__":
    unittest.main()
