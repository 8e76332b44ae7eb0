"""The dual QP of the cutting-plane working set.

Working set: soft constraints w'g_c >= b_c - xi (sharing one slack xi) and hard constraints
w'h_i >= 1 (no slack, used by APSVMAppx for its easy samples). With z = (alpha, beta) and
K the Gram matrix of the constraint vectors, the dual is

    max  b'alpha + 1'beta - 1/2 z'K z   s.t.  z >= 0,  sum(alpha) <= C,

and w = sum_c alpha_c g_c + sum_i beta_i h_i. With ``block`` the soft constraints are cuts of
separate parts of the risk, each part with its own slack (the multi-cut model of
``solver="multi-cut"``): then sum(alpha over block k) <= C for every block k.

:func:`solve_dual` solves it with a primal active-set method made for this problem
(:func:`active_set`): a slack variable turns sum(alpha) <= C into a simplex, the free variables'
equality-constrained subproblem is a small dense solve, and the previous solution is the start
(one constraint joins the working set per cutting-plane iteration, so a handful of steps
finish: 4 to 11 on average on the experiment data). The steps run compiled (``_qp_cy``), with
the subproblem's Cholesky factor updated from step to step. K is a Gram matrix, only
semi-definite: where the subproblem's Hessian is singular the method steps along a direction of
zero curvature to the next bound (here, in NumPy), which leaves the optimum exact (w is unique
even where z is not). quadprog, with ridged proximal steps where
K is singular, is kept as :func:`solve_dual_quadprog` (the former solver: the fallback should
the active set ever fail, and the reference of the tests).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import quadprog
from scipy.linalg import LinAlgError, eigh
from scipy.linalg.lapack import dpotrf, dpotrs

from aprank.learn import _qp_cy

__all__ = ["DualSolution", "solve_dual", "active_set", "solve_dual_quadprog"]

_EPS = np.finfo(float).eps


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
    return solve_dual_quadprog(K, b, soft, C, ridge=ridge, precision=precision, block=block)


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
    ``block``); None on failure.

    Minimises f(x) = 1/2 x'Kx - b'x over x = (z, s) >= 0 with sum(x over soft and s) = C
    (s the slack of the sum, with zero rows in K and b; no equality when nothing is soft;
    with blocks, one slack and one such sum per block),
    by the primal active-set method (Nocedal & Wright 2006, Algorithm 16.3): the bound x_i = 0
    holds for the variables of the working set W, the others F are free. Each step solves
    min f(x + p) with p_W = 0 and the sum fixed, in a basis of that subspace (one free soft
    variable is eliminated): a Cholesky solve where the reduced Hessian is positive definite,
    else its eigen-decomposition; where the reduced gradient has a component in the Hessian's
    null space, f falls linearly along it, so the step follows it to the first bound. A full
    step reaches the subproblem's minimum; then the bounds' multipliers say whether x is
    optimal or which bound to release.
    """
    k = b.shape[0]
    soft = np.asarray(soft, dtype=bool)
    ids = _block_ids(soft, block)
    n = k + int(ids.max(initial=-1)) + 1
    limit = max_steps if max_steps is not None else 5 * n + 50
    z0 = np.zeros(k) if z0 is None else np.ascontiguousarray(z0, dtype=float)
    # the compiled solver builds the augmented problem, takes every step whose reduced Hessian
    # is positive definite (checking first whether the start, the previous optimum, is already
    # stationary) and verifies its optimum; a singular step, or an optimum that fails the check,
    # is left to the loop below, from where it stopped
    K, b = np.ascontiguousarray(K, dtype=float), np.ascontiguousarray(b, dtype=float)
    status, done, Ka, ba, group, x, free, kkt_tol, _ = _qp_cy.solve(
        K, b, ids, float(C), z0, limit, float(precision))
    if status == 1 and precision > 0.0:
        # the compiled steps could not meet the caller's precision (a singular step, or an
        # optimum the tighter check refused): their own roundoff-scaled check first, rather
        # than the loop below, whose eigen-decomposition at every step took a 21 s experiment
        # past ten minutes when it ran first
        status, done, Ka, ba, group, x, free, kkt_tol, _ = _qp_cy.solve(
            K, b, ids, float(C), z0, limit, 0.0)
    if status == 0:
        return x[:k].copy(), done
    if status != 1:
        return None
    free = free.view(bool)
    n_groups = n - k
    at_minimum = False
    for steps in range(done + 1, limit + 1):
        grad = Ka @ x - ba
        if not np.all(np.isfinite(grad)):
            return None
        F = np.flatnonzero(free)
        if not at_minimum:
            p, bounded = _step(Ka, grad, F, group)
            if p is None:
                return None
            # the largest step keeping x >= 0 (full step 1 unless unbounded)
            shrinking = p < 0
            alpha, block = (1.0 if bounded else np.inf), -1
            if shrinking.any():
                ratios = -x[F][shrinking] / p[shrinking]
                j = int(np.argmin(ratios))
                if ratios[j] < alpha:
                    alpha, block = float(ratios[j]), int(F[shrinking][j])
            if not np.isfinite(alpha):
                return None             # f unbounded below: the primal is infeasible
            x[F] = np.maximum(x[F] + alpha * p, 0.0)
            if block >= 0:
                x[block] = 0.0
                free[block] = False
                continue
            at_minimum = True
            continue
        # at the subproblem's minimum: the multipliers of the bounds x_i = 0 in W, each block's
        # nu minus the mean gradient over its free members
        inside = group[F] >= 0
        total = np.bincount(group[F][inside], weights=grad[F][inside], minlength=n_groups)
        count = np.bincount(group[F][inside], minlength=n_groups)
        nu = np.append(-np.divide(total, count, out=np.zeros(n_groups), where=count > 0), 0.0)
        mu = grad + nu[group]
        mu[free] = np.inf
        i = int(np.argmin(mu))
        if mu[i] >= -kkt_tol:
            return x[:k].copy(), steps
        free[i] = True
        at_minimum = False
    return None


def _step(Ka, grad, F, group):
    """(p, bounded): the step on the free variables F minimising the quadratic with the sum
    of each block's free members fixed, or, where the reduced Hessian is singular and the
    gradient has a component along its null space, that descent direction (bounded False).
    (None, None) where the eigen-decomposition fails."""
    KF = Ka[np.ix_(F, F)]
    gF = grad[F]
    gF_group = group[F]
    m = F.shape[0]
    # basis of {p : sum(p over each block) = 0}: every free variable but each block's first,
    # whose p is minus the sum of its block's other members': p = E y
    first = {}
    for a, g in enumerate(gF_group):
        if g >= 0 and g not in first:
            first[g] = a
    keep = np.ones(m, dtype=bool)
    keep[list(first.values())] = False
    kept = np.flatnonzero(keep)
    E = np.zeros((m, kept.shape[0]))
    E[kept, np.arange(kept.shape[0])] = 1.0
    for col, a in enumerate(kept):
        g = gF_group[a]
        if g >= 0:
            E[first[g], col] = -1.0
    H = E.T @ KF @ E
    r = E.T @ gF
    if H.shape[0] == 0:
        return np.zeros(m), True

    def lift(y):
        return E @ y

    # LAPACK directly: these solves are tiny, and scipy's wrappers cost more than the work
    L, info = dpotrf(H, lower=1, clean=0)
    if info == 0:
        d = np.diag(L)
        if d.min() ** 2 > 1e-10 * max(float(np.diag(H).max()), 1e-300):
            y, info = dpotrs(L, r, lower=1)
            if info == 0:
                return lift(-y), True
    try:
        lam, V = eigh(H, check_finite=False)
    except LinAlgError:
        return None, None
    null = lam <= 1e-10 * max(float(lam[-1]), 1e-300)
    rr = V.T @ r
    rnull = rr[null]
    if rnull.size and np.linalg.norm(rnull) > 1e-9 * max(np.linalg.norm(r), 1e-300):
        # zero curvature, non-zero slope: f falls without limit along it until a bound blocks
        return lift(-(V[:, null] @ rnull)), False
    y = -(V[:, ~null] @ (rr[~null] / lam[~null]))
    return lift(y), True


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
    z = np.maximum(z, 0.0)
    total = z @ member
    over = total > C
    if over.any():
        z = z * (member @ np.where(over, C / np.where(over, total, 1.0), 1.0)
                 + (1.0 - member.sum(1)))
    return z


def solve_dual_quadprog(K: np.ndarray, b: np.ndarray, soft: np.ndarray, C: float, *,
                        ridge: float = 0.0, precision: float = 1e-12,
                        max_steps: int = 100, block: np.ndarray | None = None) -> DualSolution:
    """The former solver: quadprog, with ridged proximal steps where K is singular.

    quadprog needs a positive definite matrix, but a Gram matrix is only semi-definite (two
    equal constraints, or more constraints than features, make it singular), and when it is
    nearly singular quadprog's answer can break the constraints. Then a ridge r is added and the
    ridged problem is solved repeatedly as proximal steps,
        z <- argmax D(z) - r/2 ||z - z_prev||^2,
    each well conditioned, until D gains less than ``precision`` per step (so the result is
    only as exact as that). ``ridge`` is where to start (the last value that worked); it grows
    tenfold whenever quadprog still fails.
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
    z = np.zeros(k)
    value = 0.0
    for _ in range(max_steps):
        step = _qp(K + ridge * np.eye(k), b + ridge * z, A, lower, member, C)
        if step is None:
            ridge *= 10.0
            if ridge > 1e6 * max(float(np.max(np.diag(K))), 1e-12):
                raise RuntimeError(f"quadprog failed on the working-set QP even with ridge {ridge:g}")
            continue
        gained = _dual(K, b, step) - value
        z, value = step, value + gained
        if gained <= precision:
            break
    return DualSolution(z, value, ridge)
