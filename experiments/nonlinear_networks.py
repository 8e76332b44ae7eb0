"""The networks of the nonlinear experiment: one MLP trained with binary cross-entropy, with
aprank's exact AP hinge, or with a recipe that mixes them.

Every network is d -> 256 (ReLU) -> L, the features standardised on the training part, AdamW
(learning rate 1e-3, weight decay searched), in float32 on the CPU with one thread. Budgets are
optimiser steps. One-against-the-rest data sets train one network with an output per row
("several outputs", the default) or one network per row; a ranking data set (queries) trains
one output on minibatches of whole queries, the AP hinge ranking each query.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import torch

from aprank.torch import ap_hinge_loss
from experiments.nonlinear_protocol import Candidate

__all__ = ["Recipe", "network_candidates", "fit_network", "RECIPES", "HIDDEN", "STEPS"]

HIDDEN = 256
LEARNING_RATE = 1e-3
#: Training budgets in optimiser steps (one fit scores the evaluation parts after each).
STEPS = (150, 300, 600, 1200)
QUICK_STEPS = (20, 40)
WEIGHT_DECAYS = (1e-4, 1e-2)


@dataclass(frozen=True)
class Recipe:
    """How a network is trained.

    Attributes
    ----------
    loss : {"ce", "ap", "ce+ap"}
        Binary cross-entropy per output, the AP hinge per output (or per query), or their sum
        with the hinge weighted by ``mix``.
    batch : int or None
        Samples per minibatch (None: the whole training part every step).
    stratified : bool
        Deal each class's samples evenly over the minibatches of an epoch (else a plain
        shuffle): every minibatch then holds its share of each row's positives.
    scale : float
        The hinge sees ``scale * outputs``: its margin in units of the network's scores.
    mix : float
        Weight of the hinge beside cross-entropy ("ce+ap").
    warm_steps : int
        Steps of cross-entropy alone before the recipe's loss takes over (a warm start).
    one_per_row : bool
        One network per row instead of one network with an output per row.
    """

    loss: str = "ap"
    batch: int | None = 256
    stratified: bool = True
    scale: float = 1.0
    mix: float = 1.0
    warm_steps: int = 0
    one_per_row: bool = False

    def describe(self, mix: str | None = None) -> str:
        """The recipe in one line, for the tables (``mix``: what to call the hinge's weight
        where a grid searches it)."""
        parts = [{"ce": "cross-entropy", "ap": "AP hinge",
                  "ce+ap": f"cross-entropy + {mix or format(self.mix, 'g')} x AP hinge"
                  }[self.loss],
                 "full batch" if self.batch is None else
                 f"minibatches of {self.batch}{' (stratified)' if self.stratified else ''}"]
        if self.scale != 1.0 and self.loss != "ce":
            parts.append(f"hinge on {self.scale:g} x scores")
        if self.warm_steps:
            parts.append(f"first {self.warm_steps} steps cross-entropy")
        if self.one_per_row:
            parts.append("one network per row")
        return ", ".join(parts)


def _standardise(X, X_evals):
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    as_tensor = lambda A: torch.tensor((A - mean) / std, dtype=torch.float32)  # noqa: E731
    return as_tensor(X), [as_tensor(A) for A in X_evals]


def _epoch_batches(n, batch, key, rng):
    """An epoch's minibatches (index arrays): a shuffle, dealt by ``key`` if given."""
    order = rng.permutation(n)
    n_batches = max(1, n // batch)
    if key is None:
        return np.array_split(order, n_batches)
    dealt = order[np.argsort(key[order], kind="stable")]
    return [dealt[i::n_batches] for i in range(n_batches)]


def _query_batches(qid, batch, rng):
    """An epoch's minibatches of whole queries, about ``batch`` samples each."""
    queries = rng.permutation(np.unique(qid))
    members = {q: np.flatnonzero(qid == q) for q in queries}
    batches, current = [], []
    for q in queries:
        current.append(members[q])
        if sum(map(len, current)) >= batch:
            batches.append(np.concatenate(current))
            current = []
    if current:
        batches.append(np.concatenate(current))
    return batches


def _steps(n, recipe, key, qid, rng):
    """Minibatches, epoch after epoch, for ever."""
    while True:
        if recipe.batch is None:
            yield np.arange(n)
        elif qid is not None:
            yield from _query_batches(qid, recipe.batch, rng)
        else:
            yield from _epoch_batches(n, recipe.batch, key if recipe.stratified else None, rng)


def _loss(recipe, out, targets, qid, step):
    ce = torch.nn.functional.binary_cross_entropy_with_logits(out, targets)
    if recipe.loss == "ce" or step <= recipe.warm_steps:
        return ce
    if qid is None:
        hinge = ap_hinge_loss(recipe.scale * out, targets)
    else:
        hinge = ap_hinge_loss(recipe.scale * out[:, 0], targets[:, 0], torch.as_tensor(qid))
    return hinge if recipe.loss == "ap" else ce + recipe.mix * hinge


def fit_network(recipe: Recipe, params, X, Y, qid, X_evals, seed, positive_level, *,
                budgets=STEPS) -> dict:
    """The protocol's fit_predict for ``recipe`` (see ``Candidate``)."""
    # a grid may search the recipe's own settings (the hinge's weight) beside weight decay
    recipe = replace(recipe, **{k: v for k, v in params.items() if k != "weight_decay"})
    if recipe.one_per_row and Y.shape[1] > 1:
        columns = [fit_network(replace(recipe, one_per_row=False), params, X, Y[:, [c]], qid,
                               X_evals, seed + 7919 * c, positive_level, budgets=budgets)
                   for c in range(Y.shape[1])]
        return {b: [np.hstack([col[b][e] for col in columns]) for e in range(len(X_evals))]
                for b in budgets}
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    Xt, evals = _standardise(X, X_evals)
    positive = Y >= positive_level
    targets = torch.tensor(positive, dtype=torch.float32)
    # deal the samples by class: the row a sample is positive for (a single-label data set),
    # or the label itself where there is one row
    key = np.where(positive.any(axis=1), positive.argmax(axis=1), -1)
    net = torch.nn.Sequential(torch.nn.Linear(X.shape[1], HIDDEN), torch.nn.ReLU(),
                              torch.nn.Linear(HIDDEN, Y.shape[1]))
    opt = torch.optim.AdamW(net.parameters(), lr=LEARNING_RATE,
                            weight_decay=params.get("weight_decay", WEIGHT_DECAYS[0]))
    scores = {}
    batches = _steps(len(X), recipe, key, qid, rng)
    for step in range(1, budgets[-1] + 1):
        idx = next(batches)
        if bool(targets[idx].any()):     # a minibatch without positives ranks nothing
            opt.zero_grad()
            _loss(recipe, net(Xt[idx]), targets[idx], None if qid is None else qid[idx],
                  step).backward()
            opt.step()
        if step in budgets:
            with torch.no_grad():
                scores[step] = [net(A).double().numpy() for A in evals]
    return scores


#: The hinge's weights the recipe searches beside cross-entropy (weight decay fixed at the
#: smaller value): the exploration found 0.1, 1 and 10 each best on some data sets.
MIXES = (0.1, 1.0, 10.0)

#: The networks the final tables compare, with the settings their inner cross-validation
#: searches; the exploration (``experiments.nonlinear_explore``) tries more.
RECIPES = {
    "MLP cross-entropy": (Recipe(loss="ce", stratified=False),
                          tuple({"weight_decay": wd} for wd in WEIGHT_DECAYS)),
    "MLP AP hinge": (Recipe(loss="ap"), tuple({"weight_decay": wd} for wd in WEIGHT_DECAYS)),
    "MLP cross-entropy + AP hinge": (Recipe(loss="ce+ap"),
                                     tuple({"mix": mix} for mix in MIXES)),
}


def network_candidates(quick: bool = False, recipes=None) -> list[Candidate]:
    """The networks of the experiment as the harness's candidates (quick: the first setting
    of each grid and short budgets)."""
    budgets = QUICK_STEPS if quick else STEPS
    out = []
    for name, (recipe, grid) in (recipes or RECIPES).items():
        settings = (f"d -> {HIDDEN} (ReLU) -> outputs, AdamW lr {LEARNING_RATE:g}"
                    + ("" if "weight_decay" in grid[0] else
                       f", weight decay {WEIGHT_DECAYS[0]:g}") + "; "
                    + recipe.describe("mix" if "mix" in grid[0] else None))
        out.append(Candidate(name, "network", settings, grid[:1] if quick else grid, budgets,
                             partial(fit_network, recipe, budgets=budgets)))
    return out
