# distutils: language = c++
"""SELECT (paper 000 Algorithm 3, as corrected by ERRATA item 4).

The negatives whose optimal rank is P+1 form a suffix of the rank order (optimal ranks do not
decrease along it). A binary search over order statistics finds where that suffix starts: each
probe partitions the current window around a pivot (one quickselect step), which gives the
pivot's exact position j, and the pivot's optimal rank tells on which side the boundary lies.
The windows shrink geometrically, so the search costs O(N) expected. Only the negatives above
the boundary are then sorted and solved with SEARCH; the suffix keeps rank P+1 untouched.
"""

from aprank.inference._kernel cimport (
    Key, LossSpec, i64, solve_capsule, sort, opt_rank, partition, set_rank,
)

cdef enum:
    WINDOW_MIN = 16


cdef void solve(const LossSpec* L, const Key* pos, Key* neg, i64 n_neg, i64* ranks) noexcept nogil:
    cdef i64 P = L.P
    cdef i64 lo = 0, hi = n_neg, m, t
    # Invariant: neg[:lo] all rank <= P, neg[hi:] all rank P+1, and the window neg[lo:hi]
    # holds exactly the negatives that fall between them in rank order.
    while hi - lo > WINDOW_MIN:
        m = partition(neg, lo, hi)
        if opt_rank(L, pos, neg[m].s, m + 1, 1, P + 1) == P + 1:
            hi = m
        else:
            lo = m + 1
    sort(neg, neg + hi)
    for t in range(hi):
        set_rank(ranks, P, neg, t, opt_rank(L, pos, neg[t].s, t + 1, 1, P + 1))


SOLVE = solve_capsule(solve)
