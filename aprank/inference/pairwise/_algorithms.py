"""The pairwise kind's registry entries: max-marginals by compiled enumeration of the smallest
components, dense cuts of components of at most 64 samples (``_smallcut.hpp``) and graph cuts
(our compiled Boykov-Kolmogorov max-flow, ``_maxflow.hpp``: one-tree re-cuts, Kohli-Torr
dynamic updates or from scratch)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import aprank.inference.pairwise._enumerate_cy as _enumerate_cy
import aprank.inference.pairwise._maxflow_cy as _maxflow_cy
from aprank.inference._registry import Algorithm, ProblemKind
from aprank.inference.pairwise._instances import PairwiseInstances
from aprank.inference.pairwise._oracle import MAX_SAMPLES, run_brute
from aprank.inference.pairwise._problem import ENUMERATE_UP_TO, PairwiseProblem

__all__ = ["run_graphcut", "run_graphcut_dynamic", "run_graphcut_static", "KINDS", "ALGORITHMS"]


class _Components:
    """The samples of ``call`` grouped by the components its non-zero pairs link.

    Samples of components of two or more ("linked") come first, as nodes 0..n_linked-1,
    component by component (``offsets``); their pairs are sorted by component (``e_off``). The
    single samples follow: their max-marginals are closed form.
    """

    def __init__(self, call):
        self.order, self.offsets, _, pairs, self.e_off, ends = call.grouping
        self.n_linked = nl = int(self.offsets[-1])
        self.sizes = np.diff(self.offsets)
        self.ea, self.eb = ends[:, 0].copy(), ends[:, 1].copy()     # contiguous for the kernels
        self.c = call.pair[pairs]                               # pair scores, < 0
        self.s = call.unary[self.order[:nl]]                    # unary scores of the nodes
        self.cid = np.repeat(np.arange(self.sizes.size), self.sizes)   # component of each node


def _neighbours(parts: _Components, comps):
    """CSR of each node's neighbours and pair scores (a pair listed at both ends), over the
    pairs of the components ``comps``."""
    nl = parts.n_linked
    # the components' pairs are contiguous runs: gathered run by run, not by a mask over all
    start, count = parts.e_off[comps], np.diff(parts.e_off)[comps]
    keep = np.repeat(start - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    ea, eb, c = parts.ea[keep], parts.eb[keep], parts.c[keep]
    rows = np.r_[ea, eb]
    by = np.argsort(rows, kind="stable")
    ptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=nl))].astype(np.int64)
    return ptr, np.r_[eb, ea][by], np.r_[c, c][by]


def _enumerate_small(call, parts, comps, y_nodes, best, other, rows, cols):
    """Components ``comps`` by the compiled enumeration (:mod:`_enumerate_cy`)."""
    nl = parts.n_linked
    mine = np.zeros(parts.sizes.size, dtype=bool)
    mine[comps] = True
    ptr, nbr, nbr_c = _neighbours(parts, comps)
    best_code = np.zeros(best.size, dtype=np.int64)
    other_code = np.zeros(nl, dtype=np.int64)
    _enumerate_cy.enumerate_components(parts.s, parts.offsets, parts.ea, parts.eb, parts.c,
                                       parts.e_off, ptr, nbr, nbr_c, comps, best_code, best,
                                       other_code, other, call.want_marginals)
    nodes = np.flatnonzero(mine[parts.cid])
    q = parts.cid[nodes]
    position = nodes - parts.offsets[q]
    y_nodes[nodes] = (best_code[q] >> position) & 1
    if call.want_flips:
        changed = other_code[nodes] ^ best_code[q]
        for bit in range(int(parts.sizes[comps].max()) if comps.size else 0):
            hit = ((changed >> bit) & 1).astype(bool)
            rows.append(parts.order[nodes[hit]])
            cols.append(parts.order[parts.offsets[q[hit]] + bit])


def _run(call, name: str, dynamic: bool = True, small: int = 0, dense: int = 0,
         one_tree: bool = False) -> None:
    """Per linked component one cut for the maximum; then, for the max-marginals, each sample
    clamped in turn to the label it does not take, all in the compiled loop of
    :mod:`_maxflow_cy`. ``dynamic`` re-solves each clamp from the optimum's flow and search
    trees and undoes it afterwards; otherwise both clamped cuts of every sample are cut from
    scratch (the 2n cuts of the naive method). Components of at most ``small`` samples are
    enumerated by the compiled kernel instead, and the other components of at most ``dense``
    samples cut on a dense residual matrix (``_smallcut.hpp``); ``one_tree``: larger ones
    re-cut by one tree grown from each clamped sample, keeping each re-cut's flow for the next
    (``_maxflow.hpp``)."""
    call.require_submodular(name)
    n = call.graph.n
    parts = _Components(call)
    nl = parts.n_linked
    sizes = parts.sizes
    best = np.zeros(sizes.size)
    other = np.zeros(nl)       # per node: its component's maximum with the node's label flipped
    y_nodes = np.zeros(nl, dtype=bool)
    # the entries of call.flips (want_flips), in blocks: samples and the samples that change
    # label in their other max-marginal labelling
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    enumerated = np.flatnonzero(sizes <= small)
    if enumerated.size:
        _enumerate_small(call, parts, enumerated, y_nodes, best, other, rows, cols)
    cut = np.flatnonzero(sizes > small)
    if cut.size:
        y_cut = np.zeros(nl, dtype=np.int8)
        r, q = _maxflow_cy.cut_components(parts.s, parts.offsets, parts.ea, parts.eb, parts.c,
                                          parts.e_off, cut, y_cut, best, other,
                                          call.want_marginals, call.want_flips, dynamic, dense,
                                          one_tree)
        nodes = np.flatnonzero((sizes > small)[parts.cid])
        y_nodes[nodes] = y_cut[nodes].astype(bool)
        if call.want_flips:
            rows.append(parts.order[r])
            cols.append(parts.order[q])
    singles = parts.order[nl:]
    s_single = call.unary[singles]
    call.labelling[parts.order[:nl]] = y_nodes
    call.labelling[singles] = s_single > 0
    call.value = float(best.sum() + np.maximum(s_single, 0.0).sum())
    if not call.want_marginals:
        return
    # a sample's max-marginal of the label it does not take: its component's clamped maximum
    # plus every other component's maximum
    flipped = np.empty(n)
    flipped[parts.order[:nl]] = call.value - best[parts.cid] + other
    flipped[singles] = call.value - np.maximum(s_single, 0.0) + np.minimum(s_single, 0.0)
    y_all = call.labelling.astype(bool)
    call.m_plus = np.where(y_all, call.value, flipped)
    call.m_minus = np.where(y_all, flipped, call.value)
    if call.want_flips:
        rows.append(singles)
        cols.append(singles)
        flip_rows, flip_cols = np.concatenate(rows), np.concatenate(cols)
        call.flips = sp.csr_matrix((np.ones(flip_rows.size, dtype=np.int8),
                                    (flip_rows, flip_cols)), shape=(n, n))


def run_graphcut(call) -> None:
    """Compiled enumeration for components of at most ``call.enumerate_up_to`` samples (default
    ENUMERATE_UP_TO), dense cuts (``_smallcut.hpp``) up to 64 samples, and for larger ones a cut
    and one-tree re-cuts (``_maxflow.hpp``: a tree grown from each clamped sample alone, inside
    its side of the optimum; samples in breadth-first order, each re-cut's flow kept for the
    next)."""
    _run(call, "graphcut", dynamic=True, small=call.enumerate_up_to, dense=_maxflow_cy.DENSE_MAX,
         one_tree=True)


def run_graphcut_dynamic(call) -> None:
    """Max-marginals by dynamic graph cuts (Kohli and Torr 2005, on the compiled
    Boykov-Kolmogorov max-flow of ``_maxflow.hpp``): one cut per component, then one clamp per
    sample, re-solved from the optimum's flow and search trees and undone afterwards."""
    _run(call, "graphcut-dynamic", dynamic=True)


def run_graphcut_static(call) -> None:
    """The baseline of dynamic cuts: both max-marginals of every sample by a cut from scratch
    (2n cuts, plus one per component for the maximum)."""
    _run(call, "graphcut-static", dynamic=False)


def _graphcut_cost(P, N):
    # the benchmark's graphs: a bounded number of cuts per sample of bounded components
    return P + N


def _brute_labelling_cost(P, N):
    return 2 ** (P + N) * (P + N)


#: Microseconds per unit of the ``seconds`` models below: one cut and the re-cuts timed with the
#: compiled max-flow (_maxflow.hpp) on kNN components, weak and strong pairs (the strong ones
#: make a clamp re-route the flow of most of the component, the worst case the constant
#: covers); the enumeration on cliques of 8-14; brute on chains of 10-14; the dense cuts on
#: HJA-shaped groups, cliques and chains of up to 64; the one-tree re-cuts on a kNN component
#: and on a chain plus random pairs (where each clamp draws flow from across the component).
#: The largest time per unit, rounded up (the measurements: docs/benchmarks/kinds.md, Cost
#: models).
_US_CUT, _US_RECUT, _US_STATIC, _US_ENUM, _US_BRUTE = 0.6, 0.08, 0.45, 0.005, 0.02
_US_DENSE, _US_ONE_TREE = 0.1, 0.05


#: The average degree from which one cut of a component costs more per sample and pair: the
#: augmenting paths of a dense component cross many pairs, so on large cliques a cut costs
#: several times per pair what it costs on kNN graphs, and the cut's microseconds per unit grow
#: as the degree over this (the measurements: docs/benchmarks/kinds.md, Cost models).
_DENSE_DEGREE = 250.0


def _cuts_seconds(k, e, want_marginals: bool, recut: float) -> float:
    """Components of k samples and e pairs (arrays) by graph cuts: one cut of each for the
    maximum, O(k + e) in practice on sparse components, growing with the average degree 2e/k
    past _DENSE_DEGREE (the augmenting paths of a dense component cross many pairs); for the
    max-marginals k re-cuts, each of which may search the whole component (dynamic,
    one-tree) or 2k cuts from scratch (static): O(k (k + e)), ``recut`` microseconds per
    unit."""
    k, e = k.astype(np.float64), e.astype(np.float64)
    density = np.maximum(1.0, 2.0 * e / np.maximum(k, 1.0) / _DENSE_DEGREE)
    us = _US_CUT * float(np.sum((k + e) * density))
    if want_marginals:
        us += recut * float(np.sum(k * (k + e)))
    return us


def _dense_seconds(k, want_marginals: bool) -> float:
    """Components of k <= 64 samples by the dense cuts: a cut and k re-cuts of a few word
    operations per node searched, O(k^2) in all (the max-marginals; the cut alone O(k))."""
    k = k.astype(np.float64)
    return _US_DENSE * float(np.sum(k * k if want_marginals else k))


def _seconds(recut: float, enumerate_up_to, dense_up_to=lambda call: 0):
    """The ``seconds(call)`` model of a graph-cut algorithm: components of at most
    ``enumerate_up_to(call)`` samples enumerated (2^k k each), then up to ``dense_up_to(call)``
    cut densely, larger ones cut with re-cuts of ``recut`` us per unit of k (k + e)."""
    def seconds(call) -> float:
        k, e = call.component_sizes()
        small = k <= enumerate_up_to(call)
        dense = ~small & (k <= dense_up_to(call))
        large = ~small & ~dense
        us = _US_ENUM * float(np.sum(np.exp2(k[small]) * k[small]))
        us += _dense_seconds(k[dense], call.want_marginals)
        us += _cuts_seconds(k[large], e[large], call.want_marginals, recut)
        return 1e-6 * (us + 0.1 * call.graph.n)
    return seconds


def _brute_seconds(call) -> float:
    """Every labelling of the whole graph: 2^n (n + m)."""
    n, m = call.graph.n, call.graph.n_edges
    return 1e-6 * _US_BRUTE * 2.0 ** n * (n + m)


KINDS = (
    ProblemKind("pairwise", "unary scores, linked pairs and binary labels -> the most violated "
                "labelling and every max-marginal (weighted 0-1 loss, HOB-SVM)", PairwiseProblem,
                PairwiseInstances(), oracle="brute", default="graphcut"),
)

ALGORITHMS = (
    Algorithm("graphcut", "pairwise", ("pairwise-zero-one",), True,
              f"O(2^k k) per component of k <= {ENUMERATE_UP_TO}; O(k^2) dense cuts up to "
              f"{_maxflow_cy.DENSE_MAX}; larger: a cut + one one-tree re-cut per sample",
              "compiled enumeration of the smallest components, dense cuts of small ones "
              "(_smallcut.hpp), one-tree re-cuts keeping each re-cut's flow for larger ones; "
              "pair scores <= 0",
              run_graphcut, cost=_graphcut_cost,
              seconds=_seconds(_US_ONE_TREE, lambda call: call.enumerate_up_to,
                               lambda call: _maxflow_cy.DENSE_MAX)),
    Algorithm("graphcut-dynamic", "pairwise", ("pairwise-zero-one",), True,
              "one s-t min cut per component + one dynamic re-cut per sample",
              "Dokania et al. (2014), sec. 3; Boykov & Kolmogorov (2004) (compiled, our own), "
              "dynamic cuts of Kohli & Torr (2005); pair scores <= 0", run_graphcut_dynamic,
              cost=_graphcut_cost,
              seconds=_seconds(_US_RECUT, lambda call: 0)),
    Algorithm("graphcut-static", "pairwise", ("pairwise-zero-one",), True,
              "2 s-t min cuts from scratch per sample",
              "the baseline of dynamic cuts (the same compiled max-flow); pair scores <= 0",
              run_graphcut_static,
              cost=_graphcut_cost, seconds=_seconds(_US_STATIC, lambda call: 0)),
    Algorithm("brute", "pairwise", None, True, "O(2^n (n + m))",
              "exhaustive over labellings: the oracle", run_brute,
              cost=_brute_labelling_cost, seconds=_brute_seconds, max_samples=MAX_SAMPLES),
)
