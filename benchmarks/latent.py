"""``python -m benchmarks --latent`` (and a section of the full run): the most violated
constraint of the latent learners. The latent kind ranks bags, so its cells count bags
(hundreds), not samples (millions), and it has none in the main table."""
from __future__ import annotations

import numpy as np

from aprank.checks import bench_instance
from aprank.inference import LatentProblem, RankingProblem, get_algorithm
from benchmarks.timing import format_seconds, median_time

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
    """Markdown table of :func:`latent_scaling`'s rows."""
    out = ["Most violated constraint per latent learner, P positive and N negative bags of 4 rows "
           "(median time; x latent-ap in the same cell):", "",
           "| P | N | method | time | x latent-ap |", "|---:|---:|---|---:|---:|"]
    ap = {(r[0], r[1]): r[3] for r in rows if r[2] == "latent-ap"}
    for P, N, name, seconds, note in rows:
        if seconds is None:
            out.append(f"| {P} | {N} | {name} | {note} | |")
            continue
        out.append(f"| {P} | {N} | {name} | {format_seconds(seconds)} | "
                   f"{seconds / ap[(P, N)]:.2g} |")
    return "\n".join(out)
