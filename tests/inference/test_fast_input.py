"""``infer``'s fast path for the common input (float64 C-contiguous scores, bool or int8
labels; compiled for queries of at most ONE_MAX samples) returns what the general path
returns, bit for bit, and refuses every input the general path refuses, with the same error."""
import warnings

import numpy as np
import pytest

import aprank
import aprank.inference.ranking._driver_cy as _driver_cy
from aprank.inference._registry import get
from aprank.inference.ranking._problem import RankingProblem
from aprank.losses import get_loss

ONE_MAX = _driver_cy.ONE_MAX


def _general(scores, labels, loss="ap", algorithm=None):
    """The general path: the problem built, then solved (what infer does for other inputs)."""
    return RankingProblem(labels, loss).solve_one(np.asarray(scores).tolist(), algorithm)


def _same(a, b):
    for field in ("ranks", "coef", "loss", "objective", "algorithm"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


@pytest.mark.parametrize("n", [1, 2, 20, ONE_MAX - 1, ONE_MAX, ONE_MAX + 1, 700])
@pytest.mark.parametrize("loss,algorithm", [("ap", None), ("ap", "yue"), ("ap", "search"),
                                            ("ap", "select"), ("ap", "auto"), ("ndcg", None),
                                            ("ndcg", "ndcg-greedy"), ("zero-one", None)])
def test_fast_path_matches_the_general_path(n, loss, algorithm):
    rng = np.random.default_rng(n)
    for ties in (None, 1, 0):
        scores = rng.standard_normal(n) + 0.5
        if ties is not None:
            scores = np.round(scores, ties)
        labels = rng.random(n) < 0.3
        labels[n // 2] = True
        reference = _general(scores, labels, loss, algorithm)
        for given in (labels, labels.astype(np.int8), np.where(labels, 1, -1).astype(np.int8)):
            _same(aprank.infer(scores, given, loss=loss, algorithm=algorithm), reference)


def test_the_compiled_route_is_taken(monkeypatch):
    calls = []
    real = _driver_cy.rank_one
    monkeypatch.setattr(_driver_cy, "rank_one", lambda *a: calls.append(1) or real(*a))
    scores = np.array([0.3, -1.0, 2.0, 0.1])
    labels = np.array([True, False, False, True])
    aprank.infer(scores, labels)          # the first call of these sizes checks the cost
    aprank.infer(scores, labels)
    aprank.infer(scores, labels.astype(np.int8))
    assert len(calls) >= 2


def _error(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except (ValueError, TypeError) as e:
            return type(e), str(e)
    return None


#: (scores, labels) the general path refuses, each in the form the fast path takes
BAD = {
    "NaN score": (np.array([0.1, np.nan, 0.3]), np.array([True, False, True])),
    "infinite score": (np.array([0.1, -np.inf, 0.3]), np.array([True, False, False])),
    "no positive": (np.array([0.1, 0.2, 0.3]), np.array([False, False, False])),
    "no positive (int8)": (np.array([0.1, 0.2, 0.3]), np.array([0, -1, -1], dtype=np.int8)),
    "label 2": (np.array([0.1, 0.2, 0.3]), np.array([1, 2, 0], dtype=np.int8)),
    "label -2": (np.array([0.1, 0.2, 0.3]), np.array([1, -2, 0], dtype=np.int8)),
    "0 and -1 mixed": (np.array([0.1, 0.2, 0.3]), np.array([1, 0, -1], dtype=np.int8)),
    "lengths differ": (np.array([0.1, 0.2, 0.3]), np.array([True, False])),
    "lengths differ (int8)": (np.array([0.1, 0.2]), np.array([1, 0, 1], dtype=np.int8)),
    "2-D labels": (np.array([0.1, 0.2]), np.array([[True, False]])),
    "empty": (np.array([], dtype=float), np.array([], dtype=bool)),
    "objective overflows": (np.array([1.7e308, -1.7e308, 1e-300, 0.0]),
                            np.array([False, True, False, True])),
    "NaN beyond ONE_MAX": (np.r_[np.zeros(ONE_MAX), np.nan], np.r_[True, np.zeros(ONE_MAX,
                                                                               dtype=bool)]),
    "label 3 beyond ONE_MAX": (np.zeros(ONE_MAX + 2),
                               np.r_[1, 3, np.zeros(ONE_MAX, dtype=int)].astype(np.int8)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_refused_by_both_paths(case):
    scores, labels = BAD[case]
    # the compiled route serves sizes whose cost check is known quiet: a valid call of these
    # sizes first, where the labels allow one
    _error(lambda: aprank.infer(np.zeros(scores.shape), labels))
    fast = _error(lambda: aprank.infer(scores, labels))
    general = _error(lambda: aprank.infer(scores.tolist(), labels.tolist()))
    assert general is not None, case
    assert fast == general, case
    # the problem type's fast path itself: the same error, or no result (the general path's)
    out = []
    error = _error(lambda: out.append(RankingProblem.solve_common(
        scores, labels, get_loss("ap"), get("qs", "ranking"))))
    assert error == general or (error is None and out == [None])


def test_other_inputs_take_the_general_path():
    """float32 scores, strided arrays, lists and int64 labels give the same result."""
    rng = np.random.default_rng(3)
    scores = rng.standard_normal(50)
    labels = rng.random(50) < 0.3
    labels[0] = True
    reference = aprank.infer(scores, labels)
    wide = np.empty(100)
    wide[::2] = scores
    for s, y in ((wide[::2], labels), (scores.tolist(), labels), (scores, labels.astype(int)),
                 (scores, labels.tolist())):
        _same(aprank.infer(s, y), reference)


def test_caller_arrays_untouched():
    scores = np.array([0.5, -0.2, 0.1, 0.9])
    labels = np.array([1, -1, -1, 1], dtype=np.int8)
    s0, y0 = scores.copy(), labels.copy()
    scores.flags.writeable = False
    aprank.infer(scores, labels)
    assert np.array_equal(scores, s0) and np.array_equal(labels, y0)


def test_slow_call_warning_kept(monkeypatch):
    """Only quiet sizes are remembered: a call whose estimate draws the warning draws it
    every time, through the fast path too."""
    import aprank.inference._registry as registry
    import aprank.inference.ranking._problem as problem

    monkeypatch.setattr(problem, "_QUIET", set())
    monkeypatch.setattr(registry, "SLOW_CALL_SECONDS", 0.0)
    scores = np.array([0.3, -1.0, 2.0, 0.1])
    labels = np.array([True, False, False, True])
    for _ in range(3):
        with pytest.warns(aprank.inference.SlowAlgorithmWarning):
            aprank.infer(scores, labels)
