"""The working-set dual QP with one sum per block (the multi-cut model):

    max b'z - 1/2 z'Kz  s.t.  z >= 0,  sum(z[soft & block == k]) <= C for every block k.

Its primal is 1/2||w||^2 + C sum_k xi_k with xi_k >= b_c - w'g_c over block k's cuts, so a z
whose dual value reaches the primal value of w = G'z (each block's slack exact) is optimal; where
K is positive definite quadprog (with one sum constraint per block) is the reference too.
"""
import numpy as np
import pytest

from aprank.learn._qp import active_set, solve_dual, solve_dual_quadprog


def blocked_working_set(seed, k, d, n_blocks, singular=False, hard_fraction=0.2):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(k, d))
    if singular and k >= 3:
        G[1] = G[0]
        G[2] = 0.5 * G[0] - 2.0 * G[-1]
    b = rng.uniform(0.0, 1.0, k)
    soft = rng.random(k) >= hard_fraction
    feasible = rng.normal(size=d)
    b[~soft] = np.minimum(b[~soft], G[~soft] @ feasible)
    # block labels need not be 0 .. n-1: any values, any order
    block = rng.choice(np.arange(n_blocks) * 7 + 3, size=k)
    C = float(10 ** rng.uniform(-2, 2))
    return G, b, soft, block, C


def certificate(G, b, soft, block, C, z):
    """(relative duality gap, largest hard-row violation) of z, checking feasibility."""
    assert z.min() >= 0.0
    for label in np.unique(block[soft]):
        assert z[soft & (block == label)].sum() <= C * (1 + 1e-12)
    w = G.T @ z
    residual = b - G @ w
    xi = sum(max(0.0, float(residual[soft & (block == label)].max()))
             for label in np.unique(block[soft]))
    hard = float(np.max(residual[~soft], initial=0.0))
    primal = 0.5 * w @ w + C * xi
    dual = float(b @ z - 0.5 * z @ (G @ G.T) @ z)
    return (primal - dual) / max(1.0, abs(primal)), hard


@pytest.mark.parametrize("seed", range(40))
def test_positive_definite_blocks_give_quadprogs_w(seed):
    rng = np.random.default_rng(5000 + seed)
    k = int(rng.integers(1, 25))
    G, b, soft, block, C = blocked_working_set(seed, k, k + int(rng.integers(5, 30)),
                                               n_blocks=int(rng.integers(1, 6)))
    K = G @ G.T
    ref = solve_dual_quadprog(K, b, soft, C, block=block)
    assert ref.ridge == 0.0
    got = solve_dual(K, b, soft, C, block=block)
    w_ref, w = G.T @ ref.z, G.T @ got.z
    assert np.abs(w - w_ref).max() <= 1e-9 * max(np.abs(w_ref).max(), 1e-12)
    assert got.objective == pytest.approx(ref.objective, rel=1e-10, abs=1e-14)
    assert got.ridge == 0.0


@pytest.mark.parametrize("seed", range(60))
def test_singular_blocks_reach_a_zero_duality_gap(seed):
    rng = np.random.default_rng(6000 + seed)
    k = int(rng.integers(3, 40))
    d = int(rng.integers(1, k + 1))
    G, b, soft, block, C = blocked_working_set(seed, k, d, n_blocks=int(rng.integers(1, 8)),
                                               singular=True,
                                               hard_fraction=0.0 if seed % 3 == 0 else 0.2)
    z, _ = active_set(G @ G.T, b, soft, C, block=block)
    gap, hard = certificate(G, b, soft, block, C, z)
    assert gap <= 1e-10 and hard <= 1e-9


@pytest.mark.parametrize("seed", range(20))
def test_block_warm_starts_reach_the_same_w(seed):
    """The multi-cut loop's pattern: the optimum before, a batch of new cuts (one per block) at
    0; and arbitrary starts, made feasible block by block."""
    rng = np.random.default_rng(7000 + seed)
    n_blocks = int(rng.integers(2, 6))
    k = n_blocks * int(rng.integers(2, 6))
    G, b, soft, block, C = blocked_working_set(seed, k, int(rng.integers(2, 40)), n_blocks,
                                               singular=seed % 2 == 0, hard_fraction=0.0)
    K = G @ G.T
    cold, _ = active_set(K, b, soft, C, block=block)
    w = G.T @ cold
    m = k - n_blocks
    before, _ = active_set(K[:m, :m], b[:m], soft[:m], C, block=block[:m])
    for start in (np.r_[before, np.zeros(n_blocks)], rng.normal(size=k), np.full(k, 10.0 * C)):
        z, _ = active_set(K, b, soft, C, z0=start, block=block)
        gap, _ = certificate(G, b, soft, block, C, z)
        assert gap <= 1e-10
        assert np.abs(G.T @ z - w).max() <= 1e-8 * max(np.abs(w).max(), 1.0)


def test_one_block_is_the_one_slack_problem():
    G, b, soft, _, C = blocked_working_set(1, 12, 8, n_blocks=1, hard_fraction=0.3)
    K = G @ G.T
    z1, _ = active_set(K, b, soft, C)
    z2, _ = active_set(K, b, soft, C, block=np.full(12, 4))
    np.testing.assert_array_equal(z1, z2)


def test_separate_blocks_are_separate_problems():
    """Orthogonal blocks do not interact: each block's z is its own one-slack optimum."""
    rng = np.random.default_rng(3)
    G = np.zeros((6, 6))
    G[:3, :3] = rng.normal(size=(3, 3))
    G[3:, 3:] = rng.normal(size=(3, 3))
    b = rng.uniform(0.5, 1.0, 6)
    soft = np.ones(6, dtype=bool)
    block = np.array([0, 0, 0, 1, 1, 1])
    z, _ = active_set(G @ G.T, b, soft, 0.7, block=block)
    for part in (slice(0, 3), slice(3, 6)):
        alone, _ = active_set(G[part] @ G[part].T, b[part], soft[part], 0.7)
        np.testing.assert_allclose(z[part], alone, atol=1e-10)


def test_block_must_match_the_constraints():
    with pytest.raises(ValueError, match="one entry per constraint"):
        active_set(np.eye(2), np.ones(2), np.ones(2, dtype=bool), 1.0, block=np.zeros(3))
