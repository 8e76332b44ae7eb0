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
    used : (n_queries,) bool; False for queries left out under ``empty="skip"``.
    query_ids : (n_queries,) the query ids (None for a single query given without qid).
    """

    scores: np.ndarray
    is_pos: np.ndarray
    order: np.ndarray | None
    offsets: np.ndarray
    loss: Loss
    n_pos: int
    used: np.ndarray
    query_ids: np.ndarray | None = None
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
    def build(cls, scores, labels, loss, qid=None, empty="error") -> "Problem":
        """Validate the inputs. ``empty`` says what a query without positives does under a loss
        that needs them: "error" (ValueError naming it) or "skip" (left out: zero loss,
        objective and coefficients, ``used`` False)."""
        loss = get_loss(loss)
        if empty not in ("error", "skip"):
            raise ValueError(f"empty={empty!r} must be 'error' or 'skip'")
        scores = _validation.as_scores(scores)
        is_pos = _validation.as_labels(labels, scores.shape[0])
        order, offsets, ids = _validation.as_query_groups(qid, scores.shape[0])
        n_pos = int(np.count_nonzero(is_pos))
        used = np.ones(offsets.shape[0] - 1, dtype=bool)
        if loss.needs_positives:
            if qid is not None:
                used = _positives_per_query(is_pos, order, offsets) > 0
            else:
                used[:] = n_pos > 0
            if not used.all() and (empty == "error" or not used.any()):
                where = "any sample" if qid is None else (
                    f"query {ids[np.argmin(used)].tolist()!r}" + ("" if empty == "error" else " or any other"))
                raise ValueError(f"loss {loss.name!r} is undefined without positive samples, "
                                 f"and {where} has none" +
                                 ("; pass empty='skip' to leave such queries out"
                                  if qid is not None and empty == "error" else ""))
        return cls(scores, is_pos, order, offsets, loss, n_pos, used, ids)

    @property
    def n_queries(self) -> int:
        return self.offsets.shape[0] - 1

    @property
    def max_query_size(self) -> int:
        return int(np.diff(self.offsets).max())

    def per_sample(self, values: np.ndarray) -> np.ndarray:
        """Spread one value per query to the query's samples (in input order)."""
        out = np.empty(self.scores.shape[0], dtype=np.asarray(values).dtype)
        spread = np.repeat(values, np.diff(self.offsets))
        if self.order is None:
            out[:] = spread
        else:
            out[self.order] = spread
        return out

    def positives_per_query(self) -> np.ndarray:
        return _positives_per_query(self.is_pos, self.order, self.offsets)

    def truth_coef(self) -> np.ndarray:
        """Coefficients of Psi(X, R*) for every sample, query by query (0 in skipped queries)."""
        n_pos = self.positives_per_query()
        n_all = np.diff(self.offsets)
        coef = self.loss.truth_coef(self.is_pos, self.per_sample(n_pos),
                                    self.per_sample(n_all - n_pos))
        coef[~self.per_sample(self.used)] = 0.0
        return coef

    def clear_unused(self) -> None:
        """Zero the outputs of skipped queries: ground-truth ranks, no loss, no constraint."""
        if self.used.all():
            return
        skipped = ~self.per_sample(self.used)
        self.ranks[skipped] = 1
        self.coef[skipped] = 0.0
        if self.labelling is not None:
            self.labelling[skipped] = self.is_pos[skipped]
        self.query_loss[~self.used] = 0.0
        self.query_objective[~self.used] = 0.0

    def query_indices(self, q: int) -> np.ndarray:
        """Input indices of the samples of query q, in input order."""
        a, b = self.offsets[q], self.offsets[q + 1]
        return np.arange(a, b) if self.order is None else self.order[a:b]


def _positives_per_query(is_pos, order, offsets) -> np.ndarray:
    grouped = is_pos if order is None else is_pos[order]
    return np.add.reduceat(grouped.astype(np.int64), offsets[:-1])
