# cython: language_level=3
"""The primal active-set method of ``_qp.active_set``, compiled: the working-set QPs are tiny
(tens of free variables), so NumPy's call overhead, not arithmetic, would set their cost.

Arrays are checked by ``_qp.active_set``; :func:`solve` builds the augmented problem (with the
slack of each block's sum), and :func:`run` updates x and free in place. ``group[i]`` is the
block of variable i (its sum is fixed), -1 for a variable in no sum; ``j0[g]`` is the free
member of block g eliminated from the reduced coordinates (p_j0 = -sum of the block's other
free p).

A multi-cut working set can hold thousands of constraints, whose steps cost O(n^2) each: the
loop asks for Ctrl-C every step (at most every 0.1 s, ``_interrupt.pxd``).
"""
from libc.math cimport fabs, sqrt, isfinite, INFINITY

import numpy as np

from aprank.inference._interrupt cimport check_signals, first_check

cdef enum:
    OPTIMAL = 0
    UNVERIFIED = 1    # an optimum that failed the check (the caller falls back)
    LIMIT = 2
    FAILED = 3


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


cdef inline double _h(double[:, ::1] K, const Py_ssize_t[::1] group, const Py_ssize_t[::1] j0,
                      Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    """Entry (i, j) of the Hessian in the basis where each block's p_j0 = -sum of the block's
    other free p: (e_i - e_j0(i))' K (e_j - e_j0(j)), no e_j0 for a variable in no block."""
    cdef double s = K[i, j]
    cdef Py_ssize_t a = j0[group[i]] if group[i] >= 0 else -1
    cdef Py_ssize_t c = j0[group[j]] if group[j] >= 0 else -1
    if a >= 0:
        s -= K[a, j]
    if c >= 0:
        s -= K[i, c]
    if a >= 0 and c >= 0:
        s += K[a, c]
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


cdef void _k_times(double[:, ::1] K, const double[::1] p, const Py_ssize_t[::1] F,
                   Py_ssize_t m, double[::1] Kp) noexcept nogil:
    """Kp <- K p, p zero off the free set F (m entries).

    A sum of K's rows (K is symmetric): contiguous rows that the compiler vectorises, rather
    than each row's free columns gathered one by one (the moves are most of a multi-cut QP's
    time)."""
    cdef Py_ssize_t a, i, c, n = Kp.shape[0]
    cdef double s
    for i in range(n):
        Kp[i] = 0.0
    for a in range(m):
        c = F[a]
        s = p[c]
        if s != 0.0:
            for i in range(n):
                Kp[i] += s * K[c, i]


cdef double _move(double[:, ::1] K, double[::1] x, double[::1] grad, const double[::1] p,
                  const Py_ssize_t[::1] F, Py_ssize_t m, double cap,
                  Py_ssize_t* blocking, double[::1] Kp, bint have_kp=False) noexcept nogil:
    """x <- x + alpha p over the free set F (m entries), alpha the longest step at most ``cap``
    keeping x >= 0, and grad <- grad + alpha K p; returns alpha, the variable that reached 0
    in ``blocking`` (set to exactly 0; -1: none, and with cap infinite nothing moves). Kp:
    scratch of n entries, or K p already (``have_kp``)."""
    cdef Py_ssize_t a, i, n = grad.shape[0], q = -1
    cdef double ratio, alpha = cap
    for a in range(m):
        i = F[a]
        if p[i] < 0.0:
            ratio = -x[i] / p[i]
            if ratio < alpha:
                alpha = ratio
                q = i
    blocking[0] = q
    if not isfinite(alpha):
        return alpha
    for a in range(m):
        i = F[a]
        x[i] = x[i] + alpha * p[i]
        if x[i] < 0.0:
            x[i] = 0.0
    if alpha > 0.0:
        if not have_kp:
            _k_times(K, p, F, m, Kp)
        for i in range(n):
            grad[i] += alpha * Kp[i]
    if q >= 0:
        x[q] = 0.0
    return alpha


cdef Py_ssize_t _null_step(double[:, ::1] K, const Py_ssize_t[::1] group,
                           const Py_ssize_t[::1] j0, double[:, ::1] L, const Py_ssize_t[::1] R,
                           Py_ssize_t mr, Py_ssize_t c, double[::1] y, double[::1] u,
                           double[::1] p, double[::1] x, double[::1] grad,
                           const Py_ssize_t[::1] F, Py_ssize_t m, double[::1] Kp,
                           double* kappa) noexcept nogil:
    """Where free variable c's column is nearly a combination of the factored ones' (its
    append left d2 ~ 0 with y = L^-1 h), v = (-L^-T y, 1 at c) is H-orthogonal to the factored
    coordinates and its curvature kappa = v'Hv is ~0: f is nearly linear along it. x moves
    along +-v, whichever does not raise f, to the first bound, and that variable (returned) is
    at 0; x and grad are updated, the caller takes it out of the free set.

    Nearly linear is not linear: with kappa > 0, a step longer than -2 slope / kappa would
    raise f, and a release followed by such steps can return to where it started (a cycle
    that never ends). So the step stops at the line's minimum -slope / kappa where that comes
    first: then x minimises f over the free set with c (v is H-orthogonal to the rest), and
    the caller appends c with the pivot kappa (returned: -2, kappa in ``kappa``). -1: no bound
    blocks and f has no minimum along v. F (m entries) holds every free variable, c
    included."""
    cdef Py_ssize_t a, b, i, g, q = -1
    cdef double s, slope = 0.0, curvature = 0.0, cap = INFINITY, step
    cdef double size = 0.0, diagonal = 0.0
    for b in range(mr - 1, -1, -1):
        s = y[b]
        for a in range(b + 1, mr):
            s -= L[a, b] * u[a]
        u[b] = s / L[b, b]
    for a in range(m):
        p[F[a]] = 0.0
    p[c] = 1.0
    g = group[c]
    if g >= 0:
        p[j0[g]] -= 1.0
    for a in range(mr):
        i = R[a]
        p[i] = -u[a]
        g = group[i]
        if g >= 0:
            p[j0[g]] += u[a]
    for a in range(m):
        slope += grad[F[a]] * p[F[a]]
    if slope > 0.0:
        slope = -slope
        for a in range(m):
            p[F[a]] = -p[F[a]]
    _k_times(K, p, F, m, Kp)
    for a in range(m):
        b = F[a]
        curvature += p[b] * Kp[b]
        size += fabs(p[b])
        if K[b, b] > diagonal:
            diagonal = K[b, b]
    # a curvature within the roundoff of p'Kp (|K_ab| <= the largest diagonal) is none: f is
    # linear along v, and with no bound ahead unbounded below
    if curvature > 4.0 * m * 2.220446049250313e-16 * size * size * diagonal:
        cap = -slope / curvature
    step = _move(K, x, grad, p, F, m, cap, &q, Kp, True)
    if q < 0 and step == cap and isfinite(cap):
        kappa[0] = curvature
        return -2
    return q


cdef Py_ssize_t _append(double[:, ::1] K, const Py_ssize_t[::1] group, const Py_ssize_t[::1] j0,
                        double[:, ::1] L, Py_ssize_t[::1] R, Py_ssize_t mr, Py_ssize_t c,
                        double[::1] y, double* hmax) noexcept nogil:
    """Append variable c to the factor of R[:mr] (y <- L^-1 h on the way); the new mr, or
    -1 where the pivot is ~0 (c's column a combination of the others'): nothing appended."""
    cdef Py_ssize_t a, b
    cdef double s, d2
    for b in range(mr):
        s = _h(K, group, j0, c, R[b])
        for a in range(b):
            s -= L[b, a] * y[a]
        y[b] = s / L[b, b]
    d2 = _h(K, group, j0, c, c)
    if d2 > hmax[0]:
        hmax[0] = d2
    for a in range(mr):
        d2 -= y[a] * y[a]
    if not (d2 > 1e-10 * (hmax[0] if hmax[0] > 1e-300 else 1e-300)):
        return -1
    for a in range(mr):
        L[mr, a] = y[a]
    L[mr, mr] = sqrt(d2)
    R[mr] = c
    return mr + 1


cdef Py_ssize_t _append_pivot(double[:, ::1] L, Py_ssize_t[::1] R, Py_ssize_t mr,
                              Py_ssize_t c, const double[::1] y, double kappa) noexcept nogil:
    """Append variable c to the factor of R[:mr] with y = L^-1 h (left by its failed
    ``_append``) and the pivot kappa > 0 that ``_null_step`` measured along its direction (a
    small but true curvature); the new mr."""
    cdef Py_ssize_t a
    for a in range(mr):
        L[mr, a] = y[a]
    L[mr, mr] = sqrt(kappa)
    R[mr] = c
    return mr + 1


cdef Py_ssize_t _remove(double[:, ::1] L, Py_ssize_t[::1] R, Py_ssize_t mr,
                        Py_ssize_t q) noexcept nogil:
    """Take variable q out of the factor of R[:mr]; the new mr."""
    cdef Py_ssize_t c = 0, a
    while R[c] != q:
        c += 1
    _delete(L, c, mr)
    for a in range(c, mr - 1):
        R[a] = R[a + 1]
    return mr - 1


cdef inline bint _gradient(double[:, ::1] K, double[::1] b, double[::1] x,
                           double[::1] grad) noexcept nogil:
    """grad <- Kx - b in full; False (grad written up to the entry) at a non-finite entry."""
    cdef Py_ssize_t n = b.shape[0], i, j
    cdef double s
    for i in range(n):
        s = -b[i]
        for j in range(n):
            s += K[i, j] * x[j]
        if not isfinite(s):
            return False
        grad[i] = s
    return True


cdef inline bint _stationary(double[::1] grad, const unsigned char[::1] free,
                             const Py_ssize_t[::1] group, Py_ssize_t n_groups, double kkt_tol,
                             double[::1] lo, double[::1] hi) noexcept nogil:
    """Whether grad is stationary on the free set to kkt_tol: equal over each block's free
    members, 0 over the others. lo, hi: scratch of n_groups entries."""
    cdef Py_ssize_t n = grad.shape[0], i, g
    cdef double s = 0.0
    cdef bint stationary
    for g in range(n_groups):
        lo[g] = INFINITY
        hi[g] = -INFINITY
    for i in range(n):
        if free[i]:
            g = group[i]
            if g >= 0:
                lo[g] = grad[i] if grad[i] < lo[g] else lo[g]
                hi[g] = grad[i] if grad[i] > hi[g] else hi[g]
            elif fabs(grad[i]) > s:
                s = fabs(grad[i])
    stationary = s <= kkt_tol
    for g in range(n_groups):
        if hi[g] >= lo[g] and hi[g] - lo[g] > kkt_tol:
            stationary = False
    return stationary


cdef inline Py_ssize_t _free_list(const unsigned char[::1] free,
                                  Py_ssize_t[::1] F) noexcept nogil:
    """F <- the free variables in order; their number."""
    cdef Py_ssize_t n = free.shape[0], i, m = 0
    for i in range(n):
        if free[i]:
            F[m] = i
            m += 1
    return m


cdef inline Py_ssize_t _most_negative_bound(double[::1] grad, const unsigned char[::1] free,
                                            const Py_ssize_t[::1] group, Py_ssize_t n_groups,
                                            const Py_ssize_t[::1] F, Py_ssize_t m,
                                            double kkt_tol, double[::1] nu,
                                            double[::1] cnt) noexcept nogil:
    """The variable at its bound whose multiplier is most negative, below -kkt_tol (-1: none).

    The multipliers of the bounds x_i = 0 at a minimum on the free set F (m entries): mu_i =
    grad_i + nu_g(i), nu_g minus the mean gradient over block g's free members. nu, cnt:
    scratch of n_groups entries."""
    cdef Py_ssize_t n = grad.shape[0], a, i, g, block = -1
    cdef double s, best = -kkt_tol
    for g in range(n_groups):
        nu[g] = 0.0
        cnt[g] = 0.0
    for a in range(m):
        g = group[F[a]]
        if g >= 0:
            nu[g] -= grad[F[a]]
            cnt[g] += 1.0
    for g in range(n_groups):
        if cnt[g] > 0.0:
            nu[g] /= cnt[g]
    for i in range(n):
        if not free[i]:
            s = grad[i] + (nu[group[i]] if group[i] >= 0 else 0.0)
            if s < best:
                best = s
                block = i
    return block


cdef enum:
    # How the factor of the free set ends (_release, _factor_free)
    KEPT = 0          # the factor holds the free set
    REFACTOR = 1      # a block's eliminated member j0 left the free set: factor anew
    UNBOUNDED = 2     # f unbounded below along a null direction: the primal is infeasible


cdef inline int _release(double[:, ::1] K, const Py_ssize_t[::1] group,
                         const Py_ssize_t[::1] j0, double[:, ::1] L, Py_ssize_t[::1] R,
                         Py_ssize_t* mr, double* hmax, Py_ssize_t block, double[::1] y,
                         double[::1] u, double[::1] p, double[::1] x, double[::1] grad,
                         unsigned char[::1] free, Py_ssize_t[::1] F, Py_ssize_t m,
                         double[::1] Kp) noexcept nogil:
    """Append the released variable ``block`` to the factor of R[:mr] (F: the m free variables
    before it); KEPT, REFACTOR or UNBOUNDED.

    Where its column is a combination of the free ones' (more cuts than features, say), x
    moves along the null direction, on which f falls at the rate of its negative multiplier,
    to the first bound, which leaves the free set and H definite again; or to the minimum of
    f along it where that comes first, and the column joins with its small true pivot
    (_null_step)."""
    cdef Py_ssize_t a, g, q
    cdef double kappa = 0.0
    F[m] = block
    m += 1
    while True:
        a = _append(K, group, j0, L, R, mr[0], block, y, hmax)
        if a >= 0:
            mr[0] = a
            return KEPT
        q = _null_step(K, group, j0, L, R, mr[0], block, y, u, p, x, grad, F, m, Kp, &kappa)
        if q == -2:
            mr[0] = _append_pivot(L, R, mr[0], block, y, kappa)
            return KEPT
        if q < 0:
            return UNBOUNDED
        free[q] = 0
        g = group[q]
        if q == block:
            return KEPT
        if g >= 0 and j0[g] == q:
            return REFACTOR               # factored anew, the released one free
        mr[0] = _remove(L, R, mr[0], q)


cdef inline int _factor_free(double[:, ::1] K, const Py_ssize_t[::1] group,
                             Py_ssize_t n_groups, Py_ssize_t[::1] j0, double[:, ::1] L,
                             Py_ssize_t[::1] R, Py_ssize_t* mr, double* hmax, double[::1] y,
                             double[::1] u, double[::1] p, double[::1] x, double[::1] grad,
                             unsigned char[::1] free, Py_ssize_t[::1] F, Py_ssize_t m,
                             double[::1] Kp) noexcept nogil:
    """The factor of the free set F (m entries) from scratch; KEPT, REFACTOR or UNBOUNDED.

    j0[g]: the first free member of block g (none: the block has no free member); the other
    free variables join the factor one by one, and one whose column is a combination of those
    before it moves x to a bound first, or to the minimum along its direction and then joins
    (_null_step)."""
    cdef Py_ssize_t a, c, g, i, q
    cdef double kappa = 0.0
    for g in range(n_groups):
        j0[g] = -1
    for a in range(m):
        g = group[F[a]]
        if g >= 0 and j0[g] < 0:
            j0[g] = F[a]
    mr[0] = 0
    hmax[0] = 0.0
    c = 0
    while c < m:
        i = F[c]
        g = group[i]
        if not free[i] or (g >= 0 and j0[g] == i):
            c += 1
            continue
        a = _append(K, group, j0, L, R, mr[0], i, y, hmax)
        if a >= 0:
            mr[0] = a
            c += 1
            continue
        q = _null_step(K, group, j0, L, R, mr[0], i, y, u, p, x, grad, F, m, Kp, &kappa)
        if q == -2:
            mr[0] = _append_pivot(L, R, mr[0], i, y, kappa)
            c += 1
            continue
        if q < 0:
            return UNBOUNDED
        free[q] = 0
        g = group[q]
        if q == i:
            c += 1
        elif g >= 0 and j0[g] == q:
            return REFACTOR               # a block's eliminated member left
        else:
            mr[0] = _remove(L, R, mr[0], q)
    return KEPT


cdef inline void _newton_direction(double[::1] grad, const Py_ssize_t[::1] group,
                                   const Py_ssize_t[::1] j0, double[:, ::1] L,
                                   const Py_ssize_t[::1] R, Py_ssize_t mr, double[::1] y,
                                   double[::1] p, const Py_ssize_t[::1] F,
                                   Py_ssize_t m) noexcept nogil:
    """p <- the Newton step on the free set F (m entries): H y = -(reduced gradient) solved
    by the factor of R[:mr], lifted to p (each block's p_j0 = -sum of its other free p)."""
    cdef Py_ssize_t a, i, g
    for a in range(mr):
        i = R[a]
        g = group[i]
        y[a] = -(grad[i] - (grad[j0[g]] if g >= 0 else 0.0))
    if mr > 0:
        _cho_solve(L, y, mr)
    for a in range(m):
        p[F[a]] = 0.0
    for a in range(mr):
        i = R[a]
        p[i] = y[a]
        g = group[i]
        if g >= 0:
            p[j0[g]] -= y[a]


cdef inline bint _fix_at_bound(const Py_ssize_t[::1] group, const Py_ssize_t[::1] j0,
                               double[:, ::1] L, Py_ssize_t[::1] R, Py_ssize_t* mr,
                               unsigned char[::1] free, Py_ssize_t block) noexcept nogil:
    """Take variable ``block``, which a step took to 0, out of the free set and the factor of
    R[:mr]; whether the factor still holds the free set (not where ``block`` was its block's
    eliminated member j0: then it is factored anew)."""
    cdef Py_ssize_t g
    free[block] = 0
    g = group[block]
    if g >= 0 and j0[g] == block:
        return False
    mr[0] = _remove(L, R, mr[0], block)
    return True


def run(double[:, ::1] K, double[::1] b, const Py_ssize_t[::1] group, Py_ssize_t n_groups,
        double[::1] x, unsigned char[::1] free, double kkt_tol, Py_ssize_t max_steps,
        bint newton_first=False):
    """(status, steps): the active-set loop from x (feasible) with free set ``free``.

    The reduced Hessian's Cholesky factor is kept from step to step: a released variable
    appends a row (O(m^2)), a blocked one is deleted by Givens rotations (O(m^2)); only when
    an eliminated block member j0 leaves the free set is it factored anew. A start whose
    gradient is already stationary on the free set (equal over each block's free members, 0
    over the others) takes no first step, unless ``newton_first`` (a fresh factor and
    gradient then refine x: iterative refinement). The caller verifies the optimum it
    returns."""
    cdef Py_ssize_t n = b.shape[0]
    cdef double[::1] grad = np.empty(n)
    cdef double[::1] p = np.zeros(n)
    cdef double[::1] y = np.empty(n)
    cdef double[::1] u = np.empty(n)
    cdef double[::1] Kp = np.empty(n)
    cdef double[:, ::1] L = np.zeros((max(n, 1), max(n, 1)))
    cdef Py_ssize_t[::1] F = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] R = np.empty(n, dtype=np.intp)     # reduced coordinates: free but j0s
    cdef Py_ssize_t[::1] j0 = np.full(max(n_groups, 1), -1, dtype=np.intp)
    cdef double[::1] lo = np.empty(max(n_groups, 1))
    cdef double[::1] hi = np.empty(max(n_groups, 1))
    cdef double[::1] nu = np.empty(max(n_groups, 1))
    cdef double[::1] cnt = np.empty(max(n_groups, 1))
    cdef Py_ssize_t steps = 0, m, mr = 0, block
    cdef double hmax = 0.0
    cdef bint at_minimum = False, factored = False
    cdef int status = LIMIT, factor
    cdef double next_check = first_check()
    with nogil:
        for steps in range(1, max_steps + 1):
            check_signals(&next_check)
            if steps == 1:
                # the gradient Kx - b in full once; then, where x moves by alpha p (p 0 off the
                # free set), by alpha K p over the free columns only
                if not _gradient(K, b, x, grad):
                    status = FAILED
                    break
                at_minimum = (_stationary(grad, free, group, n_groups, kkt_tol, lo, hi)
                              and not newton_first)
            m = _free_list(free, F)
            if at_minimum:
                block = _most_negative_bound(grad, free, group, n_groups, F, m, kkt_tol, nu,
                                             cnt)
                if block < 0:
                    status = OPTIMAL
                    break
                free[block] = 1
                at_minimum = False
                if factored:
                    factor = _release(K, group, j0, L, R, &mr, &hmax, block, y, u, p, x, grad,
                                      free, F, m, Kp)
                    if factor == UNBOUNDED:
                        status = FAILED
                        break
                    if factor == REFACTOR:
                        factored = False
                continue
            if not factored:
                factor = _factor_free(K, group, n_groups, j0, L, R, &mr, &hmax, y, u, p, x,
                                      grad, free, F, m, Kp)
                if factor == UNBOUNDED:
                    status = FAILED
                    break
                if factor == REFACTOR:
                    continue
                factored = True
                # factoring may have moved x: the free list again
                m = _free_list(free, F)
            _newton_direction(grad, group, j0, L, R, mr, y, p, F, m)
            # the longest step keeping x >= 0, at most 1
            _move(K, x, grad, p, F, m, 1.0, &block, Kp)
            if block >= 0:
                factored = _fix_at_bound(group, j0, L, R, &mr, free, block)
            else:
                at_minimum = True
    return status, steps


cdef bint _verify(double[:, ::1] K, double[::1] b, const Py_ssize_t[::1] group,
                  Py_ssize_t n_groups, double[::1] x, const unsigned char[::1] free,
                  double kkt_tol, double stationary, double[::1] lo, double[::1] hi,
                  double[::1] nu, double[::1] cnt) noexcept nogil:
    """Whether x is optimal by the recomputed gradient: stationary on the free set (equal over
    each block's free members, 0 over the others, to ``stationary``: a factor kept by updates
    may be that far from exact) and the bounds' multipliers >= -kkt_tol. lo, hi, nu, cnt:
    scratch of n_groups entries."""
    cdef Py_ssize_t n = b.shape[0], i, j, g
    cdef double s
    for g in range(n_groups):
        lo[g] = INFINITY
        hi[g] = -INFINITY
        nu[g] = 0.0
        cnt[g] = 0.0
    # two passes over K: the free members first (for nu), then the bounds
    for i in range(n):
        if free[i]:
            s = -b[i]
            for j in range(n):
                s += K[i, j] * x[j]
            g = group[i]
            if g >= 0:
                lo[g] = s if s < lo[g] else lo[g]
                hi[g] = s if s > hi[g] else hi[g]
                nu[g] -= s
                cnt[g] += 1.0
            elif fabs(s) > stationary:
                return False
    for g in range(n_groups):
        if cnt[g] > 0.0:
            if hi[g] - lo[g] > stationary:
                return False
            nu[g] /= cnt[g]
    for i in range(n):
        if not free[i]:
            s = -b[i]
            for j in range(n):
                s += K[i, j] * x[j]
            if group[i] >= 0:
                s += nu[group[i]]
            if s < -kkt_tol:
                return False
    return True


cdef tuple _tolerances(double[::1] x, Py_ssize_t k, Py_ssize_t n_groups, double C,
                       double kmax, double bmax, double precision):
    """(kkt_tol, scale) at x: the roundoff scale of the gradient (|b|, |K| times the mass) and
    the bounds' multiplier tolerance."""
    cdef Py_ssize_t n = k + n_groups, i
    cdef double xmax = 0.0, total = 0.0, scale = bmax, kkt_tol
    for i in range(n):
        if x[i] > xmax:
            xmax = x[i]
        if i < k:
            total += x[i]
    if kmax * (C if C > xmax else xmax) > scale:
        scale = kmax * (C if C > xmax else xmax)
    if scale < 1e-300:
        scale = 1e-300
    kkt_tol = 1e3 * n * 2.220446049250313e-16 * scale
    if precision > 0.0:
        # a bound's multiplier -mu lets the objective gain up to mu times the mass that can
        # move onto it (C for a block's sum, about the whole mass for a hard one): the
        # roundoff-scaled tolerance alone left the dual 0.4 short at C = 1e4 (a cutting plane
        # that stalled for good). Not below the gradient's roundoff, which would cycle.
        xmax = C if C > total else total
        xmax = xmax if xmax > 1.0 else 1.0
        if precision / xmax < kkt_tol:
            kkt_tol = precision / xmax
        if kkt_tol < 10.0 * sqrt(<double>n) * 2.220446049250313e-16 * scale:
            kkt_tol = 10.0 * sqrt(<double>n) * 2.220446049250313e-16 * scale
    return kkt_tol, scale


def solve(double[:, ::1] K, double[::1] b, const Py_ssize_t[::1] block, double C,
          double[::1] z0, Py_ssize_t max_steps, double precision=0.0):
    """The augmented problem of ``_qp.active_set`` built from (K, b, block, C) and the start
    z0, solved by :func:`run` and verified. ``block[i]`` is the sum constraint i is in
    (0 .. n_blocks - 1; every block present), -1 for a hard constraint. Returns (status,
    steps, Ka, ba, group, x, free, kkt_tol, scale): status 0 optimal and verified, 1 an
    optimum that failed the check, 2 the step limit reached, 3 failed."""
    cdef Py_ssize_t k = b.shape[0], n, i, j, g, n_groups = 0
    cdef double scale, kmax = 0.0, bmax = 0.0, kkt_tol, again, again_scale
    for i in range(k):
        if block[i] + 1 > n_groups:
            n_groups = block[i] + 1
    n = k + n_groups
    Ka_arr = np.zeros((n, n))
    ba_arr = np.zeros(n)
    group_arr = np.full(n, -1, dtype=np.intp)
    x_arr = np.zeros(n)
    free_arr = np.zeros(n, dtype=np.uint8)
    sums_arr = np.zeros(max(n_groups, 1))
    scratch = np.zeros((4, max(n_groups, 1)))
    cdef double[:, ::1] Ka = Ka_arr
    cdef double[::1] ba = ba_arr, x = x_arr, sums = sums_arr
    cdef Py_ssize_t[::1] group = group_arr
    cdef unsigned char[::1] free = free_arr
    cdef double[:, ::1] work = scratch
    for i in range(k):
        for j in range(k):
            Ka[i, j] = K[i, j]
            if fabs(K[i, j]) > kmax:
                kmax = fabs(K[i, j])
        ba[i] = b[i]
        if fabs(b[i]) > bmax:
            bmax = fabs(b[i])
        group[i] = block[i]
        # the start made feasible: clipped at 0, each block scaled into its sum
        x[i] = z0[i] if z0[i] > 0.0 else 0.0
        if block[i] >= 0:
            sums[block[i]] += x[i]
    for i in range(k):
        g = block[i]
        if g >= 0 and sums[g] > C:
            x[i] *= C / sums[g]
    for g in range(n_groups):
        sums[g] = 0.0
    for i in range(k):
        if block[i] >= 0:
            sums[block[i]] += x[i]
    for g in range(n_groups):
        group[k + g] = g
        x[k + g] = C - sums[g] if C > sums[g] else 0.0
    for i in range(n):
        free[i] = x[i] > 0.0
    kkt_tol, scale = _tolerances(x, k, n_groups, C, kmax, bmax, precision)
    # every block needs a free member (C > 0 puts mass on its slack or its constraints)
    for g in range(n_groups):
        sums[g] = 0.0
    for i in range(n):
        if free[i] and group[i] >= 0:
            sums[group[i]] = 1.0
    for g in range(n_groups):
        if sums[g] == 0.0:
            return FAILED, 0, Ka_arr, ba_arr, group_arr, x_arr, free_arr, kkt_tol, scale
    status, steps = run(Ka, ba, group, n_groups, x, free, kkt_tol, max_steps)
    if status == OPTIMAL:
        # the tolerances scale with x; a start far larger than the optimum (a warm start
        # whose mass has gone) set them too loose, and left the roundoff of its scale in the
        # gradient: then the loop goes on from its optimum with a fresh factor and gradient
        again, again_scale = _tolerances(x, k, n_groups, C, kmax, bmax, precision)
        if again < 0.5 * kkt_tol:
            kkt_tol, scale = again, again_scale
            status, more = run(Ka, ba, group, n_groups, x, free, kkt_tol, max_steps, True)
            steps += more
    if status == OPTIMAL and not _verify(Ka, ba, group, n_groups, x, free, kkt_tol,
                                         1.4901161193847656e-08 * scale, work[0], work[1],
                                         work[2], work[3]):
        status = UNVERIFIED
    return status, steps, Ka_arr, ba_arr, group_arr, x_arr, free_arr, kkt_tol, scale
