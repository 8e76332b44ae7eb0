# distutils: language = c++
"""The components that a graph's active pairs link, and its nodes and pairs grouped by
component (the pairwise kind).

One compiled pass (union-find, then counting sorts) rather than a sparse matrix, a graph search
and three sorts in NumPy: on graphs the size of the benchmark's (``python -m benchmarks
--pairwise``) those would cost more than the max-marginals themselves. The union-find pass over
the pairs, the longest, asks for Ctrl-C every 2^20 pairs (a clique of 3,000 samples has 4.5
million).
"""
import numpy as np

from aprank.inference._interrupt cimport check_signals, first_check
from aprank.inference._kernel cimport i64


cdef inline i64 _root(i64* up, i64 i) noexcept nogil:
    while up[i] != i:
        up[i] = up[up[i]]           # path halving: later finds take fewer steps
        i = up[i]
    return i


cdef i64 _link(const i64[:, ::1] edges, const unsigned char[::1] active, i64[::1] root,
               double* next_check) except -1 nogil:
    """Union-find over the active pairs: root[i] leads to the smallest sample of i's
    component. Returns the number of active pairs."""
    cdef i64 m = edges.shape[0], e, a, b, n_active = 0
    for e in range(m):
        if (e & 0xFFFFF) == 0xFFFFF:
            check_signals(next_check)
        if active[e]:
            n_active += 1
            a = _root(&root[0], edges[e, 0])
            b = _root(&root[0], edges[e, 1])
            # the smaller root stays: every root is its component's smallest sample
            if a < b:
                root[b] = a
            elif b < a:
                root[a] = b
    return n_active


cdef inline i64 _number_components(i64[::1] root, i64[::1] count, i64[::1] comp,
                                   i64* n_linked) noexcept nogil:
    """comp: each sample's component, those of two or more samples first (in the order of
    their smallest sample), then the single samples; root[i] <- i's component's smallest
    sample, count[r]: the size of the component of root r. Returns the number of components
    of two or more, their samples' number in n_linked."""
    cdef i64 n = root.shape[0], i, n_comp = 0, single
    for i in range(n):
        root[i] = _root(&root[0], i)
        count[root[i]] += 1
    # scanning samples upwards meets each component first at its root: numbers follow the
    # smallest samples
    for i in range(n):
        if count[root[i]] > 1:
            n_linked[0] += 1
            if root[i] == i:
                comp[i] = n_comp
                n_comp += 1
            else:
                comp[i] = comp[root[i]]
    single = n_comp
    for i in range(n):
        if count[root[i]] == 1:
            comp[i] = single
            single += 1
    return n_comp


cdef inline void _order_samples(const i64[::1] comp, i64 n_comp, i64 n_linked,
                                i64[::1] offsets, i64[::1] count,
                                i64[::1] order) noexcept nogil:
    """order and offsets: the samples by component, ascending within one (a stable counting
    sort), then the single samples. count: scratch of n_comp + 1 entries."""
    cdef i64 n = comp.shape[0], i, c, at
    for i in range(n):
        if comp[i] < n_comp:
            offsets[comp[i] + 1] += 1
    for c in range(n_comp):
        offsets[c + 1] += offsets[c]
    for c in range(n_comp + 1):
        count[c] = offsets[c]   # each component's next position
    at = n_linked
    for i in range(n):
        if comp[i] < n_comp:
            order[count[comp[i]]] = i
            count[comp[i]] += 1
        else:
            order[at] = i
            at += 1


cdef inline void _group_pairs(const i64[:, ::1] edges, const unsigned char[::1] active,
                              const i64[::1] comp, i64 n_comp, i64[::1] e_off,
                              i64[::1] count, i64[::1] pairs) noexcept nogil:
    """pairs and e_off: the active pairs by component, in input order within one (a stable
    counting sort). count: scratch of n_comp + 1 entries."""
    cdef i64 m = edges.shape[0], e, c
    for e in range(m):
        if active[e]:
            e_off[comp[edges[e, 0]] + 1] += 1
    for c in range(n_comp):
        e_off[c + 1] += e_off[c]
    for c in range(n_comp + 1):
        count[c] = e_off[c]
    for e in range(m):
        if active[e]:
            c = comp[edges[e, 0]]
            pairs[count[c]] = e
            count[c] += 1


cdef inline void _pair_ends(const i64[:, ::1] edges, const i64[::1] pairs,
                            const i64[::1] order, i64[::1] position,
                            i64[:, ::1] ends) noexcept nogil:
    """ends: the positions in ``order`` of the two samples of each pair of ``pairs``.
    position: scratch of n entries."""
    cdef i64 n = order.shape[0], i, e
    for i in range(n):
        position[order[i]] = i
    for e in range(pairs.shape[0]):
        ends[e, 0] = position[edges[pairs[e], 0]]
        ends[e, 1] = position[edges[pairs[e], 1]]


def group(i64 n, const i64[:, ::1] edges, const unsigned char[::1] active):
    """Components of the n samples that the ``active`` pairs of ``edges`` link.

    Parameters
    ----------
    n : int
        Number of samples.
    edges : ndarray of int64 (m, 2)
        The pairs, validated (0 <= index < n, no self-pairs).
    active : ndarray of uint8 (m,)
        1 where a pair links its samples.

    Returns
    -------
    order : ndarray of int64 (n,)
        The samples of components of two or more first, component by component (in the order
        of their smallest sample; samples ascending within one), then the single samples,
        ascending.
    offsets : ndarray of int64 (C + 1,)
        Component c of two or more samples holds positions offsets[c]..offsets[c+1]-1.
    comp : ndarray of int64 (n,)
        The component of each sample: 0..C-1 for those of two or more, C.. for single samples.
    pairs : ndarray of int64 (M,)
        The active pairs (indices into ``edges``) grouped by component, in input order within
        one.
    e_off : ndarray of int64 (C + 1,)
        Component c holds pairs[e_off[c]..e_off[c+1]-1].
    ends : ndarray of int64 (M, 2)
        The positions in ``order`` of the two samples of each pair of ``pairs``.
    """
    cdef i64 m = edges.shape[0]
    if active.shape[0] != m:
        raise ValueError(f"active has {active.shape[0]} entries for {m} pairs")
    root_a = np.arange(n, dtype=np.int64)
    count_a = np.zeros(n + 1, dtype=np.int64)     # reused below for n_comp + 1 <= n + 1 slots
    order_a = np.empty(n, dtype=np.int64)
    comp_a = np.empty(n, dtype=np.int64)
    cdef i64[::1] root = root_a, count = count_a, order = order_a, comp = comp_a
    cdef i64 n_linked = 0, n_comp, n_active
    cdef double next_check = first_check()
    with nogil:
        n_active = _link(edges, active, root, &next_check)
        n_comp = _number_components(root, count, comp, &n_linked)
    offsets_a = np.zeros(n_comp + 1, dtype=np.int64)
    e_off_a = np.zeros(n_comp + 1, dtype=np.int64)
    pairs_a = np.empty(n_active, dtype=np.int64)
    ends_a = np.empty((n_active, 2), dtype=np.int64)
    cdef i64[::1] offsets = offsets_a, e_off = e_off_a, pairs = pairs_a
    cdef i64[:, ::1] ends = ends_a
    with nogil:
        _order_samples(comp, n_comp, n_linked, offsets, count, order)
        _group_pairs(edges, active, comp, n_comp, e_off, count, pairs)
        _pair_ends(edges, pairs, order, root, ends)      # root reused: each sample's position
    return order_a, offsets_a, comp_a, pairs_a, e_off_a, ends_a
