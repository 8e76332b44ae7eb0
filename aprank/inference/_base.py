"""What the problem kinds share: the result types of the query kinds (ranking, labelling,
top-k), the validated labels and query groups of :class:`QueryProblem`, and the seeded
:class:`Instance` with the size and tie helpers the kinds' instance generators use."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from aprank import validation
from aprank.inference._protocol import Problem
from aprank.losses import get_loss

__all__ = ["QueryProblem", "Instance", "InferenceResult", "BatchResult", "random_size",
           "with_ties", "read_only", "exact_dot", "query_fsum"]


@dataclass(frozen=True)
class InferenceResult:
    """The most violated ranking of one query (what :func:`aprank.infer` returns).

    Parameters
    ----------
    ranks : ndarray of int64 (n,)
        One per sample in input order. A negative's interleaving rank is 1 + the number of
        positives ranked above it (1 ... P+1); a positive's is 1 + the number of negatives
        ranked above it. (For the 0-1 loss, see ``aprank.losses.ZeroOne``: the labelling is
        reported as a two-block ranking.)
    coef : ndarray of float64 (n,)
        Psi(X, R) = sum_k coef[k] psi(x_k) for the returned ranking.
    loss : float
        Delta(R*, R).
    objective : float
        Delta(R*, R) + w'Psi(X, R) - w'Psi(X, R*), the constraint violation (>= 0 for an exact
        algorithm, since R* itself scores 0).
    algorithm : str
        Name of the algorithm used, as named ("auto" for "auto", which runs "qs").
    labelling : ndarray of int8 (n,) or None
        For the 0-1 loss, 1 where the most violated labelling marks the sample relevant; None
        for ranking losses.
    """

    ranks: np.ndarray
    coef: np.ndarray
    loss: float
    objective: float
    algorithm: str
    labelling: np.ndarray | None = None


@dataclass(frozen=True)
class BatchResult:
    """The most violated ranking of every query (what :func:`aprank.infer_batch` returns).

    Parameters
    ----------
    ranks, coef : ndarray (n,)
        Per sample, in input order, as in :class:`InferenceResult` (coef is per query's joint
        feature).
    truth_coef : ndarray of float64 (n,)
        Per sample, the coefficients of Psi(X, R*) of its query (read-only; shared by every
        result of the same problem).
    loss, objective : ndarray of float64 (n_queries,)
        Per query, in the order of ``query_ids``.
    query_ids : ndarray or None
        The query ids in the order of the per-query arrays: ascending (``np.unique(qid)``),
        for every kind and whatever the layout of ``qid`` (None for one query).
    used : ndarray of bool (n_queries,)
        False for queries without positives left out under ``empty="skip"`` (their loss,
        objective and coefficients are 0).
    algorithm : str
        Name of the algorithm used.
    labelling : ndarray of int8 (n,) or None
        As in :class:`InferenceResult`.
    """

    ranks: np.ndarray
    coef: np.ndarray
    truth_coef: np.ndarray
    loss: np.ndarray
    objective: np.ndarray
    query_ids: np.ndarray | None
    used: np.ndarray
    algorithm: str
    labelling: np.ndarray | None = None

    @property
    def mean_loss(self) -> float:
        """The mean loss over the queries used."""
        return float(self.loss[self.used].mean())

    @property
    def mean_objective(self) -> float:
        """The mean objective over the queries used."""
        return float(self.objective[self.used].mean())


@dataclass(frozen=True)
class Instance:
    """Seeded inputs of one cross-check or benchmark: ``scores`` and ``labels`` of one query.

    Parameters
    ----------
    scores : ndarray of float64 (n,)
        The scores.
    labels : ndarray of bool (n,)
        The labels.
    description : str
        What was drawn (sizes, regime, ties), for reports.
    seed, trial, max_n : int
        The arguments that made it (``Instances.random_instance``), which rebuild it.
    """

    scores: np.ndarray
    labels: np.ndarray
    description: str
    seed: int
    trial: int
    max_n: int

    @property
    def size(self) -> int:
        """The number of samples (rows for the latent kind)."""
        return self.scores.size


def random_size(rng, max_n: int, smallest: int = 1) -> int:
    """A cross-check instance's size: half the time at most 12 (small enough for a kind's
    oracle), else log-uniform from 13 up to ``max_n``."""
    if rng.random() < 0.5 or max_n <= 12:
        return int(rng.integers(smallest, min(12, max_n) + 1))
    return int(np.exp(rng.uniform(np.log(13), np.log(max(max_n, 14)))))


TIE_LEVELS = ("none", "some", "heavy")


def with_ties(rng, *arrays):
    """(level, arrays): the arrays as they are, rounded to 0.1 ("some" ties) or to integers
    ("heavy"), one level drawn for all of them."""
    level = int(rng.integers(3))
    decimals = (None, 1, 0)[level]
    return TIE_LEVELS[level], [a if decimals is None else np.round(a, decimals) for a in arrays]


def read_only(a: np.ndarray) -> np.ndarray:
    """``a``, made read-only (a result's arrays that problems share between results)."""
    a.setflags(write=False)
    return a


def exact_dot(a: np.ndarray, s: np.ndarray) -> float:
    """sum_i a_i s_i correctly rounded, for integers a_i (|a_i| < 2^53) and finite floats s_i.

    An objective's terms are a coefficient (an integer over a common denominator) times a
    score; scores of any spread cancel in it (a row whose coefficients in the two terms are
    equal adds exactly nothing), so it is summed without rounding: each product split into
    six exact ones (the score's mantissa in three parts of 18 bits, the integer in two of 27),
    scaled to the largest exponent and added by ``math.fsum``. Terms more than 2^1074 below
    the largest may be lost (underflow), as may a sum that overflows.

    Parameters
    ----------
    a : ndarray of int64
    s : ndarray of float64, the same shape

    Returns
    -------
    float
    """
    keep = a != 0
    a, s = a[keep].astype(np.float64), s[keep]
    if a.size == 0:
        return 0.0
    m, e = np.frexp(s)
    m1 = np.ldexp(np.trunc(np.ldexp(m, 18)), -18)
    m2 = np.ldexp(np.trunc(np.ldexp(m - m1, 36)), -36)
    m3 = m - m1 - m2
    a1 = np.ldexp(np.trunc(np.ldexp(a, -27)), 27)
    a2 = a - a1
    top = int(e.max())
    shift = e - top
    parts = [np.ldexp(x * y, shift) for x in (m1, m2, m3) for y in (a1, a2)]
    total = math.fsum(np.concatenate(parts).tolist())
    try:
        return math.ldexp(total, top)
    except OverflowError:
        return math.copysign(math.inf, total)


def query_fsum(d: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per query (rows ``offsets[q]:offsets[q + 1]``), the sum of ``d`` correctly rounded:
    NumPy's sums where their rounding bound (the terms' magnitudes times their count, 2^-53
    each) is within an ulp of the sum, ``math.fsum`` on the others (terms that cancel).

    Parameters
    ----------
    d : ndarray of float64 (n,)
    offsets : ndarray of int64 (Q + 1,)

    Returns
    -------
    ndarray of float64 (Q,)
    """
    sizes = np.diff(offsets)
    out = np.zeros(sizes.shape[0])
    if d.size == 0:
        return out
    starts = np.minimum(offsets[:-1], d.size - 1)
    nz = np.add.reduceat((d != 0).astype(np.int64), starts)
    out = np.where(sizes > 0, np.add.reduceat(d, starts), 0.0)
    mag = np.where(sizes > 0, np.add.reduceat(np.abs(d), starts), 0.0)
    nz = np.where(sizes > 0, nz, 0)
    redo = np.flatnonzero((nz > 1) & (mag * nz * 2.0 ** -53 > np.abs(out) * 2.0 ** -53))
    for q in redo.tolist():
        out[q] = math.fsum(d[offsets[q]:offsets[q + 1]].tolist())
    return out


#: ``used`` of every problem of one query (shared, so read-only)
_ONE_USED = read_only(np.ones(1, dtype=bool))
_ONE_UNUSED = read_only(np.zeros(1, dtype=bool))


class QueryProblem(Problem):
    """What every problem type of grouped samples shares: the loss, binary labels validated
    once, the query groups, the positives per query and the queries left out.

    Parameters
    ----------
    labels : array-like (n,)
        Relevance as bool, {0, 1} or {-1, +1}.
    loss : str or Loss
        A loss of the problem type's kind.
    qid : array-like (n,), optional
        Query of each sample; a query's samples need not be contiguous. None: one query.
        Per-query arrays follow ascending query ids, whatever the layout.
    empty : {"error", "skip"}
        A query without positives under a loss that needs them is a ValueError naming it
        ("error") or left out ("skip": zero loss, objective and coefficients; ``used`` False).
    n_samples : int, optional
        Expected number of samples (checked against the labels).
    """

    def __init__(self, labels, loss, *, qid=None, empty="error", n_samples=None):
        self.loss = get_loss(loss)
        if empty not in ("error", "skip"):
            raise ValueError(f"empty={empty!r} must be 'error' or 'skip'")
        if n_samples is None:
            n_samples = np.shape(labels)[0] if np.ndim(labels) == 1 else -1
        self.is_pos = validation.as_labels(labels, n_samples)
        if qid is None:
            # one query (infer's case): its counts without the per-query reductions, which
            # cost more than a kernel on a small query
            n = self.is_pos.shape[0]
            self.order, self.offsets, self.query_ids = None, np.array([0, n], dtype=np.int64), None
            self._grouping_slot = None
            self.n_pos = int(np.count_nonzero(self.is_pos))
            self.positives = np.array([self.n_pos], dtype=np.int64)
            self.__dict__["max_query_size"] = n
            #: every query used (no query without positives left out)
            self.all_used = self.n_pos > 0 or not self.loss.needs_positives
            self.used = _ONE_USED if self.all_used else _ONE_UNUSED
            self.__dict__["largest_query"] = ((self.n_pos, n - self.n_pos) if self.all_used
                                              else (0, 0))
        else:
            wants_slot = self._wants_slot(self.is_pos.shape[0])
            groups = validation.as_query_groups(qid, n_samples, return_slot=wants_slot)
            self.order, self.offsets, self.query_ids = groups[:3]
            self._grouping_slot = groups[3] if wants_slot else None
            self.positives = self._positives_per_query()
            self.n_pos = int(self.positives.sum())
            self.used = (self.positives > 0 if self.loss.needs_positives
                         else np.ones(self.n_queries, dtype=bool))
            self.all_used = bool(self.used.all())
        if not self.all_used and (empty == "error" or not self.used.any()):
            if qid is None:
                where = "the labels have no positive sample"
            elif empty == "error":
                where = f"query {self.query_ids[np.argmin(self.used)].tolist()!r} has none"
            else:
                # empty="skip" refuses only when it would leave nothing to solve
                where = (f"none of the {self.n_queries} queries has one (empty='skip' leaves "
                         f"such queries out, which leaves none)")
            raise ValueError(f"loss {self.loss.name!r} is undefined without positive samples, "
                             f"and {where}" +
                             ("; pass empty='skip' to leave such queries out"
                              if qid is not None and empty == "error" else ""))

    def _wants_slot(self, n: int) -> bool:
        """Whether a problem of n samples keeps each sample's position in the order of the
        groups (``_grouping_slot``, the inverse of ``order``), which the grouping's counting
        pass writes for little more than its cost: not here."""
        return False

    @property
    def n_samples(self) -> int:
        return self.is_pos.shape[0]

    @property
    def n_queries(self) -> int:
        return self.offsets.shape[0] - 1

    @cached_property
    def max_query_size(self) -> int:
        return int(np.diff(self.offsets).max())

    @cached_property
    def largest_query(self) -> tuple[int, int]:
        """(most positives, most negatives) of any query used: a cost model's worst case."""
        negatives = np.diff(self.offsets) - self.positives
        return (int(self.positives[self.used].max(initial=0)),
                int(negatives[self.used].max(initial=0)))

    def query_sizes(self) -> tuple:
        """(P, N): the positives and negatives of each query used, the sizes that the
        registry's ``seconds`` models (:func:`~aprank.inference.per_query_seconds`) sum over."""
        sizes = np.diff(self.offsets)
        return self.positives[self.used], (sizes - self.positives)[self.used]

    def _positives_per_query(self) -> np.ndarray:
        grouped = self.is_pos if self.order is None else self.is_pos[self.order]
        return np.add.reduceat(grouped.astype(np.int64), self.offsets[:-1])
