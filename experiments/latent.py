"""``python -m experiments latent``: weakly supervised ranking on multiple-instance data
(the comparison of Behl 2015 on the public MIL sets of ``aprank.datasets``).

Per data set (fox, tiger, elephant, musk1; HJA birdsong with one ranking of recordings per
species), 5 folds by bag (stratified by bag label, seed 0); in each, the rows are standardised
on the training bags and every method's hyperparameters are chosen by 3-fold cross-validation
over the training bags only (mean AP of the ranking of bags), then it is refitted on all
training bags and scored on the test bags:

* LatentAPSVM -- C from C_GRID;
* LatentSSVM -- C from C_GRID, on every data set (its most violated constraint is appendix
  A's greedy with the compiled dynamic Hungarian assignment), with the same CCCP bound and
  tolerance as the others and no budget;
* LatentSVM -- C from C_GRID and the robustness c from ROBUST_GRID (J = N / P);
* APSVM on bag means -- the non-latent reference: a bag is the mean of its rows.

Every final fit's CCCP says whether it stopped by its tolerance (``converged_``); the last
table counts them.

The second table is the time of one most-violated-constraint step of each method in its final
fits (mean over all calls), and its ratio to latent AP-SVM's.

A full run takes many hours on 2 cores (LatentSSVM on HJA), longer than one sitting, so each
finished outer fold is kept as a JSON file under ``<out>/latent-folds/<fingerprint>/`` and a
rerun computes only the folds missing there. The fingerprint hashes the source of everything a
fold runs (the package but its pairwise, top-k, labelling, Dask and torch parts; this module)
and the versions of NumPy, SciPy and scikit-learn, so folds of other code are never mixed into
one table; the table says how many of its folds earlier runs computed.
"""
from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np

from aprank.datasets import MIL_SETS, load_hja_bags, load_mil
from aprank.learn import APSVM, LatentAPSVM, LatentSSVM, LatentSVM
from aprank.models import bag_means
from experiments.fingerprints import KEPT, SOURCE_SUFFIXES, source_fingerprint

__all__ = ["latent", "C_GRID", "ROBUST_GRID", "FOLDS", "INNER_FOLDS"]

C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
ROBUST_GRID = (0.0, 0.5)
FOLDS = 5
INNER_FOLDS = 3
TOL = 1e-2
MAX_OUTER = 20
JOBS = 2
SEED = 0
METHODS = ("LatentAPSVM", "LatentSSVM", "LatentSVM", "APSVM (bag means)")
HJA_SPECIES = tuple(range(1, 14))


def _make(method, params):
    common = {"tol": TOL}
    if method == "LatentAPSVM":
        return LatentAPSVM(C=params["C"], max_outer=MAX_OUTER, **common)
    if method == "LatentSVM":
        return LatentSVM(C=params["C"], c=params["c"], max_outer=MAX_OUTER, **common)
    if method == "LatentSSVM":
        return LatentSSVM(C=params["C"], max_outer=MAX_OUTER, **common)
    return APSVM(C=params["C"], **common)


def _fit_score(method, params, X, y, bags, train, test):
    """(estimator, test AP of the ranking of test bags) for rows ``train`` / ``test``."""
    est = _make(method, params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # a capped CCCP or cutting plane still scores
        if method == "APSVM (bag means)":
            est.fit(*bag_means(X[train], bags[train], y[train]))
            return est, est.score(*bag_means(X[test], bags[test], y[test]))
        est.fit(X[train], y[train], bags=bags[train])
        return est, est.score(X[test], y[test], bags=bags[test])


def _grid(method):
    if method == "LatentSVM":
        return [{"C": C, "c": c} for C in C_GRID for c in ROBUST_GRID]
    return [{"C": C} for C in C_GRID]


def _bag_folds(y, bags, n_folds, seed):
    """Row-index folds by bag, stratified by bag label."""
    from sklearn.model_selection import StratifiedGroupKFold
    return list(StratifiedGroupKFold(n_folds, shuffle=True, random_state=seed)
                .split(np.zeros(y.size), y, bags))


#: What a fold's result depends on, besides this module: the package's source outside these
#: folders (the kinds and extras the latent experiment never calls).
_NOT_RUN = ("inference/pairwise", "inference/topk", "inference/labelling", "dask", "torch")
_SOURCE_SUFFIXES = SOURCE_SUFFIXES


def fingerprint() -> str:
    """A short hash of the source a fold runs and of the numeric libraries' versions: folds
    kept under one fingerprint came from the same code."""
    import scipy
    import sklearn

    return source_fingerprint(_NOT_RUN, [Path(__file__).resolve()],
                              f"numpy {np.__version__} scipy {scipy.__version__} "
                              f"sklearn {sklearn.__version__}", _SOURCE_SUFFIXES)


def _fold_file(keep: Path, name: str, k: int) -> Path:
    return keep / f"{name}-fold{k}.json"


def _kept_fold(keep, name, X, y, bags, train, test, methods, inner_folds, k):
    """:func:`_fold`, read from ``keep`` when an earlier run of the same code wrote it, else
    computed and written there (atomically: a run stopped mid-write leaves no half file)."""
    path = _fold_file(keep, name, k)
    if path.exists():
        return name, json.loads(path.read_text()), True
    name, out = _fold(name, X, y, bags, train, test, methods, inner_folds)
    out = json.loads(json.dumps(out, default=lambda v: v.item()))   # NumPy scalars as plain ones
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(out, indent=1))
    partial.replace(path)
    return name, out, False


def _fold(name, X, y, bags, train, test, methods, inner_folds):
    """One outer fold of one data set: every method's hyperparameters by inner cross-validation,
    its final fit, test AP and most-violated-constraint time."""
    from sklearn.preprocessing import StandardScaler
    X = StandardScaler().fit(X[train]).transform(X)
    inner = [(train[a], train[b]) for a, b in _bag_folds(y[train], bags[train], inner_folds, SEED)]
    out = {}
    for method in methods:
        grid = _grid(method)
        cv = [np.mean([_fit_score(method, p, X, y, bags, a, b)[1] for a, b in inner])
              for p in grid]
        params = grid[int(np.argmax(cv))]
        t0 = time.perf_counter()
        est, ap = _fit_score(method, params, X, y, bags, train, test)
        calls = [h["inference_seconds"] for h in getattr(est, "history_", [])]
        out[method] = {"ap": ap, "params": params, "seconds": time.perf_counter() - t0,
                       "mvc": (sum(calls), len(calls)),
                       "converged": getattr(est, "converged_", None),
                       "n_outer": getattr(est, "n_outer_", None)}
    return name, out


def _datasets(quick):
    """(name, X, y, bags, methods) of every data set."""
    names = ("musk1",) if quick else MIL_SETS
    for name in names:
        d = load_mil(name)
        yield name, d.X, d.y, d.bags, METHODS
    if not quick:
        for k in HJA_SPECIES:
            d = load_hja_bags(k)
            yield d.name, d.X, d.y, d.bags, METHODS


def latent(quick=False, log=print, out=None) -> str:
    """The MIL table and the timing table (see the module docstring); finished folds are kept
    under ``out`` (default: ``experiments/_kept``, a cache out of git) in
    ``latent-folds[-quick]/``."""
    from joblib import Parallel, delayed
    folds, inner_folds = (2, 2) if quick else (FOLDS, INNER_FOLDS)
    base = Path(out) if out is not None else KEPT
    code = fingerprint()
    keep = base / f"latent-folds{'-quick' if quick else ''}" / code
    keep.mkdir(parents=True, exist_ok=True)
    tasks, shapes = [], {}
    for name, X, y, bags, methods in _datasets(quick):
        shapes[name] = (X.shape, np.unique(bags).size, np.unique(bags[y == 1]).size, methods)
        for k, (train, test) in enumerate(_bag_folds(y, bags, folds, SEED)):
            tasks.append(delayed(_kept_fold)(keep, name, X, y, bags, train, test, methods,
                                             inner_folds, k))
    t0 = time.perf_counter()
    log(f"  {len(tasks)} folds, finished ones kept in {keep}")
    done = Parallel(n_jobs=JOBS)(tasks)
    reused = sum(was_kept for _, _, was_kept in done)
    log(f"  {len(tasks) - reused} folds in {time.perf_counter() - t0:.0f} s, {reused} read back")
    results = {}
    for name, fold_out, _ in done:
        results.setdefault(name, []).append(fold_out)
    kept = (f"Folds are kept under `experiments/_kept/latent-folds/{code}` (the code's "
            "fingerprint; a cache, out of git); "
            f"{reused} of the {len(tasks)} were computed by earlier runs of the same code.")
    return kept + " " + _tables(results, shapes, folds, inner_folds)


def _mean_ap(folds, method):
    return float(np.mean([f[method]["ap"] for f in folds])) if method in folds[0] else None


def _tables(results, shapes, folds, inner_folds) -> str:
    out = [f"Test AP of the ranking of bags, mean over {folds} folds by bag (stratified by bag "
           f"label, seed {SEED}); rows standardised on the training bags; hyperparameters by "
           f"{inner_folds}-fold cross-validation over the training bags (C in "
           f"{{{', '.join(f'{c:g}' for c in C_GRID)}}}, LatentSVM's c in "
           f"{{{', '.join(f'{c:g}' for c in ROBUST_GRID)}}}, J = N / P); the best mean, the "
           f"smallest C among equals; tol = {TOL:g}, at most {MAX_OUTER} CCCP iterations, the "
           "same search for every latent method. HJA: one ranking of the 548 recordings per "
           "species.", "",
           "| data | rows x features | bags (positive) | " + " | ".join(METHODS) + " |",
           "|---|---|---|" + "---:|" * len(METHODS)]
    means = {m: [] for m in METHODS}
    for name, folds_out in results.items():
        (rows, d), n_bags, n_pos, methods = shapes[name]
        aps = {m: _mean_ap(folds_out, m) for m in METHODS}
        best = max(v for v in aps.values() if v is not None)
        cells = ["-" if aps[m] is None
                 else (f"**{aps[m]:.3f}**" if aps[m] == best else f"{aps[m]:.3f}")
                 for m in METHODS]
        out.append(f"| {name} | {rows} x {d} | {n_bags} ({n_pos}) | " + " | ".join(cells) + " |")
        for m in METHODS:
            if aps[m] is not None and not name.startswith("hja"):
                means[m].append(aps[m])
    if len(means["LatentAPSVM"]) > 1:
        out.append("| MIL sets, mean | | | " + " | ".join(
            f"{np.mean(means[m]):.3f}" if means[m] else "-" for m in METHODS) + " |")
    hja = [n for n in results if n.startswith("hja")]
    if hja:
        out.append("| HJA, mean of species | | | " + " | ".join(
            "-" if _mean_ap(results[hja[0]], m) is None else
            f"{np.mean([_mean_ap(results[n], m) for n in hja]):.3f}" for m in METHODS) + " |")
    out += ["", "Time of one most-violated-constraint step in the final fits (mean over every "
            "call; x LatentAPSVM's on the same data):", "",
            "| data | " + " | ".join(m for m in METHODS) + " |", "|---|" + "---:|" * len(METHODS)]
    for name, folds_out in results.items():
        per = {}
        for m in METHODS:
            if m not in folds_out[0]:
                continue
            total = sum(f[m]["mvc"][0] for f in folds_out)
            n = sum(f[m]["mvc"][1] for f in folds_out)
            per[m] = total / max(n, 1)
        ref = per["LatentAPSVM"]
        out.append(f"| {name} | " + " | ".join(
            "-" if m not in per else f"{per[m] * 1e3:.3g} ms ({per[m] / ref:.2g} x)"
            for m in METHODS) + " |")
    chosen = ["", "Hyperparameters chosen per fold:", "", "| data | method | chosen |",
              "|---|---|---|"]
    for name, folds_out in results.items():
        for m in METHODS:
            if m in folds_out[0]:
                chosen.append(f"| {name} | {m} | " + "; ".join(
                    ", ".join(f"{k}={v:g}" for k, v in f[m]["params"].items())
                    for f in folds_out) + " |")
    edges = []
    for m in METHODS:
        picks = [f[m]["params"]["C"] for folds_out in results.values() for f in folds_out
                 if m in f]
        if picks:
            on_edge = sum(c in (C_GRID[0], C_GRID[-1]) for c in picks)
            edges.append(f"{m} {on_edge} of {len(picks)}")
    out += ["", "Choices of C on an edge of its grid (a sign the grid is too narrow): "
            + ", ".join(edges) + "."]
    reached = []
    for m in METHODS:
        runs = [f[m] for folds_out in results.values() for f in folds_out
                if m in f and f[m]["n_outer"] is not None]
        if runs:
            outer = [r["n_outer"] for r in runs]
            reached.append(f"{m} {sum(bool(r['converged']) for r in runs)} of {len(runs)} "
                           f"({min(outer)}-{max(outer)} CCCP iterations)")
    out += ["", "Final fits whose CCCP stopped by its tolerance: " + ", ".join(reached) + "."]
    return "\n".join(out + chosen) + "\n"
