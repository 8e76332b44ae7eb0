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
    ridge: float           # ridge that made quadprog accept the matrix (0 if none was needed)


def solve_dual(K: np.ndarray, b: np.ndarray, soft: np.ndarray, C: float) -> DualSolution:
    """Maximise b'z - 1/2 z'Kz over z >= 0 with sum(z[soft]) <= C.

    quadprog needs a positive definite matrix; a Gram matrix is only semi-definite (two equal
    constraints make it singular), so on refusal a small ridge, growing a hundredfold each
    time, is added to the diagonal.
    """
    k = b.shape[0]
    A = np.hstack([np.eye(k), -soft.astype(float)[:, None]])
    lower = np.r_[np.zeros(k), -C]
    scale = max(float(np.max(np.diag(K))), 1e-12)
    ridge = 0.0
    for attempt in range(8):
        try:
            z = quadprog.solve_qp(K + ridge * np.eye(k), b, A, lower, 0)[0]
            break
        except ValueError:
            ridge = scale * 1e-13 * 100.0 ** attempt
    else:
        raise RuntimeError(f"quadprog failed on the working-set QP even with ridge {ridge:g}")
    z = np.maximum(z, 0.0)   # quadprog may return -1e-17 for bounds it holds active
    objective = float(b @ z - 0.5 * z @ K @ z)
    return DualSolution(z, objective, ridge)
