# distutils: language = c++
"""Compiled pass of ``aprank.metrics``: every query's value in one loop over the queries.

Vectorised in NumPy, the metrics sort all samples twice (by score, then a radix pass by query)
and make a dozen segment-sum passes over n; over many small queries those passes, not the
arithmetic, are the cost (the figures: docs/benchmarks/inference.md, metrics over many
queries). Here each query is gathered into a small buffer, sorted there (the kernels' own sort:
descending score), and its value computed while the buffer is still in cache.

The arithmetic of each term is the vectorised NumPy pass's (the tests' reference,
tests/metrics_numpy.py), operation for operation; only the order in which a query's terms are
summed may differ (sequential here, pairwise in ``np.add.reduceat``), so values agree to
rounding (the tests hold them to 1e-12).
"""
from libc.stdint cimport int64_t, uint8_t
from libc.math cimport NAN
from libcpp.algorithm cimport sort
from libcpp.functional cimport greater
import numpy as np

ctypedef int64_t i64

cdef extern from "_order.hpp" namespace "aprank" nogil:
    void sort_keys(double* s, int64_t* x, int64_t lo, int64_t hi, int simd)
    int cpu_simd_level()

# The metric and tie codes; metrics.py maps its names to these (TIES_* in TIE_POLICIES' order).
METRIC_AP, METRIC_NDCG, METRIC_PRECISION = 0, 1, 2
TIES_SKLEARN, TIES_EXPECTED, TIES_PESSIMISTIC, TIES_OPTIMISTIC = 0, 1, 2, 3
#: The fastest partition path of the sort this CPU runs (a SimdLevel of _order.hpp). The metrics
#: sit below aprank.inference, so they do not follow its set_simd; the ranking, and so every
#: value, is the same on every path.
SIMD = cpu_simd_level()

cdef enum:
    AP = 0
    NDCG = 1
    PRECISION = 2
    SKLEARN = 0
    EXPECTED = 1
    PESSIMISTIC = 2
    OPTIMISTIC = 3


cdef inline i64 block_end(const double* s, i64 b, i64 m, bint blockwise) noexcept nogil:
    """End of the tie block starting at b: equal scores, or b alone when ties were resolved."""
    cdef i64 e = b + 1
    if blockwise:
        while e < m and s[e] == s[b]:
            e += 1
    return e


cdef double ap_value(const double* s, const double* r, i64 m, int ties) noexcept nogil:
    """AP of one ranked query (r: its 0/1 gains in rank order, at least one relevant)."""
    cdef bint blockwise = ties == SKLEARN or ties == EXPECTED
    cdef i64 b = 0, e, j, mb
    cdef double bs, cum = 0.0, acc = 0.0, others
    while b < m:
        e = block_end(s, b, m, blockwise)
        bs = 0.0
        for j in range(b, e):
            bs += r[j]
        if bs != 0.0:       # a block without relevant samples adds nothing (exact: + 0.0)
            if ties != EXPECTED:
                # one threshold per block; with singleton blocks this is plain AP
                acc += bs * (cum + bs) / <double>e
            else:
                # average_precision's Notes: position j of a block of mb samples, bs relevant,
                # cum relevant before it
                mb = e - b
                for j in range(mb):
                    others = <double>j * (bs - 1.0) / <double>(mb - 1 if mb > 1 else 1)
                    acc += bs / <double>mb * (cum + 1.0 + others) / <double>(b + j + 1)
        cum += bs
        b = e
    # cum is now the query's relevant count (the NumPy pass's "total")
    return acc / cum


cdef double dcg_value(const double* s, const double* r, i64 m, bint blockwise,
                      const double* table) noexcept nogil:
    """DCG of one ranked query with each tie block's gains replaced by their mean (the expected
    gain at each of its positions under a uniformly random order of the block)."""
    cdef i64 b = 0, e, j, _position
    cdef double bs, mean, dcg = 0.0
    while b < m:
        e = block_end(s, b, m, blockwise)
        bs = 0.0
        for j in range(b, e):
            bs += r[j]
        if bs != 0.0:
            mean = bs / <double>(e - b)
            for j in range(b, e):
                dcg += mean * table[j]
        b = e
    return dcg


cdef double ideal_dcg(double* g, i64 m, const double* table, const double* prefix) noexcept nogil:
    """DCG of the query's gains (g, reordered here) in decreasing order."""
    cdef i64 j, ones = 0
    cdef double ideal = 0.0
    for j in range(m):
        if g[j] == 1.0:
            ones += 1
        elif g[j] != 0.0:
            break
    else:
        # binary gains: the sum of the first R discounts, no sort
        return prefix[ones]
    sort(g, g + m, greater[double]())
    for j in range(m):
        ideal += g[j] * table[j]
    return ideal


cdef double precision_value(const double* s, const double* r, i64 m, bint blockwise,
                            i64 k, double k_float) noexcept nogil:
    """Precision at k of one ranked query: each tie block's mean gain at its positions < k
    (k_float: k itself, which may exceed any i64; k: the cutoff within the query)."""
    cdef i64 b = 0, e, j
    cdef double bs, mean, acc = 0.0
    while b < m and b < k:
        e = block_end(s, b, m, blockwise)
        bs = 0.0
        for j in range(b, e):
            bs += r[j]
        mean = bs / <double>(e - b)
        # one addition per position of the block within k, in order (not a product: the bits of
        # the reference's sum)
        for _position in range(b, e if e < k else k):
            acc += mean
        b = e
    return acc / k_float


cdef inline bint _gather_query(const double[::1] score, const double[::1] gain,
                               const i64[::1] order, i64 lo, i64 m, double* s, double* g,
                               i64* x) noexcept nogil:
    """s, g: the scores and gains of the query's m samples from ``lo`` (through ``order``
    where given), x their positions 0 .. m-1; whether a gain is non-zero."""
    cdef i64 j, t
    cdef bint gathered = order is not None, any_gain = False
    for j in range(m):
        t = order[lo + j] if gathered else lo + j
        s[j] = score[t]
        g[j] = gain[t]
        x[j] = j
        any_gain = any_gain | (g[j] != 0.0)
    return any_gain


cdef inline void _rank_gains(double* s, i64* x, const double* g, double* r, i64 m, int ties,
                             bint blockwise, int simd) noexcept nogil:
    """s sorted (x along), r: the gains in rank order; unless ``blockwise``, each tie block's
    gains ordered by the tie policy (ascending: pessimistic, else descending)."""
    cdef i64 j, t
    if m > 1:
        sort_keys(s, x, 0, m, simd)
    for j in range(m):
        r[j] = g[x[j]]
    if not blockwise:
        j = 0
        while j < m:
            t = block_end(s, j, m, True)
            if t - j > 1:
                if ties == PESSIMISTIC:
                    sort(r + j, r + t)
                else:
                    sort(r + j, r + t, greater[double]())
            j = t


cdef inline double _query_value(const double* s, const double* r, double* g, i64 m, int metric,
                                int ties, bint blockwise, const double* table,
                                const double* prefix, i64 k, double k_float) noexcept nogil:
    """The metric's value of one ranked query (g: its gains as gathered, reordered by the
    ideal DCG)."""
    cdef double value
    if metric == AP:
        value = ap_value(s, r, m, ties)
    elif metric == NDCG:
        value = dcg_value(s, r, m, blockwise, table)
        value = value / ideal_dcg(g, m, table, prefix)
    else:
        value = precision_value(s, r, m, blockwise, k, k_float)
    return value


def query_values(const double[::1] score, const double[::1] gain, const i64[::1] order,
                 const i64[::1] offsets, int metric, int ties, const double[::1] table,
                 const double[::1] prefix, i64 k, double k_float, int simd):
    """Each query's metric value (NaN where it has no non-zero gain) and whether it has one.

    Parameters
    ----------
    score, gain : ndarray of float64, shape (n,)
        Finite scores; gains (0/1 for AP and precision; finite, non-negative for NDCG).
    order : ndarray of int64, shape (n,), or None
        Query q owns samples ``order[offsets[q]:offsets[q + 1]]`` (None: the samples
        ``offsets[q]:offsets[q + 1]`` themselves), as ``aprank.validation.as_query_groups``
        gives them; every query non-empty.
    offsets : ndarray of int64, shape (n_queries + 1,)
    metric : int
        METRIC_AP, METRIC_NDCG or METRIC_PRECISION.
    ties : int
        One of the TIES_* codes.
    table : ndarray of float64
        NDCG: the discount at each 0-based rank, zero from k on, covering the longest query
        (unused otherwise).
    prefix : ndarray of float64
        NDCG: ``np.r_[0.0, np.cumsum(table)]`` (unused otherwise).
    k : int
        Precision: the cutoff, >= 1, at most n (a larger one counts the same ranks; unused
        otherwise).
    k_float : float
        Precision: the divisor, the cutoff as given (unused otherwise).
    simd : int
        The partition path of the sort (a SimdLevel of _order.hpp, at most :data:`SIMD`).

    Returns
    -------
    values : ndarray of float64, shape (n_queries,)
    nonempty : ndarray of bool, shape (n_queries,)

    Everything here is validated by aprank.metrics before the call: the kernel runs without
    bounds checks.
    """
    cdef i64 n_queries = offsets.shape[0] - 1, q, lo, m, longest = 0
    cdef bint blockwise = ties == SKLEARN or ties == EXPECTED
    for q in range(n_queries):
        if offsets[q + 1] - offsets[q] > longest:
            longest = offsets[q + 1] - offsets[q]
    values_buf = np.empty(n_queries, dtype=np.float64)
    nonempty_buf = np.empty(n_queries, dtype=np.bool_)
    # per query: its scores (sorted in place), their positions in the query, its gains as
    # gathered and in rank order
    s_buf = np.empty(longest, dtype=np.float64)
    x_buf = np.empty(longest, dtype=np.int64)
    g_buf = np.empty(longest, dtype=np.float64)
    r_buf = np.empty(longest, dtype=np.float64)
    cdef double[::1] values = values_buf, s = s_buf, g = g_buf, r = r_buf
    cdef uint8_t[::1] nonempty = nonempty_buf.view(np.uint8)
    cdef i64[::1] x = x_buf
    with nogil:
        for q in range(n_queries):
            lo = offsets[q]
            m = offsets[q + 1] - lo
            nonempty[q] = _gather_query(score, gain, order, lo, m, &s[0], &g[0], &x[0])
            if not nonempty[q]:
                values[q] = NAN         # metrics.py's empty rule decides
                continue
            _rank_gains(&s[0], &x[0], &g[0], &r[0], m, ties, blockwise, simd)
            values[q] = _query_value(&s[0], &r[0], &g[0], m, metric, ties, blockwise,
                                     &table[0], &prefix[0], k, k_float)
    return values_buf, nonempty_buf
