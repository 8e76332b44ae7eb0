"""HOB-SVM and HOAP-SVM (Dokania et al. 2014): ranking with pairs of samples that tend to share a
label.

Both take the pairs at ``fit`` and at prediction: ``groups`` (every pair of samples with the
same group is linked, e.g. segments of one recording; this survives cross-validation, since a
fold keeps whole groups or parts of them) or explicit ``edges`` (an (m, 2) array of row
indices, or a scipy.sparse adjacency matrix). Samples are ranked by their max-marginal
difference s_i = m_i^+ - m_i^- (eq. 11), computed on the pairs given with the samples.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from aprank.inference import PairwiseGraph, group_pairs, resolve
from aprank.learn._cccp import cccp
from aprank.learn._checks import (
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    StrOptions,
    atomic_fit,
    relevance,
)
from aprank.learn._cutting_plane import cutting_plane
from aprank.learn._estimators import _COMMON_DOC_NO_QUERIES, _StructuredSVM
from aprank.learn._once import say_once
from aprank.learn._slow_fits import expect_seconds
from aprank.losses import AveragePrecision, PairwiseZeroOne
from aprank.metrics import average_precision
from aprank.models import HOAPModel, HOBModel, pair_features

__all__ = ["HOBSVM", "HOAPSVM"]

#: how a scikit-learn search passes the groups to fit and score as well as to the splitter
#: (with routing disabled, ``groups=`` reaches only the splitter)
_ROUTE_GROUPS = ("in a scikit-learn search or cross-validation, route them: "
                 "sklearn.set_config(enable_metadata_routing=True); "
                 "est.set_fit_request(groups=True).set_score_request(groups=True); "
                 "search.fit(X, y, groups=groups)")

#: Seconds of a fit's set-up per pair (the pairs of ``groups``, their validation) and per pair
#: and feature (the default pair feature and its checks), measured on one machine on cliques
#: of 1,500 and 3,000 samples (1.1 and 4.5 million pairs) and rounded up.
_PAIR_SECONDS, _PAIR_FEATURE_SECONDS = 0.3e-6, 0.1e-6


class _HighOrder(_StructuredSVM):
    """Shared by HOB-SVM and HOAP-SVM: the pairs, the pair features, the prediction. No
    ``sample_weight`` (the pairwise models have no weighting): passing one is a TypeError."""

    _has_intercept = True
    _learns_threshold = False       # the bias is learnt, as BinarySVM's
    _parameter_constraints = {
        **{k: v for k, v in _StructuredSVM._parameter_constraints.items() if k != "empty"},
        "eta": [NON_NEGATIVE], "pair_feature": [callable, None], "algorithm": [str],
        "intercept_scaling": [POSITIVE],
    }

    def _check_params(self):
        """The algorithms exist and serve their losses (ValueError / NotImplementedError)."""
        resolve(self._pair_loss(), self.algorithm)
        resolve(self._loss(), self._algorithm())

    def _pair_loss(self):
        return PairwiseZeroOne(J=1.0)

    def _graph(self, n, edges, groups) -> PairwiseGraph:
        if edges is not None and groups is not None:
            raise ValueError("pass the pairs as edges or as groups, not both")
        if groups is not None:
            groups = np.asarray(groups)
            if groups.shape != (n,):
                raise ValueError(f"groups must hold one entry per sample ({n}), got shape "
                                 f"{groups.shape}")
            edges = group_pairs(groups)
        return PairwiseGraph(n, edges)

    def _pair_features(self, X, graph):
        return pair_features(X, graph.edges, self.pair_feature)

    def _fit_pairs(self, X, edges, groups):
        """(graph, pair features) of a fit's samples X, their set-up's estimate said first
        (a clique of 3,000 samples has 4.5 million pairs)."""
        if edges is None and groups is not None and np.shape(groups) == (X.shape[0],):
            _, counts = np.unique(np.asarray(groups), return_counts=True)
            n_pairs = int(np.sum(counts * (counts - 1) // 2))
        else:
            n_pairs = 0 if edges is None else int(np.shape(edges)[0]) if not sp.issparse(
                edges) else int(edges.nnz)
        features = X.shape[1] if self.pair_feature is None else 1
        expect_seconds(f"set-up of {n_pairs:,} pairs", n_pairs * (
            _PAIR_SECONDS + _PAIR_FEATURE_SECONDS * features))
        graph = self._graph(X.shape[0], edges, groups)
        return graph, self._pair_features(X, graph)

    def decision_function(self, X, edges=None, groups=None):
        """Max-marginal differences m_i^+ - m_i^- of the samples X linked by ``edges`` or
        ``groups`` (eq. 11): rank by them, highest first. Without pairs: w'x + b.

        Neither ``edges`` nor ``groups`` on a model whose pairs carry weight (fitted with pairs,
        ``eta`` > 0, ``coef_pairs_`` non-zero) drops the pair terms: a UserWarning says what to
        pass (``edges=[]`` says the samples have no pairs). ``predict`` and ``score`` warn
        alike."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        if edges is None and groups is None:
            self._warn_no_pairs()
        graph = self._graph(X.shape[0], edges, groups)
        model = HOBModel(self._design(X), np.zeros(X.shape[0], bool), graph,
                         self._pair_features(X, graph), self.eta, algorithm=self.algorithm,
                         loss=PairwiseZeroOne(J=1.0))
        return model.max_marginals(self._energy_w()).scores

    def _warn_no_pairs(self) -> None:
        """UserWarning when prediction drops pairs the model weighs: a search without metadata
        routing, or a score(X, y) without ``groups``, scores so, silently."""
        if self.eta > 0 and np.any(self.coef_pairs_ != 0):
            name = type(self).__name__
            say_once(
                f"{name} got neither groups nor edges, so it ranks the samples by w'x + b "
                f"alone, but {name} was fitted with pairs that carry weight (coef_pairs_ "
                "non-zero): pass the samples' pairs as groups= (or edges=); "
                + _ROUTE_GROUPS + ". If the samples have no pairs, "
                "pass edges=[].", UserWarning, ("prediction without pairs", name))

    def predict(self, X, edges=None, groups=None):
        """The labelling maximising the score (labels of ``classes_``)."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X, edges, groups) > 0).astype(int)]

    def score(self, X, y, edges=None, groups=None):
        """Average precision of the ranking by max-marginal differences (a label outside
        ``classes_`` is a ValueError)."""
        check_is_fitted(self)
        scores = self.decision_function(X, edges, groups)
        return average_precision(relevance(y, self.classes_, scores.shape[0], type(self).__name__),
                                 scores)

    def _fitted_pairs(self, res, n_features, classes) -> dict:
        return {**self._fitted(res, n_features, classes),
                "coef_pairs_": res.w[n_features + 1:].copy()}

    def _energy_w(self):
        return np.r_[self.coef_, self.intercept_ / self.intercept_scaling, self.coef_pairs_]


_PAIR_DOC = """
    eta : float >= 0, default 1.0
        Weight of the pair block of the joint feature (eq. 5); 0 ignores the pairs.
    pair_feature : callable, optional
        ``pair_feature(A, B) -> (m, d2)`` non-negative features of the pairs (rows of A and B);
        default exp(-(a - b)^2) elementwise (eq. 5).
    algorithm : str, default "graphcut"
        Max-marginal algorithm of the "pairwise" kind.
    intercept_scaling : float, default 1.0
        Value of the constant feature carrying the (regularised) bias.
"""


class HOBSVM(_HighOrder):
    __doc__ = """HOB-SVM (Dokania et al. 2014, sec. 3): a structural SVM over labellings with pair
    terms, ranking by max-marginal differences.

    The joint feature has a unary block (a bias included) and a pair block summing Phi over the
    linked pairs with different labels; the loss is the weighted 0-1 loss of eq. 7 with
    J = N / P. Trained by the 1-slack cutting plane with w2 <= 0 (eq. 8: graph cuts are exact
    there), loss-augmented inference by graph cuts. The joint feature is divided by J P + N
    (the loss's normaliser): with eta = 0 and J = 1 the problem is that of
    ``BinarySVM(C / n, J=1)``, n the samples (HOB-SVM's C weighs the normalised loss, as the
    rank SVMs' does; BinarySVM's C is per sample, scikit-learn's). With
    J != 1 the two differ: BinarySVM weighs a positive's hinge by J (a weighted sample), HOB-SVM,
    as eq. 7, asks a positive for a margin J (a weight in a label-dependent joint feature
    cannot be used at prediction, where labels are unknown).

    Parameters
    ----------
    J : float, optional
        Weight of a positive in the loss; default N / P.
""" + _PAIR_DOC + _COMMON_DOC_NO_QUERIES + """    coef_pairs_ : ndarray of shape (d2,)
        The pair weights w2 (all <= 0).
    intercept_ : float
        The bias.
"""

    _parameter_constraints = {**_HighOrder._parameter_constraints, "J": [NON_NEGATIVE, None]}

    def __init__(self, C=1.0, eta=1.0, *, J=None, pair_feature=None, algorithm="graphcut",
                 intercept_scaling=1.0, tol=1e-3, max_iter=1000, prune_after=50,
                 solver="ocas", verbose=False,
                 warm_start=False, callback=None):
        self.eta = eta
        self.J = J
        self.pair_feature = pair_feature
        self.algorithm = algorithm
        self.intercept_scaling = intercept_scaling
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, solver=solver,
                         empty="error",
                         verbose=verbose, warm_start=warm_start, callback=callback)

    def _loss(self):
        return PairwiseZeroOne(self.J)

    @atomic_fit
    def fit(self, X, y, edges=None, groups=None):
        """Learn w from samples X, binary labels y and the pairs (``edges`` or ``groups``)."""
        self._check_params()
        data = self._validate_fit(X, y, None)
        X, is_pos = data.X, data.is_pos
        graph, Phi = self._fit_pairs(X, edges, groups)
        model = HOBModel(self._design(X), is_pos, graph, Phi, self.eta, self._loss(),
                         algorithm=self.algorithm)
        res, warm = self._train(model, upper=model.upper)
        self.__dict__.update(warm, **self._fitted_pairs(res, X.shape[1], data.classes),
                             normaliser_=model.Z)
        return self


class HOAPSVM(_HighOrder):
    __doc__ = """HOAP-SVM (Dokania et al. 2014, sec. 4): AP loss over the ranking by max-marginal
    differences, learned by CCCP (Algorithm 1).

    Each outer iteration fixes, at w_t, the max-marginal labelling of every sample's true label
    (Proposition 4) and solves the convex problem that results with the 1-slack cutting plane,
    whose most violated ranking is exact AP inference on the scores of Proposition 5; w2 <= 0
    throughout. The objective F(w) = 1/2 ||w||^2 + C max_R [Delta + S(R) - S(R*)] never
    increases by more than the inner tolerance ``tol``; stops when it decreases by less than
    ``tol``. The ranking's score uses the normalisation 1 / (P N) of Mohapatra et al. (2018), so
    with eta = 0 the problem is APSVM's.

    Parameters
    ----------
    init : {"hob", "zero"}, default "hob"
        Start from a HOBSVM with the same C and eta (as the paper), or from w = 0 (with
        eta = 0 the first outer iteration is then APSVM's fit, step for step).
    ranking_algorithm : str, default "qs"
        Exact AP inference algorithm.
    max_outer : int, default 50
        CCCP iterations (a ConvergenceWarning is raised when reached).
    carry_working_set : bool, default False
        Start each inner cutting plane (after the first) from the previous one's working set,
        its cuts re-evaluated at the new linearisation (``aprank.learn.cccp``): fewer inner
        iterations, the same objectives and stopping rule.
    callback : callable, optional
        Called after each CCCP iteration with its ``cccp_history_`` entry plus ``w``.
""" + _PAIR_DOC + _COMMON_DOC_NO_QUERIES.replace("""    callback : callable, optional
        Called in every cutting-plane iteration with a dict: the iteration's ``history_``
        entry plus ``w`` and ``result`` (the inference result, e.g. its ``ranks``). For
        diagnostics and figures; it must not modify what it receives.
""", "").replace("""    warm_start : bool
        Reuse the previous fit: its working set when the data, queries, loss and constraints
        are the same (e.g. a path over C), else its weights as the starting point.
""", "") + """    coef_pairs_ : ndarray of shape (d2,)
        The pair weights w2 (all <= 0).
    intercept_ : float
        The bias.
    n_outer_ : int
        CCCP iterations (``converged_``: whether the objective stopped decreasing).
    objective_ : float
        F(w) at the returned w.
    cccp_history_ : list of dict
        Per outer iteration, the objective at its w_t and the inner iterations.
    hob_ : HOBSVM
        The HOBSVM of ``init="hob"``.
"""

    _parameter_constraints = {
        **{k: v for k, v in _HighOrder._parameter_constraints.items() if k != "warm_start"},
        "init": [StrOptions({"hob", "zero"})], "ranking_algorithm": [str],
        "max_outer": [POSITIVE_INT], "carry_working_set": ["boolean"],
    }

    def __init__(self, C=1.0, eta=1.0, *, init="hob", pair_feature=None, algorithm="graphcut",
                 ranking_algorithm="qs", intercept_scaling=1.0, tol=1e-3, max_iter=1000,
                 max_outer=50, prune_after=50, solver="ocas", verbose=False,
                 callback=None, carry_working_set=False):
        self.carry_working_set = carry_working_set
        self.eta = eta
        self.init = init
        self.pair_feature = pair_feature
        self.algorithm = algorithm
        self.ranking_algorithm = ranking_algorithm
        self.intercept_scaling = intercept_scaling
        self.max_outer = max_outer
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, solver=solver,
                         empty="error",
                         verbose=verbose, warm_start=False, callback=callback)

    def _loss(self):
        return AveragePrecision()

    def _algorithm(self):
        return self.ranking_algorithm

    @atomic_fit
    def fit(self, X, y, edges=None, groups=None):
        """Learn w from samples X, binary labels y and the pairs (``edges`` or ``groups``)."""
        self._check_params()
        data = self._validate_fit(X, y, None)
        X, is_pos = data.X, data.is_pos
        graph, Phi = self._fit_pairs(X, edges, groups)
        model = HOAPModel(self._design(X), is_pos, graph, Phi, self.eta, algorithm=self.algorithm,
                          ranking_algorithm=self.ranking_algorithm)
        w0, extra = None, {}
        if self.init == "hob":
            hob = HOBSVM(self.C, self.eta, pair_feature=self.pair_feature,
                         algorithm=self.algorithm, intercept_scaling=self.intercept_scaling,
                         tol=self.tol, max_iter=self.max_iter, prune_after=self.prune_after,
                         solver=self.solver,
                         ).fit(X, data.classes[is_pos.astype(int)], edges=graph.edges)
            # HOB's joint feature is divided by its normaliser: the same energy at w / Z
            w0 = np.r_[hob.coef_, hob.intercept_ / self.intercept_scaling,
                       hob.coef_pairs_] / hob.normaliser_
            extra["hob_"] = hob
        options = {"tol": self.tol, "max_iter": self.max_iter, "prune_after": self.prune_after,
                   "solver": self.solver,
                   "upper": model.upper}
        res = cccp(model, float(self.C), tol=self.tol, max_outer=self.max_outer, w0=w0,
                   inner=cutting_plane, inner_options=options, callback=self.callback,
                   carry_working_set=self.carry_working_set)
        if not res.converged:
            warnings.warn(f"HOAPSVM: CCCP did not converge in {self.max_outer} outer iterations",
                          ConvergenceWarning)
        n = X.shape[1]
        if res.inner is not None:
            # the inner run that produced w: its gap, iterations and history
            fitted = self._fitted_pairs(res.inner, n, data.classes)
        else:
            # the start (HOB's w, or 0) is CCCP's best w: no inner run produced it
            fitted = {"classes_": data.classes, "n_iter_": 0, "primal_": res.objective,
                      "dual_": np.nan, "gap_": np.nan, "history_": [], "coef_": res.w[:n].copy(),
                      "intercept_": float(res.w[n] * self.intercept_scaling),
                      "coef_pairs_": res.w[n + 1:].copy()}
        self.__dict__.update(fitted, **extra, converged_=res.converged, n_outer_=res.n_outer,
                             objective_=res.objective, cccp_history_=res.history)
        return self
