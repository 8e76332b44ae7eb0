"""Command line: ``python -m aprank {bench,check,algorithms,experiment}``.

With PyTorch installed (``aprank[torch]``) it also offers ``bench --torch`` and
``experiment torch-mlp``.

The figures are made by the repository's scripts (``python figures/make_figures.py``), which
the package does not load.
"""
from __future__ import annotations

import argparse
import sys
import time

import aprank
from aprank import bench, experiments

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
    if args.iteration:
        return _iteration(args)
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
    print(f"Timing (median of up to {args.repeats} runs; AVX-512 partition "
          f"{'on' if aprank.simd_active() else 'off'}):")
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
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n" + gil + "\n\n" + latent + "\n")
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
          f"AVX-512 partition {'on' if aprank.simd_active() else 'off'}):")
    print(f"  inference {r['inference'] * 1e3:8.1f} ms")
    print(f"  QP        {r['qp'] * 1e3:8.1f} ms")
    print(f"  the rest  {r['rest'] * 1e3:8.1f} ms  ({r['rest'] / r['inference']:.2f} x inference; "
          "products X w and X'c included)")
    print(f"  building the model once: {r['setup'] * 1e3:.1f} ms")
    return 0


def _torch_bench(args) -> int:
    if torch_tools is None:
        print("bench --torch needs PyTorch: pip install 'aprank[torch]'", file=sys.stderr)
        return 2
    print(f"AP hinge, forward + backward, against torch.sort of the same tensor "
          f"({torch_tools.describe_devices()}; AVX-512 partition "
          f"{'on' if aprank.simd_active() else 'off'}):")
    table = torch_tools.format_bench(torch_tools.bench(repeats=args.repeats))
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    return 0


def _cmd_experiment(args) -> int:
    if args.name not in EXPERIMENTS:
        print(f"experiment {args.name!r} needs PyTorch: pip install 'aprank[torch]'", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    path = experiments.write_table(args.name, EXPERIMENTS[args.name](quick=args.quick), args.out,
                                   quick=args.quick)
    print(path.read_text())
    print(f"written to {path} ({time.perf_counter() - t0:.0f} s)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aprank", description=aprank.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("algorithms", help="print the algorithm registry")
    p.set_defaults(func=_cmd_algorithms)

    p = sub.add_parser("check", help="cross-check the exact algorithms of each loss")
    p.add_argument("--n-trials", type=int, default=200)
    p.add_argument("--max-n", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--loss", nargs="+", default=None, choices=sorted(aprank.losses.LOSSES),
                   help="losses to check (default: every registered loss)")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("bench", help="time every algorithm against numpy.argsort")
    p.add_argument("--quick", action="store_true", help="small cells, after a quick cross-check")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--max-seconds", type=float, default=60.0,
                   help="skip cells predicted to take longer than this")
    p.add_argument("--out", help="also write the table to this file")
    p.add_argument("-v", "--verbose", action="store_true", help="print each timing as it is made")
    p.add_argument("--iteration", action="store_true",
                   help="only split one cutting-plane iteration into inference, QP and the rest")
    p.add_argument("--n", type=int, default=1_000_000, help="samples for --iteration")
    p.add_argument("--n-queries", type=int, default=1000, help="queries for --iteration")
    p.add_argument("--d", type=int, default=16, help="features for --iteration")
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
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("experiment", help="run an experiment on real data and write its table")
    p.add_argument("name", choices=sorted(experiments.EXPERIMENTS) + ["torch-mlp"])
    p.add_argument("--quick", action="store_true", help="two classes / a smaller grid (a smoke test)")
    p.add_argument("--out", default="figures/tables", help="folder for the Markdown table")
    p.set_defaults(func=_cmd_experiment)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
