"""``python -m experiments nonlinear``: when the exact AP hinge pays off beyond linear models.

Networks (an MLP trained with binary cross-entropy, with aprank's AP hinge, and with the recipe
the exploration chose; ``experiments.nonlinear_networks``) and boosted trees (LightGBM's binary
and lambdarank objectives, XGBoost's rank:map, and the AP hinge as a LightGBM custom objective;
``experiments.nonlinear_trees``) on the 27 rows of ``experiments.nonlinear_tasks``, 3 seeds
(each its own outer split, 30 % of the groups held out), every model's hyper-parameters and
training budget chosen per row by 3-fold inner cross-validation on the training part (mean
validation AP), refitted on the whole training part and scored on the test part. The table
compares each model with the MLP trained with cross-entropy and with LightGBM binary:
win/tie/loss over the rows (mean test AP over the seeds; a tie is a difference under 0.001)
and the two-sided Wilcoxon signed-rank p over the rows. Each unit of work (data set, seed,
model) runs single-threaded, in ``jobs`` processes.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
from scipy.stats import wilcoxon

from experiments.fingerprints import KEPT
from experiments.nonlinear_tasks import INNER_FOLDS, LOADERS, TEST_FRACTION
from experiments.nonlinear_units import candidates, kept_unit, task

__all__ = ["nonlinear", "nonlinear_results", "summary_table", "mean_ap", "compare", "SEEDS",
           "REFERENCES", "TIE"]

SEEDS = (0, 1, 2)
QUICK_SEEDS = (0,)
#: A difference of mean test AP under this is a tie.
TIE = 1e-3
#: The models every other is compared with.
REFERENCES = ("MLP cross-entropy", "LightGBM binary")
QUICK_TASKS = ("digits", "fox")
#: Where the units are kept unless told otherwise: the experiments' cache, out of git.
DEFAULT_OUT = KEPT


def nonlinear_results(quick: bool = False, jobs: int = 1, log=print, out=None) -> dict:
    """Every unit of the experiment, run in ``jobs`` processes, finished units kept under
    ``out`` (see ``experiments.nonlinear_units``); JSON-ready results."""
    models = candidates(quick)
    tasks = QUICK_TASKS if quick else tuple(LOADERS)
    seeds = QUICK_SEEDS if quick else SEEDS
    keep = Path(out if out is not None else DEFAULT_OUT) / (
        f"nonlinear-units{'-quick' if quick else ''}")
    keep.mkdir(parents=True, exist_ok=True)
    units = [(t, s, m) for t in tasks for s in seeds for m in models]
    runs, reused = [], 0
    log(f"  {len(units)} units (data set, seed, model); finished ones kept in {keep}")
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(kept_unit, keep, *unit, quick) for unit in units]
        for k, future in enumerate(futures, 1):
            r, was_kept = future.result()
            runs.append(r)
            reused += was_kept
            log(f"  [{k}/{len(units)}] {r['task']} seed {r['seed']} {r['model']}: mean test AP "
                f"{np.nanmean([row['ap'] for row in r['rows']]):.3f}, "
                f"{r['cpu_per_fit']:.1f} s CPU per fit{' (kept)' if was_kept else ''}")
    return {
        "models": {c.name: {"family": c.family, "settings": c.settings,
                            "grid": list(c.grid), "budgets": list(c.budgets)}
                   for c in models.values()},
        "tasks": {t: list(task(t).row_names) for t in tasks},
        "graded": [t for t in tasks if task(t).graded],
        "seeds": list(seeds), "runs": runs, "reused": reused,
        "settings": {"test_fraction": TEST_FRACTION, "inner_folds": INNER_FOLDS, "tie": TIE},
    }


def mean_ap(results) -> tuple[list[str], dict]:
    """Row labels and, per model, the mean test AP over the seeds of each row."""
    labels = [f"{t}: {r}" if len(rows) > 1 else t
              for t, rows in results["tasks"].items() for r in rows]
    per_model = {}
    for model in results["models"]:
        values = []
        for t, rows in results["tasks"].items():
            runs = [r for r in results["runs"] if r["task"] == t and r["model"] == model]
            values += [np.mean([r["rows"][c]["ap"] for r in runs]) for c in range(len(rows))]
        per_model[model] = np.array(values)
    return labels, per_model


def compare(a, b) -> tuple[int, int, int, float]:
    """Wins, ties and losses of a against b over the rows, and the Wilcoxon p."""
    d = np.asarray(a) - np.asarray(b)
    wins, losses = int((d >= TIE).sum()), int((d <= -TIE).sum())
    p = float(wilcoxon(a, b).pvalue) if np.any(d != 0) else 1.0
    return wins, len(d) - wins - losses, losses, p


def summary_table(results) -> str:
    """The Markdown tables of the results: the summary, then every row."""
    labels, ap = mean_ap(results)
    refs = [r for r in REFERENCES if r in ap]
    cpu = {m: np.median([r["cpu_per_fit"] for r in results["runs"] if r["model"] == m])
           for m in ap}
    lines = ["| model | mean test AP | " + " | ".join(
        f"vs {r}: win/tie/loss (Wilcoxon p)" for r in refs) + " | CPU s per fit (median) |",
        "|---|---:|" + "---:|" * len(refs) + "---:|"]
    for model, values in ap.items():
        cells = []
        for ref in refs:
            if ref == model:
                cells.append("-")
                continue
            w, t, lo, p = compare(values, ap[ref])
            cells.append(f"{w}/{t}/{lo} (p = {p:.2g})")
        lines.append(f"| {model} | {values.mean():.3f} | " + " | ".join(cells)
                     + f" | {cpu[model]:.1f} |")
    lines += ["", "| row | " + " | ".join(ap) + " |", "|---|" + "---:|" * len(ap)]
    for k, label in enumerate(labels):
        best = max(v[k] for v in ap.values())
        lines.append(f"| {label} | " + " | ".join(
            (f"**{v[k]:.3f}**" if v[k] == best else f"{v[k]:.3f}") for v in ap.values()) + " |")
    for t in results["graded"]:
        ndcg_means = {m: np.mean([r["rows"][0]["ndcg"] for r in results["runs"]
                                  if r["task"] == t and r["model"] == m]) for m in ap}
        lines += ["", f"{t}, graded NDCG (mean over the test queries and seeds): " + "; ".join(
            f"{m} {v:.3f}" for m, v in ndcg_means.items()) + "."]
    lines += ["", "Models (fixed settings; searched by inner cross-validation):", ""]
    for model, info in results["models"].items():
        grid = ", ".join(f"{k} in {{{', '.join(format(g[k], 'g') for g in info['grid'])}}}"
                         for k in (info["grid"][0] if info["grid"] else {}))
        lines.append(f"- {model}: {info['settings']}; searched: {grid or 'nothing'} x budget "
                     f"{', '.join(map(str, info['budgets']))}.")
    return "\n".join(lines) + "\n"


#: Where the figure script (figures/fig_nonlinear.py) reads the experiment's results: the run
#: writes them there, and the script draws the figure from them without rerunning anything.
FIGURE_RESULTS = Path(__file__).resolve().parents[1] / "figures" / "out" / "fig_nonlinear"


def nonlinear(quick: bool = False, jobs: int = 1, log=print, out=None) -> str:
    """Run the experiment (finished units kept under ``out``, by default the repository's
    figures/tables), write its results where its figure script reads them
    (``figures/out/fig_nonlinear.json``: ``python figures/fig_nonlinear.py`` draws the figure),
    and return its Markdown table."""
    from benchmarks.machine import machine

    t0 = time.perf_counter()
    results = nonlinear_results(quick, jobs, log, out)
    results["machine"] = machine()
    results["seconds"] = round(time.perf_counter() - t0, 1)
    results["jobs"] = jobs
    path = FIGURE_RESULTS.with_name(FIGURE_RESULTS.name + ("-quick" if quick else "") + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, separators=(",", ":")))
    log(f"results: {path} (draw the figure with python figures/fig_nonlinear.py"
        f"{' --quick' if quick else ''})")
    cpu_total = sum(r["cpu_per_fit"] + r["cpu_search"] for r in results["runs"])
    head = (f"Machine: {results['machine']}; {results['seconds']:.0f} s wall clock in {jobs} "
            f"processes ({results['reused']} of {len(results['runs'])} units read back from an "
            f"earlier run of the same code), {cpu_total:.0f} s of CPU time in all; seeds "
            f"{', '.join(map(str, results['seeds']))}; each row's test AP is the mean over "
            "the seeds.\n\n")
    return head + summary_table(results)
