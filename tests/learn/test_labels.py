"""Which class is relevant: bool, {0, 1} and {-1, +1} labels say it; any other labels
(strings, another pair) do not, so a fit on them says which class it ranks as relevant
(RelevantClassWarning) and the metrics ask pos_label=, as scikit-learn's ranking metrics do."""
import warnings

import numpy as np
import pytest

from aprank.learn import APSVM, BinarySVM, RelevantClassWarning
from aprank.metrics import average_precision, precision_at_k


@pytest.fixture(scope="module")
def fifth_relevant():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    hit = X[:, 0] + 0.3 * rng.standard_normal(60) > 0.8       # about a fifth relevant
    return X, hit


@pytest.mark.parametrize("cls", [APSVM, BinarySVM])
def test_string_labels_say_which_class_is_ranked_relevant(cls, fifth_relevant):
    X, hit = fifth_relevant
    with pytest.warns(RelevantClassWarning, match=r"ranks 'miss', the second of the sorted "
                      r"labels \['hit', 'miss'\], as the relevant class"):
        est = cls(C=1.0).fit(X, np.where(hit, "hit", "miss"))
    assert est.classes_.tolist() == ["hit", "miss"]


@pytest.mark.parametrize("labels", [lambda h: h, lambda h: h.astype(int),
                                    lambda h: np.where(h, 1, -1)],
                         ids=["bool", "0/1", "-1/+1"])
def test_the_documented_labels_say_nothing(labels, fifth_relevant):
    X, hit = fifth_relevant
    with warnings.catch_warnings():
        warnings.simplefilter("error", RelevantClassWarning)
        APSVM(C=1.0).fit(X, labels(hit))


def test_another_pair_of_numbers_says_which_too(fifth_relevant):
    X, hit = fifth_relevant
    with pytest.warns(RelevantClassWarning, match=r"ranks 5, the second"):
        APSVM(C=1.0).fit(X, np.where(hit, 2, 5))


@pytest.mark.parametrize("cls", [APSVM, BinarySVM])
def test_a_mask_of_the_relevant_label_is_the_fit_on_0_1(cls, fifth_relevant):
    X, hit = fifth_relevant
    y = np.where(hit, "hit", "miss")
    chosen = cls(C=1.0).fit(X, y == "hit")
    plain = cls(C=1.0).fit(X, hit.astype(int))
    assert np.array_equal(chosen.coef_, plain.coef_)
    assert chosen.score(X, y == "hit") == plain.score(X, hit.astype(int))


@pytest.mark.parametrize("metric", [average_precision,
                                    lambda y, s, **kw: precision_at_k(y, s, 5, **kw)],
                         ids=["average_precision", "precision_at_k"])
def test_metrics_ask_pos_label_for_other_labels(metric, fifth_relevant):
    X, hit = fifth_relevant
    y = np.where(hit, "hit", "miss")
    s = X[:, 0]
    with pytest.raises(ValueError, match=r"pass pos_label= \(the relevant one\)"):
        metric(y, s)
    assert metric(y, s, pos_label="hit") == metric(hit, s)
    assert metric(y, s, pos_label="miss") == metric(~hit, s)
    with pytest.raises(ValueError, match=r"pass pos_label="):
        metric(np.where(hit, 2, 5), s)
    assert metric(np.where(hit, 2, 5), s, pos_label=2) == metric(hit, s)
