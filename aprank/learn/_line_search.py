"""OCAS's line search: the least primal objective on a segment, by exact inference.

Along v(t) = w + t d the objective is F(t) = 1/2 ||w||^2 + t w'd + t^2/2 ||d||^2 + C R(t), the
risk R(t) convex and piecewise linear (a max over outputs of affine functions of t). For the
binary hinge, Franc & Sonnenburg sort the breakpoints; for AP's and NDCG's maximum over all
rankings there is no such list, but each evaluation of R (one inference, through the model's
:class:`aprank.models.Line`) gives the affine piece active there, a lower bound of R that is
exact at that point. The search is the cutting plane in one dimension: minimise the quadratic
plus C times the upper envelope of the pieces known (R >= 0 and the working set's cuts on the
line to start with), evaluate R there, repeat until the best value found is within the
tolerance of the model's minimum, a lower bound of min F on the segment.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["line_search"]


def _envelope_minimum(a: float, b: float, C: float, r: np.ndarray, s: np.ndarray,
                      t_max: float) -> tuple:
    """(t, value): the minimum over [0, t_max] of a/2 t^2 + b t + C max_j (r_j + s_j t), a > 0.

    The upper envelope of the lines (slopes ascending, each kept where it is the highest) is
    built once; on each of its segments the quadratic plus that line has its minimum at the
    stationary point clipped to the segment, and the envelope's minimum is the least of these.
    """
    order = np.lexsort((r, s))      # by slope, then intercept: the last of equal slopes wins
    rs, ss = r[order].tolist(), s[order].tolist()
    hull_r, hull_s, starts = [], [], []
    for ri, si in zip(rs, ss):
        if hull_s and hull_s[-1] == si:
            hull_r.pop(), hull_s.pop(), starts.pop()
        while hull_s:
            # where the new line overtakes the last one kept
            x = (hull_r[-1] - ri) / (si - hull_s[-1])
            if x <= starts[-1]:
                hull_r.pop(), hull_s.pop(), starts.pop()
                continue
            starts.append(x)
            break
        else:
            starts.append(-math.inf)
        hull_r.append(ri)
        hull_s.append(si)
    best_t, best_value = 0.0, math.inf
    ends = starts[1:] + [math.inf]
    for ri, si, lo, hi in zip(hull_r, hull_s, starts, ends):
        lo, hi = max(lo, 0.0), min(hi, t_max)
        if lo > hi:
            continue
        t = min(max(-(b + C * si) / a, lo), hi)
        value = t * (0.5 * a * t + b) + C * (ri + si * t)
        if value < best_value:
            best_t, best_value = t, value
    return best_t, best_value


def line_search(line, C: float, risk0: float, pieces: tuple, t_max: float,
                precision: float, max_evaluations: int) -> tuple:
    """The best point found on [0, t_max] of ``line`` (w + t d) for the primal objective.

    Parameters
    ----------
    line : aprank.models.Line
        The risk along the segment; t = 1 is usually the working set's optimum.
    C : float
        The regularisation constant.
    risk0 : float
        R(0), known (the best point so far).
    pieces : (r, s)
        Affine lower bounds r + s t of R on the line (the working set's cuts).
    t_max : float
        The largest t allowed (hard constraints, upper bounds; may be inf).
    precision : float
        Stop when the best objective found is within this of the model's minimum.
    max_evaluations : int
        The most evaluations of R.

    Returns
    -------
    (t, risk, evaluations)
        The best t (0 if nothing on the line beats the start), R there and how many
        evaluations ran.
    """
    w, d = line.w, line.d
    a = float(d @ d)
    if not a > 0.0:
        return 0.0, risk0, 0
    b = float(w @ d)
    r = np.concatenate((pieces[0], [0.0]))      # R >= 0: the true output's own term
    s = np.concatenate((pieces[1], [0.0]))
    if line.known(0.0):     # the piece active at the start, where inference ran before
        risk, slope = line.risk(0.0)
        r, s = np.append(r, risk), np.append(s, slope)
    best_t, best_value = 0.0, C * risk0     # the objective less its constant 1/2 ||w||^2
    best_risk = risk0
    evaluations = 0
    while evaluations < max_evaluations:
        t, lower = _envelope_minimum(a, b, C, r, s, t_max)
        if best_value - lower <= precision:
            break
        risk, slope = line.risk(t)
        evaluations += 1
        value = t * (0.5 * a * t + b) + C * risk
        if value < best_value:
            best_t, best_value, best_risk = t, value, risk
        r = np.append(r, risk - slope * t)
        s = np.append(s, slope)
    return best_t, best_risk, evaluations
