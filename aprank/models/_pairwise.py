"""High-order models of Dokania et al. (2014): HOB-SVM (labellings with pair terms) and HOAP-SVM (AP
over max-marginal scores), on the max-marginals of the "pairwise" kind.

Joint feature of a labelling Y of n linked samples (design rows x_i, bias column included):

    Psi(X, Y) = ( sum_i (y_i - 1/2) x_i ,  eta sum_{(a, b) in E, y_a != y_b} Phi_ab ),

with Phi_ab = exp(-(psi_a - psi_b)^2) elementwise (eq. 5) or a user's pair feature. The unary
block is the two blocks of eq. 4 in one: only u = w_+ - w_- matters to a labelling, and for a
given u the regulariser is least at w_+ = -w_- = u / 2, where it is ||u||^2 / 4. One block
penalising ||w||^2 / 2 is therefore the paper's model with the unary features (bias included)
multiplied by sqrt(2); the pair block is the same in both. A
labelling's score is w'Psi = sum_i y_i w_1'x_i + sum_cut eta w_2'Phi + const: unary scores
s_i = w_1'x_i and pair scores c_ab = eta w_2'Phi_ab, <= 0 when w_2 <= 0.

:class:`HOBModel` divides Psi by Z = J P + N, the normaliser of the loss (eq. 7), so that with
no pairs its 1-slack problem is BinarySVM's at J = 1: HOB-SVM's C is the structural one of
that problem, which is ``BinarySVM(C / n, J=1)`` (BinarySVM's C is per sample).
:class:`HOAPModel` is the latent model of HOAP-SVM's CCCP (Algorithm 1, Propositions 4-5).
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from aprank.inference import (
    PairwiseGraph,
    PairwiseProblem,
    RankingProblem,
    max_marginals,
    resolve,
    solve_seconds,
)
from aprank.losses import get_loss
from aprank.models._base import Constraint, LatentModel, StructuredModel, digest, product_seconds

__all__ = ["HOBModel", "HOAPModel", "HOAPLinearised", "pair_features", "exp_similarity"]


def exp_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Phi(z_a, z_b) = exp(-(z_a - z_b)^2), elementwise (Dokania et al. 2014, eq. 5).

    Parameters
    ----------
    a, b : ndarray
        The rows of the two ends of each pair, of one shape.

    Returns
    -------
    ndarray
        The pair features, of the same shape.
    """
    return np.exp(-np.square(a - b))


def pair_features(X, edges: np.ndarray, phi: Callable | None = None) -> np.ndarray:
    """Phi of every pair, (m, d2): ``phi(X[a], X[b])`` on the rows of the pairs.

    The result must be finite and, for HOB-SVM's w2 <= 0 to mean "linked samples agree",
    non-negative (ValueError otherwise).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The samples' features.
    edges : ndarray of shape (m, 2)
        The pairs (a, b), sample indices.
    phi : callable, optional
        ``phi(X[a], X[b])`` returning an (m, d2) array; default :func:`exp_similarity`.

    Returns
    -------
    ndarray of shape (m, d2)
        The pair features.
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    phi = exp_similarity if phi is None else phi
    F = np.asarray(phi(X[edges[:, 0]], X[edges[:, 1]]), dtype=float)
    if F.ndim != 2 or F.shape[0] != edges.shape[0]:
        raise ValueError(f"the pair feature must return an (m, d2) array for m = {edges.shape[0]} "
                         f"pairs, got shape {F.shape}")
    if not np.isfinite(F).all():
        raise ValueError("the pair feature returned non-finite values")
    if (F < 0).any():
        raise ValueError("the pair feature must be non-negative: with w2 <= 0 a cut pair then "
                         "never scores above an uncut one (Dokania et al. 2014, sec. 3)")
    return F


class _Pairwise:
    """Design, pairs and pair features shared by the two models."""

    def __init__(self, X, labels, edges, Phi, eta, algorithm):
        self.X = X
        self.d1 = X.shape[1]
        self.graph = edges if isinstance(edges, PairwiseGraph) else PairwiseGraph(X.shape[0], edges)
        self.Phi = np.asarray(Phi, dtype=float)
        if self.Phi.shape[0] != self.graph.n_edges:
            raise ValueError(f"Phi has {self.Phi.shape[0]} rows for {self.graph.n_edges} pairs")
        self.eta = float(eta)
        self.algorithm = resolve(get_loss("pairwise-zero-one"), algorithm)

    @property
    def size_joint_feature(self) -> int:
        return self.d1 + self.Phi.shape[1]

    @property
    def upper(self) -> np.ndarray:
        """Upper bounds of w: +inf on the unary block, 0 on the pair block (w2 <= 0)."""
        return np.r_[np.full(self.d1, np.inf), np.zeros(self.Phi.shape[1])]

    def unary(self, w):
        return np.asarray(self.X @ w[:self.d1]).ravel()

    def pair(self, w):
        return self.eta * (self.Phi @ w[self.d1:])

    def psi(self, y) -> np.ndarray:
        """Psi(X, Y) (unnormalised) of a labelling."""
        y = np.asarray(y).astype(bool)
        e = self.graph.edges
        cut = y[e[:, 0]] != y[e[:, 1]]
        unary = np.asarray(self.X.T @ (y - 0.5)).ravel()
        return np.r_[unary, self.eta * self.Phi[cut].sum(0)]

    def psi_flipped(self, y, flips: sp.csr_matrix) -> np.ndarray:
        """Row i: Psi of the labelling y with the samples of ``flips`` row i changed, minus
        Psi(y) (n, D)."""
        y = np.asarray(y).astype(bool)
        sign = np.where(y, -1.0, 1.0)               # y_k - 1/2 moves by -1 or +1
        F = flips.astype(np.float64)
        du = F @ sp.diags(sign) @ self.X
        du = du.toarray() if sp.issparse(du) else np.asarray(du)
        e = self.graph.edges
        m = e.shape[0]
        ends = (np.r_[e[:, 0], e[:, 1]], np.r_[np.arange(m), np.arange(m)])
        incidence = sp.csr_matrix((np.ones(2 * m), ends), shape=(self.graph.n, m))
        touched = (F @ incidence).tocsr()
        # a pair changes its cut state when exactly one end flips: uncut -> cut adds Phi
        cut = y[e[:, 0]] != y[e[:, 1]]
        touched.data = np.where(touched.data == 1, np.where(cut, -1.0, 1.0)[touched.indices], 0.0)
        touched.eliminate_zeros()
        dp = self.eta * (touched @ self.Phi)
        return np.hstack([du, np.asarray(dp)])

    def _cut_seconds(self, problem: PairwiseProblem, **options):
        """Seconds of one solve of ``problem`` on this graph with every pair live (non-zero
        pair scores, as once w2 < 0: at w = 0 no pair links anything and the first cuts are
        trivial), so that the largest components count, and of the products of Psi; None
        where the algorithm has no ``seconds`` model."""
        cut = solve_seconds(problem, np.zeros(self.graph.n), self.algorithm,
                            edge_scores=-np.ones(self.graph.n_edges), **options)
        return None if cut is None else cut + product_seconds(self.X) + product_seconds(self.Phi)

    def max_marginals(self, w, flips=False):
        return max_marginals(self.unary(w), edge_scores=self.pair(w), algorithm=self.algorithm,
                             flips=flips, graph=self.graph)


class HOBModel(_Pairwise, StructuredModel):
    """HOB-SVM (Dokania et al. 2014, sec. 3): loss-augmented inference over labellings by graph
    cuts.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d1)
        The design (bias column included).
    labels : array-like of shape (n,)
        Binary labels.
    edges : ndarray of shape (m, 2) or PairwiseGraph
        The pairs E, or a built ``PairwiseGraph``.
    Phi : ndarray of shape (m, d2)
        Pair features (see :func:`pair_features`).
    eta : float, default 1.0
        Weight of the pair block.
    loss : str or PairwiseZeroOne, default "pairwise-zero-one"
        "pairwise-zero-one" or ``PairwiseZeroOne(J)``.
    algorithm : str, default "graphcut"
        A "pairwise" algorithm.
    """

    def __init__(self, X, labels, edges, Phi, eta=1.0, loss="pairwise-zero-one", *,
                 algorithm="graphcut"):
        super().__init__(X, labels, edges, Phi, eta, algorithm)
        self.problem = PairwiseProblem(labels, loss, edges=self.graph, n_samples=X.shape[0])
        self.Z = self.problem.normaliser
        self.psi_truth = self.psi(self.problem.is_pos)

    def estimated_seconds(self):
        """Seconds of one :meth:`most_violated`: one cut of every component, with every pair
        live (see :meth:`StructuredModel.estimated_seconds`)."""
        return self._cut_seconds(self.problem, marginals=False)

    def most_violated(self, w) -> Constraint:
        # the model's Psi is Psi / Z: scores and pair scores scale alike
        t0 = time.perf_counter()
        # the most violated labelling needs only the maximum, not the max-marginals
        r = self.problem.solve(self.unary(w) / self.Z, self.algorithm,
                               edge_scores=self.pair(w) / self.Z, marginals=False)
        seconds = time.perf_counter() - t0
        g = (self.psi_truth - self.psi(r.labelling)) / self.Z
        return Constraint(g, r.loss, float(r.objective), seconds, r,
                          {"n_flipped": int(np.count_nonzero(r.labelling != self.problem.is_pos))})

    def fingerprint(self) -> str:
        return digest(self.X, self.graph.edges, self.Phi, self.eta, self.problem.is_pos,
                      self.problem.loss.identity())


class HOAPModel(_Pairwise, LatentModel):
    """HOAP-SVM (Dokania et al. 2014, sec. 4): AP loss over the ranking by s_i = m_i^+ - m_i^-.

    The score of a ranking is sum_k c_k(R) s_k(w) with the AP coefficients c of the ranking
    kind (gamma = 1 / (P N), the normalisation of Mohapatra et al. 2018), and s_k is a difference of
    two convex functions of w. :meth:`latent` linearises the concave part at w_t (Proposition 4): it
    fixes for each sample the max-marginal labelling of its own true label at w_t, restricted to the
    sample's component (see :meth:`clamped_psi`: the paper linearises the whole labelling,
    a looser bound that gives the same scores); the result,
    :class:`HOAPLinearised`, is convex in w and its most violated ranking is exact AP inference
    on the scores of Proposition 5.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d1)
        The design (bias column included).
    labels : array-like of shape (n,)
        Binary labels.
    edges : ndarray of shape (m, 2) or PairwiseGraph
        The pairs E, or a built ``PairwiseGraph``.
    Phi : ndarray of shape (m, d2)
        Pair features (see :func:`pair_features`).
    eta : float, default 1.0
        Weight of the pair block.
    algorithm : str, default "graphcut"
        The "pairwise" algorithm of the max-marginals.
    ranking_algorithm : str, default "qs"
        The exact AP algorithm of the most violated ranking.
    """

    def __init__(self, X, labels, edges, Phi, eta=1.0, *, algorithm="graphcut",
                 ranking_algorithm="qs"):
        super().__init__(X, labels, edges, Phi, eta, algorithm)
        self.ranking = RankingProblem(labels, "ap", n_samples=X.shape[0])
        self.ranking_algorithm = resolve(get_loss("ap"), ranking_algorithm)
        self.is_pos = self.ranking.is_pos
        # components of the pairs that can score (eta > 0, Phi_ab != 0): membership of samples
        # and of pairs, to restrict Psi to one component
        n, e = self.graph.n, self.graph.edges
        live = (self.Phi != 0).any(axis=1) & (self.eta != 0)
        _, _, comp = self.graph.components(live)
        self.component = comp
        n_comp = int(comp.max()) + 1 if n else 0
        self._members = sp.csr_matrix((np.ones(n), (comp, np.arange(n))), shape=(n_comp, n))
        self._pair_members = sp.csr_matrix(
            (np.ones(e.shape[0]), (comp[e[:, 0]], np.arange(e.shape[0]))),
            shape=(n_comp, e.shape[0]))

    def psi_components(self, y) -> np.ndarray:
        """(components, D): Psi(X, Y) restricted to the samples and pairs of each component
        (the rows add up to Psi(X, Y))."""
        y = np.asarray(y).astype(bool)
        e = self.graph.edges
        unary = self._members @ sp.diags(y - 0.5) @ self.X
        unary = unary.toarray() if sp.issparse(unary) else np.asarray(unary)
        cut = (y[e[:, 0]] != y[e[:, 1]]).astype(float)
        pair = self.eta * (self._pair_members @ (cut[:, None] * self.Phi))
        return np.hstack([unary, np.asarray(pair).reshape(unary.shape[0], -1)])

    def clamped_psi(self, w):
        """(own, other, result): per sample i, Psi restricted to i's component of its
        max-marginal labelling with its true label (own) and with the other label (other),
        (n, D) each, at w.

        Why restricted: m_i^+ and m_i^- both contain the maxima of the other components, which
        cancel in s_i = m_i^+ - m_i^-. Leaving them out changes no s_i, but CCCP then
        linearises only i's component, a tighter bound: with no pairs every s_i is linear in w
        and HOAP-SVM is exactly AP-SVM.
        """
        r = self.max_marginals(w, flips=True)
        base = self.psi_components(r.labelling)[self.component]
        delta = self.psi_flipped(r.labelling, r.flips)    # flips stay within the component
        takes_truth = (r.labelling.astype(bool) == self.is_pos)[:, None]
        own = base + np.where(takes_truth, 0.0, delta)
        other = base + np.where(takes_truth, delta, 0.0)
        return own, other, r

    def latent(self, w) -> HOAPLinearised:
        own, _, _ = self.clamped_psi(w)
        return HOAPLinearised(self, own)


class HOAPLinearised(StructuredModel):
    """HOAP-SVM's convex problem at w_t (Dokania et al. 2014, eq. 17): the max-marginals of the true
    labels are replaced by the linear w'Psi(Ybar) of the labellings fixed at w_t.

    At w, sample k's score is s_k(w) = t_k w'(Psi(Ybar_k) - Psi(Y_k^other(w))), t = +1 for a
    positive and -1 for a negative, Psi restricted to k's component (Proposition 5; the other
    components cancel): a lower bound of the true score, equal to it at w_t, and concave for a
    positive (minus the convex m_k^-), convex for a negative (m_k^+ minus a linear term). In a
    ranking's constraint a positive's score has a coefficient <= 0 and a negative's one >= 0
    (Dokania et al. 2014, eq. 15), so the constraint is convex and the rows
    v_k = t_k (Psi(Ybar_k) - Psi(Y_k^other(w))) give a subgradient cut at w, tight there.

    Parameters
    ----------
    parent : HOAPModel
        The latent model this problem linearises.
    own_at_t : ndarray of shape (n, D)
        Per sample, Psi (restricted to its component) of its max-marginal labelling with its
        true label at w_t (``HOAPModel.clamped_psi(w_t)[0]``).
    """

    def __init__(self, parent: HOAPModel, own_at_t: np.ndarray):
        self.parent = parent
        self.own_at_t = own_at_t
        self.sign = np.where(parent.is_pos, 1.0, -1.0)[:, None]

    @property
    def size_joint_feature(self) -> int:
        return self.parent.size_joint_feature

    @property
    def upper(self) -> np.ndarray:
        return self.parent.upper

    def estimated_seconds(self):
        """Seconds of one :meth:`most_violated`: every max-marginal with its flips (every pair
        live), then AP inference (see :meth:`StructuredModel.estimated_seconds`)."""
        p = self.parent
        marginals = p._cut_seconds(PairwiseProblem(p.is_pos, edges=p.graph), augmented=False,
                                   flips=True)
        ranking = solve_seconds(p.ranking, np.zeros(p.graph.n), p.ranking_algorithm)
        return None if marginals is None or ranking is None else marginals + ranking

    def most_violated(self, w) -> Constraint:
        p = self.parent
        t0 = time.perf_counter()
        _, other, _ = p.clamped_psi(w)
        V = self.sign * (self.own_at_t - other)
        res = p.ranking.solve(V @ w, p.ranking_algorithm)
        seconds = time.perf_counter() - t0
        a = self.sign[:, 0] * (p.ranking.truth_coef - res.coef)
        g = V.T @ (p.ranking.truth_coef - res.coef)
        # the part of g that the labellings Y_k^other(w) of this cut give, which re-evaluation
        # keeps (see reevaluate)
        return Constraint(g, float(res.loss[0]), float(res.objective[0]), seconds, res, {},
                          output=(a, other.T @ a, float(res.loss[0])))

    def reevaluate(self, output) -> tuple:
        """The cut of a stored ranking (see ``Constraint.output``) under this linearisation:
        the same ranking and the same labellings Y_k^other of the point where it was found,
        the true labels' labellings fixed at this w_t.

        It is a valid cut here: the ranking's constraint is linear in w except for the convex
        max-marginals m_k^other(w) (coefficients of the right sign, Dokania et al. 2014, eq. 15),
        and w'Psi(Y_k^other) <= m_k^other(w) for any w, so the cut lies below the constraint
        everywhere (tight where Y_k^other is the maximiser).

        Parameters
        ----------
        output : tuple
            A ``Constraint.output`` of a linearisation of the same :class:`HOAPModel`.

        Returns
        -------
        (g, b)
        """
        a, other_part, loss = output
        return self.own_at_t.T @ a - other_part, loss

    def fingerprint(self) -> str:
        p = self.parent
        return digest(p.X, p.graph.edges, p.Phi, p.eta, p.is_pos, self.own_at_t)
