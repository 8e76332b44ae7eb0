"""The "auto" algorithm: per query the candidate its rule picks, bit for bit what qs returns;
the driver's per-query dispatch and its own NDCG discount table change nothing numerically."""
import pickle
import types
import warnings

import numpy as np
import pytest

import aprank
from aprank.inference import Algorithm, RankingProblem, get_algorithm
from aprank.inference.ranking import (_driver_cy, _greedy_cy, _optranks_cy, _search_cy,
                                      _select_cy)
from aprank.inference.ranking._algorithms import AutoKernel
from aprank.inference.ranking._problem import Call
from aprank.inference._registry import faster_alternative
from aprank.validation import as_scores


def mixed_batch(seed, n_queries=60, ties=True):
    """Queries of 1 to ~3000 samples (log-uniform), 1-60% positives, scores rounded to ties."""
    rng = np.random.default_rng(seed)
    sizes = np.exp(rng.uniform(0, np.log(3000), n_queries)).astype(int) + 1
    qid = rng.permutation(np.repeat(np.arange(n_queries), sizes))
    labels = rng.random(qid.size) < rng.uniform(0.01, 0.6, n_queries)[qid]
    labels[np.unique(qid, return_index=True)[1]] = True        # every query has a positive
    scores = rng.standard_normal(qid.size) + rng.choice([0.0, 1.0, 6.0]) * labels
    if ties:
        scores = np.round(scores, int(rng.integers(0, 2)))
    return scores, labels, qid


def assert_same_bits(a, b):
    for field in ("ranks", "coef", "truth_coef", "loss", "objective", "used"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), field


def test_auto_is_an_exact_ranking_algorithm_of_both_losses():
    for loss in ("ap", "ndcg"):
        assert "auto" in aprank.algorithms(kind="ranking", loss=loss, exact=True).names()
    auto = get_algorithm("auto", "ranking")
    assert pickle.loads(pickle.dumps(auto)) is auto


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("seed", range(4))
def test_auto_equals_qs_bit_for_bit(loss, seed):
    scores, labels, qid = mixed_batch(seed, ties=seed % 2 == 0)
    auto = aprank.infer_batch(scores, labels, qid, loss=loss, algorithm="auto")
    qs = aprank.infer_batch(scores, labels, qid, loss=loss, algorithm="qs")
    assert auto.algorithm == "auto" and qs.algorithm == "qs"
    assert_same_bits(auto, qs)
    one = aprank.infer(scores[qid == 0], labels[qid == 0], loss=loss, algorithm="auto")
    assert one.algorithm == "auto" and one.objective == qs.objective[0]


def test_auto_rule_picks_qs_where_it_was_measured_fastest():
    P, N = np.array([1, 10, 100, 1000, 10]), np.array([10_000, 90, 30, 3, 10])
    for code, (solves, rule) in get_algorithm("auto", "ranking").run.candidates.items():
        assert solves[np.asarray(rule(P, N))[0]] is _optranks_cy.SOLVE


@pytest.mark.parametrize("loss, modules", [
    ("ap", (_greedy_cy, _search_cy, _select_cy, _optranks_cy)),
    ("ndcg", (_greedy_cy, _optranks_cy)),
])
def test_per_query_dispatch_runs_each_candidate_and_changes_nothing(loss, modules):
    """A rule that gives each query a different kernel (by query index): the one compiled loop
    runs them all, and the result is qs's bit for bit."""
    kernel = AutoKernel({loss: (modules, lambda P, N: np.arange(P.size) % len(modules))})
    mixed = Algorithm("mixed", "ranking", (loss,), True, "-", "-", kernel, builtin=False)
    for seed in range(3):
        scores, labels, qid = mixed_batch(10 + seed)
        problem = RankingProblem(labels, loss, qid=qid)
        assert_same_bits(problem.solve(as_scores(scores), mixed),
                         RankingProblem(labels, loss, qid=qid).solve(scores, "qs"))


def _driver(call, own_table, solve=_optranks_cy.SOLVE, choice=None):
    spec = call.loss.kernel_spec(call.max_query_size)
    _driver_cy.rank_queries(solve, call.scores, call.is_pos.view("uint8"), call.order,
                            call.offsets, spec.code, spec.discount, call.n_pos, call.ranks,
                            call.coef, call.query_loss, call.query_objective, None, choice,
                            own_table)
    return call


def test_the_drivers_ndcg_table_changes_no_bit():
    for seed in range(3):
        scores, labels, qid = mixed_batch(20 + seed)
        problem = RankingProblem(labels, "ndcg", qid=qid)
        a = _driver(Call(problem, scores), own_table=True)
        b = _driver(Call(problem, scores), own_table=False)
        for field in ("ranks", "coef", "query_loss", "query_objective"):
            assert getattr(a, field).tobytes() == getattr(b, field).tobytes(), field


def test_driver_refuses_a_bad_choice():
    scores, labels, qid = mixed_batch(30, n_queries=5)
    call = Call(RankingProblem(labels, "ap", qid=qid), scores)
    solves = (_optranks_cy.SOLVE, _select_cy.SOLVE)
    for choice in (np.array([0, 1, 2, 0, 1], np.int8), np.array([0, -1, 0, 0, 0], np.int8),
                   np.zeros(4, np.int8), None):
        with pytest.raises(ValueError, match="choice"):
            _driver(call, True, solves, choice)


def test_auto_never_warns_slow():
    auto = get_algorithm("auto", "ranking")
    for loss in ("ap", "ndcg"):
        for P in (1, 10, 10 ** 3, 10 ** 6, 10 ** 9):
            for N in (1, 10, 10 ** 3, 10 ** 6, 10 ** 9):
                assert faster_alternative(auto, loss, P, N) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        aprank.infer(np.r_[1.0, np.zeros(5000)], np.r_[True, np.zeros(5000, bool)],
                     algorithm="auto")



def test_each_query_runs_the_solve_chosen_for_it():
    """With the probe KEEP_LAST (writes nothing) as the second candidate, the queries given it
    keep every negative at rank P+1 and the others get qs's ranks."""
    scores, labels, qid = mixed_batch(40, n_queries=30)
    probe = types.SimpleNamespace(SOLVE=_driver_cy.KEEP_LAST)
    kernel = AutoKernel({"ap": ((_optranks_cy, probe), lambda P, N: np.arange(P.size) % 2)})
    mixed = Algorithm("mixed", "ranking", ("ap",), True, "-", "-", kernel, builtin=False)
    problem = RankingProblem(labels, "ap", qid=qid)
    got = problem.solve(as_scores(scores), mixed)
    qs = problem.solve(scores, "qs")
    P = problem.per_sample(problem.positives)
    negative = ~labels
    odd = problem.per_sample(np.arange(problem.n_queries) % 2 == 1)
    assert np.array_equal(got.ranks[~odd], qs.ranks[~odd])
    assert np.array_equal(got.ranks[odd & negative], P[odd & negative] + 1)
    assert not np.array_equal(qs.ranks[odd & negative], P[odd & negative] + 1)
