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

Every solver runs one loop (``aprank.learn._solvers.run_solver``) over one fit's state
(``CuttingPlaneRun``: the problem, the working set, the history): each iteration the solver
evaluates a point and writes one history record, the loop stops where the solver's test says
or at ``max_iter``, and otherwise the solver grows its model. The built-in solvers, registered
here (``aprank.learn.solvers()``):

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
* ``"dual-cd"`` (:class:`_DualCD`): dual coordinate descent where the risk is a sum of hinges
  (the model's ``hinge_terms``), handing over to multi-cut past its budget; elsewhere OCAS, and
  OCAS (its declared fallback) with hard constraints or upper bounds.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from aprank.learn._checks import (
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    StrOptions,
    validate_params,
)
from aprank.learn._dual_cd import HingeDual
from aprank.learn._slow_fits import duration, expect_seconds, fit_iterations
from aprank.learn._solvers import (
    SOLVER_NAMES,
    CuttingPlaneResult,
    CuttingPlaneRun,
    EvaluatedPoint,
    Solver,
    add_builtin,
    run_solver,
    solver_for,
)
from aprank.learn._working_set import WorkingSet
from aprank.models import StructuredModel

__all__ = ["cutting_plane", "CuttingPlaneResult", "WorkingSet"]


def _offered(model, capability: str, *args):
    """What the model's optional ``capability`` gives (``aprank.models.StructuredModel``), or
    None where the model does not offer it (a model written to the core alone)."""
    method = getattr(model, capability, None)
    return None if method is None else method(*args)


class _CuttingPlane(Solver):
    """``solver="cutting-plane"``: each cut is sought at the working set's optimum, which is
    the w returned.

    Attributes
    ----------
    at : EvaluatedPoint or None
        The point of the last iteration (None before the first).
    slack : float
        The working set's slack there.
    gap : float
        Its gap.
    """

    def __init__(self) -> None:
        self.at: EvaluatedPoint | None = None
        self.slack = 0.0
        self.gap = float("inf")

    def start(self, run: CuttingPlaneRun) -> None:
        self.at, self.slack, self.gap = None, 0.0, float("inf")
        run.start(1)

    def iterate(self, run: CuttingPlaneRun) -> bool | None:
        at = self.at = run.evaluate(run.w)
        self.slack = run.working_set.slack(at.w)
        self.gap = run.record(at.primal, at.cut.violation, self.slack, at.hard_gap, w=at.w,
                              inference_seconds=at.cut.seconds, info=at.cut.info,
                              result=at.cut.result)["gap"]
        tol = run.tol
        if at.cut.violation <= self.slack + tol and self.gap <= tol and at.hard_gap <= tol:
            return True
        return None

    def grow(self, run: CuttingPlaneRun) -> None:
        at = self.at
        assert at is not None, "grow follows an iteration"
        cut = at.cut
        if cut.violation > self.slack + run.tol or self.gap > run.tol:
            run.working_set.add(cut.g, cut.b, soft=True, output=cut.output)
        run.add_hard(at)
        run.next_optimum()

    def finish(self, run: CuttingPlaneRun) -> np.ndarray:
        assert self.at is not None, "finish follows an iteration"
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


class _OCAS(Solver):
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

    Parameters
    ----------
    n_blocks : int, default 1
        The most blocks the cut is split over (1: one cut).

    Attributes
    ----------
    split : RiskSplit or None
        The model's split of the risk (None: one cut).
    parts : int
        The parts each cut has (1 without a split).
    stop : float
        The gap the loop stops at, ``min(1, C) tol``.
    best : EvaluatedPoint or None
        The best point so far, w_b (None until a point meets the hard constraints).
    exact : bool
        Whether the working set's model was exact at the last cut point (the next cut is then
        sought at w_c).
    mu : float
        The fraction of the way from w_b to w_c where the next cut is sought.
    at : EvaluatedPoint or None
        The point of the last iteration.
    block_slacks : ndarray of shape (parts,)
        The working set's slack of each block there (``WorkingSet.block_slacks``).
    """

    def __init__(self, n_blocks: int = 1) -> None:
        self.n_blocks = n_blocks
        self.split = None
        self.parts = 1
        self.stop = 0.0
        self.best: EvaluatedPoint | None = None
        self.exact = False
        self.mu = 1.0
        self.at: EvaluatedPoint | None = None
        self.block_slacks = np.zeros(1)

    def start(self, run: CuttingPlaneRun) -> None:
        self.split = _offered(run.model, "split_risk", self.n_blocks) if self.n_blocks > 1 else None
        self.parts = 1 if self.split is None else self.split.n_parts
        run.start(self.parts)
        self.stop = min(1.0, run.C) * run.tol
        self.best = self.at = None
        self.exact = False
        self.mu = 1.0

    def iterate(self, run: CuttingPlaneRun) -> bool | None:
        best, w = self.best, run.w
        query = w if best is None or self.exact else best.w + self.mu * (w - best.w)
        at = self.at = run.evaluate(query, self.split)
        if best is not None:
            self.mu = (min(1.0, 2 * self.mu) if at.primal < best.primal
                       else max(_OCAS_MU_MIN, 0.5 * self.mu))
        self.block_slacks = run.working_set.block_slacks(query)
        slack = float(self.block_slacks.sum())
        # the cut raises the model at its point by C times this excess; a thousandth of what
        # the stopping rule tolerates counts as nothing
        self.exact = run.C * (at.cut.violation - slack) <= 1e-3 * self.stop
        if at.hard_gap <= run.tol and (best is None or at.primal < best.primal):
            self.best = best = at
        shown = at if best is None else best
        gap = run.record(shown.primal, at.cut.violation, slack, shown.hard_gap, w=query,
                         inference_seconds=at.cut.seconds, info=at.cut.info,
                         result=at.cut.result)["gap"]
        return True if best is not None and gap <= self.stop else None

    def grow(self, run: CuttingPlaneRun) -> None:
        at = self.at
        assert at is not None, "grow follows an iteration"
        if not self.exact:
            self._add_cut(at, run.working_set, self.block_slacks,
                          1e-3 * self.stop / (run.C * self.parts))
        run.add_hard(at)
        run.next_optimum()

    @staticmethod
    def _add_cut(at: EvaluatedPoint, ws: WorkingSet, block_slacks: np.ndarray,
                 floor: float) -> None:
        """The cut at the point: whole, or its parts that raise their block's model (its
        ``block_slacks`` at the point) by more than ``floor`` (the rest would only grow the
        QP), the part that raises it most always."""
        if at.parts is None:
            ws.add(at.cut.g, at.cut.b, soft=True, output=at.cut.output)
            return
        G, b = at.parts
        excess = (b - G @ at.w) - block_slacks
        chosen = excess > floor
        chosen[np.argmax(excess)] = True
        index = np.flatnonzero(chosen)
        ws.add_parts(G[index], b[index], index)

    def finish(self, run: CuttingPlaneRun) -> np.ndarray:
        last = self.at if self.best is None else self.best
        assert last is not None, "finish follows an iteration"
        return last.w


#: the most blocks of ``solver="multi-cut"``: of 8, 16 and 32 blocks, measured on the fit
#: benchmark's data at C = 100 and 1e4 (with cuts idle for 5, 10 and 50 iterations pruned,
#: ``MULTI_CUT_PRUNE_AFTER``), 16 gave the fewest seconds where the QP is large (Yahoo LTR, 300
#: features), while 32 blocks saved iterations but not time.
MULTI_CUT_BLOCKS = 16


def _multi_cut() -> _OCAS:
    """``solver="multi-cut"``: OCAS with the risk's parts cut separately."""
    return _OCAS(MULTI_CUT_BLOCKS)


class _DualCD(Solver):
    """``solver="dual-cd"``: dual coordinate descent where the risk is a sum of hinges (the
    model's ``hinge_terms()``: the 0-1 loss), then, if it has not converged within its budget
    and iterations are left, multi-cut OCAS from its w with the remaining iterations (at large
    C the descent converges slowly where many multipliers end between their bounds, and the
    cutting planes do not). Where the risk is not a sum of hinges it is OCAS.

    Each iteration of the descent runs a round of epochs (``aprank.learn._dual_cd``) and then
    measures the gap exactly: primal = 1/2 ||w||^2 + C times the hinge risk at w (what the 0-1
    loss's exact inference gives), dual = the descent's dual objective, a lower bound of the
    same primal. It stops at OCAS's rule, gap <= min(1, C) tol, or hands over once its budget
    (``DUAL_CD_EPOCHS``, ``DUAL_CD_PASSES``) is spent. ``w0`` does not start the descent (its
    start is a warm working set's multipliers, else 0). It enforces no hard constraints or
    upper bounds: it is registered with OCAS as its fallback.

    Attributes
    ----------
    descent : HingeDual or None
        The descent while it runs (None where OCAS runs).
    stop : float
        The gap the descent stops at, ``min(1, C) tol``.
    paces : float or None
        Full epochs per epoch in the descent's last round (None before the first).
    cuts : _OCAS or None
        The cutting plane that runs where the risk is not a sum of hinges, or after the
        hand-over (None while the descent runs).
    """

    def __init__(self) -> None:
        self.descent: HingeDual | None = None
        self.stop = 0.0
        self.paces: float | None = None
        self.cuts: _OCAS | None = None

    def start(self, run: CuttingPlaneRun) -> None:
        self.descent, self.paces, self.cuts = None, None, None
        terms = _offered(run.model, "hinge_terms")
        if terms is None:
            self.cuts = _OCAS()
            self.cuts.start(run)
            return
        X, weight, sign = terms
        self.descent = HingeDual(X, weight, sign, run.C, fractions=run.working_set.fractions)
        self.stop = min(1.0, run.C) * run.tol

    def iterate(self, run: CuttingPlaneRun) -> bool | None:
        if self.cuts is not None:
            return self.cuts.iterate(run)
        descent = self.descent
        assert descent is not None, "the descent runs until the hand-over"
        epochs, passes = descent.epochs, descent.passes
        seconds = descent.run(_round_epochs(descent, self.paces))
        self.paces = (descent.passes - passes) / max(descent.epochs - epochs, 1)
        violation = descent.risk()
        w = descent.w
        gap = run.record(0.5 * float(w @ w) + run.C * violation, violation, float("nan"), 0.0,
                         w=w, dual=descent.dual, qp_seconds=seconds,
                         info={"epochs": descent.epochs})["gap"]
        return True if gap <= self.stop else None

    def grow(self, run: CuttingPlaneRun) -> None:
        if self.cuts is not None:
            self.cuts.grow(run)
        elif self.descent is not None and _budget_spent(self.descent):
            # the budget spent with iterations left: the cutting planes take over
            self._hand_over(run)
        # else nothing: the next round of epochs goes on from the multipliers

    def finish(self, run: CuttingPlaneRun) -> np.ndarray:
        if self.cuts is not None:
            return self.cuts.finish(run)
        return self._descent_w(run)

    def _descent_w(self, run: CuttingPlaneRun) -> np.ndarray:
        """The descent's w, its multipliers kept in the working set for a warm start."""
        descent = self.descent
        assert descent is not None, "the descent has run"
        run.working_set.fractions = descent.fractions
        return descent.w.copy()

    def _hand_over(self, run: CuttingPlaneRun) -> None:
        """Multi-cut OCAS (OCAS where the risk does not split) from the descent's w, its
        working set built from the cuts at the points it evaluates.

        The descent's multipliers would make a cut of each block's risk with the descent's
        dual, but not one worth keeping: with dual weight C it lies inside the hull of the
        labellings' cuts, and on a separable set at large C (where the descent hands over)
        the working set that held it stalled short of the gap for good (the digits' 5
        against the rest, C = 1000), where OCAS from the descent's w alone converges in a
        dozen iterations."""
        w = self._descent_w(run)
        run.forget_dual()
        run.w, run.first_at_w0 = w, True
        self.cuts = _multi_cut()
        self.cuts.start(run)


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


add_builtin("cutting-plane", _CuttingPlane, hard=True, upper=True)
add_builtin("ocas", _OCAS, hard=True, upper=True)
add_builtin("multi-cut", _multi_cut, hard=True, upper=True)
add_builtin("dual-cd", _DualCD, hard=False, upper=False, fallback="ocas")


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
                  "solver": [StrOptions(SOLVER_NAMES)], "first_at_w0": ["boolean"]},
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
    solver : str, default "ocas"
        A registered solver: "ocas", "cutting-plane", "multi-cut", "dual-cd" or one of yours.
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
        multi-cut after its budget; OCAS elsewhere. Or the name of a solver registered with
        :func:`register_solver` (:func:`solvers` lists them all).
    first_at_w0 : bool, default False
        With a ``working_set``, seek the first cut at ``w0`` (its dual still starts the gap)
        rather than at the working set's optimum, so that the first history entry's primal is
        the objective at ``w0``: what CCCP reads as F(w_t) when it carries a working set.

    Returns
    -------
    CuttingPlaneResult
        The weights, objectives, history and final working set.

    Raises
    ------
    NotImplementedError
        Where ``hard`` or ``upper`` is given and neither the solver nor its fallback enforces
        it (:class:`SolverInfo`).

    Notes
    -----
    The parameters are checked (``InvalidParameterError``) unless the caller has checked them
    (an estimator's fit). Before the first iteration, ``min(max_iter, 10)`` iterations at the
    model's ``estimated_seconds()`` join the fit's estimate, which warns once, with a
    ``aprank.learn.SlowFitWarning``, when it reaches a minute.
    """
    chosen = solver_for(solver, hard, upper)
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
    run = CuttingPlaneRun(model, C, tol, max_iter, prune_after, hard, upper, callback, ws, w,
                          first_at_w0)
    return run_solver(run, chosen.factory())
