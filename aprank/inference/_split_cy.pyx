# distutils: language = c++
"""Kernels for one query whose negatives are split across machines (aprank.dask).

Two pieces, both without the GIL:

* ``opt_ranks``: the interleaving rank opt_j of negatives given by their score and their
  position j among all N negatives, with the very `opt_rank` every compiled algorithm uses
  (_kernel.pxd), so a split solve returns what the single-machine kernels return.
* ``count_before``: in an array sorted in rank order (descending score, ties by ascending
  index), how many entries come before each key (or at it): a lexicographic binary search,
  which is how a machine tells the global position of a key from its own sorted negatives.
"""
from aprank.inference._kernel cimport LossSpec, LOSS_AP, LOSS_NDCG, i64, opt_rank, discount_at

KERNEL_LOSSES = {"ap": LOSS_AP, "ndcg": LOSS_NDCG}


def opt_ranks(const double[::1] pos, str loss_code, const double[::1] discount, i64 n_neg,
              const double[::1] s, const i64[::1] j, const i64[::1] lo, const i64[::1] hi,
              i64[::1] out):
    """out[t] = opt_j (largest maximiser, 1 ... P+1) of the j[t]-th negative with score s[t],
    searched over lo[t] ... hi[t]; pos: the P positives' scores in rank order. Inputs are
    validated by aprank.inference.optimal_ranks."""
    if loss_code not in KERNEL_LOSSES:
        raise ValueError(f"the split kernels compute the losses {sorted(KERNEL_LOSSES)}, "
                         f"not {loss_code!r}")
    cdef LossSpec L
    cdef i64 t, k
    cdef double norm = 0.0
    L.kind = KERNEL_LOSSES[loss_code]
    L.P = pos.shape[0]
    L.N = n_neg
    L.score_scale = 2.0 / (<double>L.P * <double>L.N)
    L.discount = &discount[0] if discount is not None else NULL
    L.simd = False
    L.inv_norm = 0.0
    with nogil:
        if L.kind != LOSS_AP:
            for k in range(1, L.P + 1):
                norm += discount_at(&L, k)
            L.inv_norm = 1.0 / norm
        for t in range(s.shape[0]):
            out[t] = opt_rank(&L, &pos[0], s[t], j[t], lo[t], hi[t])


cdef inline bint before(double s, i64 x, double key_s, i64 key_x, bint inclusive) noexcept nogil:
    """(s, x) comes before the key in rank order (or is it, when inclusive)."""
    if s != key_s:
        return s > key_s
    return x <= key_x if inclusive else x < key_x


def count_before(const double[::1] sorted_s, const i64[::1] sorted_x, const double[::1] key_s,
                 const i64[::1] key_x, bint inclusive, i64[::1] out):
    """out[t] = number of entries of (sorted_s, sorted_x), which are in rank order, placed
    before the key (key_s[t], key_x[t]) -- or at it, when inclusive."""
    cdef i64 t, a, b, m
    cdef i64 n = sorted_s.shape[0]
    with nogil:
        for t in range(key_s.shape[0]):
            a = 0
            b = n
            while a < b:
                m = a + (b - a) // 2
                if before(sorted_s[m], sorted_x[m], key_s[t], key_x[t], inclusive):
                    a = m + 1
                else:
                    b = m
            out[t] = a
