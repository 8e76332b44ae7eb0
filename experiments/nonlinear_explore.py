"""``python -m experiments nonlinear-explore``: what makes the AP hinge pay off on networks.

Varies one thing at a time around the MLP of ``experiments.nonlinear_networks``: the loss
(cross-entropy, AP hinge, their sum, a warm start), the minibatches (size, stratified or not,
the whole training part), the scale of the scores the hinge sees, and one output per row
against several. No test data is used: on each data set, seed 0's training part is split once
more into the 3 inner folds (each validates once, the other two train; the mean over the
folds), weight decay is fixed at 1e-4, and each variant's validation AP is read at its best
budget in steps (optimistic alike for every variant). The final experiment (``nonlinear``)
then tests the chosen recipe on held-out data, with every setting chosen by inner
cross-validation.
"""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np

from experiments.nonlinear_networks import STEPS, Recipe, fit_network
from experiments.nonlinear_tasks import LOADERS, inner_folds, outer_split

__all__ = ["VARIANTS", "explore", "explore_table"]

#: The variants tried, by name; the first is the reference.
VARIANTS = {
    "cross-entropy": Recipe(loss="ce", stratified=False),
    "cross-entropy, stratified": Recipe(loss="ce"),
    "cross-entropy, one network per row": Recipe(loss="ce", stratified=False, one_per_row=True),
    "AP hinge, shuffled 256": Recipe(stratified=False),
    "AP hinge, stratified 256": Recipe(),
    "AP hinge, stratified 64": Recipe(batch=64),
    "AP hinge, stratified 1024": Recipe(batch=1024),
    "AP hinge, full batch": Recipe(batch=None),
    "AP hinge x 0.1 scores": Recipe(scale=0.1),
    "AP hinge x 10 scores": Recipe(scale=10.0),
    "AP hinge, one network per row": Recipe(one_per_row=True),
    "cross-entropy + AP hinge": Recipe(loss="ce+ap"),
    "cross-entropy + 0.1 x AP hinge": Recipe(loss="ce+ap", mix=0.1),
    "cross-entropy + 10 x AP hinge": Recipe(loss="ce+ap", mix=10.0),
    "300 steps cross-entropy, then AP hinge": Recipe(warm_steps=300),
}
SEED = 0
WEIGHT_DECAY = 1e-4


def _unit(task_name: str, variant: str, quick: bool) -> tuple:
    """Validation AP per row of one variant at each budget, mean over the inner folds:
    (task, variant, [budget][row])."""
    import torch

    from experiments.nonlinear_units import row_scores
    from experiments.nonlinear_units import task as load_task

    torch.set_num_threads(1)
    task = load_task(task_name)
    train, _ = outer_split(task, SEED)
    budgets = STEPS[:1] if quick else STEPS
    ap = []
    for fit_idx, val_idx in inner_folds(task, train, SEED)[:1 if quick else None]:
        fit, val = train[fit_idx], train[val_idx]
        scores = fit_network(VARIANTS[variant], {"weight_decay": WEIGHT_DECAY}, task.X[fit],
                             task.Y[fit], None if task.qid is None else task.qid[fit],
                             [task.X[val]], SEED, task.positive_level, budgets=budgets)
        ap.append([[r["ap"] for r in row_scores(task, val, scores[b][0])] for b in budgets])
    return task_name, variant, np.nanmean(ap, axis=0).tolist()


def explore(quick: bool = False, jobs: int = 1, log=print) -> dict:
    """Validation AP of every variant on every data set: {variant: {task: [budget][row]}}."""
    tasks = ("digits", "fox") if quick else tuple(LOADERS)
    variants = list(VARIANTS)[:3] if quick else list(VARIANTS)
    out: dict = {v: {} for v in variants}
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_unit, t, v, quick) for v in variants for t in tasks]
        for future in futures:
            t, v, ap = future.result()
            out[v][t] = ap
            log(f"  {v} on {t}: best validation AP {np.max(np.nanmean(ap, axis=1)):.3f}")
    return out


def explore_table(results: dict) -> str:
    """Per variant: validation AP per data set (mean over its rows, best budget of each row)
    and rows at or above cross-entropy (within 0.001)."""
    variants = list(results)
    tasks = list(results[variants[0]])
    best = {v: {t: np.nanmax(np.asarray(results[v][t]), axis=0) for t in tasks} for v in variants}
    ref = variants[0]
    lines = ["| variant | " + " | ".join(tasks) + " | mean over rows | rows >= "
             f"{ref} |", "|---|" + "---:|" * (len(tasks) + 2)]
    for v in variants:
        rows = np.concatenate([best[v][t] for t in tasks])
        ref_rows = np.concatenate([best[ref][t] for t in tasks])
        lines.append(f"| {v} | " + " | ".join(f"{best[v][t].mean():.3f}" for t in tasks)
                     + f" | {rows.mean():.3f} | {int((rows >= ref_rows - 1e-3).sum())} of "
                     f"{len(rows)} |")
    return "\n".join(lines) + "\n"


def nonlinear_explore(quick: bool = False, jobs: int = 1, log=print) -> str:
    """The exploration's Markdown table, with its settings."""
    table = explore_table(explore(quick, jobs, log))
    budgets = STEPS[:1] if quick else STEPS
    return ("Validation AP (seed 0's training part in 3 inner folds, each validating once; weight "
            f"decay {WEIGHT_DECAY:g}; each row's best budget of {', '.join(map(str, budgets))} "
            "steps). Data sets: mean over their rows.\n\n" + table)
