"""The warning before a long fit: one mechanism for every estimator of ``aprank.learn``.

Every ``fit`` runs inside a scope that ``atomic_fit`` (``_checks.py``) opens where the fit
begins; a fit nested in another (APSVMAppx's first stage, HOAPSVM's HOB-SVM start, a
cross-validation's folds, a latent learner's starts) joins the outer one's. The places that
know a cost say it before the work it measures starts, with :func:`expect_seconds`:

* ``cutting_plane``: ``min(max_iter, FIT_ITERATIONS)`` iterations of what one costs by the
  model's estimate (``StructuredModel.estimated_seconds``: the registry's ``seconds`` models of
  its inference, and its products);
* set-up that is itself the cost, e.g. the pairs of HOB-SVM's groups and their features;
* ``CStarPrecisionAtK``'s subgradient loop.

The scope adds them up; the first time the sum reaches the estimate at which a call warns
(``aprank.inference.slow_call_seconds()``, a minute), a :class:`SlowFitWarning` names it, once
per fit, before the work it would wait for. A learner function called outside a fit (e.g.
``cutting_plane`` itself) is a scope of its own.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import warnings
from dataclasses import dataclass, field
from types import FrameType

from aprank.inference import SlowAlgorithmWarning, slow_call_seconds

__all__ = ["SlowFitWarning", "fit_scope", "expect_seconds", "fit_iterations", "duration",
           "FIT_ITERATIONS"]

#: The iterations a fit's estimate counts (at most ``max_iter``): the median of the fit
#: benchmark's 72 fits (APSVM, NDCGSVM, BinarySVM on four data sets, C = 1e-3 ... 1e4) is 11,
#: their range 1 to 243. A fit whose iterations cost a tenth of the warning's minute is told.
FIT_ITERATIONS = 10


class SlowFitWarning(SlowAlgorithmWarning):
    """A fit estimated, before its work starts, to take over a minute (see
    ``aprank.inference.slow_call_seconds``): the estimate of its set-up and iterations by the
    registry's cost models. Ctrl-C stops a fit within about a second and leaves the
    estimator as it was. A subclass of :class:`aprank.inference.SlowAlgorithmWarning`, so a
    filter on that one covers fits too."""


@dataclass
class _Estimate:
    """What one fit has said it will take: its name, the parts so far and whether it warned."""

    name: str
    parts: list = field(default_factory=list)      # (what, seconds)
    warned: bool = False

    @property
    def seconds(self) -> float:
        return sum(seconds for _, seconds in self.parts)


_SCOPE: contextvars.ContextVar = contextvars.ContextVar("aprank_fit_estimate", default=None)


@contextlib.contextmanager
def fit_scope(name: str):
    """The scope of one fit called ``name`` (e.g. "HOBSVM.fit"): what :func:`expect_seconds`
    says in it adds up, and warns once; a scope opened inside another is the outer one.

    Parameters
    ----------
    name : str
        What the warning calls the fit.
    """
    if _SCOPE.get() is not None:
        yield
        return
    token = _SCOPE.set(_Estimate(name))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def fit_iterations(max_iter: int) -> int:
    """The iterations a learner's estimate counts: ``min(max_iter, FIT_ITERATIONS)``."""
    return min(int(max_iter), FIT_ITERATIONS)


def expect_seconds(what: str, seconds: float | None, name: str = "the fit") -> None:
    """Say that work estimated at ``seconds`` is about to start in the current fit; warn
    (:class:`SlowFitWarning`, once per fit) when the fit's estimates reach
    ``slow_call_seconds()``.

    Parameters
    ----------
    what : str
        The work, for the warning (e.g. "10 iterations of about 8 s").
    seconds : float or None
        Its estimate (None: unknown, nothing is added).
    name : str
        What to call the fit when no fit's scope is open (the caller is its own scope).
    """
    if seconds is None:
        return
    scope = _SCOPE.get()
    if scope is None:
        scope = _Estimate(name)
    if scope.warned:
        return
    scope.parts.append((what, float(seconds)))
    total = scope.seconds
    threshold = slow_call_seconds()
    if total < threshold:
        return
    scope.warned = True
    parts = "; ".join(f"{part}: {duration(part_seconds)}" for part, part_seconds in scope.parts
                      if part_seconds >= 0.01 * total)
    warnings.warn(
        f"{scope.name} is estimated to take about {duration(total)} or more ({parts}; the "
        f"registry's cost models, with constants measured on one machine), over the "
        f"{duration(threshold)} that draws this warning; Ctrl-C stops it and leaves the estimator "
        "as it was", SlowFitWarning, stacklevel=_caller_level())


def duration(seconds: float) -> str:
    """Seconds as the warning says them ("87 s", "30 minutes", "2.5 hours")."""
    if seconds == float("inf"):
        return "longer than anyone can wait"
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} hours"
    if seconds >= 120:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"


def _caller_level() -> int:
    """The ``stacklevel`` of a warning raised here that points at the first frame outside
    aprank and scikit-learn (the user's call of ``fit``)."""
    roots = _internal_roots()
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(roots):
        frame, level = frame.f_back, level + 1
    return level


def _internal_roots() -> tuple:
    """The folders of aprank, scikit-learn and joblib (their frames are not the caller's)."""
    aprank_file = sys.modules["aprank"].__file__
    assert aprank_file is not None, "aprank is a regular package: its __init__.py is a file"
    roots = [os.path.dirname(os.path.abspath(aprank_file)) + os.sep]
    for package in ("sklearn", "joblib"):
        path: str | None = getattr(sys.modules.get(package), "__file__", None)
        if path:
            roots.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    roots.append(os.path.dirname(os.path.abspath(contextlib.__file__)) + os.sep + "contextlib")
    return tuple(roots)
