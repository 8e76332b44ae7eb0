"""The seam between :func:`aprank.learn.cutting_plane` and its solvers.

A solver (:class:`Solver`) is four steps that one loop (:func:`run_solver`) runs over one fit's
state (:class:`CuttingPlaneRun`): ``start``; then per iteration ``iterate``, which evaluates
a point and writes one history record, and, while the solver goes on and iterations are left,
``grow``, which adds constraints and re-solves the working set; ``finish`` gives the w
returned. The run holds what every solver does the same way (inference at a point with the
hard constraints' check, the history record, the warm start, the QP and its pruning, the
result), so a solver holds only its own choices: where to seek the next cut, what to add, when
to stop.

The registry (:func:`register_solver`, :func:`solvers`) names the solvers that
``cutting_plane(..., solver=name)`` and the estimators' ``solver`` take, each with what it can
enforce besides the risk: hard constraints w'h_i >= 1 (``hard``) and upper bounds of w
(``upper``). A fit that needs one its solver does not declare runs the solver's declared
``fallback`` instead, or is refused (NotImplementedError).
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from aprank.learn._working_set import WorkingSet, match_parts, solve_working_set

__all__ = ["CuttingPlaneResult", "CuttingPlaneRun", "EvaluatedPoint", "Solver", "SolverInfo",
           "register_solver", "unregister_solver", "solvers", "solver_for", "run_solver",
           "add_builtin", "SOLVER_NAMES", "MULTI_CUT_PRUNE_AFTER", "STALL_ITERATIONS"]

#: how many iterations in a row the soft cuts of a working set split into blocks
#: (``solver="multi-cut"``) may be inactive before they go (at most ``prune_after``): of 5, 10
#: and 50, measured on the fit benchmark's data at C = 100 and 1e4 with 8, 16 and 32 blocks,
#: 5 gave the fewest seconds where the QP is large (Yahoo LTR, 300 features).
MULTI_CUT_PRUNE_AFTER = 5

#: The loop stops, unconverged, where the gap between the least primal and the greatest dual
#: recorded has not fallen in this many iterations: that gap is what the fit can still certify,
#: and one that stands still is below what the working-set QP resolves (the gradient's roundoff
#: times C: at C = 1e4 on the raw digits it stood at 0.02 to 0.04 for 900 of 1000 iterations,
#: against a stopping rule of 0.001). Any fall counts: over 480 fits of the digits (3 and 8
#: against the rest; raw, standardised and scaled pixels; one query and queries of 60;
#: BinarySVM, APSVM and NDCGSVM; every solver; C from 0.01 to 1e4), no fit that met the
#: stopping rule had the gap stand still for a single iteration before, while one had it fall
#: by less than 1% over 75 iterations and still converge.
STALL_ITERATIONS = 50


@dataclass
class CuttingPlaneResult:
    """What :func:`cutting_plane` returns.

    Attributes
    ----------
    w : ndarray of shape (d,)
        The learned weights.
    primal : float
        The primal objective at ``w``, with the slack of exact inference at ``w``.
    dual : float
        The dual objective of the last working-set QP.
    gap : float
        ``primal - dual``.
    converged : bool
        Whether the stopping rule was met before ``max_iter``.
    n_iter : int
        Cutting-plane iterations run.
    history : list of dict
        One entry per iteration: ``iteration``, ``primal``, ``dual``, ``gap``, ``violation``,
        ``working_slack``, ``hard_violation``, ``n_constraints``, ``inference_seconds``,
        ``qp_seconds`` and what the model's cut adds.
    working_set : WorkingSet
        The constraints at the end, to warm-start another fit on the same model.
    stalled : bool
        Whether the loop stopped unconverged before ``max_iter`` because the gap between the
        least primal and the greatest dual recorded had not fallen in ``STALL_ITERATIONS``
        iterations (a ``tol`` below what the fit resolves at this C).
    """

    w: np.ndarray
    primal: float
    dual: float
    gap: float
    converged: bool
    n_iter: int
    history: list
    working_set: WorkingSet
    stalled: bool = False

    def unconverged(self, name: str, tol: float) -> str:
        """What a ``ConvergenceWarning`` of estimator ``name`` fitted with ``tol`` says of this
        unconverged result: where it stopped, and what to raise.

        Parameters
        ----------
        name : str
            The estimator's name.
        tol : float
            Its ``tol``.

        Returns
        -------
        str
        """
        if self.stalled:
            return (f"{name} stopped unconverged after {self.n_iter} iterations: its gap "
                    f"({self.gap:.3g}, tol {tol:g}) had not fallen in the last "
                    f"{STALL_ITERATIONS}, below what the fit resolves at this C; raise tol")
        return (f"{name} did not converge in {self.n_iter} iterations (gap {self.gap:.3g}, "
                f"tol {tol:g}); raise max_iter or tol")


def _row(matrix, i: int) -> np.ndarray:
    """Row i of a dense or sparse matrix as a dense vector (a sparse matrix is never densified
    whole: only the rows that join the working set are)."""
    row = matrix[i]
    return np.asarray(row.todense()).ravel() if sp.issparse(row) else np.asarray(row, dtype=float)


@dataclass
class EvaluatedPoint:
    """A point where inference ran (:meth:`CuttingPlaneRun.evaluate`).

    Attributes
    ----------
    w : ndarray of shape (d,)
        The point.
    primal : float
        Its true primal objective, 1/2 ||w||^2 + C max(0, violation), by exact inference.
    cut : Constraint
        The most violated constraint at ``w`` (``aprank.models.Constraint``).
    hard_gap : float
        How far ``w`` breaks its worst hard constraint, max(0, 1 - min_i w'h_i) (0 without
        hard constraints).
    worst_hard : int or None
        That constraint's row (None without hard constraints).
    parts : tuple of (ndarray, ndarray) or None
        Where the cut was split (``RiskSplit.most_violated``): the parts' vectors and offsets.
    """

    w: np.ndarray
    primal: float
    cut: Any
    hard_gap: float
    worst_hard: int | None
    parts: tuple | None = None


@dataclass
class CuttingPlaneRun:
    """One run of :func:`cutting_plane`: what every solver receives.

    The problem and its settings, the working set, the point ``w`` the solvers move, the
    working set's dual objective and the history. What every solver does the same way is
    here: inference at a point with the hard constraints' check (:meth:`evaluate`), the history
    record (:meth:`record`), the warm start (:meth:`start`), a violated hard constraint into the
    working set (:meth:`add_hard`), the QP and its pruning (:meth:`next_optimum`) and the
    result (:meth:`result`).

    Attributes
    ----------
    model : StructuredModel
        The model trained (``aprank.models``): ``model.most_violated(w)`` gives the cut.
    C : float
        The weight of the slack.
    tol : float
        The tolerance of the stopping rule.
    max_iter : int
        The most history records (the loop stops there).
    prune_after : int
        A constraint inactive for this many QPs in a row goes (0: never).
    hard : array or sparse matrix of shape (m, d), or None
        Rows h_i of the hard constraints w'h_i >= 1.
    upper : ndarray of shape (d,), or None
        Upper bounds of w (+inf where there is none), held in the working set as permanent
        hard constraints; :meth:`start` and :meth:`next_optimum` clip ``w`` to them.
    callback : callable or None
        Called by :meth:`record` with each history entry.
    working_set : WorkingSet
        The constraints (a warm start's, or empty).
    w : ndarray of shape (d,)
        The working set's optimum after :meth:`start` and each :meth:`next_optimum`; before,
        where the first cut is sought (``w0``).
    first_at_w0 : bool
        Keep ``w`` at ``w0`` in :meth:`start` where a warm working set would move it.
    dual : float
        The working set's dual objective: a lower bound of the minimum.
    history : list of dict
        One entry per iteration (:meth:`record`).
    least_primal, greatest_dual : float
        The least primal and the greatest dual objective recorded (inf, -inf before any):
        bounds of the minimum, whose difference is what the fit certifies so far.
    gap_fell_at : int
        How many records there were when that difference last fell (it stands still from
        there: :attr:`stalled`).
    """

    model: Any
    C: float
    tol: float
    max_iter: int
    prune_after: int
    hard: Any
    upper: np.ndarray | None
    callback: Callable[[dict], None] | None
    working_set: WorkingSet
    w: np.ndarray
    first_at_w0: bool = False
    dual: float = 0.0
    history: list = field(default_factory=list)
    least_primal: float = np.inf
    greatest_dual: float = -np.inf
    gap_fell_at: int = 0

    def evaluate(self, w: np.ndarray, split=None) -> EvaluatedPoint:
        """Inference at a point.

        Parameters
        ----------
        w : ndarray of shape (d,)
            The point.
        split : RiskSplit, optional
            The model's split of the risk (``model.split_risk``): the cut and its parts from
            one inference.

        Returns
        -------
        EvaluatedPoint
            The cut, the true primal objective there and the worst hard constraint.
        """
        if split is not None:
            cut, G, b = split.most_violated(w)
            parts = (G, b)
        else:
            cut, parts = self.model.most_violated(w), None
        hard_gap, worst_hard = 0.0, None
        if self.hard is not None and self.hard.shape[0]:
            margins = np.asarray(self.hard @ w).ravel()
            worst_hard = int(np.argmin(margins))
            hard_gap = max(0.0, 1.0 - float(margins[worst_hard]))
        return EvaluatedPoint(w, 0.5 * float(w @ w) + self.C * max(cut.violation, 0.0), cut,
                              hard_gap, worst_hard, parts)

    def record(self, primal: float, violation: float, working_slack: float,
               hard_violation: float, *, w: np.ndarray, dual: float | None = None,
               inference_seconds: float = 0.0, qp_seconds: float = 0.0,
               info: dict | None = None, result=None) -> dict:
        """Write the iteration's history entry and hand it to the callback.

        Parameters
        ----------
        primal : float
            The objective of the point the solver stands on (its answer so far).
        violation : float
            The most violated constraint's slack at the point evaluated.
        working_slack : float
            The working set's model of that slack there (``WorkingSet.slack``).
        hard_violation : float
            How far the answer breaks a hard constraint.
        w : ndarray of shape (d,)
            The point evaluated (the callback's ``w``).
        dual : float, optional
            The lower bound of the minimum; default the working set's.
        inference_seconds, qp_seconds : float
            The iteration's times (:meth:`next_optimum` writes the QP's).
        info : dict, optional
            More entries (the cut's ``info``).
        result : object, optional
            What inference returned (the callback's ``result``).

        Returns
        -------
        dict
            The entry (``CuttingPlaneResult.history``); its ``gap`` is ``primal - dual``.
        """
        dual = self.dual if dual is None else dual
        entry = {"iteration": len(self.history) + 1, "primal": primal, "dual": dual,
                 "gap": primal - dual, "violation": violation, "working_slack": working_slack,
                 "hard_violation": hard_violation, "n_constraints": len(self.working_set),
                 "inference_seconds": inference_seconds, "qp_seconds": qp_seconds,
                 **(info or {})}
        self.history.append(entry)
        before = self.least_primal - self.greatest_dual
        self.least_primal = min(self.least_primal, primal)
        self.greatest_dual = max(self.greatest_dual, dual)
        if self.least_primal - self.greatest_dual < before:
            self.gap_fell_at = len(self.history)
        if self.callback is not None:
            self.callback({**entry, "w": w, "result": result})
        return entry

    def start(self, parts: int) -> None:
        """Make the working set's soft constraints cut ``parts`` parts of the risk (a warm
        working set's others go), then set ``w`` to its optimum (clipped to ``upper``; kept
        where ``first_at_w0``) and ``dual`` to its dual objective; an empty one leaves ``w``
        as given and ``dual`` 0.

        Parameters
        ----------
        parts : int
            1 for the whole risk, else the ``n_parts`` of the model's ``RiskSplit``.
        """
        match_parts(self.working_set, parts)
        if self.working_set.permanent.all():
            self.dual = 0.0
            return
        optimum, self.dual, _ = solve_working_set(self.working_set, self.C, self.tol)
        if not self.first_at_w0:
            self.w = optimum if self.upper is None else np.minimum(optimum, self.upper)

    def add_hard(self, at: EvaluatedPoint) -> None:
        """Add the point's worst hard constraint to the working set where it is violated by
        more than ``tol``.

        Parameters
        ----------
        at : EvaluatedPoint
            A point :meth:`evaluate` gave.
        """
        if at.hard_gap > self.tol:
            assert at.worst_hard is not None, "a positive hard gap is the worst hard constraint's"
            self.working_set.add(_row(self.hard, at.worst_hard), 1.0, soft=False)

    def next_optimum(self) -> None:
        """Solve the working set's QP: ``w`` becomes its optimum (clipped to ``upper``) and
        ``dual`` its dual objective, the QP's seconds go into the last history entry, and the
        constraints inactive for ``prune_after`` QPs in a row go."""
        ws, prune_after = self.working_set, self.prune_after
        t0 = time.perf_counter()
        w, self.dual, active = solve_working_set(ws, self.C, self.tol)
        self.w = w if self.upper is None else np.minimum(w, self.upper)
        self.history[-1]["qp_seconds"] = time.perf_counter() - t0
        ws.idle = np.where(active, 0, ws.idle + 1)
        # a multi-cut working set gains up to a cut per block each iteration, and most of them
        # are soon idle for good: its soft cuts go sooner (the QP's cost grows with what it holds)
        limit: int | np.ndarray = prune_after
        if ws.parts > 1 and prune_after:
            limit = np.where(ws.soft, min(prune_after, MULTI_CUT_PRUNE_AFTER), prune_after)
        if prune_after and np.any((ws.idle >= limit) & ~ws.permanent):
            ws.keep((ws.idle < limit) | ws.permanent)

    def forget_dual(self) -> None:
        """Start the dual side of the bounds over, for a solver that goes on from an empty
        working set (``"dual-cd"``'s hand-over to OCAS): the greatest dual recorded is
        forgotten and the stall window (:attr:`stalled`) starts again, so that the new working
        set's dual may climb to where the old one stood."""
        self.greatest_dual = -np.inf
        self.gap_fell_at = len(self.history)

    @property
    def stalled(self) -> bool:
        """Whether the gap between :attr:`least_primal` and :attr:`greatest_dual`, once finite,
        has not fallen in the last ``STALL_ITERATIONS`` records."""
        return (bool(np.isfinite(self.least_primal - self.greatest_dual))
                and len(self.history) - self.gap_fell_at >= STALL_ITERATIONS)

    def result(self, w: np.ndarray, converged: bool) -> CuttingPlaneResult:
        """The result at w, with the objectives of the last history entry.

        Parameters
        ----------
        w : ndarray of shape (d,)
            The weights returned.
        converged : bool
            Whether the stopping rule was met.

        Returns
        -------
        CuttingPlaneResult
        """
        last = self.history[-1]
        return CuttingPlaneResult(w, last["primal"], last["dual"], last["gap"], converged,
                                  len(self.history), self.history, self.working_set,
                                  not converged and self.stalled)


class Solver(ABC):
    """What ``cutting_plane(..., solver=name)`` runs: the four steps of one loop.

    The loop (:func:`run_solver`) calls ``start(run)`` once, then ``iterate(run)`` each
    iteration and, while it returns None, ``run.max_iter`` history records are not yet
    written and the run has not stalled (:attr:`CuttingPlaneRun.stalled`), ``grow(run)``;
    then ``finish(run)`` gives the w returned, converged where the last ``iterate`` returned
    True. ``run`` is the fit's :class:`CuttingPlaneRun`. A solver
    object serves one fit (the registry's factory makes one per fit): it sets its state in
    ``__init__`` and ``start`` sets it again for the run.

    To be used by name, a solver is registered (:func:`register_solver`) with what it
    enforces besides the risk: the hard constraints (``run.hard``, checked by
    :meth:`CuttingPlaneRun.evaluate` and added by :meth:`CuttingPlaneRun.add_hard`) and the
    upper bounds of w (``run.upper``: in the working set from the start; the solver keeps its
    points within them).
    """

    @abstractmethod
    def start(self, run: CuttingPlaneRun) -> None:
        """Before the first iteration: set the solver's state and prepare the run (for a
        cutting plane, :meth:`CuttingPlaneRun.start`).

        Parameters
        ----------
        run : CuttingPlaneRun
        """

    @abstractmethod
    def iterate(self, run: CuttingPlaneRun) -> bool | None:
        """One iteration: evaluate a point and write exactly one history record
        (:meth:`CuttingPlaneRun.record`).

        Parameters
        ----------
        run : CuttingPlaneRun

        Returns
        -------
        bool or None
            True: converged (stop); False: stop without; None: go on.
        """

    @abstractmethod
    def grow(self, run: CuttingPlaneRun) -> None:
        """Between iterations: add what the last one found to the working set and re-solve
        it (:meth:`CuttingPlaneRun.next_optimum`).

        Parameters
        ----------
        run : CuttingPlaneRun
        """

    @abstractmethod
    def finish(self, run: CuttingPlaneRun) -> np.ndarray:
        """The weights returned.

        Parameters
        ----------
        run : CuttingPlaneRun

        Returns
        -------
        ndarray of shape (d,)
        """


def run_solver(run: CuttingPlaneRun, solver: Solver) -> CuttingPlaneResult:
    """The loop every solver runs (:class:`Solver`).

    Parameters
    ----------
    run : CuttingPlaneRun
        The fit's state; iterations count its whole history.
    solver : Solver
        A fresh solver.

    Returns
    -------
    CuttingPlaneResult
    """
    solver.start(run)
    while True:
        converged = solver.iterate(run)
        if converged is None and len(run.history) < run.max_iter and not run.stalled:
            solver.grow(run)
            continue
        return run.result(solver.finish(run), bool(converged))


@dataclass(frozen=True)
class SolverInfo:
    """A registered solver (:func:`solvers`). Pickles by name.

    Attributes
    ----------
    name : str
        What ``solver=`` names it by.
    factory : callable
        ``factory()`` makes a fresh :class:`Solver` for each fit (the class itself, say).
    hard : bool
        Whether it enforces hard constraints (``cutting_plane(..., hard=...)``, APSVMAppx).
    upper : bool
        Whether it enforces upper bounds of w (``cutting_plane(..., upper=...)``, HOB-SVM and
        HOAP-SVM).
    fallback : str or None
        The registered solver that runs where a fit needs what this one does not enforce
        (None: such a fit is refused).
    builtin : bool
        One of aprank's solvers (never replaced or removed).
    """

    name: str
    factory: Callable[[], Solver]
    hard: bool = False
    upper: bool = False
    fallback: str | None = None
    builtin: bool = False

    def takes(self, hard, upper) -> bool:
        """Whether it enforces what a fit with ``hard`` and ``upper`` (None: none) needs.

        Parameters
        ----------
        hard, upper : object or None
            The fit's hard constraints and upper bounds.

        Returns
        -------
        bool
        """
        return (hard is None or self.hard) and (upper is None or self.upper)

    def __reduce__(self):
        return _entry, (self.name,)


_SOLVERS: dict[str, SolverInfo] = {}
#: the registered names, a live view: the ``solver`` parameter checks read it at each check,
#: so that a solver registered after import is accepted
SOLVER_NAMES = _SOLVERS.keys()


def _entry(name: str) -> SolverInfo:
    """The registered solver of that name (what an entry unpickles to)."""
    try:
        return _SOLVERS[name]
    except KeyError:
        raise ValueError(f"no solver named {name!r} is registered in this process; the "
                         f"solvers: {list(_SOLVERS)}") from None


def add_builtin(name: str, factory: Callable[[], Solver], *, hard: bool, upper: bool,
                fallback: str | None = None) -> None:
    """Register one of aprank's solvers (``aprank.learn._cutting_plane``)."""
    _SOLVERS[name] = SolverInfo(name, factory, hard, upper, fallback, builtin=True)


def register_solver(name: str, factory: Callable[[], Solver], *, hard: bool = False,
                    upper: bool = False, fallback: str | None = None,
                    replace: bool = False) -> SolverInfo:
    """Make a solver known by name to ``cutting_plane(..., solver=name)`` and to the
    estimators' ``solver``.

    Parameters
    ----------
    name : str
        Its name (non-empty), not a built-in solver's.
    factory : callable
        ``factory()`` makes a fresh :class:`Solver` for each fit (the class itself, say).
    hard : bool, default False
        Whether it enforces hard constraints: evaluates with :meth:`CuttingPlaneRun.evaluate`,
        adds the violated ones (:meth:`CuttingPlaneRun.add_hard`) and never returns a point
        that breaks one by more than ``tol``.
    upper : bool, default False
        Whether it enforces upper bounds of w: its points stay within ``run.upper``.
    fallback : str, optional
        A registered solver, enforcing what this one does not, to run in its place where a fit
        needs that; without one such a fit is refused (NotImplementedError).
    replace : bool, default False
        Replace an earlier registered solver of that name.

    Returns
    -------
    SolverInfo
        The new entry.

    Notes
    -----
    The registration holds in this process only: a worker process (joblib, Dask,
    multiprocessing) must register the solver itself before it fits with it. A fit runs
    ``factory()``, ``start``, ``iterate``, ``grow`` and ``finish`` as :class:`Solver` says.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a solver needs a non-empty string name, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory must be callable (a Solver class, say), got {factory!r}")
    for flag, value in (("hard", hard), ("upper", upper), ("replace", replace)):
        if not isinstance(value, bool):
            raise TypeError(f"{flag} must be a bool, got {value!r}")
    known = _SOLVERS.get(name)
    if known is not None and (known.builtin or not replace):
        raise ValueError(f"a solver named {name!r} is already registered"
                         + ("" if known.builtin else "; replace=True replaces it"))
    if fallback is not None:
        backup = _SOLVERS.get(fallback)
        if backup is None or backup.name == name:
            raise ValueError(f"fallback must name another registered solver ({list(_SOLVERS)}), "
                             f"got {fallback!r}")
        if not backup.takes(None if hard else True, None if upper else True):
            raise ValueError(f"fallback {fallback!r} does not enforce what {name!r} lacks")
    info = SolverInfo(name, factory, hard, upper, fallback)
    _SOLVERS[name] = info
    return info


def unregister_solver(name: str) -> None:
    """Forget a solver added by :func:`register_solver` (the built-in solvers stay).

    Parameters
    ----------
    name : str
        The name it was registered under.
    """
    info = _entry(name)
    if info.builtin:
        raise ValueError(f"{name!r} is a built-in solver; it cannot be removed")
    relying = [other.name for other in _SOLVERS.values() if other.fallback == name]
    if relying:
        raise ValueError(f"{relying} fall back on {name!r}; unregister them first")
    del _SOLVERS[name]


def solvers() -> dict[str, SolverInfo]:
    """The registered solvers, built-in ones first, in the order of registration.

    Returns
    -------
    dict of str to SolverInfo
        A copy: changing it changes no registration.
    """
    return dict(_SOLVERS)


def solver_for(name: str, hard, upper) -> SolverInfo:
    """The solver that runs a fit asking for ``name`` with ``hard`` and ``upper`` (None: none):
    that one, or where it does not enforce them, its fallback where that one does.

    Parameters
    ----------
    name : str
        A registered solver.
    hard, upper : object or None
        The fit's hard constraints and upper bounds.

    Returns
    -------
    SolverInfo

    Raises
    ------
    NotImplementedError
        Where neither the solver nor its fallback enforces what the fit needs.
    """
    info = _entry(name)
    chosen = info if info.takes(hard, upper) or info.fallback is None else _entry(info.fallback)
    if chosen.takes(hard, upper):
        return chosen
    lacks = [what for what, given, has in (("hard constraints", hard, info.hard),
                                           ("upper bounds", upper, info.upper))
             if given is not None and not has]
    able = [other.name for other in _SOLVERS.values() if other.takes(hard, upper)]
    raise NotImplementedError(f"solver {name!r} does not enforce {' or '.join(lacks)}; the "
                              f"solvers that do: {able}")
