"""The dual QP of the cutting-plane working set.

Working set: soft constraints w'g_c >= b_c - xi (sharing one slack xi) and hard constraints
w'h_i >= 1 (no slack, used by APSVMAppx for its easy samples). With z = (alpha, beta) and
K the Gram matrix of the constraint vectors, the dual is

    max  b'alpha + 1'beta - 1/2 z'K z   s.t.  z >= 0,  sum(alpha) <= C,

and w = sum_c alpha_c g_c + sum_i beta_i h_i. With ``block`` the soft constraints are cuts of
separate parts of the risk, each part with its own slack (the multi-cut model of
``solver="multi-cut"``): then sum(alpha over block k) <= C for every block k.

:func:`solve_dual` solves it with a primal active-set method made for this problem
(:func:`active_set`, its steps compiled in ``_qp_cy``): a slack variable turns sum(alpha) <= C
into a simplex, the free variables' equality-constrained subproblem is a small dense solve by a
Cholesky factor updated from step to step, and the previous solution is the start (one
constraint joins the working set per cutting-plane iteration, so a handful of steps finish). K
is a Gram matrix, only semi-definite: where the subproblem's Hessian is singular the method
steps along a direction of zero curvature to the next bound, which leaves the optimum exact (w
is unique even where z is not); where the curvature is small but not zero, the step stops at
the minimum along the direction if that comes before the bound, so the objective never rises
(a rise let the steps cycle for good on degenerate multi-cut working sets). Where the active
set fails (its step limit), quadprog with ridged proximal steps solves the QP
(:func:`solve_dual_quadprog`, also the tests' reference); the training benchmark's page
(``docs/benchmarks/training.md``) compares their costs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import quadprog

import aprank.learn._qp_cy as _qp_cy

__all__ = ["DualSolution", "solve_dual", "active_set", "solve_dual_quadprog"]

#: what the compiled solver reports: an optimum checked, and one its check refused
_OPTIMAL, _UNVERIFIED = 0, 1


@dataclass
class DualSolution:
    z: np.ndarray          # dual variables, in the order of the working set
    objective: float       # dual objective, evaluated with the exact Gram matrix
    ridge: float           # ridge of quadprog's proximal steps (0: none, always for the active set)
    steps: int = 0         # active-set steps (0 where quadprog solved it)


def _dual(K, b, z) -> float:
    return float(b @ z - 0.5 * z @ K @ z)


def solve_dual(K: np.ndarray, b: np.ndarray, soft: np.ndarray, C: float, *,
               z0: np.ndarray | None = None, ridge: float = 0.0,
               precision: float = 1e-12, block: np.ndarray | None = None) -> DualSolution:
    """Maximise D(z) = b'z - 1/2 z'Kz over z >= 0 with sum(z[soft]) <= C (with ``block``:
    sum(z[soft & (block == k)]) <= C for every block k).

    z0 : a start (e.g. the previous solution, 0 for new constraints); it is made feasible.
    The active set (:func:`active_set`) solves it; should it fail (a step limit reached, a
    non-finite value), quadprog does (:func:`solve_dual_quadprog`, with ``ridge`` and
    ``precision``).
    """
    z = active_set(K, b, soft, C, z0, precision=precision, block=block)
    if z is not None:
        z, steps = z
        return DualSolution(z, _dual(K, b, z), 0.0, steps)
    return solve_dual_quadprog(K, b, soft, C, ridge=ridge, precision=precision, block=block,
                               z0=z0)


def _block_ids(soft: np.ndarray, block) -> np.ndarray:
    """Per constraint its sum's index 0 .. n_blocks - 1 (the blocks present, in order), -1 for
    a hard constraint."""
    if block is None:
        return np.where(soft, 0, -1).astype(np.intp)
    block = np.asarray(block)
    if block.shape != soft.shape:
        raise ValueError(f"block must have one entry per constraint, got shape {block.shape}")
    ids = np.full(soft.shape[0], -1, dtype=np.intp)
    ids[soft] = np.unique(block[soft], return_inverse=True)[1]
    return ids


def active_set(K: np.ndarray, b: np.ndarray, soft: np.ndarray, C: float,
               z0: np.ndarray | None = None, max_steps: int | None = None,
               precision: float = 0.0, block: np.ndarray | None = None):
    """(z, steps) maximising b'z - 1/2 z'Kz over z >= 0, sum(z[soft]) <= C (per block, with
    ``block``); None where the method fails (its step limit reached, a non-finite value, or an
    optimum that fails its check).

    Minimises f(x) = 1/2 x'Kx - b'x over x = (z, s) >= 0 with sum(x over soft and s) = C
    (s the slack of the sum, with zero rows in K and b; no equality when nothing is soft;
    with blocks, one slack and one such sum per block),
    by the primal active-set method (Nocedal & Wright 2006, Algorithm 16.3): the bound x_i = 0
    holds for the variables of the working set W, the others F are free. Each step solves
    min f(x + p) with p_W = 0 and the sum fixed, in a basis of that subspace (one free soft
    variable is eliminated), by the reduced Hessian's Cholesky factor, kept from step to step;
    where the Hessian is singular and the reduced gradient has a component in its null space,
    f falls linearly along it, so the step follows it to the first bound. A full step reaches
    the subproblem's minimum; then the bounds' multipliers say whether x is optimal or which
    bound to release. The steps run compiled (``_qp_cy``), and the optimum is checked against
    a recomputed gradient, to within ``precision`` (its multipliers to ``precision`` over the
    largest x) or the roundoff of the problem's scale where that is looser.
    """
    k = b.shape[0]
    soft = np.asarray(soft, dtype=bool)
    ids = _block_ids(soft, block)
    n = k + int(ids.max(initial=-1)) + 1
    limit = max_steps if max_steps is not None else 5 * n + 50
    z0 = np.zeros(k) if z0 is None else np.ascontiguousarray(z0, dtype=float)
    K, b = np.ascontiguousarray(K, dtype=float), np.ascontiguousarray(b, dtype=float)
    status, steps, _, _, _, x = _qp_cy.solve(K, b, ids, float(C), z0, limit, float(precision))[:6]
    if status == _UNVERIFIED and precision > 0.0:
        # an optimum the caller's precision refused: its own roundoff-scaled check may still
        # pass it, which is better than the fallback's ridged steps
        status, steps, _, _, _, x = _qp_cy.solve(K, b, ids, float(C), z0, limit, 0.0)[:6]
    return (x[:k].copy(), steps) if status == _OPTIMAL else None


def _qp(K, b, A, lower, member, C):
    """quadprog's solution, or None when it refuses K or returns an infeasible point (which it
    does when K is nearly singular). member: (k, n_blocks) indicator of each block's sum."""
    try:
        z = quadprog.solve_qp(K, b, A, lower, 0)[0]
    except ValueError:
        return None
    slack = 1e-9 * max(C, 1.0)
    if z.min() < -slack or np.any(z @ member > C + slack):
        return None
    # remove the rounding left over, so that the dual objective is a true lower bound
    return _feasible(z, member, C)


def _feasible(z, member, C):
    """z clipped at 0, each block's members scaled down where their sum exceeds C."""
    z = np.maximum(z, 0.0)
    total = z @ member
    over = total > C
    if over.any():
        z = z * (member @ np.where(over, C / np.where(over, total, 1.0), 1.0)
                 + (1.0 - member.sum(1)))
    return z


def solve_dual_quadprog(K: np.ndarray, b: np.ndarray, soft: np.ndarray, C: float, *,
                        ridge: float = 0.0, precision: float = 1e-12,
                        max_steps: int = 100, block: np.ndarray | None = None,
                        z0: np.ndarray | None = None) -> DualSolution:
    """quadprog, with ridged proximal steps where K is singular: :func:`solve_dual`'s fallback.

    quadprog needs a positive definite matrix, but a Gram matrix is only semi-definite (two
    equal constraints, or more constraints than features, make it singular), and when it is
    nearly singular quadprog's answer can break the constraints. Then a ridge r is added and the
    ridged problem is solved repeatedly as proximal steps,
        z <- argmax D(z) - r/2 ||z - z_prev||^2,
    each well conditioned, until D gains less than ``precision`` per step (so the result is
    only as exact as that). ``ridge`` is where to start (the last value that worked); it grows
    tenfold whenever quadprog still fails. The steps start from ``z0`` made feasible (clipped
    at 0, each block scaled into its sum; default 0), and only a step that gains D is taken,
    so the result is never below the start: from 0, a hundred steps can end far below a warm
    start (0.76 against 6.08 on a degenerate multi-cut working set whose optimum is 6.15).
    """
    k = b.shape[0]
    ids = _block_ids(np.asarray(soft, dtype=bool), block)
    n_groups = int(ids.max(initial=-1)) + 1
    member = (ids[:, None] == np.arange(n_groups)[None, :]).astype(float)
    A = np.hstack([np.eye(k), -member])
    lower = np.r_[np.zeros(k), np.full(n_groups, -float(C))]

    if ridge == 0.0:
        z = _qp(K, b, A, lower, member, C)
        if z is not None:
            return DualSolution(z, _dual(K, b, z), 0.0)
        ridge = 1e-8 * max(float(np.max(np.diag(K))), 1e-12)
    z = np.zeros(k) if z0 is None else _feasible(np.asarray(z0, dtype=float), member, C)
    value = _dual(K, b, z)
    for _ in range(max_steps):
        step = _qp(K + ridge * np.eye(k), b + ridge * z, A, lower, member, C)
        if step is None:
            ridge *= 10.0
            if ridge > 1e6 * max(float(np.max(np.diag(K))), 1e-12):
                raise RuntimeError("quadprog failed on the working-set QP even with ridge "
                                   f"{ridge:g}")
            continue
        gained = _dual(K, b, step) - value
        if gained > 0.0:            # quadprog's roundoff can lose a little: not taken
            z, value = step, value + gained
        if gained <= precision:
            break
    return DualSolution(z, value, ridge)
