"""The pairwise kind's seeded instances: linked samples (cliques, chains, random pairs) for
cross-checks, groups shaped like a recording's segments for benchmarks."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from aprank.inference._base import Instance, random_size, with_ties
from aprank.inference._deep import (
    EXACT_UP_TO,
    SPREADS,
    DeepCase,
    Relation,
    around,
    close_within,
    exact_sum,
    objective_matches,
    with_outliers,
)
from aprank.inference._protocol import Instances
from aprank.inference.pairwise._maxflow_cy import DENSE_MAX, RESTORE_EVERY
from aprank.inference.pairwise._problem import (
    ENUMERATE_UP_TO,
    PairwiseProblem,
    PairwiseResult,
    group_pairs,
    max_marginals,
)

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
    """Instances of linked samples with pair scores <= 0 (Dokania et al. 2014)."""

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

    def compare(self, result, reference, instance) -> str | None:
        """Exact algorithms share the max-marginals (labellings may differ only under ties),
        each within :func:`_marginal_tolerance` of the reference's."""
        for name in ("m_plus", "m_minus"):
            what = _same_marginals(getattr(result, name), getattr(reference, name), instance)
            if what:
                return f"{name}{what}"
        return None

    # ------------------------------------------------------------------ the deep check
    def switches(self) -> dict:
        """Components of at most ENUMERATE_UP_TO samples are enumerated, of at most DENSE_MAX
        cut on a dense matrix, larger ones re-cut by one tree per sample, going back to the
        optimum's flow every RESTORE_EVERY samples ("graphcut")."""
        return {"ENUMERATE_UP_TO": ENUMERATE_UP_TO, "DENSE_MAX": int(DENSE_MAX),
                "RESTORE_EVERY": int(RESTORE_EVERY)}

    def deep_cases(self, seed: int, max_n: int) -> list:
        """Components of every shape with sizes on both sides of every switch, several of each
        size in one graph (components interleaved by a permutation of the samples), pair/unary
        scale ratios from 1e-300 to 1e300, zero and tied pairs, and up to ``max_n`` samples in
        components of 65-200 (several above DENSE_MAX in one call; cliques up to 10^4
        samples, where the reference's cuts from scratch take minutes)."""
        sw = self.switches()
        small = tuple(around(sw["ENUMERATE_UP_TO"], sw["DENSE_MAX"]))
        large = tuple(around(sw["RESTORE_EVERY"]))
        loss = ("pairwise-zero-one",)
        cases = []
        for s, shape in enumerate(SHAPES):
            for ratio in (1.0, 1e-8, 1e8):
                cases.append(DeepCase("components", dict(shape=shape, sizes=(1,) + small,
                                                         copies=3, ratio=ratio, seed=seed + s),
                                      loss))
            # around RESTORE_EVERY: sparse shapes (a clique of a thousand has half a million
            # pairs), compared with the reference only (the relations, a few cuts each of
            # every component, are checked on the smaller ones and on "random sizes")
            # (the other sparse shapes with a fourth component of twice that, past the CI
            # subset's sizes: their cuts from scratch take seconds each)
            if shape == "chain":
                cases.append(DeepCase("components", dict(shape=shape, sizes=large, copies=1,
                                                         ratio=1.0, seed=seed + s), loss,
                                      relations=False))
            elif shape in ("knn", "expander", "grid"):
                cases.append(DeepCase("components", dict(
                    shape=shape, sizes=large + (2 * sw["RESTORE_EVERY"] + 3,), copies=1,
                    ratio=1.0, seed=seed + s), loss, relations=False))
        # near ties: most samples' max-marginal flips their whole side, which pins them
        # for the later one-tree re-cuts; sides of both labels, sizes past DENSE_MAX and
        # (knn) around RESTORE_EVERY, where the optimum's flow is restored under the pins
        for s, shape in enumerate(("knn", "grid", "expander")):
            cases.append(DeepCase("components", dict(
                shape=shape, sizes=(sw["DENSE_MAX"] + 1, 3 * sw["DENSE_MAX"]), copies=2,
                ratio=1.0, near_tie=True, seed=seed + 110 + s), loss))
        cases.append(DeepCase("components", dict(shape="knn", sizes=(sw["RESTORE_EVERY"] + 3,),
                                                 copies=2, ratio=1.0, near_tie=True,
                                                 seed=seed + 113), loss, relations=False))
        for ratio in (1e-300, 1e300):
            cases.append(DeepCase("components", dict(shape="random", sizes=small, copies=2,
                                                     ratio=ratio, seed=seed), loss))
        for ties in ("unary", "pairs", "both", "zero pairs"):
            cases.append(DeepCase("components", dict(shape="clique", sizes=small, copies=2,
                                                     ratio=1.0, ties=ties, seed=seed), loss))
            cases.append(DeepCase("components", dict(shape="grid", sizes=small, copies=2,
                                                     ratio=1.0, ties=ties, seed=seed + 1), loss))
        n = 2_000
        while n <= min(max_n, 100_000):
            for shape in ("chain", "knn", "clique") if n <= 10_000 else ("chain", "knn"):
                cases.append(DeepCase("random sizes", dict(shape=shape, n=n, low=65, high=200,
                                                           seed=seed), loss,
                                      relations=n <= 20_000 and shape != "clique"))
            n *= 5 if n < 10_000 else 10
        # one to three unary scores far from the others (2^10 ... 2^996 times the rest): in
        # enumerated components of two and three (where every labelling holds the far score
        # alike but for its own label), and in components of every size
        for i, e in enumerate(SPREADS):
            cases.append(DeepCase("components", dict(
                shape="chain", sizes=(2, 3), copies=2, ratio=1.0, seed=seed + 90 + i,
                outliers=3, spread=e, agree=True), loss))
        for i, e in enumerate(SPREADS):
            for j, shape in enumerate(("chain", "clique", "grid")):
                cases.append(DeepCase("components", dict(
                    shape=shape, sizes=small, copies=2, ratio=1.0, seed=seed + 70 + 3 * i + j,
                    outliers=1 + (i + j) % 3, spread=e, agree=j % 2 == 0), loss))
        return [c for c in cases if _case_size(c) <= max_n]

    def deep_instance(self, family: str, **params) -> PairwiseInstance:
        """``"components"``: ``copies`` components of each of ``sizes`` of one ``shape``;
        ``"random sizes"``: ``n`` samples in components of ``low``-``high`` samples. Unary
        scores ~ N(0, 1), pair scores -|N(0, 1)| times ``ratio``; ``ties``: unary scores,
        pair scores or both rounded to integers, or a fifth of the pairs 0; ``outliers``
        unary scores (0 by default) at +-2^``spread``; ``near_tie``: each component's unary
        scores summing to +-0.5 (its whole flip cheaper than most samples' own)."""
        rng = np.random.default_rng([params.get("seed", 0), 37])
        if family == "components":
            sizes = np.repeat(np.asarray(params["sizes"], dtype=np.int64), params["copies"])
        elif family == "random sizes":
            drawn: list[int] = []
            left = int(params["n"])
            while left > 0:
                k = min(left, int(rng.integers(params["low"], params["high"] + 1)))
                drawn.append(k)
                left -= k
            sizes = np.asarray(drawn, dtype=np.int64)
        else:
            return super().deep_instance(family, **params)
        instance = _component_instance(rng, params["shape"], sizes, params.get("ratio", 1.0),
                                       params.get("ties", "none"),
                                       f"{family} {_describe(params)}", params.get("seed", 0),
                                       params.get("near_tie", False))
        if params.get("outliers", 0):
            instance = replace(instance, scores=with_outliers(
                rng, instance.scores, int(params["outliers"]), int(params["spread"]),
                instance.labels if params.get("agree") else None))
        return instance

    def deep_reference(self, loss, instance) -> str | None:
        """Cuts from scratch (``graphcut-static``): no kept flow, trees or dense paths."""
        return "graphcut-static"

    def paths(self, instance, algorithm: str, result=None) -> tuple:
        """The component sizes the instance has, on each side of the switches of
        ``algorithm`` ("graphcut": enumeration, dense cuts, one-tree re-cuts, restores), and
        its pair/unary scale."""
        comp = _components(instance)
        k = np.bincount(comp)
        sw = self.switches()
        tags = []
        if algorithm == "graphcut":
            e, d, r = sw["ENUMERATE_UP_TO"], sw["DENSE_MAX"], sw["RESTORE_EVERY"]
            for test, tag in ((k == 1, "single samples"),
                              ((k >= 2) & (k <= e), f"enumerated (k <= ENUMERATE_UP_TO = {e})"),
                              ((k > e) & (k <= d), f"dense cuts ({e} < k <= DENSE_MAX = {d})"),
                              (k > d, f"one-tree re-cuts (k > {d})"),
                              (k > r, f"restored flows (k > RESTORE_EVERY = {r})")):
                if np.any(test):
                    tags.append(tag)
            if np.sum(k > d) >= 2:
                tags.append(f"two or more components of k > {d}")
            if result is not None and _pinned_sides(instance, result, comp, d):
                tags.append(f"pinned re-cuts (k > {d}: max-marginals at a side's whole flip)")
        else:
            tags += [tag for test, tag in ((k == 1, "single samples"), (k >= 2, "cuts (k >= 2)"))
                     if np.any(test)]
        scale = _pair_scale(instance)
        if scale is not None:
            tags.append(scale)
        return tuple(tags)

    def tolerance(self, instance) -> float:
        """The objective sums the samples and pairs whose label or cut differs from the
        labels', correctly rounded: two exact objectives agree to within 1e-12 of their
        size (the deep check's relative margin), above this floor at the loss's scale; the
        max-marginals are compared entry by entry, at the scale of their own terms, by
        :meth:`compare`."""
        return 1e-12

    def relations(self) -> tuple:
        """Samples permuted; pairs reordered and their ends swapped; the graph split into
        parts of whole components; every score scaled by a power of two; the graph and a
        copy of it as one problem."""
        return (Relation("samples permuted", _samples_permuted),
                Relation("pairs reordered and flipped", _pairs_reordered),
                Relation("split into its components", _split),
                Relation("scaled by a power of two", _scaled),
                Relation("graph duplicated", _duplicated),
                Relation("reported objective = the output's, exactly", _reported_objective,
                         applies=lambda instance, algorithm: instance.size <= EXACT_UP_TO))


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


# ---------------------------------------------------------------------------- deep check
#: The shapes of the deep check's components.
SHAPES = ("chain", "star", "clique", "grid", "knn", "expander", "random")


def _case_size(case) -> int:
    p = case.params
    return int(p["n"]) if "n" in p else int(np.sum(p["sizes"]) * p["copies"])


def _describe(params) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items() if k != "seed")


def _shape_pairs(rng, shape: str, k: int) -> np.ndarray:
    """The pairs of one connected component of k samples (local indices) of ``shape``."""
    chain = np.column_stack([np.arange(k - 1), np.arange(1, k)])
    if k < 2:
        return np.zeros((0, 2), dtype=np.int64)
    if shape == "chain":
        e = chain
    elif shape == "star":
        e = np.column_stack([np.zeros(k - 1, dtype=np.int64), np.arange(1, k)])
    elif shape == "clique":
        e = np.column_stack(np.triu_indices(k, 1))
    elif shape == "grid":
        cols = max(1, int(np.sqrt(k)))
        i = np.arange(k)
        right = i[(i % cols < cols - 1) & (i + 1 < k)]
        down = i[i + cols < k]
        e = np.r_[np.column_stack([right, right + 1]), np.column_stack([down, down + cols])]
        if cols == 1:
            e = chain
    elif shape == "knn":
        x = rng.standard_normal((k, 2))
        nn = min(5, k - 1)
        _, idx = cKDTree(x).query(x, nn + 1)
        e = np.r_[np.column_stack([np.repeat(np.arange(k), nn), idx[:, 1:].ravel()]), chain]
    elif shape == "expander":
        # three random matchings over a chain: every set of samples has many pairs leaving it
        e = np.r_[chain] if k < 4 else np.r_[
            chain, *[np.column_stack([np.arange(k), rng.permutation(k)]) for _ in range(3)]]
    elif shape == "random":
        m = 2 * k
        e = np.r_[chain, rng.integers(0, k, (m, 2))]
    else:
        raise ValueError(f"unknown shape {shape!r}; one of {SHAPES}")
    e = e[e[:, 0] != e[:, 1]]
    return np.unique(np.sort(e, axis=1), axis=0).astype(np.int64)


def _component_instance(rng, shape, sizes, ratio, ties, description, seed,
                        near_tie=False) -> PairwiseInstance:
    """Components of ``sizes`` of one shape, their samples spread over the index range by a
    permutation (so that no component's samples are contiguous). ``near_tie``: each
    component's unary scores centred to sum to +0.5 or -0.5 (in turn), so that, the pairs
    holding it to one label, flipping it whole costs less than most samples' own flips."""
    offsets = np.r_[0, np.cumsum(sizes)]
    n = int(offsets[-1])
    edges = np.concatenate([_shape_pairs(rng, shape, int(k)) + a
                            for k, a in zip(sizes, offsets[:-1])] or [np.zeros((0, 2), int)])
    perm = rng.permutation(n)
    edges = perm[edges].astype(np.int64)
    s = rng.standard_normal(n)
    c = -np.abs(rng.standard_normal(edges.shape[0]))
    if near_tie:
        for q, (a, b) in enumerate(zip(offsets[:-1], offsets[1:])):
            members = perm[a:b]
            s[members] += (0.5 if q % 2 == 0 else -0.5) / (b - a) - s[members].mean()
    if ties in ("unary", "both"):
        s = np.round(s)
    if ties in ("pairs", "both"):
        c = np.round(c)
    if ties == "zero pairs":
        c[rng.random(c.size) < 0.2] = 0.0
    c = c * ratio
    labels = rng.random(n) < 0.3
    labels[int(rng.integers(n))] = True
    labels[(int(np.flatnonzero(labels)[0]) + 1) % n] = False
    return PairwiseInstance(s, labels, f"{description} n={n} m={edges.shape[0]}", seed, 0, n,
                            edges=edges, edge_scores=c)


def _pinned_sides(instance, result, comp, dense_max) -> bool:
    """Whether two or more samples of one side (the samples of one label) of a component
    (``comp``: :func:`_components`) of more than ``dense_max`` samples have as their other
    max-marginal the value of that side flipped whole: the samples "graphcut" pins
    (``_maxflow_cy._pin_rule``). The flip's value is the result's maximum less the side's
    (loss-augmented) unary terms and plus the pairs it stops cutting."""
    if result.m_plus is None:
        return False
    n = instance.size
    live = instance.edge_scores != 0
    e, c = instance.edges[live], instance.edge_scores[live]
    problem = PairwiseProblem(instance.labels, edges=instance.edges,
                              edge_scores=instance.edge_scores)
    u = instance.scores + problem.loss_unary
    y = result.labelling.astype(bool)
    side = 2 * comp + y
    flip = np.bincount(side, np.where(y, -u, u), minlength=2 * n)
    cut = y[e[:, 0]] != y[e[:, 1]]
    for end in (0, 1):
        flip -= np.bincount(side[e[cut, end]], c[cut], minlength=2 * n)
    other = np.where(y, result.m_minus, result.m_plus)
    at = np.abs(other - (result.value + flip[side])) <= _marginal_tolerance(
        other, result.value + flip[side], instance)
    large = np.bincount(comp)[comp] > dense_max
    return bool(np.any(np.bincount(side[at & large], minlength=2 * n) >= 2))


def _components(instance) -> np.ndarray:
    """Per sample, its component (numbered from 0) among those the non-zero pairs link."""
    n = instance.size
    e = instance.edges[instance.edge_scores != 0]
    adjacency = sp.csr_matrix((np.ones(e.shape[0]), (e[:, 0], e[:, 1])), shape=(n, n))
    return connected_components(adjacency, directed=False)[1]


def _pair_scale(instance) -> str | None:
    c = np.abs(instance.edge_scores[instance.edge_scores != 0])
    if not c.size:
        return None
    ratio = float(np.median(c)) / max(float(np.median(np.abs(instance.scores))), 1e-300)
    if ratio >= 1e8:
        return "pair scores >= 1e8 x unary"
    if ratio <= 1e-8:
        return "pair scores <= 1e-8 x unary"
    return None


def _marginal_tolerance(a, b, instance):
    """Rounding margin of two max-marginals: a sum over samples and cut pairs rounds at the
    scale of its own terms (the larger of the two values cannot hide a difference, as a
    forced cut of a pair of 1e300 against none would)."""
    return 1e-12 * (1.0 + float(np.abs(instance.scores).sum())) + 1e-9 * np.minimum(
        np.abs(a), np.abs(b))


def _same_marginals(a, b, instance) -> str | None:
    return close_within(a, b, _marginal_tolerance(a, b, instance))


def _solve_graph(instance, algorithm, scores=None, edges=None, edge_scores=None):
    """The plain maximisation (no labels, no loss) of the instance's graph, or of the given
    parts of it."""
    return max_marginals(instance.scores if scores is None else scores,
                         instance.edges if edges is None else edges,
                         instance.edge_scores if edge_scores is None else edge_scores,
                         algorithm=algorithm)


def _samples_permuted(instances, instance, loss, algorithm, rng):
    """The loss-augmented problem with its samples renumbered: the same max-marginals,
    renumbered."""
    perm = rng.permutation(instance.size)            # new sample j is old sample perm[j]
    where = np.argsort(perm)
    moved = PairwiseInstance(instance.scores[perm], instance.labels[perm], instance.description,
                             instance.seed, instance.trial, instance.max_n,
                             edges=where[instance.edges], edge_scores=instance.edge_scores)
    a = instances.solve(instance, loss, algorithm)
    b = instances.solve(moved, loss, algorithm)
    for name in ("m_plus", "m_minus"):
        what = _same_marginals(getattr(b, name), getattr(a, name)[perm], instance)
        if what:
            return f"{name}{what}"
    return None


def _pairs_reordered(instances, instance, loss, algorithm, rng):
    order = rng.permutation(instance.edges.shape[0])
    edges = instance.edges[order]
    flip = rng.random(order.size) < 0.5
    edges[flip] = edges[flip][:, ::-1]
    a = _solve_graph(instance, algorithm)
    b = _solve_graph(instance, algorithm, edges=edges, edge_scores=instance.edge_scores[order])
    return _both_marginals(b.m_plus, b.m_minus, a.m_plus, a.m_minus, instance)


def _both_marginals(plus, minus, want_plus, want_minus, instance):
    for name, x, y in (("m_plus", plus, want_plus), ("m_minus", minus, want_minus)):
        what = _same_marginals(x, y, instance)
        if what:
            return f"{name}{what}"
    return None


def _split(instances, instance, loss, algorithm, rng):
    """The graph as three parts of whole components, each solved alone: the whole's value is
    the parts' sum, a sample's max-marginal its part's plus the other parts' maxima."""
    n = instance.size
    e, c = instance.edges, instance.edge_scores
    comp = _components(instance)
    part = rng.integers(0, 3, int(comp.max(initial=-1)) + 1)[comp]
    whole = _solve_graph(instance, algorithm)
    plus, minus = np.empty(n), np.empty(n)
    values = []
    for p in range(3):
        nodes = np.flatnonzero(part == p)
        if not nodes.size:
            continue
        local = np.full(n, -1)
        local[nodes] = np.arange(nodes.size)
        keep = (part[e[:, 0]] == p) & (part[e[:, 1]] == p)
        r = _solve_graph(instance, algorithm, scores=instance.scores[nodes],
                         edges=local[e[keep]], edge_scores=c[keep])
        values.append(r.value)
        plus[nodes], minus[nodes] = r.m_plus - r.value, r.m_minus - r.value
    total = float(np.sum(values))
    what = close_within(whole.value, total, _marginal_tolerance(whole.value, total, instance))
    if what:
        return f"value {what}"
    return _both_marginals(whole.m_plus, whole.m_minus, plus + total, minus + total, instance)


def _scaled(instances, instance, loss, algorithm, rng):
    """Every unary and pair score times 2^e: the maximum and max-marginals times 2^e."""
    top = max(float(np.abs(instance.scores).max(initial=0.0)),
              float(np.abs(instance.edge_scores).max(initial=0.0)))
    # toward the middle of float64's range: pair scores of 1e300 scaled up would overflow
    sign = -1 if top > 1e200 else 1 if top < 1e-200 else (1 if rng.random() < 0.5 else -1)
    f = 2.0 ** (sign * int(rng.integers(1, 9)))
    a = _solve_graph(instance, algorithm)
    b = _solve_graph(instance, algorithm, scores=instance.scores * f,
                     edge_scores=instance.edge_scores * f)
    return _both_marginals(b.m_plus / f, b.m_minus / f, a.m_plus, a.m_minus, instance)


def _duplicated(instances, instance, loss, algorithm, rng):
    """The graph and a copy of it, as one problem: each sample's max-marginal plus the
    copy's maximum, twice."""
    n = instance.size
    a = _solve_graph(instance, algorithm)
    b = _solve_graph(instance, algorithm, scores=np.r_[instance.scores, instance.scores],
                     edges=np.r_[instance.edges, instance.edges + n],
                     edge_scores=np.r_[instance.edge_scores, instance.edge_scores])
    return _both_marginals(b.m_plus, b.m_minus, np.r_[a.m_plus, a.m_plus] + a.value,
                           np.r_[a.m_minus, a.m_minus] + a.value, instance)


def _reported_objective(instances, instance, loss, algorithm, rng):
    """The reported objective within a few ulps of the exact value of its output (the
    labelling y): Delta(y) + score(y) - score(labels), in rational arithmetic."""
    r = instances.solve(instance, loss, algorithm)
    problem = PairwiseProblem(instance.labels, loss, edges=instance.edges,
                              edge_scores=instance.edge_scores)
    y, z = r.labelling.astype(bool), problem.is_pos
    v, norm = problem.loss.weights(z)
    delta = (exact_sum([1] * int(np.sum(y != z)), v[y != z]) / Fraction(float(norm))
             if norm > 0 else Fraction(0))
    e = instance.edges
    cut = (y[e[:, 0]] != y[e[:, 1]]).astype(int) - (z[e[:, 0]] != z[e[:, 1]]).astype(int)
    exact = (delta + exact_sum((y.astype(int) - z.astype(int)).tolist(), instance.scores)
             + exact_sum(cut.tolist(), instance.edge_scores))
    return objective_matches(r.objective, exact, r.loss)
