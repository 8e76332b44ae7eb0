# distutils: language = c++
"""SELECT (Mohapatra et al. 2014, Algorithm 3, its two sets the other way
round from the print, as docs/references.md explains).

The negatives whose optimal rank is P+1 form a suffix of the rank order (optimal ranks do not
decrease along it). A binary search over order statistics finds where that suffix starts: each
probe partitions the current window around a pivot (one quickselect step), which gives the
pivot's exact position j, and the pivot's optimal rank tells on which side the boundary lies.
Pivots are placed where a small sorted sample predicts the boundary (see last_rank_pivot in
_kernel.pxd), falling back to medians, so the windows shrink fast and the search costs O(N)
expected, typically little more than one pass. Only the negatives above
the boundary are then sorted and solved with SEARCH (each search starting at the previous
negative's rank), in blocks between which the driver's poll is asked for a stop (Ctrl-C); the
suffix keeps rank P+1 untouched.
"""

from aprank.inference._kernel cimport (
    LossSpec, i64, solve_capsule, sort_keys, opt_rank, partition, partition_at,
    solve_sorted_polled,
    last_rank_pivot, GUIDED_MIN,
)

cdef enum:
    WINDOW_MIN = 16


cdef void solve(const LossSpec* L, const double* pos, double* neg_s, i64* neg_x, i64 n_neg,
                i64* ranks) noexcept nogil:
    cdef i64 P = L.P
    cdef i64 lo = 0, hi = n_neg, m, p
    # Invariant: negatives [0, lo) have rank <= P, [hi, n_neg) rank P+1, and the window
    # [lo, hi) holds exactly the negatives that fall between them in rank order.
    while hi - lo > WINDOW_MIN:
        p = last_rank_pivot(L, pos, neg_s, lo, hi, 1) if hi - lo >= GUIDED_MIN else -1
        if p >= 0:
            m = partition_at(neg_s, neg_x, lo, hi, p, L.simd)
        else:
            m = partition(neg_s, neg_x, lo, hi, L.simd)
        if opt_rank(L, pos, neg_s[m], m + 1, 1, P + 1) == P + 1:
            hi = m
        else:
            lo = m + 1
    sort_keys(neg_s, neg_x, 0, hi, L.simd)
    solve_sorted_polled(L, pos, neg_s, neg_x, 0, hi, 1, P + 1, ranks)


SOLVE = solve_capsule(solve)
#: Its size switch (a window of at most WINDOW_MIN negatives is sorted and swept), for the
#: ranking kind's deep check.
SWITCHES = {"WINDOW_MIN": WINDOW_MIN}
