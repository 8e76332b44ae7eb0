"""Fit times of the structured SVMs against liblinear (``python -m benchmarks --fit``).

Per data set and C: the time of a converged APSVM (``qs``) and BinarySVM fit, split into
products and cut (``X w``, ``X'c`` and forming the constraint: the model's ``most_violated``
less inference), the working-set QP, loss-augmented inference and the rest (validation, the
model's setup, the learner's bookkeeping), next to scikit-learn's ``LinearSVC`` on exactly
BinarySVM's problem.

The table's C is the structural SVM's, the weight of a loss normalised to [0, 1], for every
method: BinarySVM's own C is per sample (LinearSVC's), so its row at C is ``BinarySVM(C=C / n)``
with n the training samples, and LinearSVC's is ``LinearSVC(C=C / n, loss="hinge",
class_weight="balanced")`` (given as the sample weights below).

The matching: the 0-1 loss's structural SVM minimises 1/2 ||w||^2 + C xi, xi the mean over queries
of sum_i v_i hinge_i / z_q, with v_i = J_q = N_q / P_q for a positive and 1 for a negative and
z_q = J_q P_q + N_q = 2 N_q (the weighted 0-1 loss's normaliser), and a bias as a constant
feature 1 regularised like w. That is LinearSVC(loss="hinge", dual=True, C=C,
fit_intercept=True, intercept_scaling=1) with ``sample_weight`` v_i / (z_q n_queries); without
qid, C / (2N) and class weights N/P and 1. Its ``tol`` (1e-4, liblinear's projected gradient)
is its default; the table reports how far its w and primal objective are from BinarySVM's.

The data: scikit-learn's digits (one class vs the rest, the experiments' 70 % training split,
standardised), an MNIST-sized set (5000 x 784: digits upsampled to 28 x 28 with random
sub-pixel shifts, pixels in [0, 1]; no MNIST is read), HJA birdsong segments (one species vs
the rest, the experiments' training recordings, standardised) and the Yahoo LTR sample (with
qid, relevance >= 2; queries without a positive skipped; NDCGSVM too).

Every fit runs with one BLAS thread (liblinear has one), timed with ``time.perf_counter``.
``--before PATH`` runs the same table in a subprocess on the aprank package found in PATH (an
older checkout, built in place), this file run as a script, so that both tables come from one
command: it imports nothing of ``benchmarks``, only ``aprank``'s public names.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import aprank.learn
from aprank.datasets import load_hja_birdsong, load_yahoo_ltr, recording_split
from aprank.learn import cutting_plane
from aprank.losses import get_loss
from aprank.models import RankingModel

#: the C of the table (the target: every fit converges from 1e-3 to 1e4)
C_VALUES = (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4)
TOL = 1e-3
MAX_ITER = 1000
DIGIT_CLASSES = (3, 8)
BIRD_SPECIES = (1, 2)
MNIST_CLASS = 8
MNIST_SIZE = 5000
SEED = 0


# --------------------------------------------------------------------------- data
def digits_tasks():
    """(name, X, y, qid) per digit of ``DIGIT_CLASSES``, the experiments' training split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=SEED)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    return [(f"digit {c}", X, y == c, None) for c in DIGIT_CLASSES]


def mnist_like(n: int = MNIST_SIZE, seed: int = SEED):
    """(X, digit) of n 28 x 28 images: random digits (scikit-learn's 8 x 8) upsampled 3.5 x
    with a random shift of up to 2 pixels each way, pixels in [0, 1]."""
    from scipy.ndimage import shift, zoom
    from sklearn.datasets import load_digits

    images, digit = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, images.shape[0], n)
    X = np.empty((n, 784))
    for row, k in enumerate(pick):
        big = zoom(images[k].reshape(8, 8) / 16.0, 3.5, order=1)
        X[row] = np.clip(shift(big, rng.uniform(-2, 2, 2), order=1), 0.0, 1.0).ravel()
    return X, digit[pick]


def mnist_tasks():
    X, digit = mnist_like()
    return [(f"digit {MNIST_CLASS}", X, digit == MNIST_CLASS, None)]


def birds_tasks():
    data = load_hja_birdsong()
    train, _ = recording_split(data.recording, test_fraction=0.3, seed=SEED)
    X = data.X[train]
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    return [(data.class_names[s - 1].split(" - ")[0], X, data.species[train] == s, None)
            for s in BIRD_SPECIES]


#: the dense wide set: as many features as a gene-expression or image-descriptor table has,
#: more than twice its rows, so that one epoch of coordinate descent is a full pass over 12
#: million values
WIDE_SHAPE = (2000, 5900)
WIDE_LATENT = 40


def dense_wide(shape=WIDE_SHAPE, seed: int = SEED):
    """(X, y) of a dense data set with features correlated through ``WIDE_LATENT`` latent
    factors plus noise (standardised), and about 15 % positives, a noisy linear function of
    the factors (so that no C separates them)."""
    n, d = shape
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, WIDE_LATENT))
    X = Z @ rng.standard_normal((WIDE_LATENT, d)) / np.sqrt(WIDE_LATENT)
    X += rng.standard_normal((n, d))
    X = (X - X.mean(0)) / X.std(0)
    score = Z @ rng.standard_normal(WIDE_LATENT) + rng.standard_normal(n)
    return X, score > np.quantile(score, 0.85)


def wide_tasks():
    X, y = dense_wide()
    return [("15 % positives", X, y, None)]


def yahoo_tasks():
    train = load_yahoo_ltr("train")
    return [("relevance >= 2", train.X, train.relevance >= 2, train.qid)]


DATA_SETS = {"digits": digits_tasks, "mnist-like": mnist_tasks, "HJA birds": birds_tasks,
             "Yahoo LTR": yahoo_tasks, "dense wide": wide_tasks}


# --------------------------------------------------------------------------- fits
class _Timed:
    """``target`` (a model, or the risk split a model's ``split_risk`` gives) with the calls
    that run inference timed: every ``most_violated*`` method (inference, the products and the
    cut together) adds its seconds to ``clock["seconds"]``; everything else is the target's
    own. Delegating by name keeps the timing right on a checkout of another protocol version
    (``--before``)."""

    def __init__(self, target, clock: dict):
        self._target, self._clock = target, clock

    @property
    def seconds(self) -> float:
        return self._clock["seconds"]

    def estimated_seconds(self):
        """None: the fit is timed, so no time goes into its estimate."""
        return None

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if name == "split_risk":
            return lambda n_blocks: _timed_split(value(n_blocks), self._clock)
        if not (name.startswith("most_violated") and callable(value)):
            return value

        def timed(*args):
            t0 = time.perf_counter()
            try:
                return value(*args)
            finally:
                self._clock["seconds"] += time.perf_counter() - t0
        return timed


def _timed_split(split, clock: dict):
    return None if split is None else _Timed(split, clock)


def _timed_model(model) -> _Timed:
    """``model`` with its inference calls timed (:class:`_Timed`)."""
    return _Timed(model, {"seconds": 0.0})


def structured_fit(method: str, X, y, qid, C: float, tol: float = TOL,
                   solver: str | None = None) -> dict:
    """One fit as the estimator runs it (its design matrix, model and learner), timed in
    parts. method: "APSVM", "NDCGSVM" or "BinarySVM"; solver: the learner's (None: the
    estimator's default, which is all that a checkout older than ``solver=`` takes)."""
    t0 = time.perf_counter()
    design = X
    if method == "BinarySVM":   # the estimator's bias column
        ones = np.ones((X.shape[0], 1))
        design = sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])
    loss, algorithm = {"APSVM": ("ap", "qs"), "NDCGSVM": ("ndcg", "qs"),
                       "BinarySVM": ("zero-one", "zero-one")}[method]
    timed = _timed_model(RankingModel(design, y, loss, qid=qid, algorithm=algorithm,
                                      empty="skip"))
    if solver is None:      # the estimator's default (a checkout older than solver=: none)
        solver = getattr(getattr(aprank.learn, method)(), "solver", None)
    options = {} if solver is None else {"solver": solver}
    res = cutting_plane(timed, C, tol=tol, max_iter=MAX_ITER, prune_after=50, **options)
    total = time.perf_counter() - t0
    inference = sum(h["inference_seconds"] for h in res.history)
    qp = sum(h["qp_seconds"] for h in res.history)
    products = timed.seconds - inference
    return {"seconds": total, "products": products, "qp": qp, "inference": inference,
            "other": total - products - qp - inference, "converged": bool(res.converged),
            "n_iter": int(res.n_iter), "w": res.w.tolist(), "primal": float(res.primal),
            "gap": float(res.gap), "ridge": float(getattr(res.working_set, "ridge", 0.0))}


def liblinear_weights(y, qid):
    """Per-sample weights s with BinarySVM's xi = sum_i s_i hinge_i (module docstring)."""
    qid = np.zeros(y.shape[0]) if qid is None else np.asarray(qid)
    _, q = np.unique(qid, return_inverse=True)
    P = np.bincount(q, weights=y.astype(float))
    N = np.bincount(q, weights=(~y).astype(float))
    used = P > 0
    v, z = get_loss("zero-one").weights(y, P[q], N[q])     # the model's own v and z
    return np.where(used[q] & (z > 0), v / np.where(z > 0, z, 1.0), 0.0) / used.sum()


def liblinear_fit(X, y, qid, C: float) -> dict:
    """LinearSVC on BinarySVM's problem (module docstring); w includes the bias last."""
    from sklearn.svm import LinearSVC

    s = liblinear_weights(y, qid)
    keep = s > 0
    t0 = time.perf_counter()
    svc = LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=True, intercept_scaling=1.0,
                    max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc.fit(X[keep], y[keep], sample_weight=s[keep])
    seconds = time.perf_counter() - t0
    w = np.r_[svc.coef_.ravel(), svc.intercept_]
    margins = np.where(y[keep], 1.0, -1.0) * (X[keep] @ w[:-1] + w[-1])
    primal = 0.5 * float(w @ w) + C * float(s[keep] @ np.maximum(0.0, 1.0 - margins))
    return {"seconds": seconds, "n_iter": int(svc.n_iter_), "w": w.tolist(), "primal": primal,
            "converged": bool(svc.n_iter_ < 100_000)}


def methods_of(data_set: str):
    return ("APSVM", "NDCGSVM", "BinarySVM") if data_set == "Yahoo LTR" else ("APSVM", "BinarySVM")


def _median_run(fit, repeats: int) -> dict:
    """The run of median time among ``repeats`` runs of ``fit()`` (its split with it)."""
    runs = sorted((fit() for _ in range(repeats)), key=lambda r: r["seconds"])
    return runs[(len(runs) - 1) // 2]


def measure(data_sets=None, C_values=C_VALUES, liblinear=True, repeats: int = 3,
            log=lambda line: None, plain: bool = True) -> list:
    """Rows (dicts) of every fit: data set, task, C, method and its times (the run of median
    time of ``repeats``); with ``plain``, also the plain cutting plane's fit of the same problem
    (``solver="cutting-plane"``: its time, iterations and convergence, under "plain")."""
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")     # a fit that does not converge says so in its row
        for name in data_sets or DATA_SETS:
            for task, X, y, qid in DATA_SETS[name]():
                for C in C_values:
                    for method in methods_of(name):
                        r = _median_run(lambda: structured_fit(method, X, y, qid, C), repeats)
                        if plain:
                            p = _median_run(lambda: structured_fit(method, X, y, qid, C,
                                                                   solver="cutting-plane"), repeats)
                            r["plain"] = {k: p[k] for k in ("seconds", "n_iter", "converged",
                                                            "primal")}
                        rows.append({"data": name, "task": task, "C": C, "method": method, **r})
                        log(f"{name:10s} {task:16s} C={C:<6g} {method:10s} {r['seconds']:8.3f} s "
                            f"{r['n_iter']:4d} it qp {r['qp']:.3f} inf {r['inference']:.3f} "
                            f"prod {r['products']:.3f} conv {r['converged']}")
                    if liblinear:
                        r = _median_run(lambda: liblinear_fit(X, y, qid, C), repeats)
                        rows.append({"data": name, "task": task, "C": C, "method": "LinearSVC",
                                     **r})
                        log(f"{name:10s} {task:16s} C={C:<6g} LinearSVC  {r['seconds']:8.3f} s")
    return rows


# --------------------------------------------------------------------------- tables
_PARTS = ("products", "qp", "inference", "other")


def _select(rows, data, C, method) -> list:
    """The rows of one cell: a data set's tasks at C fitted by method."""
    return [r for r in rows if r["data"] == data and r["C"] == C and r["method"] == method]


def _cells(rows, data, C, method):
    """Sums over a data set's tasks: (seconds, parts, iterations (mean), all converged)."""
    sel = _select(rows, data, C, method)
    if not sel:
        return None
    return {"seconds": sum(r["seconds"] for r in sel),
            **{p: sum(r.get(p, 0.0) for r in sel) for p in _PARTS},
            "n_iter": float(np.mean([r["n_iter"] for r in sel])),
            "converged": all(r["converged"] for r in sel), "tasks": len(sel)}


def _split_text(c) -> str:
    return " / ".join(f"{1e3 * c[p]:.1f}" for p in _PARTS)


def _relative(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def format_table(after: list, before: list | None = None) -> str:
    """The Markdown fit-time table: per data set, C and method, the fit time in ms and its
    split (products and cut / QP / inference / rest), iterations and convergence, after (and
    before) and, for LinearSVC, how far its w and primal objective are from BinarySVM's; where
    the rows carry the plain cutting plane's fits (``measure(plain=True)``), their time,
    iterations and convergence (the default solver's iterations beside them are the
    "iterations" column)."""
    with_plain = any("plain" in r for r in after)
    head = ["data set (tasks)", "C", "method", "fit ms",
            "split ms (products / QP / inference / rest)", "iterations", "converged"]
    if with_plain:
        head += ["plain CP: fit ms", "plain CP: iterations", "plain CP: converged"]
    if before is not None:
        head[3:3] = ["before: fit ms", "before: split ms"]
        head[-2:-2] = ["speed-up"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = list(dict.fromkeys(r["data"] for r in after))
    for data in order:
        Cs = sorted({r["C"] for r in after if r["data"] == data})
        for C in Cs:
            for method in methods_of(data) + ("LinearSVC",):
                now = _cells(after, data, C, method)
                if now is None:
                    continue
                then = None if before is None else _cells(before, data, C, method)
                name = f"{data} ({now['tasks']})"
                if method == "LinearSVC":
                    mine = [r for r in after if r["data"] == data and r["C"] == C
                            and r["method"] == "BinarySVM"]
                    lin = [r for r in after if r["data"] == data and r["C"] == C
                           and r["method"] == "LinearSVC"]
                    dw = max(_relative(a["w"], m["w"]) for a, m in zip(lin, mine))
                    dp = max(abs(a["primal"] - m["primal"]) / abs(m["primal"])
                             for a, m in zip(lin, mine))
                    split = f"w differs by {dw:.1e}, primal by {dp:.1e} (relative)"
                else:
                    split = _split_text(now)
                cells = [name, f"{C:g}", method, f"{1e3 * now['seconds']:.1f}", split,
                         f"{now['n_iter']:.0f}", "yes" if now["converged"] else "NO"]
                if before is not None:
                    if then is None:
                        cells[3:3] = ["", ""]
                        cells[-2:-2] = [""]
                    else:
                        cells[3:3] = [f"{1e3 * then['seconds']:.1f}", _split_text(then)]
                        cells[-2:-2] = [f"{then['seconds'] / now['seconds']:.1f} x"]
                        cells[-2] = f"{then['n_iter']:.0f} -> {now['n_iter']:.0f}"
                if with_plain:
                    cells += _plain_cells(after, data, C, method)
                out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _plain_cells(rows, data, C, method) -> list:
    """The plain cutting plane's cells of a data set, C and method (sums and mean over the
    tasks, as :func:`_cells`); blank for LinearSVC."""
    sel = [r["plain"] for r in _select(rows, data, C, method) if "plain" in r]
    if not sel:
        return ["", "", ""]
    return [f"{1e3 * sum(p['seconds'] for p in sel):.1f}",
            f"{np.mean([p['n_iter'] for p in sel]):.0f}",
            "yes" if all(p["converged"] for p in sel) else "NO"]


def format_targets(after: list) -> str:
    """The fit-time targets, per data set and C: APSVM / BinarySVM (no slower where
    either fit is over 50 ms) and BinarySVM / LinearSVC (within 2 x), then how many cells
    meet each."""
    out = ["| data set | C | APSVM / BinarySVM | BinarySVM / LinearSVC |", "|---|---|---|---|"]
    ap_cells, ap_met, lin_cells, lin_met = 0, [], 0, []
    for data in dict.fromkeys(r["data"] for r in after):
        for C in sorted({r["C"] for r in after if r["data"] == data}):
            ap, binary, lin = (_cells(after, data, C, m)
                               for m in ("APSVM", "BinarySVM", "LinearSVC"))
            r1 = ap["seconds"] / binary["seconds"]
            if max(ap["seconds"], binary["seconds"]) > 0.05:
                ap_cells += 1
                ap_met += [f"{data} C = {C:g}"] if r1 <= 1 else []
            r2 = "" if lin is None else f"{binary['seconds'] / lin['seconds']:.2f}"
            if lin is not None:
                lin_cells += 1
                lin_met += [f"{data} C = {C:g}"] if binary["seconds"] <= 2 * lin["seconds"] else []
            out.append(f"| {data} | {C:g} | {r1:.2f} | {r2} |")
    out += ["", f"- BinarySVM within 2 x LinearSVC in {len(lin_met)} of {lin_cells} cells.",
            f"- APSVM no slower than BinarySVM in {len(ap_met)} of the {ap_cells} cells where "
            "either fit takes over 50 ms."]
    ratios = _iteration_ratios(after)
    if ratios:
        values = [r for r, _ in ratios]
        capped = sum(stopped for _, stopped in ratios)
        out.append(f"- The default solvers' iterations at C >= 100: the plain loop's / theirs is "
                   f"{np.median(values):.2f} in the median cell (from {min(values):.2f} to "
                   f"{max(values):.2f}, {len(values)} cells; in {capped} of them the plain loop "
                   "stopped at max_iter, so their ratio is a lower bound).")
    return "\n".join(out)


def _iteration_ratios(rows) -> list:
    """(plain iterations / default iterations, whether the plain loop stopped) per cell of a
    structured SVM at C >= 100 whose rows carry the plain loop's fits."""
    out = []
    for data in dict.fromkeys(r["data"] for r in rows):
        for C in sorted({r["C"] for r in rows if r["data"] == data and r["C"] >= 100}):
            for method in methods_of(data):
                sel = [r for r in _select(rows, data, C, method) if "plain" in r]
                if sel:
                    out.append((np.mean([r["plain"]["n_iter"] for r in sel])
                                / np.mean([r["n_iter"] for r in sel]),
                                not all(r["plain"]["converged"] for r in sel)))
    return out


def format_equality(new: list, old: list) -> str:
    """Max relative difference of w, new against old, over the equality fits, split by whether
    quadprog needed ridged proximal steps in the old rows' fit."""
    groups = {True: [], False: []}
    for a, b in zip(new, old):
        assert ((a["data"], a["task"], a["C"], a["method"])
                == (b["data"], b["task"], b["C"], b["method"]))
        groups[b["ridge"] > 0].append((_relative(a["w"], b["w"]), a, b))
    out = ["| QP solver of the old rows' fit | fits | max relative difference of w "
           "| fits above 1e-9 |",
           "|---|---:|---:|---:|"]
    for ridged, name in ((False, "quadprog alone"), (True, "quadprog with ridged proximal steps")):
        g = groups[ridged]
        if g:
            out.append(f"| {name} | {len(g)} | {max(x[0] for x in g):.1e} | "
                       f"{sum(x[0] > 1e-9 for x in g)} |")
    return "\n".join(out)


#: the experiment data of the equality check: every class of digits and birds, both Yahoo
#: thresholds
def equality_tasks():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=SEED)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    tasks = [("digits", f"digit {c}", X, y == c, None) for c in range(10)]
    data = load_hja_birdsong()
    train, _ = recording_split(data.recording, test_fraction=0.3, seed=SEED)
    Xb = data.X[train]
    Xb = (Xb - Xb.mean(0)) / np.where(Xb.std(0) > 0, Xb.std(0), 1.0)
    tasks += [("HJA birds", data.class_names[s - 1].split(" - ")[0], Xb,
               data.species[train] == s, None) for s in range(1, 14)]
    yahoo = load_yahoo_ltr("train")
    tasks += [("Yahoo LTR", f"relevance >= {t}", yahoo.X, yahoo.relevance >= t, yahoo.qid)
              for t in (2, 1)]
    return tasks


def weights(C_values=C_VALUES, log=lambda line: None) -> list:
    """Rows of every fit of the equality check: w, primal, gap, iterations, and the ridge
    quadprog needed (0 where the active set solved every QP)."""
    rows = []
    with threadpool_limits(1):
        for data, task, X, y, qid in equality_tasks():
            for C in C_values:
                for method in methods_of(data):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = structured_fit(method, X, y, qid, C)
                    rows.append({"data": data, "task": task, "C": C, "method": method, **r})
                    log(f"{data} {task} {C:g} {method} {r['n_iter']} it ridge {r['ridge']:.1e}")
    return rows


def measure_elsewhere(path: str, data_sets=None, C_values=C_VALUES, what="table",
                      repeats: int = 3) -> list:
    """:func:`measure` (without LinearSVC) on the aprank package in checkout ``path``: a copy
    of this file runs as a script from a temporary folder (so that nothing beside it shadows a
    package), with ``PYTHONPATH`` set to ``path``."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(path)}
    with tempfile.TemporaryDirectory() as folder:
        script = shutil.copy(__file__, os.path.join(folder, "fit_times_script.py"))
        args = [sys.executable, script, json.dumps({"data_sets": data_sets, "what": what,
                                                    "C_values": list(C_values),
                                                    "repeats": repeats})]
        out = subprocess.run(args, env=env, cwd=folder, check=True, capture_output=True,
                             text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


if __name__ == "__main__":      # measure_elsewhere's subprocess: rows as one JSON line
    spec = json.loads(sys.argv[1])
    def _log(line):
        print(line, file=sys.stderr, flush=True)
    if spec.get("what") == "weights":
        print(json.dumps(weights(tuple(spec["C_values"]), log=_log)))
    else:
        print(json.dumps(measure(spec["data_sets"], tuple(spec["C_values"]), liblinear=False,
                                 repeats=spec["repeats"], log=_log, plain=False)))
