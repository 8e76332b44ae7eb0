# distutils: language = c++
"""The c-star top-k kernel (paper 001 section 4): a loop over queries around cstar_solve in
_cstar.hpp, without the GIL."""
from libc.stdint cimport int64_t, uint8_t, int8_t
from libcpp.vector cimport vector

cdef extern from "_cstar.hpp" namespace "aprank" nogil:
    cdef struct CStar:
        int64_t n
        int64_t C
        const int64_t* core
        const double* W
        const double* Fcc
        const uint8_t* in_core
    double cstar_solve(const CStar& S, const double* u, const int8_t* clamp, int64_t k,
                       uint8_t* t, vector[double]& g, vector[int64_t]& pool)


def cstar_queries(const double[::1] u, const int8_t[::1] clamp, const int64_t[::1] k,
                  const int64_t[::1] offsets, const int64_t[::1] core, const double[:, ::1] W,
                  const double[:, ::1] Fcc, const uint8_t[::1] in_core,
                  uint8_t[::1] t, double[::1] value):
    """Solve every query: query q owns items offsets[q]:offsets[q+1] of ``u`` (unary scores)
    and ``clamp``; ``k[q]`` is its subset size. ``core`` (C local indices), ``W`` (C x L,
    F[c, i] + F[i, c]), ``Fcc`` (C x C) and ``in_core`` (L flags) describe the interactions,
    shared by every query; with a core every query has the same L items (without one, sizes
    may differ and ``in_core`` covers the largest). Fills ``t`` (1 = in the subset) and
    ``value[q]`` (-inf when the clamps leave no subset of size k). Inputs are validated by
    aprank.inference.TopKProblem."""
    cdef int64_t n_queries = k.shape[0], q, a
    cdef CStar S
    cdef vector[double] g
    cdef vector[int64_t] pool
    S.C = core.shape[0]
    S.core = &core[0] if S.C > 0 else NULL
    S.W = &W[0, 0] if S.C > 0 else NULL
    S.Fcc = &Fcc[0, 0] if S.C > 0 else NULL
    S.in_core = &in_core[0]
    with nogil:
        for q in range(n_queries):
            a = offsets[q]
            S.n = offsets[q + 1] - a
            value[q] = cstar_solve(S, &u[a], &clamp[a], k[q], &t[a], g, pool)
