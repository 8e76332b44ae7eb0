"""A working-set QP whose active set reaches its step limit under the caller's precision (at
large C the releases and blocks cycle on the gradient's roundoff) is solved again with the
roundoff-scaled tolerance alone: a checked optimum, at least as good as quadprog's ridged
proximal steps, which are left for the QPs the active set cannot finish at all."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedKFold

import aprank.learn._qp as qp
import aprank.learn._qp_cy as qp_cy
from aprank.learn import BinarySVM


@pytest.fixture(scope="module")
def cycling_qps():
    """The QPs of a BinarySVM fit on digits at C = 100 on which the active set reaches its
    step limit at the cutting plane's precision."""
    X, digit = load_digits(return_X_y=True)
    y = (digit == 8).astype(int)
    train = next(iter(StratifiedKFold(3).split(X, y)))[0]
    real, found = qp_cy.solve, []

    def spy(K, b, ids, C, z0, limit, precision):
        start = z0.copy()
        out = real(K, b, ids, C, z0, limit, precision)
        if out[0] == qp._LIMIT and precision > 0.0:
            found.append((K.copy(), b.copy(), ids.copy(), C, start, precision))
        return out
    qp_cy.solve = spy
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            BinarySVM(C=100).fit(X[train], y[train])
    finally:
        qp_cy.solve = real
    return found[:3]


def test_a_step_limit_is_solved_by_the_active_set(cycling_qps):
    if not cycling_qps:
        pytest.skip("no QP of this fit reaches the step limit on this machine")
    for K, b, ids, C, z0, precision in cycling_qps:
        soft = ids >= 0                  # ids: each constraint's block (the multi-cut's parts)
        solution = qp.solve_dual(K, b, soft, C, z0=z0, precision=precision, block=ids)
        assert solution.ridge == 0.0 and solution.steps > 0           # the active set's
        z = solution.z
        assert z.min() >= 0.0
        assert all(z[ids == g].sum() <= C * (1 + 1e-12) for g in np.unique(ids[soft]))
        fallback = qp.solve_dual_quadprog(K, b, soft, C, precision=precision, block=ids)
        assert solution.objective >= fallback.objective - 1e-9 * max(1.0, abs(fallback.objective))
