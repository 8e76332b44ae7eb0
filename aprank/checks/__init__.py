"""Cross-checks between inference algorithms, for users: ``aprank.crosscheck`` and
``python -m aprank check``; the deep check at realistic sizes, across every switch of the fast
paths and with the relations that must hold: :func:`deep_check` and ``python -m aprank check
--deep``.

Algorithms are grouped by (problem kind, loss). Every exact algorithm of a loss (built-in or
registered by a user) is run on seeded random instances of its kind (the kind's
:class:`~aprank.inference.Instances` make them: sizes, tie densities, score regimes) and
compared with the kind's brute-force oracle where the instance is small enough for it, else
with the first exact algorithm. Approximate
algorithms are checked for what they guarantee: an objective never above the exact optimum.

An algorithm that raises (e.g. a user algorithm returning ranks of the wrong shape) is reported
as a disagreement on that instance, and the check goes on; an instance that no exact algorithm
can take (a loss only its kind's oracle serves, beyond the oracle's size limit) is counted in
``report.skipped`` rather than compared.

The cross-check is in ``_crosscheck.py``, the deep check in ``_deep.py``; what each problem kind
declares for them (its oracle, its instances, its deep cases and relations) lives with the kind
in ``aprank.inference``.
"""
from aprank.checks._crosscheck import (
    CrosscheckReport,
    Disagreement,
    bench_instance,
    crosscheck,
    make_instance,
    random_instance,
    solve_instance,
)
from aprank.checks._deep import (
    DeepCheckReport,
    DeepDisagreement,
    DeepRow,
    check_relation,
    deep_check,
    deep_instance,
)

__all__ = ["crosscheck", "make_instance", "random_instance", "bench_instance", "solve_instance",
           "CrosscheckReport", "Disagreement", "deep_check", "deep_instance", "check_relation",
           "DeepCheckReport", "DeepRow", "DeepDisagreement"]
