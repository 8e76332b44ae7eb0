"""Structured models whose data lives on a Dask cluster (``aprank.models.StructuredModel``).

The cutting plane (``aprank.learn.cutting_plane``) runs unchanged on the client; each
``most_violated(w)`` ships w to the blocks and sums what they return:

* :class:`QueriesModel` -- many queries, each whole in one block: per block an
  ``aprank.models.RankingModel`` built once on its worker (labels, query groups, ground truth),
  one ``infer_batch``-style solve and one X'c per iteration. Also the 0-1 loss over one query,
  which separates over samples (each block weighs its part by its share of J P + N).
* :class:`GiantQueryModel` -- one query (AP or NDCG) over all blocks: exact split inference
  (``aprank.dask.infer``'s rounds), the negatives never move; the positives' rows (P x d) are
  kept on the client.

Psi and Delta are means over the queries used, as on one machine, so both give the single-
machine cut up to the order of floating-point sums.
"""
from __future__ import annotations

import time

import dask
import numpy as np
from dask.base import tokenize
from dask.sizeof import sizeof

from aprank.dask._data import Block, DaskData, Survey, dask_inputs, persist_inputs
from aprank.dask._split import gather_positives, settle, split_part, tally
from aprank.dask._steps import negative_coef, split_outcome
from aprank.losses import RankingLoss, ZeroOne, get_loss
from aprank.models import Constraint, RankingModel, StructuredModel

__all__ = ["QueriesModel", "GiantQueryModel", "ranking_model", "model_of", "empty_queries"]


def _design(block: Block, intercept):
    """The block's X, with the constant bias column appended when ``intercept`` is a value."""
    if intercept is None:
        return block.X
    return np.hstack([block.X, np.full((block.X.shape[0], 1), float(intercept))])


@sizeof.register(RankingModel)
def _sizeof_model(model: RankingModel) -> int:
    # its design matrix and the arrays of its problem (see _data's sizeof of a Block)
    arrays = [model.X] + [a for a in vars(model.problem).values() if isinstance(a, np.ndarray)]
    return sum(sizeof(a) for a in arrays)


def _block_model(block: Block, positive, loss, algorithm, empty, intercept):
    """A block's RankingModel, or None when it has no sample or (under empty="skip") no query
    that can be used."""
    is_pos = block.y == positive
    if block.X.shape[0] == 0 or (empty == "skip" and loss.needs_positives and not is_pos.any()):
        return None
    return RankingModel(_design(block, intercept), is_pos, loss, qid=block.qid,
                        algorithm=algorithm, empty=empty)


def _block_counts(model):
    if model is None:
        return 0, 0, 0, 0
    p = model.problem
    return int(p.used.sum()), p.n_pos, p.n_samples - p.n_pos, model.n_samples_used


def _block_cut(model: RankingModel, w):
    if model is None:
        return None
    scores = model.scores(w)
    t0 = time.perf_counter()
    result = model.problem.solve(scores, model.algorithm)
    seconds = time.perf_counter() - t0
    used = model.problem.used
    g = np.asarray(model.X.T @ (model.problem.truth_coef - result.coef)).ravel()
    return (g, float(result.loss[used].sum()), float(result.objective[used].sum()),
            int(np.count_nonzero(result.ranks == model.problem.last_rank)), seconds)


class QueriesModel(StructuredModel):
    """Queries kept whole within blocks (``qid`` given), or the 0-1 loss over one query.

    Parameters
    ----------
    data : DaskData (``aprank.dask``'s persisted blocks).
    positive : the label of relevant samples.
    loss, algorithm, empty : as ``aprank.models.RankingModel``.
    one_query : the samples form one query (no qid); only for the 0-1 loss, whose J = N / P is
        then taken over all blocks.
    intercept : value of an appended constant column (the bias of BinarySVM), or None.
    """

    def __init__(self, data: DaskData, positive, loss="ap", *, algorithm="qs", empty="error",
                 one_query=False, intercept=None):
        loss = get_loss(loss)
        self.dim = data.n_features + (intercept is not None)
        self.key = tokenize(data.token, positive, loss.identity(), algorithm, empty, intercept)
        if one_query:
            if not isinstance(loss, ZeroOne):
                raise ValueError("one query over many blocks is the 0-1 loss's case; AP and "
                                 "NDCG use GiantQueryModel")
            P, N = _label_counts(data, positive)
            J = N / P if loss.J is None else loss.J
            if loss.J is None and P == 0:
                raise ValueError(f"loss {loss.name!r} is undefined without positive samples, "
                                 f"and there are none")
            loss = ZeroOne(J)
        models = [dask.delayed(_block_model)(b, positive, loss, algorithm, empty, intercept)
                  for b in data.blocks]
        self.models = list(dask.persist(*models))
        counts = np.array(dask.compute(*[dask.delayed(_block_counts)(m) for m in self.models]),
                          dtype=float).reshape(-1, 4)
        #: the samples of the queries used (``aprank.models.RankingModel.n_samples_used``)
        self.n_samples_used = float(counts[:, 3].sum())
        if one_query:
            # block b's 0-1 sums are normalised by J P_b + N_b; the query's by J P + N
            z = loss.J * counts[:, 1] + counts[:, 2]
            self.weights = z / z.sum()
            self.n_used = 1.0
        else:
            self.weights = np.ones(len(self.models))
            self.n_used = counts[:, 0].sum()
            if self.n_used == 0:
                raise ValueError(f"loss {loss.name!r} is undefined without positive samples, "
                                 f"and no query has any")

    @property
    def size_joint_feature(self) -> int:
        return self.dim

    def most_violated(self, w: np.ndarray) -> Constraint:
        got = dask.compute(*[dask.delayed(_block_cut)(m, w) for m in self.models])
        g = np.zeros(self.dim)
        b = violation = seconds = 0.0
        n_last_rank = 0
        for weight, part in zip(self.weights, got):
            if part is None:
                continue
            g += weight * part[0]
            b += weight * part[1]
            violation += weight * part[2]
            n_last_rank += part[3]
            seconds += part[4]
        return Constraint(g / self.n_used, b / self.n_used, violation / self.n_used, seconds,
                          info={"n_last_rank": n_last_rank})

    def fingerprint(self) -> str:
        return self.key


def _label_counts(data: DaskData, positive):
    got = dask.compute(*[dask.delayed(_count_labels)(b, positive) for b in data.blocks])
    return tuple(int(v) for v in np.sum(got, axis=0))


def _count_labels(block: Block, positive):
    p = int(np.count_nonzero(block.y == positive))
    return p, block.y.shape[0] - p


def _scored_part(block: Block, positive, w):
    return split_part(np.asarray(block.X @ w), block.y == positive,
                      int(block.rows[0]) if block.rows.size else 0)


def _positive_rows(block: Block, positive):
    is_pos = block.y == positive
    return block.X[is_pos], block.rows[is_pos]


def _giant_cut(block: Block, part, anchors, loss, P: int, N: int, centre: float,
               truth_neg: float):
    t = tally(part, anchors, P, centre)
    c = np.zeros(block.X.shape[0])
    c[part.local] = truth_neg - negative_coef(loss, t.ranks, P, N)
    return t.count, t.pairs, np.asarray(block.X.T @ c).ravel()


class GiantQueryModel(StructuredModel):
    """One query (AP or NDCG) over every block, solved by exact split inference.

    The blocks must hold consecutive rows in input order (no regrouping), which is what
    ``aprank.dask`` makes of inputs without qid. ``samples``: pivots per open range and round.
    No bias: it would cancel in a ranking loss's joint feature.
    """

    def __init__(self, data: DaskData, positive, loss="ap", *, samples=64):
        loss = get_loss(loss)
        if loss.kind != "ranking" or not isinstance(loss, RankingLoss):
            raise ValueError(f"GiantQueryModel serves ranking losses (AP, NDCG), not {loss.name!r}")
        self.loss = loss
        self.loss.kernel_spec(data.n_samples)   # a user NDCG discount must cover the query
        if data.grouped:
            raise ValueError("GiantQueryModel needs the blocks in input order (no qid)")
        self.blocks, self.positive, self.samples = data.blocks, positive, int(samples)
        self.dim = data.n_features
        self.key = tokenize(data.token, positive, self.loss.identity(), "giant")
        got = dask.compute(*[dask.delayed(_positive_rows)(b, positive) for b in self.blocks])
        self.pos_X = np.concatenate([g[0] for g in got]).reshape(-1, self.dim)
        self.pos_rows = np.concatenate([g[1] for g in got])     # ascending: blocks in order
        self.P = self.pos_rows.shape[0]
        self.N = data.n_samples - self.P
        if self.P == 0:
            raise ValueError(f"loss {self.loss.name!r} is undefined without positive samples, "
                             f"and the query has none")
        truth = self.loss.truth_coef(np.array([True, False]), np.full(2, self.P),
                                     np.full(2, self.N))
        self.truth_pos, self.truth_neg = float(truth[0]), float(truth[1])

    @property
    def size_joint_feature(self) -> int:
        return self.dim

    def most_violated(self, w: np.ndarray) -> Constraint:
        if self.N == 0:     # nothing can be inverted
            return Constraint(np.zeros(self.dim), 0.0, 0.0)
        t0 = time.perf_counter()
        parts = list(dask.persist(*[dask.delayed(_scored_part)(b, self.positive, w)
                                    for b in self.blocks]))
        pos_s, pos_x = gather_positives(parts)
        anchors, parts = settle(parts, pos_s, self.N, self.loss, self.samples)
        centre = float(pos_s[self.P // 2])
        got = dask.compute(*[dask.delayed(_giant_cut)(b, p, anchors, self.loss, self.P, self.N,
                                                      centre, self.truth_neg)
                             for b, p in zip(self.blocks, parts)])
        count = np.sum([c for c, _, _ in got], axis=0)
        _, pos_coef, value, objective = split_outcome(
            self.loss, pos_s, count, sum(p for _, p, _ in got), self.N)
        rows = np.searchsorted(self.pos_rows, pos_x)
        g = (np.sum([g for _, _, g in got], axis=0)
             + self.pos_X[rows].T @ (self.truth_pos - pos_coef))
        return Constraint(g, value, objective, time.perf_counter() - t0,
                          info={"n_last_rank": int(count[self.P + 1]),
                                "split_rounds": anchors.rounds})

    def fingerprint(self) -> str:
        return self.key


def empty_queries(survey: Survey, loss, empty: str) -> int:
    """The number of queries without a relevant sample (the larger label), which a fit leaves
    out under ``empty="skip"``; decided on the client from the survey, before anything is
    persisted, so that refusing them is one ValueError here and not a traceback per worker.

    ValueError under ``empty="error"`` when there is such a query, and whatever ``empty``
    when every query is one. 0 without qid (one query) or for a loss that needs no positive.
    """
    loss = get_loss(loss)
    if survey.query_ids is None or not loss.needs_positives:
        return 0
    lacking = survey.lacking()
    n_queries = survey.query_ids.shape[0]
    if lacking.shape[0] == n_queries:
        raise ValueError(f"loss {loss.name!r} is undefined without positive samples, and no "
                         f"query has any")
    if lacking.shape[0] and empty == "error":
        raise ValueError(f"loss {loss.name!r} is undefined without positive samples, and query "
                         f"{lacking[:1].tolist()[0]!r} has none ({lacking.shape[0]} of "
                         f"{n_queries} queries have none); pass empty='skip' to leave such "
                         f"queries out")
    return int(lacking.shape[0])


def model_of(data: DaskData, positive, loss, *, one_query: bool, algorithm="qs", empty="error",
             intercept=None, samples=64) -> StructuredModel:
    """The model of persisted ``data``: one giant query (AP, NDCG without qid) by split
    inference, else queries whole within blocks (or the 0-1 loss over one query)."""
    loss = get_loss(loss)
    if one_query and loss.kind == "ranking":
        return GiantQueryModel(data, positive, loss, samples=samples)
    return QueriesModel(data, positive, loss, algorithm=algorithm, empty=empty,
                        one_query=one_query, intercept=intercept)


def ranking_model(X, y, loss="ap", *, qid=None, algorithm="qs", empty="error",
                  samples=64) -> StructuredModel:
    """The structured model the Dask estimators train, built on data spread over a cluster.

    What :class:`aprank.models.RankingModel` is on one machine: each
    ``most_violated(w)`` ships w to the persisted blocks and sums their part of the cut
    (scores, exact loss-augmented inference, X'c). For timing one iteration of a fit, or for a
    cutting plane of one's own (:func:`aprank.learn.cutting_plane`).

    Parameters
    ----------
    X : dask array of shape (n, d), or dask DataFrame
        Dense features (NumPy input is one partition). No bias column is added.
    y : dask array or Series of shape (n,)
        Labels of exactly two classes; the larger one is relevant (the estimators'
        ``classes_[1]``).
    loss : str or Loss, default="ap"
        A ranking loss (AP, NDCG) or the 0-1 loss.
    qid : dask array or Series of shape (n,), optional
        Query of each sample; queries are kept whole within blocks (regrouped once by Dask's
        shuffle when they straddle partitions). Without it the samples form one query: AP and
        NDCG are solved by exact split inference over the blocks.
    algorithm : str, default="qs"
        Registry algorithm of each block's inference (with ``qid``, or for the 0-1 loss).
    empty : {"error", "skip"}, default="error"
        Queries without a relevant sample (see :func:`aprank.infer_batch`); decided on the
        client before anything is persisted.
    samples : int, default=64
        Pivots per open range and round of the split inference (one giant query).

    Returns
    -------
    StructuredModel
        Its ``most_violated(w)`` returns the cut as an :class:`aprank.models.Constraint`; for
        one giant query its ``info`` holds the number of ``"split_rounds"``.
    """
    inputs = dask_inputs(X, y, qid)
    classes = inputs.survey.classes
    if classes.shape[0] != 2:
        raise ValueError(f"y must hold exactly 2 classes (relevant and not); got "
                         f"{classes.shape[0]}: {classes.tolist()}")
    empty_queries(inputs.survey, loss, empty)
    return model_of(persist_inputs(inputs), classes[1], loss, one_query=qid is None,
                    algorithm=algorithm, empty=empty, samples=samples)
