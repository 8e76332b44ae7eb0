"""Support for the figure scripts of this folder: caching, saving, command line.

Each script ``figures/fig_<topic>.py`` defines ``compute(quick) -> dict`` (JSON-serialisable
results), ``plot(results) -> matplotlib.figure.Figure`` and ``main()``, which calls
:func:`figure_main`. Results are cached as JSON next to the PNG and SVG, so ``plot`` can be
rerun without recomputing; ``--recompute`` ignores the cache. Files go to ``--out``, by default
the ``out/`` folder beside the scripts (never a folder under the current directory). A script
whose data is missing stops with one line saying how to set ``APRANK_DATA``; one whose
optional packages are missing (:func:`require`) stops with one line naming them. The package never
loads the scripts: they import this module, and ``figures.make_figures`` runs them all.

The scripts run as modules of the ``figures`` package from the repository root
(``python -m figures.fig_scaling``, ``python -m figures.make_figures``), which makes the
repository's ``benchmarks`` (the timings some figures plot, and the line naming the machine)
importable beside them. Plotting needs matplotlib: ``pip install 'aprank[figures]'``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

from aprank.datasets import ChecksumError, DataUnavailableError
from benchmarks.machine import machine


class MissingPackageError(RuntimeError):
    """A figure needs optional packages that are not installed (it is skipped, naming them)."""


def require(*modules: str, install: str) -> None:
    """Raise :class:`MissingPackageError` naming the ``modules`` (import names) that are not
    installed, and ``install``, the command that installs them."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingPackageError(f"needs {', '.join(missing)}, not installed: {install}")


def default_out(module) -> Path:
    """The ``out/`` folder beside a figure script."""
    return Path(module.__file__).resolve().parent / "out"


def run(module, quick: bool = False, out=None, recompute: bool = False, log=print):
    """Compute (or load) the results of one figure script, plot them and write PNG and SVG
    into ``out`` (default :func:`default_out`)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = default_out(module) if out is None else Path(out)
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
    """A figure script's command line; missing data or packages are one line on stderr and
    exit status 1."""
    parser = argparse.ArgumentParser(description=module.__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--out", default=None,
                        help=f"output folder (default: {default_out(module)})")
    parser.add_argument("--recompute", action="store_true", help="ignore cached results")
    args = parser.parse_args(argv)
    try:
        paths = run(module, args.quick, args.out, args.recompute)
    except (DataUnavailableError, ChecksumError, MissingPackageError) as exc:
        print(f"{module.NAME}: {exc}", file=sys.stderr)
        return 1
    for path in paths:
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
