"""The cross-check of every algorithm against its kind's oracle on seeded random instances
(:func:`crosscheck`), and the instances the benchmarks and the command line share."""
from __future__ import annotations

from dataclasses import dataclass, field

from aprank.inference import algorithms, get_kind
from aprank.losses import LOSSES, get_loss

__all__ = ["crosscheck", "make_instance", "random_instance", "bench_instance", "solve_instance",
           "CrosscheckReport", "Disagreement"]


def random_instance(kind: str, seed: int, trial: int, max_n: int = 2000):
    """The seeded cross-check instance number ``trial`` of a problem kind.

    What :func:`crosscheck` runs every algorithm of the kind on.

    Parameters
    ----------
    kind : str
        A problem kind's name (see ``aprank.kinds()``).
    seed : int
        The seed of the sequence of instances.
    trial : int
        The instance's number in that sequence.
    max_n : int, default 2000
        The largest instance size drawn.

    Returns
    -------
    object
        The kind's instance type (for the ranking kind: scores, labels and a description).
    """
    return get_kind(kind).instances.random_instance(seed, trial, max_n)


def bench_instance(kind: str, P: int, N: int, shift: float, seed: int = 0, **options):
    """The benchmark instance of a problem kind for a cell of P positives and N negatives.

    Parameters
    ----------
    kind : str
        A problem kind's name (see ``aprank.kinds()``).
    P, N : int
        The numbers of positives and negatives.
    shift : float
        How far the positives' scores are shifted (for the ranking kind: positives
        ~ N(shift, 1), negatives ~ N(0, 1); the benchmark's regimes are 1, overlapping, and 6,
        separated).
    seed : int, default 0
        The random seed.
    **options
        The kind's own: pairwise: ``sizes`` or ``group_size`` of the linked groups; topk:
        ``n_core``; latent: ``candidates`` rows per bag.

    Returns
    -------
    object
        The kind's instance type.
    """
    return get_kind(kind).instances.bench_instance(P, N, shift, seed, **options)


def solve_instance(instance, loss, algorithm: str):
    """Solve an instance of :func:`random_instance` or :func:`bench_instance`.

    Parameters
    ----------
    instance : object
        The instance, of the loss's kind.
    loss : str or Loss
        The loss (its kind decides how the instance is solved).
    algorithm : str
        A registry algorithm serving the loss.

    Returns
    -------
    object
        The result of the loss's kind (e.g. an ``InferenceResult`` for the ranking kind).
    """
    return get_kind(get_loss(loss).kind).instances.solve(instance, loss, algorithm)


def make_instance(seed: int, trial: int, max_n: int = 2000):
    """The ranking kind's seeded cross-check instance number ``trial``.

    See :func:`random_instance`.

    Parameters
    ----------
    seed : int
        The seed of the sequence of instances.
    trial : int
        The instance's number in that sequence.
    max_n : int, default 2000
        The largest instance size drawn.

    Returns
    -------
    scores : ndarray
        The scores.
    labels : ndarray
        The binary labels.
    description : str
        What kind of instance it is (size, ties, regime).
    """
    instance = random_instance("ranking", seed, trial, max_n)
    return instance.scores, instance.labels, instance.description


@dataclass
class Disagreement:
    """One finding of :func:`crosscheck`: an algorithm that disagreed with the reference.

    Attributes
    ----------
    loss : str
        The loss's name.
    algorithm : str
        The algorithm that disagreed (or raised).
    reference : str
        The algorithm it was compared with ("(none)" when nothing exact could take the
        instance).
    what : str
        What differed, or what the algorithm raised.
    reproducer : str
        Python code that rebuilds the instance and runs the algorithm.
    """

    loss: str
    algorithm: str
    reference: str
    what: str
    reproducer: str

    def __str__(self) -> str:
        return (f"[{self.loss}] {self.algorithm} vs {self.reference}: {self.what}\n"
                f"    reproduce: {self.reproducer}")


@dataclass
class CrosscheckReport:
    """What :func:`crosscheck` returns; ``str(report)`` is the summary the command prints.

    Attributes
    ----------
    n_trials : int
        Instances per loss.
    comparisons : int
        Comparisons made.
    disagreements : list of Disagreement
        Every finding, each with a reproducer.
    algorithms : dict
        Loss name -> the names of the algorithms checked.
    kinds : dict
        Loss name -> its problem kind.
    skipped : int
        Instances that no exact algorithm of their loss could take.
    """

    n_trials: int
    comparisons: int = 0
    disagreements: list = field(default_factory=list)
    algorithms: dict = field(default_factory=dict)    # loss name -> algorithm names
    kinds: dict = field(default_factory=dict)         # loss name -> problem kind
    skipped: int = 0       # instances that no exact algorithm of their loss could take

    @property
    def ok(self) -> bool:
        """True when nothing disagreed."""
        return not self.disagreements

    def __str__(self) -> str:
        lines = [f"{self.kinds[loss]}/{loss}: {', '.join(names)}"
                 for loss, names in self.algorithms.items()]
        lines.append(f"{self.n_trials} instances per loss, {self.comparisons} comparisons, "
                     f"{len(self.disagreements)} disagreements"
                     + (f", {self.skipped} instances skipped (no exact algorithm takes them)"
                        if self.skipped else ""))
        lines += [str(d) for d in self.disagreements]
        return "\n".join(lines)


def _close(a: float, b: float, rtol: float) -> bool:
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def _solve(instances, instance, loss, name):
    """(result, None), or (None, what it raised): one algorithm's failure is reported, not fatal."""
    try:
        return instances.solve(instance, loss, name), None
    except Exception as err:      # noqa: BLE001 -- any failure is a finding to report
        return None, f"raised {type(err).__name__}: {err}"


def _compare(algo, res, reference, instance, instances, rtol: float):
    """What is wrong with ``res`` measured against the exact ``reference``, or None."""
    ref_obj = reference.objective
    if algo.exact:
        if not _close(res.objective, ref_obj, rtol):
            return f"objective {res.objective!r} != {ref_obj!r}"
        return instances.compare(res, reference, instance)
    if res.objective > ref_obj + rtol * max(1.0, abs(ref_obj)):
        return f"approximate objective {res.objective!r} above the exact optimum {ref_obj!r}"
    return None


def crosscheck(losses=None, *, n_trials: int = 200, max_n: int = 2000, seed: int = 0,
               rtol: float = 1e-12, progress=None) -> CrosscheckReport:
    """Run every registered algorithm of each loss on ``n_trials`` seeded instances of its kind.

    Exact algorithms must agree with the reference (the kind's oracle when the instance is small
    enough for it, else the first exact algorithm in the registry) on the objective to ``rtol``
    (relative to max(1, abs(objective))), and on the solution where the kind defines it uniquely
    (the ranks when no two scores are equal). Approximate ones must not exceed the reference
    objective. An algorithm that raises on an instance is a disagreement too (what it raised),
    and the check goes on. Unknown loss names are refused with ValueError before anything runs.

    Parameters
    ----------
    losses : str or iterable of str, optional
        Names (or one name) of registered losses; default every registered loss.
    n_trials : int, default 200
        Seeded instances per loss.
    max_n : int, default 2000
        The largest instance size drawn.
    seed : int, default 0
        The seed of the instances.
    rtol : float, default 1e-12
        The relative tolerance of the objectives' agreement.
    progress : callable, optional
        Called as ``progress(loss_name, trial)`` after each instance.

    Returns
    -------
    CrosscheckReport
        ``report.ok`` is False when anything disagreed, and each disagreement carries a
        reproducer.
    """
    if losses is None:
        losses = tuple(LOSSES)
    losses = (losses,) if isinstance(losses, str) else tuple(losses)
    for loss_name in losses:
        get_loss(loss_name)       # ValueError naming the valid losses, before any work
    report = CrosscheckReport(n_trials)
    for loss_name in losses:
        loss = get_loss(loss_name)
        loss_name = loss.name
        kind = get_kind(loss.kind)
        instances = kind.instances
        algos = algorithms(loss=loss)
        report.algorithms[loss_name] = algos.names()
        report.kinds[loss_name] = kind.name
        for trial in range(n_trials):
            instance = instances.random_instance(seed, trial, max_n)
            results, failures = {}, {}
            for a in algos:
                if a.max_samples is None or instance.size <= a.max_samples:
                    results[a.name], failures[a.name] = _solve(instances, instance, loss, a.name)
            exact = [a.name for a in algos if a.exact and results.get(a.name) is not None]
            ref = kind.oracle if results.get(kind.oracle) is not None else (
                exact[0] if exact else None)
            if ref is None:
                report.skipped += 1
            for algo in algos:
                if algo.name == ref or algo.name not in results:
                    continue
                what = failures[algo.name]
                if what is None and ref is None:
                    continue        # nothing exact to compare it with
                report.comparisons += 1
                if what is None:
                    what = _compare(algo, results[algo.name], results[ref], instance,
                                    instances, rtol)
                if what:
                    report.disagreements.append(Disagreement(
                        loss_name, algo.name, ref or "(none)", what,
                        instances.reproducer(instance, loss_name, algo.name)))
            if progress is not None:
                progress(loss_name, trial)
    return report
