# distutils: language = c++
"""Kernels for one query whose negatives are split across machines (aprank.dask).

Two pieces, both without the GIL:

* ``opt_ranks``: the interleaving rank opt_j of negatives given by their score and their
  position j among all N negatives, with the very `opt_rank` every compiled algorithm uses
  (_kernel.pxd), so a split solve returns what the single-machine kernels return.
* ``split_buckets``: a machine keeps its negatives in buckets, one per range between two
  anchors (negatives of known global position), unordered inside; a round splits the open
  buckets at the new pivots with a counting sort, and tells how many negatives of each bucket
  come at or before each pivot. Nothing is ever sorted whole, as in OptRanks.
"""
from aprank.inference._kernel cimport (LossSpec, SIMD_PORTABLE, check_kernel_losses, i64,
                                       make_spec, opt_rank)
from aprank.losses import KernelLoss

check_kernel_losses(KernelLoss)


def opt_ranks(const double[::1] pos, object loss_code, const double[::1] discount, i64 n_neg,
              const double[::1] s, const i64[::1] j, const i64[::1] lo, const i64[::1] hi,
              i64[::1] out):
    """out[t] = opt_j (largest maximiser, 1 ... P+1) of the j[t]-th negative with score s[t],
    searched over lo[t] ... hi[t]; pos: the P positives' scores in rank order; loss_code, discount:
    the loss's KernelSpec. Inputs are validated by aprank.dask._steps.optimal_ranks."""
    kernel_loss = KernelLoss.of(loss_code, "the split kernels compute")
    cdef LossSpec L
    cdef i64 t
    cdef int kind = kernel_loss
    cdef const double* discount_p = &discount[0] if discount is not None else NULL
    with nogil:
        # loss_weight 1: optimal_ranks refuses scores that would need scaling; no poll:
        # opt_rank never polls, each negative's search is short
        make_spec(&L, kind, pos.shape[0], n_neg, discount_p, SIMD_PORTABLE, NULL)
        for t in range(s.shape[0]):
            out[t] = opt_rank(&L, &pos[0], s[t], j[t], lo[t], hi[t])


cdef inline bint before(double s, i64 x, double key_s, i64 key_x) noexcept nogil:
    """(s, x) comes strictly before the key in rank order."""
    if s != key_s:
        return s > key_s
    return x < key_x


def split_buckets(const double[::1] src_s, const i64[::1] src_x, const i64[::1] src_local,
                  double[::1] s, i64[::1] x, i64[::1] local, const i64[::1] bounds,
                  const i64[::1] buckets, const double[::1] hi_s, const i64[::1] hi_x,
                  const i64[::1] cand_ptr, const double[::1] cand_s, const i64[::1] cand_x,
                  i64[::1] at_or_before, i64[::1] category, i64[::1] count):
    """Split buckets of negatives at candidate keys, by a counting sort per bucket.

    Bucket k holds, unordered, the negatives of keys in (anchor k, anchor k+1], the one equal
    to anchor k+1 (if it is here) last. Bucket buckets[g] (ascending) is split at the keys
    cand[cand_ptr[g]:cand_ptr[g+1]] (in rank order, strictly inside the bucket's range; its
    right anchor is (hi_s[g], hi_x[g])) into sub-buckets of the same form: (src_*) is read,
    (s, x, local) -- copies of it -- are rewritten in the split buckets only.
    at_or_before[c]: negatives of the bucket at or before candidate c. category and count are
    scratch of at least the largest bucket's size and 2 q + 2 entries.
    """
    cdef i64 g, k, a, b, t, q, c0, lo, hi, m, i, total, pos
    with nogil:
        for g in range(buckets.shape[0]):
            k = buckets[g]
            a = bounds[k]
            b = bounds[k + 1]
            c0 = cand_ptr[g]
            q = cand_ptr[g + 1] - c0
            for i in range(2 * q + 2):
                count[i] = 0
            # category 2i: after i candidates; 2i+1: equal to candidate i+1 (or, for i = q, to
            # the right anchor), which goes last in its sub-bucket
            for t in range(a, b):
                lo = 0
                hi = q
                while lo < hi:
                    m = lo + (hi - lo) // 2
                    if before(cand_s[c0 + m], cand_x[c0 + m], src_s[t], src_x[t]):
                        lo = m + 1
                    else:
                        hi = m
                if lo < q:
                    i = 2 * lo + (cand_s[c0 + lo] == src_s[t] and cand_x[c0 + lo] == src_x[t])
                else:
                    i = 2 * q + (hi_s[g] == src_s[t] and hi_x[g] == src_x[t])
                category[t - a] = i
                count[i] += 1
            total = a
            for i in range(2 * q + 2):
                if i % 2 == 1 and i < 2 * q:
                    at_or_before[c0 + i // 2] = total + count[i] - a
                pos = total
                total += count[i]
                count[i] = pos
            for t in range(a, b):
                i = category[t - a]
                pos = count[i]
                count[i] += 1
                s[pos] = src_s[t]
                x[pos] = src_x[t]
                local[pos] = src_local[t]
