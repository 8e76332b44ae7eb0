"""Boosted trees of the nonlinear experiment: the exact AP and NDCG hinges as custom objectives.

:class:`HingeObjective` is :class:`aprank.boost.HingeObjective` (the hinge of AP or NDCG over
the queries of a training set, its gradient :func:`aprank.infer_batch`'s subgradient, the
"balanced" and "rank" second-order terms) with the research variants that the exploration
tried (``experiments.nonlinear_trees_exploration``):

``hessian="unit"``
    1 for every sample (and no common factor).
``smooth``
    The subgradient averaged over Gaussian perturbations of the scores (randomised smoothing
    of the hinge).
``queries``
    Every round, a fresh stratified partition of a one-against-the-rest training set into
    queries of about that many samples.
``mix``
    A convex combination with the logistic loss, class-balanced (each query's positives and
    negatives weigh alike) or plain (every sample alike, LightGBM's binary objective).

Without them (``HINGE_SETTINGS``, the variant the experiment runs) it computes what the
package's objective computes.

:func:`tree_candidates` gives the models in the harness's protocol
(:mod:`experiments.nonlinear_protocol`): LightGBM binary, LightGBM lambdarank, XGBoost
rank:map and LightGBM with the AP hinge, in the variant ``experiments.nonlinear_trees_exploration``
chose on validation splits of the training parts.
"""
from __future__ import annotations

import numpy as np

from aprank.boost import HingeObjective as _PackageHinge

from .nonlinear_protocol import Candidate

__all__ = ["HingeObjective", "tree_candidates", "lightgbm_fit_predict", "xgboost_fit_predict",
           "stratified_queries", "HINGE_SETTINGS"]

HESSIANS = ("unit", "balanced", "rank")


def stratified_queries(is_pos: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """A random partition of the samples into queries of about ``size`` samples, the positives
    spread over the queries as evenly as the negatives (each query has one where P allows)."""
    n = is_pos.shape[0]
    k = max(1, min(int(round(n / size)), int(is_pos.sum()) or 1))
    qid = np.empty(n, dtype=np.int64)
    for mask in (is_pos, ~is_pos):
        idx = np.flatnonzero(mask)
        idx = idx[rng.permutation(idx.shape[0])]
        # round-robin from a random offset: query sizes differ by at most one per class
        qid[idx] = (np.arange(idx.shape[0]) + rng.integers(k)) % k
    return qid


class HingeObjective(_PackageHinge):
    """The package's hinge objective with the research variants (see the module docstring).

    Parameters
    ----------
    labels : array-like (n,)
        Training labels: binary, or graded (a sample is a positive where its label is at least
        ``positive_level``; the hinges are of binary relevance, NDCG included).
    qid : array-like (n,), optional
        Each training sample's query; None: one query (or ``queries``).
    loss : {"ap", "ndcg"}
    hessian : {"unit", "balanced", "rank"}
    scale : float
        Multiplies the balanced hessian (and the floor of the rank one): a larger value, a
        shorter leaf step.
    floor : float
        For ``hessian="rank"``: the share of the balanced hessian every sample keeps.
    mix : float in [0, 1]
        Weight of the logistic loss (0: the hinge alone).
    logistic : {"balanced", "plain"}
        The logistic loss mixed in: weights ``balanced`` (``1 / P``, ``1 / N`` per query), or
        every sample alike, the sum of LightGBM's binary objective divided by the common factor
        (so both terms reach the booster on the same scale).
    queries : int, optional
        Without ``qid``: a fresh stratified partition into queries of about this many samples
        at every call.
    smooth : float
        Standard deviation of the Gaussian perturbation of the scores (0: the exact
        subgradient).
    draws : int
        Perturbations averaged where ``smooth > 0``.
    seed : int
        Seed of the partitions and perturbations (the sequence of calls is deterministic).
    positive_level : int
    """

    HESSIANS = HESSIANS

    def __init__(self, labels, qid=None, *, loss="ap", hessian="balanced", scale=1.0, floor=0.1,
                 mix=0.0, logistic="balanced", queries=None, smooth=0.0, draws=4, seed=0,
                 positive_level=1):
        if not 0.0 <= mix <= 1.0:
            raise ValueError(f"mix={mix!r}: in [0, 1]")
        if logistic not in ("balanced", "plain"):
            raise ValueError(f"logistic={logistic!r}: 'balanced' or 'plain'")
        self.mix, self.logistic, self.smooth, self.draws = mix, logistic, smooth, draws
        self.queries = None if qid is not None else queries
        self.rng = np.random.default_rng(seed)
        super().__init__(labels, qid, loss=loss, hessian=hessian, scale=scale, floor=floor,
                         positive_level=positive_level)
        if hessian == "unit":
            self.factor = 1.0

    def fixed_queries(self):
        return (None, None) if self.queries else super().fixed_queries()

    def round_queries(self):
        """This round's problem and balanced hessian (drawn with ``queries``)."""
        if self.queries is None:
            return super().round_queries()
        qid = stratified_queries(self.is_pos, self.queries, self.rng)
        return self.make_problem(qid), self.balanced(qid)

    def round_subgradient(self, problem, scores):
        if self.smooth <= 0:
            return super().round_subgradient(problem, scores)
        g = np.zeros(self.n)
        for _ in range(self.draws):
            noise = self.smooth * self.rng.standard_normal(self.n)
            g += self.subgradient(problem, scores + noise)
        g /= self.draws
        return g

    def second_order(self, g, bal):
        return np.ones(self.n) if self.hessian_kind == "unit" else super().second_order(g, bal)

    def grad_hess(self, scores):
        """(gradient, hessian) of one boosting round, before the common factor.

        Draws this round's queries (``queries``) and perturbations (``smooth``) once for both.
        """
        scores = np.asarray(scores, dtype=np.float64).ravel()
        g, h, bal = self._terms(scores)
        if self.mix > 0:
            p = 0.5 * (1.0 + np.tanh(0.5 * scores))  # the logistic function, overflow-free
            w = bal if self.logistic == "balanced" else np.full(self.n, 1.0 / self.factor)
            g = (1 - self.mix) * g + self.mix * w * (p - self.is_pos)
            h = (1 - self.mix) * h + self.mix * w * np.maximum(p * (1 - p), 1e-6)
        return g, h


# ------------------------------------------------------------------------------------------
# fits in the harness's protocol

def _columns(Y):
    Y = np.asarray(Y)
    return Y.reshape(-1, 1) if Y.ndim == 1 else Y


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)


#: samples per query where a listwise baseline ranks a one-against-the-rest training part
CHUNK = 256


def _query_order(qid, n):
    """Stable order putting each query's samples together, and the query sizes in that order."""
    if qid is None:
        return np.arange(n), np.array([n])
    order = np.argsort(qid, kind="stable")
    _, sizes = np.unique(np.asarray(qid)[order], return_counts=True)
    return order, sizes


def _chunks(relevant, seed):
    """The fixed stratified queries of ``CHUNK`` samples of a one-against-the-rest column: the
    order that groups them and their sizes."""
    q = stratified_queries(relevant > 0, CHUNK, np.random.default_rng(seed))
    order = np.argsort(q, kind="stable")
    return order, np.bincount(q)


def _lgb_params(params, seed, objective):
    out = {"objective": objective, "learning_rate": 0.1, "num_leaves": 15,
           "min_child_samples": 20, "num_threads": 1, "deterministic": True,
           "force_row_wise": True, "seed": seed, "verbose": -1}
    out.update(params)
    return out


def lightgbm_fit_predict(kind, budgets, **fixed):
    """A ``fit_predict`` of LightGBM: ``kind`` "binary", "lambdarank" or "hinge" (the AP or
    NDCG hinge, :class:`HingeObjective` with ``fixed``'s ``hinge`` options).

    One model per column of ``Y``. Lambdarank on a one-against-the-rest task ranks fixed
    stratified queries of ``CHUNK`` training samples (drawn once per fit), every pair; on a
    ranking task it takes the graded labels. Binary and hinge take the relevance at
    ``positive_level``."""
    import lightgbm as lgb

    hinge_options = dict(fixed.get("hinge", {}))

    def fit_predict(params, X, Y, qid, X_evals, seed, positive_level):
        X, Y = _dense(X), _columns(Y)
        X_evals = [_dense(Xe) for Xe in X_evals]
        out = {b: [np.zeros((Xe.shape[0], Y.shape[1])) for Xe in X_evals] for b in budgets}
        order, sizes = _query_order(qid, X.shape[0])
        for j in range(Y.shape[1]):
            y = Y[order, j]
            relevant = (y >= positive_level).astype(np.float64)
            p = dict(params)
            if kind == "binary":
                ds = lgb.Dataset(X[order], relevant, free_raw_data=False)
                obj = "binary"
            elif kind == "lambdarank" and qid is not None:
                ds = lgb.Dataset(X[order], y, group=sizes, free_raw_data=False)
                obj = "lambdarank"
                p.setdefault("label_gain", [float(2**i - 1) for i in range(int(y.max()) + 1)])
            elif kind == "lambdarank":
                sub, chunk_sizes = _chunks(relevant, seed + j)
                ds = lgb.Dataset(X[sub], relevant[sub], group=chunk_sizes, free_raw_data=False)
                obj = "lambdarank"
                p.setdefault("lambdarank_truncation_level", CHUNK + 1)
            elif kind == "hinge":
                ds = lgb.Dataset(X[order], relevant, free_raw_data=False)
                q = None if qid is None else np.asarray(qid)[order]
                obj = HingeObjective(y, q, seed=seed, positive_level=positive_level,
                                     **hinge_options)
            else:
                raise ValueError(f"kind={kind!r}")
            booster = lgb.train(_lgb_params(p, seed, obj), ds, num_boost_round=max(budgets))
            for b in budgets:
                for e, Xe in enumerate(X_evals):
                    out[b][e][:, j] = booster.predict(Xe, num_iteration=b)
        return out

    return fit_predict


def xgboost_fit_predict(budgets, objective="rank:map"):
    """A ``fit_predict`` of XGBoost ``rank:map`` on the relevance at ``positive_level``: one
    model per column; a one-against-the-rest task's training part is split once into fixed
    stratified queries of ``CHUNK`` samples; pairs sampled by XGBoost's "mean" method (8 per
    sample), ``min_child_weight`` 0 (the pairs' hessians are small: at 1 no split is made)."""
    import xgboost as xgb

    def fit_predict(params, X, Y, qid, X_evals, seed, positive_level):
        X, Y = _dense(X), _columns(Y)
        X_evals = [xgb.DMatrix(_dense(Xe), nthread=1) for Xe in X_evals]
        out = {b: [np.zeros((Xe.num_row(), Y.shape[1])) for Xe in X_evals] for b in budgets}
        order, _ = _query_order(qid, X.shape[0])
        p = {"objective": objective, "eta": 0.1, "tree_method": "hist", "grow_policy": "lossguide",
             "max_depth": 0, "max_leaves": 15, "nthread": 1, "seed": seed,
             "lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 8,
             "min_child_weight": 0, "verbosity": 0}
        p.update(params)
        for j in range(Y.shape[1]):
            relevant = (Y[order, j] >= positive_level).astype(np.float64)
            if qid is None:
                sub, sizes = _chunks(relevant, seed + j)
                q = np.repeat(np.arange(sizes.shape[0]), sizes)
            else:
                sub, q = np.arange(X.shape[0]), np.asarray(qid)[order]
            dtrain = xgb.DMatrix(X[order][sub], relevant[sub], qid=q, nthread=1)
            booster = xgb.train(p, dtrain, num_boost_round=max(budgets))
            for b in budgets:
                for e, Xe in enumerate(X_evals):
                    out[b][e][:, j] = booster.predict(Xe, iteration_range=(0, b))
        return out

    return fit_predict


#: the AP hinge's variant that the exploration chose (experiments.nonlinear_trees_exploration):
#: the rank hessian with a small floor, one query per one-against-the-rest column
HINGE_SETTINGS = {"loss": "ap", "hessian": "rank", "floor": 0.01}


def tree_candidates(quick: bool = False) -> list:
    """LightGBM binary, LightGBM lambdarank, XGBoost rank:map and LightGBM AP hinge."""
    budgets = (20, 50) if quick else (50, 100, 200, 400)
    leaves = (7,) if quick else (7, 31)
    lgb_grid = tuple({"num_leaves": k} for k in leaves)
    xgb_grid = tuple({"max_leaves": k} for k in leaves)
    common = "learning rate 0.1, min 20 samples per leaf, one model per column, one thread"
    hinge = ", ".join(f"{k}={v}" for k, v in HINGE_SETTINGS.items())
    return [
        Candidate("LightGBM binary", "trees", f"objective binary; {common}", lgb_grid, budgets,
                  lightgbm_fit_predict("binary", budgets)),
        Candidate("LightGBM lambdarank", "trees",
                  f"one-against-the-rest: fixed stratified queries of {CHUNK} samples, every "
                  f"pair; ranking task: graded labels; {common}", lgb_grid, budgets,
                  lightgbm_fit_predict("lambdarank", budgets)),
        Candidate("XGBoost rank:map", "trees",
                  f"one-against-the-rest: fixed stratified queries of {CHUNK} samples; pairs "
                  f"'mean', 8 per sample; min_child_weight 0; lossguide; learning rate 0.1, one "
                  f"model per column, one thread", xgb_grid, budgets, xgboost_fit_predict(budgets)),
        Candidate("LightGBM AP hinge", "trees", f"HingeObjective({hinge}); {common}", lgb_grid,
                  budgets, lightgbm_fit_predict("hinge", budgets, hinge=HINGE_SETTINGS)),
    ]
