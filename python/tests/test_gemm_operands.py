"""How tilec.torch's GEMM reads strided operands (tilec._gemm_operands, no
PyTorch needed): the layout letter, leading dimension and batch stride it
derives from a view's shape and strides, and the views it refuses."""

import unittest

from tilec._gemm_operands import aligned_for_contiguous, buffer_rows, gemm_operand, strided_divisibility


class GemmOperandTest(unittest.TestCase):
    def test_contiguous_rows_keep_their_letter(self):
        self.assertEqual(tuple(gemm_operand("a", (37, 45), (45, 1), "n")), ("n", 45, 37, 1, 0))
        self.assertEqual(tuple(gemm_operand("b", (45, 37), (37, 1), "t")), ("t", 37, 45, 1, 0))

    def test_a_slice_of_a_bigger_matrix_has_a_leading_dimension(self):
        # big[:, 3:48] of a [37, 51] matrix: rows of 45 elements, 51 apart.
        self.assertEqual(tuple(gemm_operand("a", (37, 45), (51, 1), "n")), ("n", 51, 37, 1, 0))

    def test_a_transposed_view_is_read_with_the_other_letter(self):
        # W.t() of an nn.Linear weight W [N=21, K=45]: given as B [K, N] ("n"),
        # stored as W's rows: layout t, 45 elements apart.
        self.assertEqual(tuple(gemm_operand("b", (45, 21), (1, 45), "n")), ("t", 45, 21, 1, 0))
        # and a padded one: W a slice of rows 64 apart.
        self.assertEqual(tuple(gemm_operand("b", (45, 21), (1, 64), "n")), ("t", 64, 21, 1, 0))

    def test_extent_one_dimensions_have_no_stride_to_honour(self):
        self.assertEqual(tuple(gemm_operand("a", (1, 45), (7, 1), "n")), ("n", 45, 1, 1, 0))
        self.assertEqual(tuple(gemm_operand("a", (1, 45), (999, 1), "t")), ("t", 45, 1, 1, 0))
        self.assertEqual(tuple(gemm_operand("a", (37, 1), (3, 5), "n")), ("n", 3, 37, 1, 0))

    def test_batches_in_whole_rows(self):
        # [3, 37, 45] contiguous: 37 rows per matrix.
        self.assertEqual(tuple(gemm_operand("a", (3, 37, 45), (37 * 45, 45, 1), "n")), ("n", 45, 37, 3, 37))
        # a slice of [3, 40, 51]: matrices 40 rows of 51 apart.
        self.assertEqual(tuple(gemm_operand("a", (3, 37, 45), (40 * 51, 51, 1), "n")), ("n", 51, 37, 3, 40))
        # expand(): one matrix for the batch.
        self.assertEqual(tuple(gemm_operand("b", (4, 45, 21), (0, 21, 1), "n")), ("n", 21, 45, 4, 0))
        # a transposed batch (x.transpose(1, 2) of [3, 45, 37]).
        self.assertEqual(tuple(gemm_operand("a", (3, 37, 45), (45 * 37, 1, 37), "n")), ("t", 37, 45, 3, 45))
        self.assertEqual(buffer_rows(gemm_operand("a", (3, 37, 45), (40 * 51, 51, 1), "n"), 3), 2 * 40 + 37)

    def test_views_the_gemm_cannot_read_are_refused(self):
        with self.assertRaisesRegex(ValueError, r"a \(shape \(8, 16\), strides \(32, 2\)\) has no dimension of "
                                                r"stride 1.*a.contiguous\(\)"):
            gemm_operand("a", (8, 16), (32, 2), "n")
        with self.assertRaisesRegex(ValueError, "rows of 16 elements are 8 apart and overlap"):
            gemm_operand("a", (8, 16), (8, 1), "n")
        # x.permute(1, 0, 2) of [16, 3, 8]: matrices 8 elements apart, rows 24.
        with self.assertRaisesRegex(ValueError, "batch stride 8 is not a multiple of its rows' stride 24"):
            gemm_operand("a", (3, 16, 8), (8, 24, 1), "n")
        with self.assertRaisesRegex(ValueError, "must be 2-D, or 3-D"):
            gemm_operand("a", (2, 3, 4, 5), (60, 20, 5, 1), "n")

    def test_alignment_the_contiguous_kernel_needs(self):
        # bf16 rows of 256: 8-element (16-byte) loads, 16-byte aligned data.
        self.assertTrue(aligned_for_contiguous(0x1000, 256, 2))
        self.assertFalse(aligned_for_contiguous(0x1008, 256, 2))
        # rows of 100: 4-element loads, 8 bytes; rows of 45: element-wise.
        self.assertTrue(aligned_for_contiguous(0x1008, 100, 2))
        self.assertFalse(aligned_for_contiguous(0x1004, 100, 2))
        self.assertTrue(aligned_for_contiguous(0x1002, 45, 2))

    def test_divisibility_the_strided_kernel_is_compiled_for(self):
        # bf16: at most 8 elements (16 bytes), the least over every operand.
        self.assertEqual(strided_divisibility([(0x1000, 4096, 4104), (0x2000, 256, 256)], 2), 8)
        self.assertEqual(strided_divisibility([(0x1000, 4096, 4100), (0x2000, 256, 256)], 2), 4)
        self.assertEqual(strided_divisibility([(0x1000, 72, 88), (0x2004, 256, 256)], 2), 2)  # 4-byte aligned
        self.assertEqual(strided_divisibility([(0x1000, 45, 88)], 2), 1)  # an odd inner extent
        # fp8: up to 16 elements.
        self.assertEqual(strided_divisibility([(0x1000, 4096, 4096)], 1), 16)


if __name__ == "__main__":
    unittest.main()
