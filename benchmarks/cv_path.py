"""Where a ``*CV`` search's time goes: every fit of its C path on digits, and what two looser
stopping rules would have saved.

``python -m benchmarks.cv_path [--out PATH]`` fits ``BinarySVM``, ``APSVM`` and ``NDCGSVM`` at
every C of the ``*CV`` estimators' default grid (5 Cs, 1e-4 to 1e4) on the training rows of
each of 3 stratified folds of digits (digit 8 against the rest, the raw 0-16 pixels, one query),
as ``BinarySVMCV(cv=3)`` and the others do, and times ``LogisticRegressionCV(cv=3, Cs=5)`` on the
same folds. CPU time, one BLAS thread; the seconds are the median of ``--rounds`` rounds.

Per C: the seconds of its 3 fits, their iterations, how many met the stopping rule (a fit
that does not is stopped by ``max_iter`` or by a gap that has stood still), and the seconds
they would have taken under two looser rules, read from the same fits: the time of the first
iteration whose recorded gap (the solver's own, which its rule compares) is at most ``C tol``
(SVM-struct's rule: the most violated constraint at most ``tol`` above the working set's slack)
or at most ``tol`` times that iteration's primal objective (a relative gap, OCAS's
``TolRel``). A fit follows the same path up to that iteration under either rule, so the time
is what it would have stopped at; a fit that never met the rule counts whole. C here is the
weight of the slack in 1/2 ||w||^2 + C xi: the estimator's C, times the training rows for
``BinarySVM``, whose C weighs each sample's hinge. The fits' own rule, ``gap <= min(1, C)
tol``, is SVM-struct's at C <= 1 and C times tighter above. Last, how far from the optimum
the fits' w can lie (:func:`distance_bound`), as a fraction of its norm, at each rule's gap:
the largest over the folds.
"""
from __future__ import annotations

import datetime
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.cli import Parser, at_least, run
from benchmarks.machine import machine

__all__ = ["fold_path", "slack_weight", "distance_bound", "measure", "table", "main"]

ESTIMATORS = ("BinarySVM", "APSVM", "NDCGSVM")
#: the ``*CV`` estimators' default grid (their ``Cs=5``)
GRID = np.logspace(-4.0, 4.0, 5)
TOL = 1e-3
#: the estimators whose C weighs each sample's hinge (LinearSVC's scale): the weight of their
#: slack in 1/2 ||w||^2 + C xi, the C of the stopping rules, is C times the training rows
PER_SAMPLE_C = ("BinarySVM",)


def fold_path(estimator, X, y, folds, Cs=GRID) -> dict:
    """Fit ``estimator`` (a class) at every C of ``Cs`` on each fold's training rows.

    Returns
    -------
    dict
        Arrays over ``Cs``: ``seconds`` (the folds' fits summed), ``iterations``,
        ``converged`` (fits that met their rule), ``at_c_tol`` and ``at_relative`` (the seconds
        until the first iteration whose gap met each looser rule, the whole fit where none did)
        and ``iterations_c_tol``, ``iterations_relative`` (the iterations up to it); and
        ``within_fit``, ``within_c_tol``, ``within_relative``: the largest, over the folds, of
        how far from the optimum w* the fit's w can lie, as a fraction of ||w||, by its final gap
        and by the gap each looser rule would have stopped at (:func:`distance_bound`).
    """
    out = {key: np.zeros(len(Cs)) for key in
           ("seconds", "iterations", "converged", "at_c_tol", "at_relative",
            "iterations_c_tol", "iterations_relative", "within_fit", "within_c_tol",
            "within_relative")}
    for train, _ in folds:
        for j, C in enumerate(Cs):
            slack = slack_weight(estimator.__name__, C, len(train))
            stamps: list = []
            start = time.process_time()
            fit = estimator(C=C, tol=TOL,
                            callback=lambda entry: stamps.append(time.process_time())
                            ).fit(X[train], y[train])
            seconds = time.process_time() - start
            gap = np.array([entry["gap"] for entry in fit.history_])
            primal = np.array([entry["primal"] for entry in fit.history_])
            if len(stamps) != gap.shape[0]:
                raise RuntimeError(f"{estimator.__name__}(C={C:g}) called its callback "
                                   f"{len(stamps)} times for {gap.shape[0]} history entries")
            out["seconds"][j] += seconds
            out["iterations"][j] += fit.n_iter_
            out["converged"][j] += bool(fit.converged_)
            for rule, met in (("c_tol", gap <= slack * TOL), ("relative", gap <= TOL * primal)):
                first = np.flatnonzero(met)
                out[f"at_{rule}"][j] += stamps[first[0]] - start if first.size else seconds
                out[f"iterations_{rule}"][j] += first[0] + 1 if first.size else fit.n_iter_
            # the objective's w: BinarySVM's has the weight of its constant feature too
            w = (np.append(fit.coef_, fit.intercept_ / fit.intercept_scaling)
                 if hasattr(fit, "intercept_") else fit.coef_)
            norm = float(np.linalg.norm(w))
            for key, gap_at in (("within_fit", fit.gap_), ("within_c_tol", slack * TOL),
                                ("within_relative", TOL * fit.primal_)):
                out[key][j] = max(out[key][j], distance_bound(gap_at) / norm)
    return out


def slack_weight(name: str, C, n_rows: int):
    """The weight of the slack in 1/2 ||w||^2 + C xi that estimator ``name`` fitted with ``C``
    on ``n_rows`` rows minimises: the C its stopping rule reads."""
    return C * n_rows if name in PER_SAMPLE_C else C


def distance_bound(gap: float) -> float:
    """How far from the optimum w* a point whose gap is ``gap`` can lie: sqrt(2 gap), since
    the objective's 1/2 ||w||^2 makes it 1-strongly convex (F(w) - F(w*) >= 1/2 ||w - w*||^2)
    and the gap bounds F(w) - F(w*)."""
    return float(np.sqrt(2.0 * max(gap, 0.0)))


def measure(rounds: int = 3, rows_used=None, names=ESTIMATORS) -> dict:
    """Every estimator's C path and ``LogisticRegressionCV``'s search, medians of ``rounds``
    rounds (after one round on 300 rows: first calls pay for imports and caches)."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold

    import aprank.learn as learn
    X, digit = load_digits(return_X_y=True)
    X, y = X[:rows_used], (digit[:rows_used] == 8).astype(int)
    folds = list(StratifiedKFold(3).split(X, y))
    paths: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # convergence warnings: the table has them
        LogisticRegressionCV(cv=StratifiedKFold(3), Cs=len(GRID)).fit(X[:300], y[:300])
        for name in names:
            estimator = getattr(learn, name)
            estimator(C=1.0).fit(X[:300], y[:300])
            runs = [fold_path(estimator, X, y, folds) for _ in range(rounds)]
            paths[name] = {key: np.median([r[key] for r in runs], axis=0) for key in runs[0]}
        theirs = []
        for _ in range(rounds):
            start = time.process_time()
            LogisticRegressionCV(cv=StratifiedKFold(3), Cs=len(GRID)).fit(X, y)
            theirs.append(time.process_time() - start)
    return {"paths": paths, "logistic": float(np.median(theirs)), "n_folds": len(folds)}


def table(measured: dict) -> str:
    """The markdown table of :func:`measure`'s figures."""
    lines = [f"Regenerate: `python -m benchmarks.cv_path --out PATH`. Measured on {machine()}, "
             f"{datetime.date.today().isoformat()}: the C path of each `*CV` search on digits "
             f"(digit 8 against the rest), {measured['n_folds']} folds, CPU time, one BLAS "
             f"thread. "
             f"`LogisticRegressionCV(cv=3, Cs=5)` on the same folds: "
             f"{measured['logistic']:.3f} s.", "",
             "| estimator | C | seconds | iterations | met the rule | seconds to gap <= C tol "
             "(iterations) | seconds to gap <= tol primal (iterations) | w within, % of its norm: "
             "at the fit's gap / C tol / tol primal |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, path in measured["paths"].items():
        for j, C in enumerate(GRID):
            lines.append(f"| {name} | {C:g} | {path['seconds'][j]:.3f} | "
                         f"{path['iterations'][j]:.0f} | {path['converged'][j]:.0f} of "
                         f"{measured['n_folds']} | {path['at_c_tol'][j]:.3f} "
                         f"({path['iterations_c_tol'][j]:.0f}) | {path['at_relative'][j]:.3f} "
                         f"({path['iterations_relative'][j]:.0f}) | "
                         f"{100 * path['within_fit'][j]:.2g} / {100 * path['within_c_tol'][j]:.2g} "
                         f"/ {100 * path['within_relative'][j]:.2g} |")
        lines.append(f"| {name} | all | {path['seconds'].sum():.3f} | "
                     f"{path['iterations'].sum():.0f} | | {path['at_c_tol'].sum():.3f} "
                     f"({path['iterations_c_tol'].sum():.0f}) | "
                     f"{path['at_relative'].sum():.3f} "
                     f"({path['iterations_relative'].sum():.0f}) | |")
    return "\n".join(lines) + "\n"


def _command(args) -> int:
    with threadpool_limits(limits=1):
        text = table(measure(args.rounds))
    print(text, end="")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


def main(argv=None) -> int:
    parser = Parser("python -m benchmarks.cv_path", __doc__)
    parser.add_argument("--rounds", type=at_least(1), default=3,
                        help="rounds whose median each figure is (default 3)")
    parser.add_argument("--out", help="also write the table to this file")
    return run(_command, parser.parse_args(argv), "python -m benchmarks.cv_path")


if __name__ == "__main__":
    sys.exit(main())
