"""Problem kinds in the registry, and losses that hand the kernels their own specification:
a loss the kernels do not know is refused clearly, never computed as another one."""
from itertools import permutations

import numpy as np
import pytest

import aprank
from aprank.inference import PairwiseProblem, algorithms, get_algorithm, get_kind, kinds
from aprank.losses import (
    LOSSES,
    NDCG,
    KernelSpec,
    Loss,
    RankingLoss,
    get_loss,
    register_loss,
    unregister_loss,
)


class PrecisionAt2(RankingLoss):
    """1 - precision at 2, a ranking loss of our own: only its pattern form is needed here."""

    name = "p@2"

    def from_pattern(self, neg_above, P, N):
        n = np.asarray(neg_above)
        # the k-th positive is at position k + n_k; count positives in the top 2
        return 1.0 - (np.arange(1, P + 1) + n <= 2).sum(axis=-1) / 2.0


class ClaimsAKernel(PrecisionAt2):
    name = "p@2-claims"

    def kernel_spec(self, n_max, table=False):
        return KernelSpec("p@2")


@pytest.fixture
def p_at_2():
    loss = register_loss(PrecisionAt2())
    yield loss
    unregister_loss("p@2")


def by_permutations(scores, labels, loss):
    """max over every ranking of Delta + w'Psi(R) - w'Psi(R*), from the definitions."""
    s, y = np.asarray(scores, float), np.asarray(labels, bool)
    P, N = int(y.sum()), int((~y).sum())
    best = -np.inf
    for perm in permutations(range(s.size)):
        order = np.array(perm)
        place = np.argsort(order)
        pos_places = np.sort(place[y])
        pattern = pos_places - np.arange(P)             # negatives above the k-th positive
        R = np.where(place[y][:, None] < place[~y][None, :], 1.0, -1.0)
        diff = s[y][:, None] - s[~y][None, :]
        value = loss.from_pattern(pattern, P, N) + ((R - 1) * diff).sum() / (P * N)
        best = max(best, float(value))
    return best


def test_an_unknown_ranking_loss_is_refused_by_the_compiled_algorithms(p_at_2):
    scores, labels = np.array([0.3, 1.2, -0.4, 0.9, 0.1]), np.array([1, 0, 1, 0, 0])
    for name in ("qs", "yue", "search", "select", "ndcg-greedy"):
        with pytest.raises(NotImplementedError, match="does not serve the loss 'p@2'"):
            aprank.infer(scores, labels, loss="p@2", algorithm=name)
    with pytest.raises(NotImplementedError, match="do not know the loss 'p@2'"):
        p_at_2.kernel_spec(5)
    # the oracle works from the loss's definition, and is right
    res = aprank.infer(scores, labels, loss="p@2", algorithm="brute")
    assert res.objective == pytest.approx(by_permutations(scores, labels, p_at_2), abs=1e-12)
    assert aprank.algorithms(loss="p@2").names() == ["brute"]


def test_the_driver_refuses_a_kernel_code_it_does_not_know():
    register_loss(ClaimsAKernel())
    try:
        aprank.register("py-last", lambda p, n, loss: np.full(n.size, p.size + 1),
                        losses="p@2-claims", exact=False)
        try:
            with pytest.raises(ValueError, match="compiled kernels compute the losses"):
                aprank.infer([0.3, 1.2, -0.4], [1, 0, 0], loss="p@2-claims", algorithm="py-last")
        finally:
            aprank.unregister("py-last")
    finally:
        unregister_loss("p@2-claims")


def test_user_algorithms_need_a_loss_the_driver_can_finish(p_at_2):
    with pytest.raises(NotImplementedError, match="do not know the loss 'p@2'"):
        aprank.register("py-p2", lambda p, n, loss: np.full(n.size, p.size + 1), losses="p@2",
                        exact=False)
    with pytest.raises(ValueError, match="labelling"):
        aprank.register("py-01", lambda p, n, loss: np.full(n.size, p.size + 1),
                        losses="zero-one", exact=False)


class RankingKindOnly(Loss):
    """Says it is of the ranking kind without being a RankingLoss (no kernel specification)."""

    name = "ranking-kind-only"
    kind = "ranking"


class PairwiseKindOnly(Loss):
    """Says it is of the pairwise kind without being a ZeroOne (no per-sample weights)."""

    name = "pairwise-kind-only"
    kind = "pairwise"


def test_a_loss_of_a_kind_without_the_kinds_loss_type_is_refused_by_name():
    register_loss(RankingKindOnly())
    register_loss(PairwiseKindOnly())
    try:
        with pytest.raises(ValueError, match="subclasses of RankingLoss; 'ranking-kind-only' is "
                                             "a RankingKindOnly"):
            aprank.register("py-kind-only", lambda p, n, loss: np.full(n.size, p.size + 1),
                            losses="ranking-kind-only", exact=False)
        assert "py-kind-only" not in algorithms().names()
        for build in (lambda: PairwiseProblem([1, 0, 0], "pairwise-kind-only"),
                      lambda: aprank.infer([0.3, 1.2, -0.4], [1, 0, 0], loss="pairwise-kind-only",
                                           algorithm="brute")):
            with pytest.raises(ValueError, match="subclass of ZeroOne .*'pairwise-kind-only' is "
                                                 "a PairwiseKindOnly"):
                build()
    finally:
        unregister_loss("ranking-kind-only")
        unregister_loss("pairwise-kind-only")


def test_a_loss_cannot_pose_as_another():
    class MyNDCG(NDCG):
        pass

    class Impostor(RankingLoss):
        name = "ndcg"

    for loss in (MyNDCG(), Impostor()):
        with pytest.raises(ValueError, match="must be a NDCG"):
            aprank.infer([1.0, 0.0], [1, 0], loss=loss)
    class TakesTheNameAP(PrecisionAt2):
        name = "ap"

    with pytest.raises(ValueError, match="already registered"):
        register_loss(TakesTheNameAP())
    with pytest.raises(ValueError, match="built-in"):
        unregister_loss("ap")


def test_crosscheck_covers_a_registered_loss(p_at_2):
    report = aprank.crosscheck("p@2", n_trials=30, max_n=12)
    assert report.ok and report.kinds["p@2"] == "ranking"
    assert report.algorithms["p@2"] == ["brute"]


def test_every_kind_has_an_exact_oracle_serving_all_its_losses():
    assert [k.name for k in kinds()] == ["ranking", "labelling", "topk", "pairwise", "latent"]
    for kind in kinds():
        oracle = get_algorithm(kind.oracle, kind.name)
        assert oracle.exact and oracle.losses is None and oracle.max_samples
        assert kind.losses()
        for loss in kind.losses():
            assert get_loss(loss).kind == kind.name and oracle.supports(get_loss(loss))
        for algo in aprank.algorithms(kind=kind.name):
            assert algo.kind == kind.name
    assert {LOSSES[n].kind for n in LOSSES} == {k.name for k in kinds()}


def test_names_are_looked_up_within_the_loss_kind():
    scores, labels = np.array([0.5, -0.2, 0.1, 0.7]), np.array([1, 0, 0, 1])
    assert aprank.infer(scores, labels, loss="zero-one", algorithm="brute").labelling is not None
    assert aprank.infer(scores, labels, loss="ap", algorithm="brute").labelling is None
    with pytest.raises(ValueError, match="several kinds"):
        get_algorithm("brute")
    with pytest.raises(NotImplementedError, match="'qs' does not serve the loss 'zero-one'"):
        aprank.infer(scores, labels, loss="zero-one", algorithm="qs")
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        aprank.infer(scores, labels, algorithm="nope")
    with pytest.raises(ValueError, match="unknown problem kind"):
        get_kind("graph")
    assert "kind" in str(aprank.algorithms()).splitlines()[0]


def test_reproducers_recreate_their_instances():
    from aprank.checks import make_instance

    instances = get_kind("ranking").instances
    for trial in range(40):
        instance = aprank.checks.random_instance("ranking", 7, trial, 300)
        namespace = {"aprank": aprank, "np": np}
        exec(instances.reproducer(instance, "ap", "qs"), namespace)
        np.testing.assert_array_equal(namespace["scores"], instance.scores)
        np.testing.assert_array_equal(namespace["labels"], instance.labels)
        scores, labels, description = make_instance(7, trial, 300)
        np.testing.assert_array_equal(scores, instance.scores)
        assert description == instance.description


@pytest.mark.parametrize("kind", [k.name for k in kinds()])
def test_every_kinds_reproducer_solves_its_instance(kind):
    """The line a cross-check report prints rebuilds the instance and solves it: the same
    objective as the instance solved directly."""
    instances = get_kind(kind).instances
    loss = get_kind(kind).losses()[0]
    algorithm = get_kind(kind).oracle
    for trial in range(5):
        instance = aprank.checks.random_instance(kind, 3, trial, 12)
        line = instances.reproducer(instance, loss, algorithm)
        namespace = {"aprank": aprank, "np": np}
        head, _, call = line.rpartition("; ")     # the last statement solves
        exec(f"{head}; result = {call}", namespace)
        direct = aprank.checks.solve_instance(instance, loss, algorithm)
        assert namespace["result"].objective == direct.objective
