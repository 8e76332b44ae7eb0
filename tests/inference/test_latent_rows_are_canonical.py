"""Where the latent objective leaves the choice of a bag's row open, every algorithm reports
the same, canonical rows and the same value."""
import numpy as np
import pytest

import aprank
from aprank.inference import LatentProblem


def _canonical_rows(problem, scores, result):
    """The rows the latent kind reports: per bag, its known row; else its best row (highest
    score, lowest index among equal scores) unless its coefficient in the loss-augmented term
    is negative (latent-ssvm only), then its worst row (lowest score, lowest index)."""
    bags = problem.bags
    best = bags.best_rows(scores)
    worst = bags.best_rows(scores, lowest=True)
    coef_per_bag = np.zeros(bags.n_bags)
    np.add.at(coef_per_bag, bags.inverse, result.coef)
    rows = np.where(coef_per_bag < 0, worst, best) if problem.loss.name == "latent-ssvm" \
        else np.where(bags.is_pos, problem.impute(scores), best)
    return rows


def test_latent_rows_and_value_do_not_depend_on_the_algorithm():
    # the negative bag sits below the positive, so its row drops out of the objective: both
    # algorithms report its best row (row 2) and the same value
    for algorithm in ("latent-ap", "brute"):
        r = aprank.infer([1.0, -1.0, 0.0], [1, 0, 0], loss="latent-ap", bags=[0, 1, 1],
                         algorithm=algorithm)
        assert r.h.tolist() == [0, 2], algorithm
        assert r.value == pytest.approx(1.0, abs=1e-15) and r.objective == pytest.approx(0.0)
    # random instances with ties and known rows: every exact algorithm reports the same rows
    # and value, and every algorithm (the greedy too) reports the canonical rows
    n_free_below = 0
    for trial in range(300):
        inst = aprank.checks.random_instance("latent", 25, trial)
        for loss in ("latent-ap", "latent-ssvm"):
            problem = LatentProblem(inst.labels, loss, bags=inst.bags, h=inst.h)
            results = {a: problem.solve_one(inst.scores, a)
                       for a in aprank.algorithms(loss=loss).names()}
            for name, r in results.items():
                canonical = _canonical_rows(problem, inst.scores, r)
                assert r.h.tolist() == canonical.tolist(), (loss, name, inst.description)
            if loss == "latent-ap":
                fast, slow = results["latent-ap"], results["brute"]
                assert fast.h.tolist() == slow.h.tolist(), inst.description
                assert fast.value == pytest.approx(slow.value, rel=1e-12, abs=1e-12)
                below = ~problem.bags.is_pos & (fast.ranks == problem.P + 1)
                n_free_below += int((below & (problem.bags.counts > 1)
                                     & (problem.bags.known < 0)).sum())
    assert n_free_below > 50      # negative bags of free rows below every positive: common
