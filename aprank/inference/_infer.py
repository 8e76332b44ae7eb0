"""``aprank.infer`` and ``aprank.infer_batch``: loss-augmented inference through the registry."""
from __future__ import annotations

from math import isfinite

import numpy as np

from aprank import validation
from aprank.inference._compiled import COMPILED_RUNS
from aprank.inference._problem import BatchResult, InferenceResult, RankingProblem, SingleCall
from aprank.inference._registry import get_kind, resolve, version, warn_if_slow
from aprank.losses import LOSSES, get_loss

__all__ = ["infer", "infer_batch"]


#: (loss name, algorithm or None) -> (registry version, Loss, Algorithm): what _resolved found.
_RESOLVED: dict = {}


def _resolved(loss, algorithm):
    """(Loss, Algorithm) for infer's arguments, as the registry resolves them; a loss named by a
    string is looked up once per registry version (the lookups cost more than a small query)."""
    key = (loss, algorithm) if type(loss) is str and (algorithm is None or
                                                     type(algorithm) is str) else None
    if key is not None:
        hit = _RESOLVED.get(key)
        if hit is not None and hit[0] == version() and LOSSES.get(loss) is hit[1]:
            return hit[1], hit[2]
    found = get_loss(loss)
    algo = resolve(found, get_kind(found.kind).default_for(found) if algorithm is None
                   else algorithm)
    if key is not None:
        _RESOLVED[key] = (version(), found, algo)
    return found, algo


def _problem(scores, labels, loss, algorithm, qid=None, empty="error", options=None):
    """(problem, validated scores, algorithm): the algorithm is checked before any input; the
    problem is the loss's kind's problem type."""
    loss, algo = _resolved(loss, algorithm)
    kind = get_kind(loss.kind)
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
        default, "qs" for AP and NDCG, "zero-one", "cstar" for precision@k). "auto" picks per
        query the exact kernel of least measured cost (the same result as "qs", bit for bit;
        the result's ``algorithm`` says "auto").
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
    if not options:
        found, algo = _resolved(loss, algorithm)
        if isinstance(algo.run, COMPILED_RUNS):
            result = _lean(scores, labels, found, algo)
            if result is not None:
                return result
    problem, scores, algo = _problem(scores, labels, loss, algorithm, options=options)
    return problem._one_checked(scores, algo)


def _lean(scores, labels, loss, algo):
    """``infer`` for float64 scores in a 1-D array, with positives, run by a compiled kernel,
    without building a problem: on 20 samples the problem costs several times the kernel.
    The same validation, warning and result as the full path; None for any other input,
    which the full path then takes (and refuses with its messages)."""
    if type(scores) is not np.ndarray or scores.dtype != np.float64 or scores.ndim != 1:
        return None
    n = scores.shape[0]
    # NaN propagates through both reductions and an infinity is an extreme: finite extremes
    # => every score finite (cheaper than isfinite's array and all() on small queries)
    if n == 0 or not (isfinite(np.minimum.reduce(scores)) and isfinite(np.maximum.reduce(scores))):
        return None
    if type(labels) is np.ndarray and labels.dtype == np.bool_ and labels.shape == (n,):
        is_pos = labels.view(np.uint8) != 0        # as validation.as_labels reads bools
    else:
        is_pos = validation.as_labels(labels, n)
    P = int(np.count_nonzero(is_pos))
    if P == 0:
        return None
    warn_if_slow(algo, loss, P, n - P, stacklevel=3)
    call = SingleCall(scores, is_pos, loss, P)
    algo.run(call)
    return call.result(algo.name)


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
