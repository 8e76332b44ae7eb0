"""A solver written from the docs' example ("Writing a solver", docs/learning.md) trains every
model kind the tests have, to the built-in solver's objective within tol.

The example's class is taken from the page's code block itself, so the test runs what the docs
show. Each convex problem (ranking AP and NDCG over queries, AP with hard constraints, the 0-1
labelling, a completion of latent AP, of the latent structural SVM and of HOAP-SVM, HOB-SVM
with its upper bounds, and the c-star precision@k bound) is solved by the example and by OCAS;
both stop at a gap of at most tol over a lower bound of the same minimum, so their objectives
are within tol of each other. The estimators take the registered name as any solver's.
"""
import re
from pathlib import Path

import numpy as np
import pytest

from aprank.inference import group_pairs
from aprank.learn import (
    APSVM,
    HOAPSVM,
    HOBSVM,
    NDCGSVM,
    APSVMAppx,
    BinarySVM,
    LatentAPSVM,
    LatentSSVM,
    cutting_plane,
    register_solver,
    unregister_solver,
)
from aprank.models import (
    Constraint,
    CStarModel,
    HOAPModel,
    HOBModel,
    LatentRankingModel,
    RankingModel,
    StructuredModel,
    digest,
    pair_features,
)
from aprank_support.synthetic import grouped, mil

LEARNING = Path(__file__).resolve().parents[2] / "docs" / "learning.md"
NAME = "damped-from-the-docs"
C, TOL = 10.0, 1e-4


def docs_solver_class():
    """The class ``DampedCuttingPlane`` defined by its own code block of docs/learning.md."""
    blocks = re.findall(r"^```python[ \t]*\n(.*?)^```", LEARNING.read_text(), re.S | re.M)
    block, = [b for b in blocks if "class DampedCuttingPlane" in b]
    namespace: dict = {}
    exec(compile(block, "docs/learning.md (Writing a solver)", "exec"), namespace)
    return namespace["DampedCuttingPlane"]


@pytest.fixture(scope="module")
def damped():
    """The docs' solver registered as it is there (hard constraints and upper bounds)."""
    register_solver(NAME, docs_solver_class(), hard=True, upper=True)
    yield NAME
    unregister_solver(NAME)


class CStarRisk(StructuredModel):
    """The c-star model's loss bound as a structured model over theta = (W, v, F).

    Per sample the bound of ``CStarModel.bound`` is max_t [Delta(t) + f(t)] - f(t_ref) with
    f(t) = t'(W x + v) + t'F t, linear in theta for each t: the most violated subsets give the
    cut g = -(mean gradient), b = the mean loss, with b - theta'g the mean bound."""

    def __init__(self, X, Y, core):
        self.X, self.Y = X, Y
        self.cstar = CStarModel(Y, "bep", core)
        self.L, self.d = Y.shape[1], X.shape[1]

    @property
    def size_joint_feature(self):
        return self.L * self.d + self.L + self.L * self.L

    def most_violated(self, theta):
        L, d, n = self.L, self.d, self.X.shape[0]
        W, v = theta[:L * d].reshape(L, d), theta[L * d:L * d + L]
        F = theta[L * d + L:].reshape(L, L)
        bound = self.cstar.bound(self.X @ W.T + v, F)
        G = bound.grad_scores * bound.used[:, None]
        grad = np.concatenate([(G.T @ self.X).ravel(), G.sum(0), bound.grad_interactions.ravel()])
        g = -grad / n
        b = float(bound.loss[bound.used].sum()) / n
        return Constraint(g, b, b - float(theta @ g))

    def fingerprint(self):
        return digest(self.X, self.Y)


def _cstar():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 4))
    Y = (X @ rng.standard_normal((4, 6)) + rng.standard_normal((40, 6))) > 0.5
    Y[:, 0] |= ~Y.any(1)           # every sample has a relevant label and an irrelevant one
    Y[:, 5] &= ~Y.all(1)
    model = CStarRisk(X, Y, core=[0, 1])
    # the adapter's cut is the bound: its violation is the mean bound at any theta
    theta = rng.standard_normal(model.size_joint_feature)
    S = X @ theta[:24].reshape(6, 4).T + theta[24:30]
    mean_bound = model.cstar.bound(S, theta[30:].reshape(6, 6)).bound.mean()
    assert model.most_violated(theta).violation == pytest.approx(mean_bound, rel=1e-12)
    return model, {}


def _ranking(loss):
    X, y, groups = grouped(n_groups=16, size=8, d=5, seed=2)
    return RankingModel(np.c_[X, np.ones(len(y))], y == 1, loss, qid=groups % 4,
                        algorithm="qs"), {}


def _zero_one():
    X, y, groups = grouped(n_groups=16, size=8, d=5, seed=3)
    return RankingModel(np.c_[X, np.ones(len(y))], y == 1, "zero-one", qid=groups % 4,
                        algorithm="zero-one"), {}


def _ap_with_hard_constraints():
    # APSVMAppx's problem: AP over the difficult samples, y_i w'x_i >= 1 for the easy ones
    X, y, _ = grouped(n_groups=20, size=6, d=4, seed=5)
    X = np.c_[X, np.ones(len(y))]
    signs = np.where(y == 1, 1.0, -1.0)
    easy = signs * (X @ np.r_[np.ones(4), -2.0]) > 3.0
    model = RankingModel(X[~easy], y[~easy] == 1, "ap", algorithm="qs")
    hard = X[easy] * signs[easy, None]
    # they bind: the optimum without them breaks one
    assert (hard @ cutting_plane(model, C, tol=TOL).w).min() < 1 - 0.5
    return model, {"hard": hard}


def _latent(loss):
    X, y, bags, _ = mil(seed=1)
    model = LatentRankingModel(np.c_[X, np.ones(len(y))], y, bags, None, loss)
    w = np.random.default_rng(0).standard_normal(model.size_joint_feature)
    return model.latent(w), {}


def _hob():
    X, y, groups = grouped(n_groups=10, seed=6)
    edges = group_pairs(groups)
    model = HOBModel(np.c_[X, np.ones(len(y))], y == 1, edges, pair_features(X, edges))
    return model, {"upper": model.upper}


def _hoap():
    X, y, groups = grouped(n_groups=10, seed=7)
    edges = group_pairs(groups)
    model = HOAPModel(np.c_[X, np.ones(len(y))], y, edges, pair_features(X, edges), 1.0)
    w = np.minimum(np.random.default_rng(1).standard_normal(model.size_joint_feature),
                   model.upper)
    return model.latent(w), {"upper": model.upper}


PROBLEMS = {"ranking AP": lambda: _ranking("ap"), "ranking NDCG": lambda: _ranking("ndcg"),
            "AP with hard constraints": _ap_with_hard_constraints,
            "0-1 labelling": _zero_one, "latent AP": lambda: _latent("latent-ap"),
            "latent SSVM": lambda: _latent("latent-ssvm"), "pairwise HOB": _hob,
            "pairwise HOAP": _hoap, "c-star precision@k": _cstar}


@pytest.mark.parametrize("kind", list(PROBLEMS))
def test_the_docs_solver_reaches_the_built_in_objective(damped, kind):
    model, constraints = PROBLEMS[kind]()
    ref = cutting_plane(model, C, tol=TOL, solver="ocas", **constraints)
    got = cutting_plane(model, C, tol=TOL, solver=damped, **constraints)
    assert ref.converged and got.converged
    assert got.gap <= TOL and abs(got.primal - ref.primal) <= TOL
    # the objective is the true one at the w returned, and that w keeps the constraints
    cut = model.most_violated(got.w)
    assert got.primal == pytest.approx(0.5 * got.w @ got.w + C * max(cut.violation, 0.0))
    if "hard" in constraints:
        assert (constraints["hard"] @ got.w).min() >= 1 - TOL
    if "upper" in constraints:
        assert np.all(got.w <= constraints["upper"] + 1e-9)


def _estimator_data(kind):
    """(X, y, fit parameters) of the estimators of a kind."""
    if kind == "latent":
        X, y, bags, _ = mil(seed=2)
        return X, y, {"bags": bags}
    if kind == "pairwise":
        X, y, groups = grouped(n_groups=10, seed=9)
        return X, y, {"groups": groups}
    X, y, groups = grouped(n_groups=16, size=8, seed=8)
    return X, y, {"qid": groups % 4}


#: (estimator, its data, whether its problem is convex: one minimum the solvers share)
ESTIMATORS = [(APSVM, "ranking", True), (NDCGSVM, "ranking", True),
              (BinarySVM, "ranking", True), (APSVMAppx, "ranking", False),
              (HOBSVM, "pairwise", True), (HOAPSVM, "pairwise", False),
              (LatentAPSVM, "latent", False), (LatentSSVM, "latent", False)]


@pytest.mark.parametrize("cls,data,convex", ESTIMATORS,
                         ids=[cls.__name__ for cls, _, _ in ESTIMATORS])
def test_every_estimator_takes_the_registered_name(damped, cls, data, convex):
    """The estimators check ``solver`` against the registry when they fit: a name registered
    after import is taken, and a convex fit reaches the default solver's objective (APSVMAppx's
    first stage and CCCP's imputations may part where solvers differ within tol)."""
    X, y, fit_params = _estimator_data(data)
    got = cls(C=1.0, tol=TOL, solver=damped).fit(X, y, **fit_params)
    assert got.converged_ and got.solver == damped
    if convex:
        ref = cls(C=1.0, tol=TOL).fit(X, y, **fit_params)
        assert abs(got.primal_ - ref.primal_) <= TOL
