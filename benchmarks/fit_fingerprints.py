"""Every fitted array of a broad set of fits, stored, and two stores compared bit for bit.

A change meant as a refactoring or a speed-up only must leave every fit as it was, to the last
bit. This tool fits each estimator of ``aprank.learn`` (and ``aprank.boost`` where LightGBM is
installed) on small built-in or synthetic data, across values of C and every solver, and stores
each fitted array (``coef_``, ``intercept_``, ``threshold_``, ``n_iter_``, ``C_``, ``scores_``,
objectives, histories' primals) in an ``.npz``::

    python benchmarks/fit_fingerprints.py before.npz        # on the old checkout
    python benchmarks/fit_fingerprints.py after.npz         # on the new one
    python benchmarks/fit_fingerprints.py --compare before.npz after.npz

Run it as a script from the root of the checkout to fingerprint, with ``PYTHONPATH=.`` so that
its ``aprank`` is the one imported: it imports only ``aprank``'s public names, so an older
checkout built in place runs it too. Every fit runs with one BLAS thread, so that sums are taken
in one order.
"""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

#: the structural SVM's C of each fit (BinarySVM's per-sample C is C / n)
C_VALUES = (1e-2, 1.0, 100.0, 1e4)
#: the built-in solvers, by name: an older checkout, which has no registry to read, runs it too
SOLVERS = ("cutting-plane", "ocas", "multi-cut", "dual-cd")
#: the fitted attributes stored where an estimator has them
ATTRIBUTES = ("coef_", "intercept_", "threshold_", "n_iter_", "C_", "scores_", "objective_",
              "W_", "b_", "core_", "best_iteration_")


def _digits(digit: int):
    """Standardised digits, one class against the rest, 60 % of the rows."""
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    rows = np.random.default_rng(0).permutation(len(y))[: int(0.6 * len(y))]
    X = X[rows]
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    return X, (y[rows] == digit).astype(int)


def _queries(n_queries=30, size=25, d=8, seed=0):
    """(X, y, qid): queries of ``size`` rows, graded relevance 0 to 3 from a linear score
    (the fits take y >= 2 as relevant)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_queries * size, d))
    score = X @ rng.standard_normal(d) + 0.8 * rng.standard_normal(len(X))
    y = np.digitize(score, [0.5, 1.2, 2.0])
    return X, y, np.repeat(np.arange(n_queries), size)


def _grouped(n_groups=14, size=5, d=4, seed=0):
    """(X, y, groups): the tests' ``aprank_support.synthetic.grouped``, kept here rather than
    imported, so that a stored fingerprint does not move when the tests' data do."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_groups), size)
    group_label = rng.random(n_groups) < 0.4
    group_label[:2] = (True, False)
    y = group_label[groups] ^ (rng.random(groups.size) < 0.15)
    X = rng.standard_normal((groups.size, d)) + 0.8 * y[:, None]
    return X, y.astype(int), groups


def _bags(n_bags=40, size=4, d=5, seed=0):
    rng = np.random.default_rng(seed)
    positive = rng.random(n_bags) < 0.4
    positive[:2] = (True, False)
    bags = np.repeat(np.arange(n_bags), size)
    X = rng.standard_normal((bags.size, d))
    witness = np.arange(n_bags) * size + rng.integers(0, size, n_bags)
    X[witness[positive]] += 2.0 * np.eye(d)[0] + np.eye(d)[1]
    return X, positive[bags].astype(int), bags


def _multilabel(n=150, d=6, labels=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, (X @ rng.standard_normal((d, labels)) + 0.5 * rng.standard_normal((n, labels))) > 0.3


def fits():
    """(name, make, fit arguments) of every fit, ``make()`` the unfitted estimator."""
    import aprank.learn as learn

    out = []
    for digit in (3, 8):
        X, y = _digits(digit)
        n = len(y)
        for C in C_VALUES:
            out.append((f"digits{digit}/APSVM/C={C:g}", lambda C=C: learn.APSVM(C=C), (X, y), {}))
            out.append((f"digits{digit}/BinarySVM/C={C:g}",
                        lambda C=C, n=n: learn.BinarySVM(C=C / n), (X, y), {}))
            if digit == 8:
                for solver in SOLVERS:
                    out.append((f"digits8/APSVM/{solver}/C={C:g}",
                                lambda C=C, s=solver: learn.APSVM(C=C, solver=s), (X, y), {}))
                    out.append((f"digits8/BinarySVM/{solver}/C={C:g}",
                                lambda C=C, s=solver, n=n: learn.BinarySVM(C=C / n, solver=s),
                                (X, y), {}))
        out.append((f"digits{digit}/APSVMAppx", lambda: learn.APSVMAppx(C=10.0), (X, y), {}))
    X, y, qid = _queries()
    for C in C_VALUES:
        out.append((f"queries/APSVM/C={C:g}", lambda C=C: learn.APSVM(C=C), (X, y >= 2),
                    {"qid": qid}))
        out.append((f"queries/NDCGSVM/C={C:g}", lambda C=C: learn.NDCGSVM(C=C), (X, y >= 2),
                    {"qid": qid}))
    Xd, yd = _digits(8)
    out.append(("digits8/APSVMCV", lambda: learn.APSVMCV(cv=3), (Xd, yd), {}))
    out.append(("digits8/BinarySVMCV", lambda: learn.BinarySVMCV(cv=3, Cs=3), (Xd, yd), {}))
    out.append(("queries/NDCGSVMCV", lambda: learn.NDCGSVMCV(cv=3), (X, y >= 2), {"qid": qid}))
    Xb, yb, bags = _bags()
    out.append(("bags/LatentAPSVM", lambda: learn.LatentAPSVM(C=10.0), (Xb, yb), {"bags": bags}))
    out.append(("bags/LatentSSVM", lambda: learn.LatentSSVM(C=10.0), (Xb, yb), {"bags": bags}))
    out.append(("bags/LatentSVM", lambda: learn.LatentSVM(C=10.0), (Xb, yb), {"bags": bags}))
    Xg, yg, groups = _grouped()
    out.append(("groups/HOBSVM", lambda: learn.HOBSVM(C=10.0, eta=1.0), (Xg, yg),
                {"groups": groups}))
    out.append(("groups/HOAPSVM", lambda: learn.HOAPSVM(C=10.0, eta=1.0), (Xg, yg),
                {"groups": groups}))
    Xm, Ym = _multilabel()
    for core in (0, 2):
        out.append((f"multilabel/CStarPrecisionAtK/core={core}",
                    lambda c=core: learn.CStarPrecisionAtK(n_core=c, C=10.0, max_iter=100),
                    (Xm, Ym), {}))
    out += _boosted(X, y, qid)
    return out


def _boosted(X, y, qid):
    try:
        import aprank.boost as boost
    except ImportError:     # LightGBM absent: the boosted rankers are not fingerprinted
        return []
    return [(f"queries/{name}", lambda c=getattr(boost, name): c(n_estimators=20, random_state=0),
             (X, y >= 2), {"qid": qid}) for name in ("APBoostRanker", "NDCGBoostRanker")]


def _arrays(name: str, est) -> dict:
    stored = {}
    for attribute in ATTRIBUTES:
        value = getattr(est, attribute, None)
        if value is not None and not callable(value):
            stored[f"{name}/{attribute}"] = np.asarray(value)
    history = getattr(est, "history_", None) or getattr(est, "cccp_history_", None)
    if history:
        for key in ("primal", "dual", "objective"):
            if key in history[0]:
                stored[f"{name}/history/{key}"] = np.array([h[key] for h in history])
    booster = getattr(est, "booster_", None)
    if booster is not None:
        # the trees, without the parameters' section (its list of LightGBM's settings)
        trees = booster.model_to_string().split("\nparameters:")[0]
        stored[f"{name}/trees"] = np.frombuffer(trees.encode(), np.uint8)
    return stored


def fingerprint(log=print) -> dict:
    stored = {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make, args, kwargs in fits():
            est = make().fit(*args, **kwargs)
            arrays = _arrays(name, est)
            stored.update(arrays)
            log(f"{name}: {len(arrays)} arrays")
    return stored


def compare(before: str, after: str) -> int:
    a, b = np.load(before), np.load(after)
    same, different = 0, []
    for key in sorted(set(a.files) | set(b.files)):
        if key not in a.files or key not in b.files:
            different.append(f"{key}: only in {'after' if key in b.files else 'before'}")
        elif a[key].shape == b[key].shape and a[key].tobytes() == b[key].tobytes():
            same += 1
        else:
            different.append(key)
    print(f"{same + len(different)} arrays, {same} bit-identical, {len(different)} different")
    for line in different:
        print(f"  {line}")
    return 1 if different else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", help="OUT.npz, or BEFORE.npz AFTER.npz with --compare")
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args(argv)
    if args.compare:
        if len(args.paths) != 2:
            parser.error("--compare takes two stores")
        return compare(*args.paths)
    if len(args.paths) != 1:
        parser.error("give one store to write")
    np.savez(args.paths[0], **fingerprint())
    return 0


if __name__ == "__main__":
    sys.exit(main())
