"""Command line: ``python -m aprank {algorithms,check,bench --quick}`` (``aprank ...`` once
installed).

Errors are one line on stderr: exit status 2 for a bad option (argparse's usage errors: what is
wrong, the usage of the command it was given to and where its help is), 1 for a failure while
running; ``--debug`` shows the traceback instead. ``--version`` prints the version.

The package's command line is thin: the full benchmark (``python -m benchmarks``), the
experiments (``python -m experiments NAME``) and the figures (``python -m
figures.make_figures``) are tools of the repository, run from a checkout, never installed;
``bench`` without ``--quick`` says so in one line (exit status 2), and ``--help`` names them.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import aprank
from aprank import _quick_bench, checks
from aprank.datasets import ChecksumError, DataUnavailableError


def _cmd_algorithms(args) -> int:
    print(aprank.algorithms().to_text())
    return 0


def _cmd_check(args) -> int:
    if args.deep:
        return _deep(args)
    if args.kind or args.out:
        args.parser.error("--kind and --out go with --deep")
    t0 = time.perf_counter()
    report = aprank.crosscheck(args.loss, n_trials=200 if args.n_trials is None else args.n_trials,
                               max_n=CHECK_MAX_N if args.max_n is None else args.max_n,
                               seed=args.seed)
    print(report)
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0 if report.ok else 1


def _deep(args) -> int:
    if args.loss or args.n_trials is not None:
        args.parser.error("--loss and --n-trials are the plain check's; --deep takes --kind")
    max_n = DEEP_MAX_N if args.max_n is None else args.max_n
    report = checks.deep_check(args.kind, max_n=max_n, seed=args.seed,
                               progress=sys.stderr.isatty())
    print(report)
    if args.out:
        command = " ".join(["python -m aprank check --deep", f"--max-n {max_n}"]
                           + ([f"--kind {' '.join(args.kind)}"] if args.kind else [])
                           + ([f"--seed {args.seed}"] if args.seed else []))
        with open(args.out, "w") as f:
            f.write(f"Regenerate: `{command} --out FILE`. {report.summary()}.\n\n"
                    f"{report.table()}\n")
    return 0 if report.ok else 1


#: The largest instance of the plain check and of the deep check, unless --max-n says.
CHECK_MAX_N, DEEP_MAX_N = 2000, 1_000_000


#: The full benchmark, a tool of the repository: run from a checkout, beside the package, and
#: never installed.
BENCH_COMMAND = "python -m benchmarks"


def _cmd_bench(args) -> int:
    if not args.quick:
        print(f"python -m aprank bench: the full benchmark is a repository tool: from a "
              f"checkout, run {BENCH_COMMAND} (installed, only bench --quick)", file=sys.stderr)
        return 2
    return _quick_bench.run(repeats=args.repeats, out=args.out)


DESCRIPTION = """Exact loss-augmented inference for ranking losses (average precision, NDCG,
precision@k, ...) and the structured SVMs built on it. Each command's --help says what it
needs, what it writes and how long it takes. The full benchmark (python -m benchmarks), the
experiments (python -m experiments NAME) and the figures (python -m figures.make_figures) are
tools of the repository, run from a checkout: they are not installed."""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line: what is wrong, the usage of the command that
    refused it, and where its help is."""

    def error(self, message):
        usage = " ".join(self.format_usage().split())
        self.exit(2, f"{self.prog}: error: {message}; {usage} (see {self.prog} --help)\n")


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


def program_name(argv0: str | None = None) -> str:
    """How the command was run, for the usage lines: ``aprank`` from the console script the
    install puts on the PATH, else ``python -m aprank``."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return "aprank" if name in ("aprank", "aprank.exe", "aprank-script.py") else "python -m aprank"


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``python -m aprank`` (or of the ``aprank`` console script, ``prog``
    saying which; by default from how this process was run) and its commands."""
    parser = _Parser(prog=program_name() if prog is None else prog, description=DESCRIPTION)
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error instead of one line")
    parser.add_argument("--version", action="version", version=f"aprank {aprank.__version__}")
    debug = argparse.ArgumentParser(add_help=False)        # --debug after the command too
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the full traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, summary, details):
        p = sub.add_parser(name, parents=[debug], help=summary,
                           description=f"{summary[0].upper()}{summary[1:]}.\n{details}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        # main() reports an unknown option with the usage of the command it was given to
        p.set_defaults(parser=p)
        return p

    p = command("algorithms", "print the registry of inference algorithms",
                "Every algorithm with its kind, losses, exactness and complexity.\n"
                "Needs nothing; writes nothing; takes under a second.")
    p.set_defaults(func=_cmd_algorithms)

    p = command("check", "cross-check the algorithms of each loss",
                "Every algorithm against its kind's oracle and the others on seeded\n"
                "random instances; exit status 1 if any disagree.\n"
                "Needs no data; writes nothing; takes about 15 s with the defaults on an\n"
                "idle machine (13-15 s of CPU time measured on a 2-core AMD EPYC; more\n"
                "wall time under load; time grows with --n-trials and --max-n).\n"
                "--deep: every algorithm against a slower exact one of the zoo up to\n"
                f"--max-n samples (default {DEEP_MAX_N}), on instances built to cross every\n"
                "switch of the fast paths, and the relations that must hold (a constant\n"
                "added to the scores, permutations, a problem split or duplicated); prints\n"
                "a table per algorithm, path and relation and a reproducer per\n"
                "disagreement. Takes minutes (a progress bar on a terminal); --out FILE\n"
                "also writes the table.")
    p.add_argument("--deep", action="store_true",
                   help="the deep check (minutes): switches, sizes and relations")
    p.add_argument("--n-trials", type=_at_least(1), default=None,
                   help="random instances per loss (at least 1; default 200)")
    p.add_argument("--max-n", type=_at_least(2), default=None,
                   help=f"largest instance size (at least 2: a positive and a negative; "
                   f"default {CHECK_MAX_N}, with --deep {DEEP_MAX_N})")
    p.add_argument("--kind", nargs="+", default=None,
                   choices=[k.name for k in aprank.kinds()], metavar="KIND",
                   help="with --deep: the problem kinds to check, among "
                   + ", ".join(k.name for k in aprank.kinds()) + " (default: every kind)")
    p.add_argument("--out", help="with --deep: also write the table (Markdown) to this file")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--loss", nargs="+", default=None, choices=sorted(aprank.losses.LOSSES),
                   metavar="LOSS",      # the usage in an error line stays short
                   help="losses to check, among " + ", ".join(sorted(aprank.losses.LOSSES))
                   + " (default: every registered loss)")
    p.set_defaults(func=_cmd_check)

    p = command("bench", "time every algorithm against numpy.argsort (--quick)",
                "A cross-check of every algorithm, then each timed against numpy.argsort on\n"
                "two small cells (P, N = 1e2, 1e4 and 1e3, 1e5) in two score regimes.\n"
                "Needs no data; writes the table to a file only with --out; takes about 40 s\n"
                "on an idle machine (35 s of CPU time measured on a 2-core AMD EPYC; more\n"
                "wall time under load). Only --quick is installed: the full benchmark and its\n"
                f"sections (--cstar, --pairwise, --latent, --fit, ...) are a repository tool, run\n"
                f"from a checkout as {BENCH_COMMAND} (see {BENCH_COMMAND} --help).")
    p.add_argument("--quick", action="store_true",
                   help="the cross-check and the small cells (required: the full run is "
                   f"{BENCH_COMMAND})")
    p.add_argument("--repeats", type=_at_least(1), default=5,
                   help="timed runs per cell, the median is reported (at least 1; default 5)")
    p.add_argument("--out", help="also write the table to this file")
    p.set_defaults(func=_cmd_bench)
    return parser


def main(argv=None) -> int:
    """Run one command; errors become one line on stderr (see the module docstring)."""
    parser = build_parser()
    # parse_known_args so that an unknown option is refused by the command it was given to
    # (its usage, its --help), not by the top-level parser
    args, extras = parser.parse_known_args(argv)
    if extras and args.command == "bench":      # tell the full benchmark's options where they went
        args.parser.error(f"unrecognized arguments: {' '.join(extras)}; installed, bench takes "
                          f"--quick, --repeats and --out only: the full benchmark and its "
                          f"sections are {BENCH_COMMAND}, from a checkout")
    elif extras:
        args.parser.error(f"unrecognized arguments: {' '.join(extras)}")
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
