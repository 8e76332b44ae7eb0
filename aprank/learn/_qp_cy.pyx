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


cdef inline double _h(double[:, ::1] K, const unsigned char[::1] group, Py_ssize_t j0,
                      Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    """Entry (i, j) of the Hessian in the basis where p_j0 = -sum of the group's other p."""
    cdef double s = K[i, j]
    cdef double ei, ej
    if j0 >= 0:
        ei = 1.0 if group[i] else 0.0
        ej = 1.0 if group[j] else 0.0
        s = s - ei * K[j0, j] - ej * K[i, j0] + ei * ej * K[j0, j0]
    return s


cdef void _delete(double[:, ::1] L, Py_ssize_t q, Py_ssize_t mr) noexcept nogil:
    """The Cholesky factor of H without its row and column q: the rows below q move up, and
    Givens rotations of columns (t, t+1) clear the entry each moved row has right of its
    diagonal (keeping the diagonal positive)."""
    cdef Py_ssize_t t, u
    cdef double a, bb, r, c, s, xv, yv
    for t in range(q, mr - 1):
        for u in range(t + 2):
            L[t, u] = L[t + 1, u]
    for t in range(q, mr - 1):
        a = L[t, t]
        bb = L[t, t + 1]
        r = sqrt(a * a + bb * bb)
        c = a / r
        s = bb / r
        for u in range(t, mr - 1):
            xv = L[u, t]
            yv = L[u, t + 1]
            L[u, t] = c * xv + s * yv
            L[u, t + 1] = -s * xv + c * yv
        L[t, t + 1] = 0.0


def run(double[:, ::1] K, double[::1] b, const unsigned char[::1] group,
        double[::1] x, unsigned char[::1] free, double kkt_tol, Py_ssize_t max_steps):
    """(status, steps): the active-set loop from x (feasible) with free set ``free``.

    The reduced Hessian's Cholesky factor is kept from step to step: a released variable
    appends a row (O(m^2)), a blocked one is deleted by Givens rotations (O(m^2)); only when
    the eliminated group member j0 leaves the free set is it factored anew. A start whose
    gradient is already stationary on the free set (equal over the group's free members, 0
    over the others) takes no first step. The caller verifies the optimum it returns."""
    cdef Py_ssize_t n = b.shape[0]
    cdef double[::1] grad = np.empty(n)
    cdef double[::1] p = np.zeros(n)
    cdef double[::1] y = np.empty(n)
    cdef double[:, ::1] L = np.zeros((max(n, 1), max(n, 1)))
    cdef Py_ssize_t[::1] F = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] R = np.empty(n, dtype=np.intp)     # reduced coordinates: free but j0
    cdef Py_ssize_t steps = 0, i, j, a, c, m, mr = 0, j0 = -1, block, q
    cdef double s, nu, alpha, ratio, best, hmax = 0.0, cnt, d2
    cdef bint at_minimum = False, factored = False
    cdef double lo, hi
    cdef int status = LIMIT
    with nogil:
        for steps in range(1, max_steps + 1):
            if steps == 1:
                # the gradient Kx - b in full once; then, where x moves by alpha p (p 0 off the
                # free set), by alpha K p over the free columns only
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
            for i in range(n):
                if free[i]:
                    F[m] = i
                    m += 1
            if at_minimum:
                # multipliers of the bounds x_i = 0: mu_i = grad_i + nu [i in group]
                nu = 0.0
                cnt = 0.0
                for a in range(m):
                    if group[F[a]]:
                        nu -= grad[F[a]]
                        cnt += 1.0
                if cnt > 0.0:
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
                if factored:
                    # append the released variable to the factor
                    for c in range(mr):
                        s = _h(K, group, j0, block, R[c])
                        for a in range(c):
                            s -= L[c, a] * y[a]
                        y[c] = s / L[c, c]
                    d2 = _h(K, group, j0, block, block)
                    if d2 > hmax:
                        hmax = d2
                    for a in range(mr):
                        d2 -= y[a] * y[a]
                    if not (d2 > 1e-10 * (hmax if hmax > 1e-300 else 1e-300)):
                        status = SINGULAR
                        break
                    for a in range(mr):
                        L[mr, a] = y[a]
                    L[mr, mr] = sqrt(d2)
                    R[mr] = block
                    mr += 1
                continue
            if not factored:
                # j0: the first free member of the group (none: no equality), R the others
                j0 = -1
                for a in range(m):
                    if group[F[a]]:
                        j0 = F[a]
                        break
                mr = 0
                hmax = 0.0
                for a in range(m):
                    if F[a] != j0:
                        R[mr] = F[a]
                        mr += 1
                for a in range(mr):
                    for c in range(a + 1):
                        L[a, c] = _h(K, group, j0, R[a], R[c])
                    if L[a, a] > hmax:
                        hmax = L[a, a]
                if mr > 0 and _cholesky(L, mr, 1e-10 * (hmax if hmax > 1e-300 else 1e-300)):
                    status = SINGULAR
                    break
                factored = True
            # the step: H y = -(reduced gradient), lifted to p on F
            for a in range(mr):
                i = R[a]
                y[a] = -(grad[i] - (grad[j0] if (j0 >= 0 and group[i]) else 0.0))
            if mr > 0:
                _cho_solve(L, y, mr)
            for a in range(m):
                p[F[a]] = 0.0
            s = 0.0
            for a in range(mr):
                p[R[a]] = y[a]
                if j0 >= 0 and group[R[a]]:
                    s += y[a]
            if j0 >= 0:
                p[j0] = -s
            # the longest step keeping x >= 0, at most 1
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
                if block == j0:
                    factored = False
                else:
                    q = 0
                    while R[q] != block:
                        q += 1
                    _delete(L, q, mr)
                    for a in range(q, mr - 1):
                        R[a] = R[a + 1]
                    mr -= 1
            else:
                at_minimum = True
    return status, steps


cdef bint _verify(double[:, ::1] K, double[::1] b, const unsigned char[::1] group,
                  double[::1] x, const unsigned char[::1] free, double kkt_tol,
                  double stationary) noexcept nogil:
    """Whether x is optimal by the recomputed gradient: stationary on the free set (equal over
    the group's free members, 0 over the others, to ``stationary``: a factor kept by updates
    may be that far from exact) and the bounds' multipliers >= -kkt_tol."""
    cdef Py_ssize_t n = b.shape[0], i, j
    cdef double s, lo = INFINITY, hi = -INFINITY, nu = 0.0, cnt = 0.0
    cdef double worst = INFINITY
    # two passes over K: the free members first (for nu), then the bounds
    for i in range(n):
        if free[i]:
            s = -b[i]
            for j in range(n):
                s += K[i, j] * x[j]
            if group[i]:
                lo = s if s < lo else lo
                hi = s if s > hi else hi
                nu -= s
                cnt += 1.0
            elif fabs(s) > stationary:
                return False
    if cnt > 0.0:
        if hi - lo > stationary:
            return False
        nu /= cnt
    for i in range(n):
        if not free[i]:
            s = -b[i]
            for j in range(n):
                s += K[i, j] * x[j]
            if group[i]:
                s += nu
            if s < -kkt_tol:
                return False
    return True


def solve(double[:, ::1] K, double[::1] b, const unsigned char[::1] soft, double C,
          double[::1] z0, Py_ssize_t max_steps, double precision=0.0):
    """The augmented problem of ``_qp.active_set`` built from (K, b, soft, C) and the start z0,
    solved by :func:`run` and verified. Returns (status, steps, Ka, ba, group, x, free,
    kkt_tol, scale): status 0 optimal and verified, 1 singular step or unverified (NumPy goes
    on from x), else failed."""
    cdef Py_ssize_t k = b.shape[0], n, i, j
    cdef bint has_sum = False
    cdef double total = 0.0, scale = 0.0, kmax = 0.0, xmax = 0.0, kkt_tol
    for i in range(k):
        if soft[i]:
            has_sum = True
    n = k + (1 if has_sum else 0)
    Ka_arr = np.zeros((n, n))
    ba_arr = np.zeros(n)
    group_arr = np.zeros(n, dtype=np.uint8)
    x_arr = np.zeros(n)
    free_arr = np.zeros(n, dtype=np.uint8)
    cdef double[:, ::1] Ka = Ka_arr
    cdef double[::1] ba = ba_arr, x = x_arr
    cdef unsigned char[::1] group = group_arr, free = free_arr
    for i in range(k):
        for j in range(k):
            Ka[i, j] = K[i, j]
            if fabs(K[i, j]) > kmax:
                kmax = fabs(K[i, j])
        ba[i] = b[i]
        if fabs(b[i]) > scale:
            scale = fabs(b[i])
        group[i] = soft[i]
        # the start made feasible: clipped at 0, the soft part scaled into the sum
        x[i] = z0[i] if z0[i] > 0.0 else 0.0
        if soft[i]:
            total += x[i]
    if total > C:
        for i in range(k):
            if soft[i]:
                x[i] *= C / total
        total = 0.0
        for i in range(k):
            if soft[i]:
                total += x[i]
    if has_sum:
        group[k] = 1
        x[k] = C - total if C > total else 0.0
    for i in range(n):
        free[i] = x[i] > 0.0
        if x[i] > xmax:
            xmax = x[i]
    if kmax * (C if C > xmax else xmax) > scale:
        scale = kmax * (C if C > xmax else xmax)
    if scale < 1e-300:
        scale = 1e-300
    kkt_tol = 1e3 * n * 2.220446049250313e-16 * scale
    if precision > 0.0:
        # a bound's multiplier -mu lets the objective gain up to mu times the mass that can
        # move onto it (C for the soft sum, about the whole mass for a hard one): the
        # roundoff-scaled tolerance alone left the dual 0.4 short at C = 1e4 (a cutting plane
        # that stalled for good). Not below the gradient's roundoff, which would cycle.
        for i in range(k):
            if not soft[i]:
                total += x[i]
        xmax = C if C > total else total
        xmax = xmax if xmax > 1.0 else 1.0
        if precision / xmax < kkt_tol:
            kkt_tol = precision / xmax
        if kkt_tol < 10.0 * sqrt(<double>n) * 2.220446049250313e-16 * scale:
            kkt_tol = 10.0 * sqrt(<double>n) * 2.220446049250313e-16 * scale
    if has_sum and not free[k]:
        total = 0.0
        for i in range(k):
            if soft[i] and free[i]:
                total = 1.0
        if total == 0.0:
            return FAILED, 0, Ka_arr, ba_arr, group_arr, x_arr, free_arr, kkt_tol, scale
    status, steps = run(Ka, ba, group, x, free, kkt_tol, max_steps)
    if status == OPTIMAL and not _verify(Ka, ba, group, x, free, kkt_tol,
                                         1.4901161193847656e-08 * scale):
        status = SINGULAR
    return status, steps, Ka_arr, ba_arr, group_arr, x_arr, free_arr, kkt_tol, scale
