"""Networks and boosted trees on 27 rows: each model's test AP against the MLP trained with
cross-entropy and against LightGBM's binary objective (``python -m experiments nonlinear``).

One dot per row (digits, HJA birdsong species, fox, tiger, elephant, the Yahoo LTR sample): the
row's mean test AP over 3 seeds minus the reference's; right of the line, the model is better.
Every model's hyper-parameters and budget were chosen by inner cross-validation. The command
``python -m experiments nonlinear`` writes this figure's results and the figure; this script
replots them (or, with --recompute, runs the whole experiment: about 40 minutes on 2 cores).
"""
import sys
import tempfile

import numpy as np

from figures._tools import require, script_main

NAME = "fig_nonlinear"
INSTALL = "pip install 'aprank[torch]' lightgbm xgboost"


def compute(quick):
    require("torch", "lightgbm", "xgboost", install=INSTALL)
    from experiments.nonlinear import nonlinear_results

    # the units are kept in a folder of their own that goes with the run: the command
    # (python -m experiments nonlinear) keeps them beside its table instead
    with tempfile.TemporaryDirectory() as keep:
        return nonlinear_results(quick, log=lambda line: None, out=keep)


def plot(results):
    import matplotlib.pyplot as plt

    from experiments.nonlinear import REFERENCES, compare, mean_ap

    _, ap = mean_ap(results)
    refs = [r for r in REFERENCES if r in ap]
    models = list(ap)
    fig, axes = plt.subplots(1, len(refs), figsize=(6.2 * len(refs), 0.45 * len(models) + 1.6),
                             squeeze=False, sharey=True)
    rng = np.random.default_rng(0)
    for ax, ref in zip(axes[0], refs):
        for y, model in enumerate(models):
            if model == ref:
                continue
            d = ap[model] - ap[ref]
            ax.scatter(d, y + rng.uniform(-0.15, 0.15, len(d)), s=12, alpha=0.7,
                       color=f"C{y}")     # a model's colour is the same in every panel
            w, t, lo, p = compare(ap[model], ap[ref])
            ax.annotate(f"{w}/{t}/{lo}, p={p:.2g}", (1.0, y), xycoords=("axes fraction", "data"),
                        xytext=(4, 0), textcoords="offset points", va="center", fontsize=7)
        ax.axvline(0, color="k", lw=0.8)
        ax.set_yticks(range(len(models)), models, fontsize=8)
        ax.set_xlabel(f"test AP minus {ref}'s (per row, mean over seeds)")
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(f"{len(next(iter(ap.values())))} rows, seeds {results['seeds']} "
                 f"({results.get('machine', '')})", fontsize=9)
    fig.tight_layout()
    return fig


main = script_main(__name__)

if __name__ == "__main__":
    sys.exit(main())
