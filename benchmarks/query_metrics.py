"""A section of the full run of ``python -m benchmarks``: ``aprank.metrics.average_precision``
and ``ndcg`` over many small queries (1e6 samples in 4e5 queries) against
``aprank.infer_batch`` on the same input."""
from __future__ import annotations

import numpy as np

from aprank.inference import infer_batch
from aprank.metrics import average_precision, ndcg
from benchmarks.timing import format_seconds, round_robin

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
    """Markdown table of :func:`many_query_metrics`'s rows."""
    out = [f"Metrics over many queries: {n:.0e} samples in {n_queries:.0e} queries of random "
           "sizes, qid interleaved or contiguous (median time; x aprank.infer_batch on the same "
           "input, same run):", "",
           "| qid | call | median time | x infer_batch |", "|---|---|---:|---:|"]
    out += [f"| {layout} | {name} | {format_seconds(seconds)} | {ratio:.2f} |"
            for layout, name, seconds, ratio in rows]
    return "\n".join(out)
