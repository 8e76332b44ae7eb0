"""aprank.crosscheck and ``python -m aprank check``: agreement, and that they catch errors."""
import subprocess
import sys

import numpy as np
import pytest

import aprank
from aprank.__main__ import main
from aprank_support.synthetic import one_query


def greedy_in_python(pos_scores, neg_scores, loss):
    """A user algorithm written from the paper: Yue's greedy with the loss's increments."""
    P, N = pos_scores.size, neg_scores.size
    s_pos = np.sort(pos_scores)[::-1]
    order = np.lexsort((np.arange(N), -neg_scores))
    ranks = np.empty(N, dtype=np.int64)
    i = np.arange(1, P + 1)
    for j, k in enumerate(order, start=1):
        steps = 2 * (s_pos - neg_scores[k]) / (P * N) + loss.increment(j, i, P, N)
        f = np.r_[0.0, np.cumsum(steps)]
        ranks[k] = 1 + np.flatnonzero(f >= f.max() - 1e-15)[-1]
    return ranks


def always_last(pos_scores, neg_scores, loss):
    return np.full(neg_scores.size, pos_scores.size + 1)


@pytest.fixture
def registered():
    names = []

    def add(name, func, exact):
        aprank.register(name, func, losses=("ap", "ndcg"), exact=exact, complexity="O(PN)")
        names.append(name)

    yield add
    for name in names:
        aprank.unregister(name)


@pytest.mark.parametrize("simd", [True, False], ids=["simd", "portable"])
def test_builtin_algorithms_agree(simd):
    previous = aprank.set_simd(simd)
    try:
        report = aprank.crosscheck(("ap", "ndcg", "zero-one"), n_trials=150, max_n=3000, seed=11)
    finally:
        aprank.set_simd(previous)
    assert report.ok, str(report)
    assert report.comparisons > 500


def test_user_algorithm_takes_part(registered):
    registered("py-greedy", greedy_in_python, exact=True)
    assert "py-greedy" in str(aprank.algorithms())
    report = aprank.crosscheck(n_trials=60, max_n=300)
    assert "py-greedy" in report.algorithms["ap"]
    assert report.ok, str(report)


def test_wrong_exact_algorithm_is_caught_with_a_reproducer(registered):
    registered("wrong", always_last, exact=True)
    report = aprank.crosscheck(n_trials=40, max_n=300)
    assert not report.ok
    bad = report.disagreements[0]
    assert bad.algorithm == "wrong" and "objective" in bad.what
    # the reproducer runs and shows the same objective
    namespace = {"aprank": aprank, "np": np}
    assert "aprank.infer" in bad.reproducer
    exec(bad.reproducer.replace("aprank.infer(", "result = aprank.infer("), namespace)
    assert namespace["result"].algorithm == "wrong"
    assert main(["check", "--n-trials", "20", "--max-n", "100"]) == 1


def test_approximate_algorithm_is_held_to_its_guarantee(registered):
    registered("lazy", always_last, exact=False)     # a valid ranking: never above the optimum
    report = aprank.crosscheck(n_trials=40, max_n=300)
    assert report.ok, str(report)


def test_register_rejects_bad_declarations(registered):
    with pytest.raises(ValueError, match="already registered"):
        aprank.register("qs", greedy_in_python, losses="ap", exact=True)
    with pytest.raises(ValueError, match="ranking losses"):
        aprank.register("x", greedy_in_python, losses="zero-one", exact=True)
    with pytest.raises(ValueError, match="built in"):
        aprank.unregister("qs")
    registered("bad-output", lambda p, n, loss: np.zeros(n.size, dtype=int), exact=True)
    with pytest.raises(ValueError, match="outside"):
        aprank.infer([1.0, 0.0, 2.0], [1, 0, 0], algorithm="bad-output")


def test_check_command_exits_zero():
    out = subprocess.run([sys.executable, "-m", "aprank", "check", "--n-trials", "30",
                          "--max-n", "500"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 disagreements" in out.stdout


@pytest.mark.parametrize("simd", [True, False], ids=["simd", "portable"])
@pytest.mark.parametrize("P,N", [(5, 50_000), (60, 20_000), (600, 30_000)])
def test_large_instances_agree(P, N, simd):
    """Sizes where the sampled pivots and the vector partitions are used, in every regime."""
    previous = aprank.set_simd(simd)
    rng = np.random.default_rng(P + N)
    try:
        for shift, ties in [(1.0, None), (6.0, None), (-1.0, None), (3.0, 0), (6.0, 1)]:
            scores, labels = one_query(P + N, P, rng, shift, ties)
            for loss in ("ap", "ndcg"):
                results = {a.name: aprank.infer(scores, labels, loss=loss, algorithm=a.name)
                           for a in aprank.algorithms(loss=loss, exact=True) if a.name != "brute"}
                ref = results.pop("qs")
                for name, res in results.items():
                    assert (abs(res.objective - ref.objective)
                            <= 1e-12 * max(1, abs(ref.objective))), (loss, name, shift, ties)
                    if ties is None:
                        np.testing.assert_array_equal(res.ranks, ref.ranks,
                                                      err_msg=f"{loss} {name}")
    finally:
        aprank.set_simd(previous)


def test_a_loss_only_the_oracle_serves_is_skipped_beyond_its_size_not_an_index_error():
    from aprank.losses import RankingLoss, register_loss, unregister_loss

    class Bogus(RankingLoss):
        name = "bogus"

        def from_pattern(self, neg_above, P, N):
            return np.asarray(neg_above).sum(axis=-1) / (P * N)

    register_loss(Bogus())
    try:
        report = aprank.crosscheck(("bogus",), n_trials=8, max_n=60)
        assert report.ok and report.skipped > 0
        assert "skipped" in str(report)
    finally:
        unregister_loss("bogus")
    with pytest.raises(ValueError, match="unknown loss"):
        aprank.crosscheck(("no-such-loss",), n_trials=1)


def test_a_failing_user_algorithm_is_a_disagreement_not_an_abort():
    aprank.register("user-wrong-shape", lambda p, n, loss: np.ones(n.size + 1, int), losses="ap",
                    exact=True)
    try:
        report = aprank.crosscheck("ap", n_trials=4, max_n=50)
    finally:
        aprank.unregister("user-wrong-shape")
    bad = [d for d in report.disagreements if d.algorithm == "user-wrong-shape"]
    assert len(bad) == 4 and all("raised ValueError" in d.what for d in bad)
    assert all(d.algorithm == "user-wrong-shape" for d in report.disagreements)
