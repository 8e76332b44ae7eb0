"""What the kinds' deep checks share: the description of one deep case, a metamorphic
relation, and the helpers that put sizes on both sides of a switch and draw scores whose sums
are exact.

The deep check (:func:`aprank.checks.deep_check`) runs every algorithm of a kind against a
slower exact algorithm of the zoo at sizes beyond brute force, on instance families built to
cross every internal switch of the fast paths, and checks the relations that must hold. Each
kind's :class:`~aprank.inference.Instances` says which: its named switches (read from the
constants of its code), its cases, the reference at scale, the paths an instance takes and its
relations.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

__all__ = ["DeepCase", "Relation", "around", "dyadic", "exact_shift", "close_within",
           "shiftable", "with_outliers", "SPREADS", "exact_sum", "objective_matches",
           "EXACT_UP_TO", "within"]

#: The outliers' exponents of the spread cases: one to three scores at +-2^e from the others
#: (2^10 ~ 1e3 ... 2^996 ~ 1e300), the spreads a tolerance on the scores' spread or magnitude
#: would fail at (docs/cross-checks.md).
SPREADS = (10, 40, 100, 330, 660, 996)

#: The largest instance (samples) whose objective the deep check recomputes in exact
#: rational arithmetic (fractions.Fraction): a few seconds at most.
EXACT_UP_TO = 20_000


@dataclass(frozen=True)
class DeepCase:
    """One instance of a kind's deep check, as the arguments that rebuild it.

    Parameters
    ----------
    family : str
        The instance family (e.g. "chains", "queries"): what
        :meth:`Instances.deep_instance` builds from ``params``.
    params : dict
        Keyword arguments of :meth:`Instances.deep_instance` (numbers, strings and tuples of
        them, so that a reproducer can write them out).
    losses : tuple of str
        The losses the instance is solved for.
    relations : bool
        Whether the kind's relations are checked on it too (each costs a few more solves).
    """

    family: str
    params: dict = field(default_factory=dict)
    losses: tuple = ()
    relations: bool = True


@dataclass(frozen=True)
class Relation:
    """A relation every (exact, or every) algorithm of a kind must satisfy.

    Parameters
    ----------
    name : str
        What is changed, e.g. "constant added to every score".
    check : callable
        ``check(instances, instance, loss, algorithm, rng)`` -> None when the relation holds,
        else what differs (one line). It solves what it needs through ``instances``.
    exact_only : bool
        True when only exact algorithms must satisfy it (an approximate one may break ties,
        and so land, otherwise on a changed input).
    applies : callable, optional
        ``applies(instance, algorithm)`` -> whether it is checked there (default: everywhere
        ``exact_only`` allows).
    """

    name: str
    check: Callable
    exact_only: bool = True
    applies: Callable | None = None

    def holds_for(self, instance, algorithm: str) -> bool:
        """Whether it is checked for ``algorithm`` on ``instance`` (``applies``, else yes)."""
        return self.applies is None or bool(self.applies(instance, algorithm))


def around(*thresholds: int, low: int = 1) -> list:
    """Sizes on both sides of each threshold t (t - 1, t, t + 1), at least ``low``, sorted.

    Parameters
    ----------
    *thresholds : int
        The switch values (a path taken up to t, another above).
    low : int, default 1
        The smallest size kept.

    Returns
    -------
    list of int
    """
    sizes = {max(low, t + d) for t in thresholds for d in (-1, 0, 1)}
    return sorted(sizes)


def dyadic(rng, n: int, bits: int = 16, span: float = 4.0) -> np.ndarray:
    """n normal-looking scores on the grid of 2^-bits, within about +-``span`` sigma: sums
    and differences of a few of them, and shifts by a power of two up to 2^(52 - bits - 8),
    are exact in float64 (what the shift relations need to compare answers exactly).

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int
    bits : int, default 16
    span : float, default 4.0

    Returns
    -------
    ndarray of float64 (n,)
    """
    x = np.clip(rng.standard_normal(n), -span, span)
    return np.round(x * 2.0 ** bits) / 2.0 ** bits


def exact_shift(s: np.ndarray, rng, most: int = 40) -> float | None:
    """A power of two c, of either sign, such that ``s + c`` is exact and finite: drawn up to
    2^``most`` times the largest |s|, then halved until exact (None when none from an
    eighth of the largest |s| up is exact, as for scores that use every bit of their
    mantissa).

    Parameters
    ----------
    s : ndarray of float64
    rng : numpy.random.Generator
    most : int, default 40

    Returns
    -------
    float or None
    """
    top = float(np.abs(s).max(initial=0.0))
    low = (int(np.frexp(top)[1]) if top > 0 else 0) - 2
    sign = 1.0 if rng.random() < 0.5 else -1.0
    for e in range(min(low + int(rng.integers(0, most)), 1021), low - 1, -1):
        c = np.ldexp(sign, e)
        moved = s + c
        if np.all(np.isfinite(moved)) and np.array_equal(moved - c, s):
            return c
    return None


def close_within(a, b, tol) -> str | None:
    """None when arrays (or numbers) ``a`` and ``b`` agree within ``tol`` (a number or an
    array broadcast against them) everywhere, else where and by how much they differ first.

    Parameters
    ----------
    a, b : float or ndarray
    tol : float or ndarray

    Returns
    -------
    str or None
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), np.broadcast_shapes(a.shape, b.shape))
    same = (a == b) | (np.abs(a - b) <= tol)
    if np.all(same):
        return None
    if a.ndim == 0:
        return f"{a.item()!r} != {b.item()!r} (tolerance {tol.item():.3g})"
    i = int(np.flatnonzero(~same.ravel())[0])
    return (f"[{i}] {a.ravel()[i].item()!r} != {b.ravel()[i].item()!r} (tolerance "
            f"{tol.ravel()[i].item():.3g}; {int((~same).sum())} of {same.size} differ)")


def with_outliers(rng, scores: np.ndarray, count: int, exponent: int,
                  labels: np.ndarray | None = None) -> np.ndarray:
    """``scores`` with ``count`` of them (random places) set to +-2^``exponent`` times a
    dyadic factor in [1, 2): one to a few scores far from the others, exact in float64.

    Parameters
    ----------
    rng : numpy.random.Generator
    scores : ndarray of float64
    count, exponent : int
    labels : ndarray of bool, optional
        Given, each far score takes its sample's side (positive where relevant): every
        good answer keeps it where it is, so the objective stays at the scale of the other
        scores and a wrong choice among them shows (a far score against its label makes the
        objective as large as itself, and its comparisons blind to the others).

    Returns
    -------
    ndarray of float64 (a copy)
    """
    s = np.array(scores, dtype=np.float64)
    if count <= 0 or s.size == 0:
        return s
    at = rng.choice(s.size, min(count, s.size), replace=False)
    sign = rng.choice([-1.0, 1.0], at.size)
    if labels is not None:
        sign = np.where(np.asarray(labels, dtype=bool)[at], 1.0, -1.0)
    s[at] = sign * np.ldexp(1.0 + np.round(rng.random(at.size) * 256) / 256, exponent)
    return s


def shiftable(scores: np.ndarray) -> bool:
    """Whether some power of two added to every score is exact (what the shift relations
    need): False for scores spread beyond float64's 53 bits of one another.

    Parameters
    ----------
    scores : ndarray of float64

    Returns
    -------
    bool
    """
    s = np.asarray(scores, dtype=np.float64)
    top = float(np.abs(s).max(initial=0.0))
    e = (int(np.frexp(top)[1]) if top > 0 else 0) + 1
    if e > 1021:
        return False
    c = np.ldexp(1.0, e)
    return bool(np.array_equal((s + c) - c, s))


def exact_sum(coefs, values) -> Fraction:
    """sum_i coefs_i values_i in rational arithmetic (values as the floats they are).

    Parameters
    ----------
    coefs : iterable of Fraction or int
    values : iterable of float

    Returns
    -------
    Fraction
    """
    total = Fraction(0)
    for c, v in zip(coefs, values):
        if c:
            total += c * Fraction(float(v))
    return total


def objective_matches(reported: float, exact: Fraction, loss: float, slack: float = 0.0,
                      ulps: int = 4) -> str | None:
    """None when ``reported`` is within ``ulps`` ulps of the exact objective ``exact`` (of
    the larger of it and the loss, the terms' scale where they cancel) plus ``slack`` (what
    rounded coefficients allow), else what differs.

    Parameters
    ----------
    reported : float
    exact : Fraction
    loss : float
    slack : float, default 0.0
    ulps : int, default 4

    Returns
    -------
    str or None
    """
    if not np.isfinite(reported):
        return f"reported objective {reported!r} is not finite"
    scale = max(abs(float(exact)), abs(loss), 2.0 ** -1022)
    tol = ulps * float(np.spacing(scale)) + slack
    off = abs(Fraction(reported) - exact)
    if off > Fraction(tol):
        return (f"reported objective {reported!r} is {float(off):.3g} from the output's exact "
                f"value {float(exact)!r} (tolerance {tol:.3g}: {ulps} ulps)")
    return None


def within(a: float, b: float, floor: float = 1e-12) -> float:
    """The tolerance between two objectives ``a`` and ``b`` of exact answers: 16 ulps of the
    larger (each is within a few ulps of its output's exact value, and the exact optima are
    equal), above ``floor`` (the loss's scale): relative to the quantities compared, never
    to the scores' spread or magnitude (one far score changes nothing). Not a larger share
    of the objective: where one far score makes it large, a wrong choice among the others
    still moves it by their size.

    Parameters
    ----------
    a, b : float
    floor : float, default 1e-12

    Returns
    -------
    float
    """
    return max(floor, 16 * 2.0 ** -53 * max(abs(float(a)), abs(float(b))))
