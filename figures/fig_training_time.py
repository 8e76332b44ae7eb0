"""Total loss-augmented inference time over complete trainings (Mohapatra et al. 2018, Figures 1-2).

BinarySVM, APSVM with every exact AP algorithm and NDCGSVM with every exact NDCG algorithm are
trained to convergence (C = 10, tol = 1e-3) on real features: HJA birdsong segments (38
standardised features), species HAFL (1280 segments) against the other 3718 labelled segments.
Samples are drawn without replacement while a class has enough of them and with replacement
beyond that. (a) total size grows at one positive per ten negatives, (b) negatives grow with
100 positives, (c) positives grow with 2000 negatives. The exact algorithms of a loss learn the
same w in the same iterations, so their curves differ only by inference cost.
"""
import sys

import numpy as np

from aprank.inference import algorithms
from aprank.learn import APSVM, NDCGSVM, BinarySVM
from figures._tools import fit_slope, script_main

NAME = "fig_training_time"
SPECIES = 12          # HAFL - Hammond's Flycatcher
C = 10.0


def panels(quick):
    if quick:
        return {"a": [(n // 11, n - n // 11) for n in (330, 660, 1320)],
                "b": [(50, N) for N in (300, 600, 1200)],
                "c": [(P, 600) for P in (25, 50, 100)]}
    return {"a": [(n // 11, n - n // 11) for n in (550, 1100, 2200, 4400, 8800, 17600)],
            "b": [(100, N) for N in (500, 1000, 2000, 4000, 8000, 16000)],
            "c": [(P, 2000) for P in (50, 100, 200, 400, 800, 1600)]}


def learners():
    """(label, estimator factory of the sample count n): BinarySVM, then every exact AP and
    NDCG algorithm. All weigh their normalised loss by C: BinarySVM's C is per sample, so its
    C / n is the same structural C."""
    out = [("BinarySVM", lambda n: BinarySVM(C=C / n))]
    for cls, loss in ((APSVM, "ap"), (NDCGSVM, "ndcg")):
        for a in algorithms(loss=loss, exact=True):
            if a.max_samples is None:
                out.append((f"{cls.__name__}/{a.name}",
                            lambda n, cls=cls, a=a: cls(C=C, algorithm=a.name)))
    return out


def _sample(pool, k, rng):
    return rng.choice(pool, k, replace=k > pool.size)


def compute(quick):
    from sklearn.preprocessing import StandardScaler

    from aprank.datasets import load_hja_birdsong

    data = load_hja_birdsong()
    X = StandardScaler().fit_transform(data.X)
    pos_pool = np.flatnonzero(data.species == SPECIES)
    neg_pool = np.flatnonzero(data.species != SPECIES)
    results = {"species": data.class_names[SPECIES - 1], "C": C, "panels": {}}
    for key, points in panels(quick).items():
        rows = []
        for P, N in points:
            rng = np.random.default_rng(P * 100003 + N)
            idx = np.r_[_sample(pos_pool, P, rng), _sample(neg_pool, N, rng)]
            y = np.r_[np.ones(P, bool), np.zeros(N, bool)]
            row = {"P": P, "N": N}
            for label, make in learners():
                est = make(y.size).fit(X[idx], y, qid=np.zeros(y.size))    # one ranking, said
                row[label] = {"inference_seconds": sum(h["inference_seconds"]
                                                       for h in est.history_),
                              "iterations": est.n_iter_, "converged": bool(est.converged_)}
            rows.append(row)
        results["panels"][key] = rows
    return results


def plot(results):
    import matplotlib.pyplot as plt

    labels = [label for label, _ in learners()]
    groups = {"AP-SVM": [x for x in labels if not x.startswith("NDCGSVM")],
              "NDCG-SVM": [x for x in labels if not x.startswith("APSVM")]}
    colours = dict(zip(labels, plt.cm.tab10.colors))
    fig, axes = plt.subplots(2, 3, figsize=(15, 9), squeeze=False)
    for row, (group, members) in enumerate(groups.items()):
        for col, key in enumerate("abc"):
            ax = axes[row, col]
            rows = results["panels"][key]
            x = [r["P"] + r["N"] if key == "a" else (r["N"] if key == "b" else r["P"])
                 for r in rows]
            for label in members:
                t = [r[label]["inference_seconds"] for r in rows]
                ax.loglog(x, t, "o-", ms=3, color=colours[label],
                          label=f"{label} (slope {fit_slope(x, t):.2f})")
            ax.set_xlabel({"a": "samples n = P + N (P : N = 1 : 10)",
                           "b": f"negatives N (P = {rows[0]['P']})",
                           "c": f"positives P (N = {rows[0]['N']})"}[key])
            ax.set_ylabel("total inference time over training (s)")
            ax.set_title(f"({key}) {group}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"Loss-augmented inference during complete training, HJA birdsong species "
                 f"{results['species']} vs rest, C = {results['C']:g}, resampled real features\n"
                 f"({results.get('machine', '')})", fontsize=10)
    fig.tight_layout()
    return fig


main = script_main(__name__)

if __name__ == "__main__":
    sys.exit(main())
