"""``python -m benchmarks``: time every registered algorithm against ``numpy.argsort``.

For each cell (P, N) and score regime, every algorithm of the registry is run on the same
instance; the table reports the median time, its ratio to ``numpy.argsort`` of the negatives'
scores measured in the same run, and the peak extra memory of one call (traced with
``tracemalloc``, which sees NumPy's allocations; in units of 8N bytes). A cell an algorithm is
predicted to need more than ``max_seconds`` for (from its registry cost model and its time in
the previous cell) is skipped with a note; a call slower than TRACE_UP_TO seconds is timed but
not traced for memory (noted). Algorithms are grouped by (problem kind, loss), as the
registry declares them. A last line reports how well two threads calling ``infer`` at N = 1e6
overlap (the kernels release the GIL).

:func:`iteration_overhead` times one cutting-plane iteration of a real fit and splits it into
inference, QP and everything else (products with X included).

:func:`pairwise_scaling` times every max-marginal of samples linked in groups shaped like the
HJA birdsong recordings (``python -m benchmarks --pairwise``): compiled enumeration plus
dynamic cuts, dynamic cuts alone, and 2n cuts from scratch; :func:`enumeration_crossover` finds
the component size where enumeration stops paying.

:func:`latent_scaling` times the most violated constraint of the latent learners (``python -m
benchmarks --latent``, and a section of the full run): the latent kind ranks bags, so its cells count
bags (hundreds), not samples (millions), and it has none in the main table.

:func:`many_query_inference` times ``infer_batch`` (its default algorithm and "auto") and a
loop of ``infer`` over many equal small queries, qid sorted or shuffled, against a loop of
``numpy.argsort`` over each query's negatives, and :func:`single_call` one ``infer`` call at
n = 20 against one ``numpy.argsort`` (the targets: 2 x and 10 x).

:func:`partition_paths` times the fastest exact AP algorithms at P = 1e3, N = 1e6 on every
partition path this CPU runs against ``np.sort`` of the negatives (values only);
:func:`partition_paths_without_numpy_avx512` repeats it in a process whose NumPy has its AVX-512
sort dispatch disabled, which is how a machine with AVX2 only sorts.

:func:`many_query_metrics` times ``aprank.metrics.average_precision`` and ``ndcg`` over many
small queries (1e6 samples in 4e5 queries) against ``aprank.infer_batch`` on the same input.
"""
from __future__ import annotations

import threading
import time
import tracemalloc
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from aprank.checks import bench_instance, solve_instance
from aprank.datasets import load_hja_birdsong
from aprank.inference import (SIMD_LEVELS, LatentProblem, PairwiseGraph, PairwiseProblem,
                              RankingProblem, SlowAlgorithmWarning, TopKProblem, algorithms,
                              get_algorithm, infer, infer_batch, kinds, max_marginals, set_simd,
                              simd_level)
from aprank.learn import cutting_plane
from aprank.losses import PrecisionAtK
from aprank.metrics import average_precision, ndcg
from aprank.models import RankingModel
from benchmarks.machine import machine

FULL_CELLS = ((100, 10_000), (1_000, 100_000), (1_000, 1_000_000), (10_000, 1_000_000),
              (100, 10_000_000))
REGIMES = {"overlapping": 1.0, "separated": 6.0}
#: Kinds benched in a section of their own, in cells of their size (see latent_scaling).
OWN_SECTION = ("latent",)
TRACE_UP_TO = 2.0     # seconds: slower calls are timed, not traced for memory   # positives ~ N(shift, 1), negatives ~ N(0, 1)


def make_scores(n_pos: int, n_neg: int, shift: float, seed: int = 0):
    """Shuffled scores and boolean labels: positives ~ N(shift, 1), negatives ~ N(0, 1) (the
    ranking kind's benchmark instance)."""
    instance = bench_instance("ranking", n_pos, n_neg, shift, seed)
    return instance.scores, instance.labels


def median_time(fn, repeats: int, budget: float) -> float:
    """Median wall time of up to ``repeats`` calls of ``fn()``, stopping once ``budget``
    seconds have been spent."""
    times = []
    start = time.perf_counter()
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget:
            break
    return float(np.median(times))


@dataclass
class Row:
    regime: str
    kind: str
    P: int
    N: int
    loss: str
    algorithm: str
    seconds: float | None
    ratio: float | None
    memory: float | None      # peak extra bytes / (8 N)
    note: str = ""


def round_robin(calls: dict, repeats: int, clock=time.perf_counter) -> dict:
    """{name: the ``repeats`` times of ``calls[name]()``}, the calls taken in turn, round after
    round, so that a load change on a shared machine hits every call alike. ``clock``:
    ``time.process_time`` where every call is single-threaded and the waits of a shared
    machine should not count."""
    if repeats < 1:
        raise ValueError(f"repeats={repeats!r} must be >= 1: a median needs a time")
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            t0 = clock()
            call()
            times[name].append(clock() - t0)
    return times


def _peak_memory(fn) -> int:
    """Peak extra bytes of one call. The call runs on a fresh thread: the compiled driver keeps
    each thread's scratch arrays between calls, and those count as the call's memory."""
    raised = []

    def run():
        try:
            fn()
        except BaseException as e:      # re-raised in the caller's thread below
            raised.append(e)

    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    if raised:
        raise raised[0]
    return peak


def bench(cells=FULL_CELLS, regimes=REGIMES, repeats: int = 5, max_seconds: float = 60.0,
          log=print) -> list[Row]:
    """Run the benchmark and return its rows (``log`` receives progress lines)."""
    # every algorithm runs on purpose, the slow ones too: their cells are skipped by the same
    # cost models that warn, so the warning would only repeat what the table shows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SlowAlgorithmWarning)
        return _bench(cells, regimes, repeats, max_seconds, log)


def _bench(cells, regimes, repeats, max_seconds, log) -> list[Row]:
    rows = []
    for regime, shift in regimes.items():
        previous = {}       # (loss, algorithm) -> (P, N, seconds) of the last cell run
        for P, N in cells:
            scores, labels = make_scores(P, N, shift)
            negatives = scores[~labels]
            t_sort = median_time(lambda: np.argsort(negatives), repeats, 10.0)
            rows.append(Row(regime, "-", P, N, "-", "numpy.argsort", t_sort, 1.0, None))
            for kind in kinds():
                if kind.name in OWN_SECTION:
                    continue
                # each kind makes its own instance of the cell, and solves it its own way
                instance = None        # made when the first algorithm runs (all may be skipped)
                for loss, algo in ((loss, a) for loss in kind.losses()
                                   for a in algorithms(loss=loss)):
                    key = (loss, algo.name)
                    if algo.max_samples is not None and P + N > algo.max_samples:
                        continue      # the oracles: only for tiny inputs
                    if key in previous and algo.cost is not None:
                        p0, n0, t0 = previous[key]
                        predicted = t0 * algo.cost(P, N) / algo.cost(p0, n0)
                        if predicted > max_seconds:
                            rows.append(Row(regime, kind.name, P, N, loss, algo.name, None, None,
                                            None, f"skipped: predicted {predicted:.0f} s > "
                                            f"{max_seconds:.0f} s"))
                            continue

                    if instance is None:
                        instance = bench_instance(kind.name, P, N, shift)

                    def call(instance=instance, loss=loss, algo=algo):
                        return solve_instance(instance, loss, algo.name)

                    seconds = median_time(call, repeats, 10.0)
                    previous[key] = (P, N, seconds)
                    # memory from one more, traced call; not for a slow one: tracemalloc hooks
                    # every allocation, which slows Python-level code (graph cuts) several times
                    traced = seconds <= TRACE_UP_TO
                    memory = _peak_memory(call) / (8.0 * N) if traced else None
                    rows.append(Row(regime, kind.name, P, N, loss, algo.name, seconds,
                                    seconds / t_sort, memory,
                                    "" if traced else "memory not traced (slow call)"))
                    log(f"  {regime:11s} P={P:<6d} N={N:<9d} {loss:8s} {algo.name:12s} "
                        f"{seconds * 1e3:10.2f} ms  {seconds / t_sort:7.2f} x argsort")
    return rows


def gil_overlap(n_pos: int = 1_000, n_neg: int = 1_000_000, algorithm: str = "qs",
                repeats: int = 5) -> tuple[float, float, float]:
    """(sequential seconds, threaded seconds, ratio) for two ``infer`` calls at this size."""
    scores, labels = make_scores(n_pos, n_neg, REGIMES["overlapping"])

    def one():
        infer(scores, labels, algorithm=algorithm)

    def two_sequential():
        one()
        one()

    def two_threads():
        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    one()
    seq = median_time(two_sequential, repeats, 20.0)
    par = median_time(two_threads, repeats, 20.0)
    return seq, par, par / seq


def format_table(rows: list[Row]) -> str:
    """Markdown table of the rows."""
    out = ["| regime | P | N | loss | algorithm | median time | x argsort | peak extra memory (x 8N bytes) |",
           "|---|---:|---:|---|---|---:|---:|---:|"]
    for r in rows:
        if r.seconds is None:
            out.append(f"| {r.regime} | {r.P:g} | {r.N:g} | {r.loss} | {r.algorithm} | {r.note} | | |")
            continue
        mem = f"{r.memory:.2f}" if r.memory is not None else ("not traced" if r.note else "")
        out.append(f"| {r.regime} | {r.P:g} | {r.N:g} | {r.loss} | {r.algorithm} | "
                   f"{_fmt_seconds(r.seconds)} | {r.ratio:.2f} | {mem} |")
    return "\n".join(out)


def _fmt_seconds(s: float) -> str:
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def make_queries(n: int, n_queries: int, d: int, seed: int = 0):
    """(X, y, qid): n samples with d Gaussian features in ``n_queries`` interleaved queries
    (each sample's query drawn at random), about 10% relevant with every query holding one."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    qid = rng.integers(0, n_queries, n)
    y = rng.random(n) < 0.1
    y[:n_queries] = True
    qid[:n_queries] = np.arange(n_queries)
    return X, y, qid


def iteration_overhead(n: int = 1_000_000, n_queries: int = 1000, d: int = 16,
                       iterations: int = 8, algorithm: str = "qs") -> dict:
    """Split a cutting-plane iteration of an AP-SVM fit on :func:`make_queries` data into
    loss-augmented inference, the working-set QP and the rest (the products X w and X'c, the
    constraint's assembly, bookkeeping). Medians over iterations 2 ... ``iterations`` (the first
    scores every sample 0). Also returns the one-off time to build the model."""
    X, y, qid = make_queries(n, n_queries, d)
    t0 = time.perf_counter()
    model = RankingModel(X, y, loss="ap", qid=qid, algorithm=algorithm)
    setup = time.perf_counter() - t0
    stamps = []
    result = cutting_plane(model, 1.0, tol=1e-12, max_iter=iterations,
                           callback=lambda info: stamps.append(time.perf_counter()))
    h = result.history
    # from one callback to the next: the QP of iteration i, then iteration i+1 up to its callback
    walls = np.diff(stamps)
    inference = np.array([x["inference_seconds"] for x in h[1:len(stamps)]])
    qp = np.array([x["qp_seconds"] for x in h[:len(stamps) - 1]])
    rest = walls - inference - qp
    return {"n": n, "n_queries": n_queries, "d": d, "algorithm": algorithm, "setup": setup,
            "inference": float(np.median(inference)), "qp": float(np.median(qp)),
            "rest": float(np.median(rest)), "iterations": len(h)}


#: Core sizes and query sizes of the c-star scaling (Mensink et al. 2011: O(2^C (N + k log k))).
CSTAR_CORES = (0, 2, 5, 8)
CSTAR_SIZES = (10_000, 100_000, 1_000_000)


def cstar_scaling(sizes=CSTAR_SIZES, cores=CSTAR_CORES, k: int = 100, repeats: int = 5,
                  seed: int = 0):
    """Time the c-star maximisation (no loss term) of one query of N items, k = ``k``, for each
    core size C: rows (C, N, seconds, seconds / numpy.argsort of the same scores), and per C the
    fitted slope of log time against log N. Interactions are random on the core's rows."""
    rows = []
    rng = np.random.default_rng(seed)
    for N in sizes:
        scores = rng.standard_normal(N)
        t_sort = median_time(lambda: np.argsort(scores), repeats, 10.0)
        for C in cores:
            core = np.sort(rng.choice(N, C, replace=False))
            F = sp.csr_matrix((rng.standard_normal(C * N), (np.repeat(core, N), np.tile(np.arange(N), C))),
                              shape=(N, N)) if C else None
            problem = TopKProblem(np.ones(N, bool), PrecisionAtK(k), interactions=F,
                                  core=core if C else None)
            seconds = median_time(lambda: problem.maximise(scores), repeats, 10.0)
            rows.append((C, N, seconds, seconds / t_sort))
    slopes = {C: float(np.polyfit(np.log([r[1] for r in rows if r[0] == C]),
                                  np.log([r[2] for r in rows if r[0] == C]), 1)[0])
              for C in cores} if len(sizes) > 1 else {}
    return rows, slopes


def format_cstar(rows, slopes) -> str:
    out = ["| core C | N | c-star (ms) | per core state (ms) | x numpy.argsort |",
           "|---:|---:|---:|---:|---:|"]
    for C, N, seconds, ratio in rows:
        out.append(f"| {C} | {N:.0e} | {seconds * 1e3:.2f} | {seconds * 1e3 / 2 ** C:.3f} | "
                   f"{ratio:.2f} |")
    out.append("")
    out.append("Slope of log time against log N: " + ", ".join(
        f"C = {C}: {s:.2f}" for C, s in slopes.items()))
    return "\n".join(out)


#: Sizes of the max-marginal benchmark (issue: n = 1e4 and 1e5 with the birdsong groups).
PAIRWISE_SIZES = (10_000, 100_000)
PAIRWISE_ALGORITHMS = ("graphcut", "graphcut-dynamic", "graphcut-static")


def birdsong_group_sizes():
    """(sizes, source): the number of labelled segments of each HJA birdsong recording, or,
    without the data, groups of 9 (its median) and a note saying so."""
    try:
        data = load_hja_birdsong()
    except FileNotFoundError:
        return np.array([9]), "groups of 9 samples (HJA birdsong data not found; its median)"
    sizes = np.unique(data.recording, return_counts=True)[1]
    return sizes, (f"group sizes resampled from the {sizes.size} HJA birdsong recordings "
                   f"(median {np.median(sizes):g}, max {sizes.max()} segments)")


def _grouped(n: int, sizes: np.ndarray, seed: int):
    """A problem of n samples (10% positive) in groups drawn from ``sizes``, every pair within a
    group linked: (problem, scores)."""
    rng = np.random.default_rng(seed)
    groups = rng.choice(sizes, size=2 * n // max(1, int(sizes.min())) + 1)
    groups = groups[: int(np.searchsorted(np.cumsum(groups), n)) + 1]
    groups[-1] -= int(groups.sum()) - n
    instance = bench_instance("pairwise", n // 10, n - n // 10, 1.0, seed, sizes=groups)
    problem = PairwiseProblem(instance.labels, edges=instance.edges,
                              edge_scores=instance.edge_scores)
    return problem, instance.scores


def pairwise_scaling(sizes=PAIRWISE_SIZES, algorithms=PAIRWISE_ALGORITHMS, repeats: int = 3,
                     seed: int = 0):
    """Time every max-marginal (loss-augmented, the labelling included) of n samples linked in
    birdsong-shaped groups: rows (n, pairs, algorithm, seconds, seconds / numpy.argsort of the
    scores), and the groups' source."""
    group_sizes, source = birdsong_group_sizes()
    rows = []
    for n in sizes:
        problem, scores = _grouped(n, group_sizes, seed)
        t_sort = median_time(lambda: np.argsort(scores), repeats, 10.0)
        for name in algorithms:
            seconds = median_time(lambda: problem.solve(scores, algorithm=name), repeats, 30.0)
            rows.append((n, problem.graph.n_edges, name, seconds, seconds / t_sort))
    return rows, source


def enumeration_crossover(ks=(2, 3, 4, 6, 8, 10, 12, 14), n: int = 6_000, repeats: int = 3,
                          seed: int = 0):
    """Per component size k (every group a clique of k): microseconds per sample of all
    max-marginals by compiled enumeration, by the dense cuts of ``graphcut`` (no enumeration)
    and by dynamic cuts alone (``graphcut-dynamic``)."""
    rows = []
    for k in ks:
        problem, scores = _grouped(n - n % k, np.array([k]), seed)

        def timed(**how):
            return median_time(lambda: max_marginals(scores, edge_scores=problem.edge_scores,
                                                     graph=problem.graph, **how),
                               repeats, 10.0) * 1e6 / problem.n_samples

        rows.append((k, timed(enumerate_up_to=k), timed(enumerate_up_to=0),
                     timed(algorithm="graphcut-dynamic")))
    return rows


#: Sizes of the single-component benchmark: kNN components of n samples, each linked to its
#: COMPONENT_NEIGHBOURS nearest (n x 10 pairs), pair scores -|N(0, 1)| x COMPONENT_PAIR_SCALE.
COMPONENT_SIZES = (1_000, 2_000, 4_000, 10_000)
COMPONENT_NEIGHBOURS, COMPONENT_PAIR_SCALE = 10, 0.5
COMPONENT_ALGORITHMS = ("graphcut", "graphcut-dynamic")


def knn_component(n: int, neighbours: int = COMPONENT_NEIGHBOURS,
                  pair_scale: float = COMPONENT_PAIR_SCALE, seed: int = 0):
    """One connected component: n points in the plane, each paired with its ``neighbours``
    nearest (n x neighbours pairs; a mutual pair is listed twice, its score counted twice), unary
    scores N(0, 1), pair scores -|N(0, 1)| x ``pair_scale`` (strong: most of the component takes
    one label, so a clamp's flow comes from far): (scores, edges, pair scores)."""
    from scipy.spatial import cKDTree
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 2))
    _, idx = cKDTree(x).query(x, neighbours + 1)
    edges = np.column_stack([np.repeat(np.arange(n), neighbours), idx[:, 1:].ravel()])
    return (rng.standard_normal(n), edges.astype(np.int64),
            -pair_scale * np.abs(rng.standard_normal(edges.shape[0])))


def component_scaling(sizes=COMPONENT_SIZES, algorithms=COMPONENT_ALGORITHMS, repeats: int = 3,
                      seed: int = 0):
    """Time every max-marginal of one kNN component (:func:`knn_component`) against its size:
    rows (n, pairs, algorithm, seconds, CPU seconds), medians of up to ``repeats`` calls (calls
    over 30 s run once). The CPU time is this process's: on a machine shared with other work it
    shows what the wall time would be alone."""
    rows = []
    for n in sizes:
        s, edges, c = knn_component(n, seed=seed)
        graph = PairwiseGraph(n, edges)
        for name in algorithms:
            wall, cpu = [], []
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")     # the cost model's warning, not a result
                for _ in range(repeats):
                    t0, c0 = time.perf_counter(), time.process_time()
                    max_marginals(s, edge_scores=c, graph=graph, algorithm=name)
                    wall.append(time.perf_counter() - t0)
                    cpu.append(time.process_time() - c0)
                    if time.perf_counter() - start > 30.0:
                        break
            rows.append((n, edges.shape[0], name, float(np.median(wall)), float(np.median(cpu))))
    return rows


def format_pairwise(rows, source, crossover, component=(), load=None) -> str:
    out = [f"All max-marginals of n samples (10% positive, loss-augmented), {source}, every pair "
           "of a group linked:", "",
           "| n | pairs | algorithm | time (ms) | us per sample | x numpy.argsort | "
           "graphcut-static / this |", "|---:|---:|---|---:|---:|---:|---:|"]
    static = {r[0]: r[3] for r in rows if r[2] == "graphcut-static"}
    for n, m, name, seconds, ratio in rows:
        vs = f"{static[n] / seconds:.1f}" if n in static else "-"
        # a decimal where the ratio is near the 20 x, so that rounding cannot meet it
        times = f"{ratio:.1f}" if ratio < 100 else f"{ratio:.0f}"
        out.append(f"| {n:.0e} | {m} | {name} | {seconds * 1e3:.1f} | {seconds * 1e6 / n:.2f} | "
                   f"{times} | {vs} |")
    out += ["", "Per component size k (cliques), us per sample: compiled enumeration, the dense "
            "cuts of `graphcut` (`enumerate_up_to=0`) and dynamic cuts alone "
            "(`graphcut-dynamic`):", "",
            "| k | enumeration | dense cuts | dynamic cuts |", "|---:|---:|---:|---:|"]
    out += [f"| {k} | {e:.2f} | {d:.2f} | {g:.2f} |" for k, e, d, g in crossover]
    if component:
        dynamic = {r[0]: r[3] for r in component if r[2] == "graphcut-dynamic"}
        out += ["", f"One connected component: n points in the plane, each paired with its "
                f"{COMPONENT_NEIGHBOURS} nearest (n x {COMPONENT_NEIGHBOURS} pairs), unary "
                f"scores N(0, 1), pair scores -|N(0, 1)| x {COMPONENT_PAIR_SCALE} (strong: "
                "nearly every sample takes label 1); every max-marginal, not loss-augmented:", "",
                "| n | pairs | algorithm | time (s) | CPU time (s) | us per sample | "
                "graphcut-dynamic / this |", "|---:|---:|---|---:|---:|---:|---:|"]
        for n, m, name, seconds, cpu in component:
            vs = f"{dynamic[n] / seconds:.1f}" if n in dynamic else "-"
            out.append(f"| {n} | {m} | {name} | {seconds:.3f} | {cpu:.3f} | "
                       f"{seconds * 1e6 / n:.1f} | {vs} |")
    if load is not None:
        out += ["", f"Load average (1 minute) at the start and the end of the run: {load[0]:.2f}, "
                f"{load[1]:.2f} (other processes shared the machine's cores)."]
    return "\n".join(out)


#: Cells of the latent kind's benchmark: (positive bags, negative bags), 4 rows per bag.
LATENT_CELLS = ((25, 100), (50, 200), (100, 400), (200, 800), (400, 1600))
LATENT_ALGORITHMS = (("latent-ap", "latent-ap"), ("latent-ssvm", "latent-greedy"))


def latent_scaling(cells=LATENT_CELLS, repeats: int = 3, max_seconds: float = 60.0, seed: int = 0):
    """Time the most violated constraint of each latent learner on the latent kind's benchmark
    bags (P positive, N negative, 4 rows each, one witness row per positive bag shifted by 1):
    latent AP-SVM (``latent-ap``), latent SSVM (``latent-greedy``) and the latent binary SVM
    (weighted 0-1 inference over the imputed positive rows and every negative row). Rows
    (P, N, method, seconds or None, note); a cell predicted (by the registry's cost model from
    the previous cell) to exceed ``max_seconds`` is skipped with a note."""
    rows, previous = [], {}
    for P, N in cells:
        instance = bench_instance("latent", P, N, 1.0, seed)
        for loss, name in LATENT_ALGORITHMS:
            algo = get_algorithm(name, "latent")
            if name in previous:
                p0, n0, t0 = previous[name]
                predicted = t0 * algo.cost(P, N) / algo.cost(p0, n0)
                if predicted > max_seconds:
                    rows.append((P, N, name, None, f"skipped: predicted {predicted:.0f} s"))
                    continue
            problem = LatentProblem(instance.labels, loss, bags=instance.bags)
            seconds = median_time(lambda: problem.solve(instance.scores, name), repeats, 30.0)
            previous[name] = (P, N, seconds)
            rows.append((P, N, name, seconds, ""))
        # latent SVM: the imputed positive rows against every row of the negative bags
        problem = LatentProblem(instance.labels, "latent-ap", bags=instance.bags)
        negatives = np.flatnonzero(~instance.labels)
        labelling = RankingProblem(np.r_[np.ones(P, bool), np.zeros(negatives.size, bool)],
                                   "zero-one")

        def binary(negatives=negatives, labelling=labelling, problem=problem):
            rows_pos = problem.impute(instance.scores)[problem.bags.is_pos]
            return labelling.solve(instance.scores[np.r_[rows_pos, negatives]], "zero-one")

        rows.append((P, N, "latent SVM (zero-one)", median_time(binary, repeats, 30.0), ""))
    return rows


def format_latent(rows) -> str:
    out = ["Most violated constraint per latent learner, P positive and N negative bags of 4 rows "
           "(median time; x latent-ap in the same cell):", "",
           "| P | N | method | time | x latent-ap |", "|---:|---:|---|---:|---:|"]
    ap = {(r[0], r[1]): r[3] for r in rows if r[2] == "latent-ap"}
    for P, N, name, seconds, note in rows:
        if seconds is None:
            out.append(f"| {P} | {N} | {name} | {note} | |")
            continue
        out.append(f"| {P} | {N} | {name} | {_fmt_seconds(seconds)} | {seconds / ap[(P, N)]:.2g} |")
    return "\n".join(out)


#: Size of the many-query metrics benchmark: samples, queries.
METRIC_SAMPLES, METRIC_QUERIES = 1_000_000, 400_000
#: What is timed there, each on the same (scores, labels, qid); the first is the yardstick.
METRIC_CALLS = {
    "aprank.infer_batch (loss='ap')": lambda s, y, q: infer_batch(s, y, q, loss="ap"),
    "average_precision": lambda s, y, q: average_precision(y, s, qid=q),
    "ndcg": lambda s, y, q: ndcg(y, s, qid=q),
}


def many_queries(n: int = METRIC_SAMPLES, n_queries: int = METRIC_QUERIES, seed: int = 0):
    """(scores, labels, qid): n samples in ``n_queries`` interleaved queries of random sizes
    (each sample's query drawn uniformly, so sizes are about Poisson(n / n_queries), at least 1),
    every query with one relevant sample and about 10% of the rest relevant; relevant scores
    ~ N(1, 1), the others ~ N(0, 1), rounded to 1e-3 so that ties occur as in real scores."""
    rng = np.random.default_rng(seed)
    qid = rng.integers(0, n_queries, n)
    qid[:n_queries] = np.arange(n_queries)
    labels = rng.random(n) < 0.1
    labels[:n_queries] = True
    scores = np.round(rng.standard_normal(n) + labels, 3)
    return scores, labels, qid


def many_query_metrics(n: int = METRIC_SAMPLES, n_queries: int = METRIC_QUERIES,
                       repeats: int = 3, seed: int = 0):
    """Time every call of METRIC_CALLS ``repeats`` times on :func:`many_queries`, its queries
    interleaved (as drawn) and contiguous (the same samples sorted by query): rows (layout,
    call, median seconds, that / infer_batch's median in the same layout)."""
    scores, labels, qid = many_queries(n, n_queries, seed)
    by_query = np.argsort(qid, kind="stable")
    layouts = {"interleaved": (scores, labels, qid),
               "contiguous": (scores[by_query], labels[by_query], qid[by_query])}
    rows = []
    for layout, data in layouts.items():
        times = round_robin({name: (lambda call=call: call(*data))
                             for name, call in METRIC_CALLS.items()}, repeats)
        medians = {name: float(np.median(t)) for name, t in times.items()}
        yardstick = next(iter(medians.values()))
        rows += [(layout, name, seconds, seconds / yardstick) for name, seconds in medians.items()]
    return rows


def format_many_query_metrics(rows, n: int = METRIC_SAMPLES,
                              n_queries: int = METRIC_QUERIES) -> str:
    out = [f"Metrics over many queries: {n:.0e} samples in {n_queries:.0e} queries of random "
           "sizes, qid interleaved or contiguous (median time; x aprank.infer_batch on the same "
           "input, same run):", "",
           "| qid | call | median time | x infer_batch |", "|---|---|---:|---:|"]
    out += [f"| {layout} | {name} | {_fmt_seconds(seconds)} | {ratio:.2f} |"
            for layout, name, seconds, ratio in rows]
    return "\n".join(out)


#: The many-query section: (documents per query, queries); the quick run
#: takes a fifth of the queries.
MANY_QUERY_SIZES = ((20, 10_000), (100, 10_000), (1000, 2_000))
#: The target: infer_batch within this many times a Python loop of numpy.argsort over each
#: query's negatives; a single infer call at n = 20 within SINGLE_TARGET times one argsort.
BATCH_TARGET, SINGLE_TARGET = 2.0, 10.0


def equal_queries(docs: int, n_queries: int, shuffled: bool, seed: int = 0):
    """(scores, labels, qid): ``n_queries`` queries of ``docs`` documents, about 10% relevant
    and at least one per query, relevant scores ~ N(1, 1), the others ~ N(0, 1); qid sorted
    (each query one block) or the samples shuffled."""
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), docs)
    labels = rng.random(qid.size) < 0.1
    labels[::docs] = True
    scores = rng.standard_normal(qid.size) + labels
    if shuffled:
        p = rng.permutation(qid.size)
        qid, labels, scores = qid[p], labels[p], scores[p]
    return scores, labels, qid


def many_query_inference(sizes=MANY_QUERY_SIZES, repeats: int = 5, seed: int = 0):
    """Time loss-augmented inference (AP) over many equal queries against a Python loop of
    ``numpy.argsort`` over each query's negatives (the same queries, split beforehand).

    CPU time (``time.process_time``: every call is single-threaded, and CPU time does not count
    the waits of a shared machine). Per size and qid layout (sorted, shuffled), round robin over
    ``repeats`` (medians):
    ``infer_batch`` with the default algorithm and with "auto", and (sorted layout only; it
    does not see the layout) a Python loop of ``infer`` over the queries. Rows (docs, queries,
    layout, call, seconds per query, ratio to the argsort loop). Also returns the single-call
    row: (infer seconds, argsort seconds, ratio) for one query of 20 samples."""
    rows = []
    for docs, n_queries in sizes:
        for layout in ("sorted", "shuffled"):
            scores, labels, qid = equal_queries(docs, n_queries, layout == "shuffled", seed)
            groups = np.split(np.argsort(qid, kind="stable"), n_queries)
            negatives = [scores[g][~labels[g]] for g in groups]
            calls = {
                "numpy.argsort loop": lambda: [np.argsort(s) for s in negatives],
                "infer_batch": lambda: infer_batch(scores, labels, qid),
                "infer_batch (auto)": lambda: infer_batch(scores, labels, qid, algorithm="auto"),
            }
            if layout == "sorted":
                queries = [(scores[g], labels[g]) for g in groups]
                calls["infer loop"] = lambda: [infer(s, y) for s, y in queries]
            times = round_robin(calls, repeats, time.process_time)
            per_query = {name: float(np.median(t)) / n_queries for name, t in times.items()}
            yardstick = per_query["numpy.argsort loop"]
            rows += [(docs, n_queries, layout, name, seconds, seconds / yardstick)
                     for name, seconds in per_query.items()]
    return rows, single_call(seed=seed)


def single_call(n: int = 20, calls: int = 2000, repeats: int = 5, seed: int = 0):
    """(CPU seconds of one ``infer`` call, of one ``numpy.argsort`` of the same n scores,
    ratio): medians over ``repeats`` rounds of ``calls`` calls each, the two interleaved."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal(n)
    labels = rng.random(n) < 0.3
    labels[0] = True
    infer_t, sort_t = [], []
    for _ in range(repeats):
        for fn, out in ((lambda: infer(scores, labels), infer_t),
                        (lambda: np.argsort(scores), sort_t)):
            t0 = time.process_time()
            for _ in range(calls):
                fn()
            out.append((time.process_time() - t0) / calls)
    i, s = float(np.median(infer_t)), float(np.median(sort_t))
    return i, s, i / s


def format_many_query_inference(rows, single) -> str:
    out = ["Inference over many equal queries (AP; about 10% relevant): CPU microseconds per "
           "query, medians, round robin in one run; x = / the numpy.argsort loop over each query's "
           f"negatives (target: infer_batch at most {BATCH_TARGET:g} x):", "",
           "| docs per query | queries | qid | infer_batch | infer_batch (auto) | infer loop | "
           "numpy.argsort loop | infer_batch x | auto x |", "|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    cells = {}
    for docs, n_queries, layout, name, seconds, ratio in rows:
        cells.setdefault((docs, n_queries, layout), {})[name] = (seconds * 1e6, ratio)
    for (docs, n_queries, layout), c in cells.items():
        loop = f"{c['infer loop'][0]:.2f}" if "infer loop" in c else "-"
        out.append(f"| {docs} | {n_queries} | {layout} | {c['infer_batch'][0]:.2f} | "
                   f"{c['infer_batch (auto)'][0]:.2f} | {loop} | "
                   f"{c['numpy.argsort loop'][0]:.2f} | {c['infer_batch'][1]:.2f} | "
                   f"{c['infer_batch (auto)'][1]:.2f} |")
    i, s, ratio = single
    out += ["", f"One infer call at n = 20: {i * 1e6:.2f} us CPU; one numpy.argsort of the same 20 "
            f"scores {s * 1e6:.2f} us; ratio {ratio:.1f} (target at most {SINGLE_TARGET:g})."]
    return "\n".join(out)


#: The partition-path section: the fastest exact AP algorithms at P = 1e3, N = 1e6 (overlapping)
#: on every partition path, against ``np.sort`` of the negatives' scores (values only).
PATH_CELL = (1_000, 1_000_000)
PATH_ALGORITHMS = ("qs", "select")


@dataclass
class PathRow:
    numpy_sort: str           # which of NumPy's sort dispatches timed np.sort
    path: str                 # aprank's partition path (aprank.simd_level())
    algorithm: str
    seconds: float            # median
    low: float                # fastest and slowest of the repeats
    high: float
    sort_seconds: float       # median np.sort of the negatives, interleaved with the above
    ratio: float


def numpy_avx512_dispatch() -> list[str]:
    """NumPy's AVX-512 dispatch targets that this CPU runs (names for NPY_DISABLE_CPU_FEATURES)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:       # NumPy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)
            and (name.startswith("AVX512") or name == "X86_V4")]


def partition_paths(levels=None, algorithms=PATH_ALGORITHMS, repeats: int = 7,
                    numpy_sort: str = "native", seed: int = 0) -> list[PathRow]:
    """Median CPU time of each algorithm on each partition path (default: every path this CPU
    runs) at PATH_CELL, and of ``np.sort`` of the negatives, in interleaved rounds so that a
    slow spell of a shared machine falls on all of them alike (CPU time: other processes'
    load does not count; every call timed is single-threaded). The process-wide path is
    restored afterwards."""
    P, N = PATH_CELL
    scores, labels = make_scores(P, N, REGIMES["overlapping"], seed)
    negatives = scores[~labels]
    previous = set_simd(True)
    try:
        best = SIMD_LEVELS.index(simd_level())
        levels = list(levels) if levels is not None else list(SIMD_LEVELS[best::-1])
        for level in levels:            # warm up (and fail early on a path this CPU lacks)
            set_simd(level)
            for algo in algorithms:
                infer(scores, labels, algorithm=algo)
        def on_path(level, algo):
            def call():
                set_simd(level)         # a flag: nothing next to the call it precedes
                infer(scores, labels, algorithm=algo)
            return call

        calls = {("np.sort", ""): lambda: np.sort(negatives)}
        calls.update({(level, algo): on_path(level, algo) for level in levels
                      for algo in algorithms})
        times = round_robin(calls, repeats, time.process_time)
    finally:
        set_simd(previous)
    sort_median = float(np.median(times.pop(("np.sort", ""))))
    return [PathRow(numpy_sort, level, algo, float(np.median(t)), min(t), max(t), sort_median,
                    float(np.median(t)) / sort_median) for (level, algo), t in times.items()]


def partition_paths_without_numpy_avx512(repeats: int = 7) -> list[PathRow]:
    """partition_paths in a fresh process whose NumPy runs without its AVX-512 dispatch and
    whose kernels take the AVX2 and portable paths: a machine with AVX2 only, emulated. Empty
    where NumPy has no AVX-512 target here or the CPU lacks AVX2."""
    import json
    import os
    import subprocess
    import sys
    disabled = numpy_avx512_dispatch()
    if not disabled:
        return []
    code = ("import json, dataclasses; from benchmarks import bench; "
            f"rows = bench.partition_paths(('avx2', 'portable'), repeats={int(repeats)}, "
            "numpy_sort='AVX-512 disabled'); "
            "print(json.dumps([dataclasses.asdict(r) for r in rows]))")
    # the repository root on the path: this module is a tool beside the package, not in it
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(disabled),
               PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        if "avx2 partition needs" in out.stderr:
            return []
        raise RuntimeError(f"the AVX2-only run failed:\n{out.stderr}")
    return [PathRow(**r) for r in json.loads(out.stdout.strip().splitlines()[-1])]


def format_partition_paths(rows: list[PathRow]) -> str:
    """Markdown table of partition_paths rows, with the CPU and NumPy's sort dispatch."""
    P, N = PATH_CELL
    out = [f"Partition paths at P = {P:g}, N = {N:g} (overlapping), against np.sort of the "
           f"negatives (values only), median CPU times of interleaved repeats ({machine()}; "
           f"NumPy's AVX-512 dispatch here: {' '.join(numpy_avx512_dispatch()) or 'none'}):",
           "",
           "| np.sort dispatch | partition path | algorithm | median | fastest - slowest "
           "| np.sort median | x np.sort |",
           "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r.numpy_sort} | {r.path} | {r.algorithm} | {_fmt_seconds(r.seconds)} | "
                   f"{r.low * 1e3:.1f} - {r.high * 1e3:.1f} ms | {_fmt_seconds(r.sort_seconds)} "
                   f"| {r.ratio:.2f} |")
    return "\n".join(out)
