# distutils: language = c++
"""The maximum and every max-marginal of linked components by graph cuts (the pairwise kind;
Dokania et al. (2014), sec. 3), around the Boykov-Kolmogorov max-flow of ``_maxflow.hpp``.

Per component one cut gives the best labelling y (the source side: label 1). Then each sample i
in turn is clamped to the label it does not take (an infinite terminal capacity), the cut is
re-solved and the clamp removed:

* dynamic (Kohli and Torr 2005): the re-solve starts from the optimum's flow and search trees,
  with only i repaired, and the clamp is removed by undoing the changes it made (their
  recycling of the residual graph): each re-solve pushes only the flow its clamp adds.
* static: every clamp (and, as the naive method does, the other clamp of each sample too) cut
  from scratch: the baseline of the dynamic cuts.
* one-tree (``graphcut``'s components of more than 64 samples): no search trees kept, one tree
  grown from each clamped sample inside its side of the optimum, samples in breadth-first order,
  each re-cut's flow kept for the next (``Graph::rest_without_trees`` in _maxflow.hpp).
* dense (``graphcut``'s components of at most 64 samples): _smallcut.hpp's max-flow on a dense
  residual matrix with 64-bit node sets, each re-cut inside the clamped sample's side.

Values are never read off the flow: the flow through a clamp of a sample linked by pair scores
of 1e40 rounds away a unary score of 1. A labelling's value is summed from its terms (the
static path sums it from scratch; the dynamic path adds to the best value the terms of the
samples whose label differs from y, kept as a set updated from the nodes whose tree changed in
the re-solve). Labellings that maximise never cut a pair worth more than all the unary scores,
so these sums are of terms of the unary scale, whatever the scale of the pairs.

Everything runs without the GIL, checking for Ctrl-C about every 0.1 s, between two cuts and
inside one (a cut of a dense component of thousands of samples can take seconds).
"""
from libcpp cimport bool as cpp_bool
from libcpp.vector cimport vector
import numpy as np

from aprank.inference._interrupt cimport check_signals, first_check, now_seconds
from aprank.inference._kernel cimport i64

cdef extern from "_maxflow.hpp" namespace "aprank::maxflow" nogil:
    cdef char SRC
    cdef cppclass Graph:
        vector[char] tree
        vector[i64] first, head, log
        vector[double] cap0
        void build(i64 k, const double* t, i64 m, const i64* ea, const i64* eb,
                   const double* w) except +
        void reset() except +
        i64 solve() except +
        cpp_bool (*pending)(void*) noexcept nogil
        void* pending_arg
        bint stopped
        char grow
        void clamp(i64 i, int label) except +
        void unclamp() except +
        void clear_log()
        void rest_without_trees(const char* y) except +
        void release(i64 i, int to)
        void restore_rest() except +
        void pin(i64 i) except +

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil

cdef extern from "_smallcut.hpp" namespace "aprank::smallcut" nogil:
    ctypedef unsigned long long u64
    cdef int MAX_NODES
    cdef cppclass Dense:
        u64 side
        void build(int k, const double* t, i64 m, const i64* ea, const i64* eb,
                   const double* w) except +
        void solve() except +
        u64 recut(int i, u64 region, double& moved) except +
        void release(int i, double moved)
        u64 region_of(int i)
        double delta(u64 flipped, const double* s)
        void restore()

#: Components of at most this many samples can be cut on a dense residual matrix with 64-bit
#: node sets (_smallcut.hpp).
DENSE_MAX = MAX_NODES


cdef extern from "Python.h":
    # declared without "except": a KeyboardInterrupt it raises stays set for _solve to return
    int PyErr_CheckSignals()


cdef cpp_bool _pending(void* next_check) noexcept nogil:
    """Graph's check for a stop inside one cut: at most every 0.1 s (the clock of
    ``check_signals``), whether a signal handler raised (KeyboardInterrupt for Ctrl-C); the
    error stays set for the caller to return."""
    cdef double* when = <double*>next_check
    cdef double now = now_seconds()
    if now < when[0]:
        return False
    when[0] = now + 0.1
    with gil:
        return PyErr_CheckSignals() != 0


cdef inline int _solve(Graph& g) except -1 nogil:
    """One (re-)cut; -1, with the signal's error set, when a stop was found inside it."""
    g.solve()
    return -1 if g.stopped else 0


cdef double _value(Graph& g, const char* lab, const double* s) noexcept nogil:
    """Score of labelling ``lab`` of the component in ``g`` (unary scores ``s``), from scratch:
    sum_i lab_i s_i plus the (non-positive) scores of the pairs it cuts, each pair once."""
    cdef double v = 0.0
    cdef i64 i, a
    for i in range(g.tree.size()):
        if lab[i]:
            v += s[i]
    for i in range(g.tree.size()):
        for a in range(g.first[i], g.first[i + 1]):
            if g.head[a] > i and lab[i] != lab[g.head[a]]:
                v -= g.cap0[a]
    return v


#: One-tree re-cuts keep each re-cut's flow for the next and go back to the optimum's flow
#: every this many samples, so that the rounding of the kept flows cannot pile up without end.
RESTORE_EVERY = 1024
cdef i64 _RESTORE_EVERY = RESTORE_EVERY


cdef void _breadth_first(Graph& g, vector[i64]& order) noexcept nogil:
    """The nodes of g's (connected) component in breadth-first order: consecutive samples are
    close, so one-tree re-cuts find the flow the previous ones left next to them."""
    cdef i64 k = g.tree.size(), h, u, arc
    cdef vector[char] seen
    seen.assign(k, 0)
    order.clear()
    seen[0] = 1
    order.push_back(0)
    h = 0
    while h < <i64>order.size():
        u = order[h]
        h += 1
        for arc in range(g.first[u], g.first[u + 1]):
            if not seen[g.head[arc]]:
                seen[g.head[arc]] = 1
                order.push_back(g.head[arc])
    for u in range(k):              # (a component is connected; this only keeps order whole)
        if not seen[u]:
            order.push_back(u)


cdef void _breadth_first_labels(i64 k, i64 m, const i64* ea, const i64* eb,
                                vector[i64]& perm, vector[i64]& pos) noexcept nogil:
    """perm: the nodes 0..k-1 in reversed breadth-first order over the pairs (ea, eb); pos its
    inverse. Numbering a large component so puts the samples a one-tree re-cut touches
    (neighbours of the clamped one, taken in breadth-first order too) close together in memory,
    so that the re-cuts' searches stay in cache (the component table of ``python -m benchmarks
    --pairwise`` times such components)."""
    cdef vector[i64] start, nbr, fill
    cdef i64 i, e, h, u, p
    start.assign(k + 1, 0)
    for e in range(m):
        start[ea[e] + 1] += 1
        start[eb[e] + 1] += 1
    for i in range(k):
        start[i + 1] += start[i]
    nbr.resize(2 * m + 1)
    fill.assign(start.begin(), start.end())
    for e in range(m):
        nbr[fill[ea[e]]] = eb[e]
        fill[ea[e]] += 1
        nbr[fill[eb[e]]] = ea[e]
        fill[eb[e]] += 1
    pos.assign(k, -1)
    perm.clear()
    for i in range(k):
        if pos[i] >= 0:
            continue
        pos[i] = perm.size()
        perm.push_back(i)
        h = perm.size() - 1
        while h < <i64>perm.size():
            u = perm[h]
            h += 1
            for p in range(start[u], start[u + 1]):
                if pos[nbr[p]] < 0:
                    pos[nbr[p]] = perm.size()
                    perm.push_back(nbr[p])
    # reversed (as reverse Cuthill-McKee reverses its order): the re-cuts then start at the
    # rim of the last search, which times a little faster than the forward order
    for i in range(k // 2):
        perm[i], perm[k - 1 - i] = perm[k - 1 - i], perm[i]
    for i in range(k):
        pos[perm[i]] = i


cdef double _flip_delta(Graph& g, const vector[i64]& d_list, const char* lab,
                        const char* in_d, const char* y, const double* s) noexcept nogil:
    """The value of labelling ``lab`` less that of y, where they differ on d_list alone
    (in_d: d_list's members flagged): the samples' unary terms and the pairs whose cut
    changes, each pair once."""
    cdef i64 j, q, r, arc
    cdef double delta = 0.0, cut_change
    for r in range(<i64>d_list.size()):
        j = d_list[r]
        delta += (lab[j] - y[j]) * s[j]
        for arc in range(g.first[j], g.first[j + 1]):
            q = g.head[arc]
            if in_d[q] and q < j:
                continue            # the pair is counted from q
            # integer factor: a pair whose cut does not change adds an exact zero
            cut_change = (<int>(lab[j] != lab[q])) - (<int>(y[j] != y[q]))
            delta -= cut_change * g.cap0[arc]
    return delta


cdef struct _Sides:
    # The labellings with one whole side of the optimum flipped (samples of label l all
    # given 1 - l): their values and the sides' sizes. A sample whose clamp costs as much as
    # flipping its whole side is pinned (Graph::pin) for the later re-cuts (_pin_rule).
    double value[2]
    i64 size[2]


cdef void _side_values(Graph& g, i64 k, const char* y, const double* s, double base,
                       vector[char]& lab, vector[char]& in_d, vector[i64]& d_list,
                       _Sides* sides) noexcept nogil:
    """sides: the value of each side of y flipped whole, summed as the re-cuts sum theirs."""
    cdef i64 j, side
    for side in range(2):
        d_list.clear()
        for j in range(k):
            if y[j] == side:
                d_list.push_back(j)
                lab[j] = 1 - y[j]
                in_d[j] = 1
        sides.value[side] = base + _flip_delta(g, d_list, lab.data(), in_d.data(), y, s)
        sides.size[side] = d_list.size()
        for j in d_list:
            lab[j] = y[j]
            in_d[j] = 0


cdef inline double _pin_rule(Graph& g, i64 i, const char* y, double clamped, i64 flipped,
                             const _Sides* sides) noexcept nogil:
    """Sample i's max-marginal given ``clamped``, the value of its re-cut with the samples
    pinned so far kept at their labels (``flipped`` samples changed), and pins i when that
    max-marginal is its side's whole flip.

    Why it is exact. Write c(D) >= 0 for the loss of flipping a set D of samples of one
    side S of the optimum y (clamping i to 1 - y_i flips a set D containing i, within S:
    the lattice of minimum cuts), and c_i = min over D containing i of c(D). Let every
    pinned p have c_p = c(S). Any D containing i and a pinned p costs c(D) >= c_p = c(S),
    and D = S itself contains i: so c_i = min(c(S), the least c(D) over D containing i and
    no pinned sample), the second term being the pinned re-cut's. Then c_i = c(S) makes i
    pinnable in turn. In a component whose whole-side flip is cheap (a near tie), most
    clamps flip the whole side, and without pins each re-cut grows its tree over all of it;
    pinned samples around the clamped one end its tree where it starts."""
    cdef int side = y[i]
    if flipped == sides.size[side] or clamped <= sides.value[side]:
        # (flipped == size: the re-cut flipped the whole side, whose value is taken as
        # _side_values summed it, so that the same labelling has one value)
        g.pin(i)
        return sides.value[side]
    return clamped


cdef int _dynamic_marginal(Graph& g, i64 a, i64 i, const char* y, const double* s, double base,
                           bint flips, bint one_tree, vector[char]& lab, vector[char]& in_d,
                           vector[i64]& d_list, double* other, vector[i64]& rows,
                           vector[i64]& cols, const _Sides* sides) except -1 nogil:
    """other[i] after the dynamic re-cut of sample i's clamp: the best value ``base`` plus the
    terms of the samples whose label differs from y; then the clamp is undone (one tree: its
    sample released, the flow kept; with ``sides``, the pin rule applied). lab: each node's
    label as of its last tree change, in_d and d_list: the set of the differing samples, both
    cleared again."""
    cdef i64 j, r
    # the samples whose label differs from y: among those whose tree changed (one tree: those
    # left in the tree grown from i; the rest keep their labels)
    d_list.clear()
    for r in range(<i64>g.log.size()):
        j = g.log[r]
        if one_tree:
            lab[j] = 1 - y[j] if g.tree[j] == g.grow else y[j]
        else:
            lab[j] = g.tree[j] == SRC
        if lab[j] != y[j]:
            in_d[j] = 1
            d_list.push_back(j)
    if one_tree:
        g.release(i, 1 - y[i])
    else:
        g.clear_log()
    other[i] = base + _flip_delta(g, d_list, lab.data(), in_d.data(), y, s)
    if sides != NULL:
        other[i] = _pin_rule(g, i, y, other[i], d_list.size(), sides)
    for r in range(<i64>d_list.size()):
        j = d_list[r]
        in_d[j] = 0
        lab[j] = y[j]
        if flips:
            rows.push_back(a + i)
            cols.push_back(a + j)
    if not one_tree:
        g.unclamp()
    return 0


cdef int _static_marginal(Graph& g, i64 a, i64 i, i64 k, const char* y, const double* s,
                          bint flips, vector[char]& lab, double* other, vector[i64]& rows,
                          vector[i64]& cols) except -1 nogil:
    """other[i] from the cut of sample i's clamp from scratch, its labelling's value summed
    from its terms; then the naive method cuts the other clamp of the sample too (its
    max-marginal is best). lab: scratch of k labels."""
    cdef i64 j
    for j in range(k):
        lab[j] = g.tree[j] == SRC
    other[i] = _value(g, lab.data(), s)
    if flips:
        for j in range(k):
            if lab[j] != y[j]:
                rows.push_back(a + i)
                cols.push_back(a + j)
    g.reset()
    g.clamp(i, y[i])
    _solve(g)
    return 0


cdef int _component(Graph& g, i64 a, i64 k, const double* s, i64 m, const i64* ea,
                    const i64* eb, const double* w, char* y, double* best, double* other,
                    bint marginals, bint flips, bint dynamic, bint one_tree, vector[i64]& rows,
                    vector[i64]& cols, double* next_check) except -1 nogil:
    """One component (nodes a..a+k-1; ea, eb local): y, best[0] and other[0..k-1]."""
    cdef vector[char] lab, in_d
    cdef vector[i64] d_list, order
    cdef i64 i, t
    cdef double base
    cdef _Sides sides
    cdef _Sides* pinning = NULL
    g.pending = _pending
    g.pending_arg = next_check
    g.build(k, s, m, ea, eb, w)
    _solve(g)
    for i in range(k):
        y[i] = g.tree[i] == SRC
    base = _value(g, y, s)
    best[0] = base
    if not marginals:
        return 0
    g.clear_log()
    lab.assign(y, y + k)             # a node's label as of its last tree change
    in_d.assign(k, 0)
    dynamic = dynamic or one_tree
    if one_tree:
        g.rest_without_trees(y)
        _breadth_first(g, order)
        if not flips:
            # pins only where the labellings are not asked for: a pinned sample's max-marginal
            # comes from its side's whole flip, which may flip more samples than the least
            # labelling its clamp alone finds (what flips reports)
            _side_values(g, k, y, s, base, lab, in_d, d_list, &sides)
            pinning = &sides
    for t in range(k):
        check_signals(next_check)
        i = order[t] if one_tree else t
        if one_tree and t % _RESTORE_EVERY == 0:
            g.restore_rest()
        if not dynamic:
            g.reset()
        g.clamp(i, 1 - y[i])
        _solve(g)
        if dynamic:
            _dynamic_marginal(g, a, i, y, s, base, flips, one_tree, lab, in_d, d_list, other,
                              rows, cols, pinning)
        else:
            _static_marginal(g, a, i, k, y, s, flips, lab, other, rows, cols)
    return 0


cdef int _small_component(Dense& g, i64 a, i64 k, const double* s, i64 m, const i64* ea,
                          const i64* eb, const double* w, char* y, double* best, double* other,
                          bint marginals, bint flips, vector[i64]& rows, vector[i64]& cols,
                          double* next_check) except -1 nogil:
    """One component of at most 64 nodes by _smallcut.hpp: y, best[0] and other[0..k-1]."""
    cdef i64 i, j, last
    cdef u64 done, region, chain
    cdef double base, moved
    g.build(<int>k, s, m, ea, eb, w)
    g.solve()
    base = 0.0
    for i in range(k):
        y[i] = (g.side >> i) & 1
    # the optimum's value from its terms, as the general path sums it
    for i in range(k):
        if y[i]:
            base += s[i]
    for j in range(m):
        if y[ea[j]] != y[eb[j]]:
            base -= w[j]
    best[0] = base
    if not marginals:
        return 0
    # no Ctrl-C poll per re-cut: a component of at most 64 samples takes microseconds, and the
    # caller polls between components.
    # A re-cut from the optimum for each sample not yet done, then a chain of re-cuts through
    # what it flipped (each starting where the last left the flow, _smallcut.hpp), then back to
    # the optimum.
    done = 0
    for i in range(k):
        if (done >> i) & 1:
            continue
        moved = 0.0
        region = g.recut(<int>i, g.region_of(<int>i), moved)
        _record(g, a, i, region, base, s, other, flips, rows, cols)
        done |= (<u64>1) << i
        last = i
        chain = region & ~done
        while chain:
            j = __builtin_ctzll(chain)
            chain &= chain - 1
            g.release(<int>last, moved)
            moved = 0.0
            _record(g, a, j, g.recut(<int>j, region, moved), base, s, other, flips, rows, cols)
            done |= (<u64>1) << j
            last = j
        g.restore()
    return 0


cdef inline void _record(Dense& g, i64 a, i64 i, u64 flipped, double base, const double* s,
                         double* other, bint flips, vector[i64]& rows,
                         vector[i64]& cols) noexcept nogil:
    """Node i's max-marginal of the other label from the nodes ``flipped`` by its clamp."""
    cdef i64 j
    other[i] = base + g.delta(flipped, s)
    if flips:
        while flipped:
            j = __builtin_ctzll(flipped)
            rows.push_back(a + i)
            cols.push_back(a + j)
            flipped &= flipped - 1


cdef int _local_pairs(const i64[::1] ea, const i64[::1] eb, const double[::1] c, i64 e0,
                      i64 e1, i64 a, vector[double]& w, vector[i64]& la,
                      vector[i64]& lb) except -1 nogil:
    """w, la, lb: pairs e0 .. e1-1, their weights -c and their nodes numbered from a (the
    component's first node); returns their number."""
    cdef i64 e
    w.resize(e1 - e0 + 1)
    la.resize(e1 - e0 + 1)
    lb.resize(e1 - e0 + 1)
    for e in range(e0, e1):
        w[e - e0] = -c[e]
        la[e - e0] = ea[e] - a
        lb[e - e0] = eb[e] - a
    return e1 - e0


cdef struct _BreadthFirst:
    # A component in breadth-first numbering: perm[j], the node numbered j; pos, its inverse;
    # the unary scores, labels and max-marginals in that numbering.
    vector[i64] perm
    vector[i64] pos
    vector[double] s
    vector[double] other
    vector[char] y


cdef int _one_tree_component(Graph& g, _BreadthFirst& bfs, i64 a, i64 k, const double* s,
                             i64 m, vector[i64]& la, vector[i64]& lb, const double* w,
                             signed char* y, double* best, double* other, bint marginals,
                             bint flips, bint dynamic, vector[i64]& rows, vector[i64]& cols,
                             double* next_check) except -1 nogil:
    """One component by one-tree re-cuts (_component), solved in breadth-first numbering and
    its results (y, best[0], other[0..k-1], its flips) put back in the nodes' own."""
    cdef i64 e, j, r0
    _breadth_first_labels(k, m, la.data(), lb.data(), bfs.perm, bfs.pos)
    for e in range(m):
        la[e] = bfs.pos[la[e]]
        lb[e] = bfs.pos[lb[e]]
    bfs.s.resize(k)
    bfs.other.resize(k)
    bfs.y.resize(k)
    for j in range(k):
        bfs.s[j] = s[bfs.perm[j]]
    r0 = rows.size()
    _component(g, a, k, bfs.s.data(), m, la.data(), lb.data(), w, bfs.y.data(), best,
               bfs.other.data(), marginals, flips, dynamic, True, rows, cols, next_check)
    for j in range(k):
        y[bfs.perm[j]] = bfs.y[j]
        if marginals:
            other[bfs.perm[j]] = bfs.other[j]
    for j in range(r0, <i64>rows.size()):
        rows[j] = a + bfs.perm[rows[j] - a]
        cols[j] = a + bfs.perm[cols[j] - a]
    return 0


cdef object _int64_array(vector[i64]& v):
    """A copy of v as an int64 array."""
    return np.array(<i64[:v.size()]> v.data(), dtype=np.int64) if v.size() \
        else np.zeros(0, dtype=np.int64)


def cut_components(const double[::1] s, const i64[::1] offsets, const i64[::1] ea,
                   const i64[::1] eb, const double[::1] c, const i64[::1] e_off,
                   const i64[::1] comps, signed char[::1] y, double[::1] best, double[::1] other,
                   bint marginals, bint flips, bint dynamic, i64 dense_up_to=0,
                   bint one_tree=False):
    """Components ``comps`` by graph cuts.

    Parameters
    ----------
    s : ndarray of float64
        Unary scores of the linked nodes (nodes sorted by component).
    offsets : ndarray of int64
        Component c holds nodes offsets[c]..offsets[c+1]-1.
    ea, eb, c : ndarrays
        Pairs (node indices, sorted by component) and their scores (<= 0, none zero).
    e_off : ndarray of int64
        Component c holds pairs e_off[c]..e_off[c+1]-1.
    comps : ndarray of int64
        The components to cut.
    y : ndarray of int8, out
        Per node: its label in its component's best labelling.
    best : ndarray of float64, out
        Per component: its maximum.
    other : ndarray of float64, out
        Per node (when ``marginals``): its component's maximum with the node's label flipped.
    marginals, flips, dynamic : bool
        Compute ``other``; also the flipped samples of every clamped labelling; re-solve each
        clamp dynamically (else from scratch).
    dense_up_to : int
        Components of at most this many samples (at most DENSE_MAX) are cut on a dense
        residual matrix (_smallcut.hpp, re-cuts always dynamic); larger ones by _maxflow.hpp.
    one_tree : bool
        Re-cut larger components by growing one tree from each clamped sample, samples taken
        in breadth-first order, each re-cut's flow kept for the next (_maxflow.hpp,
        rest_without_trees); else (``dynamic``) Kohli and Torr's re-cuts from the optimum's
        flow and search trees, each undone afterwards.

    Returns
    -------
    rows, cols : ndarray of int64
        When ``flips``: node ``cols[t]`` has the other label in the max-marginal labelling of
        node ``rows[t]`` (each node lists itself); else empty.
    """
    cdef Graph g
    cdef Dense dense_g
    cdef vector[i64] rows, cols
    cdef vector[double] w
    cdef vector[i64] la, lb
    cdef _BreadthFirst bfs
    cdef i64 qi, q, a, k, m
    cdef double next_check = first_check()
    if dense_up_to > MAX_NODES:
        raise ValueError(f"dense_up_to must be at most {MAX_NODES}, got {dense_up_to}")
    with nogil:
        for qi in range(comps.shape[0]):
            q = comps[qi]
            a, k = offsets[q], offsets[q + 1] - offsets[q]
            m = _local_pairs(ea, eb, c, e_off[q], e_off[q + 1], a, w, la, lb)
            if k <= dense_up_to:
                _small_component(dense_g, a, k, &s[a], m, la.data(), lb.data(), w.data(),
                                 <char*>&y[a], &best[q], &other[a], marginals, flips, rows, cols,
                                 &next_check)
            elif one_tree:
                _one_tree_component(g, bfs, a, k, &s[a], m, la, lb, w.data(), &y[a], &best[q],
                                    &other[a], marginals, flips, dynamic, rows, cols,
                                    &next_check)
            else:
                _component(g, a, k, &s[a], m, la.data(), lb.data(), w.data(),
                           <char*>&y[a], &best[q], &other[a], marginals, flips, dynamic,
                           one_tree, rows, cols, &next_check)
            check_signals(&next_check)
    return _int64_array(rows), _int64_array(cols)
