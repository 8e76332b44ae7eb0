"""Costs known before a call, for every kind, and Ctrl-C during a long one.

Every kind warns (SlowAlgorithmWarning) before a call its algorithm's ``seconds`` model
estimates over a minute: the tests hand ``infer``, ``infer_batch`` and ``max_marginals`` a copy
of the registry entry whose ``run`` fails the test, so the warning, made an error, must come
before the run (and the long call never runs). A SIGINT from a timer thread stops a long
c-star call (the kernel polls for signals), a long graph-cut call (the compiled max-marginal
loop polls between cuts), the ranking kernels whose scans run for minutes (yue, ndcg-greedy;
search's and select's P^2) and the pairwise enumeration of large components within a second.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import aprank
from aprank.checks import bench_instance
from aprank.inference import (
    LatentProblem,
    PairwiseGraph,
    PairwiseProblem,
    SlowAlgorithmWarning,
    TopKProblem,
    _registry,
    group_pairs,
    max_marginals,
)
from aprank.inference.pairwise._problem import PairwiseCall
from aprank.inference.topk._problem import TopKCall
from aprank_support.signals import interrupted_after


def _never_run(call):
    raise AssertionError("the algorithm ran: the warning must come before the call")


def _guarded(name: str, kind: str):
    """The registry entry with a run that fails the test (its cost models unchanged)."""
    return dataclasses.replace(_registry.get(name, kind), run=_never_run)


def _queries(n_queries: int, size: int, positives: int):
    y = np.tile(np.arange(size) < positives, n_queries)
    return np.linspace(-1.0, 1.0, y.size), y, np.repeat(np.arange(n_queries), size)


def _core_problem(n: int, C: int):
    """One query of n items with interactions on a core of C: 2^C states over n items."""
    core = np.arange(C)
    F = sp.csr_matrix((np.full(C, 0.1), (core, core + C)), shape=(n, n))
    y = np.zeros(n, dtype=bool)
    y[:: 5] = True
    return np.linspace(-1.0, 1.0, n), y, F, core


def _giant_component(n: int, extra: int, seed: int = 0):
    """A chain of n samples plus ``extra`` random pairs: one component of n samples."""
    rng = np.random.default_rng(seed)
    e = rng.integers(0, n, (extra, 2))
    e = np.r_[e[e[:, 0] != e[:, 1]], np.column_stack([np.arange(n - 1), np.arange(1, n)])]
    return rng.standard_normal(n), e, -np.abs(rng.standard_normal(e.shape[0]))


def _ranking_call(kind, name):
    s, y, qid = _queries(10_000, 16, 8)        # brute: C(16, 8) 16 per query, 10^4 queries
    return lambda: aprank.infer_batch(s, y, qid, loss="ap", algorithm=_guarded(name, kind))


def _labelling_call(kind, name):
    s, y, qid = _queries(5_000, 16, 8)         # brute: 2^16 16 per query
    return lambda: aprank.infer_batch(s, y, qid, loss="zero-one", algorithm=_guarded(name, kind))


def _topk_call(kind, name):
    s, y, F, core = _core_problem(100_000, 20)     # 2^20 states x 1e5 items, twice
    return lambda: aprank.infer(s, y, loss="precision@k", interactions=F, core=core,
                                algorithm=_guarded(name, kind))


def _pairwise_infer(kind, name):
    s, e, c = _giant_component(20_000, 80_000)     # k (k + e) = 2e4 x 1e5 for the re-cuts
    return lambda: aprank.infer(s, s > 0, loss="pairwise-zero-one", edges=e,
                                edge_scores=c, algorithm=_guarded(name, kind))


def _pairwise_max_marginals(kind, name):
    s, e, c = _giant_component(20_000, 80_000)
    return lambda: max_marginals(s, e, c, algorithm=_guarded(name, kind))


def _latent_call(kind, name):
    instance = bench_instance("latent", 6000, 24000, 1.0)   # 30,000 bags: N (N + P) = 7.2e8
    return lambda: aprank.infer(instance.scores, instance.labels, loss="latent-ssvm",
                                bags=instance.bags, algorithm=_guarded(name, kind))


LONG_CALLS = [
    ("ranking", "brute", _ranking_call),
    ("labelling", "brute", _labelling_call),
    ("topk", "cstar", _topk_call),
    ("pairwise", "graphcut", _pairwise_infer),
    ("pairwise", "graphcut-dynamic", _pairwise_max_marginals),
    ("latent", "latent-greedy", _latent_call),
]


@pytest.mark.parametrize("kind, name, make", LONG_CALLS,
                         ids=[f"{k}-{n}-{m.__name__}" for k, n, m in LONG_CALLS])
def test_a_call_estimated_over_a_minute_warns_before_it_starts(kind, name, make):
    call = make(kind, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowAlgorithmWarning)
        with pytest.raises(SlowAlgorithmWarning, match=f"'{name}' is estimated to take about"):
            call()
    # without the error the same call reaches the algorithm: the warning came first
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SlowAlgorithmWarning)
        with pytest.raises(AssertionError, match="the algorithm ran"):
            call()


@pytest.mark.parametrize("kind, name, make", LONG_CALLS[:1] + LONG_CALLS[2:4],
                         ids=["ranking", "topk", "pairwise"])
def test_a_small_call_of_the_same_algorithm_does_not_warn(kind, name, make, monkeypatch):
    # the same inputs under a threshold the estimate does not reach: no warning, so the
    # estimate, not the algorithm, decides
    monkeypatch.setattr(_registry, "SLOW_CALL_SECONDS", float("inf"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowAlgorithmWarning)
        with pytest.raises(AssertionError, match="the algorithm ran"):
            make(kind, name)()


def test_the_defaults_at_ordinary_sizes_do_not_warn():
    rng = np.random.default_rng(0)
    s, y = rng.standard_normal(100_000), rng.random(100_000) < 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowAlgorithmWarning)
        aprank.infer(s, y)
        aprank.infer(s, y, loss="zero-one")
        sc, yc, F, core = _core_problem(2_000, 8)
        aprank.infer(sc, yc, loss="precision@k", interactions=F, core=core)
        sp_, e, c = _giant_component(2_000, 4_000)
        max_marginals(sp_, e, c)


def test_the_cost_model_flags_search_at_half_a_million_and_names_qs():
    for name in ("search", "select", "yue"):
        found = _registry.faster_alternative(_registry.get(name, "ranking"), "ap", 500_000,
                                             500_000)
        assert found is not None and found[0].name == "qs" and found[2] > 100 * found[1]
    found = _registry.faster_alternative(_registry.get("ndcg-greedy", "ranking"), "ndcg",
                                         500_000, 500_000)
    assert found[0].name == "qs"


@pytest.mark.parametrize("P, N", [(10, 10), (1000, 100_000), (100, 10_000_000),
                                  (500_000, 500_000)])
def test_the_default_and_normal_calls_are_not_flagged(P, N):
    assert _registry.faster_alternative(_registry.get("qs", "ranking"), "ap", P, N) is None
    if P * P < 1e8:
        assert _registry.faster_alternative(_registry.get("search", "ranking"), "ap", P, N) is None


def test_a_long_call_warns_once_per_problem(monkeypatch):
    monkeypatch.setattr(_registry, "SLOW_CALL_UNITS", 1e5)
    rng = np.random.default_rng(0)
    s, y = rng.standard_normal(10_000), rng.random(10_000) < 0.5     # search: ~200 x qs
    with pytest.warns(_registry.SlowAlgorithmWarning, match="'qs'"):
        aprank.infer(s, y, algorithm="search")
    problem = aprank.inference.RankingProblem(y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            problem.solve(s, "yue")
        problem.solve(s, "qs")
    assert [type(w.message) for w in caught] == [_registry.SlowAlgorithmWarning]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        aprank.infer(s, y)                  # qs, the default: never flagged


class Warned(Exception):
    pass


def test_a_slow_call_warns_at_the_callers_line_before_the_kernel():
    """The warning comes before the kernel, at the caller's line; shown as an exception here so
    that the slow kernel never runs."""
    scores, labels = np.zeros(80_000), np.zeros(80_000, bool)
    labels[:40_000] = True

    def stop(message, category, filename, lineno, *rest):
        raise Warned(category, filename)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = stop
        aprank.infer(scores[:2], labels[:2], algorithm="yue")       # small: no warning
        with pytest.raises(Warned) as caught:
            aprank.infer(scores, labels, algorithm="yue")
    assert caught.value.args == (SlowAlgorithmWarning, __file__)


# ------------------------------------------------------------------ growth of the estimates
def _seconds(name, kind, call):
    return _registry.estimated_seconds(_registry.get(name, kind), call)


def test_cstar_estimate_doubles_with_each_core_item():
    estimates = []
    for C in (10, 11, 12):
        s, y, F, core = _core_problem(100_000, C)
        p = TopKProblem(y, interactions=F, core=core)
        estimates.append(_seconds("cstar", "topk", TopKCall(p, s, np.zeros(s.size, np.int8),
                                                            p.k)))
    assert estimates[1] / estimates[0] == pytest.approx(2.0, rel=0.05)
    assert estimates[2] / estimates[1] == pytest.approx(2.0, rel=0.05)


def test_brute_estimates_are_per_call_not_per_query():
    one = aprank.inference.RankingProblem(_queries(1, 12, 4)[1])
    _, y, qid = _queries(1_000, 12, 4)
    many = aprank.inference.RankingProblem(y, qid=qid)
    for kind in ("ranking", "labelling"):
        algo = _registry.get("brute", kind)
        per_one = algo.seconds(type("Call", (), {"query_sizes": one.query_sizes})())
        per_many = algo.seconds(type("Call", (), {"query_sizes": many.query_sizes})())
        assert per_many == pytest.approx(1_000 * per_one, rel=1e-9)


def test_graph_cut_estimate_grows_with_the_giant_component():
    # the same samples and pairs, as one component or as components of 10
    n = 10_000
    chain = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    cut = chain[np.arange(n - 1) % 10 != 9]
    s = np.zeros(n)
    giant = _seconds("graphcut-dynamic", "pairwise",
                     PairwiseCall(PairwiseGraph(n, chain), s, -np.ones(n - 1)))
    pieces = _seconds("graphcut-dynamic", "pairwise",
                      PairwiseCall(PairwiseGraph(n, cut), s, -np.ones(cut.shape[0])))
    assert giant > 100 * pieces
    # quadratic in the component for the max-marginals (k re-cuts of up to k + e steps)
    half = _seconds("graphcut-dynamic", "pairwise",
                    PairwiseCall(PairwiseGraph(n // 2, chain[: n // 2 - 1]), s[: n // 2],
                                 -np.ones(n // 2 - 1)))
    assert 3.5 < giant / half < 4.5


def test_latent_greedy_estimate_grows_as_the_square_of_the_bags():
    estimates = []
    for P, N in ((100, 400), (200, 800)):
        instance = bench_instance("latent", P, N, 1.0)
        p = LatentProblem(instance.labels, "latent-ssvm", bags=instance.bags)
        call = type("Call", (), {"problem": p, "bags": p.bags})()
        estimates.append(_seconds("latent-greedy", "latent", call))
    assert 3.5 < estimates[1] / estimates[0] < 4.2    # N (N + P), P and N doubled


def test_solve_seconds_estimates_the_call_the_solve_would_run_without_running_or_warning():
    s, y, qid = _queries(10_000, 16, 8)
    problem = aprank.inference.RankingProblem(y, qid=qid)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = aprank.inference.solve_seconds(problem, s, _guarded("brute", "ranking"))
    call = type("Call", (), {"query_sizes": problem.query_sizes})()
    assert got == _seconds("brute", "ranking", call) > _registry.SLOW_CALL_SECONDS
    # the problem still warns before its own long call
    with pytest.raises(SlowAlgorithmWarning):
        with warnings.catch_warnings():
            warnings.simplefilter("error", SlowAlgorithmWarning)
            problem.solve(s, _guarded("brute", "ranking"))
    # the pairwise kind's estimate counts the components that non-zero pair scores link
    sp_, e, c = _giant_component(20_000, 80_000)
    pairwise = aprank.inference.PairwiseProblem(sp_ > 0, edges=e)
    linked = aprank.inference.solve_seconds(pairwise, sp_, "graphcut", edge_scores=c)
    apart = aprank.inference.solve_seconds(pairwise, sp_, "graphcut", edge_scores=0.0)
    assert linked > 100 * apart


# ------------------------------------------------------------------------------ Ctrl-C
def test_ctrl_c_stops_a_long_cstar_call_within_a_second():
    s, y, F, core = _core_problem(20_000, 20)         # about a minute: 2^20 states x 2e4 items
    problem = TopKProblem(y, interactions=F, core=core)
    kept = s.copy()
    assert _registry.estimated_seconds(_registry.get("cstar", "topk"),
                                       TopKCall(problem, s, np.zeros(s.size, np.int8),
                                                problem.k)) > 10
    assert interrupted_after(lambda: problem.solve(s)) < 1.0
    np.testing.assert_array_equal(s, kept)
    # nothing is left half-done: the kernel solves again, and right (brute agrees)
    small_s, small_y, small_F, small_core = _core_problem(14, 4)
    small = TopKProblem(small_y, interactions=small_F, core=small_core)
    got, ref = small.solve(small_s), small.solve(small_s, "brute")
    assert got.objective[0] == pytest.approx(ref.objective[0], abs=1e-12)
    assert np.array_equal(got.coef, ref.coef)


def test_ctrl_c_stops_a_long_graph_cut_call_within_a_second():
    # the compiled max-marginal loop (_maxflow_cy) checks for signals about every 0.1 s
    # between two cuts; this one's max-marginals take tens of seconds (the cuts re-search the
    # component)
    s, e, c = _giant_component(8_000, 80_000)
    graph = PairwiseGraph(s.size, e)
    kept = s.copy()
    for name in ("graphcut-dynamic", "graphcut-static"):
        assert _registry.estimated_seconds(_registry.get(name, "pairwise"),
                                           PairwiseCall(graph, s, c)) > 10
        assert interrupted_after(
            lambda: max_marginals(s, edge_scores=c, graph=graph, algorithm=name)) < 1.0, name
    np.testing.assert_array_equal(s, kept)
    # nothing is left half-done: the kernel cuts again, and right (brute agrees)
    small = max_marginals(s[:12], [[i, i + 1] for i in range(11)], -0.5,
                          algorithm="graphcut-dynamic")
    ref = max_marginals(s[:12], [[i, i + 1] for i in range(11)], -0.5, algorithm="brute")
    np.testing.assert_allclose(small.m_plus, ref.m_plus, atol=1e-12)
    np.testing.assert_allclose(small.m_minus, ref.m_minus, atol=1e-12)


def _one_query(P: int, N: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(P + N), np.arange(P + N) < P


#: (algorithm, loss, P, N, estimate at least): calls of many seconds in the kernels' P N (or,
#: for search and select, P^2) scans, which ignored Ctrl-C until they returned
LONG_RANKING_CALLS = [
    ("yue", "ap", 20_000, 2_000_000, 60.0),
    ("ndcg-greedy", "ndcg", 20_000, 2_000_000, 60.0),
    ("search", "ap", 200_000, 200_000, 10.0),
    ("select", "ap", 200_000, 200_000, 10.0),
]


@pytest.mark.parametrize("name, loss, P, N, at_least", LONG_RANKING_CALLS,
                         ids=[c[0] for c in LONG_RANKING_CALLS])
def test_ctrl_c_stops_a_long_ranking_kernel_within_a_second(name, loss, P, N, at_least):
    s, y = _one_query(P, N)
    problem = aprank.inference.RankingProblem(y, loss)
    kept = s.copy()
    assert aprank.inference.solve_seconds(problem, s, name) > at_least
    assert interrupted_after(lambda: problem.solve(s, name)) < 1.0
    np.testing.assert_array_equal(s, kept)
    # nothing is left half-done: the kernel solves again, and right (brute agrees)
    small_s, small_y = _one_query(5, 7, seed=1)
    got = aprank.infer(small_s, small_y, loss=loss, algorithm=name)
    ref = aprank.infer(small_s, small_y, loss=loss, algorithm="brute")
    assert got.objective == pytest.approx(ref.objective, abs=1e-12)


def test_ctrl_c_stops_a_long_call_over_many_small_queries():
    # a million queries of 20 by the greedy: the kernel and the driver share one poll
    s, y, qid = _queries(1_000_000, 20, 5)
    problem = aprank.inference.RankingProblem(y, "ap", qid=qid)
    assert interrupted_after(lambda: problem.solve(s, "yue"), delay=0.3) < 1.0


@pytest.mark.parametrize("n_components, scale, bound", [(20, 0.1, 1.0), (1, 1e16, 0.5)],
                         ids=["components", "one-component"])
def test_ctrl_c_stops_the_pairwise_enumeration_within_a_second(n_components, scale, bound):
    # cliques of 24 samples enumerated: 2^24 labellings each, most of a second a clique; at
    # pair scores 1e16 times the unary ones the exact walk, over a second. The walks ask for
    # signals every 4096 steps and the loop between components, so one component's walk is
    # stopped well before it ends
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(n_components), 24)
    e = aprank.inference.group_pairs(groups)
    s, c = rng.standard_normal(groups.size), -scale * np.abs(rng.standard_normal(e.shape[0]))
    kept = s.copy()
    call = PairwiseCall(PairwiseGraph(s.size, e), s, c, enumerate_up_to=24)
    assert _registry.estimated_seconds(_registry.get("graphcut", "pairwise"), call) > \
        n_components
    assert interrupted_after(lambda: max_marginals(s, e, c, enumerate_up_to=24),
                              delay=0.1) < bound
    np.testing.assert_array_equal(s, kept)
    # the enumeration still agrees with brute force afterwards
    got = max_marginals(s[:6], [[i, j] for i in range(6) for j in range(i + 1, 6)], -0.3,
                        enumerate_up_to=24)
    ref = max_marginals(s[:6], [[i, j] for i in range(6) for j in range(i + 1, 6)], -0.3,
                        algorithm="brute")
    np.testing.assert_allclose(got.m_plus, ref.m_plus, atol=1e-12)
    np.testing.assert_allclose(got.m_minus, ref.m_minus, atol=1e-12)


def test_a_cost_model_that_is_not_callable_is_refused_when_registered():
    entry = dataclasses.replace(_registry.get("qs", "ranking"), name="user-bad-seconds",
                                builtin=False, seconds=60.0)
    with pytest.raises(TypeError, match="seconds must be callable"):
        _registry.add(entry)
    with pytest.raises(ValueError, match="unknown algorithm"):
        _registry.get("user-bad-seconds")


def test_ctrl_c_stops_one_cut_of_a_dense_component_within_a_second():
    # one clique of 2,000 samples, pair scores about 1/k of the unary ones: its single cut
    # takes many seconds; the max-flow asks for signals inside it
    rng = np.random.default_rng(0)
    k = 2000
    e = group_pairs(np.zeros(k, int))
    problem = PairwiseProblem(rng.random(k) < 0.3, edges=e)
    s = rng.standard_normal(k)
    c = -1e-3 * np.abs(rng.standard_normal(e.shape[0]))
    assert interrupted_after(lambda: problem.solve(s, "graphcut", edge_scores=c,
                                                    marginals=False), delay=0.5) < 1.0
    # the graph is built afresh for the next call, which cuts right
    small = max_marginals(s[:12], [[i, i + 1] for i in range(11)], -0.5, algorithm="graphcut")
    ref = max_marginals(s[:12], [[i, i + 1] for i in range(11)], -0.5, algorithm="brute")
    np.testing.assert_allclose(small.m_plus, ref.m_plus, atol=1e-12)


def test_a_batch_estimate_sums_every_querys_cost_once_per_distinct_size():
    """``per_query_seconds`` evaluates the model once per distinct (P, N) and weighs it by the
    queries of that size: against a sum over every query, sizes from a few to past 2^31
    (where the sizes' one-integer key would overflow, the pairs are taken as rows)."""
    rng = np.random.default_rng(7)
    calls = []

    def cost(P, N):
        calls.append((P, N))
        return P * N + 3 * P + 1

    class Call:
        def __init__(self, P, N):
            self.sizes = (P, N)

        def query_sizes(self):
            return self.sizes

    seconds = _registry.per_query_seconds(cost, 2.0, 5.0)
    for high in (4, 100, 5000, 2 ** 33):
        P = rng.integers(0, high, 300)
        N = rng.integers(0, high, 300)
        P[:3], N[:3] = P[3], N[3]             # a repeated size
        calls.clear()
        got = seconds(Call(P, N))
        assert len(calls) == len(set(zip(P.tolist(), N.tolist())))
        expected = 1e-6 * (2.0 * sum(cost(p, n) for p, n in zip(P.tolist(), N.tolist()))
                           + 5.0 * P.size)
        assert got == pytest.approx(expected, rel=1e-12), high
