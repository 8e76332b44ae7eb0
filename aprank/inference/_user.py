"""User-registered Python functions as registry algorithms of the ranking kind."""
from __future__ import annotations

from collections.abc import Callable

from aprank.inference._registry import Algorithm, add, remove
from aprank.inference.ranking import UserRanking
from aprank.losses import RankingLoss, get_loss

__all__ = ["register", "unregister"]


def register(name: str, func: Callable, *, losses, exact: bool, complexity: str = "",
             reference: str = "", replace: bool = False) -> Algorithm:
    """Add a user algorithm of the ranking kind; it then takes part in ``crosscheck``.

    Parameters
    ----------
    name : str
        Its name: letters, digits and ``_.+-`` (no spaces), not a built-in algorithm's.
    func : callable
        ``func(pos_scores, neg_scores, loss)`` receives float64 arrays with the scores of the
        positives and of the negatives of one query (input order) and the
        :class:`~aprank.losses.RankingLoss`; it returns the interleaving rank (1 ... P+1) of
        every negative. aprank computes coefficients, loss and objective from those ranks with
        the compiled driver, so the losses must be ones it knows (``KernelSpec``).
    losses : str or iterable of str
        The ranking losses it serves.
    exact : bool
        Whether it claims to return an optimum (``crosscheck`` then holds it to the oracle).
    complexity, reference : str
        For the table.
    replace : bool
        Replace an earlier user algorithm of that name.

    Returns
    -------
    Algorithm
        The new entry.

    Notes
    -----
    A user algorithm declared ``exact=True`` is held to the same standard as the built-in ones
    by ``aprank.crosscheck``. ``replace=True`` replaces an earlier user algorithm of that name;
    built-in algorithms are never replaced or removed, and a user algorithm takes a name of its
    own (not one a built-in algorithm of any kind has). Names are letters, digits and
    ``_.+-`` (no spaces); ``exact`` must be a bool and ``complexity``, ``reference`` strings,
    or ValueError/TypeError is raised and the registry is left as it was. The registration
    holds in this process only: a worker process (joblib, Dask, multiprocessing) must
    register the algorithm itself before it receives anything that names it.
    """
    if not callable(func):
        raise TypeError("func must be callable")
    losses = (losses,) if isinstance(losses, str) else tuple(losses)
    losses = tuple(dict.fromkeys(get_loss(loss).name for loss in losses))   # names, once each
    if not losses:
        raise ValueError("a user algorithm must serve at least one loss")
    for loss_name in losses:
        loss = get_loss(loss_name)
        if loss.kind != "ranking":
            raise ValueError(f"user algorithms serve ranking losses; {loss_name!r} is of the "
                             f"{loss.kind!r} kind")
        if not isinstance(loss, RankingLoss):
            # the driver computes the loss of a user algorithm's ranks from the loss's kernel
            # specification, which only a RankingLoss gives
            raise ValueError(f"user algorithms serve ranking losses, subclasses of RankingLoss; "
                             f"{loss_name!r} is a {type(loss).__name__}")
        loss.kernel_spec(1)   # NotImplementedError: the driver could not finish its rankings
    return add(Algorithm(name, "ranking", losses, exact, complexity, reference,
                         UserRanking(func), builtin=False), replace=replace)


def unregister(name: str) -> None:
    """Remove a user algorithm (built-in algorithms cannot be removed).

    Parameters
    ----------
    name : str
        The name it was registered under.
    """
    remove(name, "ranking")
