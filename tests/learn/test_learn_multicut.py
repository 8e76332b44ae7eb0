"""solver="multi-cut": OCAS with the risk's separate parts (queries of AP / NDCG,
samples of the 0-1 loss) cut separately, each block of parts with its own slack. The objective,
the tolerance and the gap are the plain cutting plane's; the model only grows tighter. The
objectives of the estimators against the plain loop, and warm starts and C paths, are checked
with OCAS's in tests/learn/test_learn_ocas.py."""
import copy
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from aprank.learn import APSVM, APSVMAppx, BinarySVM, LatentAPSVM, cutting_plane
from aprank.models import RankingModel
from aprank_support.synthetic import mil

TOL = 1e-3


def _queries(digits, n=600, per=60):
    X, y = digits
    return np.c_[X[:n], np.ones(n)], y[:n] == 8, np.repeat(np.arange(n // per), per)


MODELS = {   # (loss, algorithm, with qid)
    "ap": ("ap", "qs", True), "ndcg": ("ndcg", "qs", True),
    "zero-one": ("zero-one", "zero-one", True),
    "zero-one, one query": ("zero-one", "zero-one", False),
}


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("n_blocks", [2, 3, 16, 1000])
def test_the_parts_sum_to_the_cut_and_bound_their_blocks(digits, name, n_blocks):
    loss, algorithm, with_qid = MODELS[name]
    X, y, qid = _queries(digits)
    model = RankingModel(X, y, loss, qid=qid if with_qid else None, algorithm=algorithm)
    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(scale=0.1, size=(2, X.shape[1]))
    split = model.split_risk(n_blocks)
    cut1, G1, b1 = split.most_violated(w1)
    _, G2, b2 = split.most_violated(w2)
    units = 10 if loss != "zero-one" else 600
    assert G1.shape == (min(n_blocks, units), X.shape[1]) == (split.n_parts, X.shape[1])
    # the parts sum to the cut that most_violated forms on its own (one product X'c)
    whole = model.most_violated(w1)
    np.testing.assert_allclose(G1.sum(0), whole.g, rtol=1e-10, atol=1e-13)
    assert b1.sum() == pytest.approx(whole.b, rel=1e-12)
    assert cut1.violation == pytest.approx(whole.violation, rel=1e-12)
    np.testing.assert_allclose((b1 - G1 @ w1).sum(), cut1.violation, rtol=1e-9, atol=1e-12)
    # each part is a cut of its block's risk: at w2, w1's part is at most w2's (the block's
    # risk there, the maximum over the block's outputs)
    assert np.all(b1 - G1 @ w2 <= b2 - G2 @ w2 + 1e-12)
    assert np.all(b2 - G2 @ w2 >= -1e-12)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("sparse", [False, True])
def test_parts_from_one_inference_equal_the_split_cut(digits, name, sparse):
    """The split forms the cut and its parts from one inference, g the parts' sum, by one
    product per block (many rows count) or over the counting rows only (few, at a fitted w):
    both equal a direct sum over each block's samples of (c*_i - c_i) x_i / queries used."""
    loss, algorithm, with_qid = MODELS[name]
    X, y, qid = _queries(digits)
    q = qid if with_qid else None
    model = RankingModel(sp.csr_matrix(X) if sparse else X, y, loss, qid=q, algorithm=algorithm)
    fitted = cutting_plane(model, 100.0).w
    for w in (np.random.default_rng(1).normal(scale=0.1, size=X.shape[1]), fitted):
        cut, G, b = model.split_risk(16).most_violated(w)
        whole = model.most_violated(w)
        block, k = model._unit_blocks(16)
        diff = (model.problem.truth_coef - whole.result.coef) / model.n_used
        reference = np.zeros((k, X.shape[1]))
        np.add.at(reference, block[diff != 0], diff[diff != 0, None] * X[diff != 0])
        np.testing.assert_allclose(G, reference, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(cut.g, whole.g, rtol=1e-10, atol=1e-13)
        assert (cut.b, cut.violation) == pytest.approx((whole.b, whole.violation), rel=1e-12)
        assert b.sum() == pytest.approx(whole.b, rel=1e-12)
    if loss == "zero-one":
        # a fitted w flips few samples: the branch over the counting rows only ran
        assert 4 * np.count_nonzero(diff) < diff.size


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sparse_block_sums_take_either_index_width_and_refuse_a_broken_csr(digits, index_dtype):
    """The compiled block sums of sparse X equal the dense product for CSR index arrays of
    either width; index arrays out of range are refused before the unchecked pass reads
    them."""
    X, y, qid = _queries(digits)
    Xs = sp.csr_matrix(X)
    Xs.indices, Xs.indptr = Xs.indices.astype(index_dtype), Xs.indptr.astype(index_dtype)
    sparse = RankingModel(Xs, y, "ap", qid=qid, algorithm="qs")
    assert sparse.X.indices.dtype == index_dtype
    dense = RankingModel(X, y, "ap", qid=qid, algorithm="qs")
    w = np.random.default_rng(2).normal(scale=0.1, size=X.shape[1])
    np.testing.assert_allclose(sparse.split_risk(16).most_violated(w)[1],
                               dense.split_risk(16).most_violated(w)[1], rtol=1e-12, atol=1e-15)
    broken = RankingModel(Xs.copy(), y, "ap", qid=qid, algorithm="qs")
    broken.X.indices[0] = X.shape[1]       # a column past the last
    with pytest.raises(ValueError, match="not a valid CSR"):
        broken.split_risk(16)


def test_a_risk_that_does_not_split_gives_no_parts(digits):
    X, y, qid = _queries(digits)
    one_query = RankingModel(X, y, "ap", algorithm="qs")
    weighted = RankingModel(X, y, "zero-one", qid=qid, algorithm="zero-one",
                            sample_weight=np.linspace(0.5, 2.0, y.size))
    for model in (one_query, weighted):
        assert model.split_risk(16) is None


def _fits(make, *args, solvers, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return [make(solver=s).fit(*args, **kwargs) for s in solvers]


def test_multi_cut_is_ocas_where_the_risk_does_not_split(digits):
    X, y = digits
    ocas, multi = _fits(lambda solver: APSVM(C=10.0, solver=solver), X[:400], y[:400] == 3,
                        solvers=("ocas", "multi-cut"))
    assert multi.n_iter_ == ocas.n_iter_
    np.testing.assert_array_equal(multi.coef_, ocas.coef_)


def test_multi_cut_history_gap_is_true_and_best_point_monotone(digits):
    X, y, qid = _queries(digits)
    model = RankingModel(X, y, "zero-one", qid=qid, algorithm="zero-one")
    res = cutting_plane(model, 1e3, solver="multi-cut")
    assert res.converged
    primal = [h["primal"] for h in res.history]
    assert all(b <= a for a, b in zip(primal, primal[1:]))
    # every dual is a lower bound of the optimum, which the plain loop's primal bounds above
    plain = cutting_plane(model, 1e3, solver="cutting-plane", max_iter=5000)
    assert max(h["dual"] for h in res.history) <= plain.primal + 1e-9
    assert res.primal == pytest.approx(0.5 * res.w @ res.w
                                       + 1e3 * model.most_violated(res.w).violation)
    assert np.unique(res.working_set.block).size > 1 and res.working_set.parts == 16


def test_working_sets_of_other_parts_are_not_mixed(digits):
    """A 1-slack working set cuts the whole risk, a multi-cut one its blocks: handed to the
    other kind of loop, its soft cuts are dropped (its hard ones kept), never misread."""
    X, y, qid = _queries(digits)
    model = RankingModel(X, y, "ap", qid=qid, algorithm="qs")
    C = 100.0
    cold = cutting_plane(model, C, solver="cutting-plane")
    ocas = cutting_plane(model, C, solver="ocas")
    # cutting_plane grows the working set it is given: each run here gets a copy
    from_whole = cutting_plane(model, C, solver="multi-cut",
                               working_set=copy.deepcopy(ocas.working_set))
    assert from_whole.working_set.parts == 10
    multi = cutting_plane(model, C, solver="multi-cut")
    from_parts = cutting_plane(model, C, solver="ocas",
                               working_set=copy.deepcopy(multi.working_set))
    assert from_parts.working_set.parts == 1
    for res in (from_whole, from_parts):
        assert res.converged and abs(res.primal - cold.primal) <= TOL
    # the same kind is carried: a converged set converges at once
    again = cutting_plane(model, C, solver="multi-cut", working_set=multi.working_set)
    assert again.converged and again.n_iter <= 2


def test_multi_cut_working_set_pickles(digits):
    X, y, qid = _queries(digits)
    res = cutting_plane(RankingModel(X, y, "ndcg", qid=qid, algorithm="qs"), 10.0,
                        solver="multi-cut")
    ws = pickle.loads(pickle.dumps(res.working_set))
    np.testing.assert_array_equal(ws.block, res.working_set.block)
    assert ws.parts == res.working_set.parts


def test_multi_cut_with_hard_constraints_and_cccp(digits):
    # APSVMAppx's problem on one set of hard rows (the estimator's first stage picks them by
    # a BinarySVM whose solver differs within tol, so its two fits are different problems)
    X, y = digits
    X, y = np.c_[X[:500], np.ones(500)], y[:500] == 8
    qid = np.repeat(np.arange(10), 50)
    signs = np.where(y, 1.0, -1.0)
    # BinarySVM's C is per sample: 1 / n is the structural C = 1 these rows were chosen at
    margins = signs * BinarySVM(C=1.0 / 500).fit(X[:, :-1], y).decision_function(X[:, :-1])
    easy = margins > 1.0
    model = RankingModel(X[~easy], y[~easy], "ap", qid=qid[~easy], algorithm="qs")
    plain, multi = [cutting_plane(model, 10.0, hard=X[easy] * signs[easy, None], solver=s)
                    for s in ("cutting-plane", "multi-cut")]
    assert easy.sum() >= 50 and plain.converged and multi.converged
    assert (signs[easy] * (X[easy] @ multi.w)).min() >= 1 - TOL
    assert abs(multi.primal - plain.primal) <= TOL and multi.working_set.parts == 10
    appx = APSVMAppx(C=100.0, keep=1.0, solver="multi-cut").fit(X[:, :-1], y, qid=qid)
    assert appx.converged_ and appx.binary_.solver == "multi-cut" and appx.easy_.any()
    XL, yL, bags, _ = mil()
    latent = LatentAPSVM(C=10.0, solver="multi-cut").fit(XL, yL, bags=bags)
    assert latent.converged_ and all(h["inner_converged"] for h in latent.cccp_history_)
