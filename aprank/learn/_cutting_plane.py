"""1-slack cutting-plane training with margin rescaling (Joachims, Finley & Yu 2009; Behl 2015,
Algorithm 3).

    min_w 1/2 ||w||^2 + C xi   s.t.  w'g(R) >= Delta(R) - xi  for every ranking R,

where g(R) = Psi(X, R*) - Psi(X, R) and, over several queries, g and Delta are means over the
queries. Each iteration asks the model (``aprank.models``: exact loss-augmented inference) for
the most violated constraint at the current w, adds it to the working set and re-solves the
dual QP over the working set. Optional hard constraints w'h_i >= 1 (APSVMAppx's easy samples),
dense or sparse rows, are added one at a time when violated.

Stopping: when the most violated constraint exceeds the working-set slack by at most ``tol``
and the primal-dual gap is at most ``tol`` (the gap is C times that excess at a QP optimum, so
for C > 1 the second test is the binding one), and no hard constraint is violated by more
than ``tol``. Upper bounds on w (HOB-SVM's w2 <= 0) are hard constraints held in the working set
from the first QP on. The primal objective uses the slack of exact inference at the current w, so it
is the true objective of that w, not the working-set approximation.

That is the plain loop, ``solver="cutting-plane"``. ``solver="ocas"`` (this function's
default) seeks each cut between the best point so far and the working set's optimum instead
(:func:`_ocas`): the same problem, working set and gap, and the same stopping rule stated as one
test on the gap.
``solver="multi-cut"`` is OCAS with the cut split over blocks of the risk's separate terms,
each block with its own slack xi_k (the objective C sum_k xi_k; the dual's soft constraints
sum to at most C per block). The solvers are the entries of ``SOLVERS``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import scipy.sparse as sp

from aprank.learn._checks import (NON_NEGATIVE_INT, POSITIVE, POSITIVE_INT, StrOptions,
                                  validate_params)
from aprank.learn._dual_cd import HingeDual
from aprank.learn._qp import solve_dual
from aprank.learn._slow_fits import duration, expect_seconds, fit_iterations
from aprank.models import StructuredModel

__all__ = ["cutting_plane", "CuttingPlaneResult", "WorkingSet", "SOLVERS"]

#: the solvers of :func:`cutting_plane`'s ``solver`` (name: loop), filled below
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
    history: list = field(default_factory=list)
    working_set: tuple = ()


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
        self.outputs = []       # per constraint, its Constraint.output (None: not re-evaluable)
        self.block = np.zeros(0, dtype=np.int64)   # the risk's part a soft constraint cuts
        self.parts = 1          # the parts its soft constraints cut (1: the whole risk)
        self.fractions = None   # solver="dual-cd": alpha_i / (C a_i) of its last solve

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
        if "G" in state:        # pickled before the buffers: G and K were plain arrays
            state["_G"], state["_K"] = state.pop("G"), state.pop("K")
            state["_n"] = state["_G"].shape[0]
        state.setdefault("outputs", [None] * state["_n"])   # pickled before outputs
        state.setdefault("block", np.zeros(state["_n"], dtype=np.int64))   # before multi-cut
        state.setdefault("parts", 1)
        state.setdefault("fractions", None)     # pickled before solver="dual-cd"
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
        # np.concatenate, not np.r_: this runs every iteration, and np.r_ costs 10 x more
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


def _warm_start(ws, C, tol, w, upper, first_at_w0):
    """(w, dual) to start from: a warm working set's optimum (w kept when ``first_at_w0``),
    else w as given and dual 0."""
    if ws.permanent.all():
        return w, 0.0
    optimum, dual, _ = _solve_working_set(ws, C, tol)
    if not first_at_w0:
        w = optimum if upper is None else np.minimum(optimum, upper)
    return w, dual


def _plain(model, C, tol, max_iter, prune_after, hard, w, ws, upper, callback, first_at_w0):
    """The plain cutting plane: each cut is sought at the working set's optimum."""
    _match_parts(ws, 1)
    w, dual = _warm_start(ws, C, tol, w, upper, first_at_w0)
    history = []
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        cut = model.most_violated(w)
        xi_ws = ws.slack(w)
        hard_gap = 0.0
        worst_hard = None
        if hard is not None and hard.shape[0]:
            margins = np.asarray(hard @ w).ravel()
            worst_hard = int(np.argmin(margins))
            hard_gap = max(0.0, 1.0 - float(margins[worst_hard]))
        primal = 0.5 * float(w @ w) + C * max(cut.violation, 0.0)
        gap = primal - dual
        history.append({
            "iteration": n_iter, "primal": primal, "dual": dual, "gap": gap,
            "violation": cut.violation, "working_slack": xi_ws, "hard_violation": hard_gap,
            "n_constraints": len(ws), "inference_seconds": cut.seconds, "qp_seconds": 0.0,
            **cut.info,
        })
        if callback is not None:
            callback({**history[-1], "w": w, "result": cut.result})
        if cut.violation <= xi_ws + tol and gap <= tol and hard_gap <= tol:
            converged = True
            break
        if n_iter == max_iter:
            break
        if cut.violation > xi_ws + tol or gap > tol:
            ws.add(cut.g, cut.b, soft=True, output=cut.output)
        if hard_gap > tol:
            ws.add(_row(hard, worst_hard), 1.0, soft=False)
        w, dual = _next_optimum(ws, C, tol, upper, prune_after, history[-1])
    return CuttingPlaneResult(w, history[-1]["primal"], history[-1]["dual"], history[-1]["gap"],
                              converged, n_iter, history, ws)


def _next_optimum(ws: WorkingSet, C: float, tol: float, upper, prune_after: int, record: dict):
    """The working set's optimum (w clipped to ``upper``) and dual objective, the QP's time in
    ``record``; then the constraints inactive for ``prune_after`` iterations in a row go."""
    t0 = time.perf_counter()
    w, dual, active = _solve_working_set(ws, C, tol)
    if upper is not None:
        w = np.minimum(w, upper)
    record["qp_seconds"] = time.perf_counter() - t0
    ws.idle = np.where(active, 0, ws.idle + 1)
    # a multi-cut working set gains up to a cut per block each iteration, and most of them
    # are soon idle for good: its soft cuts go sooner (the QP's cost grows with what it holds)
    limit = prune_after
    if ws.parts > 1 and prune_after:
        limit = np.where(ws.soft, min(prune_after, MULTI_CUT_PRUNE_AFTER), prune_after)
    if prune_after and np.any((ws.idle >= limit) & ~ws.permanent):
        ws.keep((ws.idle < limit) | ws.permanent)
    return w, dual


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


@dataclass
class _Point:
    """A point where inference ran: its true primal objective, its cut and hard violation (and
    the cut's parts, for the multi-cut loop)."""

    w: np.ndarray
    primal: float
    cut: object
    hard_gap: float
    worst_hard: Optional[int]
    split: Optional[tuple] = None


def _evaluate(model, C: float, hard, w: np.ndarray, parts: int = 1) -> _Point:
    if parts > 1:
        cut, split = model.most_violated_parts(w, parts)
    else:
        cut, split = model.most_violated(w), None
    hard_gap, worst_hard = 0.0, None
    if hard is not None and hard.shape[0]:
        margins = np.asarray(hard @ w).ravel()
        worst_hard = int(np.argmin(margins))
        hard_gap = max(0.0, 1.0 - float(margins[worst_hard]))
    return _Point(w, 0.5 * float(w @ w) + C * max(cut.violation, 0.0), cut, hard_gap, worst_hard,
                  split)


#: OCAS seeks the next cut mu of the way from the best point to the working set's optimum.
#: mu doubles (up to 1: the plain step) after a cut point that improved the best point and
#: halves (down to this) after one that did not, so that where the working set's optima are
#: good (small C) the steps are the plain ones, and where they zig-zag (large C) the cuts come
#: from near the best point. Franc & Sonnenburg (2009) fix mu = 0.1 after an exact line search. On
#: the fit benchmark's data (digits, HJA, Yahoo; C up to 1e4), of fixed mu from 0.05 to 0.7 and
#: this rule with floors 0.05 and 0.1, only this one converged in every fit (Yahoo's AP at
#: C = 1e4 was the hardest), with the best fixed mu's iterations at large C and the plain
#: loop's at small C.
_OCAS_MU_MIN = 0.05


def _ocas(model, C, tol, max_iter, prune_after, hard, w, ws, upper, callback, first_at_w0,
          n_blocks=1):
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
    (``model.most_violated_parts``), each inference adds the cuts of the risk's parts whose violation
    exceeds their block's model, each block with its own slack: a model of the risk at least
    as tight as the 1-slack one from the same inference calls.
    """
    parts = model.n_cut_parts(n_blocks) if n_blocks > 1 else 1
    _match_parts(ws, parts)
    w, dual = _warm_start(ws, C, tol, w, upper, first_at_w0)
    history = []
    converged = False
    stop = min(1.0, C) * tol
    best: Optional[_Point] = None
    exact = False
    mu = 1.0
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        query = w if best is None or exact else best.w + mu * (w - best.w)
        at = _evaluate(model, C, hard, query, parts)
        if best is not None:
            mu = min(1.0, 2 * mu) if at.primal < best.primal else max(_OCAS_MU_MIN, 0.5 * mu)
        xi_ws = ws.slack(query)
        # the cut raises the model at its point by C times this excess; a thousandth of what
        # the stopping rule tolerates counts as nothing
        exact = C * (at.cut.violation - xi_ws) <= 1e-3 * stop
        if at.hard_gap <= tol and (best is None or at.primal < best.primal):
            best = at
        primal = best.primal if best is not None else at.primal
        gap = primal - dual
        history.append({
            "iteration": n_iter, "primal": primal, "dual": dual, "gap": gap,
            "violation": at.cut.violation, "working_slack": xi_ws,
            "hard_violation": (best or at).hard_gap, "n_constraints": len(ws),
            "inference_seconds": at.cut.seconds, "qp_seconds": 0.0, **at.cut.info,
        })
        if callback is not None:
            callback({**history[-1], "w": query, "result": at.cut.result})
        if best is not None and gap <= stop:
            converged = True
            break
        if n_iter == max_iter:
            break
        if not exact:
            _add_cut(ws, at, 1e-3 * stop / (C * parts))
        if at.hard_gap > tol:
            ws.add(_row(hard, at.worst_hard), 1.0, soft=False)
        w, dual = _next_optimum(ws, C, tol, upper, prune_after, history[-1])
    final = best if best is not None else at
    return CuttingPlaneResult(final.w, final.primal, dual, final.primal - dual, converged,
                              n_iter, history, ws)


def _match_parts(ws: WorkingSet, parts: int) -> None:
    """Keep a warm working set's soft constraints only where they cut the same parts of the
    risk as this loop will (a cut of the whole risk is no cut of one block's)."""
    if ws.parts != parts:
        if ws.soft.any():
            ws.keep(~ws.soft)
        ws.parts = parts


def _add_cut(ws: WorkingSet, at: "_Point", floor: float) -> None:
    """The cut at a point: whole, or its parts that raise their block's model by more than
    ``floor`` (the rest would only grow the QP), the part that raises it most always."""
    if at.split is None:
        ws.add(at.cut.g, at.cut.b, soft=True, output=at.cut.output)
        return
    G, b = at.split
    excess = (b - G @ at.w) - ws.block_slacks(at.w)
    chosen = excess > floor
    chosen[np.argmax(excess)] = True
    index = np.flatnonzero(chosen)
    ws.add_parts(G[index], b[index], index)


def _multi_cut(model, C, tol, max_iter, prune_after, hard, w, ws, upper, callback, first_at_w0):
    """OCAS with the risk's parts cut separately (:func:`_ocas`, ``MULTI_CUT_BLOCKS``)."""
    return _ocas(model, C, tol, max_iter, prune_after, hard, w, ws, upper, callback,
                 first_at_w0, n_blocks=MULTI_CUT_BLOCKS)


#: the most blocks of ``solver="multi-cut"``, and how many iterations in a row its cuts may be
#: inactive before they go (at most ``prune_after``). Measured on the fit benchmark's data at
#: C = 100 and 1e4 (Yahoo LTR's AP and 0-1 loss, HJA, MNIST-sized; AMD EPYC): of 8, 16, 32
#: blocks and 5, 10, 50 iterations, 16 and 5 gave the fewest seconds where the QP is large
#: (Yahoo, 300 features: 1.3 s against OCAS's 2.4 s at C = 1e4), while 32 saved iterations
#: but not time.
MULTI_CUT_BLOCKS = 16
MULTI_CUT_PRUNE_AFTER = 5


def _dual_cd(model, C, tol, max_iter, prune_after, hard, w, ws, upper, callback, first_at_w0):
    """Dual coordinate descent where the risk is a sum of hinges (``model.hinge_terms()``: the
    0-1 loss), then multi-cut OCAS from its cuts if it has not converged within its budget
    (``DUAL_CD_EPOCHS``).

    Each iteration runs a round of epochs (``aprank.learn._dual_cd``) and then measures the
    gap exactly: primal = 1/2 ||w||^2 + C times the hinge risk at w (what the 0-1 loss's exact
    inference gives), dual = the descent's dual objective, a lower bound of the same primal.
    The loop stops at OCAS's rule, gap <= min(1, C) tol. Coordinate descent converges fast
    where few multipliers end between their bounds (small and middle C) and slowly at large
    C, where the cutting planes do not: past its budget the descent's multipliers become cuts
    of the working set, one per block of multi-cut's split (``model.split_hinge_cut``;
    one cut where the model does not split), whose dual is the descent's, and multi-cut OCAS
    carries on from the descent's w with the remaining iterations. Where the risk is not a
    sum of hinges, or with hard constraints or upper bounds, it is OCAS. ``w0`` does not start
    the descent (its start is a warm working set's multipliers, else 0).
    """
    terms = model.hinge_terms() if hard is None and upper is None else None
    if terms is None:
        return _ocas(model, C, tol, max_iter, prune_after, hard, w, ws, upper, callback,
                     first_at_w0)
    stop = min(1.0, C) * tol
    dual_cd = HingeDual(terms.X, terms.weight, terms.sign, C, fractions=ws.fractions)
    history = []
    converged = False
    paces = None
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        before = dual_cd.epochs, dual_cd.passes
        seconds = dual_cd.run(_round_epochs(dual_cd, paces))
        run = max(dual_cd.epochs - before[0], 1)
        paces = (dual_cd.passes - before[1]) / run
        violation = dual_cd.risk()
        w = dual_cd.w
        dual = dual_cd.dual
        primal = 0.5 * float(w @ w) + C * violation
        history.append({
            "iteration": n_iter, "primal": primal, "dual": dual, "gap": primal - dual,
            "violation": violation, "working_slack": float("nan"), "hard_violation": 0.0,
            "n_constraints": len(ws), "inference_seconds": 0.0, "qp_seconds": seconds,
            "epochs": dual_cd.epochs,
        })
        if callback is not None:
            callback({**history[-1], "w": w, "result": None})
        if primal - dual <= stop:
            converged = True
            break
        if n_iter == max_iter or _budget_spent(dual_cd):
            break
    ws.fractions = dual_cd.fractions
    if converged or n_iter == max_iter:
        return CuttingPlaneResult(w.copy(), history[-1]["primal"], history[-1]["dual"],
                                  history[-1]["gap"], converged, n_iter, history, ws)
    # the multipliers' cut, split as multi-cut splits the risk where it does
    parts = model.n_cut_parts(MULTI_CUT_BLOCKS)
    _match_parts(ws, parts)
    if parts > 1:
        G, b = model.split_hinge_cut(*dual_cd.hinge_cut(), MULTI_CUT_BLOCKS)
        ws.add_parts(G, b, np.arange(parts))
    else:
        g, b = dual_cd.cut()
        ws.add(g, b, soft=True)
    res = _ocas(model, C, tol, max_iter - n_iter, prune_after, None, w.copy(), ws, None,
                callback, True, n_blocks=MULTI_CUT_BLOCKS)
    for entry in res.history:
        entry["iteration"] += n_iter
    return CuttingPlaneResult(res.w, res.primal, res.dual, res.gap, res.converged,
                              n_iter + res.n_iter, history + res.history, ws)


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
#: epochs cheaper, and a descent that still visits most units converges slowly). Work in
#: passes over X, as the cutting planes' iterations also cost (X w and X'c each): a budget
#: in multiply-adds (it was 2e7) handed a dense wide set (2,000 x 5,900: 1.2e7 a pass) over
#: after two epochs, and OCAS then took 48 s where the descent alone converges in 2 s
#: (88 passes, at the fit benchmark's C = 1e4; LinearSVC 2.6 s). Counts, not seconds, so that
#: a fit does not depend on the machine's speed. Measured on the fit benchmark (AMD EPYC):
#: on the MNIST-sized set (5000 x 785, dense) the descent now runs longer before handing over
#: than under the multiply-add budget (0.6 against 0.33 s at C = 100, 1.7 against 0.84 s at
#: 1e4), still within 0.5 x LinearSVC's time; on digits and HJA the pass budget was the one
#: that bound (their epochs are cheap); Yahoo LTR (sparse) was not measured again.
DUAL_CD_EPOCHS = 300
DUAL_CD_PASSES = 100

SOLVERS.update({"cutting-plane": _plain, "ocas": _ocas, "multi-cut": _multi_cut,
                "dual-cd": _dual_cd})


@validate_params({"C": [POSITIVE], "tol": [POSITIVE], "max_iter": [POSITIVE_INT],
                  "prune_after": [NON_NEGATIVE_INT], "callback": [callable, None],
                  "solver": [StrOptions(set(SOLVERS))], "first_at_w0": ["boolean"]},
                 prefer_skip_nested_validation=True)
def cutting_plane(model: StructuredModel, C: float, *, tol: float = 1e-3, max_iter: int = 1000,
                  prune_after: int = 50, hard=None, w0: Optional[np.ndarray] = None,
                  working_set: Optional[WorkingSet] = None, upper: Optional[np.ndarray] = None,
                  callback: Optional[Callable[[dict], None]] = None,
                  solver: str = "ocas", first_at_w0: bool = False) -> CuttingPlaneResult:
    """Train w on ``model`` (any :class:`aprank.models.StructuredModel`).

    Parameters
    ----------
    model : StructuredModel
        The joint feature, loss and inference: ``model.most_violated(w)`` gives the cut.
    C : float
        The regularisation constant (> 0).
    tol : float, default 1e-3
        Stop when the most violated constraint exceeds the working-set slack by at most
        ``tol``, the primal-dual gap is at most ``tol`` and no hard constraint is violated by
        more than ``tol`` (OCAS: its best point's gap at most ``min(1, C) tol``,
        the same tests at a working-set optimum, and that point within ``tol`` of the hard
        constraints).
    max_iter : int, default 1000
        The most cutting-plane iterations.
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
        Called after inference in every iteration with a dict: the iteration's history entry
        plus ``w`` (the current weights) and ``result`` (what inference returned, e.g. the
        ranks). SciPy's ``minimize(callback=...)`` habit: diagnostics without flags.
    solver : {"ocas", "cutting-plane", "multi-cut"}, default "ocas"
        "cutting-plane": each cut is sought at the working set's optimum, which is the w
        returned. "ocas": the optimized cutting plane (Franc & Sonnenburg 2009), each cut
        sought between the best point so far and the working set's optimum, and the best
        point returned: the same objective, stopping rule and gap, fewer iterations at large C
        (see ``docs/learning.md``). "multi-cut": OCAS where the model's risk splits into
        separate terms (``model.cut_parts``: queries of AP and NDCG, samples of the 0-1 loss),
        each inference adding the cuts of up to ``MULTI_CUT_BLOCKS`` blocks of them, each
        block with its own slack; the same objective, stopping rule and gap, with a model at
        least as tight from the same inference calls. Where the model does not split its cut
        (one query of AP or NDCG, sample weights, the pairwise, latent-AP and Dask models),
        it is OCAS.
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
    C, tol, max_iter, prune_after and solver are checked (scikit-learn's ``InvalidParameterError``)
    unless the caller has checked them already (an estimator's fit).

    Before the first iteration, ``min(max_iter, 10)`` iterations at the model's estimate
    (``model.estimated_seconds()``) join the fit's estimate, which warns once, with a
    ``aprank.learn.SlowFitWarning``, when it reaches a minute.
    """
    iterations = fit_iterations(max_iter)
    per_iteration = model.estimated_seconds()
    if per_iteration is not None:
        expect_seconds(f"{iterations} iteration{'s' * (iterations > 1)} of about "
                       f"{duration(per_iteration)}", iterations * per_iteration, "cutting_plane")
    dim = model.size_joint_feature
    ws = working_set if working_set is not None else WorkingSet(dim)
    w = np.zeros(dim) if w0 is None else np.asarray(w0, dtype=float).copy()
    if upper is not None:
        upper = np.asarray(upper, dtype=float)
        if upper.shape != (dim,) or np.isnan(upper).any():
            raise ValueError(f"upper must hold {dim} bounds (+inf for none), got shape {upper.shape}")
        bounded = np.flatnonzero(np.isfinite(upper))
        have = {int(np.argmin(row)) for row in ws.G[ws.permanent]}    # rows -e_k
        for k in bounded:
            if int(k) not in have:
                ws.add(-np.eye(1, dim, int(k)).ravel(), -float(upper[k]), soft=False, permanent=True)
        w = np.minimum(w, upper)
    return SOLVERS[solver](model, C, tol, max_iter, prune_after, hard, w, ws, upper, callback,
                           first_at_w0)
