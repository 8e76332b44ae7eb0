"""Issue 25: inputs that were accepted although wrong, and a query order that depended on the
layout of the query ids. One test per item of the issue."""
import numpy as np
import pytest
import scipy.sparse as sp

from aprank.inference import PairwiseGraph, max_marginals


def test_item2_sparse_adjacency_gives_the_pairs_only():
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
