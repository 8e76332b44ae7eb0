"""One unit of the nonlinear experiment (a data set, a seed and a model): the inner choice of
settings, the refit and the test scores; and the folder that keeps finished units.

A finished unit is kept as JSON under ``<out>/nonlinear-units[-quick]/``, named by its data
set, seed and model and stamped with a fingerprint of what it ran (the package's source but for
the kinds and the extra it never calls, this module, the tasks and the model's own module, the
model's settings, grid and budgets, and the versions of the numeric libraries). A rerun reads
back the units whose stamp still matches and computes the others: a run stopped part way goes on
where it stopped, and a change to one model recomputes that model's units only.
"""
from __future__ import annotations

import inspect
import json
import os
import time
from functools import cache
from pathlib import Path

import numpy as np

from aprank.metrics import average_precision, ndcg
from experiments.fingerprints import source_fingerprint
from experiments.nonlinear_tasks import INNER_FOLDS, inner_folds, load_tasks, outer_split

__all__ = ["row_scores", "choose", "run_unit", "kept_unit", "candidates", "task"]


def candidates(quick: bool) -> dict:
    """Every model of the experiment by name (networks, then trees)."""
    from experiments.nonlinear_networks import network_candidates
    from experiments.nonlinear_trees import tree_candidates

    return {c.name: c for c in [*network_candidates(quick), *tree_candidates(quick)]}


@cache
def task(name: str):
    """The data set ``name``, loaded once per process."""
    (loaded,) = load_tasks([name])
    return loaded


def row_scores(task, idx, scores) -> list[dict]:
    """Per row of ``task``: AP (and NDCG where graded) of ``scores`` (n_idx, L) on ``idx``.
    One-against-the-rest rows rank all of ``idx``; a ranking data set averages its queries
    that hold a relevant sample. A row without positives in ``idx`` gets NaN."""
    out = []
    for c in range(task.Y.shape[1]):
        labels, s = task.Y[idx, c], scores[:, c]
        relevant = labels >= task.positive_level
        if task.qid is None:
            out.append({"ap": average_precision(relevant, s) if relevant.any() else np.nan})
            continue
        qid = task.qid[idx]
        out.append({"ap": float(average_precision(relevant, s, qid=qid, empty="skip")),
                    "ndcg": float(ndcg(labels, s, qid=qid, empty="skip"))})
    return out


def choose(candidate, task, train, seed) -> list[tuple[int, int]]:
    """Per row: (grid index, budget index) of the best mean validation AP over the inner
    folds (the first best in (grid, budget) order: the smaller budget where validation cannot
    tell)."""
    ap = np.full((len(candidate.grid), len(candidate.budgets), INNER_FOLDS, task.Y.shape[1]),
                 np.nan)
    for f, (fit_idx, val_idx) in enumerate(inner_folds(task, train, seed)):
        fit, val = train[fit_idx], train[val_idx]
        for g, params in enumerate(candidate.grid):
            scores = candidate.fit_predict(params, task.X[fit], task.Y[fit],
                                           None if task.qid is None else task.qid[fit],
                                           [task.X[val]], seed, task.positive_level)
            for b, budget in enumerate(candidate.budgets):
                ap[g, b, f] = [r["ap"] for r in row_scores(task, val, scores[budget][0])]
    mean = np.nanmean(ap, axis=2).reshape(-1, task.Y.shape[1])
    best = np.nanargmax(np.nan_to_num(mean, nan=-np.inf), axis=0)
    return [divmod(int(k), len(candidate.budgets)) for k in best]


def run_unit(task_name: str, seed: int, model: str, quick: bool = False) -> dict:
    """One data set, seed and model: choices, refit(s) and the rows' test scores. CPU times
    are ``time.process_time`` of this process (one thread)."""
    candidate = candidates(quick)[model]
    if candidate.family == "network":
        import torch
        torch.set_num_threads(1)
    data = task(task_name)
    train, test = outer_split(data, seed)
    t_choose = time.process_time()
    choices = choose(candidate, data, train, seed)
    t_choose = time.process_time() - t_choose
    rows, cpu = [None] * len(choices), []
    for g in sorted({g for g, _ in choices}):
        t0 = time.process_time()
        scores = candidate.fit_predict(candidate.grid[g], data.X[train], data.Y[train],
                                       None if data.qid is None else data.qid[train],
                                       [data.X[test]], seed, data.positive_level)
        cpu.append(time.process_time() - t0)
        for c, (gc, b) in enumerate(choices):
            if gc == g:
                budget = candidate.budgets[b]
                rows[c] = {**row_scores(data, test, scores[budget][0])[c],
                           "choice": {**candidate.grid[g], "budget": budget}}
    return {"task": task_name, "seed": seed, "model": model, "rows": rows,
            "cpu_per_fit": float(np.mean(cpu)), "cpu_search": t_choose}


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version
    found = []
    for name in ("numpy", "scipy", "scikit-learn", "torch", "lightgbm", "xgboost", "xgboost-cpu"):
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            pass
    return ", ".join(found)


#: What a unit's result depends on, besides the experiment's modules: the package's source
#: outside these folders (the kinds and the extra the experiment never calls).
_NOT_RUN = ("inference/pairwise", "inference/topk", "inference/labelling", "inference/latent",
            "dask")


def fingerprint(candidate) -> str:
    """What a unit of ``candidate`` ran, hashed (see the module docstring)."""
    fit = getattr(candidate.fit_predict, "func", candidate.fit_predict)
    files = [Path(__file__).resolve(), Path(inspect.getfile(load_tasks)).resolve(),
             Path(inspect.getfile(fit)).resolve()]
    return source_fingerprint(_NOT_RUN, files, repr((
        candidate.settings, candidate.grid, candidate.budgets,
        getattr(candidate.fit_predict, "args", ()),
        getattr(candidate.fit_predict, "keywords", {}), _versions())))


def kept_unit(keep: Path, task_name: str, seed: int, model: str, quick: bool) -> tuple:
    """:func:`run_unit`, read from ``keep`` where an earlier run of the same code wrote it,
    else computed and written there (atomically). Returns (unit, whether it was read back)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    stamp = fingerprint(candidates(quick)[model])
    path = Path(keep) / f"{task_name}-{seed}-{model}.json".replace(" ", "_")
    if path.exists():
        kept = json.loads(path.read_text())
        if kept.get("fingerprint") == stamp:
            return kept, True
    unit = {**run_unit(task_name, seed, model, quick), "fingerprint": stamp}
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(unit, indent=1))
    partial.replace(path)
    return unit, False
