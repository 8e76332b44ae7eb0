"""The dense cut of small components (_smallcut.hpp, components of at most 64
samples in "graphcut") against the kind's brute-force oracle (ties, zero pairs, repeated pairs,
pair scales up to 1e300) and against the general dynamic cuts on components of up to 64."""
import numpy as np
import pytest

import aprank.checks
from aprank.inference import PairwiseProblem, max_marginals
from aprank.inference.pairwise import _maxflow_cy


def _close(got, ref, tol, where):
    assert abs(got.value - ref.value) <= tol, where
    np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol, err_msg=where)
    np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol, err_msg=where)


def _reaches(got, s, edges, c, tol, where):
    """The labelling and every flipped labelling score what is reported."""
    y = got.labelling.astype(bool)

    def score(z):
        return float(s[z].sum() + c[z[edges[:, 0]] != z[edges[:, 1]]].sum())

    assert abs(score(y) - got.value) <= tol, where
    flips = got.flips.tocsr()
    for i in range(y.size):
        z = y.copy()
        z[flips[i].indices] ^= True
        assert z[i] != y[i], where
        expected = got.m_minus[i] if y[i] else got.m_plus[i]
        assert abs(score(z) - expected) <= tol, f"{where}, sample {i}"


@pytest.mark.parametrize("augmented", [True, False])
def test_dense_cuts_equal_brute_on_tiny_graphs(augmented):
    """300 random graphs of the cross-checks (cliques, chains, random pairs; zero pair scores,
    ties), every component cut densely (no enumeration)."""
    for trial in range(300):
        inst = aprank.checks.random_instance("pairwise", seed=11, trial=trial, max_n=12)
        problem = PairwiseProblem(inst.labels, edges=inst.edges, edge_scores=inst.edge_scores)
        ref = problem.solve(inst.scores, algorithm="brute", augmented=augmented)
        unary = inst.scores + (problem.loss_unary if augmented else 0.0)
        got = max_marginals(unary, edge_scores=inst.edge_scores, graph=problem.graph,
                            enumerate_up_to=0, flips=True)
        const = problem.loss_constant if augmented else 0.0
        tol = 1e-9 * max(1.0, float(np.abs(ref.m_plus).max()), float(np.abs(ref.m_minus).max()))
        where = f"trial {trial} ({inst.description})"
        assert abs(got.value + const - ref.value) <= tol, where
        np.testing.assert_allclose(got.m_plus + const, ref.m_plus, rtol=0, atol=tol, err_msg=where)
        np.testing.assert_allclose(got.m_minus + const, ref.m_minus, rtol=0, atol=tol,
                                   err_msg=where)
        _reaches(got, unary, problem.graph.edges, inst.edge_scores, tol, where)


@pytest.mark.parametrize("top", [14, 40, 300])
def test_dense_cuts_are_exact_at_extreme_pair_scales(top):
    """Pair scores up to 10^top times the unary ones (mixed in one graph, some zero, some
    pairs listed twice) on random graphs of up to 14 samples, against brute."""
    rng = np.random.default_rng([24, 3, top])
    for trial in range(80):
        n = int(rng.integers(2, 15))
        a, b = np.triu_indices(n, 1)
        keep = rng.random(a.size) < 0.35
        chain = np.column_stack([np.arange(n - 1), np.arange(1, n)])
        edges = np.r_[chain, np.column_stack([a[keep], b[keep]])].astype(np.int64)
        edges = np.r_[edges, edges[rng.random(edges.shape[0]) < 0.1][:, ::-1]]
        c = -np.abs(rng.standard_normal(edges.shape[0])) \
            * 10.0 ** rng.integers(0, top + 1, edges.shape[0]).astype(float)
        c[rng.random(c.size) < 0.1] = 0.0
        s = rng.standard_normal(n)
        if trial % 4 == 0:              # ties: a coarse grid of scores
            s = np.round(s)
            c = np.round(c)
        ref = max_marginals(s, edges, c, algorithm="brute")
        got = max_marginals(s, edges, c, enumerate_up_to=0, flips=True)
        tol = 1e-9 * (1.0 + np.abs(s).sum())
        where = f"trial {trial}: n={n} max |c|={np.abs(c).max():.3g}"
        _close(got, ref, tol, where)
        _reaches(got, s, edges, c, tol, where)


def _knn(rng, n, k):
    from scipy.spatial import cKDTree
    x = rng.standard_normal((n, 2))
    _, idx = cKDTree(x).query(x, k + 1)
    e = np.column_stack([np.repeat(np.arange(n), k), idx[:, 1:].ravel()])
    return np.unique(np.sort(e, axis=1), axis=0)


@pytest.mark.parametrize("shape", ["cliques", "knn", "grid", "ties", "zero-pairs"])
def test_dense_cuts_equal_general_dynamic_cuts_up_to_64(shape):
    """Components of 20 to 64 samples (and one of 70, past the dense limit, in the same call)
    cut densely by "graphcut" against _maxflow.hpp's dynamic cuts ("graphcut-dynamic"),
    weak to strong pair scores."""
    rng = np.random.default_rng(["cliques", "knn", "grid", "ties", "zero-pairs"].index(shape))
    blocks, offset = [], 0
    for k in (20, 33, 48, 64, 70):
        if shape in ("knn", "zero-pairs"):
            e = _knn(rng, k, 5)
        elif shape == "grid":
            side = int(np.sqrt(k))
            i = np.arange(side * side).reshape(side, side)
            e = np.r_[np.column_stack([i[:, :-1].ravel(), i[:, 1:].ravel()]),
                      np.column_stack([i[:-1].ravel(), i[1:].ravel()])]
            k = side * side
        else:
            a, b = np.triu_indices(k, 1)
            e = np.column_stack([a, b])
        blocks.append(e + offset)
        offset += k
    edges = np.concatenate(blocks).astype(np.int64)
    s = rng.standard_normal(offset)
    c = -np.abs(rng.standard_normal(edges.shape[0])) * rng.choice([0.02, 0.2, 1.0], edges.shape[0])
    if shape == "ties":
        s = np.round(s, 1)
        s[rng.random(offset) < 1 / 3] = 0.0
        c = np.round(c, 1) - 0.1
    if shape == "zero-pairs":
        c[rng.random(c.size) < 0.2] = 0.0
    ref = max_marginals(s, edges, c, algorithm="graphcut-dynamic", flips=True)
    got = max_marginals(s, edges, c, enumerate_up_to=0, flips=True)
    tol = 1e-9 * (1 + np.abs(s).sum() + np.abs(c).sum())
    _close(got, ref, tol, shape)
    _reaches(got, s, edges, c, tol, shape)
    # the chained re-cuts (each from where the last left the flow) flip the same least sets as
    # re-cuts from the optimum
    assert (got.flips != ref.flips).nnz == 0, shape


@pytest.mark.parametrize("scale", [0.05, 0.25, 1.0, 1e8])
def test_chained_dense_recuts_flip_the_least_sets(scale):
    """Groups of 4-26 samples, every pair linked (the HJA-shaped benchmark's groups), where
    most clamps flip several samples and the dense cuts chain their re-cuts: values and flipped
    sets equal those of re-cuts from the optimum ("graphcut-dynamic"), ties included."""
    from aprank.inference.pairwise import group_pairs
    rng = np.random.default_rng([24, 7, [0.05, 0.25, 1.0, 1e8].index(scale)])
    sizes = rng.integers(4, 27, 60)
    edges = group_pairs(np.repeat(np.arange(sizes.size), sizes))
    n = int(sizes.sum())
    s = rng.standard_normal(n)
    c = -np.abs(rng.standard_normal(edges.shape[0])) * scale
    s[rng.random(n) < 0.2] = 0.0
    c[rng.random(c.size) < 0.1] = -scale / 2
    ref = max_marginals(s, edges, c, algorithm="graphcut-dynamic", flips=True)
    got = max_marginals(s, edges, c, enumerate_up_to=0, flips=True)
    tol = 1e-9 * (1 + np.abs(s).sum() + np.abs(c).sum())
    _close(got, ref, tol, f"scale {scale}")
    _reaches(got, s, edges, c, tol, f"scale {scale}")
    assert (got.flips != ref.flips).nnz == 0
    # the chains ran: some clamp flips more than its own sample
    assert np.diff(got.flips.indptr).max() > 1


def test_dense_limit_is_checked():
    one = np.ones(1)
    with pytest.raises(ValueError, match="dense_up_to must be at most"):
        _maxflow_cy.cut_components(one, np.zeros(1, np.int64), np.zeros(0, np.int64),
                                   np.zeros(0, np.int64), np.zeros(0), np.zeros(1, np.int64),
                                   np.zeros(0, np.int64), np.zeros(1, np.int8), one, one,
                                   True, False, True, _maxflow_cy.DENSE_MAX + 1)
