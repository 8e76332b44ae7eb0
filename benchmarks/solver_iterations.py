"""Iterations and fit times of the training solvers on the fit benchmark's problems
(the target: at least 5 x fewer iterations than the plain loop at C >= 100): ``python -m
benchmarks.solver_iterations [--out PATH]`` (APRANK_DATA set).

Every problem of ``fit_times`` (the same tasks, tol, max_iter = 1000 and pruning), every C of
its grid, fitted by ``solver="cutting-plane"`` (the plain loop), ``"ocas"``, ``"multi-cut"``
(the rank SVMs' default) and, for BinarySVM's 0-1 loss only (elsewhere it is OCAS),
``"dual-cd"`` (BinarySVM's default). Per cell: the mean iterations over the tasks (one
inference call each; for dual-cd, its rounds of epochs, one gap evaluation each, plus OCAS's
iterations after a hand-over) and the summed fit milliseconds (the faster of two runs, one
BLAS thread), and for the other solvers the largest |primal objective - the plain loop's| over
the tasks where the plain loop converged (the same objective within tol = 1e-3). Then, over the
cells with C >= 100, the median of plain iterations / each solver's; where the plain loop stops
at max_iter its ratio is a lower bound.
"""
from __future__ import annotations

import argparse
import datetime
import os
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import fit_times
from benchmarks.machine import machine

SOLVERS = ("cutting-plane", "ocas", "multi-cut", "dual-cd")
#: the methods each solver is measured on where it is not the same as OCAS
ONLY = {"dual-cd": ("BinarySVM",)}


def measure(log=print) -> list:
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in fit_times.DATA_SETS:
            tasks = fit_times.DATA_SETS[name]()
            for C in fit_times.C_VALUES:
                for method in fit_times.methods_of(name):
                    row = {"data": f"{name} ({len(tasks)})", "C": C, "method": method}
                    for solver in SOLVERS:
                        if method not in ONLY.get(solver, (method,)):
                            row[solver] = None
                            continue
                        its, ms, converged, primal = [], 0.0, True, []
                        for _, X, y, qid in tasks:
                            fit = min((fit_times.structured_fit(method, X, y, qid, C, solver=solver)
                                       for _ in range(2)), key=lambda r: r["seconds"])
                            its.append(fit["n_iter"])
                            ms += 1e3 * fit["seconds"]
                            converged &= fit["converged"]
                            primal.append((fit["primal"], fit["converged"]))
                        row[solver] = (float(np.mean(its)), ms, converged)
                        row[solver + " primal"] = primal
                    rows.append(row)
                    log(" ".join(f"{row[s][0]:.0f}/{row[s][1]:.0f}ms" for s in SOLVERS if row[s])
                        + f"  {name} C={C:g} {method}")
    return rows


def _primal_gap(row: dict, solver: str) -> float:
    """The largest |primal - plain primal| over the tasks where the plain loop converged (nan:
    none did)."""
    diffs = [abs(p - q) for (p, _), (q, plain_ok) in
             zip(row[solver + " primal"], row["cutting-plane primal"]) if plain_ok]
    return max(diffs) if diffs else float("nan")


def format_rows(rows: list) -> str:
    head = ["data set (tasks)", "C", "method"]
    for s in SOLVERS:
        head += [f"{s}: iterations", f"{s}: fit ms"] + ([] if s == "cutting-plane" else
                                                       [f"{s}: primal diff"])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["data"], f"{r['C']:g}", r["method"]]
        for s in SOLVERS:
            if r[s] is None:
                cells += ["", ""] + ([] if s == "cutting-plane" else [""])
                continue
            n_iter, ms, converged = r[s]
            cells += [f"{n_iter:.0f}" + ("" if converged else " (NO)"), f"{ms:.1f}"]
            if s != "cutting-plane":
                gap = _primal_gap(r, s)
                cells.append("" if np.isnan(gap) else f"{gap:.1e}")
        out.append("| " + " | ".join(cells) + " |")
    high = [r for r in rows if r["C"] >= 100]
    out.append("")
    for s in SOLVERS[1:]:
        gaps = [g for g in (_primal_gap(r, s) for r in rows if r[s]) if not np.isnan(g)]
        out.append(f"- {s}: largest |primal - plain primal| over the {len(gaps)} cells where the "
                   f"plain loop converged: {max(gaps):.1e} (tol 1e-3)")
    for s in SOLVERS[1:]:
        cells = [r for r in high if r[s]]
        ratio = [r["cutting-plane"][0] / r[s][0] for r in cells]
        faster = sum(r[s][1] < r["ocas"][1] for r in cells)
        out.append(f"- {s}: median plain / {s} iterations over the {len(cells)} cells at C >= 100: "
                   f"**{np.median(ratio):.2f}** (from {min(ratio):.2f} to {max(ratio):.2f})"
                   + ("" if s == "ocas" else f"; faster than ocas in {faster} of them"))
    return "\n".join(out)


def experiment_objectives(solver: str = "dual-cd", method: str = "BinarySVM") -> str:
    """The same objective within tol on the experiments' problems (every class of digits and HJA
    birds, both Yahoo thresholds; C = 0.1 to 100): ``solver``'s primal objective against the plain
    loop's."""
    worst, fits, skipped = 0.0, 0, 0
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, _, X, y, qid in fit_times.equality_tasks():
            for C in (0.1, 1.0, 10.0, 100.0):
                got = fit_times.structured_fit(method, X, y, qid, C, solver=solver)
                plain = fit_times.structured_fit(method, X, y, qid, C, solver="cutting-plane")
                if not (got["converged"] and plain["converged"]):
                    skipped += 1
                    continue
                fits += 1
                worst = max(worst, abs(got["primal"] - plain["primal"]))
    return (f"{method}, solver={solver!r}, the experiments' problems: {fits} fits converged by "
            f"both ({skipped} not), largest |primal - plain primal| {worst:.1e} (tol 1e-3)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the Markdown table here too")
    parser.add_argument("--experiments", action="store_true",
                        help="instead: a solver's objectives against the plain loop's on the "
                        "experiments' problems (the same objective within tol; about a minute "
                        "for BinarySVM)")
    parser.add_argument("--solver", default="dual-cd", choices=SOLVERS[1:],
                        help="with --experiments: the solver (default dual-cd)")
    parser.add_argument("--method", default="BinarySVM", choices=("BinarySVM", "APSVM", "NDCGSVM"),
                        help="with --experiments: the estimator (default BinarySVM)")
    args = parser.parse_args(argv)
    if args.experiments:
        print(experiment_objectives(args.solver, args.method))
        return
    t0 = time.perf_counter()
    rows = measure()
    minutes = (time.perf_counter() - t0) / 60
    text = (f"Regenerate: `python -m benchmarks.solver_iterations --out PATH` (APRANK_DATA set). "
            f"Measured in one run ({minutes:.0f} min, {datetime.date.today()}) on "
            f"{machine()} (load average {os.getloadavg()[0]:.1f} at the end). "
            f"\"(NO)\": some fit of the cell stopped at max_iter = 1000 "
            f"without converging.\n\n" + format_rows(rows) + "\n")
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
