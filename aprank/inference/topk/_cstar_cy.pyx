# distutils: language = c++
"""The c-star top-k kernel (Mensink et al. 2011, section 4): a loop over queries around cstar_solve
in _cstar.hpp, without the GIL but for a check for Ctrl-C about every 0.1 s of work."""
from libc.stdint cimport int64_t, uint8_t, int8_t
from libcpp cimport bool as cpp_bool
from libcpp.vector cimport vector

cdef extern from "_cstar.hpp" namespace "aprank" nogil:
    cdef struct CStar:
        int64_t n
        int64_t C
        const int64_t* core
        const double* W
        const double* Fcc
        const uint8_t* in_core
    cdef struct Poll:
        cpp_bool (*pending)() noexcept nogil
        int64_t work
        bint stopped
    double cstar_solve(const CStar& S, const double* u, const int8_t* clamp, int64_t k,
                       uint8_t* t, vector[double]& g, vector[int64_t]& pool, Poll* poll)

cdef extern from "Python.h":
    # declared without "except": a KeyboardInterrupt it raises stays set for _propagate
    int PyErr_CheckSignals()


cdef cpp_bool _signal_pending() noexcept nogil:
    """The kernel's poll: reacquire the GIL and run Python's signal handlers (SIGINT's raises
    KeyboardInterrupt). True when one raised: the kernel stops."""
    with gil:
        return PyErr_CheckSignals() != 0


cdef int _propagate() except -1:
    """Hand on the exception that a signal handler set during the kernel's poll."""
    return -1


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
    aprank.inference.TopKProblem. A signal (Ctrl-C) stops it within about 0.1 s with the
    handler's exception (KeyboardInterrupt), ``t`` and ``value`` partly written."""
    cdef int64_t n_queries = k.shape[0], q, a
    cdef CStar S
    cdef vector[double] g
    cdef vector[int64_t] pool
    cdef Poll poll
    poll.pending = _signal_pending
    poll.work = 0
    poll.stopped = False
    S.C = core.shape[0]
    S.core = &core[0] if S.C > 0 else NULL
    S.W = &W[0, 0] if S.C > 0 else NULL
    S.Fcc = &Fcc[0, 0] if S.C > 0 else NULL
    S.in_core = &in_core[0]
    with nogil:
        for q in range(n_queries):
            a = offsets[q]
            S.n = offsets[q + 1] - a
            value[q] = cstar_solve(S, &u[a], &clamp[a], k[q], &t[a], g, pool, &poll)
            if poll.stopped:
                break
    if poll.stopped:
        # t and value are the call's own arrays (TopKCall), dropped with the exception
        _propagate()
