"""The deep check: every algorithm against a slower exact algorithm of the zoo at realistic
sizes, on instance families built to cross every switch of the fast paths, and the relations
that must hold (``aprank.checks.deep_check``, ``python -m aprank check --deep``).

Each kind's :class:`~aprank.inference.Instances` supplies its part: the cases (around the
named switches of its code), the reference at scale, the paths an instance takes through each
algorithm, the tolerance at the scale of its decisions, and its relations. This module runs
them, counts cases and disagreements per algorithm, path and relation, and writes a
reproducer for every disagreement.
"""
from __future__ import annotations

import os
import platform
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from aprank.inference import DeepCase, SlowAlgorithmWarning, algorithms, get_kind, simd_level
from aprank.inference import kinds as registered_kinds
from aprank.losses import get_loss

__all__ = ["deep_check", "deep_instance", "check_relation", "DeepCheckReport", "DeepRow",
           "DeepDisagreement"]


def deep_instance(kind: str, family: str, **params):
    """The instance of one deep case (what a reproducer rebuilds).

    Parameters
    ----------
    kind : str
        A problem kind's name.
    family : str
        The case's family.
    **params
        The case's parameters, as the report prints them.

    Returns
    -------
    object
        The kind's instance type.
    """
    return get_kind(kind).instances.deep_instance(family, **params)


def _relation(instances, name: str):
    for rel in instances.relations():
        if rel.name == name:
            return rel
    raise ValueError(f"the {instances.kind!r} kind has no relation {name!r}; it has "
                     f"{[r.name for r in instances.relations()]}")


def check_relation(instance, loss, algorithm: str, relation: str, seed: int = 0):
    """Check one relation of an instance's kind for one algorithm (what a reproducer runs).

    Parameters
    ----------
    instance : object
        An instance of the loss's kind (e.g. from :func:`deep_instance`).
    loss : str or Loss
        The loss it is solved for.
    algorithm : str
        A registry algorithm serving the loss.
    relation : str
        The relation's name, as the report prints it.
    seed : int, default 0
        The seed of the relation's random change (a permutation, a shift).

    Returns
    -------
    str or None
        What differs, or None when the relation holds.
    """
    loss = get_loss(loss)
    instances = get_kind(loss.kind).instances
    rng = np.random.default_rng(seed)
    return _relation(instances, relation).check(instances, instance, loss, algorithm, rng)


@dataclass
class DeepRow:
    """One row of the deep check's table: an algorithm on one path or relation.

    Attributes
    ----------
    kind, algorithm : str
    check : str
        "vs REFERENCE: PATH" for a comparison with the reference, "relation: NAME" for a
        relation.
    cases, disagreements : int
    largest : int
        The largest instance (samples; rows for the latent kind) it ran on.
    seconds : float
        Time spent in this row's solves and checks.
    """

    kind: str
    algorithm: str
    check: str
    cases: int = 0
    disagreements: int = 0
    largest: int = 0
    seconds: float = 0.0


@dataclass
class DeepDisagreement:
    """A disagreement of the deep check, with Python that reproduces it.

    Attributes
    ----------
    kind, algorithm : str
    check : str
        The rows it counts in ("vs REFERENCE: PATH" for each path the instance took, joined
        by "; ", or "relation: NAME").
    what : str
        What differed, or what was raised.
    reproducer : str
        Lines of Python (given ``import aprank``) that rebuild the instance and rerun it.
    """

    kind: str
    algorithm: str
    check: str
    what: str
    reproducer: str

    def __str__(self) -> str:
        return (f"[{self.kind}] {self.algorithm}, {self.check}: {self.what}\n"
                f"    reproduce: {self.reproducer}")


def machine() -> str:
    """One line naming the CPU (and whether it has AVX-512), cores, Python and NumPy.

    Returns
    -------
    str
    """
    cpu, avx512 = platform.processor() or platform.machine(), False
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        cpu = next(line.split(":", 1)[1].strip() for line in info.splitlines()
                   if line.startswith("model name"))
        avx512 = " avx512f" in info
    except (OSError, StopIteration):
        pass
    return (f"{cpu} ({'with' if avx512 else 'without'} AVX-512), {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, NumPy {np.__version__}, {simd_level()} "
            f"partition")


@dataclass
class DeepCheckReport:
    """What :func:`deep_check` returns; ``str(report)`` is the table the command prints.

    Attributes
    ----------
    rows : list of DeepRow
        Per kind, algorithm and path or relation: cases, disagreements, sizes reached.
    disagreements : list of DeepDisagreement
        Every finding, with a reproducer.
    switches : dict
        Per kind, its named switches (the thresholds the cases straddle).
    n_cases : int
        Instances built.
    seconds : float
        Wall time of the whole check.
    machine : str
        The CPU and versions it ran on.
    max_n : int
        The largest instance size allowed.
    """

    rows: list = field(default_factory=list)
    disagreements: list = field(default_factory=list)
    switches: dict = field(default_factory=dict)
    n_cases: int = 0
    seconds: float = 0.0
    machine: str = ""
    max_n: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing disagreed."""
        return not self.disagreements

    def row(self, kind, algorithm, check) -> DeepRow:
        for r in self.rows:
            if (r.kind, r.algorithm, r.check) == (kind, algorithm, check):
                return r
        self.rows.append(DeepRow(kind, algorithm, check))
        return self.rows[-1]

    def table(self) -> str:
        """The rows as a Markdown table, sorted by kind, algorithm and check."""
        lines = ["| kind | algorithm | check | cases | disagreements | largest n | seconds |",
                 "|---|---|---|---:|---:|---:|---:|"]
        for r in sorted(self.rows, key=lambda r: (r.kind, r.algorithm, r.check)):
            lines.append(f"| {r.kind} | {r.algorithm} | {r.check} | {r.cases} | "
                         f"{r.disagreements} | {r.largest} | {r.seconds:.1f} |")
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: cases, comparisons, disagreements, time and machine."""
        checks = sum(r.cases for r in self.rows)
        return (f"{self.n_cases} instances (up to {self.max_n} samples), {checks} checks, "
                f"{len(self.disagreements)} disagreements, {self.seconds:.0f} s on "
                f"{self.machine}")

    def __str__(self) -> str:
        switches = "; ".join(f"{kind}: " + ", ".join(f"{k} = {v}" for k, v in s.items())
                             for kind, s in self.switches.items() if s)
        parts = [self.table(), "", f"Named switches the cases are built around: {switches}.", "",
                 self.summary()]
        parts += [str(d) for d in self.disagreements]
        return "\n".join(parts)


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _rebuild(kind: str, case: DeepCase) -> str:
    return (f"i = aprank.checks.deep_instance({kind!r}, {case.family!r}"
            + (f", {_params(case.params)}" if case.params else "") + ")")


def _solve(instances, instance, loss, name):
    """(result, None), or (None, what it raised): a failure is a finding, not fatal."""
    try:
        return instances.solve(instance, loss, name), None
    except Exception as err:      # noqa: BLE001 -- any failure is a finding to report
        return None, f"raised {type(err).__name__}: {err}"


def _quietly(call):
    """``call()`` without the slow-call warnings of its solves: the deep check's cost is said
    once, by its documentation and its progress bar."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SlowAlgorithmWarning)
        return call()


def _against_reference(algo, res, ref, instance, instances) -> str | None:
    """What is wrong with ``res`` measured against the exact reference's ``ref``, or None."""
    # the kind's floor, or 16 ulps of the objectives compared where they are larger (each
    # within a few ulps of its output's exact value)
    tol = max(instances.tolerance(instance),
              16 * 2.0 ** -53 * max(abs(res.objective), abs(ref.objective)))
    if algo.exact:
        if not abs(res.objective - ref.objective) <= tol:
            return f"objective {res.objective!r} != {ref.objective!r} (tolerance {tol:.3g})"
        return instances.compare(res, ref, instance)
    if res.objective > ref.objective + tol:
        return f"approximate objective {res.objective!r} above the exact {ref.objective!r}"
    return None


class _Run:
    """One deep check's state: the report and how each result lands in it."""

    def __init__(self, report: DeepCheckReport):
        self.report = report

    def record(self, kind, algorithm, checks, instance, seconds, what, reproducer):
        """One result counted in the row of each of ``checks`` (the paths it took, or a
        relation), and listed once if it disagreed."""
        for check in checks:
            row = self.report.row(kind, algorithm, check)
            row.cases += 1
            row.largest = max(row.largest, int(instance.size))
            row.seconds += seconds
            seconds = 0.0         # the time is counted once, on its first row
            if what:
                row.disagreements += 1
        if what:
            self.report.disagreements.append(
                DeepDisagreement(kind, algorithm, "; ".join(checks), what, reproducer))

    def compare(self, kind, instances, case, instance, loss):
        """Every algorithm of ``loss`` that takes the instance against the kind's reference."""
        ref_name = instances.deep_reference(loss, instance)
        if ref_name is None:
            return
        rebuild = _rebuild(kind, case)
        t0 = time.perf_counter()
        ref, failure = _solve(instances, instance, loss, ref_name)
        ref_seconds = time.perf_counter() - t0
        if failure:
            self.record(kind, ref_name, ["as the reference"], instance, ref_seconds, failure,
                        f"{rebuild}; aprank.checks.solve_instance(i, {loss.name!r}, "
                        f"{ref_name!r})")
            return
        for algo in algorithms(loss=loss):
            if algo.name == ref_name or not instances.accepts(instance, algo):
                continue
            t0 = time.perf_counter()
            res, what = _solve(instances, instance, loss, algo.name)
            if what is None:
                what = _against_reference(algo, res, ref, instance, instances)
            seconds = time.perf_counter() - t0
            reproducer = (f"{rebuild}; aprank.checks.solve_instance(i, {loss.name!r}, "
                          f"{algo.name!r})  # against {ref_name!r}")
            paths = instances.paths(instance, algo.name, res)
            self.record(kind, algo.name, [f"vs {ref_name}: {path}" for path in paths], instance,
                        seconds, what, reproducer)

    def relations(self, kind, instances, case, instance, loss, seed):
        rebuild = _rebuild(kind, case)
        ref_name = instances.deep_reference(loss, instance)
        for r, rel in enumerate(instances.relations()):
            for algo in algorithms(loss=loss):
                if ((rel.exact_only and not algo.exact) or not instances.accepts(instance, algo)
                        or not rel.holds_for(instance, algo.name)):
                    continue
                # the oracles (size-limited) are the crosscheck's subject, the slow reference
                # is checked against them there and against the fast paths here
                if algo.max_samples is not None or algo.name == ref_name:
                    continue
                rel_seed = int(np.random.default_rng([*seed, r]).integers(2 ** 31))
                t0 = time.perf_counter()
                try:
                    what = rel.check(instances, instance, loss, algo.name,
                                     np.random.default_rng(rel_seed))
                except Exception as err:    # noqa: BLE001 -- a failure is a finding
                    what = f"raised {type(err).__name__}: {err}"
                self.record(kind, algo.name, [f"relation: {rel.name}"], instance,
                            time.perf_counter() - t0, what,
                            f"{rebuild}; aprank.checks.check_relation(i, {loss.name!r}, "
                            f"{algo.name!r}, {rel.name!r}, seed={rel_seed})")


def deep_check(kinds=None, *, max_n: int = 1_000_000, seed: int = 0,
               progress: bool = False) -> DeepCheckReport:
    """Check every algorithm of every kind at realistic sizes, across every internal switch.

    For each problem kind, its deep cases (instance families that put instances on both sides
    of every named switch of the fast paths, up to ``max_n`` samples) are solved by the kind's
    reference at scale (a slower exact algorithm of the zoo) and by every other algorithm of
    each loss, built-in or registered by a user: exact ones must match the reference's
    objective within a rounding margin at the scale of the decisions (score differences, not
    magnitudes) and its solution where the kind defines one; approximate ones must not exceed
    it. Then each kind's relations (a constant added to every score, permutations, a problem
    split into its components, a query duplicated, ...) are checked for every algorithm they
    apply to. Every disagreement comes with a reproducer.

    Parameters
    ----------
    kinds : str or iterable of str, optional
        Names (or one name) of problem kinds; default every registered kind.
    max_n : int, default 1_000_000
        The largest instance (samples; rows for the latent kind). Every switch is crossed
        from about 5,000 on. Each kind's cases stop at sizes of its own below the default:
        10^6 negatives for ranking, 10^6 items for top-k, 10^5 samples for the pairwise kind,
        10^4 bags for the latent kind. The whole check takes minutes on 2 cores.
    seed : int, default 0
        The seed of the instances and of the relations' changes.
    progress : bool, default False
        Show a progress bar (tqdm) over the cases.

    Returns
    -------
    DeepCheckReport
        ``report.ok`` is False when anything disagreed; ``str(report)`` is the table.
    """
    names = ([k.name for k in registered_kinds()] if kinds is None
             else [kinds] if isinstance(kinds, str) else list(kinds))
    selected = [get_kind(name) for name in names]      # ValueError for an unknown kind first
    report = DeepCheckReport(machine=machine(), max_n=int(max_n))
    run = _Run(report)
    t_start = time.perf_counter()
    plan = [(kind, case) for kind in selected
            for case in kind.instances.deep_cases(seed, max_n)]
    for kind in selected:
        report.switches[kind.name] = kind.instances.switches()
    bar = tqdm(plan, desc="deep check", unit="case", disable=not progress, leave=False)
    for index, (kind, case) in enumerate(bar):
        instances = kind.instances
        instance = instances.deep_instance(case.family, **case.params)
        report.n_cases += 1
        bar.set_postfix_str(f"{kind.name}/{case.family} n={instance.size}", refresh=False)
        for loss_name in case.losses or kind.losses():
            loss = get_loss(loss_name)
            _quietly(lambda: run.compare(kind.name, instances, case, instance, loss))
            if case.relations:
                _quietly(lambda: run.relations(kind.name, instances, case, instance, loss,
                                               [seed, index]))
    bar.close()
    report.seconds = time.perf_counter() - t_start
    return report
