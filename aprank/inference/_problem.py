"""The validated problem of the ranking and labelling kinds, built once, solved for many scores.

:class:`RankingProblem` holds everything about a set of queries except the scores: the labels,
the query groups, the loss, the queries left out, the ground-truth coefficients. Building it
validates once; :meth:`RankingProblem.solve` then only checks the scores, so a learner that
calls inference every iteration with new scores pays for the query structure once per fit.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import numpy as np

from aprank import validation
from aprank.inference._registry import resolve, warn_if_slow
from aprank.losses import Loss, get_loss

__all__ = ["QueryProblem", "RankingProblem", "Instance", "InferenceResult", "BatchResult"]

#: Score regimes and tie densities of the cross-check instances (see random_instance).
REGIMES = {"overlapping": 1.0, "separated": 6.0, "reversed": -1.0}
TIES = ("none", "some", "heavy", "all")


@dataclass(frozen=True)
class InferenceResult:
    """The most violated ranking of one query.

    ranks : int64, one per sample in input order. A negative's interleaving rank is 1 + the
        number of positives ranked above it (1 ... P+1); a positive's is 1 + the number of
        negatives ranked above it. (For the 0-1 loss, see ``aprank.losses.ZeroOne``: the
        labelling is reported as a two-block ranking.)
    coef : float64, one per sample: Psi(X, R) = sum_k coef[k] psi(x_k) for the returned ranking.
    loss : Delta(R*, R).
    objective : Delta(R*, R) + w'Psi(X, R) - w'Psi(X, R*), the constraint violation (>= 0 for an
        exact algorithm, since R* itself scores 0).
    algorithm : name of the algorithm used, as named ("auto" for "auto", whichever kernel it
        ran: every candidate returns the same result).
    labelling : for the 0-1 loss, int8 per sample, 1 where the most violated labelling marks
        the sample relevant; None for ranking losses.
    """

    ranks: np.ndarray
    coef: np.ndarray
    loss: float
    objective: float
    algorithm: str
    labelling: Optional[np.ndarray] = None


@dataclass(frozen=True)
class BatchResult:
    """The most violated ranking of every query (see :class:`InferenceResult`).

    ranks, coef, labelling : per sample, in input order (coef is per query's joint feature).
    truth_coef : per sample, the coefficients of Psi(X, R*) of its query (read-only; shared by
        every result of the same problem).
    loss, objective : per query, in the order of ``query_ids``.
    used : per query; False for queries without positives left out under ``empty="skip"``
        (their loss, objective and coefficients are 0).
    """

    ranks: np.ndarray
    coef: np.ndarray
    truth_coef: np.ndarray
    loss: np.ndarray
    objective: np.ndarray
    query_ids: Optional[np.ndarray]
    used: np.ndarray
    algorithm: str
    labelling: Optional[np.ndarray] = None

    @property
    def mean_loss(self) -> float:
        return float(self.loss[self.used].mean())

    @property
    def mean_objective(self) -> float:
        return float(self.objective[self.used].mean())


@dataclass(frozen=True)
class Instance:
    """Seeded inputs of one cross-check: ``scores`` and ``labels`` of one query."""

    scores: np.ndarray
    labels: np.ndarray
    description: str
    seed: int
    trial: int
    max_n: int

    @property
    def size(self) -> int:
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


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


class QueryProblem:
    """What every problem type of grouped samples shares: the loss, binary labels validated
    once, the query groups, the positives per query and the queries left out.

    ``empty``: a query without positives under a loss that needs them is a ValueError naming
    it ("error") or left out ("skip": zero loss, objective and coefficients; ``used`` False).
    """

    def __init__(self, labels, loss, *, qid=None, empty="error", n_samples=None):
        self.loss: Loss = get_loss(loss)
        if empty not in ("error", "skip"):
            raise ValueError(f"empty={empty!r} must be 'error' or 'skip'")
        if n_samples is None:
            n_samples = np.shape(labels)[0] if np.ndim(labels) == 1 else -1
        self.is_pos = validation.as_labels(labels, n_samples)
        self.order, self.offsets, self.query_ids = validation.as_query_groups(qid, n_samples)
        self.positives = self._positives_per_query()
        self.n_pos = int(self.positives.sum())
        self.used = np.ones(self.n_queries, dtype=bool)
        if self.loss.needs_positives:
            self.used = self.positives > 0
            if not self.used.all() and (empty == "error" or not self.used.any()):
                where = "any sample" if qid is None else (
                    f"query {self.query_ids[np.argmin(self.used)].tolist()!r}"
                    + ("" if empty == "error" else " or any other"))
                raise ValueError(f"loss {self.loss.name!r} is undefined without positive samples, "
                                 f"and {where} has none" +
                                 ("; pass empty='skip' to leave such queries out"
                                  if qid is not None and empty == "error" else ""))

    @property
    def kind(self) -> str:
        return self.loss.kind

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
    def largest_query(self) -> tuple:
        """(most positives, most negatives) of any query used: a cost model's worst case."""
        negatives = np.diff(self.offsets) - self.positives
        return (int(self.positives[self.used].max(initial=0)),
                int(negatives[self.used].max(initial=0)))

    def _positives_per_query(self) -> np.ndarray:
        grouped = self.is_pos if self.order is None else self.is_pos[self.order]
        return np.add.reduceat(grouped.astype(np.int64), self.offsets[:-1])


    @classmethod
    def seeded_reproducer(cls, instance: Instance, loss: str, algorithm: str) -> str:
        """A line that rebuilds a seeded instance of this problem type and solves it."""
        name = f"aprank.inference.{cls.__name__}"
        return (f"i = {name}.random_instance(seed={instance.seed}, trial={instance.trial}, "
                f"max_n={instance.max_n}); {name}.solve_instance(i, {loss!r}, {algorithm!r})")


class RankingProblem(QueryProblem):
    """Scores of samples with binary relevance, grouped in queries: the problem type of the
    "ranking" kind (losses AP, NDCG) and of the "labelling" kind (the weighted 0-1 loss).

    Parameters
    ----------
    labels : array-like (n,)
        Relevance as bool, {0, 1} or {-1, +1}.
    loss : str or Loss
    qid : array-like (n,), optional
        Query of each sample; a query's samples need not be contiguous. None: one query.
    empty : {"error", "skip"}
        A query without positives under a loss that needs them: ValueError naming it, or left
        out (zero loss, objective and coefficients; ``used`` False).
    n_samples : int, optional
        Expected number of samples (checked against the labels).

    The caller's arrays are never modified.
    """

    def __init__(self, labels, loss="ap", *, qid=None, empty="error", n_samples=None):
        super().__init__(labels, loss, qid=qid, empty=empty, n_samples=n_samples)

    # ------------------------------------------------------------------------ structure
    def per_sample(self, values: np.ndarray) -> np.ndarray:
        """Spread one value per query to the query's samples (in input order)."""
        out = np.empty(self.n_samples, dtype=np.asarray(values).dtype)
        spread = np.repeat(values, np.diff(self.offsets))
        if self.order is None:
            out[:] = spread
        else:
            out[self.order] = spread
        return out

    @cached_property
    def truth_coef(self) -> np.ndarray:
        """Coefficients of Psi(X, R*) for every sample, query by query (0 in skipped queries)."""
        sizes = np.diff(self.offsets)
        coef = self.loss.truth_coef(self.is_pos, self.per_sample(self.positives),
                                    self.per_sample(sizes - self.positives))
        if not self.used.all():
            coef[~self.per_sample(self.used)] = 0.0
        return _read_only(coef)

    @cached_property
    def last_rank(self) -> np.ndarray:
        """Per sample: P+1 of its query for a negative (the rank below every positive), 0 for a
        positive (which no rank equals)."""
        return np.where(self.is_pos, 0, self.per_sample(self.positives + 1))

    def query_indices(self, q: int) -> np.ndarray:
        """Input indices of the samples of query q, in input order."""
        a, b = self.offsets[q], self.offsets[q + 1]
        return np.arange(a, b) if self.order is None else self.order[a:b]

    # ------------------------------------------------------------------------ solving
    def solve(self, scores, algorithm: str = "qs") -> BatchResult:
        """Loss-augmented inference for these scores with the registry algorithm
        ``algorithm`` (a name); see :func:`aprank.infer_batch`."""
        return self._solve_checked(validation.as_scores(scores), resolve(self.loss, algorithm))

    def solve_one(self, scores, algorithm: str = "qs") -> InferenceResult:
        """As :meth:`solve` for a problem of one query, without the ground-truth coefficients
        (what :func:`aprank.infer` returns)."""
        return self._one_checked(validation.as_scores(scores), resolve(self.loss, algorithm))

    def _solve_checked(self, scores: np.ndarray, algo) -> BatchResult:
        """``solve`` for scores validated by ``validation.as_scores`` and a resolved algorithm
        (what ``infer_batch`` calls, having done both)."""
        return self._batch(self._run(scores, algo), algo)

    def _one_checked(self, scores: np.ndarray, algo) -> InferenceResult:
        if self.n_queries != 1:
            raise ValueError(f"solve_one needs a problem of one query, this one has {self.n_queries}")
        return self._one(self._run(scores, algo, truth=False), algo)

    def _batch(self, call: "Call", algo) -> BatchResult:
        truth = self.__dict__.get("truth_coef")
        if truth is None and call.truth_coef is not None:
            # written by the driver in its pass (Call.truth_out); the cached_property's value
            truth = self.__dict__["truth_coef"] = _read_only(call.truth_coef)
        return BatchResult(call.ranks, call.coef, self.truth_coef if truth is None else truth,
                           call.query_loss,
                           call.query_objective, self.query_ids, self.used, algo.name,
                           call.labelling)

    @staticmethod
    def _one(call: "Call", algo) -> InferenceResult:
        return InferenceResult(call.ranks, call.coef, float(call.query_loss[0]),
                               float(call.query_objective[0]), algo.name, call.labelling)

    def _run(self, scores: np.ndarray, algo, truth: bool = True) -> "Call":
        """Run ``algo`` on scores already validated by ``validation.as_scores``; ``truth``: the
        result needs the ground truth's coefficients (a batch's does, a single query's not)."""
        if algo.max_samples is not None and self.max_query_size > algo.max_samples:
            raise ValueError(
                f"algorithm {algo.name!r} enumerates every ranking and refuses queries of more "
                f"than {algo.max_samples} samples (got {self.max_query_size})")
        if scores.shape[0] != self.n_samples:
            raise ValueError(f"scores has {scores.shape[0]} entries but the problem has "
                             f"{self.n_samples} samples")
        # the cost check once per problem and algorithm: a learner solves one problem often
        checked = self.__dict__.setdefault("_cost_checked", set())
        if algo.name not in checked:
            checked.add(algo.name)
            warn_if_slow(algo, self.loss, *self.largest_query, stacklevel=5)
        call = Call(self, scores, truth and "truth_coef" not in self.__dict__)
        algo.run(call)
        call.clear_unused()
        return call

    # ------------------------------------------------------------------------ cross-checks
    @staticmethod
    def random_instance(seed: int, trial: int, max_n: int = 2000) -> Instance:
        """The seeded random one-query instance number ``trial``.

        Half of the instances have at most 16 samples (so the oracle can join), the rest up to
        ``max_n``. Scores come from one of REGIMES (positives ~ N(1, 1) or N(6, 1) or N(-1, 1),
        negatives ~ N(0, 1)), rounded to a tie density from TIES, and scaled by 1e-4, 1 or 1e4.
        """
        rng = np.random.default_rng([seed, trial])
        if rng.random() < 0.5 or max_n <= 16:
            n = int(rng.integers(2, min(16, max_n) + 1))
        else:
            n = int(np.exp(rng.uniform(np.log(17), np.log(max(max_n, 18)))))
        frac = rng.choice([0.5, 0.2, 0.05])
        n_pos = int(np.clip(round(n * frac * rng.uniform(0.2, 1.8)), 1, n))
        regime = list(REGIMES)[int(rng.integers(len(REGIMES)))]
        ties = TIES[int(rng.integers(len(TIES)))]
        labels = np.zeros(n, dtype=bool)
        labels[rng.permutation(n)[:n_pos]] = True
        scores = rng.standard_normal(n) + REGIMES[regime] * labels
        if ties == "some":
            scores = np.round(scores, 1)
        elif ties == "heavy":
            scores = np.round(scores)
        elif ties == "all":
            scores = np.zeros(n)
        scores = scores * rng.choice([1e-4, 1.0, 1e4])
        return Instance(scores, labels, f"n={n} P={n_pos} regime={regime} ties={ties}",
                        seed, trial, max_n)

    @staticmethod
    def bench_instance(P: int, N: int, shift: float, seed: int = 0) -> Instance:
        """The benchmark's instance of a cell: P positives ~ N(shift, 1) and N negatives
        ~ N(0, 1), shuffled."""
        rng = np.random.default_rng(seed)
        labels = np.zeros(P + N, dtype=bool)
        labels[rng.choice(labels.size, P, replace=False)] = True
        scores = rng.standard_normal(labels.size)
        scores[labels] += shift
        return Instance(scores, labels, f"P={P} N={N} shift={shift}", seed, 0, P + N)

    @classmethod
    def solve_instance(cls, instance: Instance, loss, algorithm: str) -> InferenceResult:
        return cls(instance.labels, loss).solve_one(instance.scores, algorithm)

    @staticmethod
    def disagreement(result: InferenceResult, reference: InferenceResult,
                     instance: Instance) -> Optional[str]:
        """Exact algorithms must return the same ranks when no two scores are equal (the tie
        rule makes them agree otherwise too, but only the objective is defined there)."""
        if np.unique(instance.scores).size != instance.size:
            return None
        if np.array_equal(result.ranks, reference.ranks):
            return None
        bad = int(np.flatnonzero(result.ranks != reference.ranks)[0])
        return f"ranks differ at sample {bad}: {int(result.ranks[bad])} != {int(reference.ranks[bad])}"

    @staticmethod
    def reproducer(instance: Instance, loss: str, algorithm: str) -> str:
        call = f"aprank.infer(scores, labels, loss={loss!r}, algorithm={algorithm!r})"
        if instance.size <= 16:
            return (f"scores = np.array({instance.scores.tolist()}); labels = "
                    f"np.array({instance.labels.astype(int).tolist()}); {call}")
        return (f"i = aprank.inference.RankingProblem.random_instance(seed={instance.seed}, "
                f"trial={instance.trial}, max_n={instance.max_n}); scores, labels = i.scores, "
                f"i.labels; {call}")


class Call:
    """One solve: the problem's structure, validated scores and the output arrays that a
    registry algorithm's ``run(call)`` fills."""

    def __init__(self, problem: RankingProblem, scores: np.ndarray, want_truth: bool = False):
        self.problem = problem
        self.want_truth = want_truth
        #: the ground truth's coefficients when the compiled driver wrote them (truth_out)
        self.truth_coef = None
        self.scores = scores
        self.loss = problem.loss
        self.is_pos, self.order, self.offsets = problem.is_pos, problem.order, problem.offsets
        self.n_pos, self.used = problem.n_pos, problem.used
        n = scores.shape[0]
        self.ranks = np.empty(n, dtype=np.int64)
        self.coef = np.empty(n, dtype=np.float64)
        self.labelling = np.empty(n, dtype=np.int8) if self.loss.labelling else None
        self.query_loss = np.zeros(problem.n_queries)
        self.query_objective = np.zeros(problem.n_queries)

    @property
    def n_queries(self) -> int:
        return self.problem.n_queries

    @property
    def max_query_size(self) -> int:
        return self.problem.max_query_size

    def truth_out(self) -> Optional[np.ndarray]:
        """An array for the compiled driver to write the ground truth's coefficients into, or
        None: when the result does not need them (a single query's), the problem holds them
        already (a learner's later solves), or the loss's are not the driver's
        (``Loss.class_mean_truth``). A batch of small queries then gets them from the driver's
        own pass instead of the NumPy passes of ``Loss.truth_coef`` (which once took most of
        its time)."""
        if self.want_truth and self.truth_coef is None and self.loss.class_mean_truth:
            self.truth_coef = np.empty(self.scores.shape[0], dtype=np.float64)
        return self.truth_coef

    @property
    def positives(self) -> np.ndarray:
        return self.problem.positives

    def query_indices(self, q: int) -> np.ndarray:
        return self.problem.query_indices(q)

    def clear_unused(self) -> None:
        """Zero the outputs of skipped queries: ground-truth ranks, no loss, no constraint."""
        if self.used.all():
            return
        skipped = ~self.problem.per_sample(self.used)
        self.ranks[skipped] = 1
        self.coef[skipped] = 0.0
        if self.labelling is not None:
            self.labelling[skipped] = self.is_pos[skipped]
        self.query_loss[~self.used] = 0.0
        self.query_objective[~self.used] = 0.0


class SingleCall:
    """What a compiled run (``_compiled.COMPILED_RUNS``) reads of a :class:`Call`, for one query
    whose scores and labels are validated and which has positives: ``infer``'s common case,
    without a problem built (which costs more than the kernel on small queries)."""

    __slots__ = ("scores", "is_pos", "loss", "n_pos", "offsets", "ranks", "coef", "query_loss",
                 "query_objective")
    order = None
    used = None

    def __init__(self, scores: np.ndarray, is_pos: np.ndarray, loss, n_pos: int):
        n = scores.shape[0]
        self.scores, self.is_pos, self.loss, self.n_pos = scores, is_pos, loss, n_pos
        self.offsets = np.array([0, n], dtype=np.int64)
        self.ranks = np.empty(n, dtype=np.int64)
        self.coef = np.empty(n, dtype=np.float64)
        self.query_loss = np.zeros(1)
        self.query_objective = np.zeros(1)

    @property
    def max_query_size(self) -> int:
        return self.scores.shape[0]

    @property
    def n_queries(self) -> int:
        return 1

    @property
    def positives(self) -> np.ndarray:
        return np.array([self.n_pos], dtype=np.int64)

    def truth_out(self) -> None:
        return None

    def result(self, algorithm: str) -> InferenceResult:
        return InferenceResult(self.ranks, self.coef, float(self.query_loss[0]),
                               float(self.query_objective[0]), algorithm)
