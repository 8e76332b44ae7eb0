"""Regenerate every figure of this folder: ``python figures/make_figures.py [--quick] [--out DIR]
[--recompute] [--only fig_scaling ...]``.

Each ``fig_*.py`` here is also a script of its own; this one imports them as the modules of
its own folder (Python puts a script's folder first on its path) and runs them in name order.
"""
import argparse
import importlib
import sys
import time
from pathlib import Path

from aprank.figure_tools import DEFAULT_OUT, run

HERE = Path(__file__).resolve().parent


def scripts() -> list:
    """Every fig_*.py of this folder as a module, in name order."""
    return [importlib.import_module(path.stem) for path in sorted(HERE.glob("fig_*.py"))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--recompute", action="store_true", help="ignore cached results")
    parser.add_argument("--only", nargs="+", help="names of the figures to make (e.g. fig_scaling)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    for module in scripts():
        if args.only and module.NAME not in args.only:
            continue
        for path in run(module, args.quick, args.out, args.recompute):
            print(f"  {path}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
