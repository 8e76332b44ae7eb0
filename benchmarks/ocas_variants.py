"""OCAS variants on the fit benchmark's problems (issue 27): iterations, inference calls, time.

An experiment, not a table of the docs: ``python -m benchmarks.ocas_variants`` (APRANK_DATA
set) fits every problem of ``fit_times`` at C = 100, 1e3, 1e4 with

* ``ocas``: the adaptive-mu OCAS (one inference per iteration),
* ``ls``: OCAS with its line search (``solver="ocas-line-search"``: the best point moved by a
  line search on the true objective, by inference along the segment, the cut at
  w_b + 0.1 (w_c - w_b)),
* ``ls+cuts``: the same, every point the line search evaluated adding its cut too,
* ``ls+cuts exact``: the same with a line search 10 x more precise (up to 20 evaluations),
* ``plain``: the plain cutting plane,

and prints per cell the mean iterations and inference calls over the tasks and the summed
CPU seconds (``time.process_time``, less sensitive than wall time to other work on the machine).
"""
from __future__ import annotations

import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import aprank.learn._cutting_plane as cutting_plane_module
from aprank.inference import RankingProblem
from benchmarks import fit_times

VARIANTS = {
    "ocas": ("ocas", {}),
    "ls": ("ocas-line-search", {"_EXTRA": False, "_SEARCH_PRECISION": 0.1, "_SEARCH_EVALUATIONS": 8}),
    "ls+cuts": ("ocas-line-search", {"_EXTRA": True, "_SEARCH_PRECISION": 0.1, "_SEARCH_EVALUATIONS": 8}),
    "ls+cuts exact": ("ocas-line-search", {"_EXTRA": True, "_SEARCH_PRECISION": 0.01,
                                          "_SEARCH_EVALUATIONS": 20}),
    "plain": ("cutting-plane", {}),
}


def main():
    calls = [0]
    solve = RankingProblem.solve

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return solve(self, *args, **kwargs)

    RankingProblem.solve = counted
    warnings.simplefilter("ignore")
    rows = []
    with threadpool_limits(1):
        for name in fit_times.DATA_SETS:
            tasks = fit_times.DATA_SETS[name]()
            for C in (100.0, 1e3, 1e4):
                for method in fit_times.methods_of(name):
                    for label, (solver, knobs) in VARIANTS.items():
                        for key, value in knobs.items():
                            setattr(cutting_plane_module, key, value)
                        its, cpu, converged = [], 0.0, True
                        calls[0] = 0
                        for _, X, y, qid in tasks:
                            t0 = time.process_time()
                            r = fit_times.structured_fit(method, X, y, qid, C, solver=solver)
                            cpu += time.process_time() - t0
                            its.append(r["n_iter"])
                            converged &= r["converged"]
                        rows.append((name, C, method, label, np.mean(its), calls[0] / len(tasks),
                                     cpu, converged))
                        print(f"| {name} | {C:g} | {method} | {label} | {np.mean(its):.0f} | "
                              f"{calls[0] / len(tasks):.0f} | {1e3 * cpu:.0f} | "
                              f"{'yes' if converged else 'NO'} |", flush=True)
    return rows


if __name__ == "__main__":
    print("| data set | C | method | variant | iterations | inference calls | CPU ms | converged |")
    print("|---|---|---|---|---|---|---|---|")
    main()
