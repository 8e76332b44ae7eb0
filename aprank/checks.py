"""Cross-checks between inference algorithms, for users: ``aprank.crosscheck`` and
``python -m aprank check``.

Every exact algorithm of a loss (built-in or registered by a user) is run on seeded random
instances covering sizes, tie densities and score regimes, and compared with the others and,
on instances of at most 16 samples, with the exhaustive ``brute``. Approximate algorithms are
checked for what they guarantee: an objective never above the exact optimum.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aprank import _registry
from aprank._infer import _resolve, solve_problem
from aprank._problem import Problem

__all__ = ["crosscheck", "make_instance", "CrosscheckReport", "Disagreement"]

REGIMES = ("overlapping", "separated", "reversed")
TIES = ("none", "some", "heavy", "all")


def make_instance(seed: int, trial: int, max_n: int = 2000):
    """The seeded random instance number ``trial``: (scores, labels, description).

    Half of the instances have at most 16 samples (so ``brute`` can join), the rest up to
    ``max_n``. Scores come from one of REGIMES (positives ~ N(1, 1) or N(6, 1) or N(-1, 1),
    negatives ~ N(0, 1)), rounded to a tie density from TIES, and scaled by 1e-4, 1 or 1e4.
    """
    rng = np.random.default_rng([seed, trial])
    if rng.random() < 0.5 or max_n <= 16:
        n = int(rng.integers(2, min(16, max_n) + 1))
    else:
        n = int(np.exp(rng.uniform(np.log(17), np.log(max(max_n, 18)))))
    frac = rng.choice([0.5, 0.2, 0.05])
    n_pos = int(np.clip(round(n * frac * rng.uniform(0.2, 1.8)), 1, n))
    regime = REGIMES[int(rng.integers(len(REGIMES)))]
    ties = TIES[int(rng.integers(len(TIES)))]
    shift = {"overlapping": 1.0, "separated": 6.0, "reversed": -1.0}[regime]
    labels = np.zeros(n, dtype=bool)
    labels[rng.permutation(n)[:n_pos]] = True
    scores = rng.standard_normal(n) + shift * labels
    if ties == "some":
        scores = np.round(scores, 1)
    elif ties == "heavy":
        scores = np.round(scores)
    elif ties == "all":
        scores = np.zeros(n)
    scores = scores * rng.choice([1e-4, 1.0, 1e4])
    return scores, labels, f"n={n} P={n_pos} regime={regime} ties={ties}"


@dataclass
class Disagreement:
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
    n_trials: int
    comparisons: int = 0
    disagreements: list = field(default_factory=list)
    algorithms: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.disagreements

    def __str__(self) -> str:
        lines = [f"{loss}: {', '.join(names)}" for loss, names in self.algorithms.items()]
        lines.append(f"{self.n_trials} instances per loss, {self.comparisons} comparisons, "
                     f"{len(self.disagreements)} disagreements")
        lines += [str(d) for d in self.disagreements]
        return "\n".join(lines)


def _close(a: float, b: float, rtol: float) -> bool:
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def _reproducer(seed, trial, max_n, loss, name, scores, labels):
    call = f"aprank.infer(scores, labels, loss={loss!r}, algorithm={name!r})"
    if scores.size <= 16:
        return f"scores = np.array({scores.tolist()}); labels = np.array({labels.astype(int).tolist()}); {call}"
    return (f"scores, labels, _ = aprank.checks.make_instance(seed={seed}, trial={trial}, "
            f"max_n={max_n}); {call}")


def crosscheck(losses=("ap", "ndcg"), *, n_trials: int = 200, max_n: int = 2000, seed: int = 0,
               rtol: float = 1e-12, progress=None) -> CrosscheckReport:
    """Run every registered algorithm of each loss on ``n_trials`` seeded instances.

    Exact algorithms must agree with the reference (``brute`` when the instance has at most 16
    samples, else the first exact algorithm in the registry) on the objective to ``rtol``
    (relative to max(1, |objective|)), and on the ranks when no two scores are equal.
    Approximate ones must not exceed the reference objective. Returns a report; ``report.ok`` is
    False when anything disagreed, and each disagreement carries a reproducer.
    """
    losses = (losses,) if isinstance(losses, str) else tuple(losses)
    report = CrosscheckReport(n_trials)
    for loss_name in losses:
        algos = _registry.for_loss(loss_name)
        report.algorithms[loss_name] = [a.name for a in algos]
        for trial in range(n_trials):
            scores, labels, _ = make_instance(seed, trial, max_n)
            results = {}
            for algo in algos:
                if algo.max_samples is not None and scores.size > algo.max_samples:
                    continue
                loss, _ = _resolve(loss_name, algo.name)
                results[algo.name] = solve_problem(Problem.build(scores, labels, loss), algo)
            exact = [name for name in results if _registry.get(name).exact]
            ref = "brute" if "brute" in results else exact[0]
            ref_obj = float(results[ref].query_objective[0])
            distinct = np.unique(scores).size == scores.size
            for name, res in results.items():
                if name == ref:
                    continue
                report.comparisons += 1
                obj = float(res.query_objective[0])
                what = None
                if _registry.get(name).exact:
                    if not _close(obj, ref_obj, rtol):
                        what = f"objective {obj!r} != {ref_obj!r}"
                    elif distinct and not np.array_equal(res.ranks, results[ref].ranks):
                        bad = int(np.flatnonzero(res.ranks != results[ref].ranks)[0])
                        what = (f"ranks differ at sample {bad}: {int(res.ranks[bad])} != "
                                f"{int(results[ref].ranks[bad])}")
                elif obj > ref_obj + rtol * max(1.0, abs(ref_obj)):
                    what = f"approximate objective {obj!r} above the exact optimum {ref_obj!r}"
                if what:
                    report.disagreements.append(Disagreement(
                        loss_name, name, ref, what,
                        _reproducer(seed, trial, max_n, loss_name, name, scores, labels)))
            if progress is not None:
                progress(loss_name, trial)
    return report
