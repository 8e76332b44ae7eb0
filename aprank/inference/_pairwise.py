"""The pairwise kind: labellings of linked samples and their max-marginals (paper 002).

A labelling Y in {0, 1}^n of n samples, some pairs of which are linked (the edges E), scores

    score(Y) = sum_i y_i s_i + sum_{(a, b) in E, y_a != y_b} c_ab,

with s_i the unary score of y_i = 1 over y_i = 0 and c_ab the score of cutting the pair
(HOB-SVM: s_i = w_1'x_i, c_ab = eta w_2'Phi(x_a, x_b), eq. 4-6 up to a constant). With every
c_ab <= 0 (w_2 <= 0) the score is supermodular and -score is a graph-representable energy: an
s-t min cut maximises it exactly (Kolmogorov and Zabih 2004). The max-marginals are

    m_i^+ = max_{Y, y_i = 1} score(Y),    m_i^- = max_{Y, y_i = 0} score(Y)    (eqs. 9-10),

and HOB-SVM ranks samples by m_i^+ - m_i^- (eq. 11). One of the two is the maximum itself; the
other is a cut with sample i clamped to the label it does not take in the maximising labelling.

The graph falls apart into connected components (pairs with c_ab = 0 link nothing), and a
component's max-marginals do not depend on the others: only components of two or more samples
need a cut; a single sample's max-marginals are closed form.

Every algorithm of the kind fills a :class:`PairwiseCall`: the maximising labelling, the
max-marginals and, on request, for every sample the set of samples that change label between
the maximising labelling and the max-marginal labelling of the other value of that sample
(``flips``, CSR) -- what HOAP-SVM's linearisation needs (paper 002 Proposition 4).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import maxflow
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from aprank import validation
from aprank.inference import _enumerate_cy
from aprank.inference._problem import Instance, QueryProblem, random_size, with_ties
from aprank.inference._registry import resolve
from aprank.losses import get_loss

__all__ = ["PairwiseGraph", "PairwiseCall", "PairwiseProblem", "PairwiseInstance",
           "PairwiseResult", "max_marginals", "run_graphcut", "run_graphcut_dynamic",
           "run_graphcut_static", "run_brute", "group_pairs", "ENUMERATE_UP_TO",
           "BRUTE_MAX_SAMPLES"]

BRUTE_MAX_SAMPLES = 16


# ---------------------------------------------------------------------------- structure
class PairwiseGraph:
    """n samples and the linked pairs E, validated once.

    edges : (m, 2) integer array of pairs (i, j), i != j, or an (n, n) scipy.sparse adjacency
        matrix (its non-zero pattern, made symmetric, gives the pairs i < j; the values are
        ignored), or None (no pairs). Each row of an array is one term of the sum over E: a
        pair listed twice counts twice.
    """

    def __init__(self, n: int, edges=None):
        self.n = int(n)
        if edges is None:
            pairs = np.zeros((0, 2), dtype=np.int64)
        elif sp.issparse(edges):
            if edges.shape != (self.n, self.n):
                raise ValueError(f"the adjacency matrix must be ({self.n}, {self.n}), got {edges.shape}")
            A = sp.csr_matrix(edges)
            A.eliminate_zeros()                  # an explicitly stored zero links nothing
            A = A.tocoo()
            A = sp.coo_matrix((np.ones(A.nnz), (A.row, A.col)), shape=A.shape)
            if np.any(A.row == A.col):
                i = int(A.row[A.row == A.col][0])
                raise ValueError(f"the adjacency matrix links sample {i} to itself")
            upper = sp.triu(A + A.T, k=1).tocoo()
            pairs = np.column_stack([upper.row, upper.col]).astype(np.int64)
        else:
            pairs = np.asarray(edges)
            if pairs.size == 0:
                pairs = np.zeros((0, 2), dtype=np.int64)
            if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
                raise ValueError("edges must be an (m, 2) integer array of sample pairs or an "
                                 f"(n, n) scipy.sparse adjacency matrix, got {pairs.dtype} "
                                 f"array of shape {pairs.shape}")
            pairs = pairs.astype(np.int64)
            bad = np.flatnonzero((pairs < 0).any(1) | (pairs >= self.n).any(1))
            if bad.size:
                raise ValueError(f"edges[{int(bad[0])}] = {pairs[bad[0]].tolist()} is out of range "
                                 f"for {self.n} samples")
            loops = np.flatnonzero(pairs[:, 0] == pairs[:, 1])
            if loops.size:
                raise ValueError(f"edges[{int(loops[0])}] links sample {int(pairs[loops[0], 0])} "
                                 "to itself")
        self.edges = pairs
        self.edges.setflags(write=False)

    @property
    def n_edges(self) -> int:
        return self.edges.shape[0]

    def components(self, active: np.ndarray):
        """(order, offsets, comp) of the components that the ``active`` edges link: ``comp``
        the component of each sample; ``order`` the samples, those of components of two or
        more first, component by component (bounds ``offsets``), then the single samples."""
        e = self.edges[active]
        A = sp.coo_matrix((np.ones(e.shape[0]), (e[:, 0], e[:, 1])), shape=(self.n, self.n))
        _, comp = connected_components(A, directed=False)
        linked = np.bincount(comp)[comp] > 1
        order = np.lexsort((comp, ~linked))
        cpos = comp[order[:np.count_nonzero(linked)]]
        offsets = np.r_[0, np.flatnonzero(np.diff(cpos)) + 1, cpos.size].astype(np.int64) \
            if cpos.size else np.zeros(1, dtype=np.int64)
        return order, offsets, comp


class PairwiseCall:
    """One maximisation: unary scores ``unary`` (n,) and pair scores ``pair`` (m,) on ``graph``.
    An algorithm's ``run(call)`` fills ``labelling`` (uint8) and ``value`` (the maximum); when
    ``want_marginals``, ``m_plus`` and ``m_minus`` (the max-marginals); when ``want_flips``,
    also ``flips`` (CSR, row i: the samples whose label differs between the maximising labelling
    and the best one with sample i taking the other value; i itself included)."""

    def __init__(self, graph: PairwiseGraph, unary: np.ndarray, pair: np.ndarray,
                 want_flips: bool = False, want_marginals: bool = True,
                 enumerate_up_to: Optional[int] = None):
        self.graph, self.unary, self.pair = graph, unary, pair
        self.enumerate_up_to = _as_enumerate_up_to(enumerate_up_to)
        self.want_flips = want_flips
        self.want_marginals = want_marginals or want_flips
        self.labelling = np.zeros(graph.n, dtype=np.uint8)
        self.value = 0.0
        self.m_plus: Optional[np.ndarray] = None
        self.m_minus: Optional[np.ndarray] = None
        self.flips: Optional[sp.csr_matrix] = None

    def require_submodular(self, algorithm: str) -> None:
        bad = np.flatnonzero(self.pair > 0)
        if bad.size:
            e = int(bad[0])
            raise ValueError(
                f"algorithm {algorithm!r} is exact only when every pair score is <= 0 (w2 <= 0: "
                f"a submodular energy); pair {e} {self.graph.edges[e].tolist()} has score "
                f"{float(self.pair[e])!r}. Constrain w2 <= 0, or use 'brute' on tiny graphs")


class _Components:
    """The samples of ``call`` grouped by the components its non-zero pairs link.

    Samples of components of two or more ("linked") come first, as nodes 0..n_linked-1,
    component by component (``offsets``); their pairs are sorted by component (``e_off``). The
    single samples follow: their max-marginals are closed form.
    """

    def __init__(self, call: PairwiseCall):
        graph = call.graph
        active = call.pair != 0            # a pair scoring 0 links nothing
        e = graph.edges[active]
        self.order, self.offsets, _ = graph.components(active)   # sample at each position
        self.n_linked = nl = int(self.offsets[-1])
        node = np.empty(graph.n, dtype=np.int64)
        node[self.order] = np.arange(graph.n)
        sizes = np.diff(self.offsets)
        self.cid = np.repeat(np.arange(sizes.size), sizes)      # component of each node
        ea, eb = node[e[:, 0]], node[e[:, 1]]
        by = np.argsort(self.cid[ea], kind="stable")
        self.ea, self.eb = ea[by], eb[by]
        self.c = call.pair[active][by]                          # pair scores, <= 0
        self.e_off = np.searchsorted(self.cid[self.ea], np.arange(sizes.size + 1))
        self.s = call.unary[self.order[:nl]]                    # unary scores of the nodes

    def graph(self, c: int):
        """(PyMaxflow graph of component c, its constant): y = 1 is the source side. The cut
        minimises sum_i [y_i = 1] max(-s_i, 0) + [y_i = 0] max(s_i, 0) - sum_cut c_ab, which
        is the constant sum_i max(s_i, 0) minus the score."""
        a, b = self.offsets[c], self.offsets[c + 1]
        s = self.s[a:b]
        ea, eb = self.ea[self.e_off[c]:self.e_off[c + 1]] - a, self.eb[self.e_off[c]:self.e_off[c + 1]] - a
        w = -self.c[self.e_off[c]:self.e_off[c + 1]]
        g = maxflow.Graph[float](b - a, ea.size)
        g.add_nodes(b - a)
        g.add_grid_tedges(np.arange(b - a), np.maximum(s, 0.0), np.maximum(-s, 0.0))
        g.add_edges(ea, eb, w, w)
        return g, float(np.maximum(s, 0.0).sum()), ea, eb, w


def _neighbours(parts: _Components):
    """CSR of each node's neighbours and pair scores (a pair listed at both ends)."""
    nl = parts.n_linked
    rows = np.r_[parts.ea, parts.eb]
    by = np.argsort(rows, kind="stable")
    ptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=nl))].astype(np.int64)
    return ptr, np.r_[parts.eb, parts.ea][by], np.r_[parts.c, parts.c][by]


def _enumerate_small(call, parts, comps, y_nodes, best, other, rows, cols):
    """Components ``comps`` by the compiled enumeration (:mod:`_enumerate_cy`)."""
    nl = parts.n_linked
    ptr, nbr, nbr_c = _neighbours(parts)
    best_code = np.zeros(best.size, dtype=np.int64)
    other_code = np.zeros(nl, dtype=np.int64)
    _enumerate_cy.enumerate_components(parts.s, parts.offsets, parts.ea, parts.eb, parts.c,
                                       parts.e_off, ptr, nbr, nbr_c, comps, best_code, best,
                                       other_code, other, call.want_marginals)
    sizes = np.diff(parts.offsets)
    nodes = np.flatnonzero(np.isin(parts.cid, comps))
    q = parts.cid[nodes]
    position = nodes - parts.offsets[q]
    y_nodes[nodes] = (best_code[q] >> position) & 1
    if call.want_flips:
        changed = other_code[nodes] ^ best_code[q]
        for bit in range(int(sizes[comps].max()) if comps.size else 0):
            hit = ((changed >> bit) & 1).astype(bool)
            rows.append(parts.order[nodes[hit]])
            cols.append(parts.order[parts.offsets[q[hit]] + bit])


def _run(call: PairwiseCall, name: str, dynamic: bool = True, small: int = 0) -> None:
    """Per linked component one cut for the maximum; then, for the max-marginals, each sample
    clamped in turn to the label it does not take. ``dynamic`` re-solves each clamp from the
    previous flow and search trees (and removes the clamp again, which the next re-solve
    absorbs); otherwise both clamped cuts of every sample are built and cut from scratch (the
    2n cuts of the naive method). Components of at most ``small`` samples are enumerated by the
    compiled kernel instead."""
    call.require_submodular(name)
    n = call.graph.n
    parts = _Components(call)
    nl = parts.n_linked
    sizes = np.diff(parts.offsets)
    best = np.zeros(sizes.size)
    other = np.zeros(nl)       # per node: its component's maximum with the node's label flipped
    y_nodes = np.zeros(nl, dtype=bool)
    rows, cols = [], []
    enumerated = np.flatnonzero(sizes <= small)
    if enumerated.size:
        _enumerate_small(call, parts, enumerated, y_nodes, best, other, rows, cols)
    for c in np.flatnonzero(sizes > small):
        a, b = int(parts.offsets[c]), int(parts.offsets[c + 1])
        k = b - a
        g, base, ea, eb, w = parts.graph(c)
        best[c] = base - g.maxflow()
        everyone = np.arange(k)
        y = ~g.get_grid_segments(everyone)           # segment False = source side = label 1
        y_nodes[a:b] = y
        if not call.want_marginals:
            continue
        # A clamp beyond what the label can gain (|s_i| + its pair weights) decides it; a
        # small one leaves little flow to push and push back.
        reach = np.abs(parts.s[a:b]) + np.bincount(ea, w, k) + np.bincount(eb, w, k)
        clamp = 1.0 + 2.0 * reach
        src = np.where(y, 0.0, clamp).tolist()
        snk = np.where(y, clamp, 0.0).tolist()
        flows = []
        segments = np.empty((k, k), dtype=bool) if call.want_flips else None
        for i in range(k):
            if dynamic:
                g.add_tedge(i, src[i], snk[i])
                g.mark_node(i)
                flows.append(g.maxflow(reuse_trees=True))
                h = g
            else:
                h = parts.graph(c)[0]
                h.add_tedge(i, src[i], snk[i])
                flows.append(h.maxflow())
            if segments is not None:
                segments[i] = h.get_grid_segments(everyone)
            if dynamic:
                g.add_tedge(i, -src[i], -snk[i])
                g.mark_node(i)
            else:                  # the naive method computes the other max-marginal too
                h = parts.graph(c)[0]
                h.add_tedge(i, snk[i], src[i])
                h.maxflow()
        other[a:b] = base - np.asarray(flows)
        if segments is not None:
            # segment True = sink side = label 0: equal to y exactly where the label changed
            r, q = np.nonzero(segments == y[None, :])
            rows.append(parts.order[a + r])
            cols.append(parts.order[a + q])
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
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        call.flips = sp.csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)),
                                   shape=(n, n))


#: Components of at most this many samples are enumerated by "graphcut" (2^k k steps against
#: k dynamic re-cuts with a Python call each; the crossover measured by
#: ``python -m aprank bench --pairwise``).
ENUMERATE_UP_TO = 10


def _as_enumerate_up_to(k) -> int:
    if k is None:
        return ENUMERATE_UP_TO
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 0 <= k <= _enumerate_cy.MAX_SIZE:
        raise ValueError(f"enumerate_up_to must be an integer in [0, {_enumerate_cy.MAX_SIZE}], "
                         f"got {k!r}")
    return int(k)


def run_graphcut(call: PairwiseCall) -> None:
    """Compiled enumeration for components of at most ``call.enumerate_up_to`` samples (default
    ENUMERATE_UP_TO), dynamic graph cuts (:func:`run_graphcut_dynamic`) for larger ones."""
    _run(call, "graphcut", dynamic=True, small=call.enumerate_up_to)


def run_graphcut_dynamic(call: PairwiseCall) -> None:
    """Max-marginals by dynamic graph cuts (Kohli and Torr 2005; PyMaxflow's Boykov-Kolmogorov
    with ``reuse_trees``): one cut per component, then one clamp per sample, re-solved from the
    previous flow and search trees."""
    _run(call, "graphcut-dynamic", dynamic=True)


def run_graphcut_static(call: PairwiseCall) -> None:
    """The baseline of dynamic cuts: both max-marginals of every sample by a cut from scratch
    (2n cuts, plus one per component for the maximum)."""
    _run(call, "graphcut-static", dynamic=False)


def run_brute(call: PairwiseCall) -> None:
    """Enumerate all 2^n labellings (the oracle; any sign of the pair scores)."""
    n = call.graph.n
    Y = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    e = call.graph.edges
    score = Y @ call.unary + (Y[:, e[:, 0]] != Y[:, e[:, 1]]) @ call.pair
    top = int(np.argmax(score))
    call.labelling[:] = Y[top]
    call.value = float(score[top])
    call.m_plus = np.array([score[Y[:, i]].max() for i in range(n)])
    call.m_minus = np.array([score[~Y[:, i]].max() for i in range(n)])
    if call.want_flips:
        rows, cols = [], []
        for i in range(n):
            side = ~Y[top, i]
            rows_i = np.flatnonzero(Y[:, i] == side)
            other = rows_i[int(np.argmax(score[rows_i]))]
            changed = np.flatnonzero(Y[other] != Y[top])
            rows.append(np.full(changed.size, i))
            cols.append(changed)
        call.flips = sp.csr_matrix((np.ones(sum(map(len, rows)), np.int8),
                                    (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class PairwiseResult:
    """A maximised labelling and its max-marginals.

    labelling : int8 (n,), 1 where the maximising labelling marks the sample relevant.
    value : the maximum (of the score, plus the loss when loss-augmented).
    m_plus, m_minus : (n,) max-marginals of the same function (eqs. 9-10); max of the two is
        ``value`` for every sample. None when not asked for (``marginals=False``).
    loss : Delta(Y*, Y) of the labelling (0 without labels).
    objective : value - score(Y*) for loss-augmented inference (the constraint violation, >= 0);
        the value itself otherwise.
    flips : CSR (n, n) or None, see :class:`PairwiseCall`.
    algorithm : name of the algorithm.
    """

    labelling: np.ndarray
    value: float
    m_plus: Optional[np.ndarray]
    m_minus: Optional[np.ndarray]
    loss: float
    objective: float
    algorithm: str
    flips: Optional[sp.csr_matrix] = field(default=None, repr=False)

    @property
    def scores(self) -> np.ndarray:
        """m_i^+ - m_i^-: HOB-SVM's ranking scores (eq. 11)."""
        if self.m_plus is None:
            raise ValueError("this result was computed without max-marginals (marginals=False)")
        return self.m_plus - self.m_minus


def _as_pair_scores(pair, m: int) -> np.ndarray:
    if pair is None:
        return np.zeros(m)
    c = np.asarray(pair)
    if c.ndim == 0:
        c = np.full(m, float(c))
    if c.shape != (m,):
        raise ValueError(f"edge_scores must hold one score per pair ({m}), got shape {c.shape}")
    return validation.as_scores(c, "edge_scores") if m else np.zeros(0)


def max_marginals(scores, edges=None, edge_scores=None, *, algorithm: str = "graphcut",
                  flips: bool = False, graph: Optional[PairwiseGraph] = None,
                  enumerate_up_to: Optional[int] = None) -> PairwiseResult:
    """Maximise sum_i y_i s_i + sum_{pairs cut} c over labellings and return the labelling and
    every max-marginal (no labels, no loss: HOB-SVM's prediction).

    scores : (n,) unary scores s_i (of y_i = 1 over y_i = 0).
    edges : pairs, see :class:`PairwiseGraph`; or pass ``graph``, a PairwiseGraph built once
        (what a learner does: the pairs are validated and stored once).
    edge_scores : (m,) score of cutting each pair (a scalar broadcasts); <= 0 for "graphcut".
    algorithm : a name of the "pairwise" kind ("graphcut", "graphcut-static", "brute").
    flips : also return, per sample, the samples that change label in its other max-marginal
        labelling.
    graph : a PairwiseGraph built earlier, instead of ``edges``.
    enumerate_up_to : "graphcut" enumerates components of at most this many samples (default
        ENUMERATE_UP_TO = 10, the crossover on cliques; at most 24) and cuts larger ones.

    Example: two linked samples; the second is pulled up by the first.

    >>> r = max_marginals([2.0, -0.5], [[0, 1]], -1.0)
    >>> r.labelling.tolist(), r.scores.tolist()
    ([1, 1], [1.5, 0.5])
    """
    s = validation.as_scores(scores)
    graph = _as_graph(s.shape[0], edges if graph is None else graph)
    algo = resolve(get_loss("pairwise-zero-one"), algorithm)
    _check_size(graph, algo)
    c = _as_pair_scores(edge_scores, graph.n_edges)
    _check_summable(graph, s, c, False)
    call = PairwiseCall(graph, np.ascontiguousarray(s), c, flips, enumerate_up_to=enumerate_up_to)
    algo.run(call)
    return PairwiseResult(call.labelling.astype(np.int8), call.value, call.m_plus, call.m_minus,
                          0.0, call.value, algo.name, call.flips)


def _check_summable(graph: PairwiseGraph, s, c, augmented: bool) -> None:
    """Labelling scores sum n unary and m pair scores (and, augmented, a loss term of at most
    1 per sample), and the cuts' clamps add 2 (|s_i| + pair weights) once more: refuse scores
    whose sums could overflow float64 (ValueError)."""
    validation.check_summable("the unary and pair scores", (s, 4 * graph.n + 4),
                              (c, 4 * graph.n_edges + 4), (np.ones(1), graph.n if augmented else 0))


def _as_graph(n: int, edges) -> PairwiseGraph:
    """A PairwiseGraph of n samples (one built earlier is reused: its pairs are validated)."""
    if isinstance(edges, PairwiseGraph):
        if edges.n != n:
            raise ValueError(f"the graph has {edges.n} samples, the scores {n}")
        return edges
    return PairwiseGraph(n, edges)


def _check_size(graph, algo):
    if algo.max_samples is not None and graph.n > algo.max_samples:
        raise ValueError(f"algorithm {algo.name!r} enumerates every labelling and refuses more "
                         f"than {algo.max_samples} samples (got {graph.n})")


# ---------------------------------------------------------------------------- the problem
@dataclass(frozen=True)
class PairwiseInstance(Instance):
    """Seeded inputs of one cross-check of the pairwise kind: an :class:`Instance` with its
    ``edges`` and ``edge_scores``."""

    edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    edge_scores: np.ndarray = field(default_factory=lambda: np.zeros(0))


class PairwiseProblem(QueryProblem):
    """Linked samples with binary labels: the problem type of the "pairwise" kind (loss
    "pairwise-zero-one", the weighted 0-1 loss of paper 002 eq. 7 over one labelling).

    Loss-augmented inference maximises Delta(Y*, Y) + score(Y) (see the module docstring);
    Delta = (J #positives labelled 0 + #negatives labelled 1) / (J P + N) adds J / (J P + N)
    to a positive's score of y = 0 and 1 / (J P + N) to a negative's score of y = 1, so it is a
    change of the unary scores and a constant.

    Parameters
    ----------
    labels : (n,) bool, {0, 1} or {-1, +1}.
    loss : "pairwise-zero-one" or ``PairwiseZeroOne(J)``.
    edges : the pairs E (see :class:`PairwiseGraph`), or a PairwiseGraph built earlier.
    edge_scores : (m,) default score of cutting each pair (0 if None); ``solve`` may pass others.
    qid : must be None: the samples form one labelling (the graph's components play the part
        of queries).
    """

    def __init__(self, labels, loss="pairwise-zero-one", *, qid=None, empty="error",
                 n_samples=None, edges=None, edge_scores=None):
        if get_loss(loss).kind != "pairwise":
            raise ValueError(f"PairwiseProblem solves the 'pairwise' kind, not the loss "
                             f"{get_loss(loss).name!r} of kind {get_loss(loss).kind!r}")
        if qid is not None:
            raise ValueError("the pairwise kind labels all samples jointly: qid is not supported "
                             "(samples without pairs between them are independent anyway)")
        super().__init__(labels, loss, qid=None, empty=empty, n_samples=n_samples)
        self.graph = _as_graph(self.n_samples, edges)
        self.edge_scores = _as_pair_scores(edge_scores, self.graph.n_edges)
        v, z = self.loss.weights(self.is_pos)
        self.normaliser = float(z)
        # Delta as unary scores: +v/z for the wrong label; its constant is sum over positives
        self.loss_unary = np.where(self.is_pos, -v, v) / z if z > 0 else np.zeros(self.n_samples)
        self.loss_constant = float(v[self.is_pos].sum() / z) if z > 0 else 0.0

    def score(self, labelling, scores, edge_scores=None) -> float:
        """score(Y) = sum_i y_i s_i + sum over cut pairs of their score."""
        y = np.asarray(labelling).astype(bool)
        c = self.edge_scores if edge_scores is None else _as_pair_scores(edge_scores, self.graph.n_edges)
        e = self.graph.edges
        return float(np.asarray(scores, float)[y].sum() + c[y[e[:, 0]] != y[e[:, 1]]].sum())

    def delta(self, labelling) -> float:
        """The weighted 0-1 loss of a labelling (eq. 7)."""
        y = np.asarray(labelling).astype(bool)
        v, z = self.loss.weights(self.is_pos)
        return float(v[y != self.is_pos].sum() / z) if z > 0 else 0.0

    def solve(self, scores, edge_scores=None, algorithm: str = "graphcut", *,
              augmented: bool = True, marginals: bool = True,
              flips: bool = False) -> PairwiseResult:
        """Maximise Delta + score (``augmented``) or score alone; with every max-marginal
        when ``marginals`` (a learner's most violated labelling needs only the maximum: one
        cut per component instead of one per sample)."""
        return self._solve(validation.as_scores(scores), resolve(self.loss, algorithm),
                           edge_scores, augmented, flips, marginals)

    def _solve(self, s, algo, edge_scores, augmented, flips, marginals=True):
        if s.shape[0] != self.n_samples:
            raise ValueError(f"scores has {s.shape[0]} entries but the problem has "
                             f"{self.n_samples} samples")
        _check_size(self.graph, algo)
        c = self.edge_scores if edge_scores is None else _as_pair_scores(edge_scores, self.graph.n_edges)
        _check_summable(self.graph, s, c, augmented)
        unary = s + self.loss_unary if augmented else s
        call = PairwiseCall(self.graph, np.ascontiguousarray(unary), c, flips, marginals)
        algo.run(call)
        const = self.loss_constant if augmented else 0.0
        y = call.labelling.astype(np.int8)
        value = call.value + const
        objective = value - self.score(self.is_pos, s, c) if augmented else value
        m_plus = None if call.m_plus is None else call.m_plus + const
        m_minus = None if call.m_minus is None else call.m_minus + const
        return PairwiseResult(y, value, m_plus, m_minus, self.delta(y), objective, algo.name,
                              call.flips)

    def solve_one(self, scores, algorithm: str = "graphcut") -> PairwiseResult:
        """Loss-augmented inference (what :func:`aprank.infer` returns for this kind)."""
        return self._one_checked(validation.as_scores(scores), resolve(self.loss, algorithm))

    def _one_checked(self, scores, algo) -> PairwiseResult:
        return self._solve(scores, algo, None, True, False)

    def _solve_checked(self, scores, algo) -> PairwiseResult:
        return self._solve(scores, algo, None, True, False)

    # ------------------------------------------------------------------------ cross-checks
    @staticmethod
    def random_instance(seed: int, trial: int, max_n: int = 2000) -> PairwiseInstance:
        """Seeded instance number ``trial``: half with at most 12 samples (for the oracle),
        groups of linked samples (cliques, chains or random pairs), pair scores <= 0 with
        zeros among them, unary scores with and without ties."""
        rng = np.random.default_rng([seed, trial, 2002])
        n = random_size(rng, max_n, smallest=2)
        labels = rng.random(n) < rng.choice([0.2, 0.5])
        labels[int(rng.integers(n))] = True
        edges = _random_edges(rng, n)
        c = -np.abs(rng.standard_normal(edges.shape[0])) * rng.choice([0.3, 1.0, 3.0])
        c[rng.random(c.size) < 0.2] = 0.0
        ties, (scores, c) = with_ties(rng, rng.standard_normal(n), c)
        desc = f"n={n} m={edges.shape[0]} P={int(labels.sum())} ties={ties}"
        return PairwiseInstance(scores, labels, desc, seed, trial, max_n, edges=edges,
                                edge_scores=c)

    @staticmethod
    def grouped_instance(P: int, N: int, shift: float, seed: int = 0, sizes=None,
                         group_size: int = 20) -> PairwiseInstance:
        """P positives ~ N(shift, 1) among P + N samples split into groups (``sizes``, or
        groups of ``group_size``), every pair within a group linked with score
        -|N(0, 1)| / 4: the benchmark's instances."""
        return group_instance(P, N, shift, seed, group_size, sizes)

    @staticmethod
    def bench_instance(P: int, N: int, shift: float, seed: int = 0, sizes=None,
                       group_size: int = 20) -> PairwiseInstance:
        """The benchmark's instance of a cell: P positives ~ N(shift, 1) among P + N samples in
        groups (``sizes``, or groups of ``group_size``: a recording's segments), every pair of
        a group linked, pair scores -|N(0, 1)| / 4."""
        return group_instance(P, N, shift, seed, group_size, sizes)

    @classmethod
    def solve_instance(cls, instance: PairwiseInstance, loss, algorithm: str) -> PairwiseResult:
        return cls(instance.labels, loss, edges=instance.edges,
                   edge_scores=instance.edge_scores).solve_one(instance.scores, algorithm)

    @staticmethod
    def disagreement(result, reference, instance) -> Optional[str]:
        """Exact algorithms share the max-marginals (labellings may differ only under ties)."""
        scale = max(1.0, float(np.abs(reference.m_plus).max()), float(np.abs(reference.m_minus).max()))
        for name in ("m_plus", "m_minus"):
            diff = np.abs(getattr(result, name) - getattr(reference, name))
            if diff.max() > 1e-9 * scale:
                i = int(np.argmax(diff))
                return (f"{name}[{i}] = {getattr(result, name)[i]!r} != "
                        f"{getattr(reference, name)[i]!r}")
        return None

    @classmethod
    def reproducer(cls, instance: PairwiseInstance, loss: str, algorithm: str) -> str:
        return cls.seeded_reproducer(instance, loss, algorithm)


def _random_edges(rng, n):
    shape = int(rng.integers(3))
    if shape == 0:      # cliques of random groups (samples of one recording)
        group = rng.integers(0, max(1, n // 3), n)
        a, b = np.triu_indices(n, 1)
        keep = group[a] == group[b]
        return np.column_stack([a[keep], b[keep]]).astype(np.int64)
    if shape == 1:      # a chain
        return np.column_stack([np.arange(n - 1), np.arange(1, n)]).astype(np.int64)
    m = int(rng.integers(0, 2 * n))
    pairs = rng.integers(0, n, (m, 2))
    return pairs[pairs[:, 0] != pairs[:, 1]].astype(np.int64)


def group_pairs(groups) -> np.ndarray:
    """(m, 2) array of every pair (i, j), i < j, of samples with equal ``groups`` entries,
    group by group (in sorted group order)."""
    groups = np.asarray(groups)
    if groups.ndim != 1:
        raise ValueError(f"groups must be 1-D, got shape {groups.shape}")
    order = np.argsort(groups, kind="stable")
    _, starts, counts = np.unique(groups[order], return_index=True, return_counts=True)
    # one broadcast per distinct group size, then back to group order
    blocks, rank = [], []
    for k in np.unique(counts[counts > 1]):
        which = np.flatnonzero(counts == k)
        local = np.column_stack(np.triu_indices(k, 1))
        blocks.append((starts[which][:, None, None] + local[None]).reshape(-1, 2))
        rank.append(np.repeat(which, local.shape[0]))
    if not blocks:
        return np.zeros((0, 2), dtype=np.int64)
    positions = np.concatenate(blocks)[np.argsort(np.concatenate(rank), kind="stable")]
    return np.sort(order[positions], axis=1).astype(np.int64)


def group_instance(P: int, N: int, shift: float, seed: int = 0, group_size: int = 20,
                   sizes=None) -> PairwiseInstance:
    """P positives ~ N(shift, 1) among P + N samples split into groups (``sizes``, or groups
    of ``group_size``), every pair within a group linked with score -|N(0, 1)| / 4."""
    rng = np.random.default_rng(seed)
    n = P + N
    labels = np.zeros(n, dtype=bool)
    labels[rng.choice(n, P, replace=False)] = True
    scores = rng.standard_normal(n) + shift * labels
    if sizes is None:
        sizes = np.full(n // group_size, group_size)
        if n % group_size:
            sizes = np.r_[sizes, n % group_size]
    sizes = np.asarray(sizes, dtype=np.int64)
    edges = group_pairs(np.repeat(np.arange(sizes.size), sizes))
    c = -np.abs(rng.standard_normal(edges.shape[0])) / 4
    return PairwiseInstance(scores, labels, f"P={P} N={N} groups={sizes.size}", seed, 0, n,
                            edges=edges, edge_scores=c)
