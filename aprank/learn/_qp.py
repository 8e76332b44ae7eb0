"""The dual QP of the cutting-plane working set, solved with quadprog.

Working set: soft constraints w'g_c >= b_c - xi (sharing one slack xi) and hard constraints
w'h_i >= 1 (no slack, used by APSVMAppx for its easy samples). With z = (alpha, beta) and
K the Gram matrix of the constraint vectors, the dual is

    max  b'alpha + 1'beta - 1/2 z'K z   s.t.  z >= 0,  sum(alpha) <= C,

and w = sum_c alpha_c g_c + sum_i beta_i h_i.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import quadprog


@dataclass
class DualSolution:
    z: np.ndarray          # dual variables, soft constraints first
    objective: float       # dual objective, evaluated with the exact Gram matrix
    ridge: float           # ridge of the proximal steps (0 when K itself was accepted)


def _qp(K, b, A, lower, soft, C):
    """quadprog's solution, or None when it refuses K or returns an infeasible point (which it
    does when K is nearly singular)."""
    try:
        z = quadprog.solve_qp(K, b, A, lower, 0)[0]
    except ValueError:
        return None
    slack = 1e-9 * max(C, 1.0)
    if z.min() < -slack or z[soft].sum() > C + slack:
        return None
    # remove the rounding left over, so that the dual objective is a true lower bound
    z = np.maximum(z, 0.0)
    total = z[soft].sum()
    if total > C:
        z[soft] *= C / total
    return z


def solve_dual(K: np.ndarray, b: np.ndarray, soft: np.ndarray, C: float, *,
               ridge: float = 0.0, precision: float = 1e-12, max_steps: int = 100) -> DualSolution:
    """Maximise D(z) = b'z - 1/2 z'Kz over z >= 0 with sum(z[soft]) <= C.

    quadprog needs a positive definite matrix, but a Gram matrix is only semi-definite (two
    equal constraints, or more constraints than features, make it singular), and when it is
    nearly singular quadprog's answer can break the constraints. Then a ridge r is added and the
    ridged problem is solved repeatedly as proximal steps,
        z <- argmax D(z) - r/2 ||z - z_prev||^2,
    each well conditioned, until D gains less than ``precision`` per step: the ridge then no
    longer biases the solution (w = sum z_c g_c converges fastest, since directions where K is
    small hardly move w). ``ridge`` is where to start (the last value that worked); it grows
    tenfold whenever quadprog still fails.
    """
    k = b.shape[0]
    A = np.hstack([np.eye(k), -soft.astype(float)[:, None]])
    lower = np.r_[np.zeros(k), -C]

    def dual(z):
        return float(b @ z - 0.5 * z @ K @ z)

    if ridge == 0.0:
        z = _qp(K, b, A, lower, soft, C)
        if z is not None:
            return DualSolution(z, dual(z), 0.0)
        ridge = 1e-8 * max(float(np.max(np.diag(K))), 1e-12)
    z = np.zeros(k)
    value = 0.0
    for _ in range(max_steps):
        step = _qp(K + ridge * np.eye(k), b + ridge * z, A, lower, soft, C)
        if step is None:
            ridge *= 10.0
            if ridge > 1e6 * max(float(np.max(np.diag(K))), 1e-12):
                raise RuntimeError(f"quadprog failed on the working-set QP even with ridge {ridge:g}")
            continue
        gained = dual(step) - value
        z, value = step, value + gained
        if gained <= precision:
            break
    return DualSolution(z, value, ridge)
