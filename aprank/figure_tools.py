"""Support for the figure scripts in the repository's ``figures/``: caching, saving, command line.

Each script ``figures/fig_<topic>.py`` defines ``compute(quick) -> dict`` (JSON-serialisable
results), ``plot(results) -> matplotlib.figure.Figure`` and ``main()``, which calls
:func:`figure_main`. Results are cached as JSON next to the PNG and SVG, so ``plot`` can be
rerun without recomputing; ``--recompute`` ignores the cache. The package never loads the
scripts: they import this module, and ``figures/make_figures.py`` runs them all.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from aprank.inference import simd_active

DEFAULT_OUT = "figures/out"


def machine() -> str:
    """One line describing where results were computed."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"NumPy {np.__version__}, AVX-512 partition {'on' if simd_active() else 'off'}")


def run(module, quick: bool = False, out: str = DEFAULT_OUT, recompute: bool = False, log=print):
    """Compute (or load) the results of one figure script, plot them and write PNG and SVG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stem = module.NAME + ("-quick" if quick else "")
    cache = out / f"{stem}.json"
    if cache.exists() and not recompute:
        results = json.loads(cache.read_text())
        log(f"{module.NAME}: using cached results {cache}")
    else:
        t0 = time.perf_counter()
        results = module.compute(quick)
        results["machine"] = machine()
        results["seconds"] = round(time.perf_counter() - t0, 1)
        cache.write_text(json.dumps(results, separators=(",", ":")))
        log(f"{module.NAME}: computed in {results['seconds']} s")
    fig = module.plot(results)
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    fig.savefig(paths[0], dpi=90, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    return [cache, *paths]


def figure_main(module, argv=None) -> int:
    parser = argparse.ArgumentParser(description=module.__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--recompute", action="store_true", help="ignore cached results")
    args = parser.parse_args(argv)
    for path in run(module, args.quick, args.out, args.recompute):
        print(path)
    return 0


def script_main(module_name: str):
    """The ``main(argv=None)`` of a figure script: ``main = script_main(__name__)``."""
    def main(argv=None) -> int:
        return figure_main(sys.modules[module_name], argv)
    return main


def fit_slope(x, y) -> float:
    """Slope of log y against log x (least squares)."""
    x, y = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(x, y, 1)[0]) if x.size >= 2 else float("nan")
