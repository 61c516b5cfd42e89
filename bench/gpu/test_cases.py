"""The harness's cases without a GPU or torch (ctest: bench.gpu_cases).

The verifying launch poisons what the kernels write (outputs, scratch) so
that an element no kernel writes cannot pass; it must leave the inputs as
setup filled them, or the kernels compute on NaN and the case fails whatever
the kernels do. Checked on the harness's own cases (cases.py) and poison().
"""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402


class FakeTensor:
    """What poison() uses of a torch tensor: its kind and fill_."""

    def __init__(self, dtype):
        self.dtype, self.filled = dtype, None

    def is_floating_point(self):
        return self.dtype != "i32"

    def fill_(self, value):
        self.filled = value


def inputs(case):
    """The tensors setup fills and no kernel writes, and the outputs the
    kernels update in place (setup fills them too)."""
    return (set(case.tensors) - set(case.outputs) - set(case.scratch) - set(case.views)) | set(case.in_place)


class PoisonTest(unittest.TestCase):
    def test_every_case_poisons_outputs_and_scratch_only(self):
        every = cases.all_cases()
        self.assertTrue(any(isinstance(c, cases.Moe) for c in every))
        for case in every:
            with self.subTest(family=case.family, shape=case.shape):
                T = {n: FakeTensor(dtype) for n, (_, dtype) in case.tensors.items()}
                cases.poison(case, T)
                for n in inputs(case):
                    self.assertIsNone(T[n].filled, "input %s is poisoned" % n)
                for n in [o for o in case.outputs if o not in case.in_place] + list(case.scratch):
                    if T[n].dtype == "i32":
                        self.assertEqual(T[n].filled, -7, n)
                    else:
                        self.assertTrue(math.isnan(T[n].filled), n)
                # A view is poisoned through its base, which must be poisoned.
                for view, base in case.views.items():
                    self.assertIn(base, cases.poisoned(case), view)

    def test_moe_weights_are_inputs(self):
        # W13 and W2 end in a digit, as the decode partials' views do.
        case = next(c for c in cases.all_cases() if isinstance(c, cases.Moe))
        self.assertLessEqual({"logits", "X", "W13", "W2"}, inputs(case))
        self.assertFalse({"logits", "X", "W13", "W2"} & set(cases.poisoned(case)))

    def test_rope_updates_q_and_k_in_place(self):
        case = next(c for c in cases.all_cases() if isinstance(c, cases.Rope))
        self.assertEqual(set(case.in_place), {"Q", "K"})
        self.assertFalse({"Q", "K", "positions", "cos_sin_cache"} & set(cases.poisoned(case)))

    def test_views_fit_their_base(self):
        for case in cases.all_cases():
            for view, base in case.views.items():
                (rows, *rest), dtype = case.tensors[view]
                (base_rows, *base_rest), base_dtype = case.tensors[base]
                self.assertEqual((rest, dtype), (base_rest, base_dtype), view)
                self.assertLessEqual(rows, base_rows, view)


if __name__ == "__main__":
    unittest.main()
