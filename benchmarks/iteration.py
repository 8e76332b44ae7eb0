"""``python -m benchmarks --iteration``: one cutting-plane iteration of a real fit, split into
loss-augmented inference, the working-set QP and everything else (products with X included)."""
from __future__ import annotations

import time

import numpy as np

from aprank.inference import simd_level
from aprank.learn import cutting_plane
from aprank.models import RankingModel


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


def format_iteration(r: dict) -> str:
    """The lines of :func:`iteration_overhead`'s split, in milliseconds."""
    return "\n".join([
        f"One cutting-plane iteration of APSVM (qs), n = {r['n']:g}, {r['n_queries']} "
        f"interleaved queries, d = {r['d']} (medians over iterations 2-{r['iterations']}; "
        f"{simd_level()} partition):",
        f"  inference {r['inference'] * 1e3:8.1f} ms",
        f"  QP        {r['qp'] * 1e3:8.1f} ms",
        f"  the rest  {r['rest'] * 1e3:8.1f} ms  ({r['rest'] / r['inference']:.2f} x inference; "
        "products X w and X'c included)",
        f"  building the model once: {r['setup'] * 1e3:.1f} ms"])
