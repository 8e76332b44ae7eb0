"""The main table of ``python -m benchmarks``: every registered algorithm against
``numpy.argsort``, and how well two threads calling ``infer`` overlap.

For each cell (P, N) and score regime, every algorithm of the registry is run on the same
instance; the table reports the median time, its ratio to ``numpy.argsort`` of the negatives'
scores measured in the same run, and the peak extra memory of one call (traced with
``tracemalloc``, which sees NumPy's allocations; in units of 8N bytes). A cell an algorithm is
predicted to need more than ``max_seconds`` for (from its registry cost model and its time in
the previous cell) is skipped with a note; a call slower than TRACE_UP_TO seconds is timed but
not traced for memory (noted). Algorithms are grouped by (problem kind, loss), as the
registry declares them. A last line reports how well two threads calling ``infer`` at N = 1e6
overlap (the kernels release the GIL).
"""
from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass

import numpy as np

from aprank.checks import bench_instance, solve_instance
from aprank.inference import SlowAlgorithmWarning, algorithms, infer, kinds
from benchmarks.timing import (
    REGIMES,
    format_seconds,
    make_scores,
    median_time,
    peak_memory,
)

FULL_CELLS = ((100, 10_000), (1_000, 100_000), (1_000, 1_000_000), (10_000, 1_000_000),
              (100, 10_000_000))
#: Kinds benched in a section of their own, in cells of their size (see benchmarks.latent).
OWN_SECTION = ("latent",)
TRACE_UP_TO = 2.0     # seconds: slower calls are timed, not traced for memory


@dataclass
class Row:
    """One row of the main table: an algorithm's time on (regime, P, N), or the note of a
    skipped cell."""

    regime: str
    kind: str
    P: int
    N: int
    loss: str
    algorithm: str
    seconds: float | None
    ratio: float | None
    memory: float | None      # peak extra bytes / (8 N)
    note: str = ""


def bench(cells=FULL_CELLS, regimes=REGIMES, repeats: int = 5, max_seconds: float = 60.0,
          log=print) -> list[Row]:
    """Run the benchmark and return its rows (``log`` receives progress lines)."""
    # every algorithm runs on purpose, the slow ones too: their cells are skipped by the same
    # cost models that warn, so the warning would only repeat what the table shows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SlowAlgorithmWarning)
        return _bench(cells, regimes, repeats, max_seconds, log)


def _bench(cells, regimes, repeats, max_seconds, log) -> list[Row]:
    rows = []
    for regime, shift in regimes.items():
        previous = {}       # (loss, algorithm) -> (P, N, seconds) of the last cell run
        for P, N in cells:
            scores, labels = make_scores(P, N, shift)
            negatives = scores[~labels]
            t_sort = median_time(lambda: np.argsort(negatives), repeats, 10.0)
            rows.append(Row(regime, "-", P, N, "-", "numpy.argsort", t_sort, 1.0, None))
            for kind in kinds():
                if kind.name in OWN_SECTION:
                    continue
                # each kind makes its own instance of the cell, and solves it its own way
                instance = None        # made when the first algorithm runs (all may be skipped)
                for loss, algo in ((loss, a) for loss in kind.losses()
                                   for a in algorithms(loss=loss)):
                    key = (loss, algo.name)
                    if algo.max_samples is not None and P + N > algo.max_samples:
                        continue      # the oracles: only for tiny inputs
                    if key in previous and algo.cost is not None:
                        p0, n0, t0 = previous[key]
                        predicted = t0 * algo.cost(P, N) / algo.cost(p0, n0)
                        if predicted > max_seconds:
                            rows.append(Row(regime, kind.name, P, N, loss, algo.name, None, None,
                                            None, f"skipped: predicted {predicted:.0f} s > "
                                            f"{max_seconds:.0f} s"))
                            continue

                    if instance is None:
                        instance = bench_instance(kind.name, P, N, shift)

                    def call(instance=instance, loss=loss, algo=algo):
                        return solve_instance(instance, loss, algo.name)

                    seconds = median_time(call, repeats, 10.0)
                    previous[key] = (P, N, seconds)
                    # memory from one more, traced call; not for a slow one: tracemalloc hooks
                    # every allocation, which slows Python-level code (graph cuts) several times
                    traced = seconds <= TRACE_UP_TO
                    memory = peak_memory(call) / (8.0 * N) if traced else None
                    rows.append(Row(regime, kind.name, P, N, loss, algo.name, seconds,
                                    seconds / t_sort, memory,
                                    "" if traced else "memory not traced (slow call)"))
                    log(f"  {regime:11s} P={P:<6d} N={N:<9d} {loss:8s} {algo.name:12s} "
                        f"{seconds * 1e3:10.2f} ms  {seconds / t_sort:7.2f} x argsort")
    return rows


def gil_overlap(n_pos: int = 1_000, n_neg: int = 1_000_000, algorithm: str = "qs",
                repeats: int = 5) -> tuple[float, float, float]:
    """(sequential seconds, threaded seconds, ratio) for two ``infer`` calls at this size."""
    scores, labels = make_scores(n_pos, n_neg, REGIMES["overlapping"])

    def one():
        infer(scores, labels, algorithm=algorithm)

    def two_sequential():
        one()
        one()

    def two_threads():
        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    one()
    seq = median_time(two_sequential, repeats, 20.0)
    par = median_time(two_threads, repeats, 20.0)
    return seq, par, par / seq


def format_table(rows: list[Row]) -> str:
    """Markdown table of the rows."""
    out = ["| regime | P | N | loss | algorithm | median time | x argsort | "
           "peak extra memory (x 8N bytes) |",
           "|---|---:|---:|---|---|---:|---:|---:|"]
    for r in rows:
        if r.seconds is None:
            out.append(f"| {r.regime} | {r.P:g} | {r.N:g} | {r.loss} | {r.algorithm} | "
                       f"{r.note} | | |")
            continue
        mem = f"{r.memory:.2f}" if r.memory is not None else ("not traced" if r.note else "")
        out.append(f"| {r.regime} | {r.P:g} | {r.N:g} | {r.loss} | {r.algorithm} | "
                   f"{format_seconds(r.seconds)} | {r.ratio:.2f} | {mem} |")
    return "\n".join(out)


def format_gil_overlap(seq: float, par: float, ratio: float) -> str:
    """The line of :func:`gil_overlap`'s times that closes the main table."""
    return (f"GIL: two threads each calling infer(algorithm='qs') at P=1e3, N=1e6 took "
            f"{par * 1e3:.1f} ms; the same two calls one after the other "
            f"{seq * 1e3:.1f} ms (ratio {ratio:.2f}).")
