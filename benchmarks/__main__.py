"""``python -m benchmarks [options]``: the full benchmark, or one of its sections.

Run from the repository root (the tools sit beside the package and are never installed).
Errors are one line on stderr (exit status 2 for a usage error, 1 for missing data or a failure
while running); ``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

from aprank.inference import simd_level
from benchmarks import (
    cstar,
    fit_times,
    iteration,
    latent,
    many_queries,
    pairwise,
    partition_paths,
    query_metrics,
    ranking,
    targets,
)
from benchmarks.cli import Parser, at_least, run
from benchmarks.machine import machine

PROG = "python -m benchmarks"

DESCRIPTION = """Time every inference algorithm against numpy.argsort: the full benchmark,
or some of its sections alone. Prints timing tables; --out also writes them to a file, and
--results DIR each section to DIR/SECTION.md (benchmarks/results/ holds the tables the docs
show).
Needs no data, except --fit (HJA birdsong and Yahoo LTR in the data home: $APRANK_DATA,
else ~/aprank_data); --pairwise resamples HJA birdsong group sizes when the data is there,
else uses groups of 9. Takes: the full run about 13 minutes (the main table, latent bags,
partition paths, many small queries, metrics over many queries); each of --iteration,
--cstar, --pairwise, --latent, --torch, --fit (about 2 minutes; 3 with --before) alone runs
only its own table; several of them run their tables one after the other, in one run. \
The quick check of an install is python -m aprank bench --quick; the
Dask cluster benchmark is python -m benchmarks.dask_bench (its own --help)."""


def build_parser() -> Parser:
    """The parser of ``python -m benchmarks``."""
    p = Parser(PROG, DESCRIPTION)
    p.add_argument("--repeats", type=at_least(1), default=5,
                   help="timed runs per cell, the median is reported (at least 1; default 5)")
    p.add_argument("--max-seconds", type=at_least(0.0, float), default=60.0,
                   help="skip cells predicted to take longer than this (default 60)")
    p.add_argument("--out", help="also write the tables to this file")
    p.add_argument("--results", metavar="DIR",
                   help="also write each section to DIR/SECTION.md, headed by the command that "
                   "made it and the machine (the docs include benchmarks/results/*.md)")
    p.add_argument("-v", "--verbose", action="store_true", help="print each timing as it is made")
    p.add_argument("--iteration", action="store_true",
                   help="only split one cutting-plane iteration into inference, QP and the rest")
    p.add_argument("--n", type=at_least(2), default=1_000_000, help="samples for --iteration")
    p.add_argument("--n-queries", type=at_least(1), default=1000,
                   help="queries for --iteration")
    p.add_argument("--d", type=at_least(1), default=16, help="features for --iteration")
    p.add_argument("--many-queries", action="store_true",
                   help="only inference over many small queries (infer_batch, a loop of infer, "
                   "one infer call at n = 20) against numpy.argsort (about half a minute)")
    p.add_argument("--targets", action="store_true",
                   help="only the workloads of the speed targets (infer_batch over many queries "
                   "contiguous and interleaved, one small infer call, every max-marginal of one "
                   "8,000-sample component, the *CV estimators against LogisticRegressionCV), "
                   "each against its yardstick; with --before PATH also on that checkout "
                   "(about two minutes; twice that with --before)")
    p.add_argument("--cstar", action="store_true",
                   help="only the c-star top-k kernel against N for core sizes 0, 2, 5, 8")
    p.add_argument("--pairwise", action="store_true",
                   help="only the max-marginals of the pairwise kind (HOB/HOAP-SVM): enumeration, "
                   "dynamic cuts and cuts from scratch at n = 1e4, 1e5")
    p.add_argument("--latent", action="store_true",
                   help="only the most violated constraint of the latent learners (latent AP-SVM, "
                   "latent SSVM, latent SVM) on bags of 4 rows, up to 400 + 1600 bags")
    p.add_argument("--torch", action="store_true",
                   help="only the PyTorch AP hinge, every backend, against torch.sort (the "
                   "torch-compiled backend on a GPU only, unless --compiled)")
    p.add_argument("--devices", metavar="LIST",
                   help="with --torch: comma-separated torch devices to time (default: cpu, and "
                   "cuda where there is one)")
    p.add_argument("--compiled", action="store_true",
                   help="with --torch: time the torch-compiled backend on the CPU too (its "
                   "compiles take about a minute per case)")
    p.add_argument("--fit", action="store_true",
                   help="only the fit times of APSVM and BinarySVM (and NDCGSVM on Yahoo) on "
                   "digits, an MNIST-sized set, HJA birds and Yahoo LTR at C = 0.1 ... 100, next "
                   "to LinearSVC (needs the HJA and Yahoo data)")
    p.add_argument("--before", metavar="PATH",
                   help="with --fit or --targets: also the same table on the aprank package in "
                   "checkout PATH (built in place); with --fit, how far its w are from today's")
    return p


def _emit(text: str, out) -> int:
    """Print a section's text and, with --out, write it there too."""
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    return 0


def _write_result(args, name: str, text: str, command: str) -> None:
    """With --results DIR: the section's text as DIR/<name>.md, headed by the command that
    regenerates it and the machine it was measured on."""
    if not args.results:
        return
    folder = Path(args.results)
    folder.mkdir(parents=True, exist_ok=True)
    header = (f"Regenerate: `{command}`. Measured on {machine()}, "
              f"{time.strftime('%Y-%m-%d')}.")
    (folder / f"{name}.md").write_text(f"{header}\n\n{text}\n")


def _full(args) -> int:
    """Every section of the full run, each printed as it is made; --out gets them all."""
    log = print if args.verbose else (lambda line: None)
    print(f"Timing (median of up to {args.repeats} runs; {simd_level()} partition):")
    rows = ranking.bench(ranking.FULL_CELLS, repeats=args.repeats,
                         max_seconds=args.max_seconds, log=log)
    sections = [ranking.format_table(rows)]
    print(sections[-1])
    sections.append(ranking.format_gil_overlap(*ranking.gil_overlap()))
    print("\n" + sections[-1])
    _write_result(args, "bench", "\n\n".join(sections), PROG)
    more = (
        ("latent", lambda: _latent_table(args)),
        # a few seconds up to about half a minute each
        ("many-queries", lambda: _many_queries_table(args)),
        ("metrics", lambda: query_metrics.format_many_query_metrics(
            query_metrics.many_query_metrics(repeats=args.repeats))),
        # every partition path against np.sort: about a minute
        ("partition-paths", lambda: partition_paths.format_partition_paths(
            partition_paths.partition_paths(repeats=max(7, args.repeats))
            + partition_paths.partition_paths_without_numpy_avx512(
                repeats=max(7, args.repeats)))),
    )
    for name, section in more:
        sections.append(section())
        print("\n" + sections[-1])
        _write_result(args, name, sections[-1], f"{PROG} (the full run: its {name} section)")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n\n".join(sections) + "\n")
    return 0


def _latent_table(args) -> str:
    return latent.format_latent(latent.latent_scaling(latent.LATENT_CELLS, repeats=args.repeats,
                                                      max_seconds=args.max_seconds))


def _many_queries_table(args) -> str:
    return many_queries.format_many_query_inference(
        *many_queries.many_query_inference(many_queries.MANY_QUERY_SIZES, args.repeats))


def _iteration(args) -> str:
    return iteration.format_iteration(
        iteration.iteration_overhead(n=args.n, n_queries=args.n_queries, d=args.d))


def _fit_table(args) -> str:
    """--fit: fit times (and with --before, the older checkout's and the equality of w)."""
    log = print if args.verbose else (lambda line: None)
    repeats = min(args.repeats, 3)
    after = fit_times.measure(repeats=repeats, log=log)
    before = None if args.before is None else fit_times.measure_elsewhere(args.before,
                                                                          repeats=repeats)
    text = [f"Fit times (ms, the run of median time of {repeats}; one BLAS thread), "
            f"{'before (' + args.before + ') and ' if before else ''}now; split: products and "
            "cut / working-set QP / loss-augmented inference / the rest:", "",
            fit_times.format_table(after, before), "", "Targets:", "",
            fit_times.format_targets(after)]
    if args.before is not None:
        text += ["", "w learnt now against the older checkout (every class of digits and HJA "
                 "birds, both Yahoo thresholds; C in 0.1, 1, 10, 100):", "",
                 fit_times.format_equality(fit_times.weights(),
                                           fit_times.measure_elsewhere(args.before,
                                                                       what="weights"))]
    return "\n".join(text)


def _torch_table(args) -> str:
    # imported here, not at the top: importing torch takes seconds, which --help and the other
    # sections need not wait for
    from benchmarks import torch_bench

    return (f"AP hinge, forward + backward, against torch.sort of the same tensor "
            f"({torch_bench.describe_devices()}; {simd_level()} partition):\n"
            + torch_bench.format_bench(torch_bench.bench(
                devices=args.devices.split(",") if args.devices else None,
                repeats=args.repeats, compiled=args.compiled)))


def _pairwise_table(args) -> str:
    start = os.getloadavg()[0]
    rows, source = pairwise.pairwise_scaling(repeats=args.repeats)
    crossover = pairwise.enumeration_crossover(repeats=args.repeats)
    component = pairwise.component_scaling(repeats=args.repeats)
    return pairwise.format_pairwise(rows, source, crossover, component,
                                    (start, os.getloadavg()[0]))


def _cstar_table(args) -> str:
    rows, slopes = cstar.cstar_scaling(repeats=args.repeats)
    return ("c-star top-k inference (no loss term), one query, k = 100, against numpy.argsort "
            "of the same scores:\n" + cstar.format_cstar(rows, slopes))


def _targets_table(args) -> str:
    before = None if args.before is None else targets.measure_elsewhere(args.before,
                                                                        args.repeats)
    after = targets.measure(args.repeats)
    return (f"The speed targets (CPU time, one BLAS thread; {machine()})"
            + (f": {args.before} -> this checkout" if before else "") + ":\n\n"
            + targets.format_targets(after, before))


#: The sections that run alone, in the order they run when several are asked for.
SECTIONS = {"iteration": _iteration, "fit": _fit_table, "torch": _torch_table,
            "pairwise": _pairwise_table, "latent": _latent_table, "cstar": _cstar_table,
            "many_queries": _many_queries_table, "targets": _targets_table}


def benchmark(args) -> int:
    """Run what the parsed arguments ask for: the sections flagged, in one run (so that their
    figures share one machine state), or the full run."""
    chosen = [name for name in SECTIONS if getattr(args, name)]
    if not chosen:
        return _full(args)
    flags = " ".join("--" + name.replace("_", "-") for name in chosen)
    texts = []
    for name in chosen:
        texts.append(SECTIONS[name](args))
        _write_result(args, name.replace("_", "-"), texts[-1], f"{PROG} {flags}")
    return _emit("\n\n".join(texts), args.out)


def main(argv=None) -> int:
    """Run the benchmark; errors become one line on stderr (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.before is not None and not (args.fit or args.targets):
        parser.error("--before applies to --fit and --targets only")
    if args.torch and importlib.util.find_spec("torch") is None:   # the extra aprank[torch]
        parser.error("--torch needs PyTorch: pip install 'aprank[torch]'")
    return run(benchmark, args, PROG)


if __name__ == "__main__":
    sys.exit(main())
