"""The rank SVMs and the binary structural SVM for data on a Dask cluster.

Each estimator is its single-machine class (same parameters, attributes, cutting plane,
results) with a ``fit`` that builds a model of ``aprank.dask._models`` instead of an in-memory
one, and predictions that return dask arrays. With ``qid``, queries are kept whole within
partitions (boundaries moved to query ends, or rows regrouped once by Dask's shuffle, when
needed); without it, AP and NDCG treat all samples as one query solved by exact split
inference, the 0-1 loss as one query that separates over samples.
"""
from __future__ import annotations

from collections.abc import Callable

import dask
import dask.array as da
import numpy as np
from sklearn.utils import metadata_routing
from sklearn.utils.validation import check_is_fitted

from aprank.dask._data import DaskData, as_dask_array, dask_inputs, persist_inputs
from aprank.dask._models import empty_queries, model_of
from aprank.learn import APSVM, NDCGSVM, BinarySVM, CuttingPlaneResult
from aprank.losses import Loss
from aprank.metrics import average_precision, ndcg
from aprank.models import StructuredModel

__all__ = ["DaskAPSVM", "DaskNDCGSVM", "DaskBinarySVM"]


def _gather(a):
    """A dask collection (or anything array-like) as a NumPy array on the client."""
    if hasattr(a, "to_dask_array"):
        a = a.to_dask_array(lengths=True)
    return np.asarray(a.compute() if hasattr(a, "compute") else a)


class _OnDask:
    """fit / decision_function / predict / score over dask collections; the single-machine
    class that follows it in the MRO supplies the loss, parameters and training loop."""

    #: pivots per open range and round of the split inference (one giant query)
    split_samples = 64

    # what the single-machine estimator that follows in the MRO supplies: its parameters and
    # fitted attributes, and the steps of its fit and score that this class runs over Dask
    empty: str
    intercept_scaling: float            # where _has_intercept
    _has_intercept: bool
    _learns_threshold: bool
    classes_: np.ndarray
    coef_: np.ndarray
    intercept_: float
    threshold_: float
    _loss: Callable[[], Loss]
    _algorithm: Callable[[], str]
    _fit_atomically: Callable[..., object]
    _check_params: Callable[[], object]
    _take_classes: Callable[[np.ndarray], None]
    _say_skipped: Callable[[int, int], int]
    _train: Callable[..., tuple[CuttingPlaneResult, dict]]
    _fitted: Callable[..., dict]
    _break_even: Callable[..., float]
    _relevance: Callable[..., np.ndarray]
    _say_if_scored_as_one_query: Callable[[object, int], None]
    _say_score_skipped: Callable[[np.ndarray, object], None]

    def fit(self, X, y, qid=None):
        """Learn w from X (dask array (n, d) or DataFrame, dense), labels y and optional query
        ids qid (dask arrays or Series partitioned like X; NumPy arrays are accepted too).

        Labels and queries are checked on the client first, from one pass over y and qid (a
        query without a relevant sample under ``empty="error"`` is one ValueError there, and
        under the default "skip" it is counted in ``n_skipped_queries_`` and said in an
        ``aprank.learn.EmptyQueryWarning``). The blocks are then persisted on the workers for
        the fit; every iteration ships w to them. No ``sample_weight``: the distributed models
        have no weighting (a TypeError, not a silent unweighted fit).
        """
        return self._fit_atomically(_OnDask._fit_on_dask, X, y, qid)

    def _fit_on_dask(self, X, y, qid):
        self._check_params()
        inputs = dask_inputs(X, y, qid)
        # labels and queries are refused on the client before anything is persisted: one
        # error here, not a traceback from every worker
        found = inputs.survey
        self._take_classes(found.classes)
        n_skipped = self._say_skipped(empty_queries(found, self._loss(), self.empty),
                                      1 if found.query_ids is None else found.query_ids.shape[0])
        data = persist_inputs(inputs)
        classes, n_features = data.classes, data.n_features
        model = self._dask_model(data, classes[1], qid is None)
        X_in, y_in = inputs.X, inputs.y     # lazy: read again only for a rank SVM's threshold
        # the model holds what it needs: blocks it was built from are freed on the workers
        del data, inputs
        res, warm = self._train(model)
        fitted = self._fitted(res, n_features, classes)
        if self._learns_threshold:
            # the training scores and labels, n values each, gathered as score gathers them
            scores, labels = dask.compute(X_in.astype(np.float64) @ fitted["coef_"], y_in)
            fitted["threshold_"] = self._break_even(np.asarray(scores),
                                                    _gather(labels) == classes[1])
        self.__dict__.update(warm, **fitted,
                             n_features_in_=n_features, n_skipped_queries_=n_skipped,
                             _n_fit_queries=1 if found.query_ids is None
                             else found.query_ids.shape[0])
        return self

    def _dask_model(self, data: DaskData, positive, one_query: bool) -> StructuredModel:
        return model_of(data, positive, self._loss(), one_query=one_query,
                        algorithm=self._algorithm(), empty=self.empty,
                        intercept=self.intercept_scaling if self._has_intercept else None,
                        samples=self.split_samples)

    def decision_function(self, X):
        """Scores w'x (+ bias; less ``threshold_`` for the rank SVMs, as on one machine) as a
        dask array (lazy), one per row of X."""
        check_is_fitted(self)
        X = as_dask_array(X, "X", 2).astype(np.float64)
        if X.shape[1] != self.coef_.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was fitted "
                             f"with {self.coef_.shape[0]}")
        scores = X @ self.coef_
        if self._has_intercept:
            scores = scores + self.intercept_
        return scores - self.threshold_ if self._learns_threshold else scores

    def predict(self, X):
        """The second class where ``decision_function`` is above 0 (for the rank SVMs, w'x
        above ``threshold_``, as on one machine), as a dask array (lazy)."""
        scores = self.decision_function(X)
        return da.where(scores > 0, self.classes_[1], self.classes_[0])

    # score keeps the single-machine signature, so that a Dask estimator is called as its
    # class is, but the distributed models have no weighting: a sample_weight is refused (a
    # TypeError, as fit's), and metadata routing requests none
    __metadata_request__score = {"sample_weight": metadata_routing.UNUSED}

    def _gathered_scores(self, X, y, qid, sample_weight):
        """(is relevant, scores, qid) on the client: 1-D, n values each (X stays distributed).
        A sample_weight is a TypeError; a label outside ``classes_`` is a ValueError; no qid
        after a fit on several queries is an ``aprank.learn.OneQueryWarning``, as on one
        machine."""
        if sample_weight is not None:
            raise TypeError(f"{type(self).__name__}.score() takes no sample_weight: the Dask "
                            f"estimators have no weighting")
        check_is_fitted(self)
        scores, y = dask.compute(self.decision_function(X), y)
        scores = np.asarray(scores)
        self._say_if_scored_as_one_query(qid, scores.shape[0])
        relevant, qid = self._relevance(_gather(y), scores.shape[0]), \
            None if qid is None else _gather(qid)
        self._say_score_skipped(relevant, qid)
        return relevant, scores, qid

    def score(self, X, y, qid=None, sample_weight=None):
        """Mean average precision (per query when qid is given; ties as scikit-learn). The
        scores, labels and qid -- n values each -- are gathered on the client. No
        ``sample_weight`` (a TypeError)."""
        is_pos, scores, qid = self._gathered_scores(X, y, qid, sample_weight)
        return average_precision(is_pos, scores, qid=qid, empty=self.empty)


#: the rank SVMs' solver default on Dask (see the classes' docstrings)
_OCAS_DEFAULT = ('default "multi-cut"', 'default "ocas"')


def _parameters_section(estimator: type) -> str:
    """The single-machine estimator's docstring from its "Parameters" on ("" where it has no
    docstring)."""
    doc = estimator.__doc__
    return "" if doc is None else "\n    Parameters" + doc.split("Parameters", 1)[1]


class DaskAPSVM(_OnDask, APSVM):
    __doc__ = """:class:`aprank.learn.APSVM` on a Dask cluster: AP loss, same parameters,
    attributes and w as ``APSVM(solver="ocas")``. Without qid the samples form one query,
    solved by exact split inference whichever exact ``algorithm`` is named. Its ``solver``
    defaults to "ocas": the Dask models' cut is whole, not split over blocks of queries, so
    "multi-cut" (APSVM's default) is OCAS here.
    """ + _parameters_section(APSVM).replace(*_OCAS_DEFAULT)

    def __init__(self, C=1.0, *, algorithm="auto", tol=1e-3, max_iter=1000, prune_after=50,
                 solver="ocas", empty="skip", verbose=False, warm_start=False, callback=None):
        super().__init__(C, algorithm=algorithm, tol=tol, max_iter=max_iter,
                         prune_after=prune_after, solver=solver, empty=empty, verbose=verbose,
                         warm_start=warm_start, callback=callback)


class DaskNDCGSVM(_OnDask, NDCGSVM):
    __doc__ = """:class:`aprank.learn.NDCGSVM` on a Dask cluster: NDCG loss, same parameters,
    attributes and w as ``NDCGSVM(solver="ocas")``. Its ``solver`` defaults to "ocas", as
    :class:`DaskAPSVM`'s.
    """ + _parameters_section(NDCGSVM).replace(*_OCAS_DEFAULT)

    def __init__(self, C=1.0, *, algorithm="auto", discount=None, tol=1e-3, max_iter=1000,
                 prune_after=50, solver="ocas", empty="skip", verbose=False,
                 warm_start=False, callback=None):
        super().__init__(C, algorithm=algorithm, discount=discount, tol=tol, max_iter=max_iter,
                         prune_after=prune_after, solver=solver, empty=empty, verbose=verbose,
                         warm_start=warm_start, callback=callback)

    def score(self, X, y, qid=None, sample_weight=None):
        """Mean NDCG with binary relevance and this model's discount (gathered as in
        DaskAPSVM.score; no ``sample_weight``)."""
        is_pos, scores, qid = self._gathered_scores(X, y, qid, sample_weight)
        return ndcg(is_pos.astype(float), scores, qid=qid, empty=self.empty,
                    discount=self.discount)


class DaskBinarySVM(_OnDask, BinarySVM):
    __doc__ = """:class:`aprank.learn.BinarySVM` on a Dask cluster: weighted 0-1 loss with a
    bias, same parameters, attributes and w as ``BinarySVM(solver="ocas")``. Its ``solver``
    defaults to "ocas": the coordinate descent of BinarySVM's default ("dual-cd") visits one
    sample at a time, which data spread over partitions does not give, so "dual-cd" is OCAS
    here.
    """ + _parameters_section(BinarySVM).replace(
        '"dual-cd"}, default "dual-cd"', '"dual-cd"}, default "ocas"')

    def __init__(self, C=1.0, *, J=None, intercept_scaling=1.0, tol=1e-3, max_iter=1000,
                 prune_after=50, solver="ocas", empty="skip", verbose=False,
                 warm_start=False, callback=None):
        super().__init__(C, J=J, intercept_scaling=intercept_scaling, tol=tol,
                         max_iter=max_iter, prune_after=prune_after, solver=solver, empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)
