"""Errors that name the problem, and choices listed in context."""
import warnings

import numpy as np
import pytest

import aprank
from aprank.learn import HOAPSVM, HOBSVM


def _pairs_data(seed=0, n=30, d=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (np.arange(n) % 3 == 0).astype(int)
    groups = np.repeat(np.arange(n // 3), 3)
    return X, y, groups


# ---------------------------------------------------------------- errors that name the problem
def test_hoapsvm_huge_features():
    X, y, groups = _pairs_data()
    for estimator in (HOAPSVM(), HOBSVM()):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # no overflow on the way
            with pytest.raises(ValueError, match="rescale X"):
                estimator.fit(X * 1e300, y, groups=groups)


def test_cstar_unknown_kernel():
    from aprank.learn import CStarPrecisionAtK
    X = np.random.default_rng(0).standard_normal((12, 3))
    Y = (np.arange(36).reshape(12, 3) % 2 == 0).astype(int)
    with pytest.raises(ValueError, match="kernel.*'rbf'"):
        CStarPrecisionAtK(kernel="nope", n_core=1).fit(X, Y)


def test_dask_sparse_input():
    pytest.importorskip("distributed")
    import dask
    import dask.array as da
    import scipy.sparse as sp

    from aprank.dask import DaskAPSVM
    X = np.random.default_rng(0).standard_normal((30, 4))
    y = (np.arange(30) % 3 == 0).astype(int)
    sparse_blocks = da.from_array(sp.csr_matrix(X), chunks=(10, 4), asarray=False)
    with dask.config.set(scheduler="synchronous"):
        for X_sparse in (sparse_blocks, sp.csr_matrix(X)):
            with pytest.raises(TypeError, match="dense"):
                DaskAPSVM(max_iter=5).fit(X_sparse, y)


# --------------------------------------------------------------- choices listed in context
def test_unknown_algorithm_lists_the_loss_algorithms():
    scores, labels = np.array([0.5, -0.2, 0.1, 0.7]), np.array([1, 0, 0, 1])
    with pytest.raises(ValueError, match=r"unknown algorithm 'nope'.*choose one of \[") as info:
        aprank.infer(scores, labels, algorithm="nope")
    message = str(info.value)
    assert "'qs'" in message and "'yue'" in message
    for other in ("'graphcut'", "'cstar'", "'zero-one'", "'latent-greedy'", "'ndcg-greedy'"):
        assert other not in message


@pytest.mark.extras
def test_torch_unknown_loss_lists_accepted_losses():
    torch = pytest.importorskip("torch")
    import aprank.torch
    with pytest.raises(ValueError, match=r"unknown loss 'map'; choose one of \['ap', 'ndcg'\]"):
        aprank.torch.hinge_loss(torch.tensor([1.0, 0.0]), torch.tensor([1, 0]), loss="map")


def test_infer_keyword_typo_names_infer():
    scores, labels = np.array([0.5, -0.2, 0.1, 0.7]), np.array([1, 0, 0, 1])
    with pytest.raises(TypeError, match=r"^infer\(\) got an unexpected keyword argument 'algo' "
                                        r"\(did you mean 'algorithm'\?\)"):
        aprank.infer(scores, labels, algo="qs")
    with pytest.raises(TypeError, match=r"^infer\(\) .* 'interaction'.*the topk kind's options "
                                        r"are \['core', 'interactions'\]"):
        aprank.infer(scores, labels, loss="precision@k", interaction=np.zeros((4, 4)))
    with pytest.raises(TypeError, match=r"^infer_batch\(\) got an unexpected keyword argument"):
        aprank.infer_batch(scores, labels, [0, 0, 1, 1], algo="qs")


def test_ranking_estimator_groups_says_use_qid():
    from aprank.learn import APSVM, APSVMAppx
    X, y, groups = _pairs_data()
    for estimator in (APSVM(), APSVMAppx()):
        with pytest.raises(TypeError, match=r"^" + type(estimator).__name__ +
                           r"\.fit\(\) got an unexpected keyword argument 'groups'; use qid= "
                           r"for queries"):
            estimator.fit(X, y, groups=groups)


def test_no_positive_without_qid_names_the_labels():
    with pytest.raises(ValueError, match=r"undefined without positive samples, and the labels "
                                         r"have no positive sample$"):
        aprank.infer(np.array([0.5, -0.2, 0.1]), np.array([0, 0, 0]))


def test_messages_print_plain_values():
    with pytest.raises(ValueError, match=r"^scores\[0\] = nan is not finite$"):
        aprank.infer(np.array([np.nan, 1.0]), np.array([1, 0]))
    with pytest.raises(ValueError, match=r"^labels\[0\] = 2: labels must be"):
        aprank.infer(np.array([0.3, 1.0]), np.array([2, 0]))
    with pytest.raises(ValueError, match=r"^h\[0\] = 7 is not a row index"):
        aprank.infer(np.array([0.3, 0.1, 0.2]), [1, 1, 0], loss="latent-ap", bags=[0, 0, 1],
                     h={np.int64(0): np.int64(7)})


def test_qid_for_latent_and_pairwise_is_a_value_error():
    # qid has no meaning for these kinds: an error that says so, from infer and infer_batch
    scores, labels = np.array([0.3, 0.1, 0.2, 0.5]), np.array([1, 0, 0, 1])
    qid = np.array([0, 0, 1, 1])
    cases = [dict(loss="latent-ap", bags=[0, 1, 2, 3]),
             dict(loss="pairwise-zero-one", edges=np.array([[0, 1]]))]
    for options in cases:
        with pytest.raises(ValueError, match="qid is not supported"):
            aprank.infer(scores, labels, qid=qid, **options)
        with pytest.raises(ValueError, match="qid is not supported"):
            aprank.infer_batch(scores, labels, qid, **options)
