"""``infer`` on small float64 queries (the case its lean path once took: now there is
one path, through the problem) returns what a problem built by hand returns, bit for bit, and
refuses and warns as it does."""
import warnings

import numpy as np
import pytest

import aprank
from aprank.inference import RankingProblem
from aprank.inference._registry import SlowAlgorithmWarning


def full(scores, labels, loss, algorithm):
    return RankingProblem(labels, loss).solve_one(scores, algorithm)


@pytest.mark.parametrize("loss, algorithm", [("ap", None), ("ap", "select"), ("ap", "auto"),
                                             ("ndcg", None), ("ndcg", "ndcg-greedy"),
                                             ("ap", "yue"), ("ndcg", "auto")])
def test_lean_equals_full(loss, algorithm):
    rng = np.random.default_rng(3)
    name = algorithm or "qs"
    for trial in range(200):
        n = int(rng.integers(1, 60))
        labels = rng.random(n) < rng.uniform(0.05, 0.9)
        labels[rng.integers(n)] = True
        scores = np.round(rng.standard_normal(2 * n), int(rng.integers(0, 3)))
        scores = scores[::2] if trial % 3 == 0 else scores[:n]      # strided views too
        given = [labels, labels.astype(np.int64), np.where(labels, 1, -1)][trial % 3]
        got = aprank.infer(scores, given, loss=loss, algorithm=algorithm)
        want = full(scores, labels, loss, name)
        assert got.algorithm == want.algorithm == name
        assert got.ranks.tobytes() == want.ranks.tobytes()
        assert got.coef.tobytes() == want.coef.tobytes()
        assert (got.loss, got.objective, got.labelling) == (want.loss, want.objective, None)


def test_lean_refuses_as_the_full_path():
    labels = np.array([True, False, False])
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match=r"scores\[1\] = .* is not finite"):
            aprank.infer(np.array([0.0, bad, 1.0]), labels)
    with pytest.raises(ValueError, match="without positive samples"):
        aprank.infer(np.zeros(3), np.zeros(3, bool))
    with pytest.raises(ValueError, match="labels has 2 entries but there are 3 scores"):
        aprank.infer(np.zeros(3), np.array([True, False]))
    with pytest.raises(ValueError, match=r"labels\[1\] = .*2.*: labels must be"):
        aprank.infer(np.zeros(3), np.array([1, 2, 0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # extreme but finite scores: no overflow warning
        r = aprank.infer(np.array([1e308, -1e308, 1e308]), labels)
    assert r.objective == full(np.array([1e308, -1e308, 1e308]), labels, "ap", "qs").objective


class Warned(Exception):
    pass


def test_lean_warns_slow_at_the_callers_line():
    """The warning comes before the kernel, at the caller's line; shown as an exception here so
    that the slow kernel never runs."""
    scores, labels = np.zeros(80_000), np.zeros(80_000, bool)
    labels[:40_000] = True

    def stop(message, category, filename, lineno, *rest):
        raise Warned(category, filename)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = stop
        aprank.infer(scores[:2], labels[:2], algorithm="yue")       # small: no warning
        with pytest.raises(Warned) as caught:
            aprank.infer(scores, labels, algorithm="yue")
    assert caught.value.args == (SlowAlgorithmWarning, __file__)
