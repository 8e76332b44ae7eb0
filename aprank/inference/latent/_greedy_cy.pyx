# distutils: language = c++
"""Behl (2015), appendix A's greedy for the latent SSVM, compiled.

The greedy (see ``run_latent_greedy``) moves the negative slots up one at a time, each to the
rank of largest loss-augmented score with the others fixed. Scoring one pattern takes two
assignments of bags to slots, one per side, of gains g(b, c) = max_h c s_b(h) = c high_b for
c >= 0, c low_b below (eqs. A.6-A.9). Within each sign the best arrangement is the sorted
matching (rearrangement inequality), so an assignment is the split of the bags between the
slots >= 0 and the others, and a _Split finds and certifies the best one without dual
potentials (a flow along the bags in order of high and of low, certified by Bellman-Ford
sweeps of O(n) each; see its docstring). Dual potentials (the dynamic Hungarian algorithm,
Korsah, Stentz & Dias 2007) would make every change of one column cost O(n^2), as it moves
the potentials of every column below it: on trained bags where most negatives move, nearly
all of a run.

* negative side: scanning slot k, the other slots' columns with one bag left over (the one in
  a bottom column, as freeing slot k's column leaves it); W(x), the best assignment that
  leaves x over instead, for every bag x from one Bellman-Ford from the left-over node; slot k
  at rank r is worth max_x W(x) + g(x, c_r), every rank from one upper envelope in O(N + L).
  The next slot starts from the chosen pattern's optimum (the least-cost path to the bag that
  took slot k applied), so its certificate mostly holds at once.
* positive side: while every positive slot's coefficient is >= 0 (slot k's lower coefficient
  (N - 2(k + 1)) / (P N) >= 0: fewer than half the negatives moved) every gain is c high_b and
  the optimum is the sorted matching: O(1) per rank from prefix sums of the sorted highs. Past
  that each rank takes a _Split search from the last one's split, and the scan stops once no
  rank left can come within the rounding of the best (the value is concave in the rank).

Every comparison of two ranks (or of a rank and staying) sums the terms that differ between
them, compensated, and ties within REL of those terms' magnitude: see REL.

The loss of each pattern is updated in O(1) along a scan (one positive's negatives-above count
changes per rank). Exact: the same optimum values as solving every pattern anew (tested against
the reference greedy, which uses ``scipy.optimize.linear_sum_assignment``); where a _Split's
certificate does not hold after its swap search a Hungarian solve decides (not met in testing
with the greedy's coefficients; the tests reach it through ``_split_assignment`` with coefficients
large enough that rounding exceeds the split's tolerance).
"""
from libc.math cimport INFINITY, fabs
from libcpp.vector cimport vector

import numpy as np

from aprank.inference._interrupt cimport check_signals, first_check
from aprank.inference._kernel cimport i64


# Rounding allowance of a comparison, relative to the magnitude of the terms summed into the
# quantities it compares (not to the values themselves, which may cancel): a few ulps for
# each of the dozens of roundings a value takes on its way (a path of Bellman-Ford arcs, an
# envelope's line, a compensated sum). Each decision carries the magnitudes of its own terms,
# so a score far from the ones a decision compares changes nothing.
cdef double REL = 1e-13


cdef inline double _gain(double c, double hi, double lo) noexcept nogil:
    return c * hi if c >= 0 else c * lo


cdef inline void _add(double* s, double* comp, double x) noexcept nogil:
    """s + comp += x, compensated (Neumaier 1974): the sum's error stays a few ulps of the
    magnitude of its terms however many there are."""
    cdef double t = s[0] + x
    if fabs(s[0]) >= fabs(x):
        comp[0] += (s[0] - t) + x
    else:
        comp[0] += (x - t) + s[0]
    s[0] = t


cdef class _Hungarian:
    """A square maximum-gain assignment of bags (rows) to slots (columns) of coefficients
    ``coef``, gain(b, t) = c_t high_b for c_t >= 0, c_t low_b below (a column of coefficient 0,
    gain 0 for every bag, is a left-over bag's), solved from scratch with dual potentials
    (O(n^3)): :class:`_Split`'s fallback where its certificate does not hold."""

    cdef i64 n, end
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

    cdef int solve(self, double* next_check) except -1 nogil:
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
            check_signals(next_check)
        return 0

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

    cdef double value(self) noexcept nogil:
        cdef i64 b
        cdef double total = 0.0
        for b in range(self.n):
            if self.col_of[b] >= 0:
                total += self.gain(b, self.col_of[b])
        return total


cdef enum:
    # where a bag of a _Split goes: a column of coefficient < 0, >= 0, or none (the one bag
    # left over when there is one column fewer than bags)
    IN_B = 0
    IN_A = 1
    LEFT = 2


cdef class _Split:
    """A best assignment of n bags to n columns, or to n - 1 with a given bag left over, of
    gains gain(b, c) = c high_b for c >= 0, c low_b below, found without dual potentials.

    Within each sign the best arrangement is the sorted matching (rearrangement inequality),
    so an assignment is the set A of bags in the m columns >= 0 and the set B in the others.
    By Abel summation over the bags in order of high (h_[1] >= h_[2] >= ...) A's sorted
    matching is sum_i (h_[i] - h_[i+1]) Pc(n_i) + Pc(m) h_[n], n_i the members of A among the
    first i and Pc(n) the sum of the n largest coefficients, concave in n; B's likewise in
    order of low. So the value is a separable concave gain of a flow: a unit per bag, along one
    of two paths (the bags by high for A, by low for B) into sinks of demands m and the number
    of columns < 0. A flow is optimal exactly when its residual network (each path arc one
    unit up or down at its marginal gain, each bag an arc from the path it uses to the other)
    has no cycle of positive gain: that is the certificate, Bellman-Ford sweeps of O(n) each.
    A cycle through two bags is a swap (its gain two prefix-sum differences); swaps are
    searched when the certificate does not hold at once, and where it still does not (a
    positive cycle through more bags, or rounding beyond REL of the magnitudes on the cycle)
    the caller solves a Hungarian assignment instead.

    ``base`` (0 by default) is subtracted from every gain of a bag, as base low_b: a constant
    of the full assignment, but it makes the gain of a column of coefficient ``base`` exactly
    0 whatever the bag's score. The greedy's negative side sets it to the unmoved slots'
    coefficient, so that the bags in those columns, however far their scores, add nothing to
    the path costs that compare placements of the others. B's columns then carry c - base
    (Abel form on low), and a bag that joins A carries -base low_b on its bag arc.

    With a bag left over (a third node, with arcs to both paths from it), W(x), the best value
    that leaves x over instead, is the best value less the least cost of a path from the
    left-over node to the path x uses (no positive cycle: the difference of the two flows is
    that path and cycles of no gain): one Bellman-Ford from that node, O(n) a pass, instead of
    a Dijkstra over the dense n x n graph."""

    cdef i64 n, nc, m
    cdef double base
    # the bags by high (low), descending, and each bag's place in that order
    cdef vector[i64] by_h, by_l, at_h, at_l
    # arc i of a path joins places i and i + 1; its weight is h_[i] - h_[i+1] (low's likewise)
    cdef vector[double] wh, wl, hi, lo
    # the coefficients >= 0 and the others less base, each descending (cnt: the others as
    # given)
    cdef vector[double] cp, cn, cnt
    cdef vector[char] where
    # per arc: its flow (members of A above it on path 1, of B on path 2), the gain of one unit
    # more (up) and the loss of one unit less (down), and prefix sums of both
    cdef vector[i64] n1, n2
    cdef vector[double] up1, dn1, up2, dn2, su1, sd1, su2, sd2, d1, d2
    cdef double d0
    # per node of a Bellman-Ford, the magnitude of the terms summed into its distance (the
    # scale of its rounding)
    cdef vector[double] m1, m2
    cdef double m0
    # the last Bellman-Ford from the left-over node: each place's predecessor (places of path
    # 1 are 0 ... n - 1, of path 2 n ... 2n - 1, the left-over node 2n) and the bag whose arc
    # led there (-1: a path arc)
    cdef vector[i64] pred, via
    # members of A, of B: places and prefix sums, contiguous for the swap search
    cdef vector[i64] xs, ys, ya, yb
    cdef vector[double] yu1, yd1, yu2, yd2

    def __cinit__(self, double[::1] hi, double[::1] lo):
        cdef i64 b, i, n = hi.shape[0]
        self.n = n
        self.base = 0.0
        self.hi.resize(n)
        self.lo.resize(n)
        for b in range(n):
            self.hi[b] = hi[b]
            self.lo[b] = lo[b]
        cdef i64[::1] oh = np.argsort(-np.asarray(hi), kind="stable").astype(np.int64)
        cdef i64[::1] ol = np.argsort(-np.asarray(lo), kind="stable").astype(np.int64)
        self.by_h.resize(n)
        self.by_l.resize(n)
        self.at_h.resize(n)
        self.at_l.resize(n)
        for i in range(n):
            self.by_h[i] = oh[i]
            self.by_l[i] = ol[i]
            self.at_h[oh[i]] = i
            self.at_l[ol[i]] = i
        self.wh.assign(n, 0.0)
        self.wl.assign(n, 0.0)
        for i in range(n - 1):
            self.wh[i] = self.hi[oh[i]] - self.hi[oh[i + 1]]
            self.wl[i] = self.lo[ol[i]] - self.lo[ol[i + 1]]
        self.where.assign(n, IN_B)
        self.nc = n
        self.m = 0
        self.cp.reserve(n)
        self.cn.reserve(n)
        self.cnt.reserve(n)
        self.m1.assign(n, 0.0)
        self.m2.assign(n, 0.0)
        self.m0 = 0.0
        self.n1.assign(n, 0)
        self.n2.assign(n, 0)
        self.pred.assign(2 * n, -1)
        self.via.assign(2 * n, -1)
        self.up1.assign(n, 0.0)
        self.dn1.assign(n, 0.0)
        self.up2.assign(n, 0.0)
        self.dn2.assign(n, 0.0)
        self.su1.assign(n, 0.0)
        self.sd1.assign(n, 0.0)
        self.su2.assign(n, 0.0)
        self.sd2.assign(n, 0.0)
        self.d1.assign(n, 0.0)
        self.d2.assign(n, 0.0)
        self.xs.assign(n, 0)
        self.ys.assign(n, 0)
        self.ya.assign(n, 0)
        self.yb.assign(n, 0)
        self.yu1.assign(n, 0.0)
        self.yd1.assign(n, 0.0)
        self.yu2.assign(n, 0.0)
        self.yd2.assign(n, 0.0)

    cdef void set_coefficients(self, const double* c, i64 nc) noexcept nogil:
        """The nc (n or n - 1) columns' coefficients, descending; the bags moved to fit the
        new counts. With one column fewer, B's bag of lowest low is left over: it holds the
        bottom column, and an optimum less a column and its bag is optimal for the rest (the
        greedy's slot k is such a column). Then A's bag of lowest high moves to B, or B's of
        highest high to A, while A's size is not m: only a start for the search."""
        cdef i64 t, i, b, size_a = 0, size_b = 0
        self.nc = nc
        self.cp.clear()
        self.cn.clear()
        self.cnt.clear()
        for t in range(nc):
            if c[t] >= 0:
                self.cp.push_back(c[t])
            else:
                self.cn.push_back(c[t] - self.base)
                self.cnt.push_back(c[t])
        self.m = self.cp.size()
        for b in range(self.n):
            if self.where[b] == LEFT and nc == self.n:
                self.where[b] = IN_B
            size_a += self.where[b] == IN_A
            size_b += self.where[b] == IN_B
        if size_a + size_b > nc:
            for i in range(self.n - 1, -1, -1):
                b = self.by_l[i]
                if self.where[b] == IN_B:
                    self.where[b] = LEFT
                    size_b -= 1
                    break
            else:
                for i in range(self.n - 1, -1, -1):
                    b = self.by_h[i]
                    if self.where[b] == IN_A:
                        self.where[b] = LEFT
                        size_a -= 1
                        break
        i = 0
        while size_a < self.m:
            b = self.by_h[i]
            if self.where[b] == IN_B:
                self.where[b] = IN_A
                size_a += 1
            i += 1
        i = self.n - 1
        while size_a > self.m:
            b = self.by_h[i]
            if self.where[b] == IN_A:
                self.where[b] = IN_B
                size_a -= 1
            i -= 1

    cdef void arcs(self) noexcept nogil:
        """Each path arc's flow, marginal gains and their prefix sums, for the current sets."""
        cdef i64 i, f = 0, k = self.nc - self.m
        cdef double u, d
        for i in range(self.n - 1):
            f += self.where[self.by_h[i]] == IN_A
            self.n1[i] = f
            u = self.wh[i] * self.cp[f] if f < self.m else 0.0
            d = self.wh[i] * self.cp[f - 1] if f > 0 else 0.0
            self.up1[i] = u
            self.dn1[i] = d
            self.su1[i + 1] = self.su1[i] + u
            self.sd1[i + 1] = self.sd1[i] + d
        f = 0
        for i in range(self.n - 1):
            f += self.where[self.by_l[i]] == IN_B
            self.n2[i] = f
            u = self.wl[i] * self.cn[f] if f < k else 0.0
            d = self.wl[i] * self.cn[f - 1] if f > 0 else 0.0
            self.up2[i] = u
            self.dn2[i] = d
            self.su2[i + 1] = self.su2[i] + u
            self.sd2[i + 1] = self.sd2[i] + d

    cdef int swap_search(self, double* next_check) except -1 nogil:
        """Best swaps (a member x of A and one y of B trade sets) until none gains more than
        the rounding of its terms; leaves the arcs current."""
        cdef i64 _round, i, j, b, a2, nx, ny, bx, by
        cdef double g, best, u1b, d1b, u2a, d2a, mag, bl, lx
        cdef i64* ya = self.ya.data()
        cdef i64* yb = self.yb.data()
        cdef double* yu1 = self.yu1.data()
        cdef double* yd1 = self.yd1.data()
        cdef double* yu2 = self.yu2.data()
        cdef double* yd2 = self.yd2.data()
        for _round in range(self.n * self.n):
            self.arcs()
            nx = ny = 0
            for b in range(self.n):
                if self.where[b] == IN_A:
                    self.xs[nx] = b
                    nx += 1
                elif self.where[b] == IN_B:
                    self.ys[ny] = b
                    ya[ny] = self.at_h[b]
                    yb[ny] = self.at_l[b]
                    yu1[ny] = self.su1[ya[ny]]
                    yd1[ny] = self.sd1[ya[ny]]
                    yu2[ny] = self.su2[yb[ny]]
                    yd2[ny] = self.sd2[yb[ny]]
                    ny += 1
            best, bx, by = 0.0, -1, -1
            bl = self.base
            for i in range(nx):
                b, a2 = self.at_h[self.xs[i]], self.at_l[self.xs[i]]
                u1b, d1b = self.su1[b], self.sd1[b]
                u2a, d2a = self.su2[a2], self.sd2[a2]
                lx = bl * self.lo[self.xs[i]]
                for j in range(ny):
                    # x leaves A (its -base low back), y joins it
                    g = (u1b - yu1[j]) if ya[j] < b else (d1b - yd1[j])
                    g += (yu2[j] - u2a) if a2 < yb[j] else (yd2[j] - d2a)
                    if bl != 0:
                        g += lx - bl * self.lo[self.ys[j]]
                    if g > best:
                        # a gain within the rounding of the prefix sums it differences is none
                        mag = (fabs(u1b) + fabs(d1b) + fabs(yu1[j]) + fabs(yd1[j]) + fabs(u2a)
                               + fabs(d2a) + fabs(yu2[j]) + fabs(yd2[j]) + fabs(lx)
                               + fabs(bl * self.lo[self.ys[j]]))
                        if g > REL * mag:
                            best, bx, by = g, i, j
            if bx < 0:
                return 0
            self.where[self.xs[bx]] = IN_B
            self.where[self.ys[by]] = IN_A
            check_signals(next_check)
        return 0

    cdef inline bint lower(self, double* d, double* m, i64 node, double t, double mt, i64 src,
                           i64 bag, bint track) noexcept nogil:
        # t is a shorter distance only beyond the rounding of both (the magnitudes of the
        # terms summed into each): a cycle of no gain never relaxes for ever
        if t < d[0] - REL * (mt + m[0]):
            d[0] = t
            m[0] = mt
            if track:
                self.pred[node] = src
                self.via[node] = bag
            return True
        return False

    cdef i64 sweeps(self, i64 limit, bint track, double* next_check) except -2 nogil:
        """Bellman-Ford passes over the residual network from the distances in d1, d2 (the
        paths' places) and d0 (the left-over node), costs the negated gains: each pass sweeps
        each path both ways and the bags' arcs (with ``track``, recording predecessors).
        Returns the passes taken to settle, or -1 if not settled within ``limit``."""
        cdef i64 it, i, b, n = self.n, k = self.nc - self.m, h, lw
        cdef bint changed
        cdef double* d1 = self.d1.data()
        cdef double* d2 = self.d2.data()
        cdef double* m1 = self.m1.data()
        cdef double* m2 = self.m2.data()
        cdef double a
        cdef char w
        for it in range(limit):
            changed = False
            for i in range(n - 1):
                if self.n1[i] < self.m:
                    a = self.up1[i]
                    changed |= self.lower(&d1[i + 1], &m1[i + 1], i + 1, d1[i] - a,
                                          m1[i] + fabs(a), i, -1, track)
            for i in range(n - 2, -1, -1):
                if self.n1[i] > 0:
                    a = self.dn1[i]
                    changed |= self.lower(&d1[i], &m1[i], i, d1[i + 1] + a, m1[i + 1] + fabs(a),
                                          i + 1, -1, track)
            for i in range(n - 1):
                if self.n2[i] < k:
                    a = self.up2[i]
                    changed |= self.lower(&d2[i + 1], &m2[i + 1], n + i + 1, d2[i] - a,
                                          m2[i] + fabs(a), n + i, -1, track)
            for i in range(n - 2, -1, -1):
                if self.n2[i] > 0:
                    a = self.dn2[i]
                    changed |= self.lower(&d2[i], &m2[i], n + i, d2[i + 1] + a,
                                          m2[i + 1] + fabs(a), n + i + 1, -1, track)
            # a bag's arcs: from the node it uses to the other (and from the left-over node;
            # none into it: the bag left over is given); joining A costs base low_b
            for b in range(n):
                w = self.where[b]
                h, lw = self.at_h[b], self.at_l[b]
                a = self.base * self.lo[b]
                if w == IN_A:
                    changed |= self.lower(&d2[lw], &m2[lw], n + lw, d1[h] - a, m1[h] + fabs(a), h,
                                          b, track)
                elif w == IN_B:
                    changed |= self.lower(&d1[h], &m1[h], h, d2[lw] + a, m2[lw] + fabs(a), n + lw,
                                          b, track)
                else:
                    changed |= self.lower(&d1[h], &m1[h], h, self.d0 + a, self.m0 + fabs(a),
                                          2 * n, b, track)
                    changed |= self.lower(&d2[lw], &m2[lw], n + lw, self.d0, self.m0, 2 * n, b,
                                          track)
            if not changed:
                return it + 1
            check_signals(next_check)
        return -1

    cdef int certified(self, i64 limit, double* next_check) except -1 nogil:
        """Whether the residual network (arcs current) has no cycle gaining more than the
        rounding of its arcs: Bellman-Ford from every node at once (all distances 0); settled
        within 2n + 2 passes unless there is such a cycle (``limit`` passes tried)."""
        cdef i64 i
        for i in range(self.n):
            self.d1[i] = 0.0
            self.d2[i] = 0.0
            self.m1[i] = 0.0
            self.m2[i] = 0.0
        self.d0 = 0.0
        self.m0 = 0.0
        return self.sweeps(limit, False, next_check) >= 0

    cdef int solve(self, const double* c, i64 nc, double* next_check) except -1 nogil:
        """A best assignment to nc columns of coefficients c (descending; with nc = n - 1,
        the best with the left-over bag over), from the current sets: True when certified,
        False when a Hungarian solve must decide."""
        self.set_coefficients(c, nc)
        if (self.m == 0 or self.m == nc) and nc == self.n:
            return True             # one group: its sorted matching
        self.arcs()
        # from a good start the certificate settles in a few passes; else search first
        if self.certified(8, next_check):
            return True
        self.swap_search(next_check)
        return self.certified(2 * self.n + 2, next_check)

    cdef int leaving(self, double* W, double* mag, double* next_check) except -1 nogil:
        """With a bag left over and the sets optimal: W[x], the best value (its gains less
        base low_b) that leaves x over instead, less the best value now (0 for the bag left
        over now): minus the least cost of a path from the left-over node (Bellman-Ford from
        it alone, arcs current); mag[x], the magnitude of the terms summed into W[x]. Relative
        to the optimum, so that W[x] rounds at the scale of the bags the path moves."""
        cdef i64 i, b
        for i in range(self.n):
            self.d1[i] = INFINITY
            self.d2[i] = INFINITY
            self.m1[i] = 0.0
            self.m2[i] = 0.0
        self.d0 = 0.0
        self.m0 = 0.0
        self.sweeps(2 * self.n + 2, True, next_check)
        for b in range(self.n):
            if self.where[b] == IN_A:
                # x leaves A: its -base low_x goes with it
                W[b] = self.base * self.lo[b] - self.d1[self.at_h[b]]
                mag[b] = self.m1[self.at_h[b]] + fabs(self.base * self.lo[b])
            elif self.where[b] == IN_B:
                W[b] = -self.d2[self.at_l[b]]
                mag[b] = self.m2[self.at_l[b]]
            else:
                W[b] = 0.0
                mag[b] = 0.0
        return 0

    cdef void leave_over(self, i64 x) noexcept nogil:
        """After :meth:`leaving`: the sets of the best assignment that leaves x over, the
        least-cost path from the left-over node to x's node applied (each bag arc on it moves
        its bag to the arc's head). Leaves the sets as they were if the predecessors do not
        lead back (rounding)."""
        cdef i64 n = self.n, v, u, steps = 0
        v = self.at_h[x] if self.where[x] == IN_A else n + self.at_l[x]
        if self.where[x] == LEFT:
            return
        while v != 2 * n:
            v = self.pred[v]
            steps += 1
            if v < 0 or steps > 2 * n + 1:
                return
        v = self.at_h[x] if self.where[x] == IN_A else n + self.at_l[x]
        self.where[x] = LEFT
        while v != 2 * n:
            u = self.pred[v]
            if self.via[v] >= 0:
                self.where[self.via[v]] = IN_A if v < n else IN_B
            v = u

    cdef void take(self, _Hungarian h, i64 dummy) noexcept nogil:
        """The sets of the Hungarian's optimum (column ``dummy``, if >= 0, is the left-over
        bag's)."""
        cdef i64 b, t
        for b in range(self.n):
            t = h.col_of[b]
            self.where[b] = LEFT if t == dummy else (IN_A if h.coef[t] >= 0 else IN_B)
        self.arcs()

    cdef double value(self) noexcept nogil:
        cdef i64 i, b, j = 0
        cdef double total = 0.0
        for i in range(self.n):
            b = self.by_h[i]
            if self.where[b] == IN_A:
                total += self.cp[j] * self.hi[b]
                j += 1
        j = 0
        for i in range(self.n):
            b = self.by_l[i]
            if self.where[b] == IN_B:
                total += self.cnt[j] * self.lo[b]
                j += 1
        return total

    cdef void coefficients(self, double* coef) noexcept nogil:
        """Each bag's column coefficient in the sorted matchings of A and B (no bag left
        over)."""
        cdef i64 i, b, j = 0
        for i in range(self.n):
            b = self.by_h[i]
            if self.where[b] == IN_A:
                coef[b] = self.cp[j]
                j += 1
        j = 0
        for i in range(self.n):
            b = self.by_l[i]
            if self.where[b] == IN_B:
                coef[b] = self.cnt[j]
                j += 1


cdef int _split_value(_Split split, _Hungarian h, const double* c, i64 nc, double* value,
                      double* next_check) except -1 nogil:
    """value[0]: the best value for nc columns of coefficients c (descending) by the split; a
    Hungarian solve where its certificate does not hold (a column of coefficient 0 for the
    left-over bag), the split's sets then taken from that optimum."""
    cdef i64 t
    if not split.solve(c, nc, next_check):
        for t in range(nc):
            h.coef[t] = c[t]
        if nc < split.n:
            h.coef[nc] = 0.0
        h.solve(next_check)
        split.take(h, nc if nc < split.n else -1)
    value[0] = split.value()
    return 0


def _split_assignment(double[::1] high, double[::1] low, double[::1] coef):
    """A :class:`_Split`'s best assignment (tests only; a Hungarian solve where it is not
    certified).

    Parameters
    ----------
    high, low : ndarray of float64 (n,)
        Each bag's highest and lowest score.
    coef : ndarray of float64 (n,) or (n - 1,)
        The columns' coefficients, in any order; with n - 1, one bag is left over (the split
        picks which).

    Returns
    -------
    value : float
        The best value (with a bag left over: the best that leaves the split's pick over).
    bag_coef : ndarray of float64 (n,)
        Each bag's column coefficient (nan for the bag left over).
    left_over : ndarray of float64 (n,)
        With a bag left over, each bag's best value when it is the one left over (W); nan
        otherwise.
    """
    cdef i64 n = high.shape[0], nc = coef.shape[0], b
    c = np.sort(np.asarray(coef, dtype=np.float64))[::-1].copy()
    out = np.full(n, np.nan)
    W = np.full(n, np.nan)
    mag = np.zeros(n)
    cdef double[::1] cv = np.r_[c, 0.0], ov = out, wv = W, mv = mag
    cdef _Split split = _Split(high, low)
    cdef _Hungarian h = _Hungarian(high, low)
    cdef double value, next_check = first_check()
    if nc != n and nc != n - 1:
        raise ValueError("one column a bag, or one fewer")
    with nogil:
        _split_value(split, h, &cv[0], nc, &value, &next_check)
        split.coefficients(&ov[0])
        if nc < n:
            split.leaving(&wv[0], &mv[0], &next_check)
    for b in range(n):
        if split.where[b] == LEFT:
            out[b] = np.nan
    if nc < n:
        W += value
    return value, out, W


cdef void _envelope(const double* hi, const double* lo, const double* icpt_h,
                    const double* icpt_l, const i64* by_h, const i64* by_l, i64 n,
                    const double* c, const double* c_l, i64 L, i64* arg,
                    i64* hull) noexcept nogil:
    """arg[i]: the x of max_x line_x(c[i]) for L coefficients c descending, in O(n + L)
    instead of O(n L): for c >= 0 the upper envelope of the lines c high_x + icpt_h[x] (by_h:
    the bags by high ascending), below 0 of c_l[i] low_x + icpt_l[x] (by_l likewise; c_l
    ascends with c), walked with c."""
    cdef i64 i, j, k, x, side
    cdef const i64* order
    cdef const double* slope
    cdef const double* icpt
    cdef double cc, m1, m2, m3, b1, b2, b3
    for side in range(2):
        order = by_h if side == 0 else by_l
        slope = hi if side == 0 else lo
        icpt = icpt_h if side == 0 else icpt_l
        k = 0
        for j in range(n):
            x = order[j]
            if k and slope[hull[k - 1]] == slope[x]:
                if icpt[x] <= icpt[hull[k - 1]]:
                    continue
                k -= 1
            # drop the last line while it is nowhere above both neighbours
            while k >= 2:
                m1, b1 = slope[hull[k - 2]], icpt[hull[k - 2]]
                m2, b2 = slope[hull[k - 1]], icpt[hull[k - 1]]
                m3, b3 = slope[x], icpt[x]
                if (b1 - b2) * (m3 - m2) >= (b2 - b3) * (m2 - m1):
                    k -= 1
                else:
                    break
            hull[k] = x
            k += 1
        # c ascending (i descending): the best line moves to steeper slopes
        j = 0
        for i in range(L - 1, -1, -1):
            if (c[i] >= 0) != (side == 0):
                continue
            cc = c[i] if side == 0 else c_l[i]
            while j + 1 < k and (cc * slope[hull[j + 1]] + icpt[hull[j + 1]]
                                 >= cc * slope[hull[j]] + icpt[hull[j]]):
                j += 1
            arg[i] = hull[j]


def latent_greedy(double[::1] pos_high, double[::1] pos_low, double[::1] neg_high,
                  double[::1] neg_low):
    """The greedy's negative slots' ranks and each bag's slot coefficient.

    Parameters
    ----------
    pos_high, pos_low, neg_high, neg_low : ndarray of float64
        Per positive (negative) bag, its highest and lowest candidate score (P and N >= 1
        entries), high >= low.

    Returns
    -------
    neg_ranks : ndarray of int64 (N,)
        The interleaving rank of each negative slot (non-decreasing).
    pos_coef, neg_coef : ndarray of float64 (P,), (N,)
        The coefficient of the slot each bag takes in the final pattern's assignments.

    Notes
    -----
    Each scan compares the values of its ranks as differences from staying, summed from the
    terms that differ (a loss term per positive passed, the score terms of the bags whose
    column changes), and two ranks tie within the rounding of those terms (REL of their
    magnitudes): a slot moves unless every rank loses more than that against staying, to the
    highest place among the ranks tied with its best. So neither a constant added to every
    score nor a score far from the ones a decision compares changes a decision.
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
    cdef _Hungarian pos = _Hungarian(pos_high, pos_low)
    cdef _Hungarian neg = _Hungarian(neg_high, neg_low)
    cdef _Split pos_split = _Split(pos_high, pos_low)
    cdef _Split neg_split = _Split(neg_high, neg_low)
    cdef i64[::1] neg_by_h = np.argsort(neg_high, kind="stable").astype(np.int64)
    cdef i64[::1] neg_by_l = np.argsort(neg_low, kind="stable").astype(np.int64)
    with nogil:
        _run(P, N, H, pos_order, pos, neg, pos_split, neg_split, &neg_by_h[0], &neg_by_l[0],
             neg_ranks, pos_coef, neg_coef)
    return neg_ranks_a, pos_coef_a, neg_coef_a


cdef double _relative_value(_Split split, _Hungarian h, const double* ref, double* cur,
                            double* mag) noexcept nogil:
    """The split's value less the value of the assignment ``ref`` (per bag, its column
    coefficient), summed over the bags whose coefficient differs (compensated): the bags
    that keep their column add exactly nothing. cur: the split's coefficients per bag; mag[0]:
    the magnitude of the terms."""
    cdef i64 b
    cdef double s = 0.0, comp = 0.0, a, z
    split.coefficients(cur)
    mag[0] = 0.0
    for b in range(split.n):
        if cur[b] != ref[b]:
            a = _gain(cur[b], h.hi[b], h.lo[b])
            z = _gain(ref[b], h.hi[b], h.lo[b])
            _add(&s, &comp, a)
            _add(&s, &comp, -z)
            mag[0] += fabs(a) + fabs(z)
    return s + comp


cdef inline double _between(const double* dloss, const double* dpos, const double* dpc,
                            const double* dneg, i64 r, i64 q) noexcept nogil:
    """Rank r's value less rank q's: each part's difference first (the positive side's as a
    compensated sum's two halves), so that what both ranks hold cancels exactly."""
    return ((dloss[r] - dloss[q]) + ((dpos[r] - dpos[q]) + (dpc[r] - dpc[q]))
            + (dneg[r] - dneg[q]))


cdef struct _Scan:
    # Per rank r = 1 .. P + 1 of slot k's scan (P + 2 entries each), relative to staying
    # (rank P + 1): the loss, the positive side's value as a compensated sum's two halves and
    # the magnitude of its terms, the negative side's value and magnitude, the rank's value D
    # and its tolerance T; inc[r - 1], minc[r - 1]: the positive side's step from rank r - 1
    # to r and its magnitude (a split search each, while slot k's coefficient is < 0).
    double* dloss
    double* dpos
    double* dpc
    double* mpos
    double* dneg
    double* mneg
    double* D
    double* T
    double* inc
    double* minc


cdef struct _NegativeWork:
    # The negative side's work space: the columns' coefficients (ncoef), each bag's best value
    # when left over (W), its magnitude (Wm) and less beta low (Wh), N entries each; per rank
    # its coefficient (cr) and cr - beta (cr_l), P + 2 entries, the bag that takes slot k there
    # (taker, P + 2) and the envelope's hull (N).
    double* ncoef
    double* W
    double* Wm
    double* Wh
    double* cr
    double* cr_l
    i64* taker
    i64* hull


cdef inline void _scan_arrays(_Scan* S, vector[double]& buf, i64 P) noexcept nogil:
    """S's arrays, zeros, in ``buf``."""
    cdef i64 m = P + 2
    buf.assign(10 * m, 0.0)
    S.dloss = buf.data()
    S.dpos = S.dloss + m
    S.dpc = S.dpos + m
    S.mpos = S.dpc + m
    S.dneg = S.mpos + m
    S.mneg = S.dneg + m
    S.D = S.mneg + m
    S.T = S.D + m
    S.inc = S.T + m
    S.minc = S.inc + m


cdef inline void _negative_arrays(_NegativeWork* w, vector[double]& dbuf, vector[i64]& ibuf,
                                  i64 P, i64 N) noexcept nogil:
    """w's arrays, zeros, in ``dbuf`` and ``ibuf``."""
    dbuf.assign(4 * N + 2 * (P + 2), 0.0)
    ibuf.assign(N + P + 2, 0)
    w.ncoef = dbuf.data()
    w.W = w.ncoef + N
    w.Wm = w.W + N
    w.Wh = w.Wm + N
    w.cr = w.Wh + N
    w.cr_l = w.cr + (P + 2)
    w.taker = ibuf.data()
    w.hull = w.taker + (P + 2)


cdef inline void _loss_at_ranks(_Scan* S, i64 P, i64 k, i64 lowest) noexcept nogil:
    """S.dloss: the loss at rank r less at P + 1 for slot k (positive r ... P have one
    negative more above, each adding p / ((p + k)(p + k + 1)) / P), r = lowest .. P + 1."""
    cdef i64 r
    cdef double s = 0.0, comp = 0.0
    for r in range(P, lowest - 1, -1):
        _add(&s, &comp, r / ((r + <double>k) * (r + k + 1.0)))
        S.dloss[r] = (s + comp) / P
    S.dloss[P + 1] = 0.0


cdef inline int _negative_side(_Scan* S, _NegativeWork* w, i64 P, i64 N, i64 k, i64 lowest,
                               double scale, double beta, i64[::1] neg_ranks, _Hungarian neg,
                               _Split neg_split, const i64* neg_by_h, const i64* neg_by_l,
                               double* next_check) except -1 nogil:
    """S.dneg, S.mneg and w.taker at ranks lowest .. P + 1 for slot k.

    Slot k at rank r: the best assignment of the bags to the other slots (descending: the
    slots before k at their ranks, those after at P + 1) that leaves x over, W[x], plus x's
    gain in slot k, maximised over x: an upper envelope in c_r. Gains less beta low_x (the
    split's base), so that the bags left at P + 1 add 0."""
    cdef i64 j, b, r, L, xs, xr, R = P + 1
    cdef double scratch, g, gm
    for j in range(N - 1):
        w.ncoef[j] = (P + 2.0 - 2.0 * (neg_ranks[j] if j < k else P + 1)) * scale
    _split_value(neg_split, neg, w.ncoef, N - 1, &scratch, next_check)
    neg_split.leaving(w.W, w.Wm, next_check)
    for b in range(N):
        w.Wh[b] = w.W[b] - beta * neg.lo[b]
    L = R - lowest + 1
    for j in range(L):
        r = lowest + j
        w.cr[j] = (P + 2.0 - 2.0 * r) * scale
        w.cr_l[j] = 2.0 * (P + 1 - r) * scale          # cr - beta
    _envelope(neg.hi.data(), neg.lo.data(), w.Wh, w.W, neg_by_h, neg_by_l, N, w.cr, w.cr_l, L,
              &w.taker[lowest], w.hull)
    # staying: gain 0 for every bag at c = beta, the bag of the largest W takes it
    xs = w.taker[R]
    for r in range(lowest, R + 1):
        xr = w.taker[r]
        j = r - lowest
        if w.cr[j] >= 0:
            g = w.cr[j] * neg.hi[xr] - beta * neg.lo[xr]
            gm = fabs(w.cr[j] * neg.hi[xr]) + fabs(beta * neg.lo[xr])
        else:
            g = w.cr_l[j] * neg.lo[xr]
            gm = fabs(g)
        if xr == xs:
            S.dneg[r] = g
            S.mneg[r] = gm
        else:
            S.dneg[r] = (w.W[xr] - w.W[xs]) + g
            S.mneg[r] = w.Wm[xr] + w.Wm[xs] + fabs(w.W[xr]) + fabs(w.W[xs]) + gm
    return 0


cdef inline i64 _sorted_positive_side(_Scan* S, i64 P, i64 lowest, double scale,
                                      double[::1] H) noexcept nogil:
    """S.dpos, S.dpc, S.mpos, S.D and S.T at ranks lowest .. P where every positive slot's
    coefficient is >= 0: the sorted matching, positive r ... P at c_lo instead of c_hi (H: the
    highs, descending). Returns the last rank scanned, P."""
    cdef i64 r
    cdef double s = 0.0, comp = 0.0, m = 0.0
    for r in range(P, lowest - 1, -1):
        _add(&s, &comp, -2.0 * scale * H[r - 1])
        m += 2.0 * scale * fabs(H[r - 1])
        S.dpos[r], S.dpc[r] = s, comp
        S.mpos[r] = m
        S.D[r] = S.dloss[r] + (S.dpos[r] + S.dpc[r]) + S.dneg[r]
        S.T[r] = REL * (S.dloss[r] + S.mpos[r] + S.mneg[r])
    return P


cdef inline i64 _split_scan(_Scan* S, i64 P, i64 lowest, double c_hi, double c_lo,
                            _Hungarian pos, _Split pos_split, double* coefs,
                            vector[double]& ref, vector[double]& cur,
                            double* next_check) except -1 nogil:
    """S.inc and S.minc from rank lowest on, where some positive slot's coefficient is < 0;
    returns the last rank scanned (ref: its split's coefficients).

    V(r), the positive side's value, costs a search each: ranks are taken in order and the
    scan stops once none left can come within twice the tolerance of the best. V is concave
    in r (the optimum of a transportation problem in the count of one column), and each step
    adds at most max_b (gain at c_hi - gain at c_lo) (the new column's bag back at c_lo is an
    assignment of the rank before), so V(q) <= V(r) + (q - r) slope for q > r. Each step's
    change is summed over the bags whose coefficient it changes (inc), and every comparison
    adds up the steps between the ranks it compares: a bag far from the others enters only
    those that move it. coefs: the positive slots' coefficients, those before lowest set."""
    cdef i64 b, p, q, r, top_r = -1, last = lowest - 1
    cdef double rise = -INFINITY, slope, g, bound, scratch, top_tol = 0.0
    cdef double since = 0.0, since_c = 0.0, since_m = 0.0   # V(r - 1) - V(top_r); magnitude
    cdef bint needed
    for b in range(P):
        rise = max(rise, _gain(c_hi, pos.hi[b], pos.lo[b]) - _gain(c_lo, pos.hi[b], pos.lo[b]))
    for p in range(lowest, P + 1):
        coefs[p - 1] = c_lo
    for r in range(lowest, P + 1):
        if r > lowest:
            slope = rise if r - 1 == lowest else min(rise, S.inc[r - 2])
            needed = False
            g = S.dloss[top_r] + S.dneg[top_r]
            for q in range(r, P + 1):
                bound = (since + since_c) + (q - r + 1) * slope + (S.dloss[q] + S.dneg[q] - g)
                if bound >= -2 * top_tol - REL * (since_m + S.mneg[q] + S.dloss[q]):
                    needed = True
                    break
            if not needed:
                break
            coefs[r - 2] = c_hi
        _split_value(pos_split, pos, coefs, P, &scratch, next_check)
        if r == lowest:
            pos_split.coefficients(ref.data())
        else:
            S.inc[r - 1] = _relative_value(pos_split, pos, ref.data(), cur.data(),
                                           &S.minc[r - 1])
            ref.swap(cur)               # ref: this rank's coefficients
            _add(&since, &since_c, S.inc[r - 1])
            since_m += S.minc[r - 1]
        # r beats the best so far by V(r) - V(top_r) plus its loss and negative side
        if top_r < 0 or ((since + since_c)
                         + (S.dloss[r] + S.dneg[r] - S.dloss[top_r] - S.dneg[top_r]) > 0):
            top_r = r
            top_tol = REL * (S.dloss[r] + S.mneg[r] + since_m)
            since = since_c = since_m = 0.0
        last = r
        check_signals(next_check)
    return last


cdef inline int _split_values(_Scan* S, i64 P, i64 lowest, i64 last, double c_hi,
                              _Hungarian pos, _Split pos_split, double* coefs,
                              vector[double]& ref, vector[double]& cur,
                              double* next_check) except -1 nogil:
    """S.dpos, S.dpc, S.mpos, S.D and S.T at ranks lowest .. last after _split_scan: staying
    (every positive from lowest on at c_hi), each rank relative to it, the steps between them
    summed from the last rank back."""
    cdef i64 p, r
    cdef double scratch, g, gm, s = 0.0, comp = 0.0, m
    for p in range(lowest, P + 1):
        coefs[p - 1] = c_hi
    _split_value(pos_split, pos, coefs, P, &scratch, next_check)
    g = _relative_value(pos_split, pos, ref.data(), cur.data(), &gm)
    m = gm
    _add(&s, &comp, g)
    for r in range(last, lowest - 1, -1):
        S.dpos[r], S.dpc[r] = -s, -comp
        S.mpos[r] = m
        S.D[r] = S.dloss[r] + (S.dpos[r] + S.dpc[r]) + S.dneg[r]
        S.T[r] = REL * (S.dloss[r] + S.mpos[r] + S.mneg[r])
        if r > lowest:
            _add(&s, &comp, S.inc[r - 1])
            m += S.minc[r - 1]
    return 0


cdef inline i64 _chosen_rank(const _Scan* S, i64 lowest, i64 last) noexcept nogil:
    """The rank slot k moves to among lowest .. last, or -1 where it stays at P + 1.

    The best rank, two ranks compared by the terms between them (a far score passed by both
    cancels exactly, its size in neither the difference nor its tolerance); staying is worth
    0. A move that ties with staying is taken: its value is the same, and the slots after it
    can only add to it, while staying ends the greedy. Among tied ranks the highest place,
    which leaves the slots after it the most ranks to choose from (measured on 3,600 small
    instances against both tie rules: never below the reference greedy, the lowest place fell
    below it twice)."""
    cdef i64 r, best_r = lowest
    for r in range(lowest + 1, last + 1):
        if _between(S.dloss, S.dpos, S.dpc, S.dneg, r, best_r) > 0:
            best_r = r
    if S.D[best_r] < -S.T[best_r]:
        return -1
    for r in range(lowest, best_r):
        if _between(S.dloss, S.dpos, S.dpc, S.dneg, r, best_r) >= -REL * (
                S.dloss[r] + S.dloss[best_r] + fabs(S.mpos[r] - S.mpos[best_r]) + S.mneg[r]
                + S.mneg[best_r]):
            return r
    return best_r


cdef inline int _final_coefficients(i64 P, i64 N, double scale, i64[::1] neg_ranks,
                                    const i64* above_of, i64[::1] pos_order, _Hungarian pos,
                                    _Hungarian neg, _Split pos_split, _Split neg_split,
                                    double* ncoef, double* coefs, double[::1] pos_coef,
                                    double[::1] neg_coef, double* next_check) except -1 nogil:
    """Each bag's slot coefficient in the final pattern's assignments: the split's on the
    negative side, and on the positive side where a slot's coefficient is < 0 (else the
    sorted matching)."""
    cdef i64 j, p
    cdef double scratch
    for j in range(N):
        ncoef[j] = (P + 2.0 - 2.0 * neg_ranks[j]) * scale
    _split_value(neg_split, neg, ncoef, N, &scratch, next_check)
    neg_split.coefficients(&neg_coef[0])
    for p in range(1, P + 1):
        coefs[p - 1] = (N - 2.0 * above_of[p]) * scale
    if coefs[P - 1] < 0:
        _split_value(pos_split, pos, coefs, P, &scratch, next_check)
        pos_split.coefficients(&pos_coef[0])
    else:
        for p in range(1, P + 1):
            pos_coef[pos_order[p - 1]] = coefs[p - 1]
    return 0


cdef int _run(i64 P, i64 N, double[::1] H, i64[::1] pos_order, _Hungarian pos, _Hungarian neg,
              _Split pos_split, _Split neg_split, const i64* neg_by_h, const i64* neg_by_l,
              i64[::1] neg_ranks, double[::1] pos_coef,
              double[::1] neg_coef) except -1 nogil:
    """The greedy: slot k = 0, 1, ... moves to its best rank from the previous slot's on,
    relative to staying at P + 1, until a slot stays; then the final pattern's coefficients."""
    cdef double scale = 1.0 / (<double>P * N), next_check = first_check()
    # the coefficient of a negative slot at P + 1 (not moved): the negative side's base
    cdef double beta = (P + 2.0 - 2.0 * (P + 1)) * scale
    cdef double c_hi, c_lo
    cdef i64 k, p, lowest, chosen, last
    cdef vector[double] coefs, ref, cur, scan_buf, neg_dbuf
    cdef vector[i64] above_of              # per positive slot p (1-based), negatives above it
    cdef vector[i64] neg_ibuf
    cdef _Scan S
    cdef _NegativeWork w
    neg_split.base = beta
    above_of.assign(P + 1, 0)
    coefs.assign(P, 0.0)
    ref.assign(P, 0.0)
    cur.assign(P, 0.0)
    _scan_arrays(&S, scan_buf, P)
    _negative_arrays(&w, neg_dbuf, neg_ibuf, P, N)
    k = 0
    while k < N:
        check_signals(&next_check)
        lowest = neg_ranks[k - 1] if k else 1
        c_hi = (N - 2.0 * k) * scale
        c_lo = (N - 2.0 * (k + 1)) * scale
        _loss_at_ranks(&S, P, k, lowest)
        _negative_side(&S, &w, P, N, k, lowest, scale, beta, neg_ranks, neg, neg_split,
                       neg_by_h, neg_by_l, &next_check)
        # while slot k's lower coefficient is >= 0 the positive side is a sorted matching,
        # past that a split (see _Split)
        if c_lo >= 0:
            last = _sorted_positive_side(&S, P, lowest, scale, H)
        else:
            for p in range(1, lowest):
                coefs[p - 1] = (N - 2.0 * above_of[p]) * scale
            last = _split_scan(&S, P, lowest, c_hi, c_lo, pos, pos_split, coefs.data(), ref,
                               cur, &next_check)
            _split_values(&S, P, lowest, last, c_hi, pos, pos_split, coefs.data(), ref, cur,
                          &next_check)
        if last < lowest:
            break
        chosen = _chosen_rank(&S, lowest, last)
        if chosen < 0:
            break               # slot k stays at P + 1, and so must every later one
        neg_ranks[k] = chosen
        for p in range(chosen, P + 1):
            above_of[p] = k + 1
        # the next slot's search starts from this pattern's optimum: the bag that took slot k
        # in it, the others as in its best assignment that leaves that bag over
        neg_split.leave_over(w.taker[chosen])
        neg_split.where[w.taker[chosen]] = IN_A if chosen <= P / 2 + 1 else IN_B
        k += 1
    return _final_coefficients(P, N, scale, neg_ranks, above_of.data(), pos_order, pos, neg,
                               pos_split, neg_split, w.ncoef, coefs.data(), pos_coef, neg_coef,
                               &next_check)
