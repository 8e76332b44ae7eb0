"""What every estimator of ``aprank.learn`` checks, declared once.

* Parameters: each estimator declares ``_parameter_constraints`` (scikit-learn's machinery);
  ``atomic_fit`` checks them before ``fit`` runs, as scikit-learn's ``_fit_context`` does. The
  learner functions declare theirs with ``validate_params``.
* A fit that raises (a bad input found late, a KeyboardInterrupt in the loop) leaves the
  estimator as it was: ``atomic_fit`` restores its attributes, and the fits compute into
  locals and assign the fitted attributes at the end.
* A fit estimated to take over a minute says so before the work: ``atomic_fit`` opens the
  fit's scope of ``_slow_fits.py``, where the learners add up their estimates.
* Sample weights (``positive_weights``) and the labels given to ``score``
  (``relevance``).
"""
from __future__ import annotations

import functools
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import column_or_1d

from aprank.learn._once import say_once
from aprank.learn._slow_fits import fit_scope
from aprank.sklearn_compat import (
    Interval,
    StrOptions,
    check_sample_weight,
    fit_context,
    validate_params,
)
from aprank.validation import names_relevant_class

__all__ = ["NoBoolInterval", "POSITIVE", "NON_NEGATIVE", "POSITIVE_INT", "NON_NEGATIVE_INT",
           "StrOptions", "validate_params", "atomic_fit", "positive_weights", "relevance",
           "RelevantClassWarning", "say_relevant_class"]


class NoBoolInterval(Interval):
    """scikit-learn's ``Interval`` without booleans: Python counts True as the int 1, but
    ``C=True`` or ``max_iter=True`` is a mistake, not a number."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)

    def __str__(self):
        return super().__str__() + " (not a bool)"


#: finite and > 0 (C, tol, intercept_scaling, learning rates): inf and nan are refused
POSITIVE = NoBoolInterval(Real, 0, np.inf, closed="neither")
NON_NEGATIVE = NoBoolInterval(Real, 0, np.inf, closed="left")
POSITIVE_INT = NoBoolInterval(Integral, 1, None, closed="left")
NON_NEGATIVE_INT = NoBoolInterval(Integral, 0, None, closed="left")


def atomic_fit(fit):
    """Decorate ``fit``: parameters checked first, attributes restored on any exception.

    The parameters are checked as scikit-learn's ``_fit_context`` does. On any exception,
    KeyboardInterrupt included, the estimator's attributes are put back as they were (a
    failed fit never leaves ``classes_`` or ``n_features_in_`` of new data beside a stale
    ``coef_``), then the exception propagates. The fit runs in its scope of estimates
    (``_slow_fits.fit_scope``): one :class:`SlowFitWarning` before it if they reach a minute.

    Parameters
    ----------
    fit : callable
        An estimator's ``fit`` method.

    Returns
    -------
    callable
        The decorated ``fit``.
    """

    @functools.wraps(fit)
    def atomic(self, *args, **kwargs):
        before = self.__dict__.copy()
        try:
            with fit_scope(f"{type(self).__name__}.fit"):
                return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    return fit_context(prefer_skip_nested_validation=True)(atomic)


def positive_weights(sample_weight, X):
    """(weights of the samples kept or None, mask of the samples kept or None) for ``fit`` and
    ``score``: one finite weight >= 0 per sample of X (ValueError otherwise, as scikit-learn's).

    A zero weight is an absent sample (as scikit-learn treats it): such samples are dropped.
    Weights that are all equal change nothing, so they come back as None: the result is then
    the unweighted one, bit for bit."""
    if sample_weight is None:
        return None, None
    # all zero is refused first, in our words: scikit-learn >= 1.9 refuses it in its own,
    # older releases (>= 1.6 is supported) accept it
    raw = np.asarray(sample_weight)
    if raw.dtype.kind in "iuf" and raw.size and not raw.any():
        raise ValueError("sample_weight is zero for every sample: nothing is left to learn from "
                         "or to score")
    # a copy: the caller's array is never modified; NaN, inf and negatives are refused here
    sw = check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True,
                              copy=True)
    kept = sw > 0
    sw = sw[kept]
    return (None if np.all(sw == sw[0]) else sw), (None if kept.all() else kept)


def relevance(y, classes: np.ndarray, n: int, name: str) -> np.ndarray:
    """y given to ``score`` as a relevance mask (the second class relevant).

    A label that is not one of ``classes`` is a ValueError (it would count as irrelevant
    without a word).

    Parameters
    ----------
    y : array-like of shape (n,)
        The labels given to ``score``.
    classes : ndarray of shape (2,)
        The estimator's ``classes_``; the second is the relevant one.
    n : int
        The number of samples of X (y must have as many labels).
    name : str
        The estimator's name, for the error message.

    Returns
    -------
    ndarray of bool, shape (n,)
        True where the label is ``classes[1]``.
    """
    y = column_or_1d(y)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} labels but X has {n} samples")
    known = np.isin(y, classes)
    if not known.all():
        unseen = list(dict.fromkeys(y[~known].tolist()))
        raise ValueError(f"y has labels that {name} was not fitted on: {unseen[:5]!r}"
                         f"{' ...' if len(unseen) > 5 else ''}; its classes_ are "
                         f"{classes.tolist()!r}")
    return y == classes[1]


class RelevantClassWarning(UserWarning):
    """A fit on labels other than bool, {0, 1} or {-1, +1} (strings, another pair of
    numbers): the estimator ranks the second of the sorted two (``classes_[1]``) as the
    relevant class, which such labels do not say (with "hit" and "miss", "miss").

    Fit on ``y == label``, a bool mask of the relevant samples, to choose: the same fit as
    on {0, 1} labels. :mod:`aprank.metrics` asks ``pos_label=`` for such labels, as
    scikit-learn's ranking metrics do.
    """


def say_relevant_class(classes: np.ndarray, name: str) -> None:
    """Issue the :class:`RelevantClassWarning` of a fit whose two ``classes`` (sorted) are not
    bool, {0, 1} or {-1, +1}; nothing for those.

    Parameters
    ----------
    classes : ndarray of shape (2,)
        The sorted distinct labels of the fit.
    name : str
        The estimator's name.
    """
    classes = np.asarray(classes)
    if names_relevant_class(classes):
        return
    say_once(f"{name} ranks {classes.tolist()[1]!r}, the second of the sorted labels "
             f"{classes.tolist()!r}, as the relevant class: labels other than bool, {{0, 1}} "
             "or {-1, +1} do not say which is relevant. Fit on y == <relevant label> (a bool "
             "mask) to choose (aprank.metrics takes pos_label=)", RelevantClassWarning,
             ("relevant class", name))
