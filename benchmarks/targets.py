"""``python -m benchmarks --targets``: the workloads where users spend their time, each against
its yardstick in one process, with ``--before PATH`` the same rows on an older checkout.

* many queries: ``infer_batch`` (AP) over 10,000 queries of 20 and 100 documents and 2,000 of
  1,000, qid contiguous and interleaved, against a Python loop of ``numpy.argsort`` over each
  query's negatives (target: at most BATCH_TARGET x contiguous, SHUFFLED_TARGET x
  interleaved);
* one ``infer`` call at n = 20 and 100 against one ``numpy.argsort`` of its scores (target:
  SINGLE_TARGET_US microseconds);
* every max-marginal of one kNN component of 8,000 samples and 80,000 pairs (target:
  COMPONENT_TARGET seconds);
* every ``*CV`` estimator (cv=3, its default grid) on digits (digit 8 against the rest)
  against ``LogisticRegressionCV`` on the same folds with as many Cs (target: at most
  CV_TARGET x).

CPU time (``time.process_time``) with one BLAS thread, so that the shared machine's waits do
not count and every call is single-threaded. This file also runs as a script (``--before``:
the rows of the aprank found on ``PYTHONPATH`` as one JSON line): it imports only aprank's
public names.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

#: (documents per query, queries) of the many-query rows.
BATCH_SIZES = ((20, 10_000), (100, 10_000), (1000, 2_000))
BATCH_TARGET, SHUFFLED_TARGET, SINGLE_TARGET_US = 1.5, 2.0, 10.0
COMPONENT_SIZE, COMPONENT_NEIGHBOURS, COMPONENT_TARGET = 8_000, 10, 5.0
CV_TARGET = 1.5


def _equal_queries(docs: int, n_queries: int, shuffled: bool, seed: int = 0):
    """benchmarks.many_queries.equal_queries, repeated here so that the script runs alone."""
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), docs)
    labels = rng.random(qid.size) < 0.1
    labels[::docs] = True
    scores = rng.standard_normal(qid.size) + labels
    if shuffled:
        p = rng.permutation(qid.size)
        qid, labels, scores = qid[p], labels[p], scores[p]
    return scores, labels, qid


def _round_robin(calls: dict, repeats: int) -> dict:
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            t0 = time.process_time()
            call()
            times[name].append(time.process_time() - t0)
    return {name: float(np.median(t)) for name, t in times.items()}


def batch_rows(repeats: int = 5, sizes=BATCH_SIZES) -> list:
    """[(docs, queries, layout, infer_batch us per query, argsort loop us, ratio)]."""
    from aprank import infer_batch
    rows = []
    for docs, n_queries in sizes:
        for layout in ("contiguous", "interleaved"):
            scores, labels, qid = _equal_queries(docs, n_queries, layout == "interleaved")
            groups = np.split(np.argsort(qid, kind="stable"), n_queries)
            negatives = [scores[g][~labels[g]] for g in groups]
            t = _round_robin({"loop": lambda: [np.argsort(s) for s in negatives],
                              "batch": lambda: infer_batch(scores, labels, qid)}, repeats)
            rows.append((docs, n_queries, layout, 1e6 * t["batch"] / n_queries,
                         1e6 * t["loop"] / n_queries, t["batch"] / t["loop"]))
    return rows


def single_rows(calls: int = 5000, repeats: int = 5, sizes=(20, 100)) -> list:
    """[(n, infer us, argsort us, ratio)]: one call, medians of rounds of ``calls`` calls."""
    from aprank import infer
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        scores = rng.standard_normal(n)
        labels = rng.random(n) < 0.3
        labels[0] = True
        infer(scores, labels)

        def many(fn):
            return lambda: [fn() for _ in range(calls)]
        t = _round_robin({"infer": many(lambda: infer(scores, labels)),
                          "argsort": many(lambda: np.argsort(scores))}, repeats)
        rows.append((n, 1e6 * t["infer"] / calls, 1e6 * t["argsort"] / calls,
                     t["infer"] / t["argsort"]))
    return rows


def component_rows(n: int = COMPONENT_SIZE) -> list:
    """[(samples, pairs, seconds)]: every max-marginal of one kNN component (as
    benchmarks.pairwise.knn_component builds it), one call."""
    from scipy.spatial import cKDTree

    from aprank.inference import PairwiseGraph, max_marginals
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 2))
    _, idx = cKDTree(x).query(x, COMPONENT_NEIGHBOURS + 1)
    edges = np.column_stack([np.repeat(np.arange(n), COMPONENT_NEIGHBOURS),
                             idx[:, 1:].ravel()]).astype(np.int64)
    s = rng.standard_normal(n)
    c = -0.5 * np.abs(rng.standard_normal(edges.shape[0]))
    graph = PairwiseGraph(n, edges)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the cost model's warning, not a result
        t0 = time.process_time()
        max_marginals(s, edge_scores=c, graph=graph)
    return [(n, edges.shape[0], time.process_time() - t0)]


def cv_rows(names=("BinarySVMCV", "APSVMCV", "NDCGSVMCV"), rows_used=None,
            repeats: int = 3) -> list:
    """[(estimator, seconds, grid size, LogisticRegressionCV seconds, ratio)] on digits (its
    first ``rows_used`` rows: all by default): medians of ``repeats`` rounds, the estimator
    and ``LogisticRegressionCV`` in turn, after one round on 300 rows (first calls pay for
    imports and caches)."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold

    import aprank.learn as learn
    X, digit = load_digits(return_X_y=True)
    X, y = X[:rows_used], (digit[:rows_used] == 8).astype(int)
    rows = []
    for name in names:
        estimator = getattr(learn, name, None)
        if estimator is None:
            continue
        folds = StratifiedKFold(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # convergence warnings: the times are the rows
            grid = estimator(cv=folds).get_params()["Cs"]
            calls = {"mine": lambda: estimator(cv=folds).fit(X, y),
                     "theirs": lambda: LogisticRegressionCV(cv=folds, Cs=grid).fit(X, y)}
            estimator(cv=folds).fit(X[:300], y[:300])
            LogisticRegressionCV(cv=folds, Cs=grid).fit(X[:300], y[:300])
            times = _round_robin(calls, repeats)
        size = grid if isinstance(grid, int) else len(grid)
        rows.append((name, times["mine"], size, times["theirs"], times["mine"] / times["theirs"]))
    return rows


def measure(repeats: int = 5) -> dict:
    """Every row, with one BLAS thread."""
    # the limit holds for the BLAS libraries loaded when it is set: scipy's is loaded by
    # scipy.linalg, and one left out runs LogisticRegressionCV's products on threads whose
    # spinning CPU time (which time.process_time counts) nearly doubled its row
    import scipy.linalg  # noqa: F401
    import sklearn.linear_model  # noqa: F401
    from threadpoolctl import threadpool_info, threadpool_limits
    with threadpool_limits(1):
        assert all(lib["num_threads"] == 1 for lib in threadpool_info()), threadpool_info()
        return {"batch": batch_rows(repeats), "single": single_rows(repeats=repeats),
                "component": component_rows(), "cv": cv_rows()}


def measure_elsewhere(path: str, repeats: int = 5) -> dict:
    """:func:`measure` on the aprank package in checkout ``path`` (built in place): this file
    run as a script from a temporary folder with ``PYTHONPATH`` set to ``path``."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(path)}
    with tempfile.TemporaryDirectory() as folder:
        script = shutil.copy(__file__, os.path.join(folder, "targets_script.py"))
        out = subprocess.run([sys.executable, script, str(repeats)], env=env, cwd=folder,
                             check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def format_targets(after: dict, before: dict | None = None) -> str:
    """The Markdown tables; with ``before``, its figure beside each of ``after``'s."""
    def pair(key, i, j, fmt):
        now = fmt.format(after[key][i][j])
        return now if before is None else f"{fmt.format(before[key][i][j])} -> {now}"

    def met(ok):
        return "met" if ok else "missed"
    out = ["| workload | figure | target | met |", "|---|---:|---:|---|"]
    for i, (docs, nq, layout, *_rest, ratio) in enumerate(after["batch"]):
        target = BATCH_TARGET if layout == "contiguous" else SHUFFLED_TARGET
        out.append(f"| infer_batch, {nq:,} queries of {docs}, qid {layout}: x the argsort loop "
                   f"({pair('batch', i, 3, '{:.2f}')} us vs {after['batch'][i][4]:.2f} us a "
                   f"query) | {pair('batch', i, 5, '{:.2f}')} x | <= {target:g} x | "
                   f"{met(ratio <= target)} |")
    for i, (n, us, sort_us, ratio) in enumerate(after["single"]):
        out.append(f"| one infer call, n = {n} (argsort {sort_us:.2f} us; x argsort "
                   f"{pair('single', i, 3, '{:.1f}')}) | {pair('single', i, 1, '{:.1f}')} us | "
                   f"<= {SINGLE_TARGET_US:g} us | {met(us <= SINGLE_TARGET_US)} |")
    for i, (n, m, seconds) in enumerate(after["component"]):
        out.append(f"| every max-marginal, one component of {n:,} samples, {m:,} pairs | "
                   f"{pair('component', i, 2, '{:.2f}')} s | <= {COMPONENT_TARGET:g} s | "
                   f"{met(seconds <= COMPONENT_TARGET)} |")
    for i, (name, seconds, grid, theirs, ratio) in enumerate(after["cv"]):
        out.append(f"| {name}(cv=3) on digits, {grid} Cs, x LogisticRegressionCV(cv=3, "
                   f"Cs={grid}) ({pair('cv', i, 1, '{:.2f}')} s vs {theirs:.2f} s) | "
                   f"{pair('cv', i, 4, '{:.2f}')} x | <= {CV_TARGET:g} x | "
                   f"{met(ratio <= CV_TARGET)} |")
    return "\n".join(out)


if __name__ == "__main__":      # measure_elsewhere's subprocess: the rows as one JSON line
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5)))
