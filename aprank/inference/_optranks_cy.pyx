# distutils: language = c++
"""OptRanks: the quicksort-flavoured divide and conquer of paper 004 (Algorithms 1-2).

A pivot negative splits the current range of negatives, exactly as in quicksort; its position
j is then known, so its optimal rank opt_j can be found within the rank interval [rl, rh]
inherited from its ancestors. Negatives above the pivot have ranks in [rl, opt_j], those below
in [opt_j, rh] (Observation 4). A range whose interval has shrunk to one rank is finished
without being ordered any further, which is what makes the cost O(N log P) instead of
O(N log N) (Theorem 2). For AP the rank of a pivot is found by binary search where that pays
(section 5); for NDCG by a linear scan of the interval.

Engineering choices that do not change the result: pivots are medians of 3 (or 9) samples
rather than exact medians, small ranges are sorted and swept, the larger half is deferred
on an explicit stack so its depth stays O(log N), and ranges that recurse too deep fall back to
sorting (introsort style), bounding the worst case by O(N log N).
"""
from libc.math cimport log2

from aprank.inference._kernel cimport (
    Key, LossSpec, i64, solve_capsule, sort, opt_rank, partition, set_rank, solve_sorted,
)

cdef enum:
    SMALL_RANGE = 24
    STACK_SIZE = 128


cdef void solve(const LossSpec* L, const Key* pos, Key* neg, i64 n_neg, i64* ranks) noexcept nogil:
    cdef i64 P = L.P
    cdef i64 lo_s[STACK_SIZE]
    cdef i64 hi_s[STACK_SIZE]
    cdef i64 rl_s[STACK_SIZE]
    cdef i64 rh_s[STACK_SIZE]
    cdef i64 depth_s[STACK_SIZE]
    cdef i64 sp = 0, lo, hi, rl, rh, depth, m, r, t
    cdef i64 depth_limit = 2 * <i64>log2(<double>n_neg + 1.0) + 8
    lo_s[0] = 0; hi_s[0] = n_neg; rl_s[0] = 1; rh_s[0] = P + 1; depth_s[0] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        lo = lo_s[sp]; hi = hi_s[sp]; rl = rl_s[sp]; rh = rh_s[sp]; depth = depth_s[sp]
        while hi > lo:
            if rl == rh:
                if rl <= P:
                    for t in range(lo, hi):
                        ranks[neg[t].i] = rl
                break
            if hi - lo <= SMALL_RANGE or depth > depth_limit:
                sort(neg + lo, neg + hi)
                solve_sorted(L, pos, neg, lo, hi, rl, rh, ranks)
                break
            m = partition(neg, lo, hi)
            r = opt_rank(L, pos, neg[m].s, m + 1, rl, rh)
            set_rank(ranks, P, neg, m, r)
            depth += 1
            # Defer the larger side, continue with the smaller: the stack stays O(log N).
            if m - lo < hi - m - 1:
                lo_s[sp] = m + 1; hi_s[sp] = hi; rl_s[sp] = r; rh_s[sp] = rh
                hi = m
                rh = r
            else:
                lo_s[sp] = lo; hi_s[sp] = m; rl_s[sp] = rl; rh_s[sp] = r
                lo = m + 1
                rl = r
            depth_s[sp] = depth
            sp += 1


SOLVE = solve_capsule(solve)
