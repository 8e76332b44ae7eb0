"""Regenerate every figure of this folder: ``python -m figures.make_figures [--quick]
[--out DIR] [--recompute] [--only fig_scaling ...]`` from the repository root.

Each ``fig_*.py`` here is also a script of its own (``python -m figures.fig_scaling``); this
one imports them as modules of the ``figures`` package and runs them in name order.
Files go to ``--out``, by default ``figures/out`` beside this script. A script whose data is
missing (and cannot be downloaded), or whose optional packages are not installed, is skipped,
saying why; the others still run, and the end lists what was skipped (exit status 0: a missing
data set is not an error here).
"""
import argparse
import importlib
import sys
import time
from pathlib import Path

from aprank.datasets import ChecksumError, DataUnavailableError
from figures._tools import MissingPackageError, run

HERE = Path(__file__).resolve().parent


def scripts() -> list:
    """Every fig_*.py of this folder as a module, in name order."""
    return [importlib.import_module(f"figures.{path.stem}")
            for path in sorted(HERE.glob("fig_*.py"))]


def main(argv=None) -> int:
    names = [path.stem for path in sorted(HERE.glob("fig_*.py"))]
    parser = argparse.ArgumentParser(prog="python -m figures.make_figures",
                                     description=__doc__.replace("``", ""),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--out", default=str(HERE / "out"),
                        help="output folder (default: %(default)s)")
    parser.add_argument("--recompute", action="store_true", help="ignore cached results")
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME",
                        help="names of the figures to make: " + ", ".join(names))
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    skipped, unpackaged = [], []
    for module in scripts():
        if args.only and module.NAME not in args.only:
            continue
        try:
            paths = run(module, args.quick, args.out, args.recompute)
        except (DataUnavailableError, ChecksumError) as exc:
            skipped.append(module.NAME)
            print(f"  {module.NAME}: skipped, its data is missing: {exc}", file=sys.stderr)
            continue
        except MissingPackageError as exc:
            unpackaged.append(module.NAME)
            print(f"  {module.NAME}: skipped, it {exc}", file=sys.stderr)
            continue
        for path in paths:
            print(f"  {path}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    if unpackaged:
        print(f"skipped (packages missing): {', '.join(unpackaged)}", file=sys.stderr)
    if skipped:
        print(f"skipped (data missing): {', '.join(skipped)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
