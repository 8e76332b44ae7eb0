"""``python -m aprank bench --quick``: what an install can check in under a minute.

A cross-check of every algorithm, then every algorithm timed against ``numpy.argsort`` of the
negatives' scores on two small cells, in the overlapping (positives ~ N(1, 1)) and separated
(~ N(6, 1)) regimes; negatives ~ N(0, 1). The full benchmark (larger cells, peak memory, the
partition paths, many small queries, latent bags, fit times) is a tool of the repository, not
of the package: ``python -m benchmarks`` from a checkout.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from aprank.checks import bench_instance, crosscheck, solve_instance
from aprank.inference import SlowAlgorithmWarning, algorithms, kinds, simd_level

CELLS = ((100, 10_000), (1_000, 100_000))
REGIMES = {"overlapping": 1.0, "separated": 6.0}
#: Seconds of calls after which a median is taken from fewer than ``repeats`` runs: the graph
#: cuts of the pairwise kind take seconds at N = 1e5.
BUDGET = 3.0
#: Kinds left out: the latent kind ranks bags, whose cells are hundreds, not 1e5 samples.
LEFT_OUT = ("latent",)


def _median_seconds(call, repeats: int) -> float:
    spent: list[float] = []
    while len(spent) < repeats and sum(spent) < BUDGET:
        start = time.perf_counter()
        call()
        spent.append(time.perf_counter() - start)
    return float(np.median(spent))


def timing_rows(cells=CELLS, repeats: int = 5) -> list:
    """Rows (regime, P, N, loss, algorithm, median seconds, x numpy.argsort), the argsort of
    each cell first with loss "-"."""
    rows = []
    with warnings.catch_warnings():
        # the slow algorithms run on purpose: their times are what the table is for
        warnings.simplefilter("ignore", SlowAlgorithmWarning)
        for regime, shift in REGIMES.items():
            for P, N in cells:
                ranking = bench_instance("ranking", P, N, shift)
                negatives = ranking.scores[~ranking.labels]
                argsort = _median_seconds(lambda: np.argsort(negatives), repeats)
                rows.append((regime, P, N, "-", "numpy.argsort", argsort, 1.0))
                for kind in kinds():
                    if kind.name in LEFT_OUT:
                        continue
                    instance = bench_instance(kind.name, P, N, shift)
                    for loss in kind.losses():
                        for algo in algorithms(loss=loss):
                            if algo.max_samples is not None and P + N > algo.max_samples:
                                continue        # the brute-force oracles
                            seconds = _median_seconds(
                                lambda instance=instance, loss=loss, name=algo.name:
                                solve_instance(instance, loss, name), repeats)
                            rows.append((regime, P, N, loss, algo.name, seconds,
                                         seconds / argsort))
    return rows


def format_rows(rows) -> str:
    """The Markdown table of :func:`timing_rows`."""
    out = ["| regime | P | N | loss | algorithm | median time | x argsort |",
           "|---|---:|---:|---|---|---:|---:|"]
    for regime, P, N, loss, name, seconds, ratio in rows:
        time_text = f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"
        out.append(f"| {regime} | {P:g} | {N:g} | {loss} | {name} | {time_text} | {ratio:.2f} |")
    return "\n".join(out)


def run(repeats: int = 5, out=None) -> int:
    """Print the cross-check and the timing table (also written to ``out``); the exit status:
    1 when the cross-check found a disagreement."""
    print("Cross-check of every exact algorithm against its kind's oracle and each other:")
    report = crosscheck(n_trials=100, max_n=1000)
    print(report, end="\n\n")
    print(f"Timing (median of up to {repeats} runs; {simd_level()} partition):")
    table = format_rows(timing_rows(repeats=repeats))
    print(table)
    print("\nThe full benchmark is a repository tool: python -m benchmarks --help, from a "
          "checkout.")
    if out:
        with open(out, "w") as f:
            f.write(table + "\n")
    return 0 if report.ok else 1
