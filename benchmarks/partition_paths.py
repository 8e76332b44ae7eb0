"""A section of the full run of ``python -m benchmarks``: the partition paths.

:func:`partition_paths` times the fastest exact AP algorithms at P = 1e3, N = 1e6 on every
partition path this CPU runs against ``np.sort`` of the negatives (values only);
:func:`partition_paths_without_numpy_avx512` repeats it in a process whose NumPy has its AVX-512
sort dispatch disabled, which is how a machine with AVX2 only sorts.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from aprank.inference import SIMD_LEVELS, infer, set_simd, simd_level
from benchmarks.machine import machine
from benchmarks.timing import REGIMES, format_seconds, make_scores, round_robin

#: The partition-path section: the fastest exact AP algorithms at P = 1e3, N = 1e6 (overlapping)
#: on every partition path, against ``np.sort`` of the negatives' scores (values only).
PATH_CELL = (1_000, 1_000_000)
PATH_ALGORITHMS = ("qs", "select")


@dataclass
class PathRow:
    numpy_sort: str           # which of NumPy's sort dispatches timed np.sort
    path: str                 # aprank's partition path (aprank.simd_level())
    algorithm: str
    seconds: float            # median
    low: float                # fastest and slowest of the repeats
    high: float
    sort_seconds: float       # median np.sort of the negatives, interleaved with the above
    ratio: float


def numpy_avx512_dispatch() -> list[str]:
    """NumPy's AVX-512 dispatch targets that this CPU runs (names for NPY_DISABLE_CPU_FEATURES)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:       # NumPy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)
            and (name.startswith("AVX512") or name == "X86_V4")]


def partition_paths(levels=None, algorithms=PATH_ALGORITHMS, repeats: int = 7,
                    numpy_sort: str = "native", seed: int = 0) -> list[PathRow]:
    """Median CPU time of each algorithm on each partition path (default: every path this CPU
    runs) at PATH_CELL, and of ``np.sort`` of the negatives, in interleaved rounds so that a
    slow spell of a shared machine falls on all of them alike (CPU time: other processes'
    load does not count; every call timed is single-threaded). The process-wide path is
    restored afterwards."""
    P, N = PATH_CELL
    scores, labels = make_scores(P, N, REGIMES["overlapping"], seed)
    negatives = scores[~labels]
    previous = set_simd(True)
    try:
        best = SIMD_LEVELS.index(simd_level())
        levels = list(levels) if levels is not None else list(SIMD_LEVELS[best::-1])
        for level in levels:            # warm up (and fail early on a path this CPU lacks)
            set_simd(level)
            for algo in algorithms:
                infer(scores, labels, algorithm=algo)

        def on_path(level, algo):
            def call():
                set_simd(level)         # a flag: nothing next to the call it precedes
                infer(scores, labels, algorithm=algo)
            return call

        calls = {("np.sort", ""): lambda: np.sort(negatives)}
        calls.update({(level, algo): on_path(level, algo) for level in levels
                      for algo in algorithms})
        times = round_robin(calls, repeats, time.process_time)
    finally:
        set_simd(previous)
    sort_median = float(np.median(times.pop(("np.sort", ""))))
    return [PathRow(numpy_sort, level, algo, float(np.median(t)), min(t), max(t), sort_median,
                    float(np.median(t)) / sort_median) for (level, algo), t in times.items()]


def partition_paths_without_numpy_avx512(repeats: int = 7) -> list[PathRow]:
    """partition_paths in a fresh process whose NumPy runs without its AVX-512 dispatch and
    whose kernels take the AVX2 and portable paths: a machine with AVX2 only, emulated. Empty
    where NumPy has no AVX-512 target here or the CPU lacks AVX2."""
    disabled = numpy_avx512_dispatch()
    if not disabled:
        return []
    code = ("import json, dataclasses; "
            "from benchmarks.partition_paths import partition_paths; "
            f"rows = partition_paths(('avx2', 'portable'), repeats={int(repeats)}, "
            "numpy_sort='AVX-512 disabled'); "
            "print(json.dumps([dataclasses.asdict(r) for r in rows]))")
    # the repository root on the path: this module is a tool beside the package, not in it
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(disabled),
               PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        if "avx2 partition needs" in out.stderr:
            return []
        raise RuntimeError(f"the AVX2-only run failed:\n{out.stderr}")
    return [PathRow(**r) for r in json.loads(out.stdout.strip().splitlines()[-1])]


def format_partition_paths(rows: list[PathRow]) -> str:
    """Markdown table of partition_paths rows, with the CPU and NumPy's sort dispatch."""
    P, N = PATH_CELL
    out = [f"Partition paths at P = {P:g}, N = {N:g} (overlapping), against np.sort of the "
           f"negatives (values only), median CPU times of interleaved repeats ({machine()}; "
           f"NumPy's AVX-512 dispatch here: {' '.join(numpy_avx512_dispatch()) or 'none'}):",
           "",
           "| np.sort dispatch | partition path | algorithm | median | fastest - slowest "
           "| np.sort median | x np.sort |",
           "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r.numpy_sort} | {r.path} | {r.algorithm} | {format_seconds(r.seconds)} | "
                   f"{r.low * 1e3:.1f} - {r.high * 1e3:.1f} ms | {format_seconds(r.sort_seconds)} "
                   f"| {r.ratio:.2f} |")
    return "\n".join(out)
