# cython: language_level=3
"""The primal active-set method of ``_qp.active_set`` for the steps where the reduced Hessian
is positive definite: the working-set QPs are tiny (tens of free variables), so NumPy's call
overhead, not arithmetic, would set their cost.

Arrays are checked and built by ``_qp.active_set`` (the augmented problem with the slack of the
sum); x and free are updated in place.
"""
from libc.math cimport fabs, sqrt, isfinite, INFINITY

import numpy as np

cdef enum:
    OPTIMAL = 0
    SINGULAR = 1      # a step needs the eigen-decomposition: NumPy carries on from x
    LIMIT = 2
    FAILED = 3


cdef int _cholesky(double[:, ::1] A, Py_ssize_t m, double pivot_floor) noexcept nogil:
    """In-place lower Cholesky of A[:m, :m]; 1 where a pivot^2 is below pivot_floor."""
    cdef Py_ssize_t i, j, k
    cdef double s, s2
    for j in range(m):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if not (s > pivot_floor):
            return 1
        s = sqrt(s)
        A[j, j] = s
        for i in range(j + 1, m):
            s2 = A[i, j]
            for k in range(j):
                s2 -= A[i, k] * A[j, k]
            A[i, j] = s2 / s
    return 0


cdef void _cho_solve(double[:, ::1] L, double[::1] y, Py_ssize_t m) noexcept nogil:
    """y <- (L L')^-1 y on the first m entries."""
    cdef Py_ssize_t i, k
    cdef double s
    for i in range(m):
        s = y[i]
        for k in range(i):
            s -= L[i, k] * y[k]
        y[i] = s / L[i, i]
    for i in range(m - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, m):
            s -= L[k, i] * y[k]
        y[i] = s / L[i, i]


def run(double[:, ::1] K, double[::1] b, const unsigned char[::1] group,
        double[::1] x, unsigned char[::1] free, double kkt_tol, Py_ssize_t max_steps):
    """(status, steps): the active-set loop from x (feasible) with free set ``free``. A start
    whose gradient is already stationary on the free set (equal over the group's free members,
    0 over the others) takes no first step."""
    cdef Py_ssize_t n = b.shape[0]
    cdef double[::1] grad = np.empty(n)
    cdef double[::1] p = np.zeros(n)
    cdef double[::1] y = np.empty(n)
    cdef double[:, ::1] H = np.empty((max(n, 1), max(n, 1)))
    cdef Py_ssize_t[::1] F = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] R = np.empty(n, dtype=np.intp)     # reduced coordinates: free but j0
    cdef Py_ssize_t steps, i, j, a, c, m, mr, j0, block
    cdef double s, nu, alpha, ratio, e_a, e_c, best, hmax, cnt
    cdef bint at_minimum = False
    cdef double lo, hi
    cdef int status = LIMIT
    with nogil:
        for steps in range(1, max_steps + 1):
            # the gradient Kx - b in full once; then, where x moves by alpha p (p 0 off the free
            # set), by alpha K p over the free columns only
            if steps == 1:
                for i in range(n):
                    s = -b[i]
                    for j in range(n):
                        s += K[i, j] * x[j]
                    if not isfinite(s):
                        status = FAILED
                        break
                    grad[i] = s
                if status == FAILED:
                    break
            if steps == 1:
                lo, hi, s = INFINITY, -INFINITY, 0.0
                for i in range(n):
                    if free[i]:
                        if group[i]:
                            lo = grad[i] if grad[i] < lo else lo
                            hi = grad[i] if grad[i] > hi else hi
                        elif fabs(grad[i]) > s:
                            s = fabs(grad[i])
                at_minimum = s <= kkt_tol and (hi < lo or hi - lo <= kkt_tol)
            m = 0
            j0 = -1
            for i in range(n):
                if free[i]:
                    F[m] = i
                    m += 1
                    if group[i] and j0 < 0:
                        j0 = i
            if at_minimum:
                # multipliers of the bounds x_i = 0: mu_i = grad_i + nu [i in group]
                nu = 0.0
                if j0 >= 0:
                    cnt = 0.0
                    for a in range(m):
                        if group[F[a]]:
                            nu -= grad[F[a]]
                            cnt += 1.0
                    nu /= cnt
                best = -kkt_tol
                block = -1
                for i in range(n):
                    if not free[i]:
                        s = grad[i] + (nu if group[i] else 0.0)
                        if s < best:
                            best = s
                            block = i
                if block < 0:
                    status = OPTIMAL
                    break
                free[block] = 1
                at_minimum = False
                continue
            # the reduced problem over R = F without j0 (p_j0 = -sum of the group's p)
            mr = 0
            for a in range(m):
                if F[a] != j0:
                    R[mr] = F[a]
                    mr += 1
            hmax = 0.0
            for a in range(mr):
                i = R[a]
                e_a = 1.0 if (j0 >= 0 and group[i]) else 0.0
                y[a] = -(grad[i] - (grad[j0] * e_a if j0 >= 0 else 0.0))
                for c in range(a + 1):
                    j = R[c]
                    s = K[i, j]
                    if j0 >= 0:
                        e_c = 1.0 if group[j] else 0.0
                        s = s - e_a * K[j0, j] - e_c * K[i, j0] + e_a * e_c * K[j0, j0]
                    H[a, c] = s
                if H[a, a] > hmax:
                    hmax = H[a, a]
            if mr > 0:
                if _cholesky(H, mr, 1e-10 * (hmax if hmax > 1e-300 else 1e-300)):
                    status = SINGULAR
                    break
                _cho_solve(H, y, mr)
            # lift to p on F, then the longest step keeping x >= 0, at most 1
            for i in range(n):
                p[i] = 0.0
            s = 0.0
            for a in range(mr):
                p[R[a]] = y[a]
                if j0 >= 0 and group[R[a]]:
                    s += y[a]
            if j0 >= 0:
                p[j0] = -s
            alpha = 1.0
            block = -1
            for a in range(m):
                i = F[a]
                if p[i] < 0.0:
                    ratio = -x[i] / p[i]
                    if ratio < alpha:
                        alpha = ratio
                        block = i
            for a in range(m):
                i = F[a]
                x[i] = x[i] + alpha * p[i]
                if x[i] < 0.0:
                    x[i] = 0.0
            if alpha > 0.0:
                for i in range(n):
                    s = 0.0
                    for a in range(m):
                        s += K[i, F[a]] * p[F[a]]
                    grad[i] += alpha * s
            if block >= 0:
                x[block] = 0.0
                free[block] = 0
            else:
                at_minimum = True
    return status, steps
