"""The supervised experiments on real data, one command each, writing a Markdown table the
README includes (the latent ones: ``experiments.latent``; the torch loss:
``experiments.torch_mlp``).

    python -m experiments digits      # scikit-learn's load_digits, one class vs the rest
    python -m experiments birds       # HJA birdsong segments, one species vs the rest
    python -m experiments yahoo       # Yahoo LTR sample, per-query ranking with qid
    python -m experiments cstar       # HJA recordings: c-star precision@k (Mensink et al. 2011)
    python -m experiments high-order  # HJA segments linked by recording: Dokania et al. (2014)

Digits and birds are the analogue of Mohapatra et al. (2014), Tables 1-3 / Mohapatra et al. (2018),
Table 1: per class, the test AP of BinarySVM, APSVM and APSVMAppx (keep 25/50/75 %) with C chosen by
5-fold cross-validation on the training split (mean AP), the loss-augmented inference time of the
final trainings (per call and in total, and for APSVM with each exact AP algorithm, which must
all learn the same w), and the training time next to scikit-learn's LinearSVC. Yahoo reports
mean per-query AP and NDCG on the test file for BinarySVM, APSVM and NDCGSVM, with relevance
>= 2 (and >= 1) as positive. Cstar is the analogue of Mensink et al. (2011), Table 1: break-even
precision of the independent and the c-star (core of 5) models, automatic and after Q = 1, 5, 10
questions. High-order is the analogue of Dokania et al. (2014), Table 1: per species, the test AP of
BinarySVM, APSVM, HOBSVM and HOAPSVM on HJA segments, segments of one recording linked, C and
eta by cross-validation on the training recordings. Whatever wins is reported.
"""
from __future__ import annotations

import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from aprank.datasets import load_hja_birdsong, load_hja_recordings, load_yahoo_ltr, recording_split
from aprank.inference import algorithms
from aprank.learn import (
    APSVM,
    APSVMCV,
    HOAPSVM,
    HOBSVM,
    NDCGSVM,
    NDCGSVMCV,
    APSVMAppx,
    BinarySVM,
    CStarPrecisionAtK,
)
from aprank.metrics import average_precision, ndcg

# C is searched over decades: first C_GRID, then widened one decade at a time while the chosen C
# is the smallest or largest tried, within C_LIMITS (a fold fit at C = 1e4 already takes ~1000
# iterations on HJA birdsong). A choice left on an edge can only sit at a limit, and the tables
# count such choices. --quick tries QUICK_C_GRID only.
C_GRID = (0.1, 1.0, 10.0, 100.0)
C_LIMITS = (1e-3, 1e4)
QUICK_C_GRID = (1.0, 10.0)
SEED = 0
TOL = 1e-3



def _n_trained(y, qid=None, sample_weight=None) -> float:
    """BinarySVM's n: the training samples in queries with a relevant sample (weighted)."""
    y = np.asarray(y)
    is_pos = y == np.unique(y)[-1]
    keep = np.ones(y.shape[0], bool)
    if qid is not None:
        qid = np.asarray(qid)
        keep = np.isin(qid, np.unique(qid[is_pos]))
    return float(keep.sum() if sample_weight is None else np.asarray(sample_weight)[keep].sum())


class StructuralBinarySVM(BinarySVM):
    """BinarySVM with C on the rank SVMs' scale, the one the stored tables were made at: C
    weighs the mean of the samples' weighted hinges, as
    the rank SVMs' C weighs their losses, so that one C grid means the same trade-off for
    every method. BinarySVM's C is per sample (scikit-learn's), so each fit runs
    ``BinarySVM(C / n)``, n its own training samples (a fold's, in cross-validation)."""

    def fit(self, X, y, qid=None, sample_weight=None):
        inner = BinarySVM(**{**self.get_params(), "C": self.C / _n_trained(y, qid, sample_weight)})
        inner.fit(X, y, qid=qid, sample_weight=sample_weight)
        params = self.get_params()
        self.__dict__.update({k: v for k, v in vars(inner).items() if k not in params})
        return self


METHODS = {
    "BinarySVM": lambda C: StructuralBinarySVM(C=C, tol=TOL),
    "APSVM": lambda C: APSVM(C=C, tol=TOL),
    "APSVM-APPX 25%": lambda C: APSVMAppx(C=C, keep=0.25, tol=TOL),
    "APSVM-APPX 50%": lambda C: APSVMAppx(C=C, keep=0.50, tol=TOL),
    "APSVM-APPX 75%": lambda C: APSVMAppx(C=C, keep=0.75, tol=TOL),
}

#: The methods whose C the package's cross-validated estimators search (given the folds, no
#: refit); the others by ``loop_scores``: APSVMAppx, and BinarySVM, whose C here is the
#: structural one (``StructuralBinarySVM``), which BinarySVMCV's per-sample Cs cannot be
#: across folds of different sizes (its cold fits are the loop's otherwise).
CV_METHODS = {
    "APSVM": lambda Cs, cv: APSVMCV(Cs=Cs, cv=cv, refit=False, tol=TOL),
}


@dataclass
class Fit:
    """One final training run at the cross-validated C."""

    C: float
    test_ap: float
    fit_seconds: float
    inference_seconds: float
    n_calls: int
    n_iter: int
    converged: bool
    gap: float
    estimator: object = field(repr=False, default=None)
    choice: object = None       # the CChoice that picked C (None for fits at a given C)


@dataclass(frozen=True)
class CChoice:
    """The C chosen by cross-validation, every C tried, and whether the choice is on an edge.

    ``flat``: an edge choice whose fold scores equal, bit for bit, those of its neighbour. The
    two fits rank every validation sample alike (at small C, w keeps its direction and only
    shrinks), so no wider grid could change the scores, and the search stops there.
    """

    C: float
    tried: tuple
    on_edge: bool
    flat: bool = False


def loop_scores(make, X, y, cv, groups=None, qid=None):
    """Fold scores by a loop over the folds: ``scores_at(Cs) -> {C: validation scores of each
    fold}``, the estimator's own score. For estimators without a cross-validated class
    (APSVMAppx)."""
    splits = list(cv.split(X, y, groups))

    def scores_at(Cs):
        out = {}
        for C in Cs:
            scores = []
            for train, val in splits:
                est = make(C)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # a fold may hit max_iter; its score counts
                    if qid is None:
                        est.fit(X[train], y[train])
                        scores.append(est.score(X[val], y[val]))
                    else:
                        est.fit(X[train], y[train], qid=qid[train])
                        scores.append(est.score(X[val], y[val], qid=qid[val]))
            out[C] = np.asarray(scores)
        return out
    return scores_at


def cv_scores(make_cv, X, y, splits, qid=None):
    """Fold scores by the package's cross-validated estimator: ``make_cv(Cs)`` is an
    ``APSVMCV`` / ``NDCGSVMCV`` / ``BinarySVMCV`` over ``Cs``, given the folds ``splits`` and
    ``refit=False``; its ``scores_`` are the fold scores. Its fits are cold (``warm_path``
    off), so the scores are the loop's (``loop_scores``) over the same folds."""
    def scores_at(Cs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # a fold may hit max_iter; its score counts
            est = make_cv(list(Cs), splits).fit(X, y, qid=qid)
        return {float(C): est.scores_[:, k] for k, C in enumerate(est.Cs_)}
    return scores_at


def one_standard_error_choice(scores: dict) -> float:
    """The smallest C whose mean score is within one standard error of the best mean.

    Validation AP is flat over several decades of C on most of these sets; there the plain
    argmax picks fold noise and drifts to whichever edge the grid has. Among the C that cannot be
    told apart from the best, this rule (Hastie et al. 2009, section 7.10) takes the most
    regularised one.
    """
    Cs = sorted(scores)
    means = np.array([np.mean(scores[C]) for C in Cs])
    best = scores[Cs[int(np.argmax(means))]]
    se = np.std(best, ddof=1) / np.sqrt(best.size) if best.size > 1 else 0.0
    return Cs[int(np.flatnonzero(means >= means.max() - se)[0])]


def best_mean_choice(scores: dict) -> float:
    """The C of the highest mean score, the smallest among equals: the cross-validated
    estimators' rule (and GridSearchCV's over an ascending grid)."""
    Cs = sorted(scores)
    return Cs[int(np.argmax([np.mean(scores[C]) for C in Cs]))]


def _cross_validated_C(scores_at, grid, limits=C_LIMITS,
                       choose=one_standard_error_choice) -> CChoice:
    """Cross-validate C over ``grid``, widened by decades within ``limits`` until the choice
    (``choose``) is interior or a limit is reached; ``scores_at(Cs)`` gives the fold scores
    (``loop_scores``, ``cv_scores``)."""
    scores = dict(scores_at(list(grid)))
    while True:
        C, Cs = choose(scores), sorted(scores)
        if len(Cs) > 1 and C not in (Cs[0], Cs[-1]):
            return CChoice(C, tuple(Cs), on_edge=False)
        neighbour = Cs[1] if C == Cs[0] else Cs[-2]
        if len(Cs) > 1 and np.array_equal(scores[C], scores[neighbour]):
            return CChoice(C, tuple(Cs), on_edge=True, flat=True)
        # a decade as written (1e-3, not 0.0009999...), so tables and repeated runs agree
        wider = float(f"{C * 10 if C == Cs[-1] else C / 10:.0e}")
        if not limits[0] * 0.999 <= wider <= limits[1] * 1.001:
            return CChoice(C, tuple(Cs), on_edge=True)
        scores.update(scores_at([wider]))


class _Given:
    """Folds already split, as a splitter (``loop_scores`` takes one)."""

    def __init__(self, splits):
        self.splits = splits

    def split(self, X, y=None, groups=None):
        return iter(self.splits)


def _final_fit(est, X, y, X_test, y_test, qid=None, qid_test=None) -> Fit:
    t0 = time.perf_counter()
    # without queries the data set is one ranking, on purpose: said with one id for every sample
    est.fit(X, y, qid=np.zeros(len(y)) if qid is None else qid)
    seconds = time.perf_counter() - t0
    history = list(est.history_)
    if hasattr(est, "binary_"):      # APSVMAppx: its first stage is part of the cost
        history += est.binary_.history_
    score = (est.score(X_test, y_test) if qid_test is None
             else est.score(X_test, y_test, qid=qid_test))
    return Fit(est.C, score, seconds, sum(h["inference_seconds"] for h in history), len(history),
               est.n_iter_, est.converged_, est.gap_, est)


def _grid(quick):
    """The first C grid and the widening limits (--quick: two values, no widening)."""
    return (QUICK_C_GRID, (QUICK_C_GRID[0], QUICK_C_GRID[-1])) if quick else (C_GRID, C_LIMITS)


def _c_text(choice: CChoice) -> str:
    return f"{choice.C:g}" + (", flat edge" if choice.flat else ", edge" if choice.on_edge else "")


#: what the tables' C means for BinarySVM
_STRUCTURAL_C = ("BinarySVM's C is the rank SVMs' (structural) one, each fit "
                 "`BinarySVM(C / n)` with n its training samples.")


def _c_search_text(quick, choices, folds, score) -> str:
    """How C was chosen, and how many of ``choices`` sit on an edge of the C tried."""
    grid, limits = _grid(quick)
    first = "{" + ", ".join(f"{c:g}" for c in grid) + "}"
    widened = ("" if quick else f", widened one decade at a time within [{limits[0]:g}, "
               f"{limits[1]:g}] while the choice is the smallest or largest C tried")
    edge, flat = sum(c.on_edge for c in choices), sum(c.flat for c in choices)
    return (f"C by {folds}-fold cross-validation ({score}) over {first}{widened}; the choice is "
            f"the smallest C within one standard error of the best mean. {edge} of {len(choices)} "
            f"choices sit on an edge of the C tried, {flat} of them on a flat edge (marked "
            f"\"flat edge\": the fold scores equal those at the neighbouring C, the fits ranking "
            f"alike, so no wider grid could change them). {_STRUCTURAL_C}")


def _fmt(x, digits=3):
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def _one_class(task, X_train, X_test, groups, quick, log):
    """Every method on one class: (name, fits by method, LinearSVC (seconds, AP), exact runs)."""
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
    from sklearn.svm import LinearSVC

    name, y, yt = task
    grid, limits = _grid(quick)
    folds = 3 if quick else 5
    cv = (StratifiedGroupKFold(folds, shuffle=True, random_state=SEED) if groups is not None
          else StratifiedKFold(folds, shuffle=True, random_state=SEED))
    splits = list(cv.split(X_train, y, groups))
    fits = {}
    for method, make in METHODS.items():
        scores_at = (cv_scores(CV_METHODS[method], X_train, y, splits) if method in CV_METHODS
                     else loop_scores(make, X_train, y, _Given(splits)))
        choice = _cross_validated_C(scores_at, grid, limits)
        fits[method] = replace(_final_fit(make(choice.C), X_train, y, X_test, yt), choice=choice)
        log(f"  {name:28s} {method:15s} C={_c_text(choice):<12s} test AP "
            f"{fits[method].test_ap:.3f}  {fits[method].n_iter:4d} it  "
            f"{fits[method].fit_seconds:7.2f} s")
    # LinearSVC solving BinarySVM's problem at its C (same loss, weights and regularised bias)
    C = fits["BinarySVM"].C
    P, N = int(y.sum()), int((~y).sum())
    t0 = time.perf_counter()
    svc = LinearSVC(C=C / (2 * N), loss="hinge", class_weight={True: N / P, False: 1.0},
                    max_iter=100_000).fit(X_train, y)
    linear_svc = (time.perf_counter() - t0, average_precision(yt, svc.decision_function(X_test)))
    # every exact AP algorithm at APSVM's C: same w, different inference time
    exact = [a.name for a in algorithms(loss="ap", exact=True) if a.max_samples is None]
    runs = {a: _final_fit(APSVM(C=fits["APSVM"].C, algorithm=a, tol=TOL), X_train, y, X_test, yt)
            for a in exact}
    ref = runs["qs"].estimator.coef_
    exact = {a: (r.inference_seconds, r.n_calls,
                 float(np.abs(r.estimator.coef_ - ref).max() / max(np.linalg.norm(ref), 1e-300)))
             for a, r in runs.items()}
    return name, fits, linear_svc, exact


def one_vs_rest(X_train, y_train, X_test, y_test, class_names, *, groups=None, quick=False,
                log=print, jobs=1):
    """Run every method on every class; return a dict of results for ``one_vs_rest_tables``.

    ``jobs`` > 1 runs classes in that many processes (``log`` must then pickle, as print does);
    the results do not depend on it, the timings do (the processes share the machine).
    """
    folds = 3 if quick else 5
    tasks = []
    for c, name in class_names:
        y, yt = y_train == c, y_test == c
        if y.sum() < folds or not yt.any():
            log(f"  {name}: skipped ({int(y.sum())} training / {int(yt.sum())} test positives)")
            continue
        tasks.append((name, y, yt))
    run = partial(_one_class, X_train=X_train, X_test=X_test, groups=groups, quick=quick, log=log)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            outcomes = list(pool.map(run, tasks))
    else:
        outcomes = [run(task) for task in tasks]
    results = {"classes": [], "fits": {}, "linear_svc": {}, "exact": {}}
    for name, fits, linear_svc, exact in outcomes:
        results["classes"].append(name)
        results["fits"].update({(name, method): fit for method, fit in fits.items()})
        results["linear_svc"][name] = linear_svc
        results["exact"][name] = exact
    return results


def one_vs_rest_tables(results, title) -> str:
    """The three Markdown tables of a one-vs-rest experiment."""
    classes, fits = results["classes"], results["fits"]
    methods = list(METHODS)
    out = [f"### {title}: test AP per class (C chosen by cross-validation)", "",
           "| class | " + " | ".join(methods) + " | LinearSVC |",
           "|---|" + "---:|" * (len(methods) + 1)]
    for name in classes:
        cells = [f"{_fmt(fits[name, m].test_ap)} (C={_c_text(fits[name, m].choice)})"
                 for m in methods]
        out.append(f"| {name} | " + " | ".join(cells)
                   + f" | {_fmt(results['linear_svc'][name][1])} |")
    means = [np.mean([fits[c, m].test_ap for c in classes]) for m in methods]
    out.append("| **mean** | " + " | ".join(f"**{_fmt(v)}**" for v in means) +
               f" | **{_fmt(np.mean([results['linear_svc'][c][1] for c in classes]))}** |")

    out += ["", f"### {title}: loss-augmented inference and training time "
            "(final fits, all classes)",
            "", "| method | inference total (s) | per call (ms) | iterations (mean) | "
            "training total (s) | all converged | max final gap |",
            "|---|---:|---:|---:|---:|---|---:|"]
    for m in methods:
        f = [fits[c, m] for c in classes]
        inf, calls = sum(x.inference_seconds for x in f), sum(x.n_calls for x in f)
        out.append(f"| {m} | {inf:.3f} | {1e3 * inf / calls:.3f} | "
                   f"{np.mean([x.n_iter for x in f]):.0f} | "
                   f"{sum(x.fit_seconds for x in f):.2f} | "
                   f"{'yes' if all(x.converged for x in f) else 'NO'} | "
                   f"{max(x.gap for x in f):.1e} |")
    out.append(f"| LinearSVC (BinarySVM's problem, liblinear) | | | | "
               f"{sum(results['linear_svc'][c][0] for c in classes):.2f} | | |")

    exact = results["exact"]
    algos = list(next(iter(exact.values())))
    out += ["", f"### {title}: APSVM with each exact inference algorithm (same C per class)", "",
            "| algorithm | inference total (s) | per call (ms) | "
            "max relative difference of w to qs |",
            "|---|---:|---:|---:|"]
    for a in algos:
        inf = sum(exact[c][a][0] for c in classes)
        calls = sum(exact[c][a][1] for c in classes)
        diff = max(exact[c][a][2] for c in classes)
        out.append(f"| {a} | {inf:.3f} | {1e3 * inf / calls:.3f} | {diff:.1e} |")
    return "\n".join(out) + "\n"


def digits(quick=False, log=print, jobs=1) -> str:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                        random_state=SEED)
    scaler = StandardScaler().fit(X_train)
    classes = [(c, f"digit {c}") for c in range(10)][: 2 if quick else 10]
    results = one_vs_rest(scaler.transform(X_train), y_train, scaler.transform(X_test), y_test,
                          classes, quick=quick, log=log, jobs=jobs)
    return ("Data: scikit-learn `load_digits` (1797 images, 64 pixel features), stratified "
            "70/30 train/test split (seed 0), features standardised on the training split. "
            + _c_search_text(quick, [f.choice for f in results["fits"].values()], 3 if quick else 5,
                             "stratified, mean AP") + f" tol = {TOL:g}.\n\n"
            + one_vs_rest_tables(results, "Digits"))


def birds(quick=False, log=print, jobs=1) -> str:
    from sklearn.preprocessing import StandardScaler

    data = load_hja_birdsong()
    train, test = recording_split(data.recording, test_fraction=0.3, seed=SEED)
    scaler = StandardScaler().fit(data.X[train])
    classes = list(enumerate(data.class_names, start=1))[: 2 if quick else None]
    results = one_vs_rest(scaler.transform(data.X[train]), data.species[train],
                          scaler.transform(data.X[test]), data.species[test], classes,
                          groups=data.recording[train], quick=quick, log=log, jobs=jobs)
    return (f"Data: HJA birdsong, the {data.X.shape[0]} labelled segments (38 features, "
            f"standardised on the training split), species as classes; train/test split by "
            f"recording ({int(train.sum())} / {int(test.sum())} segments, seed 0); "
            f"cross-validation folds also keep recordings together. "
            + _c_search_text(quick, [f.choice for f in results["fits"].values()], 3 if quick else 5,
                             "folds by recording, mean AP") + f" tol = {TOL:g}.\n\n"
            + one_vs_rest_tables(results, "HJA birdsong"))


def yahoo(quick=False, log=print) -> str:
    from sklearn.model_selection import GroupKFold

    train, test = load_yahoo_ltr("train"), load_yahoo_ltr("test")
    grid, limits = _grid(quick)
    folds = 3 if quick else 5
    methods = {"BinarySVM": (StructuralBinarySVM, None), "APSVM": (APSVM, APSVMCV),
               "NDCGSVM": (NDCGSVM, NDCGSVMCV)}
    rows = []
    for threshold in (2, 1):
        y, yt = train.relevance >= threshold, test.relevance >= threshold
        skipped_train = sum(not y[train.qid == q].any() for q in np.unique(train.qid))
        skipped_test = sum(not yt[test.qid == q].any() for q in np.unique(test.qid))
        splits = list(GroupKFold(folds).split(train.X, y, train.qid))
        for name, (cls, cv_cls) in methods.items():
            def make(C, cls=cls):
                return cls(C=C, tol=TOL, empty="skip")

            def make_cv(Cs, cv, cv_cls=cv_cls):
                return cv_cls(Cs=Cs, cv=cv, refit=False, tol=TOL, empty="skip")
            scores_at = (loop_scores(make, train.X, y, _Given(splits), qid=train.qid)
                         if cv_cls is None else
                         cv_scores(make_cv, train.X, y, splits, qid=train.qid))
            choice = _cross_validated_C(scores_at, grid, limits)
            fit = replace(_final_fit(make(choice.C), train.X, y, test.X, yt, train.qid, test.qid),
                          choice=choice)
            scores = fit.estimator.decision_function(test.X)
            test_ap = average_precision(yt, scores, qid=test.qid, empty="skip")
            binary_ndcg = ndcg(yt.astype(float), scores, qid=test.qid, empty="skip")
            graded_ndcg = ndcg(test.relevance.astype(float), scores, qid=test.qid, empty="skip")
            rows.append((threshold, name, fit, test_ap, binary_ndcg, graded_ndcg, skipped_train,
                         skipped_test))
            log(f"  relevance >= {threshold} {name:10s} C={_c_text(choice):<12s} AP {test_ap:.3f} "
                f"NDCG {binary_ndcg:.3f} ({fit.fit_seconds:.1f} s)")
    out = [f"Data: Yahoo LTR sample, {train.X.shape[0]} training documents in {train.n_queries} "
           f"queries, {test.X.shape[0]} test documents in {test.n_queries} queries, 300 features; "
           "one ranking per query (qid). "
           + _c_search_text(quick, [row[2].choice for row in rows], folds,
                            "folds by query, each estimator's own score: mean per-query AP, "
                            "NDCG for NDCGSVM")
           + f" Queries without a positive are skipped in training and evaluation; "
             f"tol = {TOL:g}.", "",
           "| positive if | method | C | test mean AP | test mean NDCG (binary) | "
           "test mean NDCG (graded 0-4) | iterations | training (s) | "
           "queries skipped (train / test) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for threshold, name, fit, ap, bn, gn, st, ss in rows:
        out.append(f"| relevance >= {threshold} | {name} | {_c_text(fit.choice)} | {ap:.3f} | "
                   f"{bn:.3f} | {gn:.3f} | {fit.n_iter} | {fit.fit_seconds:.2f} | {st} / {ss} |")
    return "\n".join(out) + "\n"


CSTAR_QUESTIONS = (1, 5, 10)
CSTAR_C_GRID = (1.0, 10.0, 100.0)


def _cstar_fold(X, Y, train, test, n_core, kernel, grid, inner):
    """(chosen C, BEP automatic and after each number of questions, fit seconds, core)."""
    from sklearn.model_selection import KFold

    def make(C):
        return CStarPrecisionAtK(n_core=n_core, C=C, kernel=kernel, max_iter=300)

    mean, std = X[train].mean(0), X[train].std(0) + 1e-12
    Xs = (X - mean) / std
    cv = []
    for C in grid:
        folds = KFold(inner, shuffle=True, random_state=SEED).split(train)
        cv.append(np.mean([make(C).fit(Xs[train][a], Y[train][a]).score(Xs[train][b], Y[train][b])
                           for a, b in folds]))
    C = grid[int(np.argmax(cv))]
    t0 = time.perf_counter()
    est = make(C).fit(Xs[train], Y[train])
    seconds = time.perf_counter() - t0
    return C, est.interactive_labelling(Xs[test], Y[test], CSTAR_QUESTIONS), seconds, est.core_


def cstar(quick=False, log=print) -> str:
    from sklearn.model_selection import KFold

    data = load_hja_recordings()
    X, Y = data.X, data.Y
    folds = list(KFold(5, shuffle=True, random_state=SEED).split(X))[: 2 if quick else 5]
    grid = (10.0,) if quick else CSTAR_C_GRID
    inner = 2 if quick else 3
    rows = []
    for kernel in (None, "rbf"):
        for n_core in (0, 5):
            runs = [_cstar_fold(X, Y, a, b, n_core, kernel, grid, inner) for a, b in folds]
            rows.append((kernel, n_core, runs))
            log(f"  {kernel or 'linear'} C={n_core}: BEP {np.mean([r[1][0] for r in runs]):.3f}")
    qs = (0,) + CSTAR_QUESTIONS
    out = [f"Data: HJA birdsong recordings ({X.shape[0]} recordings, {Y.shape[1]} species; a "
           f"recording's features are the mean and the max of its segments' 38, standardised on "
           f"the training folds), {len(folds)}-fold cross-validation (shuffled, seed 0). "
           f"Break-even precision (precision@k with k = the recording's number of species), mean "
           f"+- std over folds, automatic and after Q questions (Mensink et al. 2011, section 5: "
           f"the label whose best scores clamped in and out of the top k are closest is asked and "
           f"clamped to the truth). C from {{{', '.join(f'{c:g}' for c in grid)}}} by "
           f"{inner}-fold inner cross-validation (BEP); 300 subgradient steps at most. With 13 "
           f"labels, 10 questions leave 3 unasked, so Q = 10 is close to the truth for every "
           f"model.", "",
           "| scores | model | " + " | ".join("automatic" if q == 0 else f"Q = {q}" for q in qs)
           + " | regularisation C chosen per fold | fit (s) |",
           "|---|---|" + "---:|" * len(qs) + "---|---:|"]
    for kernel, n_core, runs in rows:
        cells = [f"{np.mean([r[1][q] for r in runs]):.3f} +- {np.std([r[1][q] for r in runs]):.3f}"
                 for q in qs]
        model = "independent" if n_core == 0 else f"c-star, core of {n_core}"
        out.append(f"| {'linear' if kernel is None else 'rbf kernel (eq. 10)'} | {model} | "
                   + " | ".join(cells) + f" | {', '.join(f'{r[0]:g}' for r in runs)} | "
                   f"{np.mean([r[2] for r in runs]):.2f} |")
    names = [data.class_names[c].split(" - ")[0] for c in rows[1][2][0][3]]
    out += ["", f"Core of the first fold (greedy joint mutual information): {', '.join(names)}."]
    return "\n".join(out) + "\n"


HO_C_GRID = (0.1, 1.0, 10.0, 100.0)
HO_ETA_GRID = (0.1, 1.0)
HO_FOLDS = 3
# far above what CCCP needs here (5 to 39 outer iterations in trial fits): a safety bound, not
# a budget; the table counts the final fits that stopped by tol
HO_MAX_OUTER = 200
HO_JOBS = 2          # species run in parallel processes

#: name -> (make(C, eta), whether it takes the pairs)
HO_METHODS = {
    "BinarySVM": (lambda C, eta: StructuralBinarySVM(C=C, tol=TOL), False),
    "APSVM": (lambda C, eta: APSVM(C=C, tol=TOL), False),
    "HOBSVM": (lambda C, eta: HOBSVM(C=C, eta=eta, tol=TOL), True),
    "HOAPSVM": (lambda C, eta: HOAPSVM(C=C, eta=eta, tol=TOL, max_outer=HO_MAX_OUTER), True),
}


def _ho_fit_score(make, pairs, X, y, rec, train, test):
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # a fold's cutting plane may stop at max_iter
        if pairs:
            est.fit(X[train], y[train], groups=rec[train])
            return est, est.score(X[test], y[test], groups=rec[test])
        est.fit(X[train], y[train])
        return est, est.score(X[test], y[test])


def _ho_pair_scores(make, X, y, rec, idx_train, cv, eta_grid, etas):
    """``scores_at`` for a method with pairs: at each C the fold scores of its best eta (the
    first of the best mean, in ``eta_grid`` order), which ``etas`` records per C."""
    def scores_at(Cs):
        out = {}
        for C in Cs:
            per_eta = [np.array([_ho_fit_score(lambda: make(C, eta), True, X, y, rec,
                                               idx_train[a], idx_train[b])[1] for a, b in cv])
                       for eta in eta_grid]
            k = int(np.argmax([s.mean() for s in per_eta]))
            etas[C], out[C] = eta_grid[k], per_eta[k]
        return out
    return scores_at


def _ho_species(name, y, X, rec, idx_train, idx_test, c_grid, eta_grid, folds, limits):
    """One species: every method's C (and eta) by cross-validation over training recordings,
    then its final fit; returns the table row and the log lines."""
    from sklearn.model_selection import StratifiedGroupKFold

    cv = list(StratifiedGroupKFold(folds, shuffle=True, random_state=SEED)
              .split(idx_train, y[idx_train], rec[idx_train]))
    row = {"name": name, "P": (int(y[idx_train].sum()), int(y[idx_test].sum()))}
    lines = []
    for method, (make, pairs) in HO_METHODS.items():
        etas = {}
        scores_at = (_ho_pair_scores(make, X, y, rec, idx_train, cv, eta_grid, etas) if pairs
                     else cv_scores(CV_METHODS[method], X[idx_train], y[idx_train], cv)
                     if method in CV_METHODS else
                     loop_scores(lambda C, make=make: make(C, None), X[idx_train], y[idx_train],
                                 _Given(cv)))
        choice = _cross_validated_C(scores_at, c_grid, limits, choose=best_mean_choice)
        C, eta = choice.C, etas.get(choice.C)
        t0 = time.perf_counter()
        est, ap = _ho_fit_score(lambda: make(C, eta), pairs, X, y, rec, idx_train, idx_test)
        seconds = time.perf_counter() - t0
        outer = getattr(est, "n_outer_", None)
        row[method] = {"ap": ap, "choice": choice, "eta": eta, "seconds": seconds,
                       "converged": bool(est.converged_), "n_outer": outer}
        lines.append(f"  {name:5s} {method:9s} C={_c_text(choice):<12s} eta={eta} test AP "
                     f"{ap:.3f} ({seconds:.1f} s, converged {est.converged_}"
                     + ("" if outer is None else f", {outer} CCCP iterations") + ")")
    return row, lines


def high_order(quick=False, log=print) -> str:
    """Dokania et al. (2014), Table 1 analogue on HJA birdsong segments (see the module
    docstring)."""
    from joblib import Parallel, delayed
    from sklearn.preprocessing import StandardScaler

    data = load_hja_birdsong()
    train, test = recording_split(data.recording, test_fraction=0.3, seed=SEED)
    scaler = StandardScaler().fit(data.X[train])
    X = scaler.transform(data.X)
    rec = data.recording
    c_grid, eta_grid = (QUICK_C_GRID, (1.0,)) if quick else (HO_C_GRID, HO_ETA_GRID)
    limits = (c_grid[0], c_grid[-1]) if quick else C_LIMITS
    folds = 2 if quick else HO_FOLDS
    species = list(enumerate(data.class_names, start=1))[: 2 if quick else None]
    idx_train, idx_test = np.flatnonzero(train), np.flatnonzero(test)
    done = Parallel(n_jobs=HO_JOBS)(
        delayed(_ho_species)(name.split(" - ")[0], (data.species == k).astype(int), X, rec,
                             idx_train, idx_test, c_grid, eta_grid, folds, limits)
        for k, name in species)
    rows = [row for row, _ in done]
    for _, lines in done:
        for line in lines:
            log(line)
    names = list(HO_METHODS)
    first = "{" + ", ".join(f"{c:g}" for c in c_grid) + "}"
    widened = ("" if quick else f", widened one decade at a time within [{limits[0]:g}, "
               f"{limits[1]:g}] while the choice is the smallest or largest C tried")
    choices = [r[m]["choice"] for r in rows for m in names]
    edge, flat = sum(c.on_edge for c in choices), sum(c.flat for c in choices)
    out = [f"Data: HJA birdsong, the {data.X.shape[0]} labelled segments (38 features, "
           f"standardised on the training split); train/test split by recording "
           f"({int(train.sum())} / {int(test.sum())} segments, seed 0). Per species, the "
           f"segments are ranked one-vs-rest; HOBSVM and HOAPSVM link every pair of segments of "
           f"one recording (Phi = exp(-(x_a - x_b)^2), eq. 5). C by {folds}-fold "
           f"cross-validation over training recordings (mean AP) over {first}{widened}, and "
           f"eta from {{{', '.join(f'{e:g}' for e in eta_grid)}}} (the best at each C); the "
           f"choice is the best mean, the smallest C among equals (APSVM: `APSVMCV` given the "
           f"folds). {_STRUCTURAL_C} {edge} of {len(choices)} choices "
           f"sit on an edge of the C tried, {flat} of them on a flat edge. tol = {TOL:g}; "
           f"HOAPSVM starts from HOBSVM and runs CCCP until its objective decreases by less "
           f"than tol (at most {HO_MAX_OUTER} iterations, a bound no fit is meant to reach). "
           f"Test AP:", "",
           "| species | train / test positives | " + " | ".join(names) + " |",
           "|---|---:|" + "---:|" * len(names)]
    for row in rows:
        best = max(row[m]["ap"] for m in names)
        cells = [f"**{row[m]['ap']:.3f}**" if row[m]["ap"] == best else f"{row[m]['ap']:.3f}"
                 for m in names]
        out.append(f"| {row['name']} | {row['P'][0]} / {row['P'][1]} | " + " | ".join(cells) + " |")
    out.append("| mean | | " + " | ".join(f"{np.mean([r[m]['ap'] for r in rows]):.3f}"
                                          for m in names) + " |")
    wins = {m: sum(r[m]["ap"] == max(r[n]["ap"] for n in names) for r in rows) for m in names}
    out += ["", "Best per species (ties count for each): " + ", ".join(
        f"{m} {wins[m]}" for m in names) + f" of {len(rows)}.", "",
        "| method | C chosen per species | eta chosen per species | final fit (s), mean | "
        "final fits that reached tol | CCCP iterations (final fits) |",
        "|---|---|---|---:|---:|---|"]
    for m in names:
        etas = ", ".join(f"{r[m]['eta']:g}" for r in rows) if HO_METHODS[m][1] else "-"
        outer = [r[m]["n_outer"] for r in rows if r[m]["n_outer"] is not None]
        out.append(f"| {m} | {', '.join(_c_text(r[m]['choice']) for r in rows)} | {etas} | "
                   f"{np.mean([r[m]['seconds'] for r in rows]):.2f} | "
                   f"{sum(r[m]['converged'] for r in rows)} of {len(rows)} | "
                   + (f"{min(outer)}-{max(outer)}" if outer else "-") + " |")
    return "\n".join(out) + "\n"
