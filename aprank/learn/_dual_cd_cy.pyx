# cython: language_level=3
"""Epochs of dual coordinate descent over a sum of hinges (``_dual_cd.py`` checks every array
and builds the unit list; nothing here allocates or touches Python objects in the loop).

The dual of 1/2 ||w||^2 + sum_i u_i max(0, 1 - s_i x_i'w) is
max_alpha sum_i alpha_i - 1/2 ||w(alpha)||^2, 0 <= alpha_i <= u_i, w(alpha) = sum_i alpha_i s_i x_i.
One coordinate step is exact (Hsieh, Chang, Lin, Keerthi & Sundararajan, ICML 2008, the
algorithm of liblinear's L1-loss SVM): alpha_i <- clip(alpha_i - G_i / ||x_i||^2, 0, u_i) with
G_i = s_i x_i'w - 1, and w moves with it. Shrinking (their section 3.2) drops a unit whose
multiplier sits at a bound with its gradient pointing out of the box beyond the last epoch's
extremes; when the projected gradients of the units left span at most ``eps``, every unit comes
back for one more epoch, and the call ends when that epoch also spans at most ``eps``.
"""
from libc.stdint cimport int64_t, uint64_t

from aprank.inference._interrupt cimport check_signals, first_check


cdef struct Rows:
    # X as raw pointers: dense (row-major n x d) or CSR with 64-bit indices
    bint sparse
    const double* dense
    Py_ssize_t d
    const double* data
    const int64_t* indices
    const int64_t* indptr


cdef inline double _dot(const Rows* X, Py_ssize_t i, const double* w) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t k
    cdef const double* row
    if X.sparse:
        for k in range(X.indptr[i], X.indptr[i + 1]):
            s += X.data[k] * w[X.indices[k]]
    else:
        row = X.dense + i * X.d
        for k in range(X.d):
            s += row[k] * w[k]
    return s


cdef inline double _length(const Rows* X, Py_ssize_t i) noexcept nogil:
    """The multiply-adds of a product with row i."""
    if X.sparse:
        return <double>(X.indptr[i + 1] - X.indptr[i])
    return <double>X.d


cdef inline void _axpy(const Rows* X, Py_ssize_t i, double c, double* w) noexcept nogil:
    cdef Py_ssize_t k
    cdef const double* row
    if X.sparse:
        for k in range(X.indptr[i], X.indptr[i + 1]):
            w[X.indices[k]] += c * X.data[k]
    else:
        row = X.dense + i * X.d
        for k in range(X.d):
            w[k] += c * row[k]


cdef inline uint64_t _next(uint64_t* state) noexcept nogil:
    """xorshift64*: a fixed, seeded order of the units in every epoch (reproducible fits)."""
    cdef uint64_t x = state[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    state[0] = x
    return x * <uint64_t>2685821657736338717


cdef int _epochs(const Rows* X, const double* sign, const double* bound, const double* sqnorm,
                 double* alpha, double* w, Py_ssize_t* units, Py_ssize_t n_units,
                 Py_ssize_t max_epochs, double eps, uint64_t* rng, Py_ssize_t* epochs_run,
                 double* spread, Py_ssize_t* visits, double* work) except -1 nogil:
    cdef double next_check = first_check()
    cdef Py_ssize_t active = n_units, epoch = 0, t, j, i, tmp
    cdef double G, PG, old, upper
    cdef double pg_max_old = 1e300, pg_min_old = -1e300, pg_max, pg_min
    spread[0] = 1e300
    while epoch < max_epochs:
        epoch += 1
        for t in range(active - 1, 0, -1):          # Fisher-Yates over the active units
            j = <Py_ssize_t>(_next(rng) % <uint64_t>(t + 1))
            tmp = units[t]
            units[t] = units[j]
            units[j] = tmp
        pg_max = -1e300
        pg_min = 1e300
        visits[0] += active
        t = 0
        while t < active:
            if (t & 4095) == 4095:
                # an epoch over a million dense rows takes seconds
                check_signals(&next_check)
            i = units[t]
            work[0] += _length(X, i)
            G = sign[i] * _dot(X, i, w) - 1.0
            upper = bound[i]
            PG = 0.0
            if alpha[i] == 0.0:
                if G > pg_max_old:
                    active -= 1                     # shrunk: swap it past the active end
                    units[t] = units[active]
                    units[active] = i
                    continue
                if G < 0.0:
                    PG = G
            elif alpha[i] == upper:
                if G < pg_min_old:
                    active -= 1
                    units[t] = units[active]
                    units[active] = i
                    continue
                if G > 0.0:
                    PG = G
            else:
                PG = G
            if PG > pg_max:
                pg_max = PG
            if PG < pg_min:
                pg_min = PG
            if PG != 0.0:
                old = alpha[i]
                alpha[i] = min(max(old - G / sqnorm[i], 0.0), upper)
                _axpy(X, i, (alpha[i] - old) * sign[i], w)
            t += 1
        check_signals(&next_check)
        spread[0] = pg_max - pg_min
        if spread[0] <= eps:
            if active == n_units:
                break
            active = n_units                        # unshrink all for a full epoch
            pg_max_old = 1e300
            pg_min_old = -1e300
            continue
        pg_max_old = pg_max if pg_max > 0.0 else 1e300
        pg_min_old = pg_min if pg_min < 0.0 else -1e300
    epochs_run[0] = epoch
    return 0


def epochs(const double[:, ::1] dense, const double[::1] data, const int64_t[::1] indices,
           const int64_t[::1] indptr, bint sparse, Py_ssize_t d, const double[::1] sign,
           const double[::1] bound, const double[::1] sqnorm, double[::1] alpha, double[::1] w,
           Py_ssize_t[::1] units, Py_ssize_t max_epochs, double eps, uint64_t seed):
    """Run up to ``max_epochs`` epochs over ``units`` (alpha and w updated in place, units
    permuted); return (epochs run, the last epoch's projected-gradient spread, the units
    visited, the multiply-adds of their row products): the epochs' work."""
    cdef Rows X
    cdef uint64_t rng = seed * <uint64_t>0x9E3779B97F4A7C15 + 1
    cdef Py_ssize_t run = 0, visits = 0
    cdef double spread = 0.0, work = 0.0
    X.sparse = sparse
    X.d = d
    X.dense = &dense[0, 0] if not sparse else NULL
    X.data = &data[0] if sparse and data.shape[0] else NULL
    X.indices = &indices[0] if sparse and indices.shape[0] else NULL
    X.indptr = &indptr[0] if sparse else NULL
    if units.shape[0] == 0:
        return 0, 0.0, 0, 0.0
    with nogil:
        _epochs(&X, &sign[0], &bound[0], &sqnorm[0], &alpha[0], &w[0], &units[0],
                units.shape[0], max_epochs, eps, &rng, &run, &spread, &visits, &work)
    return run, spread, visits, work
