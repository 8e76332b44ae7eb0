"""The latent kind: rankings of bags whose scoring instance is hidden (Behl 2015).

Each sample is a *bag* of candidate rows (an image and its boxes, a recording and its
segments); the latent variable h of a bag picks the row that scores it, s(h) = w'x_h. A ranking
Y of B bags (P positive, N negative) scores, with the normalisation of Mohapatra et al. (2018),

    w'Psi(Y, H) = 1 / (P N) sum_{i in P, j in N} Y_ij (s_i(h_i) - s_j(h_j)),

Y_ij = +1 when positive bag i is ranked above negative bag j, -1 otherwise, and Delta(Y*, Y) is
the AP loss of the ranking. Two losses of the kind say which constraint a learner needs:

* ``"latent-ap"`` -- latent AP-SVM (Behl 2015, eq. 3.3): the positives' h fixed (H_P, the CCCP
  linearisation point: ``impute``, by default each positive bag's best row, the minimiser of
  Proposition 2), the negatives' h free and shared by both terms:

      max_{Y, H_N}  Delta(Y*, Y) + w'Psi(Y, {H_P, H_N}) - w'Psi(Y*, {H_P, H_N}).

  Proposition 3: every negative takes its best row; then exact AP inference on the bag scores.

* ``"latent-ssvm"`` -- latent SSVM (Behl 2015, eq. A.1, A.3): every h free in the loss-augmented
  term, the ground truth at H_P (``impute``) and at the negatives' h that least favour it:

      max_{Y, H}  [Delta(Y*, Y) + w'Psi(Y, H)]  -  min_{H_N} w'Psi(Y*, {H_P, H_N}).

  No efficient exact algorithm is known; ``latent-greedy`` is appendix A's approximation.

A bag's known h (``h=``, supervision) restricts its candidates to that row in every term.
Every algorithm of the kind fills ``ranks`` (interleaving ranks of the bags, as in the ranking
kind) and ``h`` (the row of each bag in the loss-augmented term); the problem computes
the coefficients, loss and objective from them, so all algorithms are measured alike. Where
the objective leaves a bag's row free, every algorithm reports the same canonical row (see
:class:`LatentResult`), so that ``h`` and ``value`` do not depend on the algorithm.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from aprank import validation
from aprank.inference._base import exact_dot
from aprank.inference._protocol import Problem
from aprank.inference._registry import as_algorithm, warn_if_slow_call
from aprank.inference.ranking import RankingProblem
from aprank.losses import AveragePrecision, get_loss

__all__ = ["LatentBags", "LatentCall", "LatentProblem", "LatentResult"]

_AP = AveragePrecision()


# ---------------------------------------------------------------------------- structure
class LatentBags:
    """Rows grouped in bags, one label per bag, and the known h of some bags; validated once.

    Parameters
    ----------
    bags : array-like (M,) or None
        Bag id of each row (integers or strings; floats, even whole ones, are a ValueError);
        None: every row is its own bag.
    is_pos : ndarray of bool (M,)
        Label of each row; the rows of a bag must agree.
    h : dict or array-like of bool (M,), optional
        Known rows, as a dict {bag id: row index} or a bool mask marking at most one row per
        bag; None: no h is known.
    """

    def __init__(self, bags, is_pos: np.ndarray, h=None):
        M = is_pos.shape[0]
        bags = np.arange(M) if bags is None else np.asarray(bags)
        if bags.ndim != 1 or bags.shape[0] != M:
            raise ValueError(f"bags must hold one bag id per row ({M}), got shape {bags.shape}")
        if bags.dtype.kind == "f":
            # even whole floats: a float id is a computed value, and 0.1 + 0.2 != 0.3 would
            # split a bag silently
            bad = np.flatnonzero(~np.isfinite(bags) | (bags != np.round(bags)))
            b = int(bad[0]) if bad.size else 0
            raise ValueError(f"bags[{b}] = {bags[b].item()!r} is not a bag id: bag ids are "
                             "integers or strings, not floats (pass bags.astype(int) for whole "
                             "numbers)")
        elif bags.dtype.kind not in "iuUS":
            raise ValueError(f"bag ids must be integers or strings, got dtype {bags.dtype}")
        self.ids, inverse = np.unique(bags, return_inverse=True)
        self.inverse = inverse.astype(np.int64).ravel()
        B = self.ids.shape[0]
        self.counts = np.bincount(self.inverse, minlength=B)
        self.offsets = np.r_[0, np.cumsum(self.counts)].astype(np.int64)
        positives = np.bincount(self.inverse, weights=is_pos, minlength=B)
        mixed = np.flatnonzero((positives > 0) & (positives < self.counts))
        if mixed.size:
            b = int(mixed[0])
            rows = np.flatnonzero(self.inverse == b)
            first_pos = int(rows[is_pos[rows]][0])
            first_neg = int(rows[~is_pos[rows]][0])
            raise ValueError(f"bag {self.bag_name(b)!r} has two labels (row {first_pos} "
                             f"relevant, row {first_neg} not): a bag takes one label, shared "
                             "by its rows")
        self.is_pos = positives > 0
        self.known = self._known(h, M)

    @property
    def n_bags(self) -> int:
        return self.ids.shape[0]

    def bag_name(self, b: int):
        """The id of bag number b, as a Python value (for messages)."""
        return self.ids[b].item()

    @property
    def n_rows(self) -> int:
        return self.inverse.shape[0]

    def _known(self, h, M: int) -> np.ndarray:
        known = np.full(self.n_bags, -1, dtype=np.int64)
        if h is None:
            return known
        if isinstance(h, dict):
            index = {k: b for b, k in enumerate(self.ids.tolist())}
            for bag, row in h.items():
                # NumPy scalars as the Python values they hold: NumPy 2 prints np.int64(3)
                bag = bag.item() if isinstance(bag, np.generic) else bag
                row = row.item() if isinstance(row, np.number) else row
                b = index.get(bag)
                if b is None:
                    raise ValueError(f"h names bag {bag!r}, which has no candidates (no row "
                                     "belongs to it)")
                if not (isinstance(row, (int, np.integer)) and 0 <= row < M):
                    raise ValueError(f"h[{bag!r}] = {row!r} is not a row index (0 ... {M - 1})")
                if self.inverse[row] != b:
                    raise ValueError(f"h[{bag!r}] = row {row} lies outside bag {bag!r} (it "
                                     f"belongs to bag {self.bag_name(self.inverse[row])!r})")
                known[b] = int(row)
            return known
        mask = np.asarray(h)
        if mask.dtype != np.bool_ or mask.shape != (M,):
            raise ValueError(f"h must be a dict {{bag id: row}} or a bool mask with one entry per "
                             f"row ({M}), got {mask.dtype} of shape {mask.shape}")
        marked = np.bincount(self.inverse[mask], minlength=self.n_bags)
        if (marked > 1).any():
            b = int(np.argmax(marked > 1))
            rows = np.flatnonzero(mask & (self.inverse == b))
            raise ValueError(f"h marks {marked[b]} rows of bag {self.bag_name(b)!r} (rows "
                             f"{rows.tolist()}): a bag has at most one known instance")
        rows = np.flatnonzero(mask)
        known[self.inverse[rows]] = rows
        return known

    @cached_property
    def _grouped(self) -> np.ndarray:
        """The rows bag by bag, in row order within a bag."""
        return np.argsort(self.inverse, kind="stable")

    def best_rows(self, scores: np.ndarray, lowest: bool = False) -> np.ndarray:
        """Per bag, the row of its highest score (``lowest``: of its lowest), the lowest row
        index among equal scores; a bag's known row where it has one."""
        order, first = self._grouped, self.offsets[:-1]
        s = -scores[order] if lowest else scores[order]
        top = np.maximum.reduceat(s, first)
        at_top = np.where(s == np.repeat(top, self.counts), np.arange(s.shape[0]), s.shape[0])
        rows = order[np.minimum.reduceat(at_top, first)]
        known = self.known >= 0
        rows[known] = self.known[known]
        return rows

    def candidates(self, b: int) -> np.ndarray:
        """Rows a bag may choose: its known row, or all of its rows."""
        if self.known[b] >= 0:
            return self.known[b:b + 1]
        return np.flatnonzero(self.inverse == b)


# ---------------------------------------------------------------------------- one solve
class LatentCall:
    """One solve: the problem, the validated scores, the rows of the ground truth (``impute``,
    per bag: a positive bag's row given to the solve, validated here, else its highest-scoring
    row) and the outputs a registry algorithm's ``run(call)`` fills: ``ranks`` (per bag,
    interleaving ranks) and ``h`` (per bag, the row of the loss-augmented term)."""

    def __init__(self, problem: LatentProblem, scores: np.ndarray, impute=None):
        self.problem = problem
        self.loss = problem.loss
        self.bags = problem.bags
        self.scores = scores
        self.argmax = problem.bags.best_rows(scores)
        self.impute = problem._impute_rows(impute, self.argmax)
        self.ranks = np.empty(problem.bags.n_bags, dtype=np.int64)
        self.h = np.empty(problem.bags.n_bags, dtype=np.int64)
        # an algorithm that ranks the bags by AP inference leaves its result here, so that the
        # coefficients, loss and objective are the ranking kind's own (bit for bit: with one
        # row per bag a latent learner then takes APSVM's steps exactly)
        self.ranking = None

    @cached_property
    def argmin(self) -> np.ndarray:
        """Per bag, the row of its lowest score (only the latent SSVM's algorithms need it)."""
        return self.bags.best_rows(self.scores, lowest=True)


@dataclass(frozen=True)
class LatentResult:
    """The most violated (ranking, latent choice) of a set of bags.

    Parameters
    ----------
    bag_ids : ndarray (B,)
        The bags, sorted (the order of every per-bag array).
    ranks : ndarray of int64 (B,)
        Per bag, its interleaving rank (a negative: 1 + positives above it; a positive: 1 +
        negatives above it).
    h : ndarray of int64 (B,)
        Per bag, the row scoring it in the loss-augmented term. Canonical, so that every
        algorithm reports the same rows for the same ranking: a bag's known row where it has
        one; else its best row (highest score, the lowest row index among equal scores), but
        its worst row (lowest score, lowest index among equal) where its coefficient in
        ``coef`` is negative ("latent-ssvm" only). A bag whose row does not change the
        objective (a negative bag below every positive for "latent-ap", a bag of coefficient
        0 for "latent-ssvm") reports its best row too, which fixes ``value``.
    truth_h : ndarray of int64 (B,)
        Per bag, the row scoring it in the ground-truth term.
    coef, truth_coef : ndarray of float64 (M,)
        Per row, w'Psi(Y, H) = coef . scores and w'Psi(Y*, H*) = truth_coef . scores (zero on
        rows no term uses).
    loss : float
        Delta(Y*, Y), the AP loss of the ranking of bags.
    value : float
        Delta + w'Psi(Y, H), the loss-augmented score.
    objective : float
        The constraint violation, value - w'Psi(Y*, H*) (>= 0 for an exact algorithm).
    algorithm : str
        Name of the algorithm.
    """

    bag_ids: np.ndarray
    ranks: np.ndarray
    h: np.ndarray
    truth_h: np.ndarray
    coef: np.ndarray
    truth_coef: np.ndarray
    loss: float
    value: float
    objective: float
    algorithm: str


class LatentProblem(Problem):
    """Bags of candidate rows with one binary label per bag: the problem type of the "latent"
    kind (losses "latent-ap" and "latent-ssvm"; see the module docstring).

    Parameters
    ----------
    labels : array-like (M,)
        Per row, bool, {0, 1} or {-1, +1}; the rows of a bag share their label.
    loss : str
        "latent-ap" or "latent-ssvm".
    qid : None
        Must be None: the bags form one ranking.
    empty : {"error", "skip"}
        Accepted for the shape every problem type has; a problem without a positive bag is
        refused either way.
    n_samples : int, optional
        Expected number of rows (checked against the labels).
    bags : array-like (M,), optional
        Bag id of each row (integers or strings; floats are refused); None: every row is a
        bag of one (then "latent-ap" is AP inference).
    h : dict or array-like of bool (M,), optional
        Known rows: {bag id: row} or a bool mask (at most one row per bag).
    ranking_algorithm : str or Algorithm
        Exact AP algorithm of the ranking kind for ``latent-ap``'s second step.

    Notes
    -----
    The caller's arrays are never modified.
    """

    def __init__(self, labels, loss="latent-ap", *, qid=None, empty="error", n_samples=None,
                 bags=None, h=None, ranking_algorithm="qs"):
        self.loss = get_loss(loss)
        if self.loss.kind != "latent":
            raise ValueError(f"LatentProblem solves the 'latent' kind, not the loss "
                             f"{self.loss.name!r} of kind {self.loss.kind!r}")
        if qid is not None:
            raise ValueError("the latent kind ranks all bags as one query: qid is not supported "
                             "(solve each query's bags separately)")
        if empty not in ("error", "skip"):
            raise ValueError(f"empty={empty!r} must be 'error' or 'skip'")
        if n_samples is None:
            n_samples = np.shape(labels)[0] if np.ndim(labels) == 1 else -1
        is_pos = validation.as_labels(labels, n_samples)
        if is_pos.shape[0] == 0:
            raise ValueError("there are no rows, hence no bags, to rank")
        self.bags = LatentBags(bags, is_pos, h)
        self.P = int(self.bags.is_pos.sum())
        self.N = self.bags.n_bags - self.P
        if self.P == 0:
            raise ValueError(f"no bag is positive: the AP of a ranking of bags is undefined "
                             f"without a positive bag ({self.N} bags, all negative)")
        algo = as_algorithm(get_loss("ap"), ranking_algorithm)
        if not algo.exact:
            raise ValueError(f"ranking_algorithm must be an exact AP algorithm, "
                             f"{algo.name!r} is not")
        #: the exact AP algorithm of latent-ap's second step, resolved once
        self.ranking_algorithm = algo

    @property
    def n_samples(self) -> int:
        return self.bags.n_rows

    @property
    def n_bags(self) -> int:
        return self.bags.n_bags

    @cached_property
    def bag_problem(self) -> RankingProblem:
        """The AP problem of the bags (their labels), for latent-ap's second step."""
        return RankingProblem(self.bags.is_pos, "ap")

    # ------------------------------------------------------------------------ solving
    def impute(self, scores) -> np.ndarray:
        """Per bag, its best-scoring row (its known row where given): the positives' h that
        minimises the latent AP-SVM slack (Behl 2015, Proposition 2) and the output-consistent
        inference of the latent SSVM (eq. A.4)."""
        s = self._scores(validation.as_scores(scores))
        return self.bags.best_rows(s)

    def solve(self, scores, algorithm=None, *, impute=None) -> LatentResult:
        """Loss-augmented inference for these scores.

        Parameters
        ----------
        scores : array-like (M,)
            One score per row.
        algorithm : str, Algorithm or None
            An algorithm of the latent kind serving this loss; None: "latent-ap" for
            "latent-ap", "latent-greedy" for "latent-ssvm".
        impute : array-like of int, optional
            Per bag (in ``bag_ids`` order), the rows of the positive bags in the ground truth
            (and, for "latent-ap", in both terms); entries of negative bags are ignored.
            Default: :meth:`impute` at these scores.

        Returns
        -------
        LatentResult
        """
        return self._solve(validation.as_scores(scores), as_algorithm(self.loss, algorithm),
                           impute)

    def solve_one(self, scores, algorithm=None) -> LatentResult:
        """As :meth:`solve` with the default ``impute`` (what :func:`aprank.infer` returns for
        this kind).

        Parameters
        ----------
        scores : array-like (M,)
            One score per row.
        algorithm : str, Algorithm or None
            As for :meth:`solve`.

        Returns
        -------
        LatentResult
        """
        return self.solve(scores, algorithm)

    def _scores(self, s: np.ndarray) -> np.ndarray:
        if s.shape[0] != self.n_samples:
            raise ValueError(f"scores has {s.shape[0]} entries but the problem has "
                             f"{self.n_samples} rows")
        # w'Psi sums one row per bag on each side; the greedy's assignments sum them again
        validation.check_summable("the scores", (s, 4 * self.n_samples + 4))
        return s

    def _impute_rows(self, impute, argmax) -> np.ndarray:
        if impute is None:
            return argmax
        rows = np.asarray(impute)
        if rows.shape != (self.n_bags,) or rows.dtype.kind not in "iu":
            raise ValueError(f"impute must hold one row index per bag ({self.n_bags}), got "
                             f"{rows.dtype} of shape {rows.shape}")
        rows = np.where(self.bags.is_pos, rows, argmax).astype(np.int64)
        outside = (rows < 0) | (rows >= self.n_samples)
        outside[~outside] = self.bags.inverse[rows[~outside]] != np.flatnonzero(~outside)
        known = self.bags.known
        outside |= (known >= 0) & (rows != known)
        if outside.any():
            b = int(np.argmax(outside))
            raise ValueError(f"impute[{b}] = {int(rows[b])} is not a candidate of bag "
                             f"{self.bags.bag_name(b)!r}")
        return rows

    def _solve(self, s: np.ndarray, algo, impute) -> LatentResult:
        s = self._scores(s)
        if algo.max_samples is not None and self.n_samples > algo.max_samples:
            raise ValueError(f"algorithm {algo.name!r} enumerates every ranking and latent "
                             f"choice and refuses more than {algo.max_samples} rows (got "
                             f"{self.n_samples})")
        call = LatentCall(self, s, impute)
        warn_if_slow_call(algo, call, stacklevel=5)     # _solve, solve, solve_one, infer
        algo.run(call)
        return self._result(call, algo.name)

    def _result(self, call: LatentCall, name: str) -> LatentResult:
        """Coefficients, loss and objective of the ranks and rows an algorithm chose."""
        bags, P, N, s = self.bags, self.P, self.N, call.scores
        pos = bags.is_pos
        truth_h = np.where(pos, call.impute,
                           call.h if self.loss.name == "latent-ap" else call.argmax)
        coef = np.zeros(self.n_samples)
        truth = np.zeros(self.n_samples)
        loss = value = objective = 0.0
        if N:
            # every coefficient is an integer over P N: the terms' numerators per row, so
            # that a row with the same coefficient in both terms adds exactly nothing and
            # the sums round once (a score far from the others cancels exactly where it
            # should, instead of rounding the others away)
            num = np.where(pos, N + 2 - 2 * call.ranks, P + 2 - 2 * call.ranks)
            truth_num = np.where(pos, N, -P)
            per_bag = _AP.coef(call.ranks, pos, P, N)
            if call.ranking is not None:
                per_bag = call.ranking.coef
            np.add.at(coef, call.h, per_bag)
            np.add.at(truth, truth_h, np.where(pos, 1.0 / P, -1.0 / N))
            loss = float(_AP.from_pattern(np.sort(call.ranks[pos] - 1), P, N))
            rows = np.zeros(self.n_samples, dtype=np.int64)
            np.add.at(rows, call.h, num)
            value = loss + exact_dot(rows, s) / (P * N)
            np.add.at(rows, truth_h, -truth_num)
            objective = loss + exact_dot(rows, s) / (P * N)
            if call.ranking is not None:
                loss, objective = call.ranking.loss, call.ranking.objective
        return LatentResult(bags.ids, call.ranks.copy(), call.h.copy(), truth_h, coef, truth,
                            loss, value, objective, name)

