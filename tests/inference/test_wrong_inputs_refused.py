"""Wrong inputs are refused, naming what is wrong, rather than read as something else: a
weighted sparse adjacency, wrong shapes and types, an impossible top-k clamp, a pairwise loss
whose default J needs a negative sample."""
import numpy as np
import pytest
import scipy.sparse as sp

from aprank.inference import PairwiseGraph, max_marginals


def test_sparse_adjacency_gives_the_pairs_only():
    scores = np.array([1.0, -1.0, 0.2])
    pattern = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))
    # 1 and True mark a pair, an explicit 0 marks none
    assert PairwiseGraph(3, pattern).edges.tolist() == [[0, 1]]
    assert PairwiseGraph(3, pattern.astype(bool)).edges.tolist() == [[0, 1]]
    with_zero = sp.coo_matrix((np.array([1.0, 0.0]), ([0, 1], [1, 2])), shape=(3, 3))
    assert PairwiseGraph(3, with_zero).edges.tolist() == [[0, 1]]
    # a weight would be read as a mere pattern (with pair scores 0: no interaction): refused
    weighted = sp.csr_matrix(np.array([[0, 0.5, 0], [0, 0, 0], [0, 0, 0]]))
    with pytest.raises(ValueError, match=r"adjacency\[0, 1\] = 0.5 is a weight.*edge_scores="):
        max_marginals(scores, weighted)
    for bad in (np.nan, np.inf):
        A = sp.csr_matrix((np.array([1.0, bad]), ([0, 1], [1, 2])), shape=(3, 3))
        with pytest.raises(ValueError, match=r"adjacency\[1, 2\] = .* is not finite"):
            PairwiseGraph(3, A)
    # duplicate COO entries sum to a weight
    twice = sp.coo_matrix((np.ones(2), ([0, 0], [1, 1])), shape=(3, 3))
    with pytest.raises(ValueError, match=r"adjacency\[0, 1\] = 2.0"):
        PairwiseGraph(3, twice)
    # the documented way: the pattern as edges, the weights as edge_scores
    graph = PairwiseGraph(3, weighted != 0)
    r = max_marginals(scores, graph=graph, edge_scores=-0.5)
    ref = max_marginals(scores, [[0, 1]], -0.5, algorithm="brute")
    np.testing.assert_allclose(r.scores, ref.scores)


def test_wrong_inputs_are_refused():
    import aprank
    from aprank.inference import group_pairs
    from aprank.inference.latent._problem import LatentProblem
    from aprank.inference.topk._problem import TopKProblem
    from aprank.learn import HOAPSVM, HOBSVM
    from aprank.losses import PrecisionAtK

    F = np.zeros((3, 3), dtype=complex)
    F[0, 1] = 1 + 1j                     # refused, not read as its real part
    with pytest.raises(ValueError, match="interactions must be real numbers, got dtype complex"):
        TopKProblem([1, 0, 1], interactions=F, core=[0])
    with pytest.raises(ValueError, match="interactions must be real numbers"):
        TopKProblem([1, 0, 1], interactions=sp.csr_matrix(F), core=[0])
    with pytest.raises(ValueError, match="k must be an integer"):
        PrecisionAtK("3")
    # whole floats too: a computed float id may split a bag silently
    with pytest.raises(ValueError, match=r"bags\[0\] = 0.0 is not a bag id.*not floats"):
        LatentProblem([1, 1, 0, 0], bags=[0.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="qid must hold real numbers or strings, got complex"):
        aprank.infer_batch([1.0, 2, 3, 4], [1, 0, 1, 0], qid=np.array([1j, 1j, 2, 2]))
    with pytest.raises(ValueError, match=r"groups\[1\] is NaN"):
        group_pairs([0.0, np.nan, np.nan, 1.0])
    X = np.random.default_rng(0).standard_normal((6, 2))
    y = np.array([1, 0, 1, 0, 1, 0])
    groups = np.array([0.0, 0.0, 1.0, 1.0, np.nan, np.nan])
    for est in (HOBSVM(), HOAPSVM()):
        with pytest.raises(ValueError, match=r"groups\[4\] is NaN"):
            est.fit(X, y, groups=groups)


def test_topk_impossible_clamp_is_refused():
    from aprank.inference.topk._problem import TopKProblem
    from aprank.losses import PrecisionAtK

    s = np.array([1.0, 2.0, 3.0, 4.0])
    one = TopKProblem([1, 0, 1, 0], PrecisionAtK(2))
    with pytest.raises(ValueError, match=r"leave the query no subset of k = 2 items: 3 clamped "
                                         r"in and 0 clamped out of its 4 items"):
        one.maximise(s, clamp=[1, 1, 1, 0])
    with pytest.raises(ValueError, match="1 clamped in and 3 clamped out"):
        one.maximise(s, "brute", clamp=[-1, -1, -1, 1])
    # the query is named by its id
    two = TopKProblem([1, 0, 1, 0, 1, 0], PrecisionAtK(1), qid=[7, 7, 7, 9, 9, 9])
    with pytest.raises(ValueError, match=r"query 9 no subset of k = 1"):
        two.maximise(np.arange(6.0), clamp=[0, 0, 0, -1, -1, -1])
    # feasible clamps, the tightest included, still solve
    t, value = one.maximise(s, clamp=[1, -1, -1, 1])
    assert t.tolist() == [1, 0, 0, 1] and value.tolist() == [5.0]


def test_pairwise_loss_default_J_needs_a_negative():
    import aprank
    from aprank.inference.pairwise._problem import PairwiseProblem
    from aprank.losses import PairwiseZeroOne

    scores, edges = np.array([1.0, -2.0, 0.5]), [[0, 1]]
    # J = N / P = 0/3 would make the loss 0 for every labelling, silently
    with pytest.raises(ValueError, match="default J = N / P needs a negative sample"):
        aprank.infer(scores, [1, 1, 1], loss="pairwise-zero-one", edges=edges, edge_scores=-1.0)
    with pytest.raises(ValueError, match=r"PairwiseZeroOne\(J=1\) is the plain 0-1 loss"):
        PairwiseProblem([1, 1, 1], edges=edges)
    # an explicit J: the plain 0-1 loss, which the all-positive labelling does not pay
    problem = PairwiseProblem([1, 1, 1], PairwiseZeroOne(J=1), edges=edges, edge_scores=-1.0)
    assert problem.delta([1, 0, 0]) == pytest.approx(2 / 3)
    r = problem.solve(scores)
    brute = problem.solve(scores, "brute")
    assert r.value == pytest.approx(brute.value) and r.loss == pytest.approx(brute.loss)
    assert r.loss > 0       # sample 1's score -2 makes labelling it 0 worth its loss of 1/3
    # a negative present: the default still applies
    assert PairwiseProblem([1, 0, 1], edges=edges).delta([1, 1, 1]) == pytest.approx(0.5)
