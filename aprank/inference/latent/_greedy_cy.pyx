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
from libc.math cimport INFINITY, fabs
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


# tests switch the swap search off to see the certificate catch every assignment short of the
# optimum (then each evaluation falls back to a Hungarian solve)
cdef bint _SWAPS = True
cdef i64 _FALLBACKS = 0


def _debug_swaps(bint on):
    """Switch :class:`_Split`'s swap search on or off (tests only); returns how many
    evaluations fell back to a Hungarian solve since the last call."""
    global _SWAPS, _FALLBACKS
    cdef i64 n = _FALLBACKS
    _SWAPS = on
    _FALLBACKS = 0
    return n


cdef class _Split:
    """The positive side's best assignment once some slot coefficients are negative, found
    without dual potentials: there the dynamic Hungarian's repairs cost O(P^2) each (a change
    of one column moves the potentials of every column below it) and a slot took two per rank
    of its scan, nearly all of a run on trained bags.

    A bag in a column of coefficient c >= 0 gains c high_b, in one below c low_b; within each
    group the sorted matching is best (rearrangement inequality), so an assignment is the set A
    of bags in the m columns of coefficient >= 0. By Abel summation over the bags in order of
    high (h_[1] >= h_[2] >= ...), A's sorted matching is sum_i (h_[i] - h_[i+1]) Pc(n_i)
    + Pc(m) h_[P], n_i the members of A among the first i and Pc(n) the sum of the n largest
    coefficients, concave in n; the other group's likewise in order of low. So the value is a
    separable concave gain of a flow: a unit per bag, routed along one of two paths (the order
    of high if the bag is in A, of low if not) to two sinks of demands m and P - m. Such a flow
    is optimal exactly when its residual network (each path arc one unit up or down at its
    marginal gain, each bag an arc between its places on the two paths) has no cycle of
    positive gain: that is the certificate, Bellman-Ford sweeps of O(P) each. A cycle through
    two bags is a swap of a member of A with an outsider, its gain two prefix-sum differences;
    swaps are searched first, and a positive cycle through more bags (not met in testing)
    falls back to a Hungarian solve."""

    cdef i64 P, m
    cdef double eps
    # the bags by high (low), descending, and each bag's place in that order
    cdef vector[i64] by_h, by_l, at_h, at_l
    # arc i of a path joins places i and i + 1; its weight is h_[i] - h_[i+1] (low's likewise)
    cdef vector[double] wh, wl, hi, lo
    # the coefficients >= 0 and the others, each descending
    cdef vector[double] cp, cn
    cdef vector[char] in_a
    # per arc: its flow (members of A above it on path 1, non-members on path 2), the gain of
    # one unit more (up) and the loss of one unit less (down), and prefix sums of both
    cdef vector[i64] n1, n2
    cdef vector[double] up1, dn1, up2, dn2, su1, sd1, su2, sd2, d1, d2
    # the members' and outsiders' places and prefix sums, contiguous for the swap search
    cdef vector[i64] xs, ys, ya, yb
    cdef vector[double] yu1, yd1, yu2, yd2

    def __cinit__(self, double[::1] hi, double[::1] lo):
        cdef i64 b, i, P = hi.shape[0]
        cdef double span
        self.P = P
        self.hi.resize(P)
        self.lo.resize(P)
        for b in range(P):
            self.hi[b] = hi[b]
            self.lo[b] = lo[b]
        cdef i64[::1] oh = np.argsort(-np.asarray(hi), kind="stable").astype(np.int64)
        cdef i64[::1] ol = np.argsort(-np.asarray(lo), kind="stable").astype(np.int64)
        self.by_h.resize(P)
        self.by_l.resize(P)
        self.at_h.resize(P)
        self.at_l.resize(P)
        for i in range(P):
            self.by_h[i] = oh[i]
            self.by_l[i] = ol[i]
            self.at_h[oh[i]] = i
            self.at_l[ol[i]] = i
        self.wh.assign(P, 0.0)
        self.wl.assign(P, 0.0)
        for i in range(P - 1):
            self.wh[i] = self.hi[oh[i]] - self.hi[oh[i + 1]]
            self.wl[i] = self.lo[ol[i]] - self.lo[ol[i + 1]]
        # every gain is a sum of these weights times coefficients of size <= 1: a cycle that
        # gains less than this is rounding, not a better assignment
        span = self.hi[oh[0]] - self.hi[oh[P - 1]] + self.lo[ol[0]] - self.lo[ol[P - 1]]
        self.eps = 1e-15 * span
        self.in_a.assign(P, 0)
        self.m = 0
        self.cp.reserve(P)
        self.cn.reserve(P)
        self.n1.assign(P, 0)
        self.n2.assign(P, 0)
        self.up1.assign(P, 0.0)
        self.dn1.assign(P, 0.0)
        self.up2.assign(P, 0.0)
        self.dn2.assign(P, 0.0)
        self.su1.assign(P, 0.0)
        self.sd1.assign(P, 0.0)
        self.su2.assign(P, 0.0)
        self.sd2.assign(P, 0.0)
        self.d1.assign(P, 0.0)
        self.d2.assign(P, 0.0)
        self.xs.assign(P, 0)
        self.ys.assign(P, 0)
        self.ya.assign(P, 0)
        self.yb.assign(P, 0)
        self.yu1.assign(P, 0.0)
        self.yd1.assign(P, 0.0)
        self.yu2.assign(P, 0.0)
        self.yd2.assign(P, 0.0)

    cdef void set_coefficients(self, const double* c) noexcept nogil:
        """The columns' coefficients (descending); A resized to the new m by the outsider of
        highest high joining (the member of lowest high leaving), a start for the search."""
        cdef i64 t, i, size = 0
        self.cp.clear()
        self.cn.clear()
        for t in range(self.P):
            if c[t] >= 0:
                self.cp.push_back(c[t])
            else:
                self.cn.push_back(c[t])
        self.m = self.cp.size()
        for i in range(self.P):
            size += self.in_a[i]
        i = 0
        while size < self.m:
            if not self.in_a[self.by_h[i]]:
                self.in_a[self.by_h[i]] = 1
                size += 1
            i += 1
        i = self.P - 1
        while size > self.m:
            if self.in_a[self.by_h[i]]:
                self.in_a[self.by_h[i]] = 0
                size -= 1
            i -= 1

    cdef void arcs(self) noexcept nogil:
        """Each path arc's flow, marginal gains and their prefix sums, for the current A."""
        cdef i64 i, n = 0, k = self.P - self.m
        cdef double u, d
        for i in range(self.P - 1):
            n += self.in_a[self.by_h[i]]
            self.n1[i] = n
            u = self.wh[i] * self.cp[n] if n < self.m else 0.0
            d = self.wh[i] * self.cp[n - 1] if n > 0 else 0.0
            self.up1[i] = u
            self.dn1[i] = d
            self.su1[i + 1] = self.su1[i] + u
            self.sd1[i + 1] = self.sd1[i] + d
        n = 0
        for i in range(self.P - 1):
            n += 1 - self.in_a[self.by_l[i]]
            self.n2[i] = n
            u = self.wl[i] * self.cn[n] if n < k else 0.0
            d = self.wl[i] * self.cn[n - 1] if n > 0 else 0.0
            self.up2[i] = u
            self.dn2[i] = d
            self.su2[i + 1] = self.su2[i] + u
            self.sd2[i + 1] = self.sd2[i] + d

    cdef void swap_search(self) noexcept nogil:
        """Best swaps (a member x of A out, an outsider y in) until none gains more than eps;
        leaves the arcs current. Swapping moves one unit between x's and y's places on each
        path: up the arcs between them (gains up) or down (loses down)."""
        cdef i64 it, i, j, b, a, a2, b2, nx, ny, bx, by
        cdef double g, best, u1b, d1b, u2a, d2a
        cdef i64* ya = self.ya.data()
        cdef i64* yb = self.yb.data()
        cdef double* yu1 = self.yu1.data()
        cdef double* yd1 = self.yd1.data()
        cdef double* yu2 = self.yu2.data()
        cdef double* yd2 = self.yd2.data()
        for it in range(self.P * self.P):
            self.arcs()
            nx = ny = 0
            for b in range(self.P):
                if self.in_a[b]:
                    self.xs[nx] = b
                    nx += 1
                else:
                    a, b2 = self.at_h[b], self.at_l[b]
                    self.ys[ny] = b
                    ya[ny] = a
                    yb[ny] = b2
                    yu1[ny] = self.su1[a]
                    yd1[ny] = self.sd1[a]
                    yu2[ny] = self.su2[b2]
                    yd2[ny] = self.sd2[b2]
                    ny += 1
            best, bx, by = self.eps, -1, -1
            for i in range(nx):
                b, a2 = self.at_h[self.xs[i]], self.at_l[self.xs[i]]
                u1b, d1b = self.su1[b], self.sd1[b]
                u2a, d2a = self.su2[a2], self.sd2[a2]
                for j in range(ny):
                    g = (u1b - yu1[j]) if ya[j] < b else (d1b - yd1[j])
                    g += (yu2[j] - u2a) if a2 < yb[j] else (yd2[j] - d2a)
                    if g > best:
                        best, bx, by = g, i, j
            if bx < 0:
                return
            self.in_a[self.xs[bx]] = 0
            self.in_a[self.ys[by]] = 1

    cdef bint certified(self) noexcept nogil:
        """Whether the residual network (arcs current) has no cycle gaining more than about
        eps per arc: Bellman-Ford from every node at once (all distances 0), a pass being a
        sweep of each path both ways and the bags' arcs; settled within 2P passes unless such
        a cycle exists."""
        cdef i64 it, i, b, P = self.P, k = self.P - self.m
        cdef double t, eps = self.eps
        cdef bint changed
        cdef double* d1 = self.d1.data()
        cdef double* d2 = self.d2.data()
        for i in range(P):
            d1[i] = 0.0
            d2[i] = 0.0
        for it in range(2 * P + 2):
            changed = False
            for i in range(P - 1):
                if self.n1[i] < self.m:
                    t = d1[i] - self.up1[i]
                    if t < d1[i + 1] - eps:
                        d1[i + 1] = t
                        changed = True
            for i in range(P - 2, -1, -1):
                if self.n1[i] > 0:
                    t = d1[i + 1] + self.dn1[i]
                    if t < d1[i] - eps:
                        d1[i] = t
                        changed = True
            for b in range(P):
                if self.in_a[b]:
                    t = d1[self.at_h[b]]
                    if t < d2[self.at_l[b]] - eps:
                        d2[self.at_l[b]] = t
                        changed = True
            for i in range(P - 1):
                if self.n2[i] < k:
                    t = d2[i] - self.up2[i]
                    if t < d2[i + 1] - eps:
                        d2[i + 1] = t
                        changed = True
            for i in range(P - 2, -1, -1):
                if self.n2[i] > 0:
                    t = d2[i + 1] + self.dn2[i]
                    if t < d2[i] - eps:
                        d2[i] = t
                        changed = True
            for b in range(P):
                if not self.in_a[b]:
                    t = d2[self.at_l[b]]
                    if t < d1[self.at_h[b]] - eps:
                        d1[self.at_h[b]] = t
                        changed = True
            if not changed:
                return True
        return False

    cdef bint solve(self, const double* c) noexcept nogil:
        """A best assignment for coefficients c (descending), from the current A: True when
        certified, False when a Hungarian solve must decide."""
        self.set_coefficients(c)
        if self.m == 0 or self.m == self.P:
            return True             # one group: its sorted matching
        if _SWAPS:
            self.swap_search()
        else:
            self.arcs()
        return self.certified()

    cdef double value(self) noexcept nogil:
        cdef i64 i, b, j = 0
        cdef double total = 0.0
        for i in range(self.P):
            b = self.by_h[i]
            if self.in_a[b]:
                total += self.cp[j] * self.hi[b]
                j += 1
        j = 0
        for i in range(self.P):
            b = self.by_l[i]
            if not self.in_a[b]:
                total += self.cn[j] * self.lo[b]
                j += 1
        return total

    cdef void coefficients(self, double* coef) noexcept nogil:
        """Each bag's column coefficient in the sorted matchings of A and of the rest."""
        cdef i64 i, b, j = 0
        for i in range(self.P):
            b = self.by_h[i]
            if self.in_a[b]:
                coef[b] = self.cp[j]
                j += 1
        j = 0
        for i in range(self.P):
            b = self.by_l[i]
            if not self.in_a[b]:
                coef[b] = self.cn[j]
                j += 1


cdef double _positive_value(_Split split, _Hungarian pos, const double* c) noexcept nogil:
    """The positive side's best value for columns of coefficients c (descending); a Hungarian
    solve where the split's certificate does not hold, its A then taken from that optimum."""
    global _FALLBACKS
    cdef i64 t, b
    if split.solve(c):
        return split.value()
    _FALLBACKS += 1
    for t in range(split.P):
        pos.coef[t] = c[t]
    pos.solve()
    for b in range(split.P):
        split.in_a[b] = pos.coef[pos.col_of[b]] >= 0
    split.set_coefficients(c)
    return pos.value()



def _split_assignment(double[::1] high, double[::1] low, double[::1] coef):
    """Tests only: the positive side's best value for columns of coefficients ``coef`` (any
    order) by :class:`_Split` (a Hungarian solve where it is not certified), and each bag's
    column coefficient."""
    cdef i64 P = high.shape[0]
    c = np.sort(np.asarray(coef, dtype=np.float64))[::-1].copy()
    out = np.empty(P)
    cdef double[::1] cv = c, ov = out
    cdef _Split split = _Split(high, low)
    cdef _Hungarian pos = _Hungarian(high, low)
    cdef double value
    with nogil:
        value = _positive_value(split, pos, &cv[0])
        split.coefficients(&ov[0])
    return value, out


cdef void _upper_bounds(_Hungarian neg, const i64* by_h, const i64* by_l, const double* c,
                        i64 L, double* bound, i64* hull) noexcept nogil:
    """bound[i] = max_x gain(x, c[i]) - u_x for L coefficients c descending, in O(N + L)
    instead of O(N L): for c >= 0 the upper envelope of the lines c high_x - u_x (by_h: the
    bags by high ascending), below it of c low_x - u_x (by_l likewise), walked with c. Each
    bound is padded by a few ulps of its terms, in case rounding let the envelope drop a line
    that ties: the Dijkstra it stops must never stop early."""
    cdef i64 i, j, n, x, N = neg.n, side
    cdef const i64* order
    cdef double cc, m1, m2, m3, b1, b2, b3, top, big = 0.0
    cdef const double* slope
    for x in range(N):
        big = max(big, max(fabs(neg.u[x]), max(fabs(neg.hi[x]), fabs(neg.lo[x]))))
    for side in range(2):
        order = by_h if side == 0 else by_l
        slope = neg.hi.data() if side == 0 else neg.lo.data()
        n = 0
        for j in range(N):
            x = order[j]
            if n and slope[hull[n - 1]] == slope[x]:
                if -neg.u[x] <= -neg.u[hull[n - 1]]:
                    continue
                n -= 1
            # drop the last line while it is nowhere above both neighbours
            while n >= 2:
                m1, b1 = slope[hull[n - 2]], -neg.u[hull[n - 2]]
                m2, b2 = slope[hull[n - 1]], -neg.u[hull[n - 1]]
                m3, b3 = slope[x], -neg.u[x]
                if (b1 - b2) * (m3 - m2) >= (b2 - b3) * (m2 - m1):
                    n -= 1
                else:
                    break
            hull[n] = x
            n += 1
        # c ascending (i descending), the best line moves to steeper slopes
        j = 0
        for i in range(L - 1, -1, -1):
            cc = c[i]
            if (cc >= 0) != (side == 0):
                continue
            while j + 1 < n and (cc * slope[hull[j + 1]] - neg.u[hull[j + 1]]
                                 >= cc * slope[hull[j]] - neg.u[hull[j]]):
                j += 1
            top = cc * slope[hull[j]] - neg.u[hull[j]]
            bound[i] = top + 1e-14 * (fabs(cc) + 1.0) * big


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
    cdef _Split split = _Split(pos_high, pos_low)
    cdef i64[::1] neg_by_h = np.argsort(neg_high, kind="stable").astype(np.int64)
    cdef i64[::1] neg_by_l = np.argsort(neg_low, kind="stable").astype(np.int64)
    with nogil:
        _run(P, N, H, pos_order, pos, neg, split, &neg_by_h[0], &neg_by_l[0], tol, neg_ranks,
             pos_coef, neg_coef)
    return neg_ranks_a, pos_coef_a, neg_coef_a


cdef int _run(i64 P, i64 N, double[::1] H, i64[::1] pos_order, _Hungarian pos, _Hungarian neg,
              _Split split, const i64* neg_by_h, const i64* neg_by_l, double tol,
              i64[::1] neg_ranks, double[::1] pos_coef, double[::1] neg_coef) except -1 nogil:
    cdef double scale = 1.0 / (<double>P * N), next_check = first_check()
    cdef double best, top, fixed_value, delta_fixed, delta, pos_v, neg_v, c_hi, c_lo, c, g
    cdef double neg_base, rise, slope
    cdef i64 k, r, q, p, b, x, i, L, lowest, chosen, y0
    cdef bint mixed = False, needed
    cdef vector[double] S, values, cr, bound, best_of, coefs, share, rest, V
    cdef vector[i64] above_of              # per positive slot p (1-based), negatives above it
    cdef vector[i64] hull
    hull.assign(N, 0)
    S.assign(P + 1, 0.0)
    for p in range(P):
        S[p + 1] = S[p] + H[p]
    cr.assign(P, 0.0)
    bound.assign(P, 0.0)
    best_of.assign(P, 0.0)
    values.assign(P + 1, 0.0)
    above_of.assign(P + 1, 0)
    coefs.assign(P, 0.0)
    # per rank of a scan: the loss term over P (share), the negative side's value (rest), the
    # positive side's (V)
    share.assign(P + 1, 0.0)
    rest.assign(P + 1, 0.0)
    V.assign(P + 1, 0.0)

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
        # some positive slot may now take a negative coefficient: from here on the positive
        # side is no sorted matching but a split (see _Split)
        mixed = c_lo < 0
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
            best_of[i] = -INFINITY
        _upper_bounds(neg, neg_by_h, neg_by_l, cr.data(), L, bound.data(), hull.data())
        neg.best_leaving(y0, k, cr.data(), L, bound.data(), best_of.data())
        # the scan: slot k at rank r = lowest ... P; positives p >= r have k + 1 negatives
        # above, those in lowest ... r - 1 have k
        delta = delta_fixed
        for p in range(lowest, P + 1):
            delta += _ap_term(p, k + 1.0)
        for r in range(lowest, P + 1):
            if r > lowest:
                delta += _ap_term(r - 1, <double>k) - _ap_term(r - 1, k + 1.0)
            share[r] = delta / P
            rest[r] = neg_base + best_of[r - lowest]
            values[r] = -INFINITY
        top = -INFINITY
        if not mixed:
            for r in range(lowest, P + 1):
                pos_v = (fixed_value + c_hi * (S[r - 1] - S[lowest - 1])
                         + c_lo * (S[P] - S[r - 1]))
                values[r] = share[r] + pos_v + rest[r]
                if values[r] > top:
                    top = values[r]
        else:
            # V(r), the positive side's value, costs a search each: ranks are taken in order
            # and the scan stops once none left can come within tol of the best. V is concave
            # in r (the optimum of a transportation problem in the count of one column), and
            # each step adds at most max_b (gain at c_hi - gain at c_lo) (the new column's bag
            # back at c_lo is an assignment of the rank before), so V(q) <= V(r) + (q - r)
            # slope for q > r. Twice tol: a margin for rounding, far above it
            rise = -INFINITY
            for b in range(P):
                rise = max(rise, _gain(c_hi, pos.hi[b], pos.lo[b])
                           - _gain(c_lo, pos.hi[b], pos.lo[b]))
            for p in range(1, lowest):
                coefs[p - 1] = (N - 2.0 * above_of[p]) * scale
            for p in range(lowest, P + 1):
                coefs[p - 1] = c_lo
            for r in range(lowest, P + 1):
                if r > lowest:
                    slope = rise if r - 1 == lowest else min(rise, V[r - 1] - V[r - 2])
                    needed = False
                    for q in range(r, P + 1):
                        if share[q] + V[r - 1] + (q - r + 1) * slope + rest[q] >= top - 2 * tol:
                            needed = True
                            break
                    if not needed:
                        break
                    coefs[r - 2] = c_hi
                V[r] = _positive_value(split, pos, coefs.data())
                values[r] = share[r] + V[r] + rest[r]
                if values[r] > top:
                    top = values[r]
                check_signals(&next_check)
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
    for p in range(1, P + 1):
        coefs[p - 1] = (N - 2.0 * above_of[p]) * scale
    if coefs[P - 1] < 0:
        _positive_value(split, pos, coefs.data())
        split.coefficients(&pos_coef[0])
    else:
        for p in range(1, P + 1):
            pos_coef[pos_order[p - 1]] = coefs[p - 1]
    return 0
