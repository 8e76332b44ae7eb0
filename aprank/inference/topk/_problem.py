"""The top-k kind: subsets of k items with pairwise interactions on a core (Mensink et al. 2011,
c-star).

A query's items i have scores s_i and relevance z_i. A subset is its indicator t (k ones); its
score is f(t) = t's + t'Ft, where F (L x L, shared by every query of L items) is non-zero only
in the rows and columns of a core of C items. Loss-augmented inference for precision@k,
Delta(t, z) = <t, 1 - z> / k, maximises Delta + f, i.e. f with s_i replaced by
s_i + (1 - z_i)/k (Mensink et al. 2011, section 4). The reference subset is the best-scoring
loss-free one (Mensink et al. 2011, eq. 8): the relevant items when k is their number (break-even),
otherwise the best k of them (k below it) or all of them and the best k - R others (k above it). The
objective is max_t [Delta + f(t)] - f(t_ref) >= 0, a convex-in-F-and-s upper bound on the loss at
the best reference (eq. 8).

Every algorithm of the kind solves the same inner problem, "best subset of k items with some
items clamped in or out", through ``run(call)`` on a :class:`TopKCall`; the problem calls it
twice per solve (loss-augmented, and for the reference).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from aprank import validation
from aprank.inference._base import BatchResult, InferenceResult, QueryProblem, query_fsum
from aprank.inference._registry import as_algorithm, warn_if_slow_call
from aprank.losses import get_loss

__all__ = ["TopKProblem", "TopKCall", "MAX_CORE"]

#: 2^C states are visited; beyond this core size that is not a practical model.
MAX_CORE = 20


class TopKCall:
    """One maximisation for every query: best subset of ``k[q]`` items of ``unary`` (grouped
    by query, offsets ``offsets``) with clamps (1 in, -1 out, 0 free) and the problem's
    interactions. An algorithm's ``run(call)`` fills ``t`` and ``value``."""

    def __init__(self, problem: TopKProblem, unary, clamp, k):
        self.problem = problem
        self.unary, self.clamp, self.k = unary, clamp, k
        self.offsets = problem.offsets
        self.t = np.zeros(unary.shape[0], dtype=np.uint8)
        self.value = np.zeros(k.shape[0])

    @property
    def n_queries(self) -> int:
        return self.k.shape[0]


class TopKProblem(QueryProblem):
    """Items with binary relevance, grouped in queries, and optional pairwise interactions on a
    core: the problem type of the "topk" kind (loss precision@k).

    Parameters
    ----------
    labels : array-like (n,)
        Relevance as bool, {0, 1} or {-1, +1}.
    loss : str or PrecisionAtK
        "precision@k" (break-even: k = number of relevant items per query) or
        ``PrecisionAtK(k)``.
    qid : array-like (n,), optional
        Query of each item (None: one query). With interactions every query must hold the same
        L items in the same order (item i of a query is label i, say). Per-query results are in
        ascending query id order, contiguous or interleaved.
    empty : {"error", "skip"}
        A query without relevant items has no break-even k (as
        :class:`~aprank.inference.QueryProblem`).
    n_samples : int, optional
        Expected number of items (checked against the labels).
    interactions : array-like or sparse matrix (L, L), optional
        F, real and finite (complex values are refused). Non-zero only in the rows and columns
        of ``core``.
    core : array-like of int, optional
        Indices (within a query, 0 <= c < L) of the core items; required with
        ``interactions`` (at most MAX_CORE of them).
    """

    def __init__(self, labels, loss="precision@k", *, qid=None, empty="error", n_samples=None,
                 interactions=None, core=None):
        if get_loss(loss).kind != "topk":
            raise ValueError(f"TopKProblem solves the 'topk' kind, not the loss "
                             f"{get_loss(loss).name!r} of kind {get_loss(loss).kind!r}")
        super().__init__(labels, loss, qid=qid, empty=empty, n_samples=n_samples)
        sizes = np.diff(self.offsets)
        self.z = self._grouped(self.is_pos).astype(np.float64)
        self.k = np.maximum(self.loss.k_of(self.positives), 1)
        too_big = np.flatnonzero(self.used & (self.k > sizes))
        if too_big.size:
            q = int(too_big[0])
            where = "the query" if qid is None else f"query {self.query_ids[q].tolist()!r}"
            raise ValueError(f"k = {int(self.k[q])} exceeds the {int(sizes[q])} items of {where}")
        self._set_interactions(interactions, core, sizes, qid)

    def _set_interactions(self, interactions, core, sizes, qid):
        self.query_size = int(sizes[0]) if np.all(sizes == sizes[0]) else None
        if core is None and interactions is None:
            self.core = np.zeros(0, dtype=np.int64)
            self.interactions = None
            self.W = self.Fcc = np.zeros((0, 0))
            self.in_core = np.zeros(int(sizes.max()), dtype=np.uint8)
            return
        if core is None or interactions is None:
            raise ValueError("interactions and core go together: F is non-zero only in the core's "
                             "rows and columns, so give both (or neither)")
        if self.query_size is None:
            raise ValueError("with interactions every query must hold the same items (equal "
                             f"sizes); the query sizes range from {sizes.min()} to {sizes.max()}")
        L = self.query_size
        core = np.asarray(core)
        if core.ndim != 1 or core.dtype.kind not in "iu":
            raise ValueError(f"core must be a 1-D array of item indices, got {core!r}")
        core = core.astype(np.int64)
        bad = core[(core < 0) | (core >= L)]
        if bad.size:
            raise ValueError(f"core index {int(bad[0])} is out of range: a query has {L} items "
                             f"(0 ... {L - 1})")
        if np.unique(core).size != core.size:
            raise ValueError(f"core indices must be distinct, got {core.tolist()}")
        if core.size > MAX_CORE:
            raise ValueError(f"a core of {core.size} items means 2^{core.size} states; at most "
                             f"{MAX_CORE} are allowed")
        sparse = sp.issparse(interactions)
        given = interactions if sparse else np.asarray(interactions)
        if given.dtype.kind not in "biuf":
            # float64 conversion would drop an imaginary part (with only a warning)
            raise ValueError(f"interactions must be real numbers, got dtype {given.dtype}")
        # a private copy, so later edits by the caller cannot leak in
        F = interactions.tocsr().astype(np.float64, copy=True) if sparse else \
            np.array(interactions, dtype=np.float64)
        if F.shape != (L, L):
            raise ValueError(f"interactions must be an (L, L) array with L = {L} items per query, "
                             f"got shape {F.shape}")
        if not np.isfinite(F.data if sparse else F).all():
            raise ValueError("interactions must be finite")
        in_core = np.zeros(L, dtype=bool)
        in_core[core] = True
        rows, cols = (F.nonzero() if sparse else np.nonzero(F))
        stray = np.flatnonzero(~in_core[rows] & ~in_core[cols])
        if stray.size:
            i, j = int(rows[stray[0]]), int(cols[stray[0]])
            raise ValueError(f"interactions[{i}, {j}] = {float(F[i, j])!r} is non-zero outside "
                             f"the core's rows and columns (core {core.tolist()}): F must be "
                             "zero there")
        self.core, self.interactions = core, F
        if sparse:
            self.W = np.ascontiguousarray(F[core, :].toarray() + F[:, core].T.toarray())
            self.Fcc = np.ascontiguousarray(F[core, :][:, core].toarray())
        else:
            F.setflags(write=False)
            self.W = np.ascontiguousarray(F[core, :] + F[:, core].T)
            self.Fcc = np.ascontiguousarray(F[np.ix_(core, core)])
        self.in_core = np.zeros(L, dtype=np.uint8)
        self.in_core[core] = 1

    # ------------------------------------------------------------------------ structure
    def _grouped(self, values):
        return values if self.order is None else values[self.order]

    def _ungrouped(self, values):
        if self.order is None:
            return values
        out = np.empty_like(values)
        out[self.order] = values
        return out

    def _per_item(self, per_query):
        return np.repeat(per_query, np.diff(self.offsets))

    def reference_clamp(self) -> np.ndarray:
        """Clamps (grouped) whose best subset is the best loss-free one (Mensink et al. 2011, eq.
        8): the non-relevant items out when k <= R, the relevant ones in when k > R."""
        k_le_R = self._per_item(self.k <= self.positives)
        relevant = self.z > 0
        return np.where(k_le_R, np.where(relevant, 0, -1), np.where(relevant, 1, 0)).astype(np.int8)

    # ------------------------------------------------------------------------ solving
    def maximise(self, scores, algorithm=None, clamp=None, k=None, *, infeasible="raise"):
        """The model's prediction without the loss: per query the subset t maximising
        ``t's + t'Ft`` with ``|t| = k``.

        Parameters
        ----------
        scores : array-like (n,)
            One score per item, in input order.
        algorithm : str, Algorithm or None
            A registry algorithm of the kind; None: "cstar".
        clamp : array-like of {-1, 0, 1} (n,), optional
            Items clamped in (1), out (-1) or free (0), in input order.
        k : int or array-like of int, optional
            The subset size per query (an array: one per query in the order of ``query_ids``,
            ascending ids; default: the problem's k).
        infeasible : {"raise", "-inf"}, default "raise"
            What a query the clamps leave without a subset of size k gets: a ValueError, or
            value -inf and no item chosen (what the interactive labelling's probes ask).

        Returns
        -------
        t : ndarray of int8 (n,)
            The subsets, in input order.
        value : ndarray of float64 (n_queries,)
            Their values, in the order of ``query_ids`` (ascending ids).

        Raises
        ------
        ValueError
            With ``infeasible="raise"``, when the clamps leave a query no subset of size k
            (more than k items clamped in, or fewer than k not clamped out), naming the query
            and the counts.
        """
        if infeasible not in ("raise", "-inf"):
            raise ValueError(f'infeasible must be "raise" or "-inf", got {infeasible!r}')
        algo = as_algorithm(self.loss, algorithm)
        s = self._grouped(validation.as_scores(scores))
        self._check_size(s, algo)
        c = np.zeros(s.shape[0], np.int8) if clamp is None else self._grouped(self._as_clamp(clamp))
        kk = self.k if k is None else self._as_k(k)
        if clamp is not None and infeasible == "raise":
            self._check_clamp(c, kk)
        call = TopKCall(self, np.ascontiguousarray(s), np.ascontiguousarray(c), kk)
        warn_if_slow_call(algo, call, stacklevel=3)
        algo.run(call)
        return self._ungrouped(call.t.astype(np.int8)), call.value

    def _check_clamp(self, c, kk):
        """Refuse clamps (grouped) that leave a query no subset of ``kk`` items."""
        starts = self.offsets[:-1]
        n_in = np.add.reduceat((c > 0).astype(np.int64), starts)
        n_out = np.add.reduceat((c < 0).astype(np.int64), starts)
        sizes = np.diff(self.offsets)
        bad = np.flatnonzero((n_in > kk) | (sizes - n_out < kk))
        if bad.size:
            q = int(bad[0])
            where = ("the query" if self.query_ids is None
                     else f"query {self.query_ids[q].tolist()!r}")
            raise ValueError(f"the clamps leave {where} no subset of k = {int(kk[q])} items: "
                             f"{int(n_in[q])} clamped in and {int(n_out[q])} clamped out of its "
                             f"{int(sizes[q])} items")

    def _as_clamp(self, clamp):
        c = np.asarray(clamp)
        if c.shape != (self.n_samples,) or not np.isin(c, (-1, 0, 1)).all():
            raise ValueError(f"clamp must hold -1 (out), 0 (free) or 1 (in) for each of the "
                             f"{self.n_samples} items")
        return c.astype(np.int8)

    def _as_k(self, k):
        kk = np.broadcast_to(np.asarray(k), (self.n_queries,))
        if kk.dtype.kind not in "iu" or (kk < 0).any() or (kk > np.diff(self.offsets)).any():
            raise ValueError(f"k must be integers in 0 ... the query size, got {k!r}")
        return np.ascontiguousarray(kk, dtype=np.int64)

    def _check_size(self, s, algo):
        if s.shape[0] != self.n_samples:
            raise ValueError(f"scores has {s.shape[0]} entries but the problem has "
                             f"{self.n_samples} items")
        # a subset's value sums at most L scores (plus loss terms of at most 1) and the 2 C L
        # non-zero interactions of a core of C items; the kernel's g_i sums again
        F = self.interactions
        entries = () if F is None else F.data if sp.issparse(F) else F
        validation.check_summable("the scores and interactions", (s, 4 * self.max_query_size + 4),
                                  (entries, 8 * len(self.core) * self.max_query_size + 4))
        if algo.max_samples is not None and self.max_query_size > algo.max_samples:
            raise ValueError(f"algorithm {algo.name!r} enumerates every subset and refuses "
                             f"queries of more than {algo.max_samples} items "
                             f"(got {self.max_query_size})")

    def solve(self, scores, algorithm=None) -> BatchResult:
        """Loss-augmented inference for every query (see the module docstring).

        Parameters
        ----------
        scores : array-like (n,)
            One score per item, in input order.
        algorithm : str, Algorithm or None
            A registry algorithm of the kind; None: "cstar".

        Returns
        -------
        BatchResult
            ``coef`` and ``labelling`` hold the most violated subset t*, ``truth_coef`` the
            reference subset; ``ranks`` are 1 for the items of t* and k + 1 for the others.
        """
        return self._solve(validation.as_scores(scores), as_algorithm(self.loss, algorithm))

    def _solve(self, scores: np.ndarray, algo) -> BatchResult:
        """``solve`` for validated scores and a resolved algorithm."""
        s = self._grouped(scores)
        self._check_size(s, algo)
        k_item = self._per_item(self.k).astype(np.float64)
        augmented = TopKCall(self, np.ascontiguousarray(s + (1.0 - self.z) / k_item),
                             np.zeros(s.shape[0], np.int8), self.k)
        # two runs (loss-augmented and reference): one warning for both, before either
        warn_if_slow_call(algo, augmented, repeat=2, stacklevel=4)
        algo.run(augmented)
        reference = TopKCall(self, np.ascontiguousarray(s), self.reference_clamp(), self.k)
        algo.run(reference)
        t = augmented.t.astype(np.float64)
        loss = np.add.reduceat(t * (1.0 - self.z), self.offsets[:-1]) / self.k
        objective = loss + self._difference(augmented.t, reference.t, s)
        used_item = self._per_item(self.used)
        t[~used_item] = 0.0
        ref = np.where(used_item, reference.t, 0).astype(np.float64)
        loss[~self.used] = 0.0
        objective[~self.used] = 0.0
        ranks = np.where(t > 0, 1, self._per_item(self.k) + 1).astype(np.int64)
        t_in = self._ungrouped(t)
        return BatchResult(self._ungrouped(ranks), t_in, self._ungrouped(ref), loss, objective,
                           self.query_ids, self.used, algo.name, t_in.astype(np.int8))

    def _difference(self, t, r, s) -> np.ndarray:
        """Per query f(t) - f(r) for subsets t and r (grouped): the scores of the items in one
        subset only, each once (an item in both cancels exactly, however far its score), plus
        the interactions' difference t'Ft - r'Fr (at the scale of F)."""
        t, r = t.astype(np.float64), r.astype(np.float64)
        out = query_fsum((t - r) * s, self.offsets)
        if self.interactions is not None and self.core.size:
            L = int(self.query_size)
            T, R = t.reshape(-1, L), r.reshape(-1, L)

            def quad(X):
                Xc = X[:, self.core]
                return ((Xc @ self.W) * X).sum(1) - ((Xc @ self.Fcc) * Xc).sum(1)
            out = out + (quad(T) - quad(R))
        return out

    def solve_one(self, scores, algorithm=None) -> InferenceResult:
        """As :meth:`solve` for a problem of one query (what :func:`aprank.infer` returns).

        Parameters
        ----------
        scores : array-like (n,)
            One score per item.
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
        r = self._solve(validation.as_scores(scores), algo)
        return InferenceResult(r.ranks, r.coef, float(r.loss[0]), float(r.objective[0]),
                               r.algorithm, r.labelling)
