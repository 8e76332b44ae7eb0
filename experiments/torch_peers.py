"""``python -m experiments torch-peers``: aprank's AP hinge beside its peers in training (needs
``aprank[torch]``; the peers ``libauc`` and ``pytorch-metric-learning`` are optional, see
:mod:`experiments.peer_losses`).

The same network (d -> 128 (ReLU) -> L), the same seeds and, where the loss allows, the same
minibatches, trained with each loss of :data:`experiments.peer_losses.LOSSES` on each task of
:data:`experiments.peer_tasks.TASKS`; the test mAP after every epoch, the time per training step
and the loss's share of it. :func:`peer_results` returns the numbers (the figure
``figures/fig_torch_peers.py`` plots them), :func:`peers_experiment` the Markdown table.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from experiments.peer_losses import LOSSES, versions
from experiments.peer_tasks import TASKS

__all__ = ["SETTINGS", "peer_results", "peers_experiment", "train"]

#: Full and quick settings: epochs, seeds, minibatch size, hidden width, torch threads (the
#: full run's epochs, seeds, batch and width are those of ``experiment torch-mlp``).
SETTINGS = {False: dict(epochs=60, seeds=[0, 1, 2], batch=256, hidden=128, threads=1),
            True: dict(epochs=2, seeds=[0], batch=256, hidden=128, threads=1)}


def train(task, loss, *, epochs, batch, hidden, seed) -> dict:
    """Train one network with one loss; the test mAP after each epoch and the step timings.

    The step is split at the network's outputs: the loss's forward and backward run on a
    detached copy of them (what it costs alone), then the outputs' gradient flows through the
    network; so the loss runs once per step, as in plain training (LibAUC's loss updates its
    moving averages on every call)."""
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(task.X.shape[1], hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, task.n_outputs))
    opt = loss.optimiser(net.parameters())
    fn = loss.build(task)
    rng = np.random.default_rng(seed)
    curve, steps, in_loss = [], [], []
    for _ in range(epochs):
        for idx in loss.make_batches(task, rng, batch):
            if not task.Y[idx].any():
                continue
            t0 = time.perf_counter()
            opt.zero_grad()
            out = net(task.X[idx])
            leaf = out.detach().requires_grad_()
            t1 = time.perf_counter()
            fn(leaf, idx).backward()
            t2 = time.perf_counter()
            if leaf.grad is not None:
                out.backward(leaf.grad)
            opt.step()
            steps.append(time.perf_counter() - t0)
            in_loss.append(t2 - t1)
        curve.append(task.evaluate(loss.scores(net, task)))
    return {"seed": seed, "curve": curve, "test_map": curve[-1],
            "step_s": float(np.median(steps)), "loss_s": float(np.median(in_loss)),
            "share": float(np.sum(in_loss) / np.sum(steps))}


def peer_results(quick: bool = False, log=print, tasks=None, losses=None) -> dict:
    """Every loss on every task (``tasks``, ``losses``: names to keep, default all), one run
    per seed; JSON-serialisable."""
    settings = SETTINGS[quick]
    threads = torch.get_num_threads()
    torch.set_num_threads(settings["threads"])
    out = {"settings": settings, "versions": versions(), "datasets": {}}
    cpu0 = time.process_time()
    try:
        for tname, load in TASKS.items():
            if tasks is not None and tname not in tasks:
                continue
            task = load()
            rows = {}
            for lname, loss in LOSSES.items():
                if losses is not None and lname not in losses:
                    continue
                reason = loss.unavailable(task)
                if reason is not None:
                    rows[lname] = {"skipped": reason}
                    log(f"  {tname}, {lname}: {reason}")
                    continue
                runs = [train(task, loss, seed=s, **{k: settings[k] for k in
                                                     ("epochs", "batch", "hidden")})
                        for s in settings["seeds"]]
                rows[lname] = {"runs": runs}
                log(f"  {tname}, {lname}: test mAP "
                    f"{np.mean([r['test_map'] for r in runs]):.3f}")
            out["datasets"][tname] = {"description": task.description, "losses": rows}
    finally:
        torch.set_num_threads(threads)
    # the process's CPU time, not the wall clock: the machine is shared with other jobs
    out["cpu_s"] = time.process_time() - cpu0
    return out


def _row(name: str, entry: dict) -> str:
    if "skipped" in entry:
        return f"| {name} | {entry['skipped']} | | | |"
    runs = entry["runs"]
    maps = [r["test_map"] for r in runs]
    step, loss_t = np.mean([r["step_s"] for r in runs]), np.mean([r["loss_s"] for r in runs])
    share = np.mean([r["share"] for r in runs])
    return (f"| {name} | {np.mean(maps):.3f} +- {np.std(maps):.3f} | {step * 1e3:.2f} | "
            f"{loss_t * 1e3:.2f} | {share:.0%} |")


def results_table(results: dict) -> str:
    """The Markdown table of :func:`peer_results`' output."""
    s, v = results["settings"], results["versions"]
    lines = [
        f"Network: d -> {s['hidden']} (ReLU) -> L outputs; minibatches of about {s['batch']} "
        f"samples, {s['epochs']} epochs, seeds {', '.join(map(str, s['seeds']))}, torch "
        f"{v['torch']} on the CPU with {s['threads']} thread; libauc {v['libauc']}, "
        f"pytorch-metric-learning {v['pytorch-metric-learning']}. Adam (lr 1e-3) for every "
        "loss but LibAUC's, which uses its SOAP optimiser (Adam mode, lr 1e-3, weight decay "
        "1e-5, gradients clipped to 1). Test mAP after the last epoch, mean +- std over "
        "seeds. Step: median over the steps of a run of the whole training step (forward, "
        "loss, backward, optimiser); the loss's forward and backward alone are timed inside "
        "the same step (median), and its share is their total over the steps' total; each "
        f"averaged over seeds. The whole run took {results['cpu_s']:.0f} s of CPU time.",
    ]
    for tname, data in results["datasets"].items():
        lines += ["", f"**{tname}**: {data['description']}.", "",
                  "| loss | test mAP | step (ms) | loss forward + backward (ms) | "
                  "loss share of the step |",
                  "|---|---:|---:|---:|---:|"]
        lines += [_row(name, entry) for name, entry in data["losses"].items()]
    return "\n".join(lines) + "\n"


def peers_experiment(quick: bool = False, log=print) -> str:
    """The docs' table: every loss on HJA birdsong and the Yahoo LTR sample."""
    return results_table(peer_results(quick, log))
