"""The one table of inference algorithms, and the problem kinds they solve.

Every algorithm, built-in or registered by a user, is an :class:`Algorithm` here, and declares
the :class:`ProblemKind` it solves; ``infer``, the models, ``crosscheck``, the benchmark, the
figures and the tests all read this table, so a new algorithm takes part in all of them the day
it is added. A kind is a validated problem type, its brute-force oracle and its algorithms:
adding one touches nothing else.

Algorithms travel by name: an :class:`Algorithm` pickles as its (kind, name) and unpickles as
the entry of that name in the receiving process. The table is per process: a user algorithm
registered in one process is unknown to a worker process until the worker registers it too.
"""
from __future__ import annotations

import re
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from aprank.inference._protocol import Instances, Problem
from aprank.losses import LOSSES, Loss, get_loss

__all__ = ["Algorithm", "AlgorithmTable", "ProblemKind", "add_kind", "add", "remove", "get",
           "get_kind", "kinds", "algorithms", "resolve", "as_algorithm", "SlowAlgorithmWarning",
           "faster_alternative", "warn_if_slow", "warn_if_slow_call", "per_query_seconds",
           "estimated_seconds", "SLOW_CALL_SECONDS", "version"]


@dataclass(frozen=True)
class ProblemKind:
    """One kind of loss-augmented inference problem.

    Parameters
    ----------
    name : str
        E.g. "ranking" (scores and binary labels to a ranking, losses AP and NDCG) or
        "labelling" (to a labelling, the weighted 0-1 loss). A loss declares its kind.
    description : str
        One line: what goes in and what comes out.
    problem_type : type
        The validated problem class, a subclass of :class:`~aprank.inference.Problem`.
    instances : Instances
        The kind's seeded inputs, an :class:`~aprank.inference.Instances`: cross-check and
        benchmark instances, how to solve and compare them, reproducers.
    oracle : str
        Name of the kind's brute-force algorithm, the reference of every exact one.
    default : str, optional
        The algorithm ``infer`` uses for the kind's losses when none is named.
    defaults : tuple of (str, str)
        (loss name, algorithm) pairs overriding ``default`` for some losses (a kind whose
        losses have no algorithm in common, e.g. "latent").
    """

    name: str
    description: str
    problem_type: type
    instances: Instances
    oracle: str
    default: str | None = None
    defaults: tuple = ()

    def default_for(self, loss) -> str | None:
        """The algorithm used for ``loss`` (a name or a Loss) when none is named."""
        return dict(self.defaults).get(get_loss(loss).name, self.default)

    def losses(self) -> list[str]:
        """Names of the registered losses of this kind."""
        return [name for name, loss in LOSSES.items() if loss.kind == self.name]

    def __reduce__(self):
        return get_kind, (self.name,)


@dataclass(frozen=True)
class Algorithm:
    """One entry of the registry.

    Parameters
    ----------
    name : str
        Its name (letters, digits and ``_.+-``): what ``algorithm=`` takes.
    kind : str
        The name of the problem kind it solves.
    losses : tuple of str or None
        Names of the losses it serves; None for a kind's oracle, which works from the losses'
        definitions and so serves every loss of its kind.
    exact : bool
        Whether it returns an optimum (checked against the kind's oracle by
        :func:`aprank.crosscheck`) or only a lower bound of it.
    complexity : str
        Its running time, for the table.
    reference : str
        Where it comes from (paper, section), for the table.
    run : callable
        ``run(call)`` fills the outputs of one validated call (the call type of the kind's
        ``_problem.py``).
    cost : callable, optional
        Model of the running time of one query up to a constant, ``cost(P, N)``: it compares
        algorithms (the warning naming a faster one) and lets the benchmark skip cells
        predicted to be too slow.
    seconds : callable, optional
        Estimated seconds of one whole call, ``seconds(call)`` for the call ``run`` takes
        (every query, every component; its constants measured): a call estimated over
        SLOW_CALL_SECONDS warns before it starts (:func:`warn_if_slow_call`).
    max_samples : int, optional
        Largest query the algorithm accepts (None: no limit).
    builtin : bool
        False for a user's algorithm (``aprank.register``).

    Notes
    -----
    An entry pickles as its (name, kind) and unpickles as the entry of that name in the
    receiving process.
    """

    name: str
    kind: str
    losses: tuple | None
    exact: bool
    complexity: str
    reference: str
    run: Callable
    cost: Callable | None = None
    seconds: Callable | None = None
    max_samples: int | None = None
    builtin: bool = True

    def supports(self, loss) -> bool:
        """Whether it serves ``loss`` (a Loss, or the name of a registered one)."""
        loss = get_loss(loss)
        return loss.kind == self.kind and (self.losses is None or loss.name in self.losses)

    def __reduce__(self):
        # by name: the receiving process looks the algorithm up in its own table
        return get, (self.name, self.kind)


class AlgorithmTable(tuple):
    """The registry as a table: a tuple of :class:`Algorithm` that prints as a text table at
    most 100 columns wide (:meth:`to_text`) and writes itself as Markdown (:meth:`to_markdown`).

    Parameters
    ----------
    iterable : iterable of Algorithm
        The rows.
    """

    COLUMNS = ("kind", "name", "losses", "exact", "complexity", "reference")

    def rows(self):
        for a in self:
            yield (a.kind, a.name, "any" if a.losses is None else ", ".join(a.losses),
                   "exact" if a.exact else "approximate", a.complexity, a.reference)

    def names(self) -> list[str]:
        return [a.name for a in self]

    #: the widest line of the printed table: a terminal's usual width, or a little more
    WIDTH = 100
    #: the columns aligned on an algorithm's first line; the long ones are wrapped below it
    _SHORT = ("kind", "name", "losses", "exact")

    def to_text(self, width: int = WIDTH) -> str:
        """The table as text at most ``width`` columns wide.

        One line per algorithm holds its short fields (kind, name, losses, exactness) in
        aligned columns; its complexity and reference follow, wrapped and indented under it,
        since side by side the six columns need over 400 columns. Words are never split, so
        only a single word wider than ``width`` could exceed it.

        Parameters
        ----------
        width : int, default 100
            The widest line.

        Returns
        -------
        str
            The table, lines joined by newlines.
        """
        rows = [dict(zip(self.COLUMNS, row)) for row in self.rows()]
        widths = [max([len(c)] + [len(r[c]) for r in rows]) for c in self._SHORT]
        # a long list of losses wraps within its column, so the short fields stay aligned
        losses = self._SHORT.index("losses")
        room = width - sum(w for k, w in enumerate(widths) if k != losses) - 2 * len(widths) + 2
        widths[losses] = max(len("losses"), min(widths[losses], room))

        def line(cells):
            return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

        out = [line(self._SHORT), line(["-" * w for w in widths])]
        for row in rows:
            cells = [[row[c]] for c in self._SHORT]
            cells[losses] = textwrap.wrap(row["losses"], widths[losses],
                                          break_long_words=False, break_on_hyphens=False)
            out += [line([c[k] if k < len(c) else "" for c in cells])
                    for k in range(max(map(len, cells)))]
            for label in ("complexity", "reference"):
                out += textwrap.wrap(row[label], width, initial_indent=f"    {label + ':':12}",
                                     subsequent_indent=" " * 16, break_long_words=False,
                                     break_on_hyphens=False)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.to_text()

    __repr__ = __str__

    def to_markdown(self) -> str:
        """The table as Markdown (the README's algorithm table is generated from this)."""
        out = ["| " + " | ".join(self.COLUMNS) + " |", "|" + "---|" * len(self.COLUMNS)]
        out += ["| " + " | ".join(r) + " |" for r in self.rows()]
        return "\n".join(out)


_KINDS: dict[str, ProblemKind] = {}
_TABLE: dict[tuple[str, str], Algorithm] = {}
#: Bumped by every change of the table (add_kind, add, remove): caches of lookups compare it.
_VERSION = [0]


def version() -> int:
    """A number that changes whenever a kind or algorithm is added or removed."""
    return _VERSION[0]


def add_kind(kind: ProblemKind) -> ProblemKind:
    """Put a problem kind in the table: its problem type must subclass ``Problem`` and its
    instances be an ``Instances`` of that kind (the shape every kind has, ``_protocol.py``)."""
    if not (isinstance(kind.problem_type, type) and issubclass(kind.problem_type, Problem)):
        raise TypeError(f"the problem type of kind {kind.name!r} must subclass "
                        f"aprank.inference.Problem, got {kind.problem_type!r}")
    if not isinstance(kind.instances, Instances) or kind.instances.kind != kind.name:
        raise TypeError(f"the instances of kind {kind.name!r} must be an "
                        f"aprank.inference.Instances of that kind, got {kind.instances!r}")
    if kind.name in _KINDS:
        raise ValueError(f"problem kind {kind.name!r} is already defined")
    _KINDS[kind.name] = kind
    _VERSION[0] += 1
    return kind


def get_kind(name: str) -> ProblemKind:
    """The problem kind called ``name``.

    Parameters
    ----------
    name : str
        A kind's name ("ranking", "labelling", "topk", "pairwise", "latent").

    Returns
    -------
    ProblemKind

    Raises
    ------
    ValueError
        An unknown name (the message lists the kinds).
    """
    try:
        return _KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown problem kind {name!r}; the kinds are {sorted(_KINDS)}") from None


def kinds() -> tuple[ProblemKind, ...]:
    """Every problem kind, in the order defined."""
    return tuple(_KINDS.values())


#: What an algorithm's name may look like: it is a command-line word (``python -m aprank``), a
#: cell of the printed and Markdown tables and a pickled key, so no spaces, bars or newlines.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def _check_entry(algorithm: Algorithm) -> None:
    """ValueError/TypeError for an entry that would break the table, its printing or lookups."""
    name = algorithm.name
    if not isinstance(name, str) or NAME_PATTERN.fullmatch(name) is None:
        raise ValueError(f"an algorithm's name must be a string of letters, digits and '_.+-' "
                         f"starting with a letter or digit, got {name!r}")
    for field_name in ("complexity", "reference"):
        if not isinstance(getattr(algorithm, field_name), str):
            raise TypeError(f"{field_name} must be a string, got "
                            f"{getattr(algorithm, field_name)!r}")
    if not isinstance(algorithm.exact, bool):
        raise TypeError(f"exact must be True or False, got {algorithm.exact!r}")
    if algorithm.losses is not None and (not isinstance(algorithm.losses, tuple) or not all(
            isinstance(loss, str) for loss in algorithm.losses)):
        raise TypeError(f"losses must be a tuple of loss names, got {algorithm.losses!r}")
    if not callable(algorithm.run):
        raise TypeError("an algorithm's run must be callable")
    for field_name in ("cost", "seconds"):
        model = getattr(algorithm, field_name)
        if model is not None and not callable(model):
            # found out only when a call is about to run, far from where it was registered
            raise TypeError(f"an algorithm's {field_name} must be callable or None, got {model!r}")


def add(algorithm: Algorithm, replace: bool = False) -> Algorithm:
    """Put an algorithm in the table (its kind must exist).

    Built-in entries are never replaced or removed. A user entry (``builtin=False``) takes a
    name of its own: one no built-in entry of any kind uses (``infer`` and ``get`` find
    algorithms by name); ``replace=True`` replaces only an earlier user entry of that name.
    """
    get_kind(algorithm.kind)
    _check_entry(algorithm)
    key = (algorithm.kind, algorithm.name)
    if not algorithm.builtin:
        taken = [k for (k, n), a in _TABLE.items() if n == algorithm.name and a.builtin]
        if taken:
            raise ValueError(f"an algorithm named {algorithm.name!r} is already registered as a "
                             f"built-in algorithm (of the {', '.join(taken)} kind); a user "
                             "algorithm needs a name of its own")
    old = _TABLE.get(key)
    if old is not None and (not replace or old.builtin):
        raise ValueError(f"an algorithm named {algorithm.name!r} is already registered for the "
                         f"{algorithm.kind!r} kind" + (" (built in)" if old.builtin else
                                                       "; pass replace=True to replace it"))
    _TABLE[key] = algorithm
    _VERSION[0] += 1
    return algorithm


def remove(name: str, kind: str | None = None) -> None:
    algorithm = get(name, kind)
    if algorithm.builtin:
        raise ValueError(f"{name!r} is built in and cannot be removed")
    del _TABLE[algorithm.kind, algorithm.name]
    _VERSION[0] += 1


def get(name: str, kind: str | None = None) -> Algorithm:
    """The algorithm called ``name``.

    Parameters
    ----------
    name : str
        Its name.
    kind : str, optional
        Its kind, which a name shared by several kinds needs (e.g. each kind's oracle
        ``brute``).

    Returns
    -------
    Algorithm

    Raises
    ------
    ValueError
        An unknown or ambiguous name (the message lists the valid names).
    """
    if kind is not None:
        get_kind(kind)
        found = [_TABLE[kind, name]] if isinstance(name, str) and (kind, name) in _TABLE else []
    else:
        found = [a for (k, n), a in _TABLE.items() if n == name]
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(f"{name!r} names an algorithm of several kinds "
                         f"({', '.join(a.kind for a in found)}); pass kind= to choose")
    names = sorted({n for (k, n) in _TABLE if kind is None or k == kind})
    where = "" if kind is None else f" for the {kind!r} kind"
    raise ValueError(f"unknown algorithm {name!r}{where}; choose one of {names}")


def algorithms(kind: str | None = None, loss=None, exact: bool | None = None) -> AlgorithmTable:
    """The registered algorithms as a table (print it).

    Parameters
    ----------
    kind : str, optional
        Only those of this problem kind.
    loss : str or Loss, optional
        Only those serving this loss.
    exact : bool, optional
        Only exact (True) or only approximate (False) ones.

    Returns
    -------
    AlgorithmTable
    """
    from_loss = None if loss is None else get_loss(loss)
    if kind is not None:
        get_kind(kind)
    return AlgorithmTable(
        a for a in _TABLE.values()
        if (kind is None or a.kind == kind) and (from_loss is None or a.supports(from_loss))
        and (exact is None or a.exact == exact))


def resolve(loss: Loss, algorithm) -> Algorithm:
    """The algorithm named ``algorithm`` (a name, or an :class:`Algorithm` itself) for the loss.

    Parameters
    ----------
    loss : Loss
        The loss the algorithm must serve.
    algorithm : str or Algorithm
        A registry name, or an entry (looked up again by its name and kind).

    Returns
    -------
    Algorithm

    Raises
    ------
    ValueError
        An unknown name (the message lists the algorithms serving the loss).
    NotImplementedError
        The algorithm does not serve the loss (the message names the algorithms that do).
    """
    if isinstance(algorithm, Algorithm):
        if algorithm.supports(loss):
            return algorithm        # resolved already (a model holds the entry)
        algorithm = algorithm.name  # the errors below name what serves the loss
    get_kind(loss.kind)
    named = [a for (k, n), a in _TABLE.items() if n == algorithm]
    if not named:
        # the choices that make sense here: the algorithms serving this loss, not every kind's
        raise ValueError(f"unknown algorithm {algorithm!r} for the loss {loss.name!r}; choose one "
                         f"of {sorted(algorithms(loss=loss).names())}")
    algo = next((a for a in named if a.kind == loss.kind), named[0])
    if not algo.supports(loss):
        serves = (f"any {algo.kind} loss" if algo.losses is None and algo.kind != loss.kind
                  else ", ".join(algo.losses or ()))
        raise NotImplementedError(
            f"algorithm {algo.name!r} does not serve the loss {loss.name!r} (it serves {serves}); "
            f"algorithms for {loss.name!r}: {algorithms(loss=loss).names()}")
    return algo


def as_algorithm(loss: Loss, algorithm) -> Algorithm:
    """The :class:`Algorithm` a problem solves ``loss`` with: ``algorithm`` itself when it is
    one already (resolved once, e.g. by a model, for many solves), the kind's default for the
    loss when None, else the entry of that name (see :func:`resolve`)."""
    if algorithm is None:
        algorithm = get_kind(loss.kind).default_for(loss)
    return resolve(loss, algorithm)


#: A call is "long" when its algorithm's cost model predicts at least this many units (about
#: a second or more: the models count elementary steps) ...
SLOW_CALL_UNITS = 1e9
#: ... and at least this many times what the fastest exact algorithm for the same loss needs.
SLOW_CALL_RATIO = 100.0
#: A call that its algorithm's ``seconds`` model estimates at this many seconds or more warns
#: before it starts, whether or not a faster algorithm exists: a minute is past what anyone
#: waits for without being told.
SLOW_CALL_SECONDS = 60.0


class SlowAlgorithmWarning(UserWarning):
    """A call predicted (by the registry's cost models) to take over SLOW_CALL_SECONDS, or far
    longer than another exact algorithm would on the same input. It comes before the call;
    Ctrl-C stops a long call of any kind within about a second (the compiled kernels ask for
    signals as they go)."""


def _as_float(x) -> float:
    """float(x), inf for an integer too large for a float (an enumeration's count)."""
    try:
        return float(x)
    except OverflowError:
        return float("inf")


def _distinct_sizes(P: np.ndarray, N: np.ndarray):
    """(pairs, counts): the distinct (P, N) of the queries in ascending order (P first) and how
    many queries have each, as ``np.unique(np.stack([P, N], 1), axis=0, return_counts=True)``
    gives them, from one int64 key per query (P (max N + 1) + N, ordered as the pairs): a
    sort of integers instead of one of rows, which cost a tenth of an infer_batch call of
    10,000 queries of 100 samples."""
    P, N = np.asarray(P, dtype=np.int64), np.asarray(N, dtype=np.int64)
    width = int(N.max()) + 1
    if int(P.max()) >= np.iinfo(np.int64).max // width:
        return np.unique(np.stack([P, N], 1), axis=0, return_counts=True)
    keys, counts = np.unique(P * width + N, return_counts=True)
    return np.stack([keys // width, keys % width], 1), counts


def per_query_seconds(cost: Callable, us_per_unit: float,
                      us_per_query: float = 0.0) -> Callable:
    """A ``seconds(call)`` model (see :class:`Algorithm`) from a per-query cost model.

    Parameters
    ----------
    cost : callable
        ``cost(P, N)`` of one query.
    us_per_unit : float
        Microseconds per unit of ``cost``, measured.
    us_per_query : float
        Microseconds each query costs besides.

    Returns
    -------
    callable
        ``seconds(call)``: the units summed over the call's queries (``call.query_sizes()``,
        the P and N of each query solved), not the largest query's alone, so that a thousand
        queries of an enumerating oracle cost a thousand times one.
    """
    def seconds(call) -> float:
        P, N = call.query_sizes()
        if P.size == 0:
            return 0.0
        if P.size == 1:
            # one query (every infer call): np.unique's passes would cost more than its kernel
            return 1e-6 * (us_per_unit * _as_float(cost(int(P[0]), int(N[0]))) + us_per_query)
        # one evaluation per distinct size: the models use Python integers (C(n, P) overflows
        # int64) and a batch repeats few sizes
        pairs, counts = _distinct_sizes(P, N)
        units = sum(count * _as_float(cost(p, n))
                    for (p, n), count in zip(pairs.tolist(), counts.tolist()))
        return 1e-6 * (us_per_unit * units + us_per_query * P.size)
    return seconds


def faster_alternative(algorithm: Algorithm, loss, P: int, N: int):
    """(faster algorithm, its predicted cost, ``algorithm``'s) when ``algorithm`` is predicted
    to take at least SLOW_CALL_UNITS and SLOW_CALL_RATIO times what the fastest exact
    algorithm serving ``loss`` needs for a query of P positives and N negatives; else None.

    Only algorithms with a cost model take part, and only those that accept P + N samples
    (an enumerating oracle's model is never evaluated beyond its size limit)."""
    if algorithm.cost is None:
        return None
    mine = _as_float(algorithm.cost(P, N))
    if mine < SLOW_CALL_UNITS:
        return None
    best = None
    for other in algorithms(kind=algorithm.kind, loss=loss, exact=True):
        if other is algorithm or other.cost is None or (
                other.max_samples is not None and P + N > other.max_samples):
            continue
        cost = _as_float(other.cost(P, N))
        if best is None or cost < best[1]:
            best = (other, cost)
    if best is None or best[1] * SLOW_CALL_RATIO > mine:
        return None
    return best[0], best[1], mine


def warn_if_slow(algorithm: Algorithm, loss, P: int, N: int, stacklevel: int = 2) -> None:
    """Issue a :class:`SlowAlgorithmWarning` naming the faster exact algorithm when
    :func:`faster_alternative` finds one (see there)."""
    found = faster_alternative(algorithm, loss, P, N)
    if found is None:
        return
    other, theirs, mine = found
    warnings.warn(
        f"algorithm {algorithm.name!r} is predicted to take about {mine / theirs:.0f} times as "
        f"long as {other.name!r} here (its largest query has P = {P} positives and N = {N} "
        f"negatives; cost models {algorithm.complexity} against {other.complexity}); "
        f"{other.name!r} is exact and returns the same result", SlowAlgorithmWarning,
        stacklevel=stacklevel + 1)


def estimated_seconds(algorithm: Algorithm, call, repeat: int = 1) -> float | None:
    """Seconds that ``repeat`` runs of ``algorithm`` on ``call`` are estimated to take (its
    ``seconds`` model), or None for an algorithm without one."""
    if algorithm.seconds is None:
        return None
    return repeat * _as_float(algorithm.seconds(call))


def warn_if_slow_call(algorithm: Algorithm, call, loss: str | Loss | None = None,
                      largest: tuple[int, int] | None = None, repeat: int = 1,
                      stacklevel: int = 2) -> None:
    """Warn before a long call: every kind calls this before ``algorithm.run(call)``.

    Parameters
    ----------
    algorithm : Algorithm
        The algorithm about to run.
    call : object
        What its ``run`` takes (the kind's call type).
    loss : str or Loss, optional
        With ``largest``: also warn, as :func:`warn_if_slow`, when another exact algorithm
        is predicted far faster on the largest query.
    largest : tuple of (int, int), optional
        (P, N) of the largest query.
    repeat : int
        How many runs on ``call`` the caller makes (the top-k kind makes two).
    stacklevel : int
        Of the warning, counted from the caller of this function.

    Notes
    -----
    A call estimated at SLOW_CALL_SECONDS or more draws one :class:`SlowAlgorithmWarning`
    with the estimate (naming a faster exact algorithm when there is one); otherwise only
    the comparison with a faster algorithm can draw it.
    """
    seconds = estimated_seconds(algorithm, call, repeat)
    if seconds is None or seconds < SLOW_CALL_SECONDS:
        if loss is not None and largest is not None:
            warn_if_slow(algorithm, loss, *largest, stacklevel=stacklevel + 1)
        return
    found = None if loss is None or largest is None else faster_alternative(
        algorithm, loss, *largest)
    faster = "" if found is None else (
        f"; {found[0].name!r} is exact, returns the same result and is predicted "
        f"{found[2] / found[1]:.0f} times faster")
    warnings.warn(
        f"algorithm {algorithm.name!r} is estimated to take about {_duration(seconds)} on this "
        f"input (its cost model, {algorithm.complexity}, with constants measured on one "
        f"machine), over the {SLOW_CALL_SECONDS:.0f} s that draws this warning{faster}",
        SlowAlgorithmWarning, stacklevel=stacklevel + 1)


def quiet_call(algorithm: Algorithm, call, loss: str | Loss, largest: tuple[int, int]) -> bool:
    """True when :func:`warn_if_slow_call` with these arguments (``repeat`` 1) issues no
    warning: the estimate under SLOW_CALL_SECONDS and no faster exact algorithm by
    :func:`faster_alternative`. Its answer depends on the registry's algorithms, the loss and
    the query sizes alone, so a caller may keep it per registry version, loss and sizes and
    skip the check on a repeat (``infer``'s fast path does)."""
    seconds = estimated_seconds(algorithm, call)
    return (seconds is None or seconds < SLOW_CALL_SECONDS) and \
        faster_alternative(algorithm, loss, *largest) is None


def _duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "longer than anyone can wait"
    if seconds < 3600:
        return f"{seconds / 60:.0f} minutes" if seconds >= 120 else f"{seconds:.0f} s"
    return f"{seconds / 3600:.3g} hours"
