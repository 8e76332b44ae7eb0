"""Interleaving ranks of the negatives over one real training run (Mohapatra et al. 2014, Figure 1).

APSVM and NDCGSVM (C = 100) on the HJA birdsong segments, species HAFL (the largest class,
1280 segments, as in fig_training_time) against the rest (all 4998 labelled segments,
standardised). Each row of a heatmap is one cutting-plane iteration:
the negatives, sorted by their score at that iteration (best first) and grouped into bins, are
coloured by the interleaving rank loss-augmented inference gave them (deepest red: P+1, below
every positive). Optimal ranks do not decrease along the sorted negatives, so sorting the
recorded ranks gives that order without the scores. Beside it, the number of negatives whose
optimal rank is P+1 at each iteration: what SELECT and the sample-guided pivots exploit.
"""
import sys

import numpy as np

from aprank.learn import APSVM, NDCGSVM
from figures._tools import script_main

NAME = "fig_rank_heatmap"
SPECIES = 12          # HAFL - Hammond's Flycatcher
BINS = 200


def compute(quick):
    from sklearn.preprocessing import StandardScaler

    from aprank.datasets import load_hja_birdsong

    data = load_hja_birdsong()
    X = StandardScaler().fit_transform(data.X)
    y = data.species == SPECIES
    if quick:
        keep = np.random.default_rng(0).choice(y.size, 1000, replace=False)
        X, y = X[keep], y[keep]
    C = 10.0 if quick else 100.0
    results = {"species": data.class_names[SPECIES - 1], "C": C, "P": int(y.sum()),
               "N": int((~y).sum()), "runs": {}}
    for cls in (APSVM, NDCGSVM):
        recorded = []        # the ranks inference returned, one array per iteration
        est = cls(C=C, callback=lambda info: recorded.append(info["result"].ranks[~y]))
        est.fit(X, y, qid=np.zeros(y.size))         # one ranking of the recordings, said
        heat = []
        for ranks in recorded:
            ranks = np.sort(ranks)                       # best-scoring negatives first
            edges = np.linspace(0, ranks.size, BINS + 1).astype(int)
            heat.append([round(float(ranks[a:b].mean()), 1) for a, b in zip(edges[:-1], edges[1:])])
        results["runs"][type(est).__name__] = {
            "heat": heat, "n_last_rank": [h["n_last_rank"] for h in est.history_],
            "iterations": est.n_iter_, "converged": bool(est.converged_)}
    return results


def plot(results):
    import matplotlib.pyplot as plt

    P, N = results["P"], results["N"]
    runs = results["runs"]
    fig, axes = plt.subplots(len(runs), 2, figsize=(13, 4.2 * len(runs)), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 1]})
    for row, (name, run) in enumerate(runs.items()):
        heat = np.array(run["heat"])
        ax = axes[row, 0]
        im = ax.imshow(heat, aspect="auto", cmap="YlOrRd", vmin=1, vmax=P + 1,
                       interpolation="nearest", extent=(0, N, heat.shape[0] + 0.5, 0.5))
        ax.set_xlabel(f"negatives, sorted by score at that iteration ({N} in {heat.shape[1]} bins)")
        ax.set_ylabel("cutting-plane iteration")
        ax.set_title(f"{name}: interleaving rank of the negatives (P = {P}; P+1 = deepest red)")
        fig.colorbar(im, ax=ax, label="interleaving rank (mean over bin)")
        ax = axes[row, 1]
        it = np.arange(1, len(run["n_last_rank"]) + 1)
        ax.plot(run["n_last_rank"], it, "-", color="tab:red")
        ax.set_ylim(it[-1] + 0.5, 0.5)
        ax.set_xlim(0, None)
        ax.set_xlabel(f"negatives at rank P+1 (of {N})")
        ax.set_title(f"{run['iterations']} iterations")
        ax.grid(alpha=0.3)
    fig.suptitle(f"One training run each on HJA birdsong, {results['species']} vs rest, "
                 f"C = {results['C']:g} ({results.get('machine', '')})", fontsize=10)
    fig.tight_layout()
    return fig


main = script_main(__name__)

if __name__ == "__main__":
    sys.exit(main())
