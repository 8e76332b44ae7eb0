"""The nonlinear experiment's harness and networks: scores per row, the inner choice of
settings, the win/tie/loss count, the minibatches, and the networks' loss, whose gradient must
be aprank's exact AP hinge subgradient (the cross-check instances, ties included)."""
import numpy as np
import pytest
from scipy.special import expit

torch = pytest.importorskip("torch")
#: an optional package the test extra leaves out: .ci/run's extras lane runs this file
pytestmark = pytest.mark.extras

import aprank  # noqa: E402
from aprank.checks import random_instance  # noqa: E402
from aprank.metrics import average_precision, ndcg  # noqa: E402
from experiments.nonlinear import TIE, compare  # noqa: E402
from experiments.nonlinear_networks import (  # noqa: E402
    Recipe,
    _epoch_batches,
    _loss,
    _query_batches,
    fit_network,
)
from experiments.nonlinear_protocol import Candidate, Task  # noqa: E402
from experiments.nonlinear_units import choose, row_scores  # noqa: E402


def _ranking_task(seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(6), 10)
    rel = rng.integers(0, 5, qid.size)[:, None]
    return Task("r", rng.normal(size=(qid.size, 3)), rel, ("r",), groups=qid, qid=qid,
                positive_level=2)


def test_row_scores_of_a_ranking_task_average_its_queries_with_a_relevant_sample():
    task = _ranking_task()
    idx = np.arange(10, 60)
    s = np.random.default_rng(1).normal(size=(idx.size, 1))
    got = row_scores(task, idx, s)[0]
    rel = task.Y[idx, 0]
    aps = [average_precision(rel[task.qid[idx] == q] >= 2, s[task.qid[idx] == q, 0])
           for q in np.unique(task.qid[idx]) if (rel[task.qid[idx] == q] >= 2).any()]
    assert got["ap"] == pytest.approx(np.mean(aps))
    assert got["ndcg"] == pytest.approx(float(ndcg(rel, s[:, 0], qid=task.qid[idx],
                                                   empty="skip")))


def test_row_scores_rank_every_sample_of_a_one_against_the_rest_row():
    Y = np.array([[1, 0], [0, 0], [1, 0], [0, 1]])
    task = Task("t", np.zeros((4, 1)), Y, ("a", "b"), groups=np.arange(4))
    s = np.array([[0.1, 0.0], [0.9, 0.0], [0.5, 0.0], [0.2, 1.0]])
    got = row_scores(task, np.arange(4), s)
    assert got[0]["ap"] == pytest.approx(average_precision(Y[:, 0], s[:, 0]))
    assert got[1]["ap"] == 1.0
    assert np.isnan(row_scores(task, np.arange(3), s[:3])[1]["ap"])


def test_compare_counts_ties_within_the_tie_and_tests_the_differences():
    a = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
    b = a - np.array([0.01, 0.02, TIE / 2, -0.03, 0.04, 0.05])
    wins, ties, losses, p = compare(a, b)
    assert (wins, ties, losses) == (4, 1, 1)
    assert 0 < p < 1
    assert compare(a, a) == (0, len(a), 0, 1.0)


def _peaked_candidate(best):
    """A model whose validation AP on row c is highest at setting best[c] = (grid, budget):
    it scores the positives above the negatives exactly there."""
    def fit_predict(params, X, Y, qid, X_evals, seed, positive_level):
        out = {}
        for budget in (1, 2, 3):
            cols = [X_evals[0][:, 0] * (1 if best[c] == (params["g"], budget) else -1)
                    for c in range(len(best))]
            out[budget] = [np.column_stack(cols)]
        return out
    return Candidate("peaked", "network", "", ({"g": 0}, {"g": 1}), (1, 2, 3), fit_predict)


def test_choose_takes_each_rows_best_setting_and_budget_on_the_inner_folds():
    rng = np.random.default_rng(0)
    y = np.tile([1, 0], 30)
    X = (y + 0.01 * rng.random(60))[:, None]       # the first feature ranks the positives first
    task = Task("t", X, np.column_stack([y, y, y]), ("a", "b", "c"), groups=np.arange(60))
    best = [(1, 2), (0, 3), (0, 1)]
    # (grid index, index of the budget in the candidate's budgets 1, 2, 3)
    assert choose(_peaked_candidate(best), task, np.arange(60), seed=0) == [
        (g, budget - 1) for g, budget in best]


def test_stratified_minibatches_deal_every_class_evenly_and_cover_the_epoch():
    rng = np.random.default_rng(0)
    key = rng.integers(0, 4, 1000)
    batches = _epoch_batches(1000, 128, key, rng)
    assert sorted(np.concatenate(batches)) == list(range(1000))
    counts = np.array([np.bincount(key[b], minlength=4) for b in batches])
    assert (counts.max(axis=0) - counts.min(axis=0)).max() <= 1


def test_query_minibatches_hold_whole_queries():
    qid = np.repeat(np.arange(40), np.arange(1, 41))
    batches = _query_batches(qid, 100, np.random.default_rng(0))
    assert sorted(np.concatenate(batches)) == list(range(qid.size))
    for b in batches:
        for q in np.unique(qid[b]):
            assert (qid[b] == q).sum() == (qid == q).sum()


@pytest.mark.parametrize("recipe", [Recipe(), Recipe(scale=10.0), Recipe(loss="ce+ap", mix=0.5)])
def test_the_networks_loss_has_the_exact_ap_hinge_subgradient(recipe):
    """On the ranking kind's cross-check instances (tie densities up to all scores equal):
    d loss / d scores = scale * mix * (coef - truth_coef) of infer_batch, plus cross-entropy's
    gradient where the recipe adds it."""
    for trial in range(30):
        inst = random_instance("ranking", 0, trial, max_n=300)
        s = np.asarray(inst.scores, dtype=np.float64)
        y = np.asarray(inst.labels) > 0
        if not y.any() or y.all():
            continue
        out = torch.tensor(s[:, None], requires_grad=True)
        target = torch.tensor(y[:, None], dtype=torch.float64)
        _loss(recipe, out, target, None, step=1).backward()
        r = aprank.infer_batch(recipe.scale * s, y, np.zeros(s.size, np.int64))
        expected = recipe.scale * (r.coef - r.truth_coef)
        if recipe.loss == "ce+ap":
            expected = recipe.mix * expected + (expit(s) - y) / s.size
        np.testing.assert_allclose(out.grad[:, 0].numpy(), expected, rtol=1e-12, atol=1e-15,
                                   err_msg=inst.description)


def test_the_networks_loss_ranks_each_query_where_there_are_queries():
    s = np.array([0.5, 0.5, 0.5, 1.0, -1.0, 2.0, 2.0])
    y = np.array([1, 0, 1, 0, 1, 1, 0])
    qid = np.array([0, 0, 0, 1, 1, 2, 2])
    out = torch.tensor(s[:, None], requires_grad=True)
    _loss(Recipe(), out, torch.tensor(y[:, None], dtype=torch.float64), qid, 1).backward()
    r = aprank.infer_batch(s, y, qid)
    np.testing.assert_allclose(out.grad[:, 0].numpy(), (r.coef - r.truth_coef) / 3)


def test_a_warm_start_trains_cross_entropy_first():
    out = torch.tensor([[0.3], [0.3]], dtype=torch.float64, requires_grad=True)
    target = torch.tensor([[1.0], [0.0]], dtype=torch.float64)
    _loss(Recipe(warm_steps=5), out, target, None, step=5).backward()
    np.testing.assert_allclose(out.grad[:, 0].numpy(), (expit(0.3) - np.array([1, 0])) / 2)
    out.grad = None
    _loss(Recipe(warm_steps=5), out, target, None, step=6).backward()
    r = aprank.infer_batch(np.array([0.3, 0.3]), np.array([1, 0]), np.zeros(2, np.int64))
    np.testing.assert_allclose(out.grad[:, 0].numpy(), r.coef - r.truth_coef)


@pytest.mark.parametrize("recipe", [Recipe(batch=16), Recipe(loss="ce", batch=16,
                                                              one_per_row=True)])
def test_fit_network_scores_every_evaluation_part_after_every_budget(recipe):
    """Also where a row's minibatches mostly hold no positive (its third row has one)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    Y = np.column_stack([X[:, 0] > 0.5, X[:, 1] > 0.5, np.arange(120) == 7]).astype(np.int64)
    args = ({"weight_decay": 1e-4}, X, Y, None, [X[:7], X[:3]], 3, 1)
    got = fit_network(recipe, *args, budgets=(2, 5))
    assert list(got) == [2, 5]
    assert [a.shape for a in got[5]] == [(7, 3), (3, 3)]
    again = fit_network(recipe, *args, budgets=(2, 5))
    np.testing.assert_array_equal(got[5][0], again[5][0])
    assert not np.array_equal(got[2][0], got[5][0])


def test_a_grid_sets_the_recipes_hinge_weight():
    """{"mix": 0} trains exactly cross-entropy (same minibatches, same seed); another weight
    trains something else."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 3))
    Y = (X[:, :2] > 0.3).astype(np.int64)
    args = (X, Y, None, [X], 0, 1)
    ce = fit_network(Recipe(loss="ce"), {"weight_decay": 1e-4}, *args, budgets=(4,))
    mixed = {m: fit_network(Recipe(loss="ce+ap"), {"mix": m}, *args, budgets=(4,))
             for m in (0.0, 1.0)}
    np.testing.assert_array_equal(mixed[0.0][4][0], ce[4][0])
    assert not np.array_equal(mixed[1.0][4][0], ce[4][0])
