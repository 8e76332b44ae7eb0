"""Test mAP against epoch for aprank's AP hinge and its peers (``experiment torch-peers``).

The same MLP trained with aprank's AP hinge, binary cross-entropy, LibAUC's AP loss (SOAP) and
pytorch-metric-learning's FastAP and Smooth-AP (the last two on HJA only: they need one class
per sample, see ``experiments/peer_losses.py``), on HJA birdsong segments (one ranking per
species) and the Yahoo LTR sample (one ranking per query); the test mAP after each epoch, mean
over 3 seeds with a band of +- one standard deviation (quick: 2 epochs, one seed). Needs
PyTorch, libauc and pytorch-metric-learning; without them the figure is skipped, naming them.
"""
import sys

import numpy as np

from figures._tools import require, script_main

NAME = "fig_torch_peers"
INSTALL = "pip install 'aprank[torch]' && pip install --no-deps libauc pytorch-metric-learning"


def compute(quick):
    require("torch", "libauc", "pytorch_metric_learning", install=INSTALL)
    from experiments.torch_peers import peer_results

    return peer_results(quick, log=lambda line: None)


def plot(results):
    import matplotlib.pyplot as plt

    datasets = results["datasets"]
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4.2), squeeze=False)
    for ax, (tname, data) in zip(axes[0], datasets.items()):
        for lname, entry in data["losses"].items():
            if "skipped" in entry:
                continue
            curves = np.array([run["curve"] for run in entry["runs"]])
            epochs = np.arange(1, curves.shape[1] + 1)
            mean, std = curves.mean(0), curves.std(0)
            (line,) = ax.plot(epochs, mean, label=lname, lw=1.4)
            ax.fill_between(epochs, mean - std, mean + std, color=line.get_color(), alpha=0.2)
        ax.set_title(tname)
        ax.set_xlabel("epoch")
        ax.set_ylabel("test mAP")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    v, s = results["versions"], results["settings"]
    fig.suptitle(f"Test mAP against epoch, mean +- std over seeds {s['seeds']}; libauc "
                 f"{v['libauc']}, pytorch-metric-learning {v['pytorch-metric-learning']}, torch "
                 f"{v['torch']}\n({results.get('machine', '')})", fontsize=9)
    fig.tight_layout()
    return fig


main = script_main(__name__)

if __name__ == "__main__":
    sys.exit(main())
