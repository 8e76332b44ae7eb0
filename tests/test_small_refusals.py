"""Refusals and messages that say what is wrong and what to do: a bool grid, empty="skip"
with nothing left, sample weights a boosted ranker's score does not take, max-marginals of
nothing, a frame's column that is not numeric."""
import numpy as np
import pytest

import aprank
from aprank.inference import max_marginals
from aprank.learn import APSVM, APSVMCV, BinarySVMCV
from aprank.sklearn_compat import InvalidParameterError


@pytest.mark.parametrize("cls", [APSVMCV, BinarySVMCV])
def test_a_bool_grid_is_refused_as_bool_c_is(cls):
    X, y = np.random.default_rng(0).standard_normal((8, 2)), np.array([0, 1] * 4)
    with pytest.raises(InvalidParameterError, match=r"'Cs' .*\(not a bool\)"):
        cls(Cs=True).fit(X, y)


def test_empty_skip_with_no_query_left_says_so():
    with pytest.raises(ValueError, match=r"none of the 2 queries has one \(empty='skip' "
                       r"leaves such queries out, which leaves none\)"):
        aprank.infer_batch(np.zeros(4), np.zeros(4), qid=[0, 0, 1, 1], empty="skip")


def test_max_marginals_of_nothing_says_it_labels():
    with pytest.raises(ValueError, match="max_marginals labels at least one sample"):
        max_marginals([])


def test_a_frame_column_that_is_not_numeric_is_named():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"x": [0.1, 0.5, 0.2, 0.9], "name": ["a", "b", "c", "d"]})
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"X's column 'name' \(dtype .*\) is not numeric"):
        APSVM().fit(X, y)
    est = APSVM().fit(X[["x"]].assign(z=1.0), y)
    with pytest.raises(ValueError, match=r"X's column 'z' .* is not numeric"):
        est.decision_function(pd.DataFrame({"x": [0.1], "z": ["q"]}))


@pytest.mark.extras
def test_a_boosted_rankers_score_refuses_sample_weight_saying_why():
    pytest.importorskip("lightgbm")
    from aprank.boost import APBoostRanker
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 2)), np.array([0, 1] * 10)
    est = APBoostRanker(n_estimators=2).fit(X, y)
    with pytest.raises(TypeError, match=r"APBoostRanker.score\(\) got an unexpected keyword "
                       r"argument 'sample_weight'; its metric weighs every query alike"):
        est.score(X, y, sample_weight=np.ones(20))
