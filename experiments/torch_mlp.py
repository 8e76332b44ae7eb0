"""``python -m experiments torch-mlp``: the torch loss in training (needs ``aprank[torch]``).

A small MLP on frozen features (HJA birdsong segments, one output per species; each species
ranks the minibatch) trained with the AP hinge or with binary cross-entropy, same optimiser,
epochs and seeds; test mAP of each, time per training step and the loss's share of it.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from aprank.datasets import load_hja_birdsong, recording_split
from aprank.metrics import average_precision
from aprank.torch import ap_hinge_loss

__all__ = ["mlp_experiment"]


def _bce(logits, targets):
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, targets.float())


def _ap_hinge(logits, targets):
    return ap_hinge_loss(logits, targets)


LOSSES = {"AP hinge": _ap_hinge, "binary cross-entropy": _bce}


def _train(loss_fn, X, Y, X_test, Y_test, *, epochs, batch, lr, hidden, seed):
    """(test mAP, median step seconds, median loss seconds, per-class test AP)."""
    torch.manual_seed(seed)
    d, L = X.shape[1], Y.shape[1]
    net = torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, L))
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    steps, loss_times = [], []
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(X.shape[0]), max(1, X.shape[0] // batch)):
            xb, yb = X[idx], Y[idx]
            if not bool(yb.any()):
                continue
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = loss_fn(net(xb), yb)
            loss.backward()
            opt.step()
            steps.append(time.perf_counter() - t0)
            # the loss alone, forward and backward, on the same outputs
            out = net(xb).detach().requires_grad_()
            t0 = time.perf_counter()
            loss_fn(out, yb).backward()
            loss_times.append(time.perf_counter() - t0)
    with torch.no_grad():
        scores = net(X_test).numpy()
    ap = [average_precision(Y_test[:, c].numpy(), scores[:, c]) for c in range(L)]
    return float(np.mean(ap)), float(np.median(steps)), float(np.median(loss_times)), ap


def mlp_experiment(quick: bool = False, log=print) -> str:
    """The README table: AP hinge against binary cross-entropy on HJA birdsong segments."""
    data = load_hja_birdsong()
    train, test = recording_split(data.recording, test_fraction=0.3, seed=0)
    mean, std = data.X[train].mean(0), data.X[train].std(0) + 1e-12
    X = torch.tensor((data.X - mean) / std, dtype=torch.float32)
    Y = torch.tensor(data.species[:, None] == np.arange(1, len(data.class_names) + 1))
    epochs, seeds = (3, [0]) if quick else (60, [0, 1, 2])
    settings = dict(epochs=epochs, batch=256, lr=1e-3, hidden=128)
    results = {}
    for name, fn in LOSSES.items():
        runs = [_train(fn, X[train], Y[train], X[test], Y[test], seed=s, **settings) for s in seeds]
        results[name] = runs
        log(f"  {name}: test mAP {np.mean([r[0] for r in runs]):.3f}")
    lines = [
        f"Data: HJA birdsong, {int(train.sum())} / {int(test.sum())} labelled segments "
        f"(train / test, split by recording, seed 0), 38 features standardised on the training "
        f"split, {Y.shape[1]} species. Network: 38 -> {settings['hidden']} (ReLU) -> "
        f"{Y.shape[1]}, one output per species; Adam (lr {settings['lr']:g}), minibatches of "
        f"{settings['batch']}, {epochs} epochs, seeds {', '.join(map(str, seeds))}; the AP hinge "
        "ranks the minibatch once per species (species absent from a minibatch are skipped). "
        "Test mAP: mean over species of the test AP, mean +- std over seeds. Times: medians over "
        f"every step on the CPU ({torch.get_num_threads()} threads); the loss's share is its "
        "forward and backward alone on the same outputs, over the whole step.",
        "",
        "| loss | test mAP | step (ms) | loss forward + backward (ms) | loss share of the step |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, runs in results.items():
        maps = [r[0] for r in runs]
        step, loss_t = np.mean([r[1] for r in runs]), np.mean([r[2] for r in runs])
        lines.append(f"| {name} | {np.mean(maps):.3f} +- {np.std(maps):.3f} | {step * 1e3:.2f} | "
                     f"{loss_t * 1e3:.2f} | {loss_t / step:.0%} |")
    lines += ["", "| species | " + " | ".join(f"{n} test AP" for n in results) + " |",
              "|---|" + "---:|" * len(results)]
    for c, species in enumerate(data.class_names):
        lines.append(f"| {species} | " + " | ".join(
            f"{np.mean([r[3][c] for r in runs]):.3f}" for runs in results.values()) + " |")
    return "\n".join(lines) + "\n"
