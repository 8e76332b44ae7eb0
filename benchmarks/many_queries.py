"""``python -m benchmarks --many-queries`` (and a section of the full run): inference over many
small queries.

:func:`many_query_inference` times ``infer_batch`` (its default algorithm and "auto") and a
loop of ``infer`` over many equal small queries, qid sorted or shuffled, against a loop of
``numpy.argsort`` over each query's negatives, and :func:`single_call` one ``infer`` call at
n = 20 against one ``numpy.argsort`` (the targets: BATCH_TARGET and SINGLE_TARGET).
"""
from __future__ import annotations

import time

import numpy as np

from aprank.inference import infer, infer_batch
from benchmarks.timing import round_robin

#: The many-query section: (documents per query, queries).
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
    """Markdown table of :func:`many_query_inference`'s rows, then the single call."""
    out = ["Inference over many equal queries (AP; about 10% relevant): CPU microseconds per "
           "query, medians, round robin in one run; x = / the numpy.argsort loop over each query's "
           f"negatives (target: infer_batch at most {BATCH_TARGET:g} x):", "",
           "| docs per query | queries | qid | infer_batch | infer_batch (auto) | infer loop | "
           "numpy.argsort loop | infer_batch x | auto x |",
           "|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
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
