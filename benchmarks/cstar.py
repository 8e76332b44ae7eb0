"""``python -m benchmarks --cstar``: the c-star top-k kernel (no loss term) against the query
size N, for several core sizes, next to ``numpy.argsort`` of the same scores."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from aprank.inference import TopKProblem
from aprank.losses import PrecisionAtK
from benchmarks.timing import median_time

#: Core sizes and query sizes of the c-star scaling (Mensink et al. 2011: O(2^C (N + k log k))).
CSTAR_CORES = (0, 2, 5, 8)
CSTAR_SIZES = (10_000, 100_000, 1_000_000)


def cstar_scaling(sizes=CSTAR_SIZES, cores=CSTAR_CORES, k: int = 100, repeats: int = 5,
                  seed: int = 0):
    """Time the c-star maximisation (no loss term) of one query of N items, k = ``k``, for each
    core size C: rows (C, N, seconds, seconds / numpy.argsort of the same scores), and per C the
    fitted slope of log time against log N. Interactions are random on the core's rows."""
    rows = []
    rng = np.random.default_rng(seed)
    for N in sizes:
        scores = rng.standard_normal(N)
        t_sort = median_time(lambda: np.argsort(scores), repeats, 10.0)
        for C in cores:
            core = np.sort(rng.choice(N, C, replace=False))
            F = sp.csr_matrix((rng.standard_normal(C * N),
                               (np.repeat(core, N), np.tile(np.arange(N), C))),
                              shape=(N, N)) if C else None
            problem = TopKProblem(np.ones(N, bool), PrecisionAtK(k), interactions=F,
                                  core=core if C else None)
            seconds = median_time(lambda: problem.maximise(scores), repeats, 10.0)
            rows.append((C, N, seconds, seconds / t_sort))
    slopes = {C: float(np.polyfit(np.log([r[1] for r in rows if r[0] == C]),
                                  np.log([r[2] for r in rows if r[0] == C]), 1)[0])
              for C in cores} if len(sizes) > 1 else {}
    return rows, slopes


def format_cstar(rows, slopes) -> str:
    """Markdown table of :func:`cstar_scaling`'s rows, then the fitted slopes."""
    out = ["| core C | N | c-star (ms) | per core state (ms) | x numpy.argsort |",
           "|---:|---:|---:|---:|---:|"]
    for C, N, seconds, ratio in rows:
        out.append(f"| {C} | {N:.0e} | {seconds * 1e3:.2f} | {seconds * 1e3 / 2 ** C:.3f} | "
                   f"{ratio:.2f} |")
    out.append("")
    out.append("Slope of log time against log N: " + ", ".join(
        f"C = {C}: {s:.2f}" for C, s in slopes.items()))
    return "\n".join(out)
