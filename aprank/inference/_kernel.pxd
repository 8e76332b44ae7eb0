# Shared inline pieces of the rank kernels.
#
# Design (read this before changing a kernel):
#   * A query is split into positives and negatives, each held as two parallel arrays of scores
#     and input indices. Positives are sorted once in rank order (descending score, ties by
#     index: the tie rule, see _order.hpp); each algorithm orders the negatives as much as it
#     needs to, with the partition and sort of _order.hpp.
#   * Loss-augmented inference for a QS-suitable loss (Mohapatra et al. 2018, section 4)
#     decomposes over the negatives: the j-th negative in rank order, with score s, gets the
#     interleaving rank
#     opt_j = the largest maximiser over i in 1..P+1 of
#         f_j(i) = sum_{k < i} step(j, k),
#         step(j, k) = f_j(k+1) - f_j(k) = 2 (s+_k - s) / (P N) + delta_j(k+1) - delta_j(k).
#     (Observation 3; docs/references.md, printing errors: coefficients, the AP increment's
#     1/P and the candidate P+1.) Every algorithm below computes exactly these opt_j;
#     they differ only in how they find the j-th negative and how they search over i.
#   * Ranks are written into the caller-visible `ranks` array by input index. The driver fills
#     every negative with P+1 first, so kernels only write ranks <= P.
#   * Everything here is `noexcept nogil` and touches no Python object.
from libc.stdint cimport int64_t
from libc.math cimport log2
from libcpp cimport bool as cbool

from aprank.inference._interrupt cimport Poll, poll_stop

ctypedef int64_t i64

cdef extern from "_order.hpp" namespace "aprank" nogil:
    # simd: the highest partition path allowed (SIMD_PORTABLE, SIMD_AVX2, SIMD_AVX512); a path
    # the CPU lacks falls back to the next lower one.
    int64_t partition(double* s, int64_t* x, int64_t lo, int64_t hi, int simd)
    int64_t partition_at(double* s, int64_t* x, int64_t lo, int64_t hi, int64_t p, int simd)
    void sort_keys(double* s, int64_t* x, int64_t lo, int64_t hi, int simd)
    int cpu_simd_level()
    enum:
        SIMD_PORTABLE
        SIMD_AVX2
        SIMD_AVX512

cdef enum:
    # The losses the kernels compute: the values of aprank.losses.KernelLoss, which the driver
    # maps a loss's KernelSpec code to, refusing any other, so the two-way branches below never
    # see a third loss. check_kernel_losses holds the two to the same values at import.
    LOSS_AP = 0
    LOSS_NDCG = 1
    # Below this many candidate ranks a linear scan is faster than the binary search.
    BINARY_SEARCH_MIN = 16
    # Pivots guided by a sample (last_rank_pivot): only for ranges at least this long, from
    # this many evenly spaced keys, placed this many sample steps past the predicted boundary.
    GUIDED_MIN = 4096
    GUIDE_SAMPLE = 128
    GUIDE_MARGIN = 4
    # scan_from bisects for the first positive below the negative's score over more than
    # this many candidates; fewer are scanned straight.
    SCAN_BISECT_MIN = 32

cdef struct LossSpec:
    int kind
    i64 P
    i64 N
    double score_scale        # 2 / (P N): weight of one inverted (positive, negative) pair
    double inv_norm           # NDCG: 1 / sum_{i <= P} D(i)
    # a power of two <= 1: the scale the driver gave this query's scores (1 unless they come
    # near DBL_MAX; see the driver)
    double loss_weight
    const double* discount    # NDCG: D(m) = discount[m - 1]; NULL means D(m) = 1 / log2(1 + m)
    int simd                  # the highest partition path allowed (SimdLevel in _order.hpp)
    # Ctrl-C: the driver's poll, which kernels whose work can run long (P N steps) count their
    # work in and stop on (NULL: none)
    Poll* poll


cdef inline dict kernel_loss_codes():
    """The LOSS_* codes above by name: the members and values aprank.losses.KernelLoss must
    have."""
    return {"AP": LOSS_AP, "NDCG": LOSS_NDCG}


cdef inline object check_kernel_losses(object kernel_loss):
    """Raise ImportError unless the Python enum ``kernel_loss`` (aprank.losses.KernelLoss) has
    exactly the members and values of the LOSS_* codes: the drivers hand its values to the
    branches of loss_step, which know only these."""
    if {m.name: int(m) for m in kernel_loss} != kernel_loss_codes():
        raise ImportError(f"aprank.losses.KernelLoss {list(kernel_loss)} does not match the "
                          f"kernels' loss codes {kernel_loss_codes()}: rebuild the compiled "
                          f"modules")


cdef inline double discount_at(const LossSpec* L, i64 m) noexcept nogil:
    # the default discount of aprank.losses.NDCG, from the same C log2 (math.log2 there)
    if L.discount != NULL:
        return L.discount[m - 1]
    return 1.0 / log2(1.0 + <double>m)


cdef inline void make_spec(LossSpec* L, int kind, i64 P, i64 N, const double* discount,
                           int simd, Poll* poll) noexcept nogil:
    """A query's LossSpec, loss_weight 1. The NDCG norm sum_{k<=P} D(k) is added in order from
    D(1), as aprank.losses.NDCG's statement adds it."""
    cdef i64 k
    cdef double norm = 0.0
    L.poll = poll
    L.kind = kind
    L.P = P
    L.N = N
    L.score_scale = 2.0 / (<double>P * <double>N)
    L.discount = discount
    L.simd = simd
    L.inv_norm = 0.0
    L.loss_weight = 1.0
    if kind != LOSS_AP:
        for k in range(1, P + 1):
            norm += discount_at(L, k)
        L.inv_norm = 1.0 / norm


cdef inline double loss_step(const LossSpec* L, i64 j, i64 i) noexcept nogil:
    """delta_j(i+1) - delta_j(i): loss change when the j-th negative drops below positive i,
    times loss_weight.

    The step of aprank.losses (``AveragePrecision.increment``, ``NDCG.increment``, the
    statement), operation for operation and in its order, so that both agree to the last bit
    (tests/test_loss_statement.py). The one operation the statement lacks is the multiplication
    by loss_weight, which is 1 outside scaled queries: exact, so the step is the statement's.

    The driver scales a query's scores by loss_weight (a power of two, at least 2^-4) when
    they come near DBL_MAX; multiplying by a power of two rounds nothing, so every step, gain
    and comparison of the search is scaled exactly and the ranks are those of the unscaled
    arithmetic."""
    cdef double a
    if L.kind == LOSS_AP:
        # -(1/P) * i / ((j+i)(j+i-1)): the 1/P factor is missing in print (docs/references.md).
        a = <double>(j + i)
        return -(<double>i * L.loss_weight) / ((<double>L.P) * a * (a - 1.0))
    # Mohapatra et al. (2018), Prop. 7: (D(i+j) - D(i+j-1)) / sum_{k<=P} D(k)
    return (discount_at(L, i + j) - discount_at(L, i + j - 1)) * L.inv_norm * L.loss_weight


cdef inline double step(const LossSpec* L, const double* pos, double s, i64 j,
                        i64 i) noexcept nogil:
    """f_j(i+1) - f_j(i) for a negative with score s at position j (both 1-based); pos holds
    the positives' scores in rank order."""
    return L.score_scale * (pos[i - 1] - s) + loss_step(L, j, i)


cdef inline i64 concave_end(const LossSpec* L, i64 j) noexcept nogil:
    """Largest candidate c such that f_j is concave on 1..c (its steps do not increase).

    AP only. The score part of step(j, i) does not increase with i (positives are sorted) and
    the loss part -(1/P) i/((j+i)(j+i-1)) does not increase while i <= j-1, because
    (i+1)(j+i-1) >= i(j+i+1) iff i <= j-1. So steps 1..min(j, P) are non-increasing and f_j is
    concave on candidates 1..min(j, P)+1: one more candidate than Mohapatra et al. (2018),
    Prop. 5 states (docs/references.md, printing errors); tests/inference/test_oracle.py checks
    the claim against exhaustive search.
    """
    if L.kind == LOSS_AP:
        return (j if j < L.P else L.P) + 1
    return 1


cdef inline i64 scan_from(const LossSpec* L, const double* pos, double s, i64 j,
                          i64 best, i64 hi, bint stop_early) noexcept nogil:
    """Largest maximiser of f_j over best..hi, scanning right from the incumbent `best`.

    The running gain is f_j(i+1) - f_j(best), summed from the incumbent rather than from rank 1,
    so rounding stays relative to the values being compared.

    stop_early: loss steps are <= 0 for AP and NDCG (a negative moving down never raises the
    loss; tests/test_losses.py checks it), so from the first positive scoring strictly below s
    on, every step is negative and no later rank can catch up: the scan ends there. The
    published greedy scans do not use this.
    """
    cdef i64 i, a, b, m
    cdef double gain = 0.0
    if stop_early and hi - best > SCAN_BISECT_MIN:
        # first candidate i in (best, hi] with pos[i - 1] < s (positives are sorted)
        a = best
        b = hi
        while a < b:
            m = a + (b - a) // 2
            if pos[m - 1] < s:
                b = m
            else:
                a = m + 1
        hi = a
    for i in range(best, hi):
        gain += step(L, pos, s, j, i)
        if gain >= 0.0:
            best = i + 1
            gain = 0.0
    return best


cdef inline i64 opt_rank(const LossSpec* L, const double* pos, double s, i64 j,
                         i64 lo, i64 hi) noexcept nogil:
    """opt_j restricted to candidates lo..hi (largest maximiser), for the j-th negative.

    Where f_j is concave (AP, see concave_end) and the range is wide enough to pay, the
    maximiser is the first candidate whose step is negative: a binary search (Mohapatra et al. 2014,
    Algorithm 2; Mohapatra et al. (2018), section 5). Candidates past the concave part are scanned
    linearly.
    """
    cdef i64 c = concave_end(L, j)
    cdef i64 top, a, b, m
    if c - lo < BINARY_SEARCH_MIN:
        return scan_from(L, pos, s, j, lo, hi, True)
    top = hi if hi < c else c
    a = lo
    b = top
    while a < b:
        m = a + (b - a) // 2
        if step(L, pos, s, j, m) >= 0.0:
            a = m + 1
        else:
            b = m
    if top == hi:
        return a
    return scan_from(L, pos, s, j, a, hi, True)


cdef inline i64 last_rank_pivot(const LossSpec* L, const double* pos, const double* neg_s,
                                i64 lo, i64 hi, i64 rl) noexcept nogil:
    """Position in [lo, hi) of a pivot just past where rank P+1 is predicted to start, or -1.

    For a range of negatives whose ranks lie in rl..P+1. Late in training most negatives sit
    below every positive (Mohapatra et al. 2014, Figure 1), so halving a range with median pivots
    would partition that block again and again. Instead, a sorted sample of GUIDE_SAMPLE evenly
    spaced keys, each given the position its sample quantile predicts, locates where rank P+1
    starts (the sampling idea of Floyd & Rivest 1975, applied to SELECT's binary search over order
    statistics); a pivot a little past that point usually has rank P+1, so one partition
    splits off the whole block. -1 (use the median) when the block is predicted to be under a
    quarter of the range. Any pivot gives the same result; this one only saves work.
    """
    cdef double sample_s[GUIDE_SAMPLE]
    cdef i64 sample_at[GUIDE_SAMPLE]
    cdef i64 n = hi - lo, q, a = 0, b = GUIDE_SAMPLE, m
    for q in range(GUIDE_SAMPLE):
        sample_at[q] = lo + (2 * q + 1) * n // (2 * GUIDE_SAMPLE)
        sample_s[q] = neg_s[sample_at[q]]
    # ties among sampled keys are ordered by array position: only an estimate is needed here
    sort_keys(sample_s, sample_at, 0, GUIDE_SAMPLE, SIMD_PORTABLE)
    while a < b:
        m = a + (b - a) // 2
        if opt_rank(L, pos, sample_s[m], lo + 1 + (2 * m + 1) * n // (2 * GUIDE_SAMPLE),
                    rl, L.P + 1) == L.P + 1:
            b = m
        else:
            a = m + 1
    if a > (3 * GUIDE_SAMPLE) // 4:
        return -1
    a += GUIDE_MARGIN
    return sample_at[a if a < GUIDE_SAMPLE else GUIDE_SAMPLE - 1]


cdef inline void set_rank(i64* ranks, i64 P, const i64* neg_x, i64 t, i64 r) noexcept nogil:
    # The driver pre-filled P+1, so that value needs no write.
    if r <= P:
        ranks[neg_x[t]] = r


cdef inline void solve_sorted(const LossSpec* L, const double* pos, const double* neg_s,
                              const i64* neg_x, i64 lo, i64 hi, i64 rl, i64 rh,
                              i64* ranks) noexcept nogil:
    """Ranks of the sorted negatives [lo, hi), known to lie in rl..rh.

    opt_j does not decrease with j (Mohapatra et al. 2018, Observation 4; Mohapatra et al. 2014,
    section 3.2 states it too), so each search starts at the previous negative's rank.
    """
    cdef i64 t
    cdef i64 r = rl
    for t in range(lo, hi):
        r = opt_rank(L, pos, neg_s[t], t + 1, r, rh)
        set_rank(ranks, L.P, neg_x, t, r)


cdef enum:
    # solve_sorted_polled's negatives between two questions to the poll: a block costs at most
    # 256 scans of P steps, short beside the poll's 0.1 s even at tens of thousands of positives.
    POLL_NEGATIVES = 256


cdef inline bint solve_sorted_polled(const LossSpec* L, const double* pos, const double* neg_s,
                                     const i64* neg_x, i64 lo, i64 hi, i64 rl, i64 rh,
                                     i64* ranks) noexcept nogil:
    """solve_sorted over blocks of POLL_NEGATIVES negatives, asking L.poll for a stop (Ctrl-C)
    between blocks: True when stopped (the ranks are then partly written). Each block starts
    at the rank of the block before, which the driver's pre-filled P+1 or set_rank left in
    ``ranks``: the ranks are solve_sorted's."""
    cdef i64 a = lo, b
    while a < hi:
        b = a + POLL_NEGATIVES if hi - a > POLL_NEGATIVES else hi
        solve_sorted(L, pos, neg_s, neg_x, a, b, rl, rh, ranks)
        # counted at its worst, each negative's search a scan of P + 1 candidates
        if poll_stop(L.poll, (b - a) * (L.P + 1)):
            return True
        rl = ranks[neg_x[b - 1]]
        a = b
    return False


# An algorithm: given the positives' scores in rank order and the negatives (scores neg_s,
# input indices neg_x, in any order; the function may reorder them), write the negatives'
# ranks <= P into ranks[input index].
ctypedef void (*solve_fn)(const LossSpec* L, const double* pos, double* neg_s, i64* neg_x,
                          i64 n_neg, i64* ranks) noexcept nogil


# Algorithm modules publish their solve_fn in a capsule; the driver unwraps it.
from cpython.pycapsule cimport PyCapsule_New, PyCapsule_GetPointer, PyCapsule_IsValid


cdef inline object solve_capsule(solve_fn fn):
    return PyCapsule_New(<void*>fn, b"aprank.solve_fn", NULL)


cdef inline solve_fn capsule_solve(object capsule) except NULL:
    if not PyCapsule_IsValid(capsule, b"aprank.solve_fn"):
        raise TypeError("expected the SOLVE capsule of an aprank kernel module")
    return <solve_fn>PyCapsule_GetPointer(capsule, b"aprank.solve_fn")
