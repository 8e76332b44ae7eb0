"""The validated problem of the labelling kind: the ranking kind's queries of scores and binary
labels, solved for the weighted 0-1 loss (Dokania et al. 2014, eq. 7)."""
from __future__ import annotations

from aprank.inference.ranking import RankingProblem

__all__ = ["LabellingProblem"]


class LabellingProblem(RankingProblem):
    """Scores of samples with binary relevance, grouped in queries: the problem type of the
    "labelling" kind (the weighted 0-1 loss of the binary structural SVM).

    The queries, validation and results are those of :class:`RankingProblem`; the results also
    carry the most violated ``labelling`` (int8 per sample), and the ranks report it as a
    two-block ranking (see :class:`aprank.losses.ZeroOne`).

    Parameters
    ----------
    labels : array-like (n,)
        Relevance as bool, {0, 1} or {-1, +1}.
    loss : str or Loss
        "zero-one" or a :class:`aprank.losses.ZeroOne` (with its weight J).
    qid : array-like (n,), optional
        Query of each sample; None: one query.
    empty : {"error", "skip"}
        As for :class:`RankingProblem` (the 0-1 loss needs no positives).
    n_samples : int, optional
        Expected number of samples (checked against the labels).
    """

    def __init__(self, labels, loss="zero-one", *, qid=None, empty="error", n_samples=None):
        super().__init__(labels, loss, qid=qid, empty=empty, n_samples=n_samples)
