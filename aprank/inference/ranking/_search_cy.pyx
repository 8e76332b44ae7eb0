# distutils: language = c++
"""SEARCH (Mohapatra et al. 2014, Algorithm 2, Mohapatra et al. 2018, Algorithm 3): sort the
negatives, then find each optimal rank by binary search where the AP objective is unimodal and a
linear scan elsewhere.

O(N log N + N log P + P^2). Rank P+1 is a candidate (unlike some listings). Each search starts at
the previous negative's rank (the optimal ranks do not decrease along the sorted negatives).
The negatives go in blocks between which the driver's poll is asked for a stop (Ctrl-C): the
P^2 of the scans runs long on large queries.
"""

from aprank.inference._kernel cimport (LossSpec, i64, solve_capsule, sort_keys,
                                       solve_sorted_polled)


cdef void solve(const LossSpec* L, const double* pos, double* neg_s, i64* neg_x, i64 n_neg,
                i64* ranks) noexcept nogil:
    sort_keys(neg_s, neg_x, 0, n_neg, L.simd)
    solve_sorted_polled(L, pos, neg_s, neg_x, 0, n_neg, 1, L.P + 1, ranks)


SOLVE = solve_capsule(solve)
