"""The validated problem of the ranking and labelling kinds, built once, solved for many scores.

:class:`RankingProblem` holds everything about a set of queries except the scores: the labels,
the query groups, the loss, the queries left out, the ground-truth coefficients. Building it
validates once; :meth:`RankingProblem.solve` then only checks the scores, so a learner that
calls inference every iteration with new scores pays for the query structure once per fit.
:class:`Call` is what one solve hands a registry algorithm's ``run(call)`` to fill.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

import aprank.inference.ranking._driver_cy as _driver_cy
from aprank import validation
from aprank.inference._base import BatchResult, InferenceResult, QueryProblem, read_only
from aprank.inference._registry import as_algorithm, quiet_call, version, warn_if_slow_call

__all__ = ["RankingProblem", "Call"]


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

    #: Interleaved queries of at least this many samples in all run on gathered copies
    #: (``grouped_is_pos``, ``slot``); fewer are read through ``order`` by the driver, as
    #: their arrays stay in cache and the copies would cost more than the misses they save
    #: (``python -m benchmarks --targets``: a gain from 10^6 samples, a loss at 2 x 10^5).
    #: Both paths give the same results bit for bit; the deep check sets it per problem to
    #: take both.
    gather_min = 1 << 19

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
        return read_only(coef)

    @cached_property
    def last_rank(self) -> np.ndarray:
        """Per sample: P+1 of its query for a negative (the rank below every positive), 0 for a
        positive (which no rank equals)."""
        return np.where(self.is_pos, 0, self.per_sample(self.positives + 1))

    @cached_property
    def grouped_is_pos(self) -> np.ndarray:
        """The labels as uint8 in the order of the groups (``order``), for the compiled
        driver's run on gathered samples (every solve of the problem reuses them)."""
        flags = self.is_pos.view(np.uint8)
        return read_only(flags if self.order is None else flags[self.order])

    def _wants_slot(self, n: int) -> bool:
        # interleaved queries of gather_min samples or more run on gathered copies
        return n >= self.gather_min

    @cached_property
    def slot(self) -> np.ndarray:
        """Per sample, its position in the order of the groups (the inverse of ``order``;
        requires one): the grouping's where it wrote it, else inverted here."""
        if self._grouping_slot is not None:
            return read_only(self._grouping_slot)
        return read_only(_driver_cy.inverse(self.order))

    def query_indices(self, q: int) -> np.ndarray:
        """Input indices of the samples of query q, in input order."""
        a, b = self.offsets[q], self.offsets[q + 1]
        return np.arange(a, b) if self.order is None else self.order[a:b]

    # ------------------------------------------------------------------------ solving
    def solve(self, scores, algorithm=None) -> BatchResult:
        """Loss-augmented inference for these scores, every query (see
        :func:`aprank.infer_batch`).

        Parameters
        ----------
        scores : array-like (n,)
            One score per sample, in input order.
        algorithm : str, Algorithm or None
            A registry algorithm of the loss's kind; None: the kind's default ("qs" for AP and
            NDCG, "zero-one" for the 0-1 loss).

        Returns
        -------
        BatchResult
        """
        algo = as_algorithm(self.loss, algorithm)
        return self._batch(self._run(validation.as_scores(scores), algo), algo)

    def solve_one(self, scores, algorithm=None) -> InferenceResult:
        """As :meth:`solve` for a problem of one query, without the ground-truth coefficients
        (what :func:`aprank.infer` returns).

        Parameters
        ----------
        scores : array-like (n,)
            One score per sample.
        algorithm : str, Algorithm or None
            As for :meth:`solve`.

        Returns
        -------
        InferenceResult
        """
        algo = as_algorithm(self.loss, algorithm)
        if self.n_queries != 1:
            raise ValueError("solve_one needs a problem of one query, this one has "
                             f"{self.n_queries}")
        return self._one(self._run(validation.as_scores(scores), algo, truth=False), algo)

    @classmethod
    def solve_common(cls, scores, labels, loss, algo):
        """``infer``'s fast path: the result of ``cls(labels, loss).solve_one(scores, algo)``
        for the common input (scores a C-contiguous float64 ndarray, labels a bool or int8
        ndarray, both 1-D of one length, loss and algorithm resolved from their names), or None
        for any other input, which takes the general path.

        The same checks run, by the same functions and in the same order (labels, then
        scores); what is skipped is the general path's per-call set-up: the problem's
        per-query structure for one query, and the slow-call check of a (registry version,
        loss, algorithm, P, N) already found quiet (its answer depends on nothing else). A
        query of at most ``_driver_cy.ONE_MAX`` samples solved by a compiled kernel goes
        through ``_driver_cy.rank_one`` instead: the checks and the solve in one compiled
        pass, the general path taken whenever that pass finds anything to refuse."""
        if not (type(scores) is np.ndarray and type(labels) is np.ndarray
                and scores.dtype == _FLOAT64 and scores.ndim == 1
                and scores.flags.c_contiguous and labels.ndim == 1
                and (labels.dtype == _BOOL or labels.dtype == _INT8)):
            return None
        n = scores.shape[0]
        if n == 0:
            return None
        if n <= _driver_cy.ONE_MAX and labels.flags.c_contiguous:
            found = _one_compiled(scores, labels, loss, algo)
            if found is not None:
                return found
        is_pos = validation.as_labels(labels, n)
        scores = validation.as_scores(scores)
        n_pos = int(np.count_nonzero(is_pos))
        if (n_pos == 0 and loss.needs_positives) or (
                algo.max_samples is not None and n > algo.max_samples):
            return None                  # the general path raises its errors
        self = cls.__new__(cls)
        self.loss = loss
        self.is_pos = is_pos
        self.order, self.offsets, self.query_ids = None, np.array([0, n], dtype=np.int64), None
        self.n_pos = n_pos
        self.positives = np.array([n_pos], dtype=np.int64)
        self.all_used = True
        self.used = _ONE_USED
        self.__dict__["max_query_size"] = n
        self.__dict__["largest_query"] = largest = (n_pos, n - n_pos)
        key = (version(), loss, algo.name, largest)
        if key in _QUIET:
            self.__dict__["_cost_checked"] = {algo.name}
        elif quiet_call(algo, Call(self, scores), loss, largest):
            if len(_QUIET) >= _QUIET_KEEP:
                _QUIET.clear()
            _QUIET.add(key)
        return self._one(self._run(scores, algo, truth=False), algo)

    def _batch(self, call: Call, algo) -> BatchResult:
        truth = self.__dict__.get("truth_coef")
        if truth is None and call.truth_coef is not None:
            # written by the driver in its pass (Call.truth_out); the cached_property's value
            truth = self.__dict__["truth_coef"] = read_only(call.truth_coef)
        return BatchResult(call.ranks, call.coef, self.truth_coef if truth is None else truth,
                           call.query_loss,
                           call.query_objective, self.query_ids, self.used, algo.name,
                           call.labelling)

    @staticmethod
    def _one(call: Call, algo) -> InferenceResult:
        return InferenceResult(call.ranks, call.coef, float(call.query_loss[0]),
                               float(call.query_objective[0]), algo.name, call.labelling)

    def _run(self, scores: np.ndarray, algo, truth: bool = True) -> Call:
        """Run ``algo`` on scores already validated by ``validation.as_scores``; ``truth``: the
        result needs the ground truth's coefficients (a batch's does, a single query's not)."""
        if algo.max_samples is not None and self.max_query_size > algo.max_samples:
            raise ValueError(
                f"algorithm {algo.name!r} enumerates every ranking and refuses queries of more "
                f"than {algo.max_samples} samples (got {self.max_query_size})")
        if scores.shape[0] != self.n_samples:
            raise ValueError(f"scores has {scores.shape[0]} entries but the problem has "
                             f"{self.n_samples} samples")
        call = Call(self, scores, truth and "truth_coef" not in self.__dict__)
        # the cost check once per problem and algorithm (the estimate reads only the query
        # sizes): a learner solves one problem often
        checked = self.__dict__.setdefault("_cost_checked", set())
        if algo.name not in checked:
            checked.add(algo.name)
            warn_if_slow_call(algo, call, self.loss, self.largest_query, stacklevel=4)
        algo.run(call)
        call.clear_unused()
        return call

_FLOAT64, _BOOL, _INT8 = np.dtype(np.float64), np.dtype(np.bool_), np.dtype(np.int8)
#: every query of one positive used (shared, so read-only)
_ONE_USED = read_only(np.ones(1, dtype=bool))
#: (registry version, loss, algorithm name, (P, N)) whose slow-call check issues nothing
_QUIET: set = set()
#: entries of _QUIET kept at most (sizes vary without bound across calls)
_QUIET_KEEP = 1 << 14


def _one_compiled(scores, labels, loss, algo):
    """solve_common's compiled route (see there), or None where it does not apply: an
    algorithm that is no compiled ranking kernel, a loss with its own discount, input that
    ``rank_one`` leaves to the general path, or sizes whose slow-call check is not known to
    be quiet."""
    run = algo.run
    if getattr(run, "rank_one_route", False) is not True:   # a RankingKernel's
        return None
    n = scores.shape[0]
    spec = loss.kernel_spec(n, run.discount_table)
    if spec.discount is not None:
        return None
    signed = labels.dtype == _INT8
    ranks = np.empty(n, dtype=np.int64)
    coef = np.empty(n, dtype=np.float64)
    out = _driver_cy.rank_one(run.solve, scores, labels.view(np.uint8), signed,
                              np.empty(n, dtype=np.uint8) if signed else None, spec.code,
                              ranks, coef)
    if out is None or (version(), loss, algo.name, (out[2], n - out[2])) not in _QUIET:
        return None
    return InferenceResult(ranks, coef, out[0], out[1], algo.name, None)


class Call:
    """One solve: the problem's structure, validated scores and the output arrays that a
    registry algorithm's ``run(call)`` fills."""

    def __init__(self, problem: RankingProblem, scores: np.ndarray, want_truth: bool = False):
        self.problem = problem
        self.want_truth = want_truth
        #: the ground truth's coefficients when the compiled driver wrote them (truth_out)
        self.truth_coef: np.ndarray | None = None
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

    def truth_out(self) -> np.ndarray | None:
        """An array for the compiled driver to write the ground truth's coefficients into, or
        None: when the result does not need them (a single query's), the problem holds them
        already (a learner's later solves), or the loss's are not the driver's
        (``Loss.class_mean_truth``). A batch of small queries then gets them from the driver's
        own pass instead of the NumPy passes of ``Loss.truth_coef``, which would take most of
        its time."""
        if self.want_truth and self.truth_coef is None and self.loss.class_mean_truth:
            self.truth_coef = np.empty(self.scores.shape[0], dtype=np.float64)
        return self.truth_coef

    @property
    def positives(self) -> np.ndarray:
        return self.problem.positives

    def query_sizes(self) -> tuple:
        """(P, N) of each query solved (what a ``seconds`` cost model sums over)."""
        return self.problem.query_sizes()

    def query_indices(self, q: int) -> np.ndarray:
        return self.problem.query_indices(q)

    def clear_unused(self) -> None:
        """Zero the outputs of skipped queries: ground-truth ranks, no loss, no constraint."""
        if self.problem.all_used:
            return
        skipped = ~self.problem.per_sample(self.used)
        self.ranks[skipped] = 1
        self.coef[skipped] = 0.0
        if self.labelling is not None:
            self.labelling[skipped] = self.is_pos[skipped]
        self.query_loss[~self.used] = 0.0
        self.query_objective[~self.used] = 0.0
