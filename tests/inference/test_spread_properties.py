"""Property-based checks, with Hypothesis, of inference where scores spread over many orders of
magnitude: one to three scores at +-10^3 ... 10^300 among ordinary ones, tiny and subnormal
scores, ties. For every kind and algorithm with a tolerance or a sum of scores:

* the reported objective is within a few ulps of the exact value (rational arithmetic) of the
  output it returns (of the larger of it and the loss, the terms' scale where they cancel);
* exact algorithms reach the same exact objective (1e-12 of it), the oracles included where
  their enumerations reach (ranking, top-k, pairwise, latent);
* the latent greedy on bags of one row reaches AP inference's optimum (1e-12 of it).

Derandomized and bounded: CI runs the same examples each time, in seconds.
"""
import warnings
from fractions import Fraction

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import aprank  # noqa: E402
from aprank.inference import PairwiseProblem, TopKProblem  # noqa: E402
from aprank.inference._deep import exact_sum, objective_matches  # noqa: E402
from aprank.inference.latent._instances import exact_objective as latent_exact  # noqa: E402
from aprank.losses import PrecisionAtK  # noqa: E402

BOUNDED = settings(max_examples=120, deadline=None, derandomize=True, database=None)


@st.composite
def spread(draw, n):
    """n scores: ordinary ones (some tied), one to three of them far (+-10^3 ... 10^300),
    tiny (10^-300) or subnormal."""
    base = draw(st.lists(st.one_of(st.floats(-4, 4, allow_nan=False, width=32),
                                   st.integers(-2, 2).map(float)), min_size=n, max_size=n))
    s = np.asarray(base, dtype=np.float64)
    count = draw(st.integers(1, min(3, n)))
    at = draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count, unique=True))
    for i in at:
        kind = draw(st.sampled_from(["far", "far", "far", "tiny", "subnormal"]))
        sign = draw(st.sampled_from([-1.0, 1.0]))
        if kind == "far":
            s[i] = sign * draw(st.floats(1, 9.9)) * 10.0 ** draw(st.integers(3, 300))
        elif kind == "tiny":
            s[i] = sign * 10.0 ** -draw(st.integers(3, 300))
        else:
            s[i] = sign * draw(st.integers(1, 1000)) * 5e-324
    if draw(st.booleans()) and n >= 2:          # a far score tied with another
        i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
        s[j] = s[i]
    return s


@st.composite
def labelled(draw, low=2, high=30):
    n = draw(st.integers(low, high))
    y = np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    y[draw(st.integers(0, n - 1))] = True
    y[draw(st.integers(0, n - 1).filter(lambda i: True))] |= False
    if y.all():
        y[draw(st.integers(0, n - 1))] = False
        if not y.any():
            y[0] = True
    return draw(spread(n)), y


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def ap_exact(result, s, y) -> Fraction:
    """AP's objective of a ranking result's output in rational arithmetic."""
    P, N = int(y.sum()), int((~y).sum())
    num = np.where(y, N + 2 - 2 * result.ranks, P + 2 - 2 * result.ranks) - np.where(y, N, -P)
    above = np.sort(result.ranks[y] - 1).tolist()
    loss = sum((Fraction(a, i + 1 + a) for i, a in enumerate(above)), Fraction(0)) / P
    return loss + exact_sum(num.tolist(), s) / (P * N)


def _agree(values, what):
    top = max(abs(float(v)) for v in values)
    assert max(values) - min(values) <= Fraction(1e-12 * max(top, 1e-300)), (what, values)


@BOUNDED
@given(labelled())
def test_ap_algorithms_report_their_outputs_and_agree(case):
    s, y = case
    hypothesis.assume(0 < y.sum() < y.size)
    exact = {}
    for name in [a.name for a in aprank.algorithms(loss="ap", exact=True)]:
        if name == "brute" and y.size > 9:
            continue
        r = _quiet(lambda: aprank.infer(s, y, loss="ap", algorithm=name))
        exact[name] = ap_exact(r, s, y)
        assert objective_matches(r.objective, exact[name], r.loss) is None, name
    _agree(list(exact.values()), exact)


@BOUNDED
@given(labelled(2, 40))
def test_latent_greedy_on_one_row_bags_reaches_ap_optimum(case):
    s, y = case
    hypothesis.assume(0 < y.sum() < y.size)
    g = aprank.infer(s, y, loss="latent-ssvm", bags=np.arange(y.size))
    a = aprank.infer(s, y, loss="ap")
    assert abs(g.objective - a.objective) <= 1e-12 * max(abs(a.objective), 1e-300), (g, a)


@st.composite
def bags(draw):
    s, y = draw(labelled(2, 24))
    B = draw(st.integers(1, y.size))
    owner = np.sort(np.asarray(draw(st.lists(st.integers(0, B - 1), min_size=y.size,
                                             max_size=y.size))))
    _, owner = np.unique(owner, return_inverse=True)
    label = np.zeros(owner.max() + 1, dtype=bool)
    label[owner[y]] = True                   # a bag is positive if any of its rows is
    return s, label[owner], owner


@BOUNDED
@given(bags())
def test_latent_objectives_are_their_outputs(case):
    s, y, owner = case
    hypothesis.assume(y.any())

    class Rows:
        scores, labels, bags = s, y, owner
    for loss in ("latent-ap", "latent-ssvm"):
        r = aprank.infer(s, y, loss=loss, bags=owner)
        assert objective_matches(r.objective, latent_exact(Rows, r), r.loss) is None, loss
        assert r.objective >= -1e-12 * max(1.0, abs(r.objective)), loss


@BOUNDED
@given(labelled(3, 12), st.data())
def test_topk_algorithms_report_their_outputs_and_agree_with_the_oracle(case, data):
    s, y = case
    n = y.size
    k = data.draw(st.integers(1, n))
    C = data.draw(st.integers(0, min(3, n)))
    core = np.sort(np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=C, max_size=C,
                                                 unique=True)), dtype=np.int64))
    F = np.zeros((n, n))
    if C:
        F[core, :] = np.round(np.asarray(data.draw(st.lists(
            st.floats(-2, 2, allow_nan=False), min_size=C * n, max_size=C * n))).reshape(C, n)
            * 16) / 16
        np.fill_diagonal(F, 0.0)
    kw = dict(interactions=F, core=core) if C else {}
    problem = TopKProblem(y, PrecisionAtK(k), **kw)
    exact = {}
    for name in ("cstar", "cstar-plain", "brute"):
        b = problem.solve(s, name)
        t, r = b.coef > 0, b.truth_coef > 0
        x = (Fraction(int(np.sum(t & ~y)), k)
             + exact_sum((t.astype(int) - r.astype(int)).tolist(), s))
        if C:
            i, j = np.nonzero(F)
            x += exact_sum(((t[i] & t[j]).astype(int) - (r[i] & r[j]).astype(int)).tolist(),
                           F[i, j])
        exact[name] = x
        assert objective_matches(float(b.objective[0]), x, float(b.loss[0])) is None, name
    _agree(list(exact.values()), exact)


@BOUNDED
@given(labelled(2, 14), st.data())
def test_pairwise_algorithms_report_their_outputs_and_agree(case, data):
    s, y = case
    n = y.size
    m = data.draw(st.integers(0, 2 * n))
    ends = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                              min_size=m, max_size=m))
    edges = np.asarray([e for e in ends if e[0] != e[1]], dtype=np.int64).reshape(-1, 2)
    c = -np.abs(np.asarray(data.draw(st.lists(st.floats(0, 3, allow_nan=False),
                                              min_size=len(edges), max_size=len(edges)))))
    problem = PairwiseProblem(y, edges=edges, edge_scores=c)
    exact = {}
    for name in [a.name for a in aprank.algorithms(loss="pairwise-zero-one", exact=True)]:
        r = _quiet(lambda: problem.solve_one(s, name))
        lab = r.labelling.astype(bool)
        v, norm = problem.loss.weights(problem.is_pos)
        delta = exact_sum([1] * int(np.sum(lab != y)), v[lab != y]) / Fraction(float(norm))
        cut = ((lab[edges[:, 0]] != lab[edges[:, 1]]).astype(int)
               - (y[edges[:, 0]] != y[edges[:, 1]]).astype(int)) if len(edges) else np.zeros(0)
        x = delta + exact_sum((lab.astype(int) - y.astype(int)).tolist(), s) + exact_sum(
            cut.tolist(), c)
        exact[name] = x
        assert objective_matches(r.objective, x, r.loss) is None, name
    _agree(list(exact.values()), exact)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(labelled(50, 400))
def test_ap_objectives_of_many_terms_are_their_outputs(case):
    """Hundreds of inverted pairs beside far scores: each term rounded alone would leave the
    sum tens of ulps off (the driver sums them compensated, and exactly where they cancel)."""
    s, y = case
    hypothesis.assume(0 < y.sum() < y.size)
    for name in ("qs", "yue"):
        r = _quiet(lambda: aprank.infer(s, y, loss="ap", algorithm=name))
        assert objective_matches(r.objective, ap_exact(r, s, y), r.loss) is None, name


@st.composite
def small_bags(draw):
    s, y = draw(labelled(2, 10))
    B = draw(st.integers(2, min(6, y.size)))
    owner = np.sort(np.asarray(draw(st.lists(st.integers(0, B - 1), min_size=y.size,
                                             max_size=y.size))))
    _, owner = np.unique(owner, return_inverse=True)
    label = np.zeros(owner.max() + 1, dtype=bool)
    label[owner[y]] = True
    return s, label[owner], owner


@BOUNDED
@given(small_bags())
def test_latent_algorithms_against_the_oracle(case):
    """latent-ap reaches the oracle's optimum and the greedy never exceeds it, with far scores
    among the rows (the oracle compares candidates by the terms in which they differ)."""
    s, y, owner = case
    hypothesis.assume(y.any())
    for loss, algorithm in (("latent-ap", "latent-ap"), ("latent-ssvm", "latent-greedy")):
        got = aprank.infer(s, y, loss=loss, bags=owner, algorithm=algorithm).objective
        best = aprank.infer(s, y, loss=loss, bags=owner, algorithm="brute").objective
        tol = max(1e-12, 16 * 2.0 ** -53 * max(abs(got), abs(best)))
        assert best >= -tol, (loss, best)
        if algorithm == "latent-ap":
            assert abs(got - best) <= tol, (loss, got, best)
        else:
            assert got <= best + tol, (loss, got, best)


def test_the_pairwise_oracle_reaches_the_optimum_beside_far_unary_scores():
    """Two far scores (1e15, 1e32) beside small ones: the oracle's differences from a
    labelling that differs in the far ones lose the small ones to rounding, so it refines from
    each better labelling it finds until none is better; it agrees with the cuts."""
    s = np.array([1e15, 0.0, 0.0, 1e32, -1e-3, 0.0, 0.0])
    y = np.array([True, False, False, True, False, False, False])
    problem = PairwiseProblem(y, edges=np.zeros((0, 2), dtype=np.int64),
                              edge_scores=np.zeros(0))
    brute, cut = (_quiet(lambda name=name: problem.solve_one(s, name))
                  for name in ("brute", "graphcut"))
    assert np.array_equal(brute.labelling, cut.labelling) and brute.labelling.all()
    assert brute.objective == cut.objective == 0.499
