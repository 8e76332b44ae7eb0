"""Max-marginal time of the pairwise kind (HOB/HOAP-SVM) against the number of samples.

Samples are linked in groups whose sizes are resampled from the HJA birdsong recordings (every
pair of a group linked; Dokania et al. (2014) links the boxes of one image the same way). Every
max-marginal, loss-augmented, by "graphcut" (compiled enumeration of components of at most 3
samples, dense cuts up to 64, one-tree re-cuts beyond), "graphcut-dynamic" (dynamic cuts of
Kohli and Torr everywhere) and "graphcut-static" (2n cuts from scratch); medians of repeated
calls. (a) time against n; (b) the speed-up over cuts from scratch; (c) one connected kNN
component (10 pairs per sample, strong pair scores): time of every max-marginal against its size.
"""
import sys

from benchmarks.pairwise import component_scaling, pairwise_scaling
from figures._tools import script_main

NAME = "fig_pairwise_scaling"


def compute(quick):
    sizes = (1_000, 3_000) if quick else (1_000, 3_000, 10_000, 30_000, 100_000)
    rows, source = pairwise_scaling(sizes=sizes, repeats=3)
    components = (200, 400) if quick else (1_000, 2_000, 4_000, 7_000, 10_000)
    return {"rows": [list(r) for r in rows], "source": source,
            "component": [list(r) for r in component_scaling(sizes=components, repeats=3)]}


def plot(results):
    import matplotlib.pyplot as plt

    rows = results["rows"]
    names = list(dict.fromkeys(r[2] for r in rows))
    static = {r[0]: r[3] for r in rows if r[2] == "graphcut-static"}
    component = results.get("component", [])
    fig, axes = plt.subplots(1, 3 if component else 2, figsize=(16.5 if component else 11, 4.5))
    for name in names:
        mine = [r for r in rows if r[2] == name]
        n = [r[0] for r in mine]
        axes[0].loglog(n, [r[3] for r in mine], "o-", ms=3, label=name)
        if name != "graphcut-static":
            axes[1].semilogx(n, [static[r[0]] / r[3] for r in mine], "o-", ms=3, label=name)
    axes[0].set_ylabel("all max-marginals (s)")
    axes[1].set_ylabel("speed-up over 2n cuts from scratch")
    axes[1].axhline(5, color="gray", lw=0.8, ls="--")
    for name in dict.fromkeys(r[2] for r in component):
        mine = [r for r in component if r[2] == name]
        line, = axes[2].loglog([r[0] for r in mine], [r[3] for r in mine], "o-", ms=3,
                               label=f"{name} (wall)")
        if len(mine[0]) > 4:     # the process's CPU time: the wall time on an idle machine
            axes[2].loglog([r[0] for r in mine], [r[4] for r in mine], "s--", ms=3,
                           color=line.get_color(), label=f"{name} (CPU)")
    if component:
        axes[2].set_ylabel("all max-marginals of the component (s)")
        axes[2].axhline(5, color="gray", lw=0.8, ls="--")    # the target at 1e4 samples
    for ax, title in zip(axes, ("(a) time against n", "(b) against cuts from scratch",
                                "(c) one kNN component (10 n pairs)")):
        ax.set_xlabel("samples n" if ax is not axes[-1] or not component else
                      "samples in the component")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"Max-marginals, {results['source']}\n({results.get('machine', '')})",
                 fontsize=9)
    fig.tight_layout()
    return fig


main = script_main(__name__)

if __name__ == "__main__":
    sys.exit(main())
