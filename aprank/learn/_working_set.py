"""The working set of the cutting planes: constraint vectors, offsets, kinds and their Gram
matrix, grown incrementally, and its dual QP solved warm (``aprank.learn._qp``)."""
from __future__ import annotations

import numpy as np

from aprank.learn._qp import solve_dual

__all__ = ["WorkingSet", "solve_working_set", "match_parts"]


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
        # compacted in place: rows and columns move only towards the start. Rows, then
        # columns: a third of the time of one np.ix_ selection, which a cutting plane makes
        # at nearly every iteration once its constraints start to go idle
        self._G[:m] = self._G[index]
        self._K[:m, :m] = self.K[index][:, index]
        self._n = m
        self.b, self.soft = self.b[mask], self.soft[mask]
        self.idle, self.z = self.idle[mask], self.z[mask]
        self.permanent = self.permanent[mask]
        self.outputs = [self.outputs[i] for i in index.tolist()]
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


def solve_working_set(ws: WorkingSet, C: float, tol: float):
    """Solve the working-set dual; return w, the dual objective and the active constraints."""
    # the dual objective decides when to stop, so it must be far more precise than tol
    sol = solve_dual(ws.K, ws.b, ws.soft, C, z0=ws.z, ridge=ws.ridge, precision=1e-3 * tol,
                     block=ws.block if ws.parts > 1 else None)
    ws.z, ws.ridge = sol.z, sol.ridge
    w = ws.G.T @ sol.z
    # dual weights this small move w by a negligible amount; such constraints are inactive
    active = sol.z > 1e-7 * max(C, 1.0)
    return w, sol.objective, active


def match_parts(ws: WorkingSet, parts: int) -> None:
    """Keep a warm working set's soft constraints only where they cut the same parts of the
    risk as this loop will (a cut of the whole risk is no cut of one block's)."""
    if ws.parts != parts:
        if ws.soft.any():
            ws.keep(~ws.soft)
        ws.parts = parts
