# distutils: language = c++
"""Greedy loss-augmented inference: sort the negatives, then scan every rank for each one.

This is Yue et al.'s algorithm for AP (SIGIR 2007; Mohapatra et al. 2014, Algorithm 1) and, with the
NDCG increments, the greedy of Chakrabarti et al. as corrected in Mohapatra et al. (2018), section
2.3 (exact for convex, non-increasing discounts). O(N log N + P N): kept as the published baseline,
so it deliberately does not use the monotonicity of the optimal ranks to shorten its scans.

A call at P = 2e4, N = 2e6 scans for minutes: each negative's scan of P steps is counted in the
driver's poll, which stops the solve on Ctrl-C.
"""

from aprank.inference._interrupt cimport poll_stop
from aprank.inference._kernel cimport LossSpec, i64, solve_capsule, sort_keys, scan_from, set_rank


cdef void solve(const LossSpec* L, const double* pos, double* neg_s, i64* neg_x, i64 n_neg,
                i64* ranks) noexcept nogil:
    cdef i64 t
    sort_keys(neg_s, neg_x, 0, n_neg, L.simd)
    for t in range(n_neg):
        set_rank(ranks, L.P, neg_x, t, scan_from(L, pos, neg_s[t], t + 1, 1, L.P + 1, False))
        if poll_stop(L.poll, L.P + 1):
            return


SOLVE = solve_capsule(solve)
