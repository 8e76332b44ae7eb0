"""``aprank.infer`` and ``aprank.infer_batch``: loss-augmented inference through the registry."""
from __future__ import annotations

from aprank import validation
from aprank.inference._problem import BatchResult, InferenceResult, RankingProblem
from aprank.inference._registry import get_kind, resolve
from aprank.losses import get_loss

__all__ = ["infer", "infer_batch"]


def _problem(scores, labels, loss, algorithm, qid=None, empty="error", options=None):
    """(problem, validated scores, algorithm): the algorithm is checked before any input; the
    problem is the loss's kind's problem type."""
    loss = get_loss(loss)
    kind = get_kind(loss.kind)
    algo = resolve(loss, kind.default_for(loss) if algorithm is None else algorithm)
    scores = validation.as_scores(scores)
    problem = kind.problem_type(labels, loss, qid=qid, empty=empty, n_samples=scores.shape[0],
                                **(options or {}))
    return problem, scores, algo


def infer(scores, labels, *, loss="ap", algorithm=None, **options) -> InferenceResult:
    """Loss-augmented inference: the ranking R maximising Delta(R*, R) + w'Psi(X, R).

    Parameters
    ----------
    scores : array-like (n,)
        Individual scores s_k = w'psi(x_k); any real dtype, any strides, may be read-only.
    labels : array-like (n,)
        Relevance as bool, {0, 1} or {-1, +1}.
    loss : str or aprank.losses.Loss
        "ap", "ndcg", "zero-one", or a Loss instance (e.g. ``NDCG(discount=...)``).
    algorithm : str, optional
        A name from ``aprank.algorithms()`` of the loss's problem kind (default: the kind's
        default, "qs" for AP and NDCG, "zero-one", "cstar" for precision@k).
    **options
        Inputs of the loss's problem type beyond scores and labels: for precision@k
        (``aprank.inference.TopKProblem``) ``interactions=`` F and ``core=``.

    Ties: samples are ordered by descending score, equal scores by ascending input index, and
    among equally good ranks a negative gets the largest (lowest placed) one. Every exact
    algorithm follows this rule, so all return the same ranking.

    Raises
    ------
    ValueError
        Bad input (non-finite scores, non-binary labels, mismatched lengths, 2-D or empty input,
        no positives for AP/NDCG), unknown loss or algorithm.
    NotImplementedError
        The algorithm does not serve the loss.

    The caller's arrays are never modified. With no negatives, loss and objective are 0.
    """
    problem, scores, algo = _problem(scores, labels, loss, algorithm, options=options)
    return problem._one_checked(scores, algo)


def infer_batch(scores, labels, qid, *, loss="ap", algorithm=None, empty="error",
                **options) -> BatchResult:
    """Loss-augmented inference for every query at once (one compiled loop over the queries).

    ``qid`` gives each sample's query; a query's samples need not be contiguous. A query
    without positives has no AP or NDCG: ``empty="error"`` raises ValueError naming it,
    ``empty="skip"`` leaves it out (``used`` False). Otherwise as :func:`infer`.

    To solve the same queries for many scores (a learner does, every iteration), build a
    :class:`~aprank.inference.RankingProblem` once and call its ``solve(scores, algorithm)``.
    """
    if qid is None:
        loss = get_loss(loss)
        resolve(loss, get_kind(loss.kind).default_for(loss) if algorithm is None else algorithm)
        raise ValueError("infer_batch needs qid; use infer for a single query")
    problem, scores, algo = _problem(scores, labels, loss, algorithm, qid=qid, empty=empty,
                                     options=options)
    return problem._solve_checked(scores, algo)
