"""``aprank.infer`` and ``aprank.infer_batch``: loss-augmented inference through the registry.

One path for every kind and input: the loss and algorithm are resolved once (before any
input is read), the loss's kind's problem type built (which validates the labels and the
kind's own inputs), and the problem solved with the resolved
:class:`~aprank.inference.Algorithm` (which validates the scores, once)."""
from __future__ import annotations

import difflib
import inspect

import numpy as np

from aprank import validation
from aprank.inference._base import BatchResult
from aprank.inference._registry import get_kind, resolve, version
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


#: what every kind's problem type takes besides its own options (infer passes them through)
_COMMON = ("labels", "loss", "qid", "empty", "n_samples")
#: problem type -> the keyword arguments its constructor takes
_KEYWORDS: dict[type, frozenset[str] | None] = {}


def _check_options(caller: str, kind, options: dict) -> None:
    """TypeError naming ``caller`` (infer or infer_batch) for a keyword the loss's problem type
    does not take (else the error names the problem's constructor, which the caller never
    called): the message lists the kind's own options and suggests a close name."""
    problem_type = kind.problem_type
    if problem_type not in _KEYWORDS:
        parameters = inspect.signature(problem_type.__init__).parameters.values()
        # None: a problem type taking **kwargs checks its keywords itself; n_samples is set by
        # the caller, so passing it too would collide
        _KEYWORDS[problem_type] = None if any(
            p.kind == p.VAR_KEYWORD for p in parameters) else frozenset(
            p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
            and p.name not in ("self", "labels", "loss", "n_samples"))
    taken = _KEYWORDS[problem_type]
    if taken is None:
        return
    unknown = [name for name in options if name not in taken]
    if not unknown:
        return
    own = sorted(taken.difference(_COMMON))
    known = own + ["loss", "algorithm"] + (["empty"] if caller == "infer_batch" else [])
    close = difflib.get_close_matches(unknown[0], known, n=1)
    raise TypeError(
        f"{caller}() got an unexpected keyword argument {unknown[0]!r}"
        + (f" (did you mean {close[0]!r}?)" if close else "")
        + (f"; the {kind.name} kind's options are {own}" if own
           else f"; the {kind.name} kind takes no options beyond loss= and algorithm="))


def _length(scores) -> int:
    """The number of scores, for the labels' and the kind's inputs' checks: a non-empty 1-D
    array's values are validated once, by the problem's solve; anything else is validated
    here, so that a malformed input is named as such before the labels are read."""
    if type(scores) is np.ndarray and scores.ndim == 1 and scores.shape[0]:
        return scores.shape[0]
    return validation.as_scores(scores).shape[0]


def infer(scores, labels, *, loss="ap", algorithm=None, **options):
    """Loss-augmented inference: the ranking R maximising Delta(R*, R) + w'Psi(X, R).

    Parameters
    ----------
    scores : array-like (n,)
        Individual scores s_k = w'psi(x_k); any real dtype, any strides, may be read-only.
    labels : array-like (n,)
        Relevance as bool, {0, 1} or {-1, +1}.
    loss : str or aprank.losses.Loss
        "ap", "ndcg", "zero-one", or a Loss instance (e.g. ``NDCG(discount=...)``); a loss of
        another kind ("precision@k", "pairwise-zero-one", "latent-ap", ...) solves that kind's
        problem.
    algorithm : str, optional
        A name from ``aprank.algorithms()`` of the loss's problem kind (default: the kind's
        default, "qs" for AP and NDCG, "zero-one", "cstar" for precision@k). "auto" runs "qs"
        (the same result, bit for bit; the result's ``algorithm`` says "auto").
    **options
        Inputs of the loss's problem type beyond scores and labels: for precision@k
        (``aprank.inference.TopKProblem``) ``interactions=`` F and ``core=``; for the pairwise
        kind ``edges=`` and ``edge_scores=``; for the latent kind ``bags=`` and ``h=``.

    Returns
    -------
    InferenceResult
        For the ranking, labelling and top-k kinds; the pairwise kind returns a
        :class:`~aprank.inference.PairwiseResult`, the latent kind a
        :class:`~aprank.inference.LatentResult`.

    Raises
    ------
    ValueError
        Bad input (non-finite scores, non-binary labels, mismatched lengths, 2-D or empty input,
        no positives for AP/NDCG), unknown loss or algorithm.
    TypeError
        A keyword argument that neither ``infer`` nor the loss's problem type takes (the
        message lists the kind's options).
    NotImplementedError
        The algorithm does not serve the loss.

    Notes
    -----
    Ties: samples are ordered by descending score, equal scores by ascending input index, and
    among equally good ranks a negative gets the largest (lowest placed) one. Every exact
    algorithm follows this rule, so all return the same ranking. The caller's arrays are never
    modified. With no negatives, loss and objective are 0.
    """
    found, algo = _resolved(loss, algorithm)      # the algorithm is checked before any input
    kind = get_kind(found.kind)
    if options:
        _check_options("infer", kind, options)
    elif type(loss) is str and (algorithm is None or type(algorithm) is str):
        common = getattr(kind.problem_type, "solve_common", None)
        if common is not None:
            result = common(scores, labels, found, algo)
            if result is not None:
                return result
    problem = kind.problem_type(labels, found, n_samples=_length(scores), **options)
    return problem.solve_one(scores, algo)       # which validates the scores


def infer_batch(scores, labels, qid, *, loss="ap", algorithm=None, empty="error",
                **options) -> BatchResult:
    """Loss-augmented inference for every query at once (one compiled loop over the queries).

    Parameters
    ----------
    scores, labels : array-like (n,)
        As for :func:`infer`.
    qid : array-like (n,)
        Each sample's query; a query's samples need not be contiguous.
    loss, algorithm, **options
        As for :func:`infer`.
    empty : {"error", "skip"}
        A query without positives has no AP or NDCG: "error" raises ValueError naming it,
        "skip" leaves it out (``used`` False).

    Returns
    -------
    BatchResult

    Notes
    -----
    To solve the same queries for many scores (a learner does, every iteration), build a
    :class:`~aprank.inference.RankingProblem` once and call its ``solve(scores, algorithm)``.
    """
    found, algo = _resolved(loss, algorithm)
    if qid is None:
        raise ValueError("infer_batch needs qid; use infer for a single query")
    kind = get_kind(found.kind)
    if options:
        _check_options("infer_batch", kind, options)
    problem = kind.problem_type(labels, found, qid=qid, empty=empty, n_samples=_length(scores),
                                **options)
    return problem.solve(scores, algo)           # which validates the scores
