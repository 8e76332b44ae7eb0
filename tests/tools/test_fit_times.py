"""The fit-time tool (``python -m benchmarks --fit``): it fits what the estimators fit, and its
LinearSVC problem is BinarySVM's."""
import numpy as np
import pytest

from aprank.learn import APSVM, NDCGSVM, BinarySVM
from aprank.models import RankingModel
from benchmarks import fit_times


@pytest.fixture(scope="module")
def task():
    _, X, y, _ = fit_times.digits_tasks()[0]
    return X[:400], y[:400]


@pytest.mark.parametrize("method,cls", [("APSVM", APSVM), ("BinarySVM", BinarySVM),
                                        ("NDCGSVM", NDCGSVM)])
def test_the_tool_fits_the_estimators_w(task, method, cls):
    X, y = task
    # the table's C is the structural one: BinarySVM's C is per sample, C / n
    C = 10.0 / X.shape[0] if method == "BinarySVM" else 10.0
    row = fit_times.structured_fit(method, X, y, None,
                                   C * X.shape[0] if method == "BinarySVM" else C)
    est = cls(C=C, tol=fit_times.TOL, empty="skip").fit(X, y)
    w = np.r_[est.coef_, est.intercept_] if method == "BinarySVM" else est.coef_
    np.testing.assert_array_equal(np.asarray(row["w"]), w)
    assert row["n_iter"] == est.n_iter_ and row["converged"] == est.converged_
    parts = sum(row[p] for p in ("products", "qp", "inference", "other"))
    assert row["seconds"] == pytest.approx(parts)
    assert min(row[p] for p in ("products", "qp", "inference")) >= 0


@pytest.mark.parametrize("with_qid", [False, True])
def test_liblinear_weights_give_binary_svms_slack(task, with_qid):
    """For any w, the 0-1 loss's exact slack (the most violated labelling's violation) is the
    weighted hinge sum that LinearSVC minimises with these sample weights."""
    X, y = task
    qid = np.repeat(np.arange(8), 50) if with_qid else None
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])
    model = RankingModel(Xb, y, "zero-one", qid=qid, algorithm="zero-one", empty="skip")
    s = fit_times.liblinear_weights(y, qid)
    rng = np.random.default_rng(0)
    for _ in range(5):
        w = rng.normal(scale=0.3, size=Xb.shape[1])
        hinge = np.maximum(0.0, 1.0 - np.where(y, 1.0, -1.0) * (Xb @ w))
        assert model.most_violated(w).violation == pytest.approx(s @ hinge, rel=1e-12)


def test_mnist_like_is_mnist_sized():
    X, digit = fit_times.mnist_like(n=50)
    assert X.shape == (50, 784) and X.min() >= 0.0 and X.max() <= 1.0
    assert set(np.unique(digit)) <= set(range(10))


def test_tables_from_rows():
    def row(method, seconds, C=1.0, w=(1.0, 2.0), ridge=0.0):
        return {"data": "digits", "task": "digit 3", "C": C, "method": method,
                "seconds": seconds, "products": seconds / 4, "qp": seconds / 4,
                "inference": seconds / 4, "other": seconds / 4, "converged": True, "n_iter": 10,
                "w": list(w), "primal": 1.0, "ridge": ridge}
    after = [row("APSVM", 0.002), row("BinarySVM", 0.004), row("LinearSVC", 0.001, w=(1.0, 2.2))]
    before = [row("APSVM", 0.008), row("BinarySVM", 0.004)]
    table = fit_times.format_table(after, before)
    assert ("| digits (1) | 1 | APSVM | 8.0 | 2.0 / 2.0 / 2.0 / 2.0 | 2.0 "
            "| 0.5 / 0.5 / 0.5 / 0.5 | 4.0 x | 10 -> 10 | yes |") in table
    assert "w differs by 1.0e-01" in table      # relative to BinarySVM's largest weight
    assert "| digits | 1 | 0.50 | 4.00 |" in fit_times.format_targets(after)
    # the iterations target counts only cells at C >= 100 with the plain loop's fits beside
    plain = {"seconds": 1.0, "n_iter": 400, "converged": False, "primal": 1.0}
    at_100 = [{**row("APSVM", 0.2, C=100.0), "plain": plain},
              {**row("BinarySVM", 0.1, C=100.0), "n_iter": 20, "plain": {**plain, "n_iter": 100,
                                                                           "converged": True}},
              row("LinearSVC", 0.1, C=100.0, w=(1.0, 2.2))]
    targets = fit_times.format_targets(after + at_100)
    assert ("the plain loop's / theirs is 22.50 in the median cell (from 5.00 to 40.00, 2 cells; "
            "in 1 of them the plain loop stopped") in targets
    assert "iterations at C >= 100" not in fit_times.format_targets(after)
    equality = fit_times.format_equality([row("APSVM", 1, w=(1.0, 2.0 + 1e-8))],
                                         [row("APSVM", 1, ridge=1e-6)])
    assert "| quadprog with ridged proximal steps | 1 | 5.0e-09 | 1 |" in equality


def test_the_table_shows_the_plain_cutting_planes_fits_beside_the_default(task):
    # measure(plain=True) fits each problem with both solvers; the plain one's time,
    # iterations and convergence get columns of their own (blank for LinearSVC)
    X, y = task
    default = fit_times.structured_fit("APSVM", X, y, None, 1e3)
    plain = fit_times.structured_fit("APSVM", X, y, None, 1e3, solver="cutting-plane")
    assert plain["n_iter"] > default["n_iter"]            # the default needs fewer
    assert abs(plain["primal"] - default["primal"]) <= fit_times.TOL
    row = {"data": "digits", "task": "digit 3", "C": 1e3, "method": "APSVM", **default,
           "plain": {k: plain[k] for k in ("seconds", "n_iter", "converged", "primal")}}
    table = fit_times.format_table([row])
    assert "plain CP: iterations" in table.splitlines()[0]
    assert table.splitlines()[2].endswith(
        f"| {default['n_iter']} | yes | {1e3 * plain['seconds']:.1f} | {plain['n_iter']} | "
        f"{'yes' if plain['converged'] else 'NO'} |")


def test_the_split_cuts_are_timed_with_the_rest(task):
    """Under multi-cut with queries every cut comes from the model's risk split: its calls are
    timed as most_violated's are, so products and cut (the timed calls less inference) are
    never negative."""
    X, y = task
    row = fit_times.structured_fit("APSVM", X, y, np.repeat(np.arange(8), 50), 100.0,
                                   solver="multi-cut")
    assert row["converged"] and row["inference"] > 0 and row["products"] >= 0
