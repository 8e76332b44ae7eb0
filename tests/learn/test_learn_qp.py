"""The cutting-plane learners against an independent solve of the full QP.

On problems of at most 8 samples every ranking (or labelling) can be listed, so the structured
SVM is an ordinary QP in (w, xi) with one constraint per ranking. It is solved here in the
primal with quadprog, with joint features and losses written from the definitions in
tests/aprank_support/oracle.py, sharing nothing with aprank's cutting plane, dual QP or inference.
"""
from itertools import permutations

import numpy as np
import pytest
import quadprog

from aprank.learn import APSVM, NDCGSVM, BinarySVM
from aprank_support.oracle import discount, ranking_loss, zero_one_weights


def all_ranking_constraints(X, y, kind):
    """Rows (g_R, Delta_R) for every permutation R, g_R = Psi(R*) - Psi(R) (Mohapatra et al. 2018,
    eq. 1)."""
    P, N = int(y.sum()), int((~y).sum())
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    perms = np.array(list(permutations(range(len(y)))))
    place = np.argsort(perms, axis=1)                      # place[m, sample] = position
    R = np.where(place[:, pos][:, :, None] < place[:, neg][:, None, :], 1.0, -1.0)
    diff = X[pos][:, None, :] - X[neg][None, :, :]         # psi(x) - psi(y) per pair
    psi = np.einsum("mpn,pnd->md", R, diff) / (P * N)
    psi_star = diff.sum(axis=(0, 1)) / (P * N)
    loss = ranking_loss(kind, np.sort(place[:, pos], axis=1) + 1.0, P)
    table = np.unique(np.round(np.c_[psi_star - psi, loss], 12), axis=0)
    return table[:, :-1], table[:, -1]


def all_labelling_constraints(X, y):
    """Rows (g_Y, Delta_Y) for every labelling Y of the weighted 0-1 loss (bias column appended)."""
    Xb = np.hstack([X, np.ones((len(y), 1))])
    v, z = zero_one_weights(y)
    truth = np.where(y, 1.0, -1.0)
    Y = np.where(((np.arange(2 ** len(y))[:, None] >> np.arange(len(y))) & 1).astype(bool),
                 -truth, truth)
    g = ((truth - Y) * v) @ Xb / (2 * z)
    loss = ((Y != truth) * v).sum(axis=1) / z
    return g, loss


def full_qp(G, b, C):
    """min 1/2||w||^2 + C xi  s.t.  G w + xi >= b, xi >= 0, solved in the primal."""
    d = G.shape[1]
    H = np.eye(d + 1)
    H[d, d] = 1e-12            # quadprog needs a positive definite matrix; xi has no square term
    a = np.r_[np.zeros(d), -C]
    A = np.vstack([np.hstack([G, np.ones((len(b), 1))]), np.r_[np.zeros(d), 1.0]]).T
    x = quadprog.solve_qp(H, a, A, np.r_[b, 0.0], 0)[0]
    w, xi = x[:d], x[d]
    xi = max(0.0, float(np.max(b - G @ w)))   # exact slack of that w
    return w, 0.5 * w @ w + C * xi


def small_problem(seed, n=8, d=3):
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=bool)
    y[rng.choice(n, int(rng.integers(2, 5)), replace=False)] = True
    X = rng.normal(size=(n, d)) + 0.8 * y[:, None] * rng.normal(size=d)
    return X, y


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("C", [0.3, 5.0])
@pytest.mark.parametrize("estimator,kind", [(APSVM, "ap"), (NDCGSVM, "ndcg")])
def test_rank_svm_matches_the_full_qp(estimator, kind, C, seed):
    X, y = small_problem(seed)
    G, b = all_ranking_constraints(X, y, kind)
    w, primal = full_qp(G, b, C)
    est = estimator(C=C, tol=1e-9, max_iter=500).fit(X, y)
    assert est.converged_
    np.testing.assert_allclose(est.coef_, w, atol=1e-6 * max(1.0, np.abs(w).max()))
    assert est.primal_ == pytest.approx(primal, abs=1e-6)
    assert est.dual_ <= est.primal_ + 1e-12 and est.gap_ <= 1e-9


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("C", [0.3, 5.0])
def test_binary_svm_matches_the_full_qp(C, seed):
    X, y = small_problem(seed)
    G, b = all_labelling_constraints(X, y)
    w, primal = full_qp(G, b, C)
    # the full QP's C is the structural one; BinarySVM's is per sample
    est = BinarySVM(C=C / X.shape[0], tol=1e-9, max_iter=500).fit(X, y)
    assert est.converged_
    np.testing.assert_allclose(np.r_[est.coef_, est.intercept_], w,
                               atol=1e-6 * max(1.0, np.abs(w).max()))
    assert est.primal_ == pytest.approx(primal, abs=1e-6)


def test_oracle_discount_is_the_papers():
    assert discount(1) == 1.0 and discount(3) == pytest.approx(0.5)
