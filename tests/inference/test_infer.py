"""The public inference API: input forms, bad input, and what the caller gets back."""
import threading
import warnings

import numpy as np
import pytest

import aprank
from aprank import validation
from aprank.inference import RankingProblem
from aprank.losses import NDCG, ZeroOne
from aprank_support.synthetic import one_query

pytestmark = pytest.mark.min_versions   # also run against the declared minimum versions (.ci/run)

RANKING = [(a.name, loss) for loss in ("ap", "ndcg") for a in aprank.algorithms(loss=loss)]
ALL = RANKING + [(a.name, "zero-one") for a in aprank.algorithms(loss="zero-one")]


def exact_algorithms(loss):
    return [a.name for a in aprank.algorithms(loss=loss, exact=True)]


def instance(n=12, seed=0):
    """One query of n samples, a third of them relevant."""
    return one_query(n, n // 3, seed)


@pytest.mark.parametrize("name,loss", ALL)
def test_dtypes_strides_readonly_give_the_same_answer(name, loss):
    scores, labels = instance()
    ref = aprank.infer(scores, labels, loss=loss, algorithm=name)
    wide = np.zeros((scores.size, 3))
    wide[:, 1] = scores
    readonly = scores.copy()
    readonly.setflags(write=False)
    for s in (wide[:, 1], readonly, scores.astype(np.longdouble)):
        res = aprank.infer(s, labels, loss=loss, algorithm=name)
        np.testing.assert_array_equal(res.ranks, ref.ranks)
        assert res.objective == ref.objective
    for y in (labels.astype(int), np.where(labels, 1, -1), labels.astype(np.float32),
              labels.astype(np.uint8)):
        res = aprank.infer(scores, y, loss=loss, algorithm=name)
        np.testing.assert_array_equal(res.ranks, ref.ranks)
    # float32 scores are ranked as their float64 values
    s32 = scores.astype(np.float32)
    res = aprank.infer(s32, labels, loss=loss, algorithm=name)
    assert res.objective == aprank.infer(s32.astype(float), labels, loss=loss,
                                         algorithm=name).objective
    # integer scores
    res = aprank.infer(np.arange(12)[::-1], labels, loss=loss, algorithm=name)
    assert res.ranks.dtype == np.int64 and res.coef.dtype == np.float64


@pytest.mark.parametrize("loss, algorithm", [("ap", None), ("ap", "select"), ("ap", "auto"),
                                             ("ndcg", None), ("ndcg", "ndcg-greedy"),
                                             ("ap", "yue"), ("ndcg", "auto")])
def test_infer_returns_what_the_problem_built_by_hand_returns_bit_for_bit(loss, algorithm):
    """Small float64 queries, strided views and every label encoding: ``infer`` is
    ``RankingProblem(labels, loss).solve_one`` with the algorithm it resolves (qs when none is
    given), ranks, coefficients, loss and objective bit for bit."""
    rng = np.random.default_rng(3)
    name = algorithm or "qs"
    for trial in range(200):
        n = int(rng.integers(1, 60))
        labels = rng.random(n) < rng.uniform(0.05, 0.9)
        labels[rng.integers(n)] = True
        scores = np.round(rng.standard_normal(2 * n), int(rng.integers(0, 3)))
        scores = scores[::2] if trial % 3 == 0 else scores[:n]      # strided views too
        given = [labels, labels.astype(np.int64), np.where(labels, 1, -1)][trial % 3]
        got = aprank.infer(scores, given, loss=loss, algorithm=algorithm)
        want = RankingProblem(labels, loss).solve_one(scores, name)
        assert got.algorithm == want.algorithm == name
        assert got.ranks.tobytes() == want.ranks.tobytes()
        assert got.coef.tobytes() == want.coef.tobytes()
        assert (got.loss, got.objective, got.labelling) == (want.loss, want.objective, None)


@pytest.mark.parametrize("name,loss", ALL)
def test_caller_arrays_are_not_modified(name, loss):
    scores, labels = instance(n=16 if name == "brute" else 3000, seed=3)
    s0, y0 = scores.copy(), labels.copy()
    aprank.infer(scores, labels, loss=loss, algorithm=name)
    np.testing.assert_array_equal(scores, s0)
    np.testing.assert_array_equal(labels, y0)


@pytest.mark.parametrize("name,loss", ALL)
def test_result_shapes_and_ground_truth(name, loss):
    # perfectly separated scores with a wide margin: the ground truth is most violated
    labels = np.array([1, 0, 1, 0, 0, 1, 0], dtype=bool)
    scores = np.where(labels, 100.0, -100.0)
    res = aprank.infer(scores, labels, loss=loss, algorithm=name)
    assert res.algorithm == name
    assert res.loss == 0.0 and res.objective == 0.0
    if loss != "zero-one":
        np.testing.assert_array_equal(res.ranks, np.where(labels, 1, 4))
        np.testing.assert_allclose(res.coef, np.where(labels, 1 / 3, -1 / 4))


@pytest.mark.parametrize("name,loss", ALL)
def test_no_negatives(name, loss):
    res = aprank.infer([0.3, -1.0, 2.0], [1, 1, 1], loss=loss, algorithm=name)
    assert res.loss == 0.0 and res.objective == 0.0
    np.testing.assert_array_equal(res.ranks, [1, 1, 1])


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_no_positives_is_an_error(loss):
    with pytest.raises(ValueError, match="without positive"):
        aprank.infer([0.1, 0.2], [0, 0], loss=loss)


def test_zero_one_without_positives_needs_explicit_J():
    with pytest.raises(ValueError, match="without positive"):
        aprank.infer([0.1, 0.2], [0, 0], loss="zero-one", algorithm="zero-one")
    res = aprank.infer([0.1, 0.2], [0, 0], loss=ZeroOne(J=1.0), algorithm="zero-one")
    assert res.loss == 1.0   # both negatives have margin below 1 and are flipped


@pytest.mark.parametrize("bad,where", [(np.nan, 2), (np.inf, 0), (-np.inf, 4)])
def test_non_finite_scores_name_the_first_bad_index(bad, where):
    scores = np.zeros(6)
    scores[where] = bad
    scores[5] = np.nan
    with pytest.raises(ValueError, match=rf"scores\[{where}\]"):
        aprank.infer(scores, [1, 0, 1, 0, 1, 0])


@pytest.mark.parametrize("scores,labels,match", [
    ([], [], "empty"),
    ([1.0, 2.0], [1, 0, 1], "3 entries"),
    ([[1.0, 2.0]], [[1, 0]], "1-D"),
    ([1.0, 2.0], [2, 0], "labels"),
    ([1.0, 2.0, 3.0], [1, 0, -1], "mix 0 and -1"),
    (["a", "b"], [1, 0], "real numbers"),
    ([1.0, 2.0], ["x", "y"], "labels"),
    ([1.0 + 1j, 2.0], [1, 0], "real numbers"),
])
def test_bad_input(scores, labels, match):
    with pytest.raises(ValueError, match=match):
        aprank.infer(scores, labels)


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(ValueError, match="qs"):
        aprank.infer([1.0, 0.0], [1, 0], algorithm="quick")
    with pytest.raises(ValueError, match="ndcg"):
        aprank.infer([1.0, 0.0], [1, 0], loss="map")


def test_unsupported_loss_is_not_implemented():
    with pytest.raises(NotImplementedError, match="yue"):
        aprank.infer([1.0, 0.0], [1, 0], loss="ndcg", algorithm="yue")
    with pytest.raises(NotImplementedError):
        aprank.infer([1.0, 0.0], [1, 0], loss="zero-one", algorithm="qs")


def test_brute_refuses_large_inputs():
    scores, labels = instance(n=17)
    with pytest.raises(ValueError, match="16 samples"):
        aprank.infer(scores, labels, algorithm="brute")


def test_ndcg_discount_validation():
    n = 50
    good = 1.0 / np.log2(2.0 + np.arange(n))
    scores, labels = instance(n=n)
    res = aprank.infer(scores, labels, loss=NDCG(discount=good), algorithm="qs")
    assert res.objective == pytest.approx(aprank.infer(scores, labels, loss="ndcg").objective,
                                          rel=1e-12)
    with pytest.raises(ValueError, match="convex"):
        # the discount of Chakrabarti et al. (Mohapatra et al. 2018, Remark 1): 1, 1, 1/log2(i)
        NDCG(discount=np.r_[1.0, 1.0, 1.0 / np.log2(np.arange(3, n + 1))])
    with pytest.raises(ValueError, match="non-increasing"):
        NDCG(discount=np.r_[1.0, 0.5, 0.6])
    with pytest.raises(ValueError, match="non-negative"):
        NDCG(discount=np.r_[1.0, 0.0, -1.0])
    with pytest.raises(ValueError, match="finite"):
        NDCG(discount=np.r_[1.0, np.nan])
    with pytest.raises(ValueError, match="a query has 50 samples"):
        aprank.infer(scores, labels, loss=NDCG(discount=good[:20]), algorithm="qs")
    # the discount is copied: editing the caller's array later changes nothing
    mine = good.copy()
    loss = NDCG(discount=mine)
    mine[:] = 1.0
    assert aprank.infer(scores, labels, loss=loss).objective == res.objective


# ------------------------------------------ masked arrays, query ids, wide integers, bool bytes
@pytest.mark.parametrize("which", ["scores", "labels", "qid"])
def test_masked_entries_are_refused(which):
    args = {"scores": np.array([0.5, 0.2, 0.9, 0.1]), "labels": np.array([1, 0, 1, 0]),
            "qid": np.array([0, 0, 1, 1])}
    args[which] = np.ma.array(args[which], mask=[0, 1, 0, 0])
    with pytest.raises(ValueError, match="masked"):
        aprank.infer_batch(args["scores"], args["labels"], args["qid"])
    if which != "qid":
        with pytest.raises(ValueError, match="masked"):
            aprank.infer(args["scores"][:2], args["labels"][:2])


def test_a_masked_array_with_nothing_masked_is_its_data():
    s = np.ma.array([0.5, 0.2, 0.9], mask=False)
    assert aprank.infer(s, [1, 0, 0]).objective == aprank.infer(s.data, [1, 0, 0]).objective


@pytest.mark.parametrize("qid", [[0.0, np.nan, np.nan, 1.0],
                                 np.array([0, float("nan"), float("nan"), 1], dtype=object)])
def test_nan_query_ids_are_refused(qid):
    with pytest.raises(ValueError, match="NaN"):
        aprank.infer_batch([0.3, 0.2, 0.1, 0.4], [1, 0, 1, 1], qid)


def test_mixed_type_query_ids_are_a_value_error_that_says_so():
    qid = np.array([1, "a", 1, "a"], dtype=object)
    with pytest.raises(ValueError, match="mixes ids of types"):
        aprank.infer_batch([0.3, 0.2, 0.1, 0.4], [1, 0, 1, 0], qid)


def test_int64_scores_that_float64_rounds_warn():
    s = np.array([2 ** 60 + 1, 2 ** 60, 0], dtype=np.int64)
    with pytest.warns(validation.PrecisionWarning, match="beyond 2\\^53"):
        aprank.infer(s, [0, 1, 0])
    for exact in (np.array([2 ** 60, -2 ** 63, 3], np.int64), np.array([2 ** 53, 1], np.int64),
                  np.array([2 ** 63], np.uint64)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            validation.as_scores(exact)
    with pytest.warns(validation.PrecisionWarning):
        validation.as_scores(np.array([2 ** 64 - 1], np.uint64))
    with pytest.warns(validation.PrecisionWarning):
        validation.as_scores(np.array([2 ** 63 - 1], np.int64))


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero-one"])
def test_bool_labels_with_other_bytes_are_read_by_truth_value(loss):
    raw = np.array([1, 0, 2, 0, 0, 255, 0, 1], np.uint8)
    odd = raw.view(bool)
    clean = raw != 0
    s = np.array([0.3, 0.9, -0.2, 0.5, 0.1, -0.7, 0.4, -0.1])
    for algorithm in exact_algorithms(loss):
        r = aprank.infer(s, odd, loss=loss, algorithm=algorithm)
        want = aprank.infer(s, clean, loss=loss, algorithm=algorithm)
        assert r.objective == want.objective and r.loss == want.loss
        np.testing.assert_array_equal(r.ranks, want.ranks)
        assert r.ranks.min() >= 1
    np.testing.assert_array_equal(raw, [1, 0, 2, 0, 0, 255, 0, 1])     # untouched
    assert validation.as_labels(odd, 8).view(np.uint8).max() == 1


def test_infer_is_thread_safe():
    scores, labels = instance(n=200_000, seed=5)
    expected = aprank.infer(scores, labels, algorithm="qs")
    results = [None] * 4

    def work(i):
        results[i] = aprank.infer(scores, labels, algorithm="qs")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r.ranks, expected.ranks)
        assert r.objective == expected.objective


def test_algorithms_table():
    table = aprank.algorithms()
    text = str(table)
    for a in table:
        assert a.name in text
    assert ({"yue", "ndcg-greedy", "search", "select", "qs", "zero-one", "brute"}
            <= {a.name for a in table})
    # every built-in algorithm is exact but appendix A's greedy for the latent SSVM
    assert [a.name for a in table if not a.exact] == ["latent-greedy"]
