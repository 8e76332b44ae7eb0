"""The multi-cut parts of a cut on a dense X (``_block_sums_cy.block_dense_sums``) equal the
product of the sparse block-by-sample matrix with X bit for bit: the same terms added in the
same order, whatever their magnitudes."""
import numpy as np
import scipy.sparse as sp

from aprank.models._block_sums_cy import block_dense_sums


def test_block_sums_equal_the_sparse_product_bit_for_bit():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n, d, k = int(rng.integers(1, 400)), int(rng.integers(1, 70)), int(rng.integers(1, 9))
        X = rng.standard_normal((n, d)) * np.exp(rng.uniform(-20, 20, (n, 1)))
        coef = rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))
        coef[rng.random(n) < 0.4] = 0.0
        block = (np.arange(n) % k).astype(np.int64)
        rows = np.flatnonzero(coef).astype(np.int64)
        S = sp.csr_matrix((coef[rows], (block[rows], rows)), shape=(k, n))
        G = np.zeros((k, d))
        block_dense_sums(X, rows, block, coef, G)
        assert np.array_equal(G, np.asarray(S @ X))
