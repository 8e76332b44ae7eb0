"""The pairwise kind's own max-flow (Boykov-Kolmogorov with Kohli-Torr dynamic
updates, _maxflow.hpp): dynamic cuts against cuts from scratch on large single components,
exact clamps at extreme pair scales against brute, PyMaxflow as a second reference when
installed."""
import numpy as np
import pytest
from scipy.spatial import cKDTree

from aprank.inference import max_marginals


def _knn(rng, n, k):
    """Pairs of each of n random points in the plane with its k nearest neighbours."""
    x = rng.standard_normal((n, 2))
    _, idx = cKDTree(x).query(x, k + 1)
    e = np.column_stack([np.repeat(np.arange(n), k), idx[:, 1:].ravel()])
    return np.unique(np.sort(e, axis=1), axis=0)


def _grid(rows, cols):
    """4-neighbour pairs of a rows x cols grid."""
    i = np.arange(rows * cols).reshape(rows, cols)
    return np.r_[np.column_stack([i[:, :-1].ravel(), i[:, 1:].ravel()]),
                 np.column_stack([i[:-1].ravel(), i[1:].ravel()])]


def _score(z, s, edges, c):
    """The value of labelling z (bool): its samples' unary scores plus the pairs it cuts."""
    return float(s[z].sum() + c[z[edges[:, 0]] != z[edges[:, 1]]].sum())


def _check_flips(r, s, edges, c, samples):
    """The labelling behind each max-marginal scores what is reported."""
    y = r.labelling.astype(bool)
    assert _score(y, s, edges, c) == pytest.approx(r.value, abs=1e-9 * (1 + np.abs(s).sum()))
    for i in samples:
        z = y ^ r.flips[i].toarray().ravel().astype(bool)
        assert z[i] != y[i]
        expected = r.m_minus[i] if y[i] else r.m_plus[i]
        assert _score(z, s, edges, c) == pytest.approx(expected, abs=1e-9 * (1 + np.abs(s).sum()))


@pytest.mark.parametrize("shape", ["knn", "grid", "ties", "zero-pairs"])
def test_dynamic_cuts_equal_cuts_from_scratch_on_one_large_component(shape):
    """One component of 1,000-1,500 samples: a kNN graph, a grid, tied unary scores (rounded,
    a third zero) and pair scores partly zero; weak to strong coupling in one graph."""
    rng = np.random.default_rng(["knn", "grid", "ties", "zero-pairs"].index(shape))
    if shape == "grid":
        edges = _grid(30, 40)
    else:
        edges = _knn(rng, 1000, 6)
    n = int(edges.max()) + 1
    s = rng.standard_normal(n)
    c = -np.abs(rng.standard_normal(edges.shape[0])) * rng.choice([0.05, 0.3, 1.0],
                                                                  edges.shape[0])
    if shape == "ties":
        s = np.round(s, 1)
        s[rng.random(n) < 1 / 3] = 0.0
        c = np.round(c, 1) - 0.1
    if shape == "zero-pairs":
        c[rng.random(c.size) < 0.2] = 0.0
    static = max_marginals(s, edges, c, algorithm="graphcut-static", flips=True)
    tol = 1e-9 * (1 + np.abs(s).sum())
    # graphcut: one-tree re-cuts keeping each re-cut's flow (and the optimum's flow restored
    # after 1,024 samples)
    for algorithm in ("graphcut-dynamic", "graphcut"):
        dyn = max_marginals(s, edges, c, algorithm=algorithm, flips=True)
        assert abs(dyn.value - static.value) <= tol
        np.testing.assert_allclose(dyn.m_plus, static.m_plus, rtol=0, atol=tol, err_msg=algorithm)
        np.testing.assert_allclose(dyn.m_minus, static.m_minus, rtol=0, atol=tol, err_msg=algorithm)
        assert (np.maximum(dyn.m_plus, dyn.m_minus) <= dyn.value + tol).all()
        # a large component whose max-marginal labellings flip more than the clamped sample
        assert dyn.flips.sum(axis=1).max() > 1
        _check_flips(dyn, s, edges, c, rng.choice(n, 40, replace=False))


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_one_tree_recuts_equal_dynamic_cuts_under_strong_pairs(scale):
    """One kNN component of 3,000 samples, each linked to its 10 nearest (30,000 pairs, mutual
    neighbours listed twice), strong pair scores (most of the component takes one label, so a
    clamp's flow comes from far away): "graphcut"'s one-tree re-cuts, which keep each
    re-cut's flow for the next sample, against the dynamic re-cuts, each undone."""
    from scipy.spatial import cKDTree
    rng = np.random.default_rng(int(scale * 10))
    x = rng.standard_normal((3000, 2))
    _, idx = cKDTree(x).query(x, 11)
    edges = np.column_stack([np.repeat(np.arange(3000), 10), idx[:, 1:].ravel()])
    s = rng.standard_normal(3000)
    c = -scale * np.abs(rng.standard_normal(edges.shape[0]))
    ref = max_marginals(s, edges, c, algorithm="graphcut-dynamic")
    got = max_marginals(s, edges, c, algorithm="graphcut", flips=True)
    tol = 1e-9 * (1 + np.abs(s).sum())
    assert abs(got.value - ref.value) <= tol
    np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol)
    np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol)
    _check_flips(got, s, edges, c, rng.choice(3000, 60, replace=False))


def _near_tie_components(rng, sizes, strength=1.0):
    """kNN components of ``sizes`` (numbered one after another), each with unary scores summing
    to +0.5 or -0.5 in turn and strong pairs: each takes one label, and flipping it whole
    costs 0.5, less than flipping most single samples with their pairs."""
    edges, s, a = [], [], 0
    for q, k in enumerate(sizes):
        chain = np.column_stack([np.arange(k - 1), np.arange(1, k)])   # one component
        edges.append(np.unique(np.r_[_knn(rng, k, 6), chain], axis=0) + a)
        u = rng.standard_normal(k)
        s.append(u - u.mean() + (0.5 if q % 2 == 0 else -0.5) / k)
        a += k
    edges = np.concatenate(edges)
    return np.concatenate(s), edges, -strength * (0.5 + np.abs(rng.standard_normal(len(edges))))


def _at_side_flip(r, s, edges, c, sizes):
    """Per component: how many samples have as the max-marginal of their other label the
    value of their component's side (the samples of their label) flipped whole."""
    y = r.labelling.astype(bool)
    other = np.where(y, r.m_minus, r.m_plus)
    tol = 1e-9 * (1 + np.abs(s).sum())
    counts, a = [], 0
    for k in sizes:
        part = np.zeros(len(s), bool)
        part[a:a + k] = True
        n_at = 0
        for side in (False, True):
            members = part & (y == side)
            if members.any():
                flipped = _score(y ^ members, s, edges, c)
                n_at += int(np.sum(np.abs(other[members] - flipped) <= tol))
        counts.append(n_at)
        a += k
    return counts


@pytest.mark.parametrize("sizes", [(70, 300), (1500, 80)])
def test_pinned_recuts_equal_dynamic_cuts_on_near_tie_components(sizes):
    """Components whose best other labelling, for most samples, flips the whole component
    (their unary scores sum to +-0.5 under strong pairs): "graphcut" without flips pins each
    sample whose max-marginal is that whole flip for the later re-cuts, which end where the
    pinned samples start; against the dynamic re-cuts (no pins), across RESTORE_EVERY (the
    pins kept when the optimum's flow is restored), both labels' sides, pair scales apart."""
    for strength in (1.0, 1e8):
        rng = np.random.default_rng([len(sizes), sizes[0], int(np.log10(strength))])
        s, edges, c = _near_tie_components(rng, sizes, strength)
        ref = max_marginals(s, edges, c, algorithm="graphcut-dynamic")
        got = max_marginals(s, edges, c, algorithm="graphcut")
        tol = 1e-9 * (1 + np.abs(s).sum())
        assert abs(got.value - ref.value) <= tol
        np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol)
        np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol)
        # both sides' labels are taken, and most samples' max-marginal is the whole flip
        assert set(got.labelling[:sizes[0]]) == {1} and set(got.labelling[sizes[0]:]) == {0}
        at = _at_side_flip(got, s, edges, c, sizes)
        assert all(n > k // 2 for n, k in zip(at, sizes)), at


def test_pinned_recuts_on_components_taking_both_labels():
    """Components of two clusters joined by a few weak pairs: one cluster near a tie (its
    side's whole flip is what most of its samples' max-marginals take, so they are pinned),
    the other strongly of the other label. The pinned re-cuts against the dynamic ones, and
    against the one-tree re-cuts with flips (which pin nothing: each clamp's own flips are
    kept)."""
    rng = np.random.default_rng(5)
    for trial in range(4):
        ka, kb = (int(k) for k in rng.integers(40, 300, 2))
        s, edges, c = _near_tie_components(rng, (ka, kb), strength=rng.choice([1.0, 3.0]))
        sign = 1.0 if trial % 2 else -1.0            # which label the near tie takes
        s[:ka] *= sign
        s[ka:] = -sign * (2.0 + np.abs(s[ka:]))       # the other cluster: the other label
        joins = np.column_stack([rng.integers(0, ka, 3), ka + rng.integers(0, kb, 3)])
        edges = np.r_[edges, joins]
        c = np.r_[c, np.full(3, -0.05)]
        ref = max_marginals(s, edges, c, algorithm="graphcut-dynamic")
        flips = max_marginals(s, edges, c, algorithm="graphcut", flips=True)
        got = max_marginals(s, edges, c, algorithm="graphcut")
        tol = 1e-9 * (1 + np.abs(s).sum())
        for other in (ref, flips):
            np.testing.assert_allclose(got.m_plus, other.m_plus, rtol=0, atol=tol)
            np.testing.assert_allclose(got.m_minus, other.m_minus, rtol=0, atol=tol)
        assert set(got.labelling[:ka]) == {sign > 0} and set(got.labelling[ka:]) == {sign < 0}
        at, = _at_side_flip(got, s, edges, c, (ka + kb,))
        assert ka // 2 < at <= ka, (trial, at, ka)


@pytest.mark.parametrize("top", [16, 300])
def test_one_tree_recuts_are_exact_at_extreme_pair_scales(top):
    """Components of 65-400 samples (past the dense cuts' 64): pair scores up to 10^top times
    the unary ones, mixed within a graph, some zero, against cuts from scratch."""
    rng = np.random.default_rng([24, 4, top])
    for trial in range(6):
        n = int(rng.integers(65, 400))
        edges = _knn(rng, n, int(rng.integers(2, 7)))
        c = -np.abs(rng.standard_normal(edges.shape[0])) \
            * 10.0 ** rng.integers(0, top + 1, edges.shape[0]).astype(float)
        c[rng.random(c.size) < 0.1] = 0.0
        s = rng.standard_normal(n)
        if trial % 2:
            s = np.round(s)             # ties
        ref = max_marginals(s, edges, c, algorithm="graphcut-static")
        tol = 1e-9 * (1.0 + np.abs(s).sum())
        # with flips every clamp's re-cut runs whole; without, samples are pinned
        for flips in (True, False):
            got = max_marginals(s, edges, c, algorithm="graphcut", flips=flips)
            where = f"trial {trial}: n={n}, flips={flips}"
            assert abs(got.value - ref.value) <= tol, where
            np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol, err_msg=where)
            np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol,
                                       err_msg=where)


def test_dynamic_cuts_on_ten_thousand_samples_reach_what_they_report():
    """One kNN component of 10,000 samples and ~40,000 pairs: every max-marginal labelling (of
    a sample) scores its max-marginal and none beats the maximum."""
    rng = np.random.default_rng(10_000)
    edges = _knn(rng, 10_000, 5)
    s = rng.standard_normal(10_000)
    c = -0.15 * np.abs(rng.standard_normal(edges.shape[0]))
    r = max_marginals(s, edges, c, algorithm="graphcut", flips=True)
    tol = 1e-9 * (1 + np.abs(s).sum())
    assert (np.maximum(r.m_plus, r.m_minus) == r.value).all()
    assert (np.minimum(r.m_plus, r.m_minus) <= r.value + tol).all()
    _check_flips(r, s, edges, c, rng.choice(10_000, 100, replace=False))


@pytest.mark.parametrize("algorithm", ["graphcut-dynamic", "graphcut-static"])
@pytest.mark.parametrize("top", [14, 40, 300])
def test_cuts_are_exact_at_extreme_pair_scales(algorithm, top):
    """Pair scores up to 10^top times the unary ones (mixed within a graph, some zero) on
    random graphs of up to 14 samples: the cuts' maximum and max-marginals equal brute's. (The
    previous clamp, 1 + 2 (|s_i| + pair weights) added to a t-link, rounded the unary scores
    away at these scales.)"""
    rng = np.random.default_rng([24, 2, top])
    for trial in range(60):
        n = int(rng.integers(2, 15))
        a, b = np.triu_indices(n, 1)
        keep = rng.random(a.size) < 0.35
        chain = np.column_stack([np.arange(n - 1), np.arange(1, n)])
        edges = np.r_[chain, np.column_stack([a[keep], b[keep]])].astype(np.int64)
        c = -np.abs(rng.standard_normal(edges.shape[0])) \
            * 10.0 ** rng.integers(0, top + 1, edges.shape[0]).astype(float)
        c[rng.random(c.size) < 0.1] = 0.0
        s = rng.standard_normal(n)
        ref = max_marginals(s, edges, c, algorithm="brute")
        got = max_marginals(s, edges, c, algorithm=algorithm)
        tol = 1e-9 * (1.0 + np.abs(s).sum())
        where = f"trial {trial}: n={n} max |c|={np.abs(c).max():.3g}"
        assert abs(got.value - ref.value) <= tol, where
        np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol, err_msg=where)
        np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol, err_msg=where)


def test_pymaxflow_agrees_on_the_minimum_cut_when_installed():
    """A second reference (test extra only): PyMaxflow's minimum cut of a kNN component has
    the value of our maximum (cut = sum_i max(s_i, 0) - maximum)."""
    maxflow = pytest.importorskip("maxflow")
    rng = np.random.default_rng(5)
    edges = _knn(rng, 2000, 6)
    s = rng.standard_normal(2000)
    c = -0.3 * np.abs(rng.standard_normal(edges.shape[0]))
    g = maxflow.Graph[float](2000, edges.shape[0])
    g.add_nodes(2000)
    g.add_grid_tedges(np.arange(2000), np.maximum(s, 0.0), np.maximum(-s, 0.0))
    g.add_edges(edges[:, 0], edges[:, 1], -c, -c)
    flow = g.maxflow()
    r = max_marginals(s, edges, c, algorithm="graphcut-dynamic")
    assert np.maximum(s, 0.0).sum() - flow == pytest.approx(r.value, abs=1e-9 * 2000)


def test_graphcut_is_exact_on_two_components_above_the_dense_size():
    """Two chains of DENSE_MAX + 1 samples: each is re-cut by one tree, and the second's cut
    must not run in the first's one-tree mode (which would report a value of 0.0 here)."""
    from aprank.inference.pairwise._maxflow_cy import DENSE_MAX
    L = DENSE_MAX + 1
    e = np.array([(q * L + i, q * L + i + 1) for q in range(2) for i in range(L - 1)])
    s = np.zeros(2 * L)
    s[L // 2] = s[L + L // 2] = 1.0
    fast = max_marginals(s, e, -1.0, algorithm="graphcut")
    ref = max_marginals(s, e, -1.0, algorithm="graphcut-static")
    assert fast.value == ref.value == 2.0
    np.testing.assert_array_equal(fast.labelling, ref.labelling)
    np.testing.assert_allclose(fast.m_plus, ref.m_plus, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.m_minus, ref.m_minus, rtol=0, atol=1e-12)
