# distutils: language = c++
"""Paper 003 appendix A's greedy for the latent SSVM, compiled (issue 24 item 1).

The greedy (see ``run_latent_greedy``) moves the negative slots up one at a time, each to the
rank of largest loss-augmented score with the others fixed. Scoring one pattern takes two
assignments of bags to slots, one per side, of gains g(b, c) = max_h c s_b(h) = c high_b for
c >= 0, c low_b below (eqs. A.6-A.9). Here every pattern's value comes from kept optima:

* negative side: a dense Hungarian state (assignment and dual potentials u, v with
  u_b + v_t >= g(b, t), equality on the assignment) over N bags and N slots, kept optimal from
  slot to slot by the dynamic Hungarian algorithm (Korsah, Stentz & Dias 2007: when one
  column's gains change, free it and its bag, reset the column's potential to the least
  feasible value, one augmenting path: O(N^2) instead of a new O(N^3) solve). Scanning slot k,
  its column is freed: the rest is still optimal under the same potentials, and the best
  assignment that leaves bag x over instead of slot k's bag y is worth u_y - u_x - (the reduced
  costs of the alternating path from y to x's slot) more, so one Dijkstra from y scores rank r
  as max_x g(x, c_r) + that, for every r at once. The Dijkstra stops once the next distance
  exceeds what any bag it has not reached could add at any rank (bound: max_x g(x, c_r) - u_x).
  When slot k moves, its column comes back with the new coefficient and the bag x that won
  there: the augmenting path of the repair is the Dijkstra's path from y to x's slot, already
  found (potentials moved by the distances it reached, capped where it stopped; x then attains
  the column's least feasible potential because no bag it did not reach can beat x).
* positive side: while every positive slot's coefficient is >= 0 (slot k's lower coefficient
  (N - 2(k + 1)) / (P N) >= 0: fewer than half the negatives moved) every gain is c high_b and
  the optimum is the sorted matching (rearrangement inequality): O(1) per rank from prefix sums
  of the sorted highs. Past that the scan's rank steps each change one column (from the
  coefficient below slot k to the one above it) and take one dynamic-Hungarian repair, O(P^2).

The loss of each pattern is updated in O(1) along a scan (one positive's negatives-above count
changes per rank). Exact: the same optimum values as solving every pattern anew (tested against
the reference greedy, which uses ``scipy.optimize.linear_sum_assignment``).
"""
from libc.math cimport INFINITY
from libcpp.vector cimport vector

import numpy as np

from aprank.inference._interrupt cimport check_signals, first_check
from aprank.inference._kernel cimport i64


cdef inline double _gain(double c, double hi, double lo) noexcept nogil:
    return c * hi if c >= 0 else c * lo


cdef class _Hungarian:
    """A square maximum-gain assignment of bags (rows) to slots (columns) of coefficients
    ``coef``, gain(b, t) = c_t high_b for c_t >= 0, c_t low_b below (a column of coefficient 0,
    gain 0 for every bag, is the greedy's dummy); kept optimal with its dual potentials across
    changes of one column at a time."""

    cdef i64 n, end
    # where best_leaving stopped: columns todo[n_left : n - 1] reached, the next distance front
    cdef i64 n_left
    cdef double front
    # per coefficient of best_leaving, the row that gives best_of
    cdef vector[i64] arg_of
    cdef vector[double] hi, lo, coef, u, v, dist
    cdef vector[i64] col_of, row_of, pred, todo
    # the columns not yet reached by a Dijkstra, with copies of their v, coefficient, distance
    # and predecessor kept in the same order, so that its inner loop reads contiguous memory
    cdef vector[double] todo_v, todo_c, todo_d
    cdef vector[i64] todo_p

    def __cinit__(self, double[::1] hi, double[::1] lo):
        cdef i64 b
        self.n = hi.shape[0]
        self.hi.resize(self.n)
        self.lo.resize(self.n)
        for b in range(self.n):
            self.hi[b] = hi[b]
            self.lo[b] = lo[b]
        self.coef.assign(self.n, 0.0)
        self.u.assign(self.n, 0.0)
        self.v.assign(self.n, 0.0)
        self.dist.assign(self.n, 0.0)
        self.col_of.assign(self.n, -1)
        self.row_of.assign(self.n, -1)
        self.pred.assign(self.n, -1)
        self.todo.assign(self.n, 0)
        self.todo_v.assign(self.n, 0.0)
        self.todo_c.assign(self.n, 0.0)
        self.todo_d.assign(self.n, 0.0)
        self.todo_p.assign(self.n, 0)

    cdef inline double gain(self, i64 b, i64 t) noexcept nogil:
        return _gain(self.coef[t], self.hi[b], self.lo[b])

    cdef void solve(self) noexcept nogil:
        """From scratch (O(n^3)): u at each row's best gain, v = 0, then one augmenting path
        per row."""
        cdef i64 b, t
        cdef double best
        for b in range(self.n):
            best = -INFINITY
            for t in range(self.n):
                best = max(best, self.gain(b, t))
            self.u[b] = best
            self.col_of[b] = -1
        for t in range(self.n):
            self.v[t] = 0.0
            self.row_of[t] = -1
        for b in range(self.n):
            self.augment(b)

    cdef void solve_uniform(self, double c) noexcept nogil:
        """O(n) optimum where every column has coefficient c: any assignment (bag b in column
        b), u at each bag's gain, v = 0."""
        cdef i64 b
        for b in range(self.n):
            self.coef[b] = c
            self.v[b] = 0.0
            self.u[b] = _gain(c, self.hi[b], self.lo[b])
            self.col_of[b] = b
            self.row_of[b] = b

    cdef i64 load_todo(self, i64 skip) noexcept nogil:
        """Every column but ``skip`` unreached, at distance infinity, with copies of its v and
        coefficient: returns how many."""
        cdef i64 t, n_todo = 0
        cdef i64* todo = self.todo.data()
        for t in range(self.n):
            if t != skip:
                todo[n_todo] = t
                self.todo_v[n_todo] = self.v[t]
                self.todo_c[n_todo] = self.coef[t]
                self.todo_d[n_todo] = INFINITY
                n_todo += 1
        return n_todo

    cdef inline i64 reach(self, i64 i, i64 last, double d) noexcept nogil:
        """Unreached entry i reached at distance d: its column's dist and pred set, then a
        swap-remove (the reached column goes to position ``last``, the last unreached one
        takes its place). Returns the column."""
        cdef i64* todo = self.todo.data()
        cdef i64 t = todo[i]
        self.dist[t] = d
        self.pred[t] = self.todo_p[i]
        todo[i], todo[last] = todo[last], t
        self.todo_v[i] = self.todo_v[last]
        self.todo_c[i] = self.todo_c[last]
        self.todo_d[i] = self.todo_d[last]
        self.todo_p[i] = self.todo_p[last]
        return t

    cdef i64 shortest(self, i64 y, i64 skip, bint stop_at_free) noexcept nogil:
        """Dijkstra over the columns from row y on the reduced costs u_b + v_t - gain(b, t)
        >= 0 (column ``skip`` left out), relaxing and picking the next column in one pass over
        the columns not yet reached. Fills dist and pred of the columns reached and returns
        how many: they are todo[n - reached:], in the order reached (with ``stop_at_free``:
        up to the first free column, which is ``end``)."""
        cdef i64 t, i, z, best_i, n_todo
        cdef double d, best, base, hz, lz, c, a, g
        cdef double* tv = self.todo_v.data()
        cdef double* tc = self.todo_c.data()
        cdef double* td = self.todo_d.data()
        cdef i64* tp = self.todo_p.data()
        n_todo = self.load_todo(skip)
        z, base = y, self.u[y]
        while n_todo:
            hz, lz = self.hi[z], self.lo[z]
            best, best_i = INFINITY, 0
            for i in range(n_todo):
                c = tc[i]
                a = c * hz
                g = c * lz
                g = a if a >= g else g          # hz >= lz: the gain, without a branch on c
                d = base + tv[i] - g
                if d < td[i]:
                    td[i] = d
                    tp[i] = z
                if td[i] < best:
                    best, best_i = td[i], i
            n_todo -= 1
            t = self.reach(best_i, n_todo, best)
            z = self.row_of[t]
            if z < 0:
                if stop_at_free:
                    self.end = t
                    return self.n - n_todo - (1 if skip >= 0 else 0)
                continue
            base = best + self.u[z]
        return self.n - (1 if skip >= 0 else 0)

    cdef void best_leaving(self, i64 y, i64 skip, const double* c, i64 L, const double* bound,
                           double* best_of) noexcept nogil:
        """For each of L coefficients c[i]: best_of[i] = max over rows x of gain(x, c[i]) - u_x
        - (the reduced cost of the shortest alternating path from the free row y to x's
        column; 0 for x = y), column ``skip`` left out. A Dijkstra from y that stops once the
        next distance D is at least max_i (bound[i] - best_of[i]), bound[i] = max_x gain(x, c[i])
        - u_x: no row not yet reached can then raise any best_of[i]. Keeps the row of each
        best_of[i] (``arg_of``) and where it stopped, for :meth:`take_leaving`."""
        cdef i64 t, i, z, best_i, n_todo
        cdef double d, best, base, hz, lz, cc, a, g, gap
        cdef double* tv = self.todo_v.data()
        cdef double* tc = self.todo_c.data()
        cdef double* td = self.todo_d.data()
        cdef i64* tp = self.todo_p.data()
        n_todo = self.load_todo(skip)
        if <i64>self.arg_of.size() < L:
            self.arg_of.resize(L)
        z, base, best = y, self.u[y], 0.0
        while True:
            # row z reached at distance ``best``: its candidates, then the gap left
            hz, lz = self.hi[z], self.lo[z]
            gap = -INFINITY
            for i in range(L):
                a = c[i] * hz
                g = c[i] * lz
                g = (a if a >= g else g) - self.u[z] - best
                if g > best_of[i]:
                    best_of[i] = g
                    self.arg_of[i] = z
                gap = max(gap, bound[i] - best_of[i])
            if n_todo == 0:
                self.n_left = 0
                self.front = best
                return
            best, best_i = INFINITY, 0
            for i in range(n_todo):
                cc = tc[i]
                a = cc * hz
                g = cc * lz
                g = a if a >= g else g
                d = base + tv[i] - g
                if d < td[i]:
                    td[i] = d
                    tp[i] = z
                if td[i] < best:
                    best, best_i = td[i], i
            if best >= gap:
                self.n_left = n_todo
                self.front = best
                return
            n_todo -= 1
            t = self.reach(best_i, n_todo, best)
            z = self.row_of[t]
            base = best + self.u[z]

    cdef void take_leaving(self, i64 y, i64 skip, i64 x, double c) noexcept nogil:
        """After :meth:`best_leaving` from the free row y: column ``skip`` (free) takes
        coefficient c and row x, which it found best for c (``arg_of``), the alternating path
        from y to x's column flips. The potentials move by the distances it reached (capped at
        where it stopped), as after an augmenting path; x then attains v_skip's least feasible
        value, because nothing it did not reach could beat x. O(n), no new search."""
        cdef i64 i, t, b, prev, t0
        cdef double delta, m = -INFINITY
        self.u[y] -= self.front
        for i in range(self.n_left, self.n - 1):
            t = self.todo[i]
            delta = self.front - self.dist[t]
            self.v[t] += delta
            self.u[self.row_of[t]] -= delta
        if x != y:
            t0 = self.col_of[x]
            t = t0
            while True:
                b = self.pred[t]
                prev = self.col_of[b]
                self.row_of[t] = b
                self.col_of[b] = t
                if b == y:
                    break
                t = prev
        self.col_of[x] = skip
        self.row_of[skip] = x
        self.coef[skip] = c
        for b in range(self.n):
            m = max(m, self.gain(b, skip) - self.u[b])
        self.v[skip] = m

    cdef void augment(self, i64 y) noexcept nogil:
        """Assign the free row y along a shortest augmenting path; potentials stay feasible
        (u -= D - dist of each reached row, v += D - dist of each reached column)."""
        cdef i64 t, i, end, b, prev, reached
        cdef double D, delta
        reached = self.shortest(y, -1, True)
        end = self.end
        D = self.dist[end]
        self.u[y] -= D
        for i in range(self.n - reached, self.n):
            t = self.todo[i]
            if t != end:
                delta = D - self.dist[t]
                self.v[t] += delta
                self.u[self.row_of[t]] -= delta
        t = end
        while True:
            b = self.pred[t]
            prev = self.col_of[b]
            self.row_of[t] = b
            self.col_of[b] = t
            if b == y:
                break
            t = prev

    cdef i64 free_column(self, i64 t) noexcept nogil:
        """Take column t out of the assignment; returns its row, now free. The rest stays
        an optimum of the other rows and columns, under the same potentials."""
        cdef i64 y = self.row_of[t]
        self.row_of[t] = -1
        self.col_of[y] = -1
        return y

    cdef void refill_column(self, i64 t, double c, i64 y) noexcept nogil:
        """Column t (free) back with coefficient c, row y (free) back: v_t at the least
        feasible value, one augmenting path from y, O(n^2)."""
        cdef i64 b
        cdef double m = -INFINITY
        self.coef[t] = c
        for b in range(self.n):
            m = max(m, self.gain(b, t) - self.u[b])
        self.v[t] = m
        self.augment(y)

    cdef void set_column(self, i64 t, double c) noexcept nogil:
        """Korsah et al.'s repair after column t's coefficient changes: free its row, set v_t
        to the least feasible value, one augmenting path: O(n^2)."""
        self.refill_column(t, c, self.free_column(t))

    cdef double value(self) noexcept nogil:
        cdef i64 b
        cdef double total = 0.0
        for b in range(self.n):
            if self.col_of[b] >= 0:
                total += self.gain(b, self.col_of[b])
        return total


cdef inline double _ap_term(double p, double above) noexcept nogil:
    # 1 - precision at the p-th positive, as AveragePrecision.from_pattern sums it
    return above / (p + above)


def latent_greedy(double[::1] pos_high, double[::1] pos_low, double[::1] neg_high,
                  double[::1] neg_low, double tol):
    """The greedy's negative slots' ranks and each bag's slot coefficient.

    Parameters
    ----------
    pos_high, pos_low, neg_high, neg_low : ndarray of float64
        Per positive (negative) bag, its highest and lowest candidate score (P and N >= 1
        entries), high >= low.
    tol : float
        Values within ``tol`` are ties: a slot moves only when it gains more than ``tol``, to
        the lowest place among the ranks within ``tol`` of its best.

    Returns
    -------
    neg_ranks : ndarray of int64 (N,)
        The interleaving rank of each negative slot (non-decreasing).
    pos_coef, neg_coef : ndarray of float64 (P,), (N,)
        The coefficient of the slot each bag takes in the final pattern's assignments.
    """
    cdef i64 P = pos_high.shape[0], N = neg_high.shape[0]
    if P < 1 or N < 1 or pos_low.shape[0] != P or neg_low.shape[0] != N:
        raise ValueError(f"latent_greedy needs P >= 1 positive and N >= 1 negative bags, a high "
                         f"and a low score each: got {P} and {pos_low.shape[0]} positive, "
                         f"{N} and {neg_low.shape[0]} negative")
    if np.any(np.asarray(pos_low) > np.asarray(pos_high)) or \
            np.any(np.asarray(neg_low) > np.asarray(neg_high)):
        raise ValueError("latent_greedy: a bag's low score exceeds its high score")
    if not (np.all(np.isfinite(pos_high)) and np.all(np.isfinite(pos_low))
            and np.all(np.isfinite(neg_high)) and np.all(np.isfinite(neg_low))):
        raise ValueError("latent_greedy: the scores must be finite")
    neg_ranks_a = np.full(N, P + 1, dtype=np.int64)
    pos_coef_a = np.empty(P)
    neg_coef_a = np.empty(N)
    cdef i64[::1] neg_ranks = neg_ranks_a
    cdef double[::1] pos_coef = pos_coef_a, neg_coef = neg_coef_a
    order = np.argsort(-np.asarray(pos_high), kind="stable").astype(np.int64)
    cdef i64[::1] pos_order = order
    sorted_high = np.ascontiguousarray(np.asarray(pos_high)[order])
    cdef double[::1] H = sorted_high
    cdef _Hungarian neg = _Hungarian(neg_high, neg_low)
    cdef _Hungarian pos = _Hungarian(pos_high, pos_low)
    with nogil:
        _run(P, N, H, pos_order, pos, neg, tol, neg_ranks, pos_coef, neg_coef)
    return neg_ranks_a, pos_coef_a, neg_coef_a


cdef int _run(i64 P, i64 N, double[::1] H, i64[::1] pos_order, _Hungarian pos, _Hungarian neg,
              double tol, i64[::1] neg_ranks, double[::1] pos_coef,
              double[::1] neg_coef) except -1 nogil:
    cdef double scale = 1.0 / (<double>P * N), next_check = first_check()
    cdef double best, top, fixed_value, delta_fixed, delta, pos_v, neg_v, c_hi, c_lo, c, g
    cdef double neg_base
    cdef i64 k, r, p, b, x, i, L, lowest, chosen, y0
    cdef bint mixed = False
    cdef vector[double] S, values, cr, bound, best_of
    cdef vector[i64] above_of              # per positive slot p (1-based), negatives above it
    S.assign(P + 1, 0.0)
    for p in range(P):
        S[p + 1] = S[p] + H[p]
    cr.assign(P, 0.0)
    bound.assign(P, 0.0)
    best_of.assign(P, 0.0)
    values.assign(P + 1, 0.0)
    above_of.assign(P + 1, 0)

    # negative side at the true pattern: every slot at P + 1
    c = (P + 2.0 - 2.0 * (P + 1)) * scale
    neg.solve_uniform(c)
    # the true pattern's value: loss 0, every positive at N / (P N), every negative at P + 1
    best = S[P] * N * scale
    for b in range(N):
        best += _gain(c, neg.hi[b], neg.lo[b])

    k = 0
    while k < N:
        check_signals(&next_check)
        lowest = neg_ranks[k - 1] if k else 1
        c_hi = (N - 2.0 * k) * scale
        c_lo = (N - 2.0 * (k + 1)) * scale
        # loss and positive-side value of the slots p < lowest (fixed)
        delta_fixed = 0.0
        fixed_value = 0.0
        for p in range(1, lowest):
            delta_fixed += _ap_term(p, above_of[p])
            fixed_value += (N - 2.0 * above_of[p]) * scale * H[p - 1]
        if c_lo < 0 and not mixed:
            # from here on some positive slot may take a negative coefficient: the positive
            # side becomes a kept Hungarian assignment (built once, O(P^3))
            mixed = True
            for p in range(1, P + 1):
                pos.coef[p - 1] = (N - 2.0 * above_of[p]) * scale if p < lowest else c_lo
            pos.solve()
        elif mixed:
            for p in range(lowest, P + 1):
                if pos.coef[p - 1] != c_lo:
                    pos.set_column(p - 1, c_lo)
                    check_signals(&next_check)
        # negative side, slot k at rank r: the best assignment of the other bags to the other
        # slots plus the gain of the bag x that takes slot k, maximised over x. Slot k's bag y0
        # out, the rest is the best assignment that leaves y0 over (value V); one that leaves x
        # over instead is worth, under the same feasible potentials, V + u_y0 - u_x - (the
        # reduced costs of the alternating path from y0 to x's slot), for every x from one
        # Dijkstra, which stops once no bag it has not reached can win at any rank
        y0 = neg.free_column(k)
        neg_base = neg.value() + neg.u[y0]
        L = P - lowest + 1
        for i in range(L):
            cr[i] = (P + 2.0 - 2.0 * (lowest + i)) * scale
            bound[i] = -INFINITY
            best_of[i] = -INFINITY
        for x in range(N):
            for i in range(L):
                g = _gain(cr[i], neg.hi[x], neg.lo[x]) - neg.u[x]
                if g > bound[i]:
                    bound[i] = g
        neg.best_leaving(y0, k, cr.data(), L, bound.data(), best_of.data())
        # the scan: slot k at rank r = lowest ... P; positives p >= r have k + 1 negatives
        # above, those in lowest ... r - 1 have k
        delta = delta_fixed
        for p in range(lowest, P + 1):
            delta += _ap_term(p, k + 1.0)
        top = -INFINITY
        for r in range(lowest, P + 1):
            if r > lowest:
                delta += _ap_term(r - 1, <double>k) - _ap_term(r - 1, k + 1.0)
                if mixed:
                    pos.set_column(r - 2, c_hi)
                    check_signals(&next_check)
            if mixed:
                pos_v = pos.value()
            else:
                pos_v = (fixed_value + c_hi * (S[r - 1] - S[lowest - 1])
                         + c_lo * (S[P] - S[r - 1]))
            neg_v = neg_base + best_of[r - lowest]
            values[r] = delta / P + pos_v + neg_v
            if values[r] > top:
                top = values[r]
        if not top > best + tol:
            # slot k stays at P + 1, and so must every later one
            neg.refill_column(k, neg.coef[k], y0)
            break
        chosen = lowest
        for r in range(P, lowest - 1, -1):
            if values[r] >= top - tol:
                chosen = r
                break
        best = values[chosen]
        neg_ranks[k] = chosen
        for p in range(chosen, P + 1):
            above_of[p] = k + 1
        # slot k takes its rank and the bag that gave its value there: the Dijkstra's paths
        # repair the assignment
        neg.take_leaving(y0, k, neg.arg_of[chosen - lowest], (P + 2.0 - 2.0 * chosen) * scale)
        k += 1

    # the final pattern's assignments
    for b in range(N):
        neg_coef[b] = neg.coef[neg.col_of[b]]
    if mixed:
        for p in range(1, P + 1):
            c = (N - 2.0 * above_of[p]) * scale
            if pos.coef[p - 1] != c:
                pos.set_column(p - 1, c)
        for b in range(P):
            pos_coef[b] = pos.coef[pos.col_of[b]]
    else:
        for p in range(1, P + 1):
            pos_coef[pos_order[p - 1]] = (N - 2.0 * above_of[p]) * scale
    return 0
