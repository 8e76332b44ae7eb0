"""``CStarPrecisionAtK``: the c-star precision@k model of Mensink et al. (2011), learned by
subgradient descent on its loss bound."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels
from sklearn.utils.validation import check_is_fitted, validate_data

from aprank.learn._checks import (
    NON_NEGATIVE,
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    StrOptions,
    atomic_fit,
)
from aprank.learn._slow_fits import duration, expect_seconds
from aprank.models import CStarModel, greedy_core, product_seconds

__all__ = ["CStarPrecisionAtK", "break_even_precision"]

#: The subgradient loop's stopping rule compares the best objective with the one WINDOW
#: iterations back, so a fit runs at least WINDOW + 1 iterations (unless ``max_iter`` is less).
WINDOW = 20
#: How many times a descent whose first WINDOW + 1 steps never improve on the start (steps too
#: long for C and the features: each overshoots, and the best iterate stays w = 0) starts again
#: with a shorter step before it gives up with a ConvergenceWarning.
MAX_RESTARTS = 5
#: Seconds of one empirical mutual information of ``greedy_core`` on n samples: a fixed cost
#: plus one per sample, measured on one machine (n = 1e3 to 1e5) and rounded up.
_MI_SECONDS, _MI_SAMPLE_SECONDS = 150e-6, 0.05e-6


def break_even_precision(Y, T) -> float:
    """Break-even precision: the mean over samples with a relevant label of
    #(predicted and relevant) / k, k = the sample's number of relevant labels.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        The relevant labels, 0/1 or bool.
    T : array-like of shape (n_samples, n_labels)
        The predicted subsets, each of its sample's size k, 0/1 or bool.

    Returns
    -------
    float
        The mean over the samples with at least one relevant label.
    """
    Y, T = np.asarray(Y, dtype=bool), np.asarray(T, dtype=bool)
    k = Y.sum(axis=1)
    used = k > 0
    return float(((Y & T).sum(axis=1)[used] / k[used]).mean())


def _norm(*arrays) -> float:
    """The Euclidean norm of the arrays' entries together, scaled so that squares of entries
    near 1e300 (a subgradient at C = 1e300) do not overflow."""
    largest = max(float(np.max(np.abs(a), initial=0.0)) for a in arrays)
    if largest == 0.0 or not np.isfinite(largest):
        return largest
    return largest * float(np.sqrt(sum(np.sum((a / largest) ** 2) for a in arrays)))


class CStarPrecisionAtK(BaseEstimator):
    """Multi-label ranking for precision@k with label interactions on a core (Mensink et al. 2011).

    Label l of a sample x scores s_l(x) = v_l + w_l'x (or, with a ``kernel``, v_l +
    sum_m alpha_lm k(x_m, x), eq. 10); a subset t of k labels scores t's + t'Ft with F non-zero
    only in the rows and columns of a core of ``n_core`` labels, chosen greedily for joint
    mutual information of the training labels. Training minimises

        1/2 (||W||^2 + ||F||^2) + (C / n) sum_m bound_m,

    bound_m the loss bound of eq. 8 (eq. 1 when the best loss-free subset is unique, as it is
    for break-even k), by subgradient descent with the gradients of eq. 9 and step
    ``learning_rate / sqrt(t)``, keeping the iterate with the lowest objective. Inference is the
    exact c-star algorithm (``aprank.infer(..., loss="precision@k", algorithm="cstar")``).

    Parameters
    ----------
    k : "bep" or int >= 1
        "bep": k = the number of relevant labels of each sample (break-even precision; samples
        without one are left out of training); an int fixes k.
    n_core : int >= 0
        Core size C (0: independent labels). Inference costs O(2^C L) per sample.
    C : float > 0
        Weight of the loss bound against the regulariser.
    kernel : None, callable or a kernel name of ``sklearn.metrics.pairwise_kernels``
        ("rbf", "poly", "linear", "laplacian", ...; another name is a ValueError listing them).
        None: linear scores on the features.
    gamma : float > 0 or None
        Kernel parameter (as pairwise_kernels), used by "rbf", "poly", ...
    learning_rate : float > 0
        The subgradient step at iteration t is ``learning_rate / sqrt(t)``. Where none of the
        first 21 steps improves on the start (each overshoots: C or the features too large
        for the step; at C = 1e300 the first step overflows), the descent starts again with
        the step divided by the first subgradient's norm, then by 10, up to 5 times
        (``learning_rate_``), and warns (ConvergenceWarning) if it still cannot improve.
    max_iter : int >= 1
        The most subgradient steps.
    tol : float >= 0
        Stop when the best objective has improved by less than ``tol`` (relative) over the
        last 20 iterations.

    Attributes
    ----------
    core_ : ndarray
        The core label indices.
    coef_ : ndarray of shape (L, d)
        The label weights (linear scores).
    dual_coef_ : ndarray of shape (L, n_train)
        The label weights over the training samples (with a ``kernel``).
    intercept_ : ndarray of shape (L,)
        The label offsets v_l.
    interactions_ : ndarray of shape (L, L)
        F.
    objective_ : list of float
        The objective per iteration (of the last start, see ``learning_rate``).
    n_iter_ : int
        Iterations run (of the last start).
    learning_rate_ : float
        The learning rate of the kept descent (``learning_rate`` unless it was shortened).

    Notes
    -----
    Labels that give precision@k nothing to rank are refused (ValueError), as the other
    estimators refuse a single class: every sample's labels all relevant, or none relevant.
    A fit estimated to take over a minute (the c-star algorithm's cost model, 2^n_core L per
    sample and iteration, and the core's mutual information) warns first
    (``aprank.learn.SlowFitWarning``); Ctrl-C stops it within about a second and leaves the
    estimator as it was.
    """

    _parameter_constraints: dict = {
        "k": [StrOptions({"bep"}), POSITIVE_INT],
        "n_core": [NON_NEGATIVE_INT],
        "C": [POSITIVE],
        # the names pairwise_kernels knows: another string fails inside scikit-learn with an
        # UnboundLocalError, far from the parameter
        "kernel": [StrOptions(set(PAIRWISE_KERNEL_FUNCTIONS) | {"precomputed"}), callable, None],
        "gamma": [POSITIVE, None],
        "learning_rate": [POSITIVE],
        "max_iter": [POSITIVE_INT],
        "tol": [NON_NEGATIVE],
    }

    def __init__(self, k="bep", n_core=5, C=1.0, *, kernel=None, gamma=None, learning_rate=0.1,
                 max_iter=300, tol=1e-4):
        self.k = k
        self.n_core = n_core
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol

    # ------------------------------------------------------------------------ checks
    def _check_params(self, n_labels):
        """The bounds ``_parameter_constraints`` cannot know: the number of labels."""
        if self.k != "bep" and self.k > n_labels:
            raise ValueError(f"k must be 'bep' or an integer in 1 ... {n_labels} (the number of "
                             f"labels), got {self.k!r}")
        if self.n_core > n_labels:
            raise ValueError(f"n_core must be an integer in 0 ... {n_labels}, got {self.n_core!r}")

    @staticmethod
    def _check_Y(Y, n):
        Y = np.asarray(Y)
        if Y.ndim != 2 or Y.shape[0] != n:
            raise ValueError(f"y must be an (n_samples, n_labels) 0/1 matrix with {n} rows, got "
                             f"shape {Y.shape}")
        if Y.dtype != bool and not np.isin(Y, (0, 1)).all():
            bad = np.argwhere(~np.isin(Y, (0, 1)))[0]
            raise ValueError(f"y must be binary (0/1 or bool): y[{bad[0]}, {bad[1]}] = "
                             f"{Y[tuple(bad)].item()!r}")
        if Y.shape[1] < 2:
            raise ValueError("y needs at least 2 labels to rank")
        return Y.astype(bool)

    @staticmethod
    def _check_informative(Y):
        """ValueError for labels that give precision@k nothing to learn from: a sample whose
        labels are all relevant, or none, scores every subset of k labels alike."""
        mixed = Y.any(axis=1) & ~Y.all(axis=1)
        if not mixed.any():
            which = "relevant" if Y.all() else "irrelevant" if not Y.any() else \
                "relevant or all irrelevant"
            raise ValueError(f"every sample's labels are all {which} (y is {Y.shape[0]} x "
                             f"{Y.shape[1]}), so every subset of k labels has the same "
                             "precision and there is nothing to learn: CStarPrecisionAtK needs "
                             "samples with both relevant and irrelevant labels")

    # ------------------------------------------------------------------------ model
    def _features(self, X, X_fit=None):
        """The features of X: X itself, or its kernel values against the training samples
        (``X_fit``, by default those of the fitted model)."""
        if self.kernel is None:
            return X
        return pairwise_kernels(X, self.X_fit_ if X_fit is None else X_fit, metric=self.kernel,
                                **({} if self.gamma is None else {"gamma": self.gamma}))

    def _scores(self, Phi, W, v):
        return Phi @ W.T + v

    def _objective(self, W, F, bound, K=None):
        reg = np.sum(W * (W @ K)) if K is not None else np.sum(W * W)
        return 0.5 * (reg + np.sum(F * F)) + self.C * bound.sum() / len(bound)

    @atomic_fit
    def fit(self, X, y):
        """Learn from samples X and their (n, L) 0/1 label matrix y."""
        X = validate_data(self, X, reset=True, dtype=np.float64)
        Y = self._check_Y(y, X.shape[0])
        self._check_informative(Y)
        n, L = Y.shape
        self._check_params(L)
        # greedy_core's mutual informations: per core item, one per candidate and other label
        pairs = sum((L - c) * (L - c - 1) for c in range(min(self.n_core, L)))
        # and a kernel's matrix, n^2 d multiply-adds
        kernel = 1e-9 * n * n * X.shape[1] if self.kernel is not None else 0.0
        expect_seconds(f"set-up (the core's {pairs:,} mutual informations)",
                       pairs * (_MI_SECONDS + _MI_SAMPLE_SECONDS * n) + kernel)
        core = greedy_core(Y, self.n_core)
        model = CStarModel(Y, self.k, core)
        Phi = self._features(X, X)
        K = Phi if self.kernel is not None else None
        iterations = min(self.max_iter, WINDOW + 1)
        # the bound's inference, and the products Phi W' and G' Phi
        per_iteration = model.estimated_seconds() + product_seconds(Phi, 2 * L)
        expect_seconds(f"{iterations} iterations of about {duration(per_iteration)}",
                       iterations * per_iteration)
        learning_rate = float(self.learning_rate)
        for restart in range(MAX_RESTARTS + 1):
            best, objectives, it, first_norm = self._descend(model, Phi, K, n, L, learning_rate)
            if best[0] < objectives[0] or len(objectives) < 2:
                break
            # no step improved on the start: the steps overshoot; shorter ones from the start
            learning_rate /= max(10.0, first_norm) if restart == 0 else 10.0
        else:
            warnings.warn(f"CStarPrecisionAtK: no subgradient step improved on the start (w = "
                          f"0) at C = {self.C:g}, even at learning rate {learning_rate:.3g}; "
                          "the model is all zero: lower C or rescale X", ConvergenceWarning)
        _, W, v, F = best
        fitted = {"core_": core, "n_iter_": it, "objective_": np.array(objectives),
                  "intercept_": v, "interactions_": F, "n_labels_": L,
                  "learning_rate_": learning_rate}
        if self.kernel is None:
            fitted["coef_"] = W
        else:
            fitted.update(dual_coef_=W, X_fit_=X)
        self.__dict__.update(fitted)
        return self

    def _descend(self, model, Phi, K, n, L, learning_rate):
        """One subgradient descent from w = 0: (best (objective, W, v, F), objectives,
        iterations, the first subgradient's norm)."""
        W = np.zeros((L, Phi.shape[1]))
        v = np.zeros(L)
        F = np.zeros((L, L))
        best = None
        objectives = []
        first_norm = 0.0
        scale = self.C / n
        for it in range(1, self.max_iter + 1):
            # a step that overshoots may overflow: its objective (inf or NaN) never beats the
            # best, and the fit starts again with shorter steps
            with np.errstate(over="ignore", invalid="ignore"):
                b = model.bound(self._scores(Phi, W, v), F) if np.isfinite(W).all() and \
                    np.isfinite(v).all() and np.isfinite(F).all() else None
                obj = np.inf if b is None else self._objective(W, F, b.bound, K)
            if it == 1 and not np.isfinite(obj):
                raise ValueError(f"C = {self.C:g} is too large: the objective at w = 0, C "
                                 "times the mean loss bound, overflows float64; lower C")
            objectives.append(obj)
            if best is None or obj < best[0]:
                best = (obj, W.copy(), v.copy(), F.copy())
            if b is None or (it > WINDOW and objectives[-WINDOW - 1] - best[0] <=
                             self.tol * max(1.0, abs(best[0]))):
                break
            G = b.grad_scores * b.used[:, None]
            with np.errstate(over="ignore", invalid="ignore"):
                # the kernel form steps in function space (the RKHS gradient is G + alpha)
                gW = scale * G.T + W if K is not None else scale * (G.T @ Phi) + W
                gv = scale * G.sum(axis=0)
                gF = scale * b.grad_interactions + F
                if it == 1:
                    first_norm = _norm(gW, gv, gF)
                step = learning_rate / np.sqrt(it)
                W, v, F = W - step * gW, v - step * gv, F - step * gF
        return best, objectives, it, first_norm

    def _weights(self):
        return self.coef_ if self.kernel is None else self.dual_coef_

    def decision_function(self, X):
        """(n, L) label scores s_l(x) (without the interactions)."""
        check_is_fitted(self, "intercept_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._scores(self._features(X), self._weights(), self.intercept_)

    def _k_for(self, X, k):
        if k is None:
            if self.k == "bep":
                raise ValueError("k='bep' needs each sample's number of relevant labels: pass "
                                 "predict(X, k=...) (an int or one per sample)")
            k = self.k
        k = np.broadcast_to(np.asarray(k), (X.shape[0],))
        if k.dtype.kind not in "iu" or (k < 0).any() or (k > self.n_labels_).any():
            raise ValueError(f"k must be integers in 0 ... {self.n_labels_}, got {k!r}")
        return k

    def predict(self, X, k=None, clamp=None):
        """(n, L) int8: each sample's best subset of k labels under the c-star score, labels
        clamped in (1) or out (-1) by ``clamp`` (n, L)."""
        S = self.decision_function(X)
        model = CStarModel(np.ones_like(S, dtype=bool), 1, self.core_)
        return model.predict(S, self.interactions_, self._k_for(S, k), clamp)[0]

    def score(self, X, y):
        """Mean break-even precision: precision@k with k = each sample's number of relevant
        labels (samples without one are left out)."""
        Y = self._check_Y(y, np.shape(X)[0])
        return break_even_precision(Y, self.predict(X, k=Y.sum(axis=1)))

    def interactive_labelling(self, X, y, questions=(1, 5, 10)):
        """Break-even precision after asking for the truth of ``max(questions)`` labels, one at a
        time (Mensink et al. 2011, section 5): each round asks, per sample, the free label whose
        best scores clamped in and clamped out of the top k are closest, clamps it to its true
        value and infers again. Returns {0: automatic, q: after q questions}."""
        S = self.decision_function(X)
        Y = self._check_Y(y, S.shape[0])
        n, L = Y.shape
        k = Y.sum(axis=1)
        model = CStarModel(np.ones_like(Y), 1, self.core_)
        F = self.interactions_
        clamp = np.zeros((n, L), dtype=np.int8)
        out = {0: break_even_precision(Y, model.predict(S, F, k, clamp)[0])}
        for q in range(1, max(questions) + 1):
            gap = np.full((n, L), np.inf)
            for label in range(L):
                free = clamp[:, label] == 0
                forced = clamp.copy()
                forced[:, label] = 1
                _, v_in = model.predict(S, F, k, forced, infeasible="-inf")
                forced[:, label] = -1
                _, v_out = model.predict(S, F, k, forced, infeasible="-inf")
                both = np.isfinite(v_in) & np.isfinite(v_out)   # else the label is decided
                gap[:, label] = np.where(free & both, np.abs(v_in - v_out), np.inf)
            # a sample whose labels are all asked has nothing left to ask
            asked = np.argmin(gap, axis=1)
            open_ = np.isfinite(gap[np.arange(n), asked])
            rows = np.flatnonzero(open_)
            clamp[rows, asked[rows]] = np.where(Y[rows, asked[rows]], 1, -1)
            if q in questions:
                out[q] = break_even_precision(Y, model.predict(S, F, k, clamp)[0])
        return out
