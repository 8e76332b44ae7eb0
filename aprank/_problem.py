"""A validated inference problem: inputs in kernel form and the output arrays to fill."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aprank import _validation
from aprank.losses import Loss, get_loss


@dataclass
class Problem:
    """Validated input of one call of loss-augmented inference, over one or more queries.

    Attributes
    ----------
    scores : float64 (n,), possibly a read-only or strided view of the caller's array.
    is_pos : bool (n,)
    order, offsets : query groups (see ``aprank._validation.as_query_groups``).
    loss : the Loss.
    ranks, coef : (n,) outputs, filled by an algorithm.
    labelling : (n,) int8 output for labelling losses (the 0-1 loss), else None.
    query_loss, query_objective : (n_queries,) outputs.
    """

    scores: np.ndarray
    is_pos: np.ndarray
    order: np.ndarray | None
    offsets: np.ndarray
    loss: Loss
    n_pos: int
    ranks: np.ndarray = field(init=False)
    coef: np.ndarray = field(init=False)
    labelling: np.ndarray | None = field(init=False)
    query_loss: np.ndarray = field(init=False)
    query_objective: np.ndarray = field(init=False)

    def __post_init__(self):
        n = self.scores.shape[0]
        self.ranks = np.empty(n, dtype=np.int64)
        self.coef = np.empty(n, dtype=np.float64)
        self.labelling = np.empty(n, dtype=np.int8) if self.loss.labelling else None
        self.query_loss = np.zeros(self.n_queries)
        self.query_objective = np.zeros(self.n_queries)

    @classmethod
    def build(cls, scores, labels, loss, qid=None) -> "Problem":
        loss = get_loss(loss)
        scores = _validation.as_scores(scores)
        is_pos = _validation.as_labels(labels, scores.shape[0])
        order, offsets, _ = _validation.as_query_groups(qid, scores.shape[0])
        n_pos = int(np.count_nonzero(is_pos))
        if loss.needs_positives and n_pos == 0:
            raise ValueError(f"loss {loss.name!r} is undefined without positive samples")
        return cls(scores, is_pos, order, offsets, loss, n_pos)

    @property
    def n_queries(self) -> int:
        return self.offsets.shape[0] - 1

    @property
    def max_query_size(self) -> int:
        return int(np.diff(self.offsets).max())

    def query_indices(self, q: int) -> np.ndarray:
        """Input indices of the samples of query q, in input order."""
        a, b = self.offsets[q], self.offsets[q + 1]
        return np.arange(a, b) if self.order is None else self.order[a:b]
