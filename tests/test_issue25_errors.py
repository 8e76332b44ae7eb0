"""Issue 25, items 8 and 9: errors that name the problem, and choices listed in context."""
import warnings

import numpy as np
import pytest

import aprank
from aprank.learn import HOAPSVM, HOBSVM


def _pairs_data(seed=0, n=30, d=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (np.arange(n) % 3 == 0).astype(int)
    groups = np.repeat(np.arange(n // 3), 3)
    return X, y, groups


# ------------------------------------------------------------------------------ item 8
def test_item8_hoapsvm_huge_features():
    X, y, groups = _pairs_data()
    for estimator in (HOAPSVM(), HOBSVM()):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # no overflow on the way
            with pytest.raises(ValueError, match="rescale X"):
                estimator.fit(X * 1e300, y, groups=groups)


def test_item8_cstar_unknown_kernel():
    from aprank.learn import CStarPrecisionAtK
    X = np.random.default_rng(0).standard_normal((12, 3))
    Y = (np.arange(36).reshape(12, 3) % 2 == 0).astype(int)
    with pytest.raises(ValueError, match="kernel.*'rbf'"):
        CStarPrecisionAtK(kernel="nope", n_core=1).fit(X, Y)
