"""``python -m experiments.nonlinear_trees_exploration``: which AP-hinge objective for the trees.

One seed, no test data: each data set's outer split of seed 0 (30 % of the groups, as the
nonlinear experiment draws it with scikit-learn's ``GroupShuffleSplit``) is set aside unread,
and the training part is split again by group, 30 % for validation (``--split-seed``, 1 by
default, draws that split). Every variant runs with 15 leaves, learning rate 0.1 and one model
per row, and is scored on the validation part after 50, 100, 200 and 400 rounds; a cell is the
mean over the data set's rows of the validation AP at the round count best on average for that
variant and data set (the same optimism for every variant), and in brackets the rows at or
above LightGBM binary's validation AP. Prints a Markdown table. LightGBM and XGBoost run on
one thread (their parameters); set ``OMP_NUM_THREADS=1`` for numpy.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.model_selection import GroupShuffleSplit

from aprank.metrics import average_precision
from experiments.nonlinear_tasks import load_tasks
from experiments.nonlinear_trees import lightgbm_fit_predict, xgboost_fit_predict

BUDGETS = (50, 100, 200, 400)
DIGITS = (3, 5, 8, 9)

#: name -> fit_predict
VARIANTS = {
    "LightGBM binary": lightgbm_fit_predict("binary", BUDGETS),
    "LightGBM lambdarank": lightgbm_fit_predict("lambdarank", BUDGETS),
    "XGBoost rank:map": xgboost_fit_predict(BUDGETS),
    "AP hinge, unit hessian": lightgbm_fit_predict("hinge", BUDGETS, hinge={"hessian": "unit"}),
    "AP hinge, balanced x0.5": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "balanced", "scale": 0.5}),
    "AP hinge, balanced x1": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "balanced", "scale": 1.0}),
    "AP hinge, balanced x2": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "balanced", "scale": 2.0}),
    "AP hinge, rank hessian": lightgbm_fit_predict("hinge", BUDGETS, hinge={"hessian": "rank"}),
    "AP hinge, smoothed (sigma 0.3, 4 draws)": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"smooth": 0.3, "draws": 4}),
    "AP hinge, stochastic queries of 256": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"queries": 256}),
    "AP hinge + logistic, mix 0.5": lightgbm_fit_predict("hinge", BUDGETS, hinge={"mix": 0.5}),
    "AP hinge, rank hessian, floor 0.03": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "floor": 0.03}),
    "AP hinge, rank hessian, floor 0.3": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "floor": 0.3}),
    "AP hinge, rank hessian, stochastic queries of 256": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "queries": 256}),
    "AP hinge, rank hessian + balanced logistic, mix 0.5": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "mix": 0.5}),
    "AP hinge, rank hessian + plain logistic, mix 0.5": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "mix": 0.5, "logistic": "plain"}),
    "AP hinge, rank hessian + plain logistic, mix 0.8": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "mix": 0.8, "logistic": "plain"}),
    "AP hinge, rank hessian, floor 0.01": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "floor": 0.01}),
    "AP hinge, rank hessian, floor 0.003": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "floor": 0.003}),
    "AP hinge, rank hessian, floor 0.01, stochastic queries of 256": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "floor": 0.01, "queries": 256}),
    "AP hinge, rank hessian, floor 0.03, stochastic queries of 256": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "floor": 0.03, "queries": 256}),
    "AP hinge, rank hessian, floor 0.03 + plain logistic, mix 0.3": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "floor": 0.03, "mix": 0.3,
                                 "logistic": "plain"}),
    "AP hinge, rank hessian, floor 0.03 + plain logistic, mix 0.5": lightgbm_fit_predict(
        "hinge", BUDGETS, hinge={"hessian": "rank", "floor": 0.03, "mix": 0.5,
                                 "logistic": "plain"}),
    "NDCG hinge, balanced x1": lightgbm_fit_predict("hinge", BUDGETS, hinge={"loss": "ndcg"}),
}


def _data_sets():
    """(name, X, Y, groups, qid or None, positive_level): the experiment's data sets, four
    digits of ten."""
    digits, birds, fox, yahoo = load_tasks(["digits", "HJA birdsong", "fox", "Yahoo LTR"])
    yield ("digits " + ",".join(map(str, DIGITS)), digits.X, digits.Y[:, list(DIGITS)],
           digits.groups, None, 1)
    for task in (birds, fox, yahoo):
        yield task.name, task.X, task.Y, task.groups, task.qid, task.positive_level


def _split(X, groups, seed):
    return next(GroupShuffleSplit(n_splits=1, test_size=0.3, random_state=seed)
                .split(X, groups=groups))


def _ap(y, s, qid):
    if qid is None:
        return average_precision(y, s)
    return average_precision(y, s, qid=qid, empty="skip")  # mean over queries with a positive


def explore(split_seed=1, only=None):
    """Validation AP per (variant, data set); ``only``: the variants named (and binary)."""
    variants = {k: v for k, v in VARIANTS.items()
                if only is None or k in only or k == "LightGBM binary"}
    results = {}  # (variant, data set) -> per-row AP at the best budget
    seconds = {}
    names = []
    for name, X, Y, groups, qid, level in _data_sets():
        names.append(name)
        outer_train, _ = _split(X, groups, 0)  # the test part is never read
        fit_idx, val_idx = _split(X[outer_train], groups[outer_train], split_seed)
        fit_idx, val_idx = outer_train[fit_idx], outer_train[val_idx]
        q_fit = None if qid is None else qid[fit_idx]
        q_val = None if qid is None else qid[val_idx]
        for variant, fit_predict in variants.items():
            t0 = time.process_time()
            out = fit_predict({}, X[fit_idx], Y[fit_idx], q_fit, [X[val_idx]], 0, level)
            seconds[variant] = seconds.get(variant, 0.0) + time.process_time() - t0
            per_budget = np.array([[_ap(Y[val_idx, j] >= level, out[b][0][:, j], q_val)
                                    for j in range(Y.shape[1])] for b in BUDGETS])
            results[variant, name] = per_budget[per_budget.mean(axis=1).argmax()]
    return names, results, seconds, list(variants)


def table(names, results, seconds, variants) -> str:
    base = "LightGBM binary"
    head = ["variant"] + names + ["rows >= binary", "CPU s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for variant in variants:
        cells = [f"{results[variant, n].mean():.3f} "
                 f"({int((results[variant, n] >= results[base, n]).sum())}"
                 f"/{results[base, n].shape[0]})" for n in names]
        wins = sum(int((results[variant, n] >= results[base, n]).sum()) for n in names)
        rows = sum(results[base, n].shape[0] for n in names)
        cells += [f"{wins}/{rows}", f"{seconds[variant]:.0f}"]
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: Variants a quick run tries (with LightGBM binary).
QUICK_VARIANTS = ("AP hinge, unit hessian", "AP hinge, rank hessian, floor 0.01")


def nonlinear_trees_explore(quick: bool = False, log=print) -> str:
    """``python -m experiments nonlinear-trees-explore``: the exploration's Markdown table,
    with its settings (quick: two variants)."""
    names, results, seconds, variants = explore(1, QUICK_VARIANTS if quick else None)
    return ("Validation AP (seed 0's training part split again by group, 30 % validating; 15 "
            "leaves, learning rate 0.1, one model per row; each data set's best budget of "
            f"{', '.join(map(str, BUDGETS))} rounds; in brackets the rows at or above "
            "LightGBM binary; CPU seconds over the four data sets).\n\n"
            + table(names, results, seconds, variants) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split-seed", type=int, default=1,
                        help="seed of the train / validation split of the training parts")
    parser.add_argument("--only", nargs="+", metavar="VARIANT",
                        help="these variants only (with LightGBM binary)")
    args = parser.parse_args(argv)
    print(table(*explore(args.split_seed, args.only)))


if __name__ == "__main__":
    main()
