# cython: language_level=3
"""Per-block sums of scaled rows of a CSR matrix: G[block[i]] += coef[i] * X[i] over the given
rows, one pass over their stored entries (``_ranking.py`` checks every array: the rows and
their blocks in range, the output zeroed and wide enough; nothing here allocates).

The multi-cut model splits a cut g = X'c into the sums of its blocks' rows. A sparse product
of a block-by-sample matrix with X computes the same, but builds a sparse result twice over;
copies of each block's rows would need a second X in memory. Ctrl-C is asked for every 4096
rows."""
from libc.stdint cimport int32_t, int64_t

from aprank.inference._interrupt cimport check_signals, first_check

ctypedef fused index_t:
    int32_t
    int64_t


def block_row_sums(const double[::1] data, const index_t[::1] indices,
                   const index_t[::1] indptr, const int64_t[::1] rows,
                   const int64_t[::1] block, const double[::1] coef, double[:, ::1] out):
    """out[block[i], :] += coef[i] * X[i, :] for every i in ``rows`` (X as CSR arrays)."""
    cdef Py_ssize_t r, i, b, k
    cdef double c
    cdef double next_check = first_check()
    with nogil:
        for r in range(rows.shape[0]):
            if (r & 4095) == 4095:
                check_signals(&next_check)
            i = rows[r]
            b = block[i]
            c = coef[i]
            for k in range(indptr[i], indptr[i + 1]):
                out[b, indices[k]] += c * data[k]


def block_dense_sums(const double[:, ::1] X, const int64_t[::1] rows,
                     const int64_t[::1] block, const double[::1] coef, double[:, ::1] out):
    """out[block[i], :] += coef[i] * X[i, :] for every i in ``rows``, in their order (X dense,
    C-contiguous). Each output row receives its rows' terms in the order a CSR
    block-by-sample matrix with those rows as ascending columns times X adds them (one
    multiply and one add per entry, from zero), so the sums are that product's bit for bit,
    without building the sparse matrix at every cut."""
    cdef Py_ssize_t r, i, b, k, d = X.shape[1]
    cdef double c
    cdef double next_check = first_check()
    with nogil:
        for r in range(rows.shape[0]):
            if (r & 4095) == 4095:
                check_signals(&next_check)
            i = rows[r]
            b = block[i]
            c = coef[i]
            for k in range(d):
                out[b, k] += c * X[i, k]
