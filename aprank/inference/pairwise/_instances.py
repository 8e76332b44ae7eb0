"""The pairwise kind's seeded instances: linked samples (cliques, chains, random pairs) for
cross-checks, groups shaped like a recording's segments for benchmarks."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from aprank.inference._base import Instance, random_size, with_ties
from aprank.inference._protocol import Instances
from aprank.inference.pairwise._problem import PairwiseProblem, PairwiseResult, group_pairs

__all__ = ["PairwiseInstance", "PairwiseInstances", "group_instance"]


@dataclass(frozen=True)
class PairwiseInstance(Instance):
    """Seeded inputs of one cross-check of the pairwise kind: an :class:`Instance` with its
    ``edges`` and ``edge_scores``.

    Parameters
    ----------
    scores, labels, description, seed, trial, max_n
        As for :class:`~aprank.inference.Instance`.
    edges : ndarray of int64 (m, 2)
        The linked pairs.
    edge_scores : ndarray of float64 (m,)
        The score of cutting each pair.
    """

    edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    edge_scores: np.ndarray = field(default_factory=lambda: np.zeros(0))


class PairwiseInstances(Instances):
    """Instances of linked samples with pair scores <= 0 (paper 002)."""

    kind = "pairwise"

    def random_instance(self, seed: int, trial: int, max_n: int = 2000) -> PairwiseInstance:
        """Seeded instance number ``trial``: half with at most 12 samples (for the oracle),
        groups of linked samples (cliques, chains or random pairs), pair scores <= 0 with
        zeros among them, unary scores with and without ties; at least one positive and one
        negative sample (the default J = N / P needs both)."""
        rng = np.random.default_rng([seed, trial, 2002])
        n = random_size(rng, max_n, smallest=2)
        labels = rng.random(n) < rng.choice([0.2, 0.5])
        first = int(rng.integers(n))
        labels[first] = True
        if labels.all():
            # the default J = N / P needs a negative; drawing none would shift every later draw
            labels[(first + 1) % n] = False
        edges = _random_edges(rng, n)
        c = -np.abs(rng.standard_normal(edges.shape[0])) * rng.choice([0.3, 1.0, 3.0])
        c[rng.random(c.size) < 0.2] = 0.0
        ties, (scores, c) = with_ties(rng, rng.standard_normal(n), c)
        desc = f"n={n} m={edges.shape[0]} P={int(labels.sum())} ties={ties}"
        return PairwiseInstance(scores, labels, desc, seed, trial, max_n, edges=edges,
                                edge_scores=c)

    def bench_instance(self, P: int, N: int, shift: float, seed: int = 0, sizes=None,
                       group_size: int = 20) -> PairwiseInstance:
        """The benchmark's instance of a cell: P positives ~ N(shift, 1) among P + N samples in
        groups (``sizes``, or groups of ``group_size``: a recording's segments), every pair of
        a group linked, pair scores -|N(0, 1)| / 4."""
        return group_instance(P, N, shift, seed, group_size, sizes)

    def solve(self, instance: PairwiseInstance, loss, algorithm) -> PairwiseResult:
        """The instance solved for ``loss`` with ``algorithm``, max-marginals included."""
        return PairwiseProblem(instance.labels, loss, edges=instance.edges,
                   edge_scores=instance.edge_scores).solve_one(instance.scores, algorithm)

    def compare(self, result, reference, instance) -> Optional[str]:
        """Exact algorithms share the max-marginals (labellings may differ only under ties)."""
        scale = max(1.0, float(np.abs(reference.m_plus).max()), float(np.abs(reference.m_minus).max()))
        for name in ("m_plus", "m_minus"):
            diff = np.abs(getattr(result, name) - getattr(reference, name))
            if diff.max() > 1e-9 * scale:
                i = int(np.argmax(diff))
                return (f"{name}[{i}] = {getattr(result, name)[i].item()!r} != "
                        f"{getattr(reference, name)[i].item()!r}")
        return None


def _random_edges(rng, n):
    shape = int(rng.integers(3))
    if shape == 0:      # cliques of random groups (samples of one recording)
        group = rng.integers(0, max(1, n // 3), n)
        a, b = np.triu_indices(n, 1)
        keep = group[a] == group[b]
        return np.column_stack([a[keep], b[keep]]).astype(np.int64)
    if shape == 1:      # a chain
        return np.column_stack([np.arange(n - 1), np.arange(1, n)]).astype(np.int64)
    m = int(rng.integers(0, 2 * n))
    pairs = rng.integers(0, n, (m, 2))
    return pairs[pairs[:, 0] != pairs[:, 1]].astype(np.int64)


def group_instance(P: int, N: int, shift: float, seed: int = 0, group_size: int = 20,
                   sizes=None) -> PairwiseInstance:
    """P positives ~ N(shift, 1) among P + N samples split into groups (``sizes``, or groups
    of ``group_size``), every pair within a group linked with score -|N(0, 1)| / 4."""
    rng = np.random.default_rng(seed)
    n = P + N
    labels = np.zeros(n, dtype=bool)
    labels[rng.choice(n, P, replace=False)] = True
    scores = rng.standard_normal(n) + shift * labels
    if sizes is None:
        sizes = np.full(n // group_size, group_size)
        if n % group_size:
            sizes = np.r_[sizes, n % group_size]
    sizes = np.asarray(sizes, dtype=np.int64)
    edges = group_pairs(np.repeat(np.arange(sizes.size), sizes))
    c = -np.abs(rng.standard_normal(edges.shape[0])) / 4
    return PairwiseInstance(scores, labels, f"P={P} N={N} groups={sizes.size}", seed, 0, n,
                            edges=edges, edge_scores=c)
