"""Interleaved queries of at least ``RankingProblem.gather_min`` samples run on gathered
copies of the scores and labels: the same results, bit for bit, as the driver reading every
sample through the groups' order, on both sides of the switch."""
import numpy as np
import pytest

from aprank.inference import RankingProblem


def _interleaved(n_queries, docs, seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), docs)
    labels = rng.random(qid.size) < 0.2
    labels[::docs] = True
    scores = np.round(rng.standard_normal(qid.size) + labels, 1)      # ties too
    p = rng.permutation(qid.size)
    return scores[p], labels[p], qid[p]


@pytest.mark.parametrize("loss,algorithm", [("ap", "qs"), ("ap", "yue"), ("ndcg", "qs"),
                                            ("zero-one", None)])
@pytest.mark.parametrize("sparse", [False, True])
def test_gathered_equals_through_order(loss, algorithm, sparse):
    n_queries, docs = (RankingProblem.gather_min // 100) + 7, 100       # above the switch
    scores, labels, qid = _interleaved(n_queries, docs)
    if sparse:
        qid = qid * (2 ** 40) + 5                                        # the argsort's groups
    results = []
    for gather_min in (0, RankingProblem.gather_min, qid.size + 1):
        problem = RankingProblem(labels, loss, qid=qid)
        problem.gather_min = gather_min
        results.append(problem.solve(scores, algorithm))
    for r in results[1:]:
        for field in ("ranks", "coef", "truth_coef", "loss", "objective", "labelling"):
            assert np.array_equal(getattr(r, field), getattr(results[0], field)), field


def test_gathered_arrays_are_the_groups():
    scores, labels, qid = _interleaved(50, 9, seed=1)
    problem = RankingProblem(labels, "ap", qid=qid)
    order = problem.order
    assert np.array_equal(problem.grouped_is_pos, labels[order].view(np.uint8))
    assert np.array_equal(problem.slot[order], np.arange(qid.size))
    assert not problem.slot.flags.writeable and not problem.grouped_is_pos.flags.writeable
