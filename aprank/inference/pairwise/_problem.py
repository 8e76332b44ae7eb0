"""The pairwise kind: labellings of linked samples and their max-marginals (Dokania et al. 2014).

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
(``flips``, CSR) -- what HOAP-SVM's linearisation needs (Dokania et al. 2014, Proposition 4).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

import aprank.inference.pairwise._components_cy as _components_cy
import aprank.inference.pairwise._enumerate_cy as _enumerate_cy
from aprank import validation
from aprank.inference._base import QueryProblem
from aprank.inference._registry import as_algorithm, warn_if_slow_call
from aprank.losses import ZeroOne, get_loss

__all__ = ["PairwiseGraph", "PairwiseCall", "PairwiseProblem", "PairwiseResult",
           "max_marginals", "group_pairs", "ENUMERATE_UP_TO"]


# ---------------------------------------------------------------------------- structure
class PairwiseGraph:
    """n samples and the linked pairs E, validated once.

    Parameters
    ----------
    n : int
        Number of samples.
    edges : array-like (m, 2), sparse matrix (n, n) or None
        Integer pairs (i, j), i != j, or a scipy.sparse adjacency matrix, or None (no pairs).
        Each row of an array is one term of the sum over E: a pair listed twice counts twice.
        An adjacency matrix gives the pairs only, never their scores: a stored 1 (or True)
        links i and j, a stored 0 links nothing, and the pattern, made symmetric, gives the
        pairs i < j (once each). The pair scores are ``edge_scores``, one per pair in that
        order (0 when not given: no interaction).

    Raises
    ------
    ValueError
        For an adjacency matrix with a stored value other than 0 and 1 (duplicate entries of
        a COO matrix summed first): a NaN or infinity, or a weight. A weighted adjacency read
        as a pattern would silently drop its weights (and, with the default pair scores of 0,
        mean no interaction at all), so pass the pattern (``A != 0``) and the scores as
        ``edge_scores``.
    """

    def __init__(self, n: int, edges=None):
        self.n = int(n)
        if edges is None:
            pairs = np.zeros((0, 2), dtype=np.int64)
        elif sp.issparse(edges):
            if edges.shape != (self.n, self.n):
                raise ValueError(f"the adjacency matrix must be ({self.n}, {self.n}), "
                                 f"got {edges.shape}")
            A = sp.csr_matrix(edges)
            A.sum_duplicates()
            _check_pattern(A)
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
        return self.grouping(active)[:3]

    def grouping(self, active: np.ndarray):
        """(order, offsets, comp, pairs, e_off, ends): :meth:`components`, the ``active`` pairs
        (indices into ``edges``) grouped by component, component c's at
        pairs[e_off[c]:e_off[c+1]], and the positions in ``order`` of each such pair's samples
        (compiled: :mod:`_components_cy`)."""
        active = np.ascontiguousarray(active, dtype=bool).view(np.uint8)
        return _components_cy.group(self.n, self.edges, active)


def _check_pattern(A) -> None:
    """Refuse an adjacency matrix (CSR, duplicates summed) storing anything but 0 and 1."""
    if A.dtype.kind == "b":
        return
    values = A.data
    if A.dtype.kind not in "iuf":
        raise ValueError(f"the adjacency matrix must hold 0 (no pair) and 1 (a pair), got dtype "
                         f"{A.dtype}; pass the pair scores as edge_scores=")
    bad = np.flatnonzero((values != 0) & (values != 1))
    if bad.size:
        k = int(bad[0])
        i = int(np.searchsorted(A.indptr, k, side="right") - 1)
        j, v = int(A.indices[k]), values[k].item()
        what = "is not finite" if not np.isfinite(v) else "is a weight, not 0 or 1"
        raise ValueError(f"adjacency[{i}, {j}] = {v!r} {what}: the adjacency gives the pairs only "
                         "(1: a pair, 0: none); pass the pair scores as edge_scores= and the "
                         "pattern as edges (e.g. A != 0)")


class PairwiseCall:
    """One maximisation: unary scores ``unary`` (n,) and pair scores ``pair`` (m,) on ``graph``.
    An algorithm's ``run(call)`` fills ``labelling`` (uint8) and ``value`` (the maximum); when
    ``want_marginals``, ``m_plus`` and ``m_minus`` (the max-marginals); when ``want_flips``,
    also ``flips`` (CSR, row i: the samples whose label differs between the maximising labelling
    and the best one with sample i taking the other value; i itself included)."""

    def __init__(self, graph: PairwiseGraph, unary: np.ndarray, pair: np.ndarray,
                 want_flips: bool = False, want_marginals: bool = True,
                 enumerate_up_to: int | None = None):
        self.graph, self.unary, self.pair = graph, unary, pair
        self.enumerate_up_to = _as_enumerate_up_to(enumerate_up_to)
        self.want_flips = want_flips
        self.want_marginals = want_marginals or want_flips
        self.labelling = np.zeros(graph.n, dtype=np.uint8)
        self.value = 0.0
        self.m_plus: np.ndarray | None = None
        self.m_minus: np.ndarray | None = None
        self.flips: sp.csr_matrix | None = None

    @cached_property
    def grouping(self):
        """(order, offsets, comp, pairs, e_off, ends) of the components that the non-zero pairs
        link (see :meth:`PairwiseGraph.grouping`): found once per call, for the cost estimate
        and the graph cuts."""
        return self.graph.grouping(self.pair != 0)

    @property
    def components(self):
        """(order, offsets, comp), as :meth:`PairwiseGraph.components`."""
        return self.grouping[:3]

    def component_sizes(self):
        """(samples, pairs) of each component of two or more samples: what the graph cuts'
        and the enumeration's costs grow with."""
        _, offsets, _, _, e_off, _ = self.grouping
        return np.diff(offsets), np.diff(e_off)

    def require_submodular(self, algorithm: str) -> None:
        bad = np.flatnonzero(self.pair > 0)
        if bad.size:
            e = int(bad[0])
            raise ValueError(
                f"algorithm {algorithm!r} is exact only when every pair score is <= 0 (w2 <= 0: "
                f"a submodular energy); pair {e} {self.graph.edges[e].tolist()} has score "
                f"{float(self.pair[e])!r}. Constrain w2 <= 0, or use 'brute' on tiny graphs")


#: Components of at most this many samples are enumerated by "graphcut" (2^k k steps against
#: k re-cuts on the dense residual matrix of _smallcut.hpp; the crossover, k = 3-4 on cliques,
#: measured by ``python -m benchmarks --pairwise``).
ENUMERATE_UP_TO = 3


def _as_enumerate_up_to(k) -> int:
    if k is None:
        return ENUMERATE_UP_TO
    if (not isinstance(k, (int, np.integer)) or isinstance(k, bool)
            or not 0 <= k <= _enumerate_cy.MAX_SIZE):
        raise ValueError(f"enumerate_up_to must be an integer in [0, {_enumerate_cy.MAX_SIZE}], "
                         f"got {k!r}")
    return int(k)


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class PairwiseResult:
    """A maximised labelling and its max-marginals.

    Parameters
    ----------
    labelling : ndarray of int8 (n,)
        1 where the maximising labelling marks the sample relevant.
    value : float
        The maximum (of the score, plus the loss when loss-augmented).
    m_plus, m_minus : ndarray (n,) or None
        Max-marginals of the same function (eqs. 9-10); the max of the two is ``value`` for
        every sample. None when not asked for (``marginals=False``).
    loss : float
        Delta(Y*, Y) of the labelling (0 without labels).
    objective : float
        value - score(Y*) for loss-augmented inference (the constraint violation, >= 0); the
        value itself otherwise.
    algorithm : str
        Name of the algorithm.
    flips : scipy.sparse.csr_matrix (n, n) or None
        Per sample, the samples that change label in its other max-marginal labelling (see
        ``PairwiseCall``).
    """

    labelling: np.ndarray
    value: float
    m_plus: np.ndarray | None
    m_minus: np.ndarray | None
    loss: float
    objective: float
    algorithm: str
    flips: sp.csr_matrix | None = field(default=None, repr=False)

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


def max_marginals(scores, edges=None, edge_scores=None, *, algorithm="graphcut",
                  flips: bool = False, graph: PairwiseGraph | None = None,
                  enumerate_up_to: int | None = None) -> PairwiseResult:
    """Maximise sum_i y_i s_i + sum_{pairs cut} c over labellings and return the labelling and
    every max-marginal (no labels, no loss: HOB-SVM's prediction).

    Parameters
    ----------
    scores : array-like (n,)
        Unary scores s_i (of y_i = 1 over y_i = 0).
    edges : array-like (m, 2) or sparse matrix, optional
        The pairs, see :class:`PairwiseGraph`; or pass ``graph``.
    edge_scores : array-like (m,) or float, optional
        Score of cutting each pair (a scalar broadcasts); <= 0 for "graphcut". For an
        adjacency matrix, one per pair of ``PairwiseGraph(n, edges).edges``; 0 if None.
    algorithm : str or Algorithm
        An algorithm of the "pairwise" kind ("graphcut", "graphcut-dynamic",
        "graphcut-static", "brute").
    flips : bool
        Also return, per sample, the samples that change label in its other max-marginal
        labelling.
    graph : PairwiseGraph, optional
        A graph built once, instead of ``edges`` (what a learner does: the pairs are validated
        and stored once).
    enumerate_up_to : int, optional
        "graphcut" enumerates components of at most this many samples (default
        ENUMERATE_UP_TO = 3, the crossover on cliques; at most 24) and cuts larger ones.

    Returns
    -------
    PairwiseResult

    Examples
    --------
    Two linked samples; the second is pulled up by the first.

    >>> r = max_marginals([2.0, -0.5], [[0, 1]], -1.0)
    >>> r.labelling.tolist(), r.scores.tolist()
    ([1, 1], [1.5, 0.5])
    """
    if np.size(scores) == 0:
        raise ValueError("scores is empty: max_marginals labels at least one sample")
    s = validation.as_scores(scores)
    graph = _as_graph(s.shape[0], edges if graph is None else graph)
    algo = as_algorithm(get_loss("pairwise-zero-one"), algorithm)
    _check_size(graph, algo)
    c = _as_pair_scores(edge_scores, graph.n_edges)
    _check_summable(graph, s, c, False)
    call = PairwiseCall(graph, np.ascontiguousarray(s), c, flips, enumerate_up_to=enumerate_up_to)
    warn_if_slow_call(algo, call, stacklevel=2)
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


class PairwiseProblem(QueryProblem):
    """Linked samples with binary labels: the problem type of the "pairwise" kind (loss
    "pairwise-zero-one", the weighted 0-1 loss of Dokania et al. (2014), eq. 7 over one labelling).

    Loss-augmented inference maximises Delta(Y*, Y) + score(Y) (see the module docstring);
    Delta = (J #positives labelled 0 + #negatives labelled 1) / (J P + N) adds J / (J P + N)
    to a positive's score of y = 0 and 1 / (J P + N) to a negative's score of y = 1, so it is a
    change of the unary scores and a constant.

    Parameters
    ----------
    labels : array-like (n,)
        Relevance as bool, {0, 1} or {-1, +1}.
    loss : str or PairwiseZeroOne
        "pairwise-zero-one" or ``PairwiseZeroOne(J)``.
    qid : None
        Must be None: the samples form one labelling (the graph's components play the part of
        queries).
    empty : {"error", "skip"}
        As for :class:`~aprank.inference.QueryProblem`.
    n_samples : int, optional
        Expected number of samples (checked against the labels).
    edges : array-like, sparse matrix or PairwiseGraph, optional
        The pairs E (see :class:`PairwiseGraph`), or a PairwiseGraph built earlier.
    edge_scores : array-like (m,) or float, optional
        Default score of cutting each pair (0 if None); ``solve`` may pass others.
    """

    #: Delta is a change of the unary scores by the loss's per-sample weights (``weights``)
    loss: ZeroOne

    def __init__(self, labels, loss="pairwise-zero-one", *, qid=None, empty="error",
                 n_samples=None, edges=None, edge_scores=None):
        found = get_loss(loss)
        if found.kind != "pairwise":
            raise ValueError(f"PairwiseProblem solves the 'pairwise' kind, not the loss "
                             f"{found.name!r} of kind {found.kind!r}")
        if not isinstance(found, ZeroOne):
            raise ValueError(f"the pairwise kind's loss is a weighted 0-1 loss, a subclass of "
                             f"ZeroOne (e.g. PairwiseZeroOne); {found.name!r} is a "
                             f"{type(found).__name__}")
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
        c = (self.edge_scores if edge_scores is None
             else _as_pair_scores(edge_scores, self.graph.n_edges))
        e = self.graph.edges
        return float(np.asarray(scores, float)[y].sum() + c[y[e[:, 0]] != y[e[:, 1]]].sum())

    @cached_property
    def _labels_cut(self) -> np.ndarray:
        """The pairs that the labels cut, found once per problem."""
        e = self.graph.edges
        return np.flatnonzero(self.is_pos[e[:, 0]] != self.is_pos[e[:, 1]])

    @cached_property
    def _own_labels_cut_score(self) -> float:
        """The score of the pairs that the labels cut, at the problem's own pair scores."""
        return float(self.edge_scores[self._labels_cut].sum())

    def _score_of_labels(self, s, c) -> float:
        """score(labels): what the loss-augmented objective subtracts."""
        cut = self._own_labels_cut_score if c is self.edge_scores else c[self._labels_cut].sum()
        return float(s[self.is_pos].sum() + cut)

    def _objective(self, y, s, c) -> float:
        """Delta(y) + score(y) - score(labels), summed from the terms that differ (the samples
        whose label changes, the pairs whose cut changes) without rounding: a sample or pair
        that is the same in both cancels exactly, however far its score."""
        y = y.astype(bool)
        e = self.graph.edges
        cut_y = y[e[:, 0]] != y[e[:, 1]]
        cut_z = self.is_pos[e[:, 0]] != self.is_pos[e[:, 1]]
        flip = y != self.is_pos
        terms = np.concatenate([np.where(y[flip], s[flip], -s[flip]),
                                np.where(cut_y[cut_y != cut_z], c[cut_y != cut_z],
                                         -c[cut_y != cut_z])])
        return self.delta(y) + math.fsum(terms.tolist())

    def delta(self, labelling) -> float:
        """The weighted 0-1 loss of a labelling (eq. 7)."""
        y = np.asarray(labelling).astype(bool)
        v, z = self.loss.weights(self.is_pos)
        return float(v[y != self.is_pos].sum() / z) if z > 0 else 0.0

    def solve(self, scores, algorithm=None, *, edge_scores=None, augmented: bool = True,
              marginals: bool = True, flips: bool = False) -> PairwiseResult:
        """Maximise Delta + score (``augmented``) or score alone.

        Parameters
        ----------
        scores : array-like (n,)
            Unary scores s_i.
        algorithm : str, Algorithm or None
            A registry algorithm of the kind; None: "graphcut".
        edge_scores : array-like (m,) or float, optional
            Scores of cutting each pair; None: the problem's.
        augmented : bool
            Add the loss (loss-augmented inference) or maximise the score alone.
        marginals : bool
            Also every max-marginal (a learner's most violated labelling needs only the
            maximum: one cut per component instead of one per sample).
        flips : bool
            Also, per sample, the samples that change label in its other max-marginal
            labelling.

        Returns
        -------
        PairwiseResult
        """
        return self._solve(validation.as_scores(scores), as_algorithm(self.loss, algorithm),
                           edge_scores, augmented, flips, marginals)

    def _solve(self, s, algo, edge_scores, augmented, flips, marginals=True):
        if s.shape[0] != self.n_samples:
            raise ValueError(f"scores has {s.shape[0]} entries but the problem has "
                             f"{self.n_samples} samples")
        _check_size(self.graph, algo)
        c = (self.edge_scores if edge_scores is None
             else _as_pair_scores(edge_scores, self.graph.n_edges))
        _check_summable(self.graph, s, c, augmented)
        unary = s + self.loss_unary if augmented else s
        call = PairwiseCall(self.graph, np.ascontiguousarray(unary), c, flips, marginals)
        warn_if_slow_call(algo, call, stacklevel=5)     # _solve, solve, solve_one, infer
        algo.run(call)
        const = self.loss_constant if augmented else 0.0
        y = call.labelling.astype(np.int8)
        value = call.value + const
        objective = self._objective(y, s, c) if augmented else value
        m_plus = None if call.m_plus is None else call.m_plus + const
        m_minus = None if call.m_minus is None else call.m_minus + const
        return PairwiseResult(y, value, m_plus, m_minus, self.delta(y), objective, algo.name,
                              call.flips)

    def solve_one(self, scores, algorithm=None) -> PairwiseResult:
        """Loss-augmented inference with the max-marginals (what :func:`aprank.infer` returns
        for this kind).

        Parameters
        ----------
        scores : array-like (n,)
            Unary scores s_i.
        algorithm : str, Algorithm or None
            As for :meth:`solve`.

        Returns
        -------
        PairwiseResult
        """
        return self.solve(scores, algorithm)


def group_pairs(groups) -> np.ndarray:
    """Every pair (i, j), i < j, of samples with equal ``groups`` entries.

    Parameters
    ----------
    groups : array-like (n,)
        The group of each sample (e.g. its recording): integers, real numbers or strings; NaN
        (equal to nothing, not even itself) and complex ids are a ValueError.

    Returns
    -------
    ndarray of int64 (m, 2)
        The pairs, group by group (in sorted group order).
    """
    groups = np.asarray(groups)
    if groups.ndim != 1:
        raise ValueError(f"groups must be 1-D, got shape {groups.shape}")
    if groups.dtype.kind == "c":
        raise ValueError(f"groups must hold integers or strings, got complex ids (dtype "
                         f"{groups.dtype})")
    if groups.dtype.kind in "fO":
        nan = np.asarray(groups != groups, dtype=bool)     # NaN only, also in an object array
        if nan.any():
            raise ValueError(f"groups[{int(np.argmax(nan))}] is NaN: NaN equals no group, not "
                             "even itself, so it names no group (NumPy would still pair NaNs)")
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
