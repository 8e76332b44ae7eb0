"""What a fit builds from its input: a warm start reuses the working set only for the same
problem (the model's fingerprint covers the loss's parameters and the sparsity pattern of X),
and APSVMAppx keeps the hard constraints of sparse input sparse."""
import numpy as np
import pytest
import scipy.sparse as sp

from aprank.learn import APSVM, NDCGSVM, APSVMAppx


@pytest.fixture(scope="module")
def digits_600(digits):
    """The first 600 of the shared digits."""
    X, y = digits
    return X[:600], y[:600]


def test_warm_start_sees_a_changed_ndcg_discount(digits_600):
    """The working set of one loss is not reused for another: two NDCG discounts of the same
    length are different losses, with different fingerprints."""
    X, y = digits_600
    n = X.shape[0]
    steep = 1.0 / np.arange(1, n + 1)
    nearly_flat = 1.0 + 1e-3 * (n - np.arange(1, n + 1)) / n     # almost no loss to optimise
    warm = NDCGSVM(C=10.0, discount=steep, warm_start=True).fit(X, y == 3)
    warm.set_params(discount=nearly_flat).fit(X, y == 3)
    cold = NDCGSVM(C=10.0, discount=nearly_flat).fit(X, y == 3)
    assert warm.converged_ and cold.converged_
    # a stale working set would give a one-iteration "converged" fit with primal 0.76 (cold: 7e-4)
    assert warm.primal_ == pytest.approx(cold.primal_, abs=2 * cold.tol)


def test_warm_start_sees_a_changed_sparsity_pattern(digits_600):
    """Two CSR matrices with the same stored values in other places are different data, with
    different fingerprints."""
    X, y = digits_600
    X1 = sp.csr_matrix(X)
    assert X1[:, 0].nnz == 0                         # the first pixel of every digit is blank
    # the same stored values, each one column to the left
    X2 = sp.csr_matrix((X1.data, X1.indices - 1, X1.indptr), shape=X.shape)
    assert (X1 != X2).nnz
    warm = APSVM(C=10.0, warm_start=True).fit(X1, y == 5)
    warm.fit(X2, y == 5)
    cold = APSVM(C=10.0).fit(X2, y == 5)
    # a stale working set would give primal 3.72 (cold: 3.27), a w off by half its largest entry
    assert warm.primal_ == pytest.approx(cold.primal_, abs=2 * cold.tol)
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=0.05 * np.abs(cold.coef_).max())


def test_appx_keeps_sparse_hard_constraints_sparse(digits_600, monkeypatch):
    """Sparse input gives APSVMAppx sparse hard constraints (dense ones would be n_easy x d
    floats), and the fit of the dense input."""
    import aprank.learn._estimators as estimators

    seen = []
    real = estimators.cutting_plane

    def spy(*args, **kwargs):
        seen.append(kwargs.get("hard"))
        return real(*args, **kwargs)

    monkeypatch.setattr(estimators, "cutting_plane", spy)
    X, y = digits_600
    est = APSVMAppx(C=1.0, keep=0.5).fit(sp.csr_matrix(X), y == 1)
    hard = [h for h in seen if h is not None]
    assert est.easy_.any() and hard
    assert all(sp.issparse(h) for h in hard)
    dense = APSVMAppx(C=1.0, keep=0.5).fit(X, y == 1)
    np.testing.assert_allclose(est.coef_, dense.coef_, atol=1e-8)
