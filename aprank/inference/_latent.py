"""The latent kind: rankings of bags whose scoring instance is hidden (paper 003).

Each sample is a *bag* of candidate rows (an image and its boxes, a recording and its
segments); the latent variable h of a bag picks the row that scores it, s(h) = w'x_h. A ranking
Y of B bags (P positive, N negative) scores, with paper 004's normalisation,

    w'Psi(Y, H) = 1 / (P N) sum_{i in P, j in N} Y_ij (s_i(h_i) - s_j(h_j)),

Y_ij = +1 when positive bag i is ranked above negative bag j, -1 otherwise, and Delta(Y*, Y) is
the AP loss of the ranking. Two losses of the kind say which constraint a learner needs:

* ``"latent-ap"`` -- latent AP-SVM (003 eq. 3.3): the positives' h fixed (H_P, the CCCP
  linearisation point: ``impute``, by default each positive bag's best row, the minimiser of
  Proposition 2), the negatives' h free and shared by both terms:

      max_{Y, H_N}  Delta(Y*, Y) + w'Psi(Y, {H_P, H_N}) - w'Psi(Y*, {H_P, H_N}).

  Proposition 3: every negative takes its best row; then exact AP inference on the bag scores.

* ``"latent-ssvm"`` -- latent SSVM (003 eq. A.1, A.3): every h free in the loss-augmented term,
  the ground truth at H_P (``impute``) and at the negatives' h that least favour it:

      max_{Y, H}  [Delta(Y*, Y) + w'Psi(Y, H)]  -  min_{H_N} w'Psi(Y*, {H_P, H_N}).

  No efficient exact algorithm is known; ``latent-greedy`` is appendix A's approximation.

A bag's known h (``h=``, supervision) restricts its candidates to that row in every term.
Every algorithm of the kind fills ``ranks`` (interleaving ranks of the bags, as in the ranking
kind) and ``h`` (the row of each bag in the loss-augmented term); the problem computes
the coefficients, loss and objective from them, so all algorithms are measured alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import permutations, product
from typing import Optional

import numpy as np
from scipy.optimize import linear_sum_assignment

from aprank import validation
from aprank.inference._problem import Instance, RankingProblem, with_ties
from aprank.inference._registry import get_kind, resolve
from aprank.losses import AveragePrecision, get_loss

__all__ = ["LatentBags", "LatentCall", "LatentProblem", "LatentInstance", "LatentResult",
           "run_latent_ap", "run_latent_greedy", "run_brute", "BRUTE_MAX_SAMPLES",
           "BRUTE_MAX_BAGS"]

BRUTE_MAX_SAMPLES = 18      # rows
BRUTE_MAX_BAGS = 7
BRUTE_MAX_WORK = 4_000_000  # rankings x latent choices enumerated

_AP = AveragePrecision()


# ---------------------------------------------------------------------------- structure
class LatentBags:
    """Rows grouped in bags, one label per bag, and the known h of some bags; validated once.

    bags : (M,) bag id of each row (integers or strings); None: every row is its own bag.
    is_pos : (M,) bool label of each row; the rows of a bag must agree.
    h : known rows, as a dict {bag id: row index} or an (M,) bool mask marking at most one row
        per bag; None: no h is known.
    """

    def __init__(self, bags, is_pos: np.ndarray, h=None):
        M = is_pos.shape[0]
        bags = np.arange(M) if bags is None else np.asarray(bags)
        if bags.ndim != 1 or bags.shape[0] != M:
            raise ValueError(f"bags must hold one bag id per row ({M}), got shape {bags.shape}")
        if bags.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(bags) | (bags != np.round(bags)))
            if bad.size:
                raise ValueError(f"bags[{bad[0]}] = {bags[bad[0]].item()!r} is not a bag id (integers "
                                 "or strings)")
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
            raise ValueError(f"bag {self.bag_name(b)!r} has two labels (row {first_pos} relevant, row "
                             f"{first_neg} not): a bag takes one label, shared by its rows")
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
                b = index.get(bag.item() if isinstance(bag, np.generic) else bag)
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
    """One solve: the problem, the validated scores, the positives' rows of the ground truth
    (``impute``) and the outputs a registry algorithm's ``run(call)`` fills: ``ranks`` (per
    bag, interleaving ranks) and ``h`` (per bag, the row of the loss-augmented term)."""

    def __init__(self, problem: "LatentProblem", scores: np.ndarray, impute: np.ndarray):
        self.problem = problem
        self.loss = problem.loss
        self.bags = problem.bags
        self.scores = scores
        self.argmax = problem.bags.best_rows(scores)
        self.impute = impute
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

    bag_ids : the bags, sorted (the order of every per-bag array).
    ranks : per bag, interleaving rank (a negative: 1 + positives above it; a positive: 1 +
        negatives above it).
    h : per bag, the row scoring it in the loss-augmented term.
    truth_h : per bag, the row scoring it in the ground-truth term.
    coef, truth_coef : per row, w'Psi(Y, H) = coef . scores and w'Psi(Y*, H*) = truth_coef .
        scores (zero on rows no term uses).
    loss : Delta(Y*, Y), the AP loss of the ranking of bags.
    value : Delta + w'Psi(Y, H), the loss-augmented score.
    objective : the constraint violation, value - w'Psi(Y*, H*) (>= 0 for an exact algorithm).
    algorithm : name of the algorithm.
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


@dataclass(frozen=True)
class LatentInstance(Instance):
    """Seeded inputs of one cross-check of the latent kind: an :class:`Instance` (scores and
    labels per row) with each row's bag and the mask of known rows."""

    bags: np.ndarray = None
    h: Optional[np.ndarray] = None


class LatentProblem:
    """Bags of candidate rows with one binary label per bag: the problem type of the "latent"
    kind (losses "latent-ap" and "latent-ssvm"; see the module docstring).

    Parameters
    ----------
    labels : (M,) per row, bool, {0, 1} or {-1, +1}; the rows of a bag share their label.
    loss : "latent-ap" or "latent-ssvm".
    bags : (M,) bag id of each row; None: every row is a bag of one (then "latent-ap" is AP
        inference).
    h : known rows: {bag id: row} or an (M,) bool mask (at most one row per bag).
    ranking_algorithm : exact AP algorithm of the ranking kind for ``latent-ap``'s second step.
    qid : must be None: the bags form one ranking.

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
        algo = resolve(get_loss("ap"), ranking_algorithm)
        if not algo.exact:
            raise ValueError(f"ranking_algorithm must be an exact AP algorithm, "
                             f"{algo.name!r} is not")
        self.ranking_algorithm = algo.name

    @property
    def kind(self) -> str:
        return self.loss.kind

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
        minimises the latent AP-SVM slack (003 Proposition 2) and the output-consistent
        inference of the latent SSVM (eq. A.4)."""
        s = self._scores(validation.as_scores(scores))
        return self.bags.best_rows(s)

    def solve(self, scores, algorithm: Optional[str] = None, *, impute=None) -> LatentResult:
        """Loss-augmented inference for these scores.

        algorithm : a name of the latent kind serving this loss (default: "latent-ap" for
            "latent-ap", "latent-greedy" for "latent-ssvm").
        impute : per bag (in ``bag_ids`` order), the rows of the positive bags in the ground
            truth (and, for "latent-ap", in both terms); entries of negative bags are ignored.
            Default: :meth:`impute` at these scores.
        """
        name = get_kind(self.kind).default_for(self.loss) if algorithm is None else algorithm
        return self._solve(validation.as_scores(scores), resolve(self.loss, name), impute)

    def solve_one(self, scores, algorithm: Optional[str] = None) -> LatentResult:
        """As :meth:`solve` (what :func:`aprank.infer` returns for this kind)."""
        return self.solve(scores, algorithm)

    def _one_checked(self, scores: np.ndarray, algo) -> LatentResult:
        return self._solve(scores, algo, None)

    _solve_checked = _one_checked

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
        call = LatentCall(self, s, None)
        call.impute = self._impute_rows(impute, call.argmax)
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
        loss = 0.0
        if N:
            per_bag = np.where(pos, N + 2 - 2 * call.ranks, P + 2 - 2 * call.ranks) / (P * N)
            if call.ranking is not None:
                per_bag = call.ranking.coef
            np.add.at(coef, call.h, per_bag)
            np.add.at(truth, truth_h, np.where(pos, 1.0 / P, -1.0 / N))
            loss = float(_AP.from_pattern(np.sort(call.ranks[pos] - 1), P, N))
        truth_value = float(truth @ s)
        if call.ranking is not None:
            loss, objective = call.ranking.loss, call.ranking.objective
            value = objective + truth_value
        else:
            value = loss + float(coef @ s)
            objective = value - truth_value
        return LatentResult(bags.ids, call.ranks.copy(), call.h.copy(), truth_h, coef, truth,
                            loss, value, objective, name)

    # ------------------------------------------------------------------------ cross-checks
    @staticmethod
    def random_instance(seed: int, trial: int, max_n: int = 2000) -> LatentInstance:
        """Seeded instance number ``trial``: 2 to 6 bags of 1 to 3 rows (small enough for the
        oracle whatever ``max_n``), at least one positive, a known row in some bags, scores with
        and without ties."""
        rng = np.random.default_rng([seed, trial, 2003])
        B = int(rng.integers(2, 7))
        counts = rng.integers(1, 4, B)
        bag_pos = rng.random(B) < rng.choice([0.3, 0.5])
        bag_pos[int(rng.integers(B))] = True
        bags = np.repeat(np.arange(B), counts)
        labels = bag_pos[bags]
        ties, (scores,) = with_ties(rng, rng.standard_normal(bags.size) * rng.choice([1.0, 3.0]))
        h = None
        if rng.random() < 0.4:
            h = np.zeros(bags.size, dtype=bool)
            for b in np.flatnonzero(rng.random(B) < 0.5):
                h[int(rng.choice(np.flatnonzero(bags == b)))] = True
        desc = (f"bags={B} rows={bags.size} P={int(bag_pos.sum())} ties={ties} "
                f"known={0 if h is None else int(h.sum())}")
        return LatentInstance(scores, labels, desc, seed, trial, max_n, bags=bags, h=h)

    @staticmethod
    def bench_instance(P: int, N: int, shift: float, seed: int = 0,
                       candidates: int = 4) -> LatentInstance:
        """The benchmark's instance of a cell: P positive and N negative bags of ``candidates``
        rows ~ N(0, 1); one row of each positive bag is shifted by ``shift``."""
        rng = np.random.default_rng(seed)
        B = P + N
        bag_pos = np.zeros(B, dtype=bool)
        bag_pos[rng.choice(B, P, replace=False)] = True
        bags = np.repeat(np.arange(B), candidates)
        scores = rng.standard_normal(bags.size)
        witness = np.arange(B) * candidates + rng.integers(0, candidates, B)
        scores[witness[bag_pos]] += shift
        return LatentInstance(scores, bag_pos[bags], f"P={P} N={N} bags of {candidates}", seed,
                              0, bags.size, bags=bags, h=None)

    @classmethod
    def solve_instance(cls, instance: LatentInstance, loss, algorithm: str) -> LatentResult:
        return cls(instance.labels, loss, bags=instance.bags, h=instance.h).solve_one(
            instance.scores, algorithm)

    @staticmethod
    def disagreement(result, reference, instance) -> Optional[str]:
        """Exact algorithms are compared by objective only: with latent choices, equal optima
        are common (ties between a bag's rows, or rows no term depends on)."""
        return None

    @classmethod
    def reproducer(cls, instance: LatentInstance, loss: str, algorithm: str) -> str:
        name = f"aprank.inference.{cls.__name__}"
        return (f"i = {name}.random_instance(seed={instance.seed}, trial={instance.trial}, "
                f"max_n={instance.max_n}); {name}.solve_instance(i, {loss!r}, {algorithm!r})")


# ---------------------------------------------------------------------------- algorithms
def run_latent_ap(call: LatentCall) -> None:
    """003 Proposition 3: each negative bag takes its best row, each positive its row of H_P;
    then exact AP inference on the bag scores (the problem's ``ranking_algorithm``)."""
    pos = call.bags.is_pos
    rows = np.where(pos, call.impute, call.argmax)
    result = call.problem.bag_problem.solve_one(call.scores[rows], call.problem.ranking_algorithm)
    call.ranks[:] = result.ranks
    call.h[:] = rows
    call.ranking = result


def _gains(coef: np.ndarray, high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """gain[b, t] = max_h coef[t] s_b(h): c high_b for c >= 0, c low_b below (eq. A.6, A.8)."""
    return np.where(coef[None, :] >= 0, high[:, None] * coef[None, :], low[:, None] * coef[None, :])


def _assign(coef: np.ndarray, high: np.ndarray, low: np.ndarray):
    """Best assignment of bags to slots of coefficients ``coef`` (003 eq. A.6, A.8): (value,
    slot of each bag)."""
    gain = _gains(coef, high, low)
    rows, slots = linear_sum_assignment(gain, maximize=True)
    return float(gain[rows, slots].sum()), slots


def _pattern_value(neg_ranks, P, N, pos_high, pos_low, neg_high, neg_low):
    """Delta + the best w'Psi over latent choices and the placement of bags in the slots of
    the +/- pattern whose k-th negative slot has interleaving rank neg_ranks[k]."""
    above = np.searchsorted(neg_ranks, np.arange(1, P + 1), side="right")   # per positive slot
    pos_coef = (N - 2.0 * above) / (P * N)
    neg_coef = (P + 2.0 - 2.0 * neg_ranks) / (P * N)
    vp, pos_slot = _assign(pos_coef, pos_high, pos_low)
    vn, neg_slot = _assign(neg_coef, neg_high, neg_low)
    return float(_AP.from_pattern(above, P, N)) + vp + vn, pos_slot, neg_slot, pos_coef, neg_coef


def _fill(gain: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """The column of each row (-1: left free) in a best assignment that fills every column of
    ``gain`` (rows >= columns); columns of equal ``coef`` (contiguous) are interchangeable."""
    n_rows, n_cols = gain.shape
    col_of = np.full(n_rows, -1, dtype=np.int64)
    if n_cols == 0:
        return col_of
    starts = np.flatnonzero(np.r_[True, coef[1:] != coef[:-1]])
    sizes = np.diff(np.r_[starts, n_cols])
    g = int(np.argmax(sizes))
    if sizes[g] * 8 < n_cols:
        rows, cols = linear_sum_assignment(gain, maximize=True)
        col_of[rows] = cols
        return col_of
    # The largest group stays out of the solve (scipy is slow on many equal columns): gains
    # become changes from a row's value in the group, free rows are dummy columns of value
    # -base, and the rows the solve leaves over fill the group. Exact.
    group = np.arange(starts[g], starts[g] + sizes[g])
    explicit = np.r_[np.arange(starts[g]), np.arange(starts[g] + sizes[g], n_cols)]
    base = gain[:, starts[g]]
    reduced = np.hstack([gain[:, explicit] - base[:, None],
                         np.repeat(-base[:, None], n_rows - n_cols, axis=1)])
    rows, cols = linear_sum_assignment(reduced, maximize=True)
    real = cols < explicit.size
    col_of[rows[real]] = explicit[cols[real]]
    leftover = np.setdiff1d(np.arange(n_rows), rows, assume_unique=True)
    col_of[leftover] = group
    return col_of


def _freeing(gain: np.ndarray, col_of: np.ndarray):
    """For an optimal assignment of rows to columns (``col_of[x]``, -1 for a free row) with
    gains ``gain[x, c]``: D[x], the best change of value when row x gives up its column, which
    a chain of moves refills, ending with a free row (0 for a free row); pred[x], the row that
    takes x's column. Longest paths by Bellman-Ford: at an optimum no cycle of moves gains."""
    free = col_of < 0
    D = np.where(free, 0.0, -np.inf)
    pred = np.full(col_of.shape[0], -1, dtype=np.int64)
    matched = np.flatnonzero(~free)
    if matched.size == 0 or not free.any():
        return D, pred
    m = np.arange(matched.size)
    into = gain[:, col_of[matched]]             # into[y, i]: row y takes matched[i]'s column
    own = into[matched, m].copy()
    into[matched, m] = -np.inf                  # a row does not replace itself
    eps = 1e-13 * (1.0 + float(np.abs(own).max()))
    for _ in range(col_of.shape[0]):
        cand = D[:, None] + into
        y = np.argmax(cand, axis=0)
        value = cand[y, m] - own
        better = value > D[matched] + eps
        if not better.any():
            break
        D[matched[better]] = value[better]
        pred[matched[better]] = y[better]
    return D, pred


def _values_with_copies(fixed: np.ndarray, extra: np.ndarray, n_max: int) -> np.ndarray:
    """V[n], n = 0 ... n_max: the best assignment of the rows into the columns of ``fixed``
    (gains, every column filled) plus n copies of one column of gains ``extra``; rows left
    over score 0. One Hungarian solve, then one augmenting path per copy added (successive
    shortest paths: each V[n + 1] is optimal when V[n] is)."""
    n_rows, n_fixed = fixed.shape
    gain = np.empty((n_rows, n_fixed + n_max))
    gain[:, :n_fixed] = fixed
    gain[:, n_fixed:] = extra[:, None]
    col_of = np.full(n_rows, -1, dtype=np.int64)
    value = 0.0
    if n_fixed:
        rows, cols = linear_sum_assignment(fixed, maximize=True)
        col_of[rows] = cols
        value = float(fixed[rows, cols].sum())      # (slots above lowest: few equal ones)
    V = np.empty(n_max + 1)
    V[0] = value
    for n in range(n_max):
        D, pred = _freeing(gain, col_of)
        x = int(np.argmax(extra + D))
        value += float(extra[x] + D[x])
        V[n + 1] = value
        c = n_fixed + n                 # the new copy takes x; x's column the next row; ...
        for _ in range(n_rows + 1):
            old = int(col_of[x])
            col_of[x] = c
            if old < 0:
                break
            x, c = int(pred[x]), old
        else:
            raise RuntimeError("augmenting path did not end at a free row")
    return V


def _scan_values(neg_ranks, k, P, N, pos_high, pos_low, neg_high, neg_low):
    """Delta + best w'Psi of every pattern that puts negative slot k (0-based; slots before it
    chosen, slots after it at P + 1) at rank r = lowest ... P, lowest = the rank of slot k - 1
    (1 for the first): (ranks, values). The positive side's slots from ``lowest`` on take two
    coefficients, one above slot k and one below, so its values for every r come from one
    assignment and an augmenting path per slot moved; on the negative side only slot k's
    coefficient changes, so every r is max_b (slot k's gain of bag b + the best assignment of
    the other bags to the other slots), the latter from one assignment and its longest paths."""
    lowest = int(neg_ranks[k - 1]) if k else 1
    ranks = np.arange(lowest, P + 1)
    scale = 1.0 / (P * N)
    # positive side: slots p < lowest fixed; from lowest, c_hi above slot k and c_lo below
    above_fixed = np.searchsorted(neg_ranks[:k], np.arange(1, lowest), side="right")
    c_fixed = (N - 2.0 * above_fixed) * scale
    c_hi, c_lo = (N - 2.0 * k) * scale, (N - 2.0 * (k + 1)) * scale
    f_lo = _gains(np.array([c_lo]), pos_high, pos_low)[:, 0]
    f_hi = _gains(np.array([c_hi]), pos_high, pos_low)[:, 0]
    fixed = _gains(c_fixed, pos_high, pos_low) - f_lo[:, None]
    pos_values = f_lo.sum() + _values_with_copies(fixed, f_hi - f_lo, P - lowest)
    # negative side: the other slots fixed, slot k at rank r
    others = np.r_[neg_ranks[:k], neg_ranks[k + 1:]]
    c_others = (P + 2.0 - 2.0 * others) * scale
    G = _gains(c_others, neg_high, neg_low)
    col_of = _fill(G, c_others)
    D, _ = _freeing(G, col_of)
    slot_k = _gains((P + 2.0 - 2.0 * ranks) * scale, neg_high, neg_low)      # (N, len(ranks))
    assigned = col_of >= 0
    neg_values = (float(G[assigned, col_of[assigned]].sum())
                  + (slot_k + D[:, None]).max(axis=0))
    # the loss of each pattern
    above = np.empty((ranks.size, P), dtype=np.int64)
    above[:, :lowest - 1] = above_fixed
    p = np.arange(lowest, P + 1)
    above[:, lowest - 1:] = k + (p[None, :] >= ranks[:, None])
    delta = _AP.from_pattern(above, P, N)
    return ranks, delta + pos_values + neg_values


def run_latent_greedy(call: LatentCall) -> None:
    """003 appendix A: start from the ground-truth pattern and move the negative slots up one
    at a time (the highest first), each to the rank that maximises the loss-augmented score
    with the others fixed (ties: the lowest place); every pattern is scored with its best
    placement of bags and latent choices, a Hungarian assignment per side of the gains of eqs.
    A.6-A.9 (``scipy.optimize.linear_sum_assignment``, kept up to date along a slot's moves by
    augmenting paths: see :func:`_scan_values`). Approximate: never above the optimum (Table
    A.1 is a case below it)."""
    problem, s = call.problem, call.scores
    P, N = problem.P, problem.N
    pos_b = np.flatnonzero(call.bags.is_pos)
    neg_b = np.flatnonzero(~call.bags.is_pos)
    if N == 0:
        call.ranks[:] = 1
        call.h[:] = call.argmax
        return
    high, low = s[call.argmax], s[call.argmin]
    sides = (high[pos_b], low[pos_b], high[neg_b], low[neg_b])
    neg_ranks = np.full(N, P + 1, dtype=np.int64)
    best = _pattern_value(neg_ranks, P, N, *sides)[0]
    for k in range(N):
        if k and neg_ranks[k - 1] == P + 1:
            break           # every later slot must stay below all positives
        ranks, values = _scan_values(neg_ranks, k, P, N, *sides)
        top = float(values.max())
        if top > best:
            best = top
            neg_ranks[k] = ranks[np.flatnonzero(values == top)[-1]]
        else:
            neg_ranks[k:] = P + 1
            break           # slot k stays at P + 1, and so must every later one
    _, pos_slot, neg_slot, pos_coef, neg_coef = _pattern_value(neg_ranks, P, N, *sides)
    above = np.searchsorted(neg_ranks, np.arange(1, P + 1), side="right")
    call.ranks[pos_b] = 1 + above[pos_slot]
    call.ranks[neg_b] = neg_ranks[neg_slot]
    call.h[pos_b] = np.where(pos_coef[pos_slot] >= 0, call.argmax[pos_b], call.argmin[pos_b])
    call.h[neg_b] = np.where(neg_coef[neg_slot] >= 0, call.argmax[neg_b], call.argmin[neg_b])


def run_brute(call: LatentCall) -> None:
    """The oracle: every ranking of the bags and every latent choice left free, each scored
    from the definitions (AP by precision at each positive, Psi by its pairs). "latent-ap":
    positives at their H_P, each negative's row shared by both terms; "latent-ssvm": every
    bag free, minus the ground truth minimised over the negatives' rows by enumeration too."""
    problem, s, bags = call.problem, call.scores, call.bags
    P, N, B = problem.P, problem.N, bags.n_bags
    pos = bags.is_pos
    joint = problem.loss.name == "latent-ssvm"
    choices = [bags.candidates(b) if (joint or not pos[b]) else call.impute[b:b + 1]
               for b in range(B)]
    n_choices = int(np.prod([c.size for c in choices]))
    n_rankings = int(np.prod(np.arange(1, B + 1)))
    if B > BRUTE_MAX_BAGS or n_choices * n_rankings > BRUTE_MAX_WORK:
        raise ValueError(f"brute enumerates {n_rankings} rankings x {n_choices} latent choices "
                         f"of {B} bags: too many (at most {BRUTE_MAX_BAGS} bags and "
                         f"{BRUTE_MAX_WORK} in all)")
    H = np.array(list(product(*choices)), dtype=np.int64)          # (K, B) rows
    S = s[H]
    truth = np.zeros(B)
    if N:
        truth = np.where(pos, 1.0 / P, -1.0 / N)
    if joint and N:
        # min over the negatives' rows of the ground truth, positives at H_P
        neg_choices = [call.impute[b:b + 1] if pos[b] else bags.candidates(b) for b in range(B)]
        T = s[np.array(list(product(*neg_choices)), dtype=np.int64)]
        truth_value = float((T @ truth).min())
    best, best_perm, best_k = -np.inf, None, 0
    for perm in permutations(range(B)):
        place = np.empty(B, dtype=np.int64)
        place[list(perm)] = np.arange(B)
        if N:
            Y = np.where(place[pos][:, None] < place[~pos][None, :], 1.0, -1.0)    # (P, N)
            c = np.zeros(B)
            c[pos] = Y.sum(axis=1) / (P * N)
            c[~pos] = -Y.sum(axis=0) / (P * N)
            positions = np.sort(place[pos]) + 1
            delta = 1.0 - float(np.mean(np.arange(1, P + 1) / positions))
        else:
            c, delta = np.zeros(B), 0.0
        values = delta + S @ c - (0.0 if joint else S @ truth)
        k = int(np.argmax(values))
        if values[k] > best:
            best, best_perm, best_k = float(values[k]), perm, k
    place = np.empty(B, dtype=np.int64)
    place[list(best_perm)] = np.arange(B)
    if N:
        above_pos = (place[~pos][None, :] < place[pos][:, None]).sum(axis=1)
        above_neg = (place[pos][None, :] < place[~pos][:, None]).sum(axis=1)
        call.ranks[pos] = 1 + above_pos
        call.ranks[~pos] = 1 + above_neg
    else:
        call.ranks[:] = 1
    call.h[:] = H[best_k]
