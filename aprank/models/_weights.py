"""Sample weights of ``RankingModel``: what a weight means for each kind of loss.

A weight counts copies. Integer weights are the same training set as the data with every
sample (rankers: every query) repeated that many times, and real weights extend this:

* ranking losses (AP, NDCG): exact AP/NDCG inference ranks a query's samples with no
  per-sample weighting, so a weight is a **query weight**: the same for every sample of a
  query (ValueError otherwise). The 1-slack cut is the weighted mean over the used queries,
  g = sum_q w_q g_q / sum_q w_q, and so is Delta; weight 2 is the query entered twice.
* the 0-1 loss (labelling kind): a weight scales the sample's term of the loss and of the
  joint feature, and the query's normaliser J P + N and default J = N / P count weighted
  samples (P = total weight of the positives), so within a query (and without qid) weight 2
  is the sample entered twice. Over several queries, each query's term is weighted by the mean
  weight of its samples, so weights constant within queries are query weights exactly as for
  the ranking losses (weight 2: the query entered twice). The most violated labelling flips a
  sample when its margin is below 1 whatever the weights, so inference runs unweighted and
  only the cut is reweighted.

Weights reaching a model are finite and > 0: a zero weight is an absent sample, which the
estimators drop before building the model.
"""
from __future__ import annotations

import numpy as np

__all__ = ["as_sample_weight", "query_weights", "QueryWeighting", "SampleWeighting", "WEIGHTINGS"]


def as_sample_weight(sample_weight, n: int) -> np.ndarray:
    """A private float copy of ``sample_weight``: 1-D, n entries, finite, every one > 0."""
    sw = np.array(sample_weight, dtype=np.float64)
    if sw.shape != (n,):
        raise ValueError(f"sample_weight must hold one weight per sample ({n}), got shape "
                         f"{sw.shape}")
    bad = np.flatnonzero(~np.isfinite(sw) | (sw <= 0))
    if bad.size:
        raise ValueError(f"sample_weight must be finite and > 0 (drop samples of weight 0): "
                         f"sample_weight[{bad[0]}] = {sw[bad[0]]}")
    sw.setflags(write=False)
    return sw


def query_weights(sample_weight: np.ndarray, order, offsets: np.ndarray,
                  query_ids=None) -> np.ndarray:
    """The weight of each query: the weight its samples share.

    A query whose samples' weights differ is a ValueError naming it.

    Parameters
    ----------
    sample_weight : ndarray of shape (n,)
        One weight per sample.
    order, offsets, query_ids
        The grouping of the samples into queries, as ``aprank.validation.as_query_groups``
        returns it.

    Returns
    -------
    ndarray of shape (n_queries,)
        The weight of each query, in the grouping's order.
    """
    grouped = sample_weight if order is None else sample_weight[order]
    low = np.minimum.reduceat(grouped, offsets[:-1])
    high = np.maximum.reduceat(grouped, offsets[:-1])
    mixed = np.flatnonzero(low != high)
    if mixed.size:
        q = int(mixed[0])
        where = ("the single query (without qid every sample is in one)" if query_ids is None
                 else f"query {query_ids[q:q + 1].tolist()[0]!r}")
        raise ValueError(
            f"sample_weight must be constant within each query: exact AP/NDCG inference has no "
            f"per-sample weights, so a ranking loss weighs whole queries, but {where} mixes "
            f"weights from {low[q]:g} to {high[q]:g}")
    return low


class QueryWeighting:
    """Ranking losses: the cut as the weighted mean over used queries."""

    def __init__(self, problem, sample_weight: np.ndarray):
        weights = query_weights(sample_weight, problem.order, problem.offsets, problem.query_ids)
        self.query_weight = np.where(problem.used, weights, 0.0)
        self.total = float(self.query_weight.sum())
        self.sample_factor = problem.per_sample(self.query_weight / self.total)

    def cut(self, problem, result, scores):
        """(coefficients c with g = X'c, Delta, violation) of the weighted mean."""
        coef = self.sample_factor * (problem.truth_coef - result.coef)
        b = float(self.query_weight @ result.loss) / self.total
        violation = float(self.query_weight @ result.objective) / self.total
        return coef, b, violation


class SampleWeighting:
    """The 0-1 loss: per-sample weights inside each query's normaliser; the queries' mean
    weighted by the mean weight of their samples."""

    def __init__(self, problem, sample_weight: np.ndarray):
        grouped = sample_weight if problem.order is None else sample_weight[problem.order]
        pos = problem.is_pos if problem.order is None else problem.is_pos[problem.order]
        starts = problem.offsets[:-1]
        n_pos = np.add.reduceat(np.where(pos, grouped, 0.0), starts)
        n_neg = np.add.reduceat(np.where(pos, 0.0, grouped), starts)
        v, z = problem.loss.weights(problem.is_pos, problem.per_sample(n_pos),
                                    problem.per_sample(n_neg))
        query_weight = np.where(problem.used, (n_pos + n_neg) / np.diff(problem.offsets), 0.0)
        # each sample's share of its query's loss, times its query's share of the mean
        share = problem.per_sample(query_weight / query_weight.sum())
        self.scale = np.divide(sample_weight * v * share, z, out=np.zeros(z.shape), where=z > 0)
        self.sign = np.where(problem.is_pos, 1.0, -1.0)

    def cut(self, problem, result, scores):
        flipped = result.labelling.astype(bool) != problem.is_pos
        # Psi(Y*) - Psi(Y) is v y*_i x_i / z for a flipped sample and 0 otherwise
        coef = np.where(flipped, self.scale * self.sign, 0.0)
        b = float(self.scale[flipped].sum())
        margin = self.sign * scores
        violation = float((self.scale[flipped] * (1.0 - margin[flipped])).sum())
        return coef, b, violation


#: the weighting of each loss kind RankingModel serves
WEIGHTINGS = {"ranking": QueryWeighting, "labelling": SampleWeighting}
