"""``python -m experiments NAME [--quick] [--jobs N] [--out DIR]``: run one experiment on real
data and write its Markdown table.

Run from the repository root (the tools sit beside the package and are never installed).
Errors are one line on stderr: exit status 2 for a usage error (an unknown experiment), 1 for
missing data or a failure while running; ``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import time
from pathlib import Path

from benchmarks.cli import Parser, at_least, run
from experiments import latent, supervised

PROG = "python -m experiments"

#: Experiments by name: each returns its Markdown table.
EXPERIMENTS = {"digits": supervised.digits, "birds": supervised.birds,
               "yahoo": supervised.yahoo, "cstar": supervised.cstar,
               "high-order": supervised.high_order, "latent": latent.latent}


def _imported_when_run(module: str, function: str):
    """The experiment ``module.function``, imported only when it runs: the torch experiments'
    modules import torch, which takes seconds that --help and the other experiments need not
    wait for."""
    def experiment(**options):
        return getattr(importlib.import_module(f"experiments.{module}"), function)(**options)
    experiment.__name__ = function
    return experiment


if importlib.util.find_spec("torch") is not None:     # the optional extra aprank[torch]
    EXPERIMENTS["torch-mlp"] = _imported_when_run("torch_mlp", "mlp_experiment")
    EXPERIMENTS["torch-peers"] = _imported_when_run("torch_peers", "peers_experiment")
    EXPERIMENTS["nonlinear"] = _imported_when_run("nonlinear", "nonlinear")
    EXPERIMENTS["nonlinear-explore"] = _imported_when_run("nonlinear_explore",
                                                          "nonlinear_explore")

# boosted trees alone (LightGBM and XGBoost, imported when it runs)
EXPERIMENTS["nonlinear-trees-explore"] = _imported_when_run("nonlinear_trees_exploration",
                                                            "nonlinear_trees_explore")

#: Experiments that can run their classes in processes (``jobs=``): results do not depend on it.
IN_PROCESSES = ("digits", "birds", "nonlinear", "nonlinear-explore")

#: Experiments that keep their finished folds beside the table (``out=``), so that a run stopped
#: part way goes on where it stopped.
KEEPS_FOLDS = ("latent", "nonlinear")

#: Per experiment: the data it reads and roughly how long a full run takes on the development
#: machine (2 cores); every --quick run takes well under a minute or two.
EXPERIMENT_NEEDS = {
    "digits": ("scikit-learn's load_digits (no data files)", "about 2 minutes with --jobs 2"),
    "birds": ("HJA birdsong segments (mil/birds_hja)", "under a minute with --jobs 2"),
    "yahoo": ("the Yahoo LTR sample (ltr/yahoo_ltr_sample_lightgbm)", "under a minute"),
    "cstar": ("HJA birdsong recordings (mil/birds_hja)", "minutes"),
    "high-order": ("HJA birdsong segments (mil/birds_hja)",
                   "about 85 minutes on 2 shared vCPUs (HOAP-SVM uncapped)"),
    "latent": ("fox, tiger, elephant, musk1 (mil/) and HJA birdsong bags",
               "many hours (LatentSSVM uncapped on HJA: 80 fits of 1-4 minutes per species; "
               "finished folds are kept, a rerun goes on from them)"),
    "torch-mlp": ("HJA birdsong segments, and PyTorch (aprank[torch])", "minutes"),
    "torch-peers": ("HJA birdsong segments, the Yahoo LTR sample, PyTorch, and optionally "
                    "libauc and pytorch-metric-learning", "about 8 minutes of CPU time"),
    "nonlinear": ("digits, HJA birdsong segments, fox, tiger, elephant (mil/), the Yahoo LTR "
                  "sample, PyTorch, LightGBM and XGBoost",
                  "about an hour of CPU time (--jobs N divides the wall clock; finished "
                  "units are kept, a rerun goes on from them)"),
    "nonlinear-explore": ("the nonlinear experiment's data sets and PyTorch",
                          "about 25 minutes of CPU time"),
    "nonlinear-trees-explore": ("digits, HJA birdsong segments, fox and the Yahoo sample, "
                                "LightGBM and XGBoost", "about 5 minutes of CPU time"),
}

#: Where the tables go unless --out says otherwise: the folder the README includes them from,
#: found from this file, whatever the current directory.
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "figures" / "tables"


def write_table(name: str, table: str, out_dir=DEFAULT_OUT, quick: bool = False) -> Path:
    """Write an experiment's table to ``out_dir/<name>.md`` (``<name>-quick.md`` for a quick
    run) and return its path."""
    path = Path(out_dir) / f"{name}{'-quick' if quick else ''}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(table)
    return path


def _experiment_help() -> str:
    width = max(map(len, EXPERIMENT_NEEDS))
    return "\n".join(f"  {name:{width}}  needs {data}; full run: {took}"
                     for name, (data, took) in EXPERIMENT_NEEDS.items())


def build_parser() -> Parser:
    """The parser of ``python -m experiments``."""
    p = Parser(PROG, (
        "Run an experiment on real data and write its table.\n"
        "Prints the Markdown table and writes it to OUT/NAME.md (NAME-quick.md with\n"
        "--quick); OUT is --out, by default the repository's figures/tables (the\n"
        "README's tables, whatever the current directory).\n"
        "Missing data files are downloaded into the data home ($APRANK_DATA, else\n"
        "~/aprank_data); without them it stops with one line saying how to set\n"
        "APRANK_DATA. --quick runs take a minute or two.\n\n"
        f"experiments:\n{_experiment_help()}"))
    p.add_argument("name", choices=sorted(EXPERIMENT_NEEDS), metavar="NAME",
                   help="one of " + ", ".join(sorted(EXPERIMENT_NEEDS)))
    p.add_argument("--quick", action="store_true",
                   help="two classes / a smaller grid (a smoke test)")
    p.add_argument("--jobs", type=at_least(1), default=1,
                   help="digits, birds and nonlinear*: work in this many processes (same table, "
                        "other timings)")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help="folder for the Markdown table (default: the repository's "
                   "figures/tables)")
    return p


def experiment(args) -> int:
    """Run the experiment the parsed arguments name, print its table and write it."""
    if args.name not in EXPERIMENTS:
        print(f"{PROG}: {args.name!r} needs PyTorch: pip install 'aprank[torch]'",
              file=sys.stderr)
        return 2
    if args.jobs > 1 and args.name not in IN_PROCESSES:
        print(f"{PROG}: --jobs applies to {', '.join(IN_PROCESSES)} only, not {args.name}",
              file=sys.stderr)
        return 2
    options = {"jobs": args.jobs} if args.jobs > 1 else {}
    if args.name in KEEPS_FOLDS:
        options["out"] = args.out
    t0 = time.perf_counter()
    path = write_table(args.name, EXPERIMENTS[args.name](quick=args.quick, **options),
                       args.out, quick=args.quick)
    print(path.read_text())
    print(f"written to {path} ({time.perf_counter() - t0:.0f} s)")
    return 0


def main(argv=None) -> int:
    """Run one experiment; errors become one line on stderr (see the module docstring)."""
    args = build_parser().parse_args(argv)
    return run(experiment, args, f"{PROG} {args.name}")


if __name__ == "__main__":
    sys.exit(main())
