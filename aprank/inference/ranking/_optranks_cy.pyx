# distutils: language = c++
"""OptRanks: the quicksort-flavoured divide and conquer of Mohapatra et al. (2018) (Algorithms 1-2).

A pivot negative splits the current range of negatives, exactly as in quicksort; its position
j is then known, so its optimal rank opt_j can be found within the rank interval [rl, rh]
inherited from its ancestors. Negatives above the pivot have ranks in [rl, opt_j], those below
in [opt_j, rh] (Observation 4). A range whose interval has shrunk to one rank is finished
without being ordered any further, which is what makes the cost O(N log P) instead of
O(N log N) (Theorem 2). For AP the rank of a pivot is found by binary search where that pays
(section 5); for NDCG by a linear scan of the interval.

Engineering choices that do not change the result: pivots are medians of 3 (or 9) samples
rather than exact medians (as in quicksort, balanced splits are expected, not guaranteed),
except that a range still holding rank P+1 gets a pivot placed where a sample predicts the
P+1 block to start, when that block looks large (last_rank_pivot in _kernel.pxd),
small ranges are sorted and swept, and the larger half of each split is deferred on an
explicit stack so that its depth stays O(log N). A range that has been split more than
2 log2(N) + 8 times (bad pivots) is sorted and swept instead, as introsort does, so the worst
case is O(N log N).
"""
from libc.math cimport log2

from aprank.inference._kernel cimport (
    LossSpec, i64, solve_capsule, sort_keys, opt_rank, partition, partition_at, set_rank,
    solve_sorted, last_rank_pivot, GUIDED_MIN,
)

cdef enum:
    SMALL_RANGE = 24
    STACK_SIZE = 128


cdef void solve(const LossSpec* L, const double* pos, double* neg_s, i64* neg_x, i64 n_neg,
                i64* ranks) noexcept nogil:
    cdef i64 P = L.P
    # Pending ranges of negatives [lo, hi) whose ranks lie in [rl, rh]. The smaller side of each
    # split is processed first, so at most log2(N) ranges are pending at any time.
    cdef i64 lo_s[STACK_SIZE]
    cdef i64 hi_s[STACK_SIZE]
    cdef i64 rl_s[STACK_SIZE]
    cdef i64 rh_s[STACK_SIZE]
    cdef i64 depth_s[STACK_SIZE]
    cdef i64 sp = 1, lo, hi, rl, rh, depth, m, r, t, p
    cdef i64 max_depth = 2 * <i64>log2(<double>n_neg + 1.0) + 8
    lo_s[0] = 0
    hi_s[0] = n_neg
    rl_s[0] = 1
    rh_s[0] = P + 1
    depth_s[0] = 0
    while sp > 0:
        sp -= 1
        lo = lo_s[sp]
        hi = hi_s[sp]
        rl = rl_s[sp]
        rh = rh_s[sp]
        depth = depth_s[sp]
        while hi > lo:
            if rl == rh:
                if rl <= P:
                    for t in range(lo, hi):
                        ranks[neg_x[t]] = rl
                break
            if hi - lo <= SMALL_RANGE or depth > max_depth:
                sort_keys(neg_s, neg_x, lo, hi, L.simd)
                solve_sorted(L, pos, neg_s, neg_x, lo, hi, rl, rh, ranks)
                break
            p = -1
            if rh == P + 1 and hi - lo >= GUIDED_MIN:
                p = last_rank_pivot(L, pos, neg_s, lo, hi, rl)
            if p >= 0:
                m = partition_at(neg_s, neg_x, lo, hi, p, L.simd)
            else:
                m = partition(neg_s, neg_x, lo, hi, L.simd)
            r = opt_rank(L, pos, neg_s[m], m + 1, rl, rh)
            set_rank(ranks, P, neg_x, m, r)
            depth += 1
            if m - lo < hi - m - 1:
                lo_s[sp] = m + 1
                hi_s[sp] = hi
                rl_s[sp] = r
                rh_s[sp] = rh
                hi = m
                rh = r
            else:
                lo_s[sp] = lo
                hi_s[sp] = m
                rl_s[sp] = rl
                rh_s[sp] = r
                lo = m + 1
                rl = r
            depth_s[sp] = depth
            sp += 1


SOLVE = solve_capsule(solve)
#: Its size switch (ranges of at most SMALL_RANGE negatives are sorted and swept), for the
#: ranking kind's deep check.
SWITCHES = {"SMALL_RANGE": SMALL_RANGE}
