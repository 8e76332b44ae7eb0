"""The data sets of the nonlinear experiment and their splits.

Four sources, 27 rows: scikit-learn's handwritten digits (1,797 images, each digit against the
rest: 10 rows), HJA birdsong segments (4,998 labelled segments, each species against the rest:
13 rows), the Corel image sets fox, tiger and elephant of Andrews et al. (2002) at instance level
(each instance labelled with its bag's label: 3 rows) and the Yahoo learning-to-rank sample
(train and test files pooled, 251 queries, graded relevance, relevant where at least 2: 1 row).
"""
from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import GroupKFold, GroupShuffleSplit

from aprank.datasets import load_hja_birdsong, load_mil, load_yahoo_ltr
from experiments.nonlinear_protocol import Task

__all__ = ["load_tasks", "outer_split", "inner_folds", "TEST_FRACTION", "INNER_FOLDS"]

TEST_FRACTION = 0.3
INNER_FOLDS = 3
#: Every row keeps at least this many positives on each side of an outer split.
MIN_POSITIVES = 2


def _digits() -> Task:
    X, digit = load_digits(return_X_y=True)
    Y = (digit[:, None] == np.arange(10)).astype(np.int64)
    return Task("digits", X.astype(np.float64), Y, tuple(f"digit {k}" for k in range(10)),
                groups=np.arange(len(digit)))


def _birds() -> Task:
    data = load_hja_birdsong()
    Y = (data.species[:, None] == np.arange(1, data.n_classes + 1)).astype(np.int64)
    return Task("HJA birdsong", data.X, Y, tuple(n.split(" - ")[0] for n in data.class_names),
                groups=np.asarray(data.recording))


def _corel(name: str) -> Task:
    data = load_mil(name)
    return Task(name, data.X, (data.y > 0).astype(np.int64)[:, None], (name,),
                groups=np.asarray(data.bags))


def _yahoo() -> Task:
    train, test = load_yahoo_ltr("train"), load_yahoo_ltr("test")
    qid = np.concatenate([train.qid, test.qid + train.qid.max() + 1])
    X = np.vstack([train.X.toarray(), test.X.toarray()])
    rel = np.concatenate([train.relevance, test.relevance]).astype(np.int64)[:, None]
    return Task("Yahoo LTR", X, rel, ("Yahoo LTR",), groups=qid, qid=qid, positive_level=2)


#: Loaders by data set, in the tables' order.
LOADERS = {"digits": _digits, "HJA birdsong": _birds, "fox": lambda: _corel("fox"),
           "tiger": lambda: _corel("tiger"), "elephant": lambda: _corel("elephant"),
           "Yahoo LTR": _yahoo}


def load_tasks(names=None) -> list[Task]:
    """The experiment's data sets (all of :data:`LOADERS`, or those named)."""
    return [LOADERS[name]() for name in (names or LOADERS)]


def _positives(task: Task, idx) -> np.ndarray:
    """Per row: the positives (labels at or above the task's level) among ``idx``."""
    return (task.Y[idx] >= task.positive_level).sum(axis=0)


def outer_split(task: Task, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Train and test indices of ``seed``'s split: 30 % of the groups for testing, the first
    shuffle (from ``seed``) that leaves every row MIN_POSITIVES positives on both sides."""
    for attempt in range(1000):
        splitter = GroupShuffleSplit(n_splits=1, test_size=TEST_FRACTION,
                                     random_state=1000 * seed + attempt)
        train, test = next(splitter.split(task.X, groups=task.groups))
        if min(_positives(task, train).min(), _positives(task, test).min()) >= MIN_POSITIVES:
            return train, test
    raise RuntimeError(f"{task.name}: no split leaves every row {MIN_POSITIVES} positives")


def inner_folds(task: Task, train: np.ndarray, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """INNER_FOLDS folds of the training indices by group (positions into ``train``)."""
    folds = GroupKFold(n_splits=INNER_FOLDS, shuffle=True, random_state=seed)
    return list(folds.split(train, groups=task.groups[train]))
