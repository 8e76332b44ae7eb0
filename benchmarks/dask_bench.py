"""Benchmark: one cutting-plane iteration on a Dask LocalCluster against one process.

    python -m benchmarks.dask_bench [--n 10000000] [--d 32] [--workers 2]
                                    [--partitions 2,4,8,16] [--repeats 5] [--out FILE]

Two problems over the same synthetic rows (x ~ N(0, I_d); a sample is relevant where a hidden
linear score is high), each generated chunk by chunk from its own seed, so one process and the
cluster see identical data:

* many queries: 100 documents per query, about 10 % relevant (learning to rank; the few
  queries without a relevant document are skipped, `empty="skip"`);
* one giant query: 0.05 % relevant (binary retrieval: 5,000 positives at n = 10^7).

One iteration is the cut at a fixed w near the hidden one (scores X w, exact AP inference with
``qs``, the joint feature X'c): what every iteration of a fit repeats. The working-set QP that
follows runs on the client in both cases and costs the same (milliseconds). Times are the
median and the best of ``repeats`` calls (shared machines stall now and then: the best is what
the code costs, the median what a run met); the cluster's blocks are made and persisted once
per partition count, as a fit does, and that setup is reported on its own, as is the share of
the data on the busiest worker. Each table row also gives the largest
difference between the cluster's cut and the single process's (relative to |g|).
Takes about 3 minutes at n = 10^7, d = 32 on 2 cores and needs about 8 GB of memory.
"""
from __future__ import annotations

import gc
import sys
import time
from statistics import NormalDist

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

from aprank.dask import ranking_model
from aprank.models import RankingModel
from benchmarks.cli import Parser, at_least
from benchmarks.cli import run as one_line_errors
from benchmarks.machine import machine

QUERY_SIZE = 100
GENERATED = 50_000      # rows per generation block (a multiple of QUERY_SIZE)
#: problem: (fraction relevant, grouped in queries of QUERY_SIZE)
CASES = {"many queries": (0.10, True), "one giant query": (0.0005, False)}


def make_rows(seed: int, first: int, last: int, n: int, d: int, rate: float):
    """Rows of generation blocks first ... last-1 (GENERATED rows each, each from its own seed,
    so any partitioning of the blocks gives the same data): X, labels, qid."""
    hidden = np.random.default_rng([seed, 0]).standard_normal(d)
    threshold = np.sqrt(hidden @ hidden + 1.0) * NormalDist().inv_cdf(1.0 - rate)
    X, y, qid = [], [], []
    for block in range(first, last):
        start = block * GENERATED
        rows = min(GENERATED, n - start)
        rng = np.random.default_rng([seed, 1, block])
        X.append(rng.standard_normal((rows, d)))
        y.append((X[-1] @ hidden + rng.standard_normal(rows) > threshold).astype(np.int8))
        qid.append((start + np.arange(rows)) // QUERY_SIZE)
    return np.concatenate(X), np.concatenate(y), np.concatenate(qid)


def _partitions(n: int, parts: int):
    """(first block, last block, rows) of each partition: whole generation blocks, so that no
    query straddles two partitions."""
    blocks = -(-n // GENERATED)
    cuts = np.unique(np.round(np.linspace(0, blocks, parts + 1)).astype(np.int64))
    return [(int(a), int(b), min(b * GENERATED, n) - a * GENERATED)
            for a, b in zip(cuts[:-1], cuts[1:])]


def near_hidden_w(seed: int, d: int) -> np.ndarray:
    """A w near the hidden direction (so that positives and negatives interleave)."""
    hidden = np.random.default_rng([seed, 0]).standard_normal(d)
    return hidden + 0.5 * np.random.default_rng([seed, 2]).standard_normal(d)


def one_process(n, d, rate, many, seed, w, repeats):
    X, y, qid = make_rows(seed, 0, -(-n // GENERATED), n, d, rate)
    t0 = time.perf_counter()
    model = RankingModel(X, y, "ap", qid=qid if many else None, empty="skip")
    setup = time.perf_counter() - t0
    cut = model.most_violated(w)
    return timings(lambda: model.most_violated(w), repeats), setup, cut, int(y.sum())


def timings(fn, repeats: int):
    """(median, best) wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), min(times)


def busiest_share(client: Client) -> float:
    """Fraction of the data held in the cluster that sits on its busiest worker."""
    nbytes = client.nbytes(summary=False)
    held = {}
    for key, workers in client.who_has().items():
        for worker in workers:
            held[worker] = held.get(worker, 0) + nbytes.get(key, 0)
    return max(held.values()) / max(sum(held.values()), 1) if held else 0.0


def on_cluster(client, n, d, rate, many, parts, seed, w, repeats):
    cuts = _partitions(n, parts)
    pieces = [dask.delayed(make_rows, nout=3)(seed, a, b, n, d, rate) for a, b, _ in cuts]
    X = da.concatenate([da.from_delayed(p[0], (m, d), np.float64)
                        for p, (_, _, m) in zip(pieces, cuts)])
    y = da.concatenate([da.from_delayed(p[1], (m,), np.int8) for p, (_, _, m) in zip(pieces, cuts)])
    qid = da.concatenate([da.from_delayed(p[2], (m,), np.int64)
                          for p, (_, _, m) in zip(pieces, cuts)])
    t0 = time.perf_counter()
    model = ranking_model(X, y, "ap", qid=qid if many else None, empty="skip")
    setup = time.perf_counter() - t0
    cut = model.most_violated(w)
    seconds = timings(lambda: model.most_violated(w), repeats)
    return seconds, setup, cut, cut.info.get("split_rounds"), busiest_share(client)


def run(n: int = 10_000_000, d: int = 32, workers: int = 2, partitions=(2, 4, 8, 16),
        repeats: int = 5, seed: int = 0, client=None) -> str:
    """Time the iteration (see the module docstring) and return the markdown table. Uses the
    given ``distributed.Client`` or starts a LocalCluster of ``workers`` processes."""
    w = near_hidden_w(seed, d)
    own = client is None
    if own:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    threads = [info["nthreads"] for info in client.scheduler_info()["workers"].values()]
    lines = [f"n = {n:,}, d = {d}; {len(threads)} workers, {sum(threads)} threads; "
             f"{machine()}", "",
             "| problem | where | partitions | iteration: median | best | median vs one "
             "process | setup | data on the busiest worker | max abs diff of g / abs g | "
             "split rounds |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    try:
        for case, (rate, many) in CASES.items():
            # the cluster first, so that its workers never allocate while the single process's
            # gigabytes are being handed back to the system
            rows = []
            for parts in partitions:
                rows.append((parts, *on_cluster(client, n, d, rate, many, parts, seed, w, repeats)))
                client.run(_collect)
            single, setup, ref, n_pos = one_process(n, d, rate, many, seed, w, repeats)
            lines.append(f"| {case} ({n_pos:,} relevant) | one process | - | {single[0]:.3f} s | "
                         f"{single[1]:.3f} s | 1.00 | {setup:.2f} s | - | - | - |")
            for parts, seconds, setup, cut, rounds, share in rows:
                diff = np.abs(cut.g - ref.g).max() / np.linalg.norm(ref.g)
                lines.append(f"| {case} | cluster | {parts} | {seconds[0]:.3f} s | "
                             f"{seconds[1]:.3f} s | {seconds[0] / single[0]:.2f} | {setup:.2f} s | "
                             f"{100 * share:.0f} % | {diff:.1e} | "
                             f"{'-' if rounds is None else rounds} |")
    finally:
        if own:
            client.close()
            cluster.close()
    return "\n".join(lines)


def _collect():
    # workers free the previous data set's blocks before the next one is made
    gc.collect()


def main(argv=None) -> int:
    """``python -m benchmarks.dask_bench``: errors are one line (``benchmarks.cli``)."""
    parser = Parser("python -m benchmarks.dask_bench", (
        "Time one cutting-plane iteration (scores, exact AP inference, X'c) on a Dask\n"
        "LocalCluster against one process, for many queries and for one giant query.\n"
        "Needs the dask extra (aprank[dask]) and no data; writes the table to a file only\n"
        "with --out; takes about 3 minutes and 8 GB at the defaults."))
    parser.add_argument("--n", type=at_least(GENERATED), default=10_000_000,
                        help="samples (default 1e7)")
    parser.add_argument("--d", type=at_least(1), default=32, help="features (default 32)")
    parser.add_argument("--workers", type=at_least(1), default=2,
                        help="worker processes (default 2)")
    parser.add_argument("--partitions", default="2,4,8,16",
                        help="comma-separated partition counts (default 2,4,8,16)")
    parser.add_argument("--repeats", type=at_least(1), default=5,
                        help="timed calls per cell (median and best; default 5)")
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args(argv)
    try:
        partitions = tuple(int(p) for p in args.partitions.split(","))
    except ValueError:
        parser.error(f"--partitions must be integers separated by commas, got {args.partitions!r}")
    if min(partitions) < 1 or args.n < GENERATED * max(partitions):
        parser.error(f"need every partition count >= 1 and n >= {GENERATED:,} x partitions")

    def table(args):
        text = run(args.n, args.d, args.workers, partitions, args.repeats)
        print(text)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text + "\n")
        return 0

    return one_line_errors(table, args, parser.prog)


if __name__ == "__main__":
    sys.exit(main())
