"""What every table of ``python -m benchmarks`` shares: how a call is timed, how its memory is
traced, the ranking kind's scores and how a time is printed."""
from __future__ import annotations

import threading
import time
import tracemalloc

import numpy as np

from aprank.checks import bench_instance

__all__ = [
    "REGIMES",
    "format_seconds",
    "make_scores",
    "median_time",
    "peak_memory",
    "round_robin",
]

#: The score regimes: positives ~ N(shift, 1), negatives ~ N(0, 1).
REGIMES = {"overlapping": 1.0, "separated": 6.0}


def make_scores(n_pos: int, n_neg: int, shift: float, seed: int = 0):
    """Shuffled scores and boolean labels: positives ~ N(shift, 1), negatives ~ N(0, 1) (the
    ranking kind's benchmark instance)."""
    instance = bench_instance("ranking", n_pos, n_neg, shift, seed)
    return instance.scores, instance.labels


def median_time(fn, repeats: int, budget: float) -> float:
    """Median wall time of up to ``repeats`` calls of ``fn()``, stopping once ``budget``
    seconds have been spent."""
    times = []
    start = time.perf_counter()
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget:
            break
    return float(np.median(times))


def round_robin(calls: dict, repeats: int, clock=time.perf_counter) -> dict:
    """{name: the ``repeats`` times of ``calls[name]()``}, the calls taken in turn, round after
    round, so that a load change on a shared machine hits every call alike. ``clock``:
    ``time.process_time`` where every call is single-threaded and the waits of a shared
    machine should not count."""
    if repeats < 1:
        raise ValueError(f"repeats={repeats!r} must be >= 1: a median needs a time")
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            t0 = clock()
            call()
            times[name].append(clock() - t0)
    return times


def peak_memory(fn) -> int:
    """Peak extra bytes of one call. The call runs on a fresh thread: the compiled driver keeps
    each thread's scratch arrays between calls, and those count as the call's memory."""
    raised = []

    def run():
        try:
            fn()
        except BaseException as e:      # re-raised in the caller's thread below
            raised.append(e)

    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    if raised:
        raise raised[0]
    return peak


def format_seconds(s: float) -> str:
    """A time in ms below a second, else in s."""
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"
