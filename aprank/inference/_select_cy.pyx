# distutils: language = c++
"""SELECT (paper 000 Algorithm 3, as corrected by ERRATA item 4).

The negatives whose optimal rank is P+1 form a suffix of the rank order (optimal ranks do not
decrease along it). A binary search over order statistics finds where that suffix starts: each
probe partitions the current window around a pivot (one quickselect step), which gives the
pivot's exact position j, and the pivot's optimal rank tells on which side the boundary lies.
The windows shrink geometrically, so the search costs O(N) expected. Only the negatives above
the boundary are then sorted and solved with SEARCH (each search starting at the previous
negative's rank); the suffix keeps rank P+1 untouched.
"""

from aprank.inference._kernel cimport (
    LossSpec, i64, solve_capsule, sort_keys, opt_rank, partition, solve_sorted,
)

cdef enum:
    WINDOW_MIN = 16


cdef void solve(const LossSpec* L, const double* pos, double* neg_s, i64* neg_x, i64 n_neg,
                i64* ranks) noexcept nogil:
    cdef i64 P = L.P
    cdef i64 lo = 0, hi = n_neg, m
    # Invariant: negatives [0, lo) have rank <= P, [hi, n_neg) rank P+1, and the window
    # [lo, hi) holds exactly the negatives that fall between them in rank order.
    while hi - lo > WINDOW_MIN:
        m = partition(neg_s, neg_x, lo, hi, L.simd)
        if opt_rank(L, pos, neg_s[m], m + 1, 1, P + 1) == P + 1:
            hi = m
        else:
            lo = m + 1
    sort_keys(neg_s, neg_x, 0, hi, L.simd)
    solve_sorted(L, pos, neg_s, neg_x, 0, hi, 1, P + 1, ranks)


SOLVE = solve_capsule(solve)
