"""The one table of inference algorithms.

Every algorithm, built-in or registered by a user, is an :class:`Algorithm` here; ``infer``,
``crosscheck``, the benchmark, the figures and the tests all read this table, so a new
algorithm takes part in all of them the day it is added.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

__all__ = ["Algorithm", "AlgorithmTable", "register", "unregister", "get", "algorithms", "for_loss"]


@dataclass(frozen=True)
class Algorithm:
    """One entry of the registry.

    run : ``run(problem)`` fills ``problem``'s outputs (see ``aprank._problem.Problem``).
    cost : optional model of the running time up to a constant, ``cost(P, N)``, used by the
        benchmark to skip cells it predicts to be too slow.
    max_samples : largest query the algorithm accepts (None: no limit).
    """

    name: str
    losses: tuple
    exact: bool
    complexity: str
    reference: str
    run: Callable
    cost: Optional[Callable] = None
    max_samples: Optional[int] = None
    builtin: bool = True

    def supports(self, loss_name: str) -> bool:
        return loss_name in self.losses


class AlgorithmTable(tuple):
    """The registry as a table: a tuple of :class:`Algorithm` that prints as a text table."""

    COLUMNS = ("name", "losses", "exact", "complexity", "reference")

    def rows(self):
        for a in self:
            yield (a.name, ", ".join(a.losses), "exact" if a.exact else "approximate",
                   a.complexity, a.reference)

    def __str__(self) -> str:
        rows = [self.COLUMNS, *self.rows()]
        widths = [max(len(r[c]) for r in rows) for c in range(len(self.COLUMNS))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    __repr__ = __str__

    def to_markdown(self) -> str:
        """The table as Markdown (the README's algorithm table is generated from this)."""
        out = ["| " + " | ".join(self.COLUMNS) + " |", "|" + "---|" * len(self.COLUMNS)]
        out += ["| " + " | ".join(r) + " |" for r in self.rows()]
        return "\n".join(out)


_REGISTRY: dict[str, Algorithm] = {}


def _add(algorithm: Algorithm, replace: bool = False) -> Algorithm:
    if algorithm.name in _REGISTRY and not replace:
        raise ValueError(f"an algorithm named {algorithm.name!r} is already registered")
    _REGISTRY[algorithm.name] = algorithm
    return algorithm


def register(name: str, func: Callable, *, losses, exact: bool, complexity: str = "",
             reference: str = "", replace: bool = False) -> Algorithm:
    """Add a user algorithm for ranking losses; it then takes part in ``crosscheck``.

    ``func(pos_scores, neg_scores, loss)`` receives float64 arrays with the scores of the
    positives and of the negatives of one query (input order) and the
    :class:`~aprank.losses.RankingLoss`; it returns the interleaving rank (1 ... P+1) of every
    negative. aprank computes coefficients, loss and objective from those ranks.

    A user algorithm declared ``exact=True`` is held to the same standard as the built-in ones
    by ``aprank.crosscheck``.
    """
    from aprank.inference._user import user_runner  # late: inference imports this module

    if not callable(func):
        raise TypeError("func must be callable")
    losses = (losses,) if isinstance(losses, str) else tuple(losses)
    unsupported = [name_ for name_ in losses if name_ not in ("ap", "ndcg")]
    if unsupported or not losses:
        raise ValueError(f"user algorithms serve the ranking losses 'ap' and 'ndcg'; got {losses}")
    return _add(Algorithm(name, losses, bool(exact), complexity, reference, user_runner(func),
                          builtin=False), replace=replace)


def unregister(name: str) -> None:
    """Remove a user algorithm (built-in algorithms cannot be removed)."""
    algorithm = get(name)
    if algorithm.builtin:
        raise ValueError(f"{name!r} is built in and cannot be removed")
    del _REGISTRY[name]


def get(name: str) -> Algorithm:
    """The algorithm called ``name``; ValueError listing the valid names otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown algorithm {name!r}; choose one of {sorted(_REGISTRY)}") from None


def algorithms() -> AlgorithmTable:
    """All registered algorithms as a table (print it)."""
    return AlgorithmTable(_REGISTRY.values())


def for_loss(loss_name: str, exact: Optional[bool] = None) -> list[Algorithm]:
    """Algorithms that serve ``loss_name`` (only exact or approximate ones if asked)."""
    return [a for a in _REGISTRY.values()
            if a.supports(loss_name) and (exact is None or a.exact == exact)]
