"""The top-k kind's seeded instances: one query of items, its k, a core and its
interactions."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import scipy.sparse as sp

from aprank.inference._base import InferenceResult, Instance, random_size, with_ties
from aprank.inference._protocol import Instances
from aprank.inference.topk._problem import TopKProblem
from aprank.losses import PrecisionAtK, get_loss

__all__ = ["TopKInstance", "TopKInstances"]


@dataclass(frozen=True)
class TopKInstance(Instance):
    """Seeded inputs of one cross-check of the top-k kind (one query): an :class:`Instance`
    with its subset size, core and interactions.

    Parameters
    ----------
    scores, labels, description, seed, trial, max_n
        As for :class:`~aprank.inference.Instance`.
    k : int
        The subset size.
    core : ndarray of int64 (C,)
        The core items.
    interactions : ndarray or sparse matrix (n, n), or None
        F, None without a core.
    """

    k: int = 1
    core: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    interactions: Optional[np.ndarray] = None


class TopKInstances(Instances):
    """Instances of one query of items with a core of interactions (paper 001)."""

    kind = "topk"

    def random_instance(self, seed: int, trial: int, max_n: int = 2000) -> TopKInstance:
        """Seeded instance number ``trial``: half with at most 12 items (for the oracle), core
        of 0-3 items, k anywhere in 1..n, scores and interactions with and without ties."""
        rng = np.random.default_rng([seed, trial, 1001])
        n = random_size(rng, max_n)
        labels = rng.random(n) < rng.choice([0.2, 0.5, 0.8])
        labels[int(rng.integers(n))] = True
        k = int(rng.integers(1, n + 1))
        C = int(rng.integers(0, min(3, n) + 1))
        core = np.sort(rng.choice(n, C, replace=False)).astype(np.int64)
        F = np.zeros((n, n))
        F[core, :] = rng.standard_normal((C, n))
        F[:, core] = rng.standard_normal((n, C))
        ties, (scores, F) = with_ties(rng, rng.standard_normal(n), F)
        desc = f"n={n} k={k} C={C} R={int(labels.sum())} ties={ties}"
        return TopKInstance(scores, labels, desc, seed, trial, max_n, k=k, core=core,
                            interactions=F if C else None)

    def bench_instance(self, P: int, N: int, shift: float, seed: int = 0,
                       n_core: int = 2) -> TopKInstance:
        """The benchmark's instance of a cell: P relevant items ~ N(shift, 1) among P + N,
        k = P, a core of ``n_core`` items with standard normal interactions."""
        rng = np.random.default_rng(seed)
        n = P + N
        labels = np.zeros(n, dtype=bool)
        labels[rng.choice(n, P, replace=False)] = True
        scores = rng.standard_normal(n) + shift * labels
        # Interactions as sparse core rows; past 2e6 items the benchmark drops them (C = 0:
        # plain top-k selection) to keep its memory small.
        C = n_core if n <= 2_000_000 else 0
        core = np.sort(rng.choice(n, C, replace=False)).astype(np.int64)
        F = None
        if C:
            F = sp.csr_matrix((rng.standard_normal(C * n), (np.repeat(core, n), np.tile(np.arange(n), C))),
                              shape=(n, n))
        return TopKInstance(scores, labels, f"P={P} N={N} C={C}", seed, 0, n, k=P, core=core,
                            interactions=F)

    def solve(self, instance: TopKInstance, loss, algorithm) -> InferenceResult:
        """The instance fixes k: the break-even loss of the registry becomes PrecisionAtK(k)."""
        loss = get_loss(loss)
        if getattr(loss, "k", None) is None:
            loss = PrecisionAtK(instance.k)
        core = instance.core if instance.interactions is not None else None
        return TopKProblem(instance.labels, loss, interactions=instance.interactions,
                   core=core).solve_one(instance.scores, algorithm)

    def compare(self, result, reference, instance) -> Optional[str]:
        """None: only the objective is compared."""
        # ties make several subsets optimal; the objective is what exact algorithms share
        return None
