"""Per-call time of one loss-augmented inference for every exact AP and NDCG algorithm.

Log-log, in the overlapping (positives ~ N(1,1)) and separated (~ N(6,1)) regimes; negatives
~ N(0,1): (a) against N with P = 100, (b) against P with N = 1e5, (c) against n = P + N at one
positive per ten negatives. numpy.argsort of the negatives is the reference line, timed in the
same run. Legends give the least-squares slope of log time against log size, fitted where a
call takes at least 0.2 ms (below that, fixed per-call costs dominate). Algorithms are taken
from the registry; `brute` (at most 16 samples) is left out, and a point an algorithm is
predicted to need more than 3 s for (from its registry cost model) is not run.
"""
import sys
import warnings

import numpy as np

from aprank.inference import SlowAlgorithmWarning, algorithms, get_algorithm, get_kind, infer
from benchmarks.timing import REGIMES, make_scores, median_time
from figures._tools import fit_slope, script_main

NAME = "fig_scaling"
MAX_SECONDS = 3.0
MIN_FIT_SECONDS = 2e-4


def _sizes(lo, hi, per_decade=2):
    return [int(round(v)) for v in np.logspace(np.log10(lo), np.log10(hi),
                                               int(per_decade * np.log10(hi / lo)) + 1)]


def panels(quick):
    top = 1e5 if quick else 1e6
    return {
        "a": {"xlabel": "negatives N (P = 100)", "points": [(100, N) for N in _sizes(1e3, top)]},
        "b": {"xlabel": "positives P (N = 1e5)" if not quick else "positives P (N = 1e4)",
              "points": [(P, 10**4 if quick else 10**5)
                         for P in _sizes(10, 1e3 if quick else 1e4)]},
        "c": {"xlabel": "samples n = P + N (P : N = 1 : 10)",
              "points": [(n // 11, n - n // 11) for n in _sizes(1.1e3, 11 * top / 10)]},
    }


def series():
    """(loss, algorithm) pairs: every registered exact algorithm of each loss of the ranking
    kind (grouped by loss), the oracle left out."""
    return [(loss, a.name) for loss in get_kind("ranking").losses()
            for a in algorithms(loss=loss, exact=True) if a.max_samples is None]


def compute(quick):
    repeats = 2 if quick else 3
    results = {"regimes": {}, "series": [f"{loss}/{name}" for loss, name in series()]}
    for regime, shift in REGIMES.items():
        out = {}
        for key, panel in panels(quick).items():
            x_key = {"a": 1, "b": 0, "c": None}[key]
            xs, sort_times, lines, last = [], [], {s: [] for s in results["series"]}, {}
            for P, N in panel["points"]:
                scores, labels = make_scores(P, N, shift, seed=P + N)
                negatives = scores[~labels]
                xs.append(P + N if x_key is None else (P, N)[x_key])
                sort_times.append(median_time(lambda: np.argsort(negatives), repeats, 5.0))
                for loss, name in series():
                    label = f"{loss}/{name}"
                    algo = get_algorithm(name, "ranking")
                    if label in last:
                        p0, n0, t0 = last[label]
                        if t0 * algo.cost(P, N) / algo.cost(p0, n0) > MAX_SECONDS:
                            lines[label].append(None)
                            continue
                    # every exact algorithm is timed on purpose, the slow ones too, and a point
                    # predicted past MAX_SECONDS is skipped by the cost models that warn: the
                    # warning would only repeat what the figure shows
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", SlowAlgorithmWarning)
                        t = median_time(lambda: infer(scores, labels, loss=loss, algorithm=name),
                                        repeats, 5.0)
                    last[label] = (P, N, t)
                    lines[label].append(t)
            out[key] = {"xlabel": panel["xlabel"], "x": xs, "argsort": sort_times, "lines": lines}
        results["regimes"][regime] = out
    return results


def _slope(x, t):
    pts = [(a, b) for a, b in zip(x, t) if b is not None and b >= MIN_FIT_SECONDS]
    if len(pts) < 2:
        pts = [(a, b) for a, b in zip(x, t) if b is not None]
    return fit_slope(*zip(*pts)) if len(pts) >= 2 else float("nan")


def plot(results):
    import matplotlib.pyplot as plt

    regimes = list(results["regimes"])
    colours = dict(zip(results["series"], plt.cm.tab10.colors))
    fig, axes = plt.subplots(len(regimes), 3, figsize=(15, 4.6 * len(regimes)), squeeze=False)
    for row, regime in enumerate(regimes):
        for col, key in enumerate("abc"):
            panel = results["regimes"][regime][key]
            ax = axes[row, col]
            x = panel["x"]
            for label, times in panel["lines"].items():
                pts = [(a, b) for a, b in zip(x, times) if b is not None]
                if not pts:
                    continue
                ax.loglog(*zip(*pts), "o-", ms=3, color=colours[label],
                          label=f"{label} (slope {_slope(x, times):.2f})")
            ax.loglog(x, panel["argsort"], "k--", lw=1.5,
                      label=f"numpy.argsort (slope {_slope(x, panel['argsort']):.2f})")
            ax.set_xlabel(panel["xlabel"])
            ax.set_ylabel("seconds per call")
            ax.set_title(f"({key}) {regime}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("Loss-augmented inference, one call (" + results.get("machine", "") + ")",
                 fontsize=10)
    fig.tight_layout()
    return fig


main = script_main(__name__)

if __name__ == "__main__":
    sys.exit(main())
