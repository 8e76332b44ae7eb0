"""The two ranking tasks of ``python -m experiments torch-peers`` (needs ``aprank[torch]``).

* HJA birdsong segments: each of the 13 species ranks the segments (one output column per
  species); every labelled segment belongs to exactly one species, which is what lets the
  metric-learning losses use the species as a class label.
* The Yahoo LTR sample: each query ranks its documents (one output, one ranking per query,
  positive if the graded relevance is at least 2, the first threshold of ``experiment yahoo``).

Both present a minibatch to a loss the same way (:meth:`flat`): the scores flattened into
rankings with one group id per ranking, so the ranking losses need no case per task.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from aprank.datasets import load_hja_birdsong, load_yahoo_ltr, recording_split
from aprank.metrics import average_precision

__all__ = ["Task", "ColumnsTask", "QueriesTask", "hja_task", "yahoo_task", "TASKS"]


@dataclass
class Task:
    """A training set, a test set and how a minibatch is ranked.

    Attributes
    ----------
    name, description : str
        The table's name for the data set and the sentence saying what it is.
    X, X_test : torch.Tensor of shape (n, d), float32
        Standardised on the training rows.
    Y, Y_test : ndarray of shape (n, L), bool
        The relevance of each sample to each of the L outputs.
    classes : ndarray of shape (n,), int64, or None
        The one class of each training sample where the task is single-label, else None.
    """

    name: str
    description: str
    X: torch.Tensor
    Y: np.ndarray
    X_test: torch.Tensor
    Y_test: np.ndarray
    classes: np.ndarray | None

    @property
    def n_outputs(self) -> int:
        return self.Y.shape[1]

    @property
    def n_train(self) -> int:
        return self.Y.shape[0]

    @property
    def n_keys(self) -> int:
        """How many distinct (ranking, sample) pairs :meth:`flat` can name."""
        return self.n_train * self.n_outputs


class ColumnsTask(Task):
    """One ranking per output column over the minibatch (multi-label)."""

    def batches(self, rng, size: int) -> list:
        """Random minibatches of about ``size`` rows, every row once per epoch."""
        return np.array_split(rng.permutation(self.n_train), max(1, self.n_train // size))

    def flat(self, out: torch.Tensor, idx: np.ndarray):
        """(scores, labels, group, key) of shape (b * L,): column after column, the group is
        the column and the key names the (column, training row) pair in [0, n_keys)."""
        b, L = out.shape
        scores = out.t().reshape(-1)
        labels = torch.from_numpy(np.ascontiguousarray(self.Y[idx].T).reshape(-1))
        group = torch.arange(L).repeat_interleave(b)
        key = (group * self.n_train + torch.from_numpy(np.tile(idx, L))).long()
        return scores, labels, group, key

    def evaluate(self, scores: np.ndarray) -> float:
        """Mean over the columns of the test AP."""
        return float(np.mean([average_precision(self.Y_test[:, c], scores[:, c])
                              for c in range(self.n_outputs)]))


@dataclass
class QueriesTask(Task):
    """One ranking per query over its documents in the minibatch (one output)."""

    qid: np.ndarray = None
    qid_test: np.ndarray = None

    def batches(self, rng, size: int) -> list:
        """Whole queries, shuffled, grouped until a batch holds about ``size`` documents."""
        ids = rng.permutation(np.unique(self.qid))
        per_query = max(1, round(len(ids) * size / self.n_train))
        rows = {q: np.flatnonzero(self.qid == q) for q in ids}
        return [np.concatenate([rows[q] for q in ids[i:i + per_query]])
                for i in range(0, len(ids), per_query)]

    def flat(self, out: torch.Tensor, idx: np.ndarray):
        """(scores, labels, group, key): the group is the query, the key the training row."""
        return (out[:, 0], torch.from_numpy(self.Y[idx, 0]), torch.from_numpy(self.qid[idx]),
                torch.from_numpy(idx).long())

    def evaluate(self, scores: np.ndarray) -> float:
        """Mean over the test queries that have a positive of the query's AP."""
        return float(average_precision(self.Y_test[:, 0], scores[:, 0], qid=self.qid_test,
                                       empty="skip"))


def _standardise(train: np.ndarray, test: np.ndarray):
    mean, std = train.mean(0), train.std(0) + 1e-12
    return (torch.tensor((train - mean) / std, dtype=torch.float32),
            torch.tensor((test - mean) / std, dtype=torch.float32))


def hja_task() -> ColumnsTask:
    """HJA birdsong segments split by recording (seed 0), one column per species."""
    data = load_hja_birdsong()
    train, test = recording_split(data.recording, test_fraction=0.3, seed=0)
    X, X_test = _standardise(data.X[train], data.X[test])
    Y = data.species[:, None] == np.arange(1, len(data.class_names) + 1)
    return ColumnsTask(
        name="HJA birdsong",
        description=(f"{int(train.sum())} / {int(test.sum())} labelled segments (train / test, "
                     f"split by recording, seed 0), 38 features, {Y.shape[1]} species, one "
                     "ranking of the segments per species; test mAP is the mean over species "
                     "of the test AP"),
        X=X, Y=Y[train], X_test=X_test, Y_test=Y[test],
        classes=data.species[train] - 1)


def yahoo_task(threshold: int = 2) -> QueriesTask:
    """The Yahoo LTR sample's own train / test split, positive if relevance >= threshold."""
    train, test = load_yahoo_ltr("train"), load_yahoo_ltr("test")
    X, X_test = _standardise(train.X.toarray(), test.X.toarray())
    return QueriesTask(
        name="Yahoo LTR",
        description=(f"{train.X.shape[0]} / {test.X.shape[0]} documents in {train.n_queries} / "
                     f"{test.n_queries} queries (the sample's own train / test split), 300 "
                     f"features, positive if relevance >= {threshold}, one ranking per query; "
                     "test mAP is the mean over the test queries that have a positive of the "
                     "query's AP"),
        X=X, Y=(train.relevance >= threshold)[:, None], X_test=X_test,
        Y_test=(test.relevance >= threshold)[:, None], classes=None,
        qid=train.qid, qid_test=test.qid)


#: The data sets, in the table's order.
TASKS = {"HJA birdsong": hja_task, "Yahoo LTR": yahoo_task}
