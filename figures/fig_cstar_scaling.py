"""c-star top-k inference time against the number of items, for core sizes 0, 2, 5 and 8.

Mensink et al. (2011) gives O(2^C (N + k log k)) for the best subset of k items with interactions on
a core of C items. One query of N items with standard normal scores, k = 100, random interactions on
the core's rows; medians of repeated calls of the c-star kernel (no loss term). (a) time against
N per core size, with the fitted slopes; (b) time per core state (time / 2^C), which the bound
says is linear in N whatever C.
"""
import sys

from benchmarks.cstar import cstar_scaling
from figures._tools import script_main

NAME = "fig_cstar_scaling"
CORES = (0, 2, 5, 8)


def compute(quick):
    sizes = (3_000, 10_000, 30_000) if quick else (10_000, 30_000, 100_000, 300_000, 1_000_000)
    rows, slopes = cstar_scaling(sizes=sizes, cores=CORES, repeats=3 if quick else 5)
    return {"rows": [list(r) for r in rows], "slopes": {str(c): s for c, s in slopes.items()}}


def plot(results):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for C in CORES:
        rows = [r for r in results["rows"] if r[0] == C]
        N = [r[1] for r in rows]
        t = [r[2] for r in rows]
        axes[0].loglog(N, t, "o-", ms=3, label=f"C = {C} (slope {results['slopes'][str(C)]:.2f})")
        axes[1].loglog(N, [x / 2 ** C for x in t], "o-", ms=3, label=f"C = {C}")
    axes[0].set_ylabel("c-star inference time (s)")
    axes[1].set_ylabel("time per core state, / 2^C (s)")
    for ax, title in zip(axes, ("(a) time against N", "(b) time per core state")):
        ax.set_xlabel("items N (k = 100)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"c-star top-k inference, O(2^C N)\n({results.get('machine', '')})", fontsize=10)
    fig.tight_layout()
    return fig


main = script_main(__name__)

if __name__ == "__main__":
    sys.exit(main())
