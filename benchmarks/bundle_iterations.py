"""Oracle calls of the training solvers on the fit benchmark's problems (issue 27, acceptance b).

``python -m benchmarks.bundle_iterations [--C 100 1000 10000] [--solvers ...] [--data ...]``
(APRANK_DATA set) fits every problem of ``fit_times`` (the same tasks, tol, max_iter and
pruning) with each solver and prints per cell the mean iterations and inference calls
(``RankingModel.most_violated`` calls, counted) over the tasks, the summed CPU milliseconds
(``time.process_time``: less sensitive than wall time to other work on the machine), the
worst |primal - plain primal| over the tasks and whether every fit converged. Then the median
over the cells of plain's iterations / each solver's.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from aprank.models import RankingModel
from benchmarks import fit_times


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--C", type=float, nargs="+", default=[100.0, 1e3, 1e4])
    parser.add_argument("--solvers", nargs="+", default=["cutting-plane", "ocas", "bundle"])
    parser.add_argument("--data", nargs="+", default=list(fit_times.DATA_SETS))
    args = parser.parse_args(argv)
    calls = [0]
    most_violated = RankingModel.most_violated

    def counted(self, w):
        calls[0] += 1
        return most_violated(self, w)

    RankingModel.most_violated = counted
    warnings.simplefilter("ignore")
    print("| data set | C | method | solver | iterations | inference calls | CPU ms | "
          "max abs primal diff to plain | converged |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = {s: [] for s in args.solvers}
    with threadpool_limits(1):
        for name in args.data:
            tasks = fit_times.DATA_SETS[name]()
            for C in args.C:
                for method in fit_times.methods_of(name):
                    its = {}
                    plain_primal = None
                    for solver in args.solvers:
                        n_iter, cpu, converged, primals = [], 0.0, True, []
                        calls[0] = 0
                        for _, X, y, qid in tasks:
                            t0 = time.process_time()
                            r = fit_times.structured_fit(method, X, y, qid, C, solver=solver)
                            cpu += time.process_time() - t0
                            n_iter.append(r["n_iter"])
                            primals.append(r["primal"])
                            converged &= r["converged"]
                        if solver == "cutting-plane":
                            plain_primal = primals
                        diff = (max(abs(a - b) for a, b in zip(primals, plain_primal))
                                if plain_primal is not None else float("nan"))
                        its[solver] = np.mean(n_iter)
                        print(f"| {name} | {C:g} | {method} | {solver} | {np.mean(n_iter):.0f} | "
                              f"{calls[0] / len(tasks):.0f} | {1e3 * cpu:.0f} | {diff:.2g} | "
                              f"{'yes' if converged else 'NO'} |", flush=True)
                    if "cutting-plane" in its:
                        for s in args.solvers:
                            ratios[s].append(its["cutting-plane"] / its[s])
    for s, r in ratios.items():
        if r:
            print(f"median plain/{s} iterations over {len(r)} cells: {np.median(r):.2f} "
                  f"(min {min(r):.2f}, max {max(r):.2f})")


if __name__ == "__main__":
    main()
