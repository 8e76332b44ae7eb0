"""The shape every problem kind has: an abstract problem type and an abstract set of instances.

A kind is a folder of :mod:`aprank.inference` with the same modules as every other kind:

* ``_problem.py`` -- the validated problem type (a subclass of :class:`Problem`), its call (what
  an algorithm's ``run(call)`` fills) and its result type;
* ``_algorithms.py`` -- the registry entries of the kind: its :class:`~aprank.inference.ProblemKind`
  (``KINDS``) and its :class:`~aprank.inference.Algorithm` s (``ALGORITHMS``), with their cost
  models and the compiled kernels' runners;
* ``_oracle.py`` -- the brute-force algorithm every exact one is checked against;
* ``_instances.py`` -- the seeded inputs of cross-checks and benchmarks (a subclass of
  :class:`Instances`);

plus its compiled kernels (``_<name>_cy.pyx``). Adding a kind means copying a folder's shape
and naming the folder in ``aprank/inference/_builtin.py``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from aprank.losses import Loss

__all__ = ["Problem", "Instances"]


class Problem(ABC):
    """The validated problem of one kind: everything about its samples except the scores.

    A problem is built once from the labels, the loss and the kind's own inputs (query ids,
    links, bags, interactions), which are validated then; it is solved for many scores (a
    learner solves it every iteration), checking only the scores.

    Every kind's problem type takes ``(labels, loss, *, qid=None, empty="error",
    n_samples=None, **inputs)`` and implements:

    * :meth:`solve` ``(scores, algorithm=None, *, <the kind's own inputs>)`` -- loss-augmented
      inference for every query; the result type is the kind's;
    * :meth:`solve_one` ``(scores, algorithm=None)`` -- the same for a problem of one query,
      returning what :func:`aprank.infer` returns.

    ``algorithm`` is a registry name, an :class:`~aprank.inference.Algorithm` (resolved once, by
    a model, for many solves) or None (the kind's default for the loss).
    """

    #: The validated loss (set by the constructor).
    loss: Loss

    @property
    def kind(self) -> str:
        """The name of the problem kind (the loss's)."""
        return self.loss.kind

    @abstractmethod
    def solve(self, scores, algorithm=None):
        """Loss-augmented inference for every query of the problem.

        A kind adds its own per-solve inputs as keyword-only parameters with defaults (e.g. the
        pairwise kind's ``edge_scores``, the latent kind's ``impute``); callers that serve every
        kind pass them through as keywords.

        Parameters
        ----------
        scores : array-like
            One score per sample (per row for the latent kind).
        algorithm : str, Algorithm or None
            The registry algorithm; None: the kind's default for the loss.
        """

    @abstractmethod
    def solve_one(self, scores, algorithm=None):
        """Loss-augmented inference for a problem of one query (what :func:`aprank.infer`
        returns).

        Parameters
        ----------
        scores : array-like
            One score per sample.
        algorithm : str, Algorithm or None
            The registry algorithm; None: the kind's default for the loss.
        """


class Instances(ABC):
    """The seeded inputs of one kind, for cross-checks and benchmarks.

    :func:`aprank.crosscheck` runs every algorithm of a kind on :meth:`random_instance` s and
    compares them with :meth:`compare`; the benchmarks time :meth:`bench_instance` s. Both reach
    them through :func:`aprank.checks.random_instance`, :func:`aprank.checks.bench_instance` and
    :func:`aprank.checks.solve_instance`.
    """

    #: The name of the kind whose instances these are.
    kind: str = ""

    @abstractmethod
    def random_instance(self, seed: int, trial: int, max_n: int = 2000):
        """The seeded cross-check instance number ``trial``: a function of its arguments only.

        Half of the instances must be small enough for the kind's oracle; the rest may grow up
        to ``max_n`` samples. They should cover ties and the kind's edge cases.

        Parameters
        ----------
        seed, trial : int
            Seed of the series and number of the instance in it.
        max_n : int
            Largest number of samples.
        """

    @abstractmethod
    def bench_instance(self, P: int, N: int, shift: float, seed: int = 0):
        """The benchmark's instance of a cell of P positives and N negatives.

        A kind adds its own options as further parameters with defaults (documented by each
        kind); callers that serve every kind pass them through as keywords.

        Parameters
        ----------
        P, N : int
            Positives and negatives (bags for the latent kind).
        shift : float
            How far the positives' scores are shifted above the negatives' (N(0, 1)).
        seed : int
            Random seed.
        """

    @abstractmethod
    def solve(self, instance, loss, algorithm):
        """Solve ``instance`` for ``loss`` with the registry algorithm ``algorithm``.

        Parameters
        ----------
        instance : Instance
            Made by :meth:`random_instance` or :meth:`bench_instance`.
        loss : str or Loss
            A loss of the kind.
        algorithm : str or Algorithm
            A registry algorithm of the kind.
        """

    @abstractmethod
    def compare(self, result, reference, instance) -> str | None:
        """How two exact results of the same instance differ beyond their objective (which
        :func:`aprank.crosscheck` compares itself), or None when they agree where the kind
        defines the solution uniquely.

        Parameters
        ----------
        result, reference : the kind's result type
            Two exact results for ``instance``.
        instance : Instance
            What both solved.
        """

    # ------------------------------------------------------------------ the deep check
    # A kind takes part in :func:`aprank.checks.deep_check` by overriding these; by default it
    # has no cases there (its algorithms are still cross-checked by ``crosscheck``).

    def switches(self) -> dict:
        """The named thresholds of the kind's fast paths, ``{name: value}``, read from the
        constants of the code: the deep cases are built around them, so that moving one moves
        the cases with it.

        Returns
        -------
        dict of str to int
        """
        return {}

    def deep_cases(self, seed: int, max_n: int) -> list:
        """The kind's cases of the deep check: instance families built to cross every switch
        of :meth:`switches`, none of more than ``max_n`` samples.

        Parameters
        ----------
        seed : int
            Seed of the instances.
        max_n : int
            Largest number of samples (rows for the latent kind).

        Returns
        -------
        list of DeepCase
        """
        return []

    def deep_instance(self, family: str, **params):
        """The instance of a :class:`~aprank.inference.DeepCase`: a function of its arguments
        only.

        Parameters
        ----------
        family : str
            The case's family.
        **params
            The case's parameters.
        """
        raise ValueError(f"the {self.kind!r} kind has no deep-check family {family!r}")

    def deep_reference(self, loss, instance) -> str | None:
        """The exact algorithm the others of ``loss`` are compared with in the deep check: a
        slower exact algorithm of the zoo than the fast paths, which reaches their sizes (not
        the brute-force oracle). None: only the relations are checked.

        Parameters
        ----------
        loss : Loss
            A loss of the kind.
        instance : Instance
            The case's instance.
        """
        return None

    def paths(self, instance, algorithm: str, result=None) -> tuple:
        """The internal paths of ``algorithm`` that ``instance`` takes, as named in the deep
        check's table (e.g. "components of k > DENSE_MAX = 64").

        Parameters
        ----------
        instance : Instance
        algorithm : str
        result : the kind's result type, optional
            What the algorithm returned, for paths that depend on the answer.
        """
        return ("every instance",)

    def accepts(self, instance, algorithm) -> bool:
        """Whether ``algorithm`` (an :class:`~aprank.inference.Algorithm`) takes ``instance``:
        within its ``max_samples`` (a kind whose oracle has other limits says so here).

        Parameters
        ----------
        instance : Instance
        algorithm : Algorithm
        """
        return algorithm.max_samples is None or instance.size <= algorithm.max_samples

    def tolerance(self, instance) -> float:
        """How far two exact objectives of ``instance`` may differ: a rounding margin at the
        scale of its decisions (score differences and loss steps), never of the scores'
        magnitude.

        Parameters
        ----------
        instance : Instance
        """
        return 1e-9 * (1.0 + (float(np.ptp(instance.scores)) if instance.size else 0.0))

    def relations(self) -> tuple:
        """The metamorphic relations of the kind (:class:`~aprank.inference.Relation`):
        changes of the input whose effect on the answer is known.

        Returns
        -------
        tuple of Relation
        """
        return ()

    def reproducer(self, instance, loss: str, algorithm: str) -> str:
        """One line of Python (given ``import aprank``) that rebuilds ``instance`` and solves
        it, for a cross-check's report.

        Parameters
        ----------
        instance : Instance
            A :meth:`random_instance`.
        loss, algorithm : str
            Names of the loss and the algorithm.
        """
        return (f"i = aprank.checks.random_instance({self.kind!r}, seed={instance.seed}, "
                f"trial={instance.trial}, max_n={instance.max_n}); "
                f"aprank.checks.solve_instance(i, {loss!r}, {algorithm!r})")
