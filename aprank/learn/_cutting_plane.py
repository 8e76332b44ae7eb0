"""1-slack cutting-plane training with margin rescaling (Joachims, Finley & Yu 2009; Behl 2015,
Algorithm 3).

    min_w 1/2 ||w||^2 + C xi   s.t.  w'g(R) >= Delta(R) - xi  for every ranking R,

where g(R) = Psi(X, R*) - Psi(X, R) and, over several queries, g and Delta are means over the
queries. Each iteration asks the model (``aprank.models``: exact loss-augmented inference) for
the most violated constraint at a point, adds it to the working set and re-solves the dual QP
over the working set. Optional hard constraints w'h_i >= 1 (APSVMAppx's easy samples), dense or
sparse rows, are added one at a time when violated. Upper bounds on w (HOB-SVM's w2 <= 0) are
hard constraints held in the working set from the first QP on. The primal objective uses the
slack of exact inference, so it is the true objective of its point, not the working-set
approximation, and the working set's dual is a lower bound of the minimum: their difference is
a true duality gap.

Every solver runs one loop (:func:`_run`) over one fit's state (:class:`_Fit`: the problem, the
working set, the history): each iteration the solver evaluates a point and writes one history
record, the loop stops where the solver's test says or at ``max_iter``, and otherwise the solver
grows its model. The solvers (``SOLVERS``):

* ``"cutting-plane"`` (:class:`_CuttingPlane`): each cut is sought at the working set's optimum;
  it stops when the most violated constraint exceeds the working-set slack by at most ``tol``,
  the gap is at most ``tol`` (C times that excess at a QP optimum, so for C > 1 the binding
  test) and no hard constraint is violated by more than ``tol``.
* ``"ocas"`` (:class:`_OCAS`): each cut is sought between the best point so far and the working
  set's optimum; the same problem, working set and gap, and the same stopping rule stated as
  one test on the gap.
* ``"multi-cut"``: OCAS with the cut split over blocks of the risk's separate terms (the model's
  ``split_risk``), each block with its own slack xi_k (the objective C sum_k xi_k; the dual's
  soft constraints sum to at most C per block).
* ``"dual-cd"`` (:class:`_Descent`): dual coordinate descent where the risk is a sum of hinges
  (the model's ``hinge_terms``), handing over to multi-cut past its budget; elsewhere OCAS.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from aprank.learn._checks import (
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    StrOptions,
    validate_params,
)
from aprank.learn._dual_cd import HingeDual
from aprank.learn._qp import solve_dual
from aprank.learn._slow_fits import duration, expect_seconds, fit_iterations
from aprank.models import StructuredModel

__all__ = ["cutting_plane", "CuttingPlaneResult", "WorkingSet", "SOLVERS"]

#: the solvers of :func:`cutting_plane`'s ``solver`` (name: the function that runs a fit with
#: it), filled below
SOLVERS: dict = {}


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
    """

    w: np.ndarray
    primal: float
    dual: float
    gap: float
    converged: bool
    n_iter: int
    history: list
    working_set: WorkingSet


class WorkingSet:
    """Constraint vectors, offsets, kinds and their Gram matrix, grown incrementally.

    G and K live in buffers of doubling capacity (``G``, ``K`` are views of their filled
    part), so adding a constraint costs one product with the constraints held, not a copy of
    everything held; pickles and copies carry the filled part only. ``parts`` says what the
    soft constraints cut: the whole risk (1, the 1-slack loops) or that many blocks of it
    (``solver="multi-cut"``; ``block`` holds each constraint's block).

    Parameters
    ----------
    dim : int
        The dimension of w (the length of every constraint vector).
    """

    def __init__(self, dim: int):
        self._G = np.zeros((0, dim))
        self._K = np.zeros((0, 0))
        self._n = 0
        self.b = np.zeros(0)
        self.soft = np.zeros(0, dtype=bool)
        self.idle = np.zeros(0, dtype=np.int64)   # iterations each constraint has been inactive
        self.permanent = np.zeros(0, dtype=bool)   # bounds of w: never pruned
        self.z = np.zeros(0)
        self.ridge = 0.0                           # last ridge quadprog needed (the fallback)
        # per constraint, its Constraint.output (None: not re-evaluable)
        self.outputs: list[object] = []
        self.block = np.zeros(0, dtype=np.int64)   # the risk's part a soft constraint cuts
        self.parts = 1          # the parts its soft constraints cut (1: the whole risk)
        # solver="dual-cd": alpha_i / (C a_i) of its last solve
        self.fractions: np.ndarray | None = None

    @property
    def G(self) -> np.ndarray:
        return self._G[:self._n]

    @property
    def K(self) -> np.ndarray:
        return self._K[:self._n, :self._n]

    def __len__(self) -> int:
        return self._n

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_G"], state["_K"] = self.G.copy(), self.K.copy()
        return state

    def __setstate__(self, state):
        # aprank 0.1.0's working set held no outputs, blocks or multipliers: it reads as a
        # 1-slack working set whose constraints cannot be re-evaluated
        state.setdefault("outputs", [None] * state["_n"])
        state.setdefault("block", np.zeros(state["_n"], dtype=np.int64))
        state.setdefault("parts", 1)
        state.setdefault("fractions", None)
        self.__dict__.update(state)

    def add(self, g: np.ndarray, b: float, soft: bool, permanent: bool = False,
            output=None, block: int = 0) -> None:
        self._append(np.asarray(g, dtype=float)[None, :], [float(b)], soft, permanent,
                     [output], [int(block)])

    def add_parts(self, G: np.ndarray, b: np.ndarray, block: np.ndarray) -> None:
        """Soft constraints w'G[j] >= b[j] - xi_block[j] at once (a multi-cut iteration's
        parts; one product with the constraints held for all of them)."""
        self._append(np.asarray(G, dtype=float), np.asarray(b, dtype=float), True, False,
                     [None] * len(b), block)

    def _append(self, G, b, soft, permanent, outputs, block) -> None:
        n, m = self._n, G.shape[0]
        if n + m > self._G.shape[0]:        # full: double the capacity
            cap = max(8, 2 * (n + m))
            grown = np.zeros((cap, self._G.shape[1]))
            grown[:n] = self.G
            K = np.zeros((cap, cap))
            K[:n, :n] = self.K
            self._G, self._K = grown, K
        cross = self.G @ G.T
        self._G[n:n + m] = G
        self._K[n:n + m, :n] = cross.T
        self._K[:n, n:n + m] = cross
        self._K[n:n + m, n:n + m] = G @ G.T
        self._n = n + m
        # np.concatenate, not np.r_: this runs every iteration, and np.r_'s call costs far more
        self.b = np.concatenate((self.b, b))
        self.soft = np.concatenate((self.soft, np.full(m, bool(soft))))
        self.idle = np.concatenate((self.idle, np.zeros(m, dtype=np.int64)))
        self.z = np.concatenate((self.z, np.zeros(m)))
        self.permanent = np.concatenate((self.permanent, np.full(m, bool(permanent))))
        self.outputs.extend(outputs)
        self.block = np.concatenate((self.block, np.asarray(block, dtype=np.int64)))

    def keep(self, mask: np.ndarray) -> None:
        index = np.flatnonzero(mask)
        m = index.shape[0]
        # compacted in place: rows and columns move only towards the start
        self._G[:m] = self._G[index]
        self._K[:m, :m] = self._K[np.ix_(index, index)]
        self._n = m
        self.b, self.soft = self.b[mask], self.soft[mask]
        self.idle, self.z = self.idle[mask], self.z[mask]
        self.permanent = self.permanent[mask]
        self.outputs = [self.outputs[i] for i in index]
        self.block = self.block[mask]

    def slack(self, w: np.ndarray) -> float:
        """The working set's model of the risk at w: max(0, largest violation b_c - w'g_c over
        the soft constraints), summed over the blocks of a multi-cut working set."""
        return float(self.block_slacks(w).sum())

    def block_slacks(self, w: np.ndarray) -> np.ndarray:
        """Per block 0 .. parts - 1, max(0, its largest violation at w)."""
        worst = np.zeros(self.parts)
        if self.soft.any():
            violation = (self.b - self.G @ w)[self.soft]
            if self.parts == 1:
                worst[0] = max(0.0, float(np.max(violation)))
            else:
                np.maximum.at(worst, self.block[self.soft], violation)
        return worst


def _row(matrix, i: int) -> np.ndarray:
    """Row i of a dense or sparse matrix as a dense vector (a sparse matrix is never densified
    whole: only the rows that join the working set are)."""
    row = matrix[i]
    return np.asarray(row.todense()).ravel() if sp.issparse(row) else np.asarray(row, dtype=float)


def _offered(model, capability: str, *args):
    """What the model's optional ``capability`` gives (``aprank.models.StructuredModel``), or
    None where the model does not offer it (a model written to the core alone)."""
    method = getattr(model, capability, None)
    return None if method is None else method(*args)


def _solve_working_set(ws: WorkingSet, C: float, tol: float):
    """Solve the working-set dual; return w, the dual objective and the active constraints."""
    # the dual objective decides when to stop, so it must be far more precise than tol
    sol = solve_dual(ws.K, ws.b, ws.soft, C, z0=ws.z, ridge=ws.ridge, precision=1e-3 * tol,
                     block=ws.block if ws.parts > 1 else None)
    ws.z, ws.ridge = sol.z, sol.ridge
    w = ws.G.T @ sol.z
    # dual weights this small move w by a negligible amount; such constraints are inactive
    active = sol.z > 1e-7 * max(C, 1.0)
    return w, sol.objective, active


def _match_parts(ws: WorkingSet, parts: int) -> None:
    """Keep a warm working set's soft constraints only where they cut the same parts of the
    risk as this loop will (a cut of the whole risk is no cut of one block's)."""
    if ws.parts != parts:
        if ws.soft.any():
            ws.keep(~ws.soft)
        ws.parts = parts


@dataclass
class _Point:
    """A point where inference ran: its true primal objective, its cut and hard violation (and
    the cut's parts, where the risk is split)."""

    w: np.ndarray
    primal: float
    cut: Any
    hard_gap: float
    worst_hard: int | None
    parts: tuple | None = None


@dataclass
class _Fit:
    """One run of :func:`cutting_plane`: the problem and its settings, the working set, the
    point ``w`` the solvers move (the working set's optimum, or where a warm start seeks its
    first cut), the working set's dual objective and the history. What every solver does the
    same way is here: inference at a point with the hard constraints' check, the history
    record, the warm start, the QP and the result."""

    model: Any
    C: float
    tol: float
    max_iter: int
    prune_after: int
    hard: Any
    upper: np.ndarray | None
    callback: Callable[[dict], None] | None
    ws: WorkingSet
    w: np.ndarray
    first_at_w0: bool = False
    dual: float = 0.0
    history: list = field(default_factory=list)

    def evaluate(self, w: np.ndarray, split=None) -> _Point:
        """Inference at w (the cut and its parts by ``split``, a ``RiskSplit``), the true
        primal objective there and the worst hard constraint."""
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
        return _Point(w, 0.5 * float(w @ w) + self.C * max(cut.violation, 0.0), cut, hard_gap,
                      worst_hard, parts)

    def record(self, primal: float, violation: float, working_slack: float,
               hard_violation: float, *, w: np.ndarray, dual: float | None = None,
               inference_seconds: float = 0.0, qp_seconds: float = 0.0,
               info: dict | None = None, result=None) -> dict:
        """The iteration's history entry (``CuttingPlaneResult.history``), handed to the
        callback with the point ``w`` and what inference returned; ``dual`` defaults to the
        working set's."""
        dual = self.dual if dual is None else dual
        entry = {"iteration": len(self.history) + 1, "primal": primal, "dual": dual,
                 "gap": primal - dual, "violation": violation, "working_slack": working_slack,
                 "hard_violation": hard_violation, "n_constraints": len(self.ws),
                 "inference_seconds": inference_seconds, "qp_seconds": qp_seconds,
                 **(info or {})}
        self.history.append(entry)
        if self.callback is not None:
            self.callback({**entry, "w": w, "result": result})
        return entry

    def start(self, parts: int) -> None:
        """A warm working set made to cut ``parts`` parts of the risk, and its optimum (w kept
        where ``first_at_w0``) and dual; else w as given and dual 0."""
        _match_parts(self.ws, parts)
        if self.ws.permanent.all():
            self.dual = 0.0
            return
        optimum, self.dual, _ = _solve_working_set(self.ws, self.C, self.tol)
        if not self.first_at_w0:
            self.w = optimum if self.upper is None else np.minimum(optimum, self.upper)

    def add_hard(self, at: _Point) -> None:
        """The point's worst hard constraint joins the working set where it is violated by
        more than tol."""
        if at.hard_gap > self.tol:
            assert at.worst_hard is not None, "a positive hard gap is the worst hard constraint's"
            self.ws.add(_row(self.hard, at.worst_hard), 1.0, soft=False)

    def next_optimum(self) -> None:
        """The working set's optimum (w clipped to ``upper``) and dual objective, the QP's time
        in the last history entry; then the constraints inactive for ``prune_after``
        iterations in a row go."""
        ws, prune_after = self.ws, self.prune_after
        t0 = time.perf_counter()
        w, self.dual, active = _solve_working_set(ws, self.C, self.tol)
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

    def result(self, w: np.ndarray, converged: bool) -> CuttingPlaneResult:
        """The result at w, with the objectives of the last history entry."""
        last = self.history[-1]
        return CuttingPlaneResult(w, last["primal"], last["dual"], last["gap"], converged,
                                  len(self.history), self.history, self.ws)


def _run(fit: _Fit, solver) -> CuttingPlaneResult:
    """The loop every solver runs: ``solver.start(fit)``, then per iteration
    ``solver.iterate(fit)`` (one history record; True where it has converged, False where it
    stops without, None to go on) and, while iterations are left, ``solver.grow(fit)``;
    ``solver.finish(fit)`` gives the w returned. Iterations count the fit's whole history, so
    that a run continuing another's (``"dual-cd"``'s hand-over) shares its ``max_iter``."""
    solver.start(fit)
    while True:
        converged = solver.iterate(fit)
        if converged is None and len(fit.history) < fit.max_iter:
            solver.grow(fit)
            continue
        return fit.result(solver.finish(fit), bool(converged))


class _CuttingPlane:
    """``solver="cutting-plane"``: each cut is sought at the working set's optimum, which is
    the w returned."""

    def start(self, fit: _Fit) -> None:
        fit.start(1)

    def iterate(self, fit: _Fit) -> bool | None:
        at = self.at = fit.evaluate(fit.w)
        self.slack = fit.ws.slack(at.w)
        self.gap = fit.record(at.primal, at.cut.violation, self.slack, at.hard_gap, w=at.w,
                              inference_seconds=at.cut.seconds, info=at.cut.info,
                              result=at.cut.result)["gap"]
        tol = fit.tol
        if at.cut.violation <= self.slack + tol and self.gap <= tol and at.hard_gap <= tol:
            return True
        return None

    def grow(self, fit: _Fit) -> None:
        cut = self.at.cut
        if cut.violation > self.slack + fit.tol or self.gap > fit.tol:
            fit.ws.add(cut.g, cut.b, soft=True, output=cut.output)
        fit.add_hard(self.at)
        fit.next_optimum()

    def finish(self, fit: _Fit) -> np.ndarray:
        return self.at.w


#: OCAS seeks the next cut mu of the way from the best point to the working set's optimum.
#: mu doubles (up to 1: the plain step) after a cut point that improved the best point and
#: halves (down to this) after one that did not, so that where the working set's optima are
#: good (small C) the steps are the plain ones, and where they zig-zag (large C) the cuts come
#: from near the best point. Franc & Sonnenburg (2009) fix mu = 0.1 after an exact line search.
#: On the fit benchmark's data (digits, HJA, Yahoo; C up to 1e4), of fixed mu from 0.05 to 0.7
#: and this rule with floors 0.05 and 0.1, only this one converged in every fit (Yahoo's AP at
#: C = 1e4 was the hardest), with the best fixed mu's iterations at large C and the plain
#: loop's at small C.
_OCAS_MU_MIN = 0.05


class _OCAS:
    """The optimized cutting plane (OCAS; Franc & Sonnenburg, JMLR 2009) for the 1-slack
    structured SVM: the plain loop, but each cut is sought nearer the best point so far.

    The plain cutting plane seeks each cut at the working set's optimum w_c, which at large C
    swings far from the solution while the model is poor (a zig-zag), so its cuts teach little
    about the solution's neighbourhood. OCAS keeps the best point so far, w_b (least true
    objective F among the points evaluated), and seeks the cut at w_b + mu (w_c - w_b), mu
    adapted (``_OCAS_MU_MIN``).
    OCAS proper first moves w_b by an exact line search towards w_c; that needs the risk along
    a line in closed form (a sum of per-sample hinges), which AP's and NDCG's maximum over all
    rankings is not. Searching by inference instead (1 or 2 evaluations of F on the segment,
    minimising the cutting-plane model there) took fewer iterations but more inference calls
    and more time than evaluating F at the cut point alone, which is what this does: one
    inference per iteration, as the plain loop.

    The working set's dual is a lower bound of min F whatever points its cuts came from, so
    ``F(w_b) - dual`` is a true duality gap, and the loop stops when it is at most
    ``min(1, C) tol``: the plain rule's two tests (the violation exceeds the working-set slack
    by at most tol, the gap is at most tol) at a working-set optimum, where the gap is C times
    that excess. Where the model is already exact at the cut point (its cut adds nothing), the
    next cut is sought at w_c itself, as in the plain loop, which then either adds a cut or
    stops. A point that violates a hard constraint by more than tol never becomes w_b, and its
    worst hard constraint joins the working set as in the plain loop; with upper bounds, w_b
    and w_c meet them, so the points between do. F(w_b) never increases.

    With ``n_blocks`` > 1 (``solver="multi-cut"``) and a model whose risk splits
    (``model.split_risk``), each inference adds the cuts of the risk's parts whose violation
    exceeds their block's model, each block with its own slack: a model of the risk at least
    as tight as the 1-slack one from the same inference calls.
    """

    def __init__(self, n_blocks: int = 1):
        self.n_blocks = n_blocks

    def start(self, fit: _Fit) -> None:
        self.split = _offered(fit.model, "split_risk", self.n_blocks) if self.n_blocks > 1 else None
        self.parts = 1 if self.split is None else self.split.n_parts
        fit.start(self.parts)
        self.stop = min(1.0, fit.C) * fit.tol
        self.best: _Point | None = None
        self.exact = False
        self.mu = 1.0

    def iterate(self, fit: _Fit) -> bool | None:
        best, w = self.best, fit.w
        query = w if best is None or self.exact else best.w + self.mu * (w - best.w)
        at = self.at = fit.evaluate(query, self.split)
        if best is not None:
            self.mu = (min(1.0, 2 * self.mu) if at.primal < best.primal
                       else max(_OCAS_MU_MIN, 0.5 * self.mu))
        slack = fit.ws.slack(query)
        # the cut raises the model at its point by C times this excess; a thousandth of what
        # the stopping rule tolerates counts as nothing
        self.exact = fit.C * (at.cut.violation - slack) <= 1e-3 * self.stop
        if at.hard_gap <= fit.tol and (best is None or at.primal < best.primal):
            self.best = best = at
        shown = at if best is None else best
        gap = fit.record(shown.primal, at.cut.violation, slack, shown.hard_gap, w=query,
                         inference_seconds=at.cut.seconds, info=at.cut.info,
                         result=at.cut.result)["gap"]
        return True if best is not None and gap <= self.stop else None

    def grow(self, fit: _Fit) -> None:
        if not self.exact:
            self._add_cut(fit.ws, 1e-3 * self.stop / (fit.C * self.parts))
        fit.add_hard(self.at)
        fit.next_optimum()

    def _add_cut(self, ws: WorkingSet, floor: float) -> None:
        """The cut at the point: whole, or its parts that raise their block's model by more
        than ``floor`` (the rest would only grow the QP), the part that raises it most
        always."""
        at = self.at
        if at.parts is None:
            ws.add(at.cut.g, at.cut.b, soft=True, output=at.cut.output)
            return
        G, b = at.parts
        excess = (b - G @ at.w) - ws.block_slacks(at.w)
        chosen = excess > floor
        chosen[np.argmax(excess)] = True
        index = np.flatnonzero(chosen)
        ws.add_parts(G[index], b[index], index)

    def finish(self, fit: _Fit) -> np.ndarray:
        return (self.at if self.best is None else self.best).w


#: the most blocks of ``solver="multi-cut"``, and how many iterations in a row its cuts may be
#: inactive before they go (at most ``prune_after``): of 8, 16 and 32 blocks and 5, 10 and 50
#: iterations, measured on the fit benchmark's data at C = 100 and 1e4, these gave the fewest
#: seconds where the QP is large (Yahoo LTR, 300 features), while 32 blocks saved iterations
#: but not time.
MULTI_CUT_BLOCKS = 16
MULTI_CUT_PRUNE_AFTER = 5


class _Descent:
    """``solver="dual-cd"``'s iterations: dual coordinate descent where the risk is a sum of
    hinges (``terms``, the model's ``hinge_terms()``: the 0-1 loss).

    Each iteration runs a round of epochs (``aprank.learn._dual_cd``) and then measures the
    gap exactly: primal = 1/2 ||w||^2 + C times the hinge risk at w (what the 0-1 loss's exact
    inference gives), dual = the descent's dual objective, a lower bound of the same primal.
    The loop stops at OCAS's rule, gap <= min(1, C) tol, or unconverged once its budget
    (``DUAL_CD_EPOCHS``, ``DUAL_CD_PASSES``) is spent; :func:`_dual_cd` then hands over. ``w0``
    does not start the descent (its start is a warm working set's multipliers, else 0).
    """

    def __init__(self, terms):
        self.terms = terms

    def start(self, fit: _Fit) -> None:
        X, weight, sign = self.terms
        self.descent = HingeDual(X, weight, sign, fit.C, fractions=fit.ws.fractions)
        self.stop = min(1.0, fit.C) * fit.tol
        self.paces: float | None = None   # full epochs per epoch in the last round

    def iterate(self, fit: _Fit) -> bool | None:
        descent = self.descent
        epochs, passes = descent.epochs, descent.passes
        seconds = descent.run(_round_epochs(descent, self.paces))
        self.paces = (descent.passes - passes) / max(descent.epochs - epochs, 1)
        violation = descent.risk()
        w = descent.w
        gap = fit.record(0.5 * float(w @ w) + fit.C * violation, violation, float("nan"), 0.0,
                         w=w, dual=descent.dual, qp_seconds=seconds,
                         info={"epochs": descent.epochs})["gap"]
        if gap <= self.stop:
            return True
        return False if _budget_spent(descent) else None

    def grow(self, fit: _Fit) -> None:
        """Nothing: the next round of epochs goes on from the multipliers."""

    def finish(self, fit: _Fit) -> np.ndarray:
        fit.ws.fractions = self.descent.fractions
        return self.descent.w.copy()

    def hand_over(self, fit: _Fit, split) -> None:
        """The multipliers' cut into the working set, split as ``split`` (the model's
        ``RiskSplit``, or None: one cut) splits the risk: its dual is the descent's."""
        ws = fit.ws
        _match_parts(ws, 1 if split is None else split.n_parts)
        if split is None:
            g, b = self.descent.cut()
            ws.add(g, b, soft=True)
        else:
            G, b = split.hinge_cut(*self.descent.hinge_cut())
            ws.add_parts(G, b, np.arange(split.n_parts))


def _round_epochs(dual_cd: HingeDual, paces) -> int:
    """The epochs of the descent's next round: a quarter of those so far, at least 10 (the
    gap costs about an epoch), no more than the budgets leave at the last round's use per
    epoch (``paces``: full epochs per epoch; None before the first round)."""
    epochs = min(max(10, dual_cd.epochs // 4), DUAL_CD_EPOCHS - dual_cd.epochs)
    if paces is not None and paces > 0:
        epochs = min(epochs, max(1, int((DUAL_CD_PASSES - dual_cd.passes) / paces)))
    return epochs


def _budget_spent(dual_cd: HingeDual) -> bool:
    return dual_cd.epochs >= DUAL_CD_EPOCHS or dual_cd.passes >= DUAL_CD_PASSES


#: ``solver="dual-cd"``'s coordinate descent hands over to multi-cut OCAS after this many
#: epochs, or after the work of this many full epochs (``HingeDual.passes``: shrinking makes
#: epochs cheaper, and a descent that still visits most units converges slowly). The budget is
#: in passes over X, as the cutting planes' iterations also cost (X w and X'c each), so that a
#: dense wide set, whose passes are long, is not handed over after a few epochs (there the
#: descent alone converges far sooner than OCAS from its cuts); in counts, not seconds, so that
#: a fit does not depend on the machine's speed. The measurements behind both are in
#: ``docs/learning.md`` (the 0-1 loss's solver).
DUAL_CD_EPOCHS = 300
DUAL_CD_PASSES = 100


def _plain(fit: _Fit) -> CuttingPlaneResult:
    return _run(fit, _CuttingPlane())


def _ocas(fit: _Fit) -> CuttingPlaneResult:
    return _run(fit, _OCAS())


def _multi_cut(fit: _Fit) -> CuttingPlaneResult:
    """OCAS with the risk's parts cut separately (``MULTI_CUT_BLOCKS``)."""
    return _run(fit, _OCAS(MULTI_CUT_BLOCKS))


def _dual_cd(fit: _Fit) -> CuttingPlaneResult:
    """Dual coordinate descent (:class:`_Descent`) where the risk is a sum of hinges, then,
    if it has not converged within its budget and iterations are left, multi-cut OCAS from its
    cuts and w with the remaining iterations (at large C the descent converges slowly where
    many multipliers end between their bounds, and the cutting planes do not). Where the risk
    is not a sum of hinges, or with hard constraints or upper bounds, it is OCAS.
    """
    terms = _offered(fit.model, "hinge_terms") if fit.hard is None and fit.upper is None else None
    if terms is None:
        return _ocas(fit)
    descent = _Descent(terms)
    res = _run(fit, descent)
    if res.converged or res.n_iter == fit.max_iter:
        return res
    descent.hand_over(fit, _offered(fit.model, "split_risk", MULTI_CUT_BLOCKS))
    fit.w, fit.first_at_w0 = res.w, True
    return _multi_cut(fit)


SOLVERS.update({"cutting-plane": _plain, "ocas": _ocas, "multi-cut": _multi_cut,
                "dual-cd": _dual_cd})


def _bound(ws: WorkingSet, upper, dim: int) -> np.ndarray:
    """``upper`` checked, and each finite bound w_k <= u_k a permanent hard constraint of the
    working set (unless a warm working set holds it already)."""
    upper = np.asarray(upper, dtype=float)
    if upper.shape != (dim,) or np.isnan(upper).any():
        raise ValueError(f"upper must hold {dim} bounds (+inf for none), got shape {upper.shape}")
    have = {int(np.argmin(row)) for row in ws.G[ws.permanent]}    # rows -e_k
    for k in np.flatnonzero(np.isfinite(upper)):
        if int(k) not in have:
            ws.add(-np.eye(1, dim, int(k)).ravel(), -float(upper[k]), soft=False, permanent=True)
    return upper


@validate_params({"C": [POSITIVE], "tol": [POSITIVE], "max_iter": [POSITIVE_INT],
                  "prune_after": [NON_NEGATIVE_INT], "callback": [callable, None],
                  "solver": [StrOptions(set(SOLVERS))], "first_at_w0": ["boolean"]},
                 prefer_skip_nested_validation=True)
def cutting_plane(model: StructuredModel, C: float, *, tol: float = 1e-3, max_iter: int = 1000,
                  prune_after: int = 50, hard=None, w0: np.ndarray | None = None,
                  working_set: WorkingSet | None = None, upper: np.ndarray | None = None,
                  callback: Callable[[dict], None] | None = None,
                  solver: str = "ocas", first_at_w0: bool = False) -> CuttingPlaneResult:
    """Train w on ``model`` (any :class:`aprank.models.StructuredModel`).

    Parameters
    ----------
    model : StructuredModel
        The joint feature, loss and inference: ``model.most_violated(w)`` gives the cut (the
        model's optional capabilities serve the solvers that use them).
    C : float
        The regularisation constant (> 0).
    tol : float, default 1e-3
        Stop when the most violated constraint exceeds the working-set slack by at most
        ``tol``, the primal-dual gap is at most ``tol`` and no hard constraint is violated by
        more than ``tol`` (OCAS: its best point's gap at most ``min(1, C) tol``, the same tests
        at a working-set optimum, and that point within ``tol`` of the hard constraints).
    max_iter : int, default 1000
        The most iterations (history entries).
    prune_after : int, default 50
        Drop a constraint inactive for this many iterations in a row (0: never).
    hard : array or sparse matrix of shape (m, d), optional
        Rows h_i giving hard constraints w'h_i >= 1.
    w0 : ndarray of shape (d,), optional
        Where the first most violated constraint is sought (default 0).
    working_set : WorkingSet, optional
        Constraints of an earlier fit on the same model, to start from.
    upper : ndarray of shape (d,), optional
        Upper bounds of w (+inf where there is none). Each finite bound w_k <= u_k is a hard
        constraint in the working set from the start, never pruned, and w is clipped to the
        bounds after each QP (which meets them up to rounding).
    callback : callable, optional
        Called in every iteration with a dict: its history entry plus ``w`` (the point
        evaluated) and ``result`` (what inference returned, e.g. the ranks; None for dual-cd).
    solver : {"ocas", "cutting-plane", "multi-cut", "dual-cd"}, default "ocas"
        "cutting-plane": each cut is sought at the working set's optimum, which is the w
        returned. "ocas": the optimized cutting plane (Franc & Sonnenburg 2009), each cut
        sought between the best point so far and the working set's optimum, and the best
        point returned: the same objective, stopping rule and gap, fewer iterations at large C
        (see ``docs/learning.md``). "multi-cut": OCAS where the model's risk splits into
        separate terms (``model.split_risk``: queries of AP and NDCG, samples of the 0-1
        loss), each inference adding the cuts of up to ``MULTI_CUT_BLOCKS`` blocks of them,
        each block with its own slack; the same objective, stopping rule and gap, with a model
        at least as tight from the same inference calls; OCAS where the risk does not split
        (one query of AP or NDCG, sample weights, the pairwise, latent-AP and Dask models).
        "dual-cd": dual coordinate descent where the risk is a sum of hinges
        (``model.hinge_terms``: the 0-1 loss) and there are no hard constraints or bounds,
        multi-cut after its budget; OCAS elsewhere.
    first_at_w0 : bool, default False
        With a ``working_set``, seek the first cut at ``w0`` (its dual still starts the gap)
        rather than at the working set's optimum, so that the first history entry's primal is
        the objective at ``w0``: what CCCP reads as F(w_t) when it carries a working set.

    Returns
    -------
    CuttingPlaneResult
        The weights, objectives, history and final working set.

    Notes
    -----
    The parameters are checked (``InvalidParameterError``) unless the caller has checked them
    (an estimator's fit). Before the first iteration, ``min(max_iter, 10)`` iterations at the
    model's ``estimated_seconds()`` join the fit's estimate, which warns once, with a
    ``aprank.learn.SlowFitWarning``, when it reaches a minute.
    """
    iterations = fit_iterations(max_iter)
    per_iteration = _offered(model, "estimated_seconds")
    if per_iteration is not None:
        expect_seconds(f"{iterations} iteration{'s' * (iterations > 1)} of about "
                       f"{duration(per_iteration)}", iterations * per_iteration, "cutting_plane")
    dim = model.size_joint_feature
    ws = working_set if working_set is not None else WorkingSet(dim)
    w = np.zeros(dim) if w0 is None else np.asarray(w0, dtype=float).copy()
    if upper is not None:
        upper = _bound(ws, upper, dim)
        w = np.minimum(w, upper)
    return SOLVERS[solver](_Fit(model, C, tol, max_iter, prune_after, hard, upper, callback, ws, w,
                                first_at_w0))
