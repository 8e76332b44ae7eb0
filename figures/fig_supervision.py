"""Test AP against the level of supervision on HJA birdsong (Behl 2015, Figure 4.1 analogue).

Recordings are bags of segments, one ranking of recordings per species. At supervision S, the
row h of S % of the training positive bags is known: a segment of the recording labelled with
the species (only bags that have one can be supervised; the others stay latent, as every
negative bag does). LatentAPSVM and LatentSVM (c = 0, J = N / P) at C = 10, tol = 1e-2;
3 folds by bag, stratified, seed 0, rows standardised on the training bags; the mean test AP
over the 13 species (quick: 2 species, 2 folds, S in {0, 100}). LatentSSVM is left out: its
greedy step costs hundreds of times latent AP-SVM's on 548 bags (``experiment latent``).
(a) mean test AP against S; (b) per species at S = 0 against S = 100.
"""
import sys
import warnings

import numpy as np

from aprank.datasets import load_hja_bags
from aprank.learn import LatentAPSVM, LatentSVM
from figures._tools import script_main

NAME = "fig_supervision"
LEVELS = (0, 25, 50, 75, 100)
C = 10.0        # the C ``experiment latent`` chose most often on these data
METHODS = {"LatentAPSVM": lambda: LatentAPSVM(C=C, tol=1e-2, max_outer=20),
           "LatentSVM": lambda: LatentSVM(C=C, tol=1e-2, max_outer=20)}


def known_rows(data, species, train_bags, level, seed=0):
    """(M,) bool: the known row of ``level`` % of the training positive bags that have a
    segment labelled ``species`` (the first such segment of each chosen bag)."""
    witness = data.instance_labels == species
    rows = {}
    for r in np.flatnonzero(witness & np.isin(data.bags, train_bags) & (data.y == 1)):
        rows.setdefault(int(data.bags[r]), r)
    bags = np.array(sorted(rows))
    rng = np.random.default_rng([seed, species])
    chosen = rng.permutation(bags)[: int(round(level / 100 * bags.size))]
    h = np.zeros(data.y.size, dtype=bool)
    h[[rows[b] for b in chosen]] = True
    return h, bags.size


def one_species(species, levels, folds):
    from sklearn.model_selection import StratifiedGroupKFold
    from sklearn.preprocessing import StandardScaler

    data = load_hja_bags(species)
    out = {m: {lv: [] for lv in levels} for m in METHODS}
    split = StratifiedGroupKFold(folds, shuffle=True, random_state=0)
    for train, test in split.split(data.X, data.y, data.bags):
        X = StandardScaler().fit(data.X[train]).transform(data.X)
        train_bags = np.unique(data.bags[train])
        for level in levels:
            h, _ = known_rows(data, species, train_bags, level)
            for name, make in METHODS.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = make().fit(X[train], data.y[train], bags=data.bags[train], h=h[train])
                out[name][level].append(est.score(X[test], data.y[test], bags=data.bags[test]))
    return {m: {str(lv): float(np.mean(v)) for lv, v in per.items()} for m, per in out.items()}


def compute(quick):
    from joblib import Parallel, delayed

    levels = (0, 100) if quick else LEVELS
    species = (1, 2) if quick else tuple(range(1, 14))
    folds = 2 if quick else 3
    per_species = Parallel(n_jobs=2)(delayed(one_species)(k, levels, folds) for k in species)
    return {"levels": list(levels), "species": list(species), "folds": folds,
            "per_species": per_species}


def plot(results):
    import matplotlib.pyplot as plt

    levels = results["levels"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for name in METHODS:
        mean = [np.mean([s[name][str(lv)] for s in results["per_species"]]) for lv in levels]
        axes[0].plot(levels, mean, "o-", label=name)
        lo, hi = str(levels[0]), str(levels[-1])
        axes[1].scatter([s[name][lo] for s in results["per_species"]],
                        [s[name][hi] for s in results["per_species"]], label=name, s=18)
    axes[0].set_xlabel("supervision S (% of positive bags with a known segment)")
    axes[0].set_ylabel(f"test AP, mean over {len(results['species'])} species")
    axes[0].set_title("(a) mean test AP against supervision")
    axes[1].plot([0, 1], [0, 1], color="gray", lw=0.8, ls="--")
    axes[1].set_xlabel(f"test AP at S = {levels[0]} %")
    axes[1].set_ylabel(f"test AP at S = {levels[-1]} %")
    axes[1].set_title("(b) per species")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"HJA birdsong recordings as bags of segments, {results['folds']} folds by "
                 f"bag, C = {C:g}\n({results.get('machine', '')})", fontsize=9)
    fig.tight_layout()
    return fig


main = script_main(__name__)

if __name__ == "__main__":
    sys.exit(main())
