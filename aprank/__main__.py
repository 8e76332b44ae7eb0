"""Command line: ``python -m aprank {algorithms,check,bench,experiment}`` (``aprank ...`` once
installed).

Errors are one line on stderr: exit status 2 for a bad option or an unknown experiment
(argparse's usage errors), 1 for missing data or a failure while running; ``--debug`` shows the
traceback instead. With PyTorch installed (``aprank[torch]``) it also offers ``bench --torch``
and ``experiment torch-mlp``.

The figures are made by the repository's scripts (``python figures/make_figures.py``), which
the package does not load.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import aprank
from aprank import bench, experiments, fit_times
from aprank.datasets import ChecksumError, DataUnavailableError

try:  # the optional extra aprank[torch] brings the torch loss's benchmark and experiment
    from aprank.torch import tools as torch_tools
except ModuleNotFoundError as missing:
    if missing.name != "torch":
        raise
    torch_tools = None

#: Experiments by name: each returns its Markdown table.
EXPERIMENTS = dict(experiments.EXPERIMENTS)
if torch_tools is not None:
    EXPERIMENTS["torch-mlp"] = torch_tools.mlp_experiment


def _cmd_algorithms(args) -> int:
    print(aprank.algorithms())
    return 0


def _cmd_check(args) -> int:
    t0 = time.perf_counter()
    report = aprank.crosscheck(args.loss, n_trials=args.n_trials, max_n=args.max_n,
                               seed=args.seed)
    print(report)
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0 if report.ok else 1


def _cmd_bench(args) -> int:
    if args.before is not None and not args.fit:
        print("python -m aprank bench: --before applies to --fit only", file=sys.stderr)
        return 2
    if args.iteration:
        return _iteration(args)
    if args.fit:
        return _emit(_fit_table(args), args.out)
    if args.torch:
        return _torch_bench(args)
    if args.pairwise:
        rows, source = bench.pairwise_scaling(repeats=args.repeats)
        return _emit(bench.format_pairwise(rows, source,
                                           bench.enumeration_crossover(repeats=args.repeats)), args.out)
    if args.latent:
        return _emit(_latent_table(args), args.out)
    if args.cstar:
        rows, slopes = bench.cstar_scaling(repeats=args.repeats)
        print("c-star top-k inference (no loss term), one query, k = 100, against numpy.argsort "
              "of the same scores:")
        print(bench.format_cstar(rows, slopes))
        return 0
    status = 0
    if args.quick:
        print("Cross-check of every exact algorithm against its kind's oracle and each other:")
        report = aprank.crosscheck(n_trials=100, max_n=1000)
        print(report, end="\n\n")
        status = 0 if report.ok else 1
    cells = bench.QUICK_CELLS if args.quick else bench.FULL_CELLS
    print(f"Timing (median of up to {args.repeats} runs; {aprank.simd_level()} partition):")
    rows = bench.bench(cells, repeats=args.repeats, max_seconds=args.max_seconds,
                       log=print if args.verbose else (lambda line: None))
    table = bench.format_table(rows)
    print(table)
    seq, par, ratio = bench.gil_overlap()
    gil = (f"\nGIL: two threads each calling infer(algorithm='qs') at P=1e3, N=1e6 took "
           f"{par * 1e3:.1f} ms; the same two calls one after the other {seq * 1e3:.1f} ms "
           f"(ratio {ratio:.2f}).")
    print(gil)
    latent = _latent_table(args)
    print("\n" + latent)
    sections = [table, gil, latent]
    # a few seconds quick (a fifth of the queries), about half a minute in full
    sizes = bench.MANY_QUERY_SIZES if not args.quick else tuple(
        (docs, n // 5) for docs, n in bench.MANY_QUERY_SIZES)
    many = bench.format_many_query_inference(*bench.many_query_inference(sizes, args.repeats))
    print("\n" + many)
    sections.append(many)
    if not args.quick:      # 1e6 samples in 4e5 queries: about half a minute, full runs only
        metrics = bench.format_many_query_metrics(bench.many_query_metrics(repeats=args.repeats))
        print("\n" + metrics)
        sections.append(metrics)
    if not args.quick:      # every partition path against np.sort (issue 14): about a minute
        repeats = max(7, args.repeats)
        paths = bench.format_partition_paths(
            bench.partition_paths(repeats=repeats)
            + bench.partition_paths_without_numpy_avx512(repeats=repeats))
        print("\n" + paths)
        sections.append(paths)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n\n".join(sections) + "\n")
    return status


def _emit(table: str, out) -> int:
    """Print a table and, with --out, write it there too."""
    print(table)
    if out:
        with open(out, "w") as f:
            f.write(table + "\n")
    return 0


def _latent_table(args) -> str:
    cells = bench.QUICK_LATENT_CELLS if args.quick else bench.LATENT_CELLS
    return bench.format_latent(bench.latent_scaling(cells, repeats=args.repeats,
                                                    max_seconds=args.max_seconds))


def _iteration(args) -> int:
    r = bench.iteration_overhead(n=args.n, n_queries=args.n_queries, d=args.d)
    print(f"One cutting-plane iteration of APSVM (qs), n = {r['n']:g}, {r['n_queries']} "
          f"interleaved queries, d = {r['d']} (medians over iterations 2-{r['iterations']}; "
          f"{aprank.simd_level()} partition):")
    print(f"  inference {r['inference'] * 1e3:8.1f} ms")
    print(f"  QP        {r['qp'] * 1e3:8.1f} ms")
    print(f"  the rest  {r['rest'] * 1e3:8.1f} ms  ({r['rest'] / r['inference']:.2f} x inference; "
          "products X w and X'c included)")
    print(f"  building the model once: {r['setup'] * 1e3:.1f} ms")
    return 0


def _fit_table(args) -> str:
    """bench --fit: fit times (and with --before, the older checkout's and the equality of w)."""
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


def _torch_bench(args) -> int:
    if torch_tools is None:
        print("bench --torch needs PyTorch: pip install 'aprank[torch]'", file=sys.stderr)
        return 2
    print(f"AP hinge, forward + backward, against torch.sort of the same tensor "
          f"({torch_tools.describe_devices()}; {aprank.simd_level()} partition):")
    table = torch_tools.format_bench(torch_tools.bench(repeats=args.repeats))
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    return 0


def _cmd_experiment(args) -> int:
    if args.name not in EXPERIMENTS:
        print(f"python -m aprank experiment: {args.name!r} needs PyTorch: "
              f"pip install 'aprank[torch]'", file=sys.stderr)
        return 2
    if args.jobs > 1 and args.name not in experiments.IN_PROCESSES:
        print(f"python -m aprank experiment: --jobs applies to "
              f"{', '.join(experiments.IN_PROCESSES)} only, not {args.name}", file=sys.stderr)
        return 2
    parallel = {"jobs": args.jobs} if args.jobs > 1 else {}
    t0 = time.perf_counter()
    path = experiments.write_table(args.name, EXPERIMENTS[args.name](quick=args.quick, **parallel),
                                   args.out, quick=args.quick)
    print(path.read_text())
    print(f"written to {path} ({time.perf_counter() - t0:.0f} s)")
    return 0


DESCRIPTION = """Exact loss-augmented inference for ranking losses (average precision, NDCG,
precision@k, ...) and the structured SVMs built on it. Each command's --help says what it
needs, what it writes and how long it takes. Real data is read from the data home:
$APRANK_DATA, else ~/aprank_data, where missing files are downloaded (SHA-256 checked)."""

#: Per experiment: the data it reads and roughly how long a full run takes on the development
#: machine (2 cores); every --quick run takes well under a minute or two.
EXPERIMENT_NEEDS = {
    "digits": ("scikit-learn's load_digits (no data files)", "about 2 minutes with --jobs 2"),
    "birds": ("HJA birdsong segments (mil/birds_hja)", "about 45 minutes with --jobs 2"),
    "yahoo": ("the Yahoo LTR sample (ltr/yahoo_ltr_sample_lightgbm)", "under a minute"),
    "cstar": ("HJA birdsong recordings (mil/birds_hja)", "minutes"),
    "high-order": ("HJA birdsong segments (mil/birds_hja)", "about 15 minutes"),
    "latent": ("fox, tiger, elephant, musk1 (mil/) and HJA birdsong bags", "about 16 minutes"),
    "torch-mlp": ("HJA birdsong segments, and PyTorch (aprank[torch])", "minutes"),
}


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line: what is wrong and where help is."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _at_least(low, kind=int):
    """An argparse type: a number of ``kind`` no smaller than ``low``."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") from None
        if not value >= low:        # also refuses nan
            raise argparse.ArgumentTypeError(f"must be at least {low:g}, got {text}")
        return value
    return parse


def _experiment_help() -> str:
    width = max(map(len, EXPERIMENT_NEEDS))
    return "\n".join(f"  {name:{width}}  needs {data}; full run: {took}"
                     for name, (data, took) in EXPERIMENT_NEEDS.items())


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m aprank`` and its commands."""
    parser = _Parser(prog="python -m aprank", description=DESCRIPTION)
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error instead of one line")
    debug = argparse.ArgumentParser(add_help=False)        # --debug after the command too
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the full traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, summary, details):
        return sub.add_parser(name, parents=[debug], help=summary,
                              description=f"{summary[0].upper()}{summary[1:]}.\n{details}",
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    p = command("algorithms", "print the registry of inference algorithms",
                "Every algorithm with its kind, losses, exactness and complexity.\n"
                "Needs nothing; writes nothing; takes under a second.")
    p.set_defaults(func=_cmd_algorithms)

    p = command("check", "cross-check the algorithms of each loss",
                "Every algorithm against its kind's oracle and the others on seeded\n"
                "random instances; exit status 1 if any disagree.\n"
                "Needs no data; writes nothing; takes about 30 s with the defaults\n"
                "(time grows with --n-trials and --max-n).")
    p.add_argument("--n-trials", type=_at_least(1), default=200,
                   help="random instances per loss (at least 1; default 200)")
    p.add_argument("--max-n", type=_at_least(2), default=2000,
                   help="largest instance size (at least 2: a positive and a negative; "
                   "default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--loss", nargs="+", default=None, choices=sorted(aprank.losses.LOSSES),
                   help="losses to check (default: every registered loss)")
    p.set_defaults(func=_cmd_check)

    p = command("bench", "time every algorithm against numpy.argsort",
                "Prints timing tables; --out also writes them to a file.\n"
                "Needs no data, except --fit (HJA birdsong and Yahoo LTR in the data home);\n"
                "--pairwise resamples HJA birdsong group sizes when the data is there, else\n"
                "uses groups of 9. Takes: --quick under a few minutes (a cross-check first),\n"
                "the full run about 13 minutes (the main table, latent bags, partition paths,\n"
                "many small queries, metrics over many queries); each of --iteration,\n"
                "--cstar, --pairwise, --latent, --torch, --fit (about 2 minutes; 3 with\n"
                "--before) alone runs only its own table.")
    p.add_argument("--quick", action="store_true", help="small cells, after a quick cross-check")
    p.add_argument("--repeats", type=_at_least(1), default=5,
                   help="timed runs per cell, the median is reported (at least 1; default 5)")
    p.add_argument("--max-seconds", type=_at_least(0.0, float), default=60.0,
                   help="skip cells predicted to take longer than this (default 60)")
    p.add_argument("--out", help="also write the table to this file")
    p.add_argument("-v", "--verbose", action="store_true", help="print each timing as it is made")
    p.add_argument("--iteration", action="store_true",
                   help="only split one cutting-plane iteration into inference, QP and the rest")
    p.add_argument("--n", type=_at_least(2), default=1_000_000, help="samples for --iteration")
    p.add_argument("--n-queries", type=_at_least(1), default=1000,
                   help="queries for --iteration")
    p.add_argument("--d", type=_at_least(1), default=16, help="features for --iteration")
    p.add_argument("--cstar", action="store_true",
                   help="only the c-star top-k kernel against N for core sizes 0, 2, 5, 8")
    p.add_argument("--pairwise", action="store_true",
                   help="only the max-marginals of the pairwise kind (HOB/HOAP-SVM): enumeration, "
                   "dynamic cuts and cuts from scratch at n = 1e4, 1e5")
    p.add_argument("--latent", action="store_true",
                   help="only the most violated constraint of the latent learners (latent AP-SVM, "
                   "latent SSVM, latent SVM) on bags of 4 rows, up to 200 + 800 bags")
    p.add_argument("--torch", action="store_true",
                   help="only the PyTorch AP hinge, both backends, against torch.sort")
    p.add_argument("--fit", action="store_true",
                   help="only the fit times of APSVM and BinarySVM (and NDCGSVM on Yahoo) on "
                   "digits, an MNIST-sized set, HJA birds and Yahoo LTR at C = 0.1 ... 100, next "
                   "to LinearSVC (needs the HJA and Yahoo data)")
    p.add_argument("--before", metavar="PATH",
                   help="with --fit: also the same table on the aprank package in checkout PATH "
                   "(built in place), and how far its w are from today's")
    p.set_defaults(func=_cmd_bench)

    p = command("experiment", "run an experiment on real data and write its table",
                f"Prints the Markdown table and writes it to OUT/NAME.md (NAME-quick.md\n"
                f"with --quick); OUT is --out, by default ./{experiments.DEFAULT_OUT}.\n"
                f"Missing data files are downloaded into the data home ($APRANK_DATA,\n"
                f"else ~/aprank_data); without them it stops with one line saying how to\n"
                f"set APRANK_DATA. --quick runs take a minute or two.\n\n"
                f"experiments:\n{_experiment_help()}")
    p.add_argument("name", choices=sorted(EXPERIMENT_NEEDS), metavar="NAME",
                   help="one of " + ", ".join(sorted(EXPERIMENT_NEEDS)))
    p.add_argument("--quick", action="store_true", help="two classes / a smaller grid (a smoke test)")
    p.add_argument("--jobs", type=_at_least(1), default=1,
                   help="digits and birds: classes in this many processes (same table, "
                        "other timings)")
    p.add_argument("--out", default=experiments.DEFAULT_OUT,
                   help=f"folder for the Markdown table (default: ./{experiments.DEFAULT_OUT})")
    p.set_defaults(func=_cmd_experiment)
    return parser


def main(argv=None) -> int:
    """Run one command; errors become one line on stderr (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:         # stdout closed early (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except (DataUnavailableError, ChecksumError) as exc:     # the data, not the code
        if args.debug:
            raise
        print(f"{parser.prog} {args.command}: {_one_line(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:        # noqa: BLE001 -- anything else: one line, --debug for more
        if args.debug:
            raise
        print(f"{parser.prog} {args.command}: {type(exc).__name__}: {_one_line(exc)} "
              f"(--debug shows the traceback)", file=sys.stderr)
        return 1


def _one_line(exc) -> str:
    return " ".join(str(exc).split())


if __name__ == "__main__":
    sys.exit(main())
