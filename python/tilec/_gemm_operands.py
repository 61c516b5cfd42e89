"""How tilec's GEMM reads an operand that a caller hands over as a strided
view (no PyTorch needed: shapes and strides in elements).

The GEMM reads each operand as rows of a row-major buffer: as written
(layout letter "n") or transposed ("t"), with a leading dimension (the row
pitch, >= the row length) and, for a batch, a batch stride that is a whole
number of rows (``-p layout``, ``lda``..., ``batch_stride_a``...; docs/gemm.md).
A 2-D view whose last stride is 1 is such rows; one whose first stride is 1
is the transpose of such rows, which the kernel reads with the other layout
letter. Anything else (no unit stride, rows that overlap, a batch stride that
is not a multiple of the leading dimension) is refused with a ValueError that
says why: the kernel never reads it wrongly.
"""

from collections import namedtuple

# letter: how the kernel reads the stored rows ("n" or "t"); ld: the row
# pitch; rows: stored rows of one matrix; batch: matrices (1 for a 2-D
# operand); batch_stride: rows from one matrix to the next (0: shared).
Operand = namedtuple("Operand", "letter ld rows batch batch_stride")


def _flip(letter):
    return "t" if letter == "n" else "n"


def gemm_operand(name, shape, strides, letter):
    """The Operand for tensor `name` of `shape` and `strides` (2-D, or 3-D
    with the batch first), meant as stored `letter`: "n" when it is the
    operand as written (A [M, K], B [K, N]), "t" when it is its transpose."""
    shape, strides = tuple(int(d) for d in shape), tuple(int(s) for s in strides)
    if len(shape) not in (2, 3) or len(strides) != len(shape):
        raise ValueError("%s must be 2-D, or 3-D with the batch first, got shape %s" % (name, shape))
    (rows, cols), (row_stride, col_stride) = shape[-2:], strides[-2:]
    # Row-major (as `letter` says) where the columns are contiguous, else
    # column-major, which is the other letter's row-major; a dimension of
    # extent 1 has no stride to honour.
    if cols == 1 or col_stride == 1:
        stored_rows, inner, ld = rows, cols, row_stride if rows > 1 else cols
    elif rows == 1 or row_stride == 1:
        letter, stored_rows, inner, ld = _flip(letter), cols, rows, col_stride if cols > 1 else rows
    else:
        raise ValueError("%s (shape %s, strides %s) has no dimension of stride 1: the GEMM reads rows of "
                         "consecutive elements; pass %s.contiguous()" % (name, shape, strides, name))
    if stored_rows > 1 and ld < inner:
        raise ValueError("%s (shape %s, strides %s): its rows of %d elements are %d apart and overlap; pass "
                         "%s.contiguous()" % (name, shape, strides, inner, ld, name))
    ld = max(ld, inner, 1)
    batch, batch_stride = (shape[0], strides[0]) if len(shape) == 3 else (1, 0)
    if batch <= 1:
        batch_stride = 0
    elif batch_stride % ld != 0:
        raise ValueError("%s (shape %s, strides %s): its batch stride %d is not a multiple of its rows' stride %d, "
                         "which the GEMM's batch needs (whole rows); pass %s.contiguous()"
                         % (name, shape, strides, batch_stride, ld, name))
    else:
        batch_stride //= ld
    return Operand(letter, ld, stored_rows, batch, batch_stride)


def buffer_rows(op, batch):
    """Rows of `op`'s buffer that a batch of `batch` matrices reads."""
    return (batch - 1) * op.batch_stride + op.rows


def strided_divisibility(rows, element_bytes):
    """What the strided GEMM kernel may assume of operands whose rows are
    given as (data pointer, inner extent, leading dimension) triples: the
    largest power of two of elements, up to 16 bytes, dividing every inner
    extent and leading dimension and aligning every pointer (its ``-p
    divisibility``; the launch refuses operands that break it)."""
    d = 1
    while d * element_bytes < 16 and all(inner % (2 * d) == 0 and ld % (2 * d) == 0
                                         and ptr % (2 * d * element_bytes) == 0 for ptr, inner, ld in rows):
        d *= 2
    return d


def aligned_for_contiguous(ptr, inner, element_bytes):
    """Whether data at `ptr` with rows of `inner` elements is aligned as the
    contiguous GEMM kernel for that row length needs: to its vector loads,
    the largest power of two of elements dividing `inner`, up to 16 bytes
    (gemmDivisibility in kernels/gemm/Gemm.cpp; the launch refuses less)."""
    d = 1
    while d * element_bytes < 16 and inner % (2 * d) == 0:
        d *= 2
    return ptr % (d * element_bytes) == 0
