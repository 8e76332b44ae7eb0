"""A scikit-learn search or cross-validation without metadata routing says each of the
estimators' query warnings once per call (not once per fold and candidate), pointing at the
user's line; a direct ``fit`` or ``score`` still says it, with its numbers, every call; the
filters that ask for every occurrence ("always", pytest's ``warns``) still get every one; and
one kind of warning never hides another.

The warnings are recorded under ``simplefilter("default")``, the filter a user's script runs
with, and once in a fresh interpreter with the default filters, counting the lines on stderr.
"""
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from joblib import parallel_backend
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, cross_validate

from aprank.learn import APSVM, EmptyQueryWarning, LatentSVM, OneQueryWarning
from aprank_support.synthetic import mil

ROOT = Path(__file__).resolve().parents[2]
SKIPPED_IN_SEARCH = "training queries without a relevant sample were left out of the fits of"
ONE_QUERY_IN_SEARCH = "APSVM.score got no qid, so it ranks each test fold as one query"
GRID = {"C": [0.1, 1.0, 10.0]}

DATA = """
import numpy as np

def queries(n_queries=9, size=24, empty=()):
    # every run of 3 samples of a query holds a relevant one and an irrelevant one, so no
    # fold of consecutive samples cuts a query into a part without either (a query of
    # `empty` has none relevant)
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(n_queries), size)
    y = (np.arange(qid.size) % size) % 3 == 0
    X = rng.standard_normal((qid.size, 5)) + rng.normal(0, 2, (n_queries, 1))[qid]
    X[:, 0] += 2.0 * y
    y[np.isin(qid, empty)] = False
    return X, y.astype(int), qid
"""
namespace: dict = {}
exec(DATA, namespace)
queries = namespace["queries"]


def _said(call, action="default"):
    """Every warning ``call()`` issues under the filter ``action``, as (category, message,
    file)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter(action)
        call()
    return [(w.category, str(w.message), w.filename) for w in record]


@pytest.mark.parametrize("cv", [2, 3])
def test_a_search_without_routing_says_the_dropped_queries_once(cv):
    """2 x 3 or 3 x 3 fits, each scored without qid: one warning, for all the folds, at the
    line that started the search."""
    X, y, qid = queries()
    said = _said(lambda: GridSearchCV(APSVM(), GRID, cv=cv).fit(X, y, qid=qid))
    assert [(c, f) for c, _, f in said] == [(OneQueryWarning, __file__)], said
    assert said[0][1].startswith(ONE_QUERY_IN_SEARCH), said


def test_cross_validate_says_it_once():
    X, y, qid = queries()
    said = _said(lambda: cross_validate(APSVM(), X, y, params={"qid": qid}, cv=3))
    assert [(c, f) for c, _, f in said] == [(OneQueryWarning, __file__)], said


def test_each_kind_is_said_once_and_none_hides_another():
    """Queries without a relevant sample and scores without qid: one warning of each, the
    folds' in words for all of them, and the refit's count not said again."""
    X, y, qid = queries(empty=[4])
    said = _said(lambda: GridSearchCV(APSVM(), GRID, cv=3).fit(X, y, qid=qid))
    assert sorted(c.__name__ for c, _, _ in said) == ["EmptyQueryWarning", "OneQueryWarning"]
    empty = next(m for c, m, _ in said if c is EmptyQueryWarning)
    assert empty.startswith(SKIPPED_IN_SEARCH), empty
    assert all(f == __file__ for _, _, f in said), said


def test_a_direct_fit_and_score_say_it_every_call_with_their_numbers():
    X, y, qid = queries(empty=[4])
    for _ in range(2):
        said = _said(lambda: APSVM().fit(X, y, qid=qid))
        assert said == [(EmptyQueryWarning, said[0][1], __file__)], said
        assert said[0][1].startswith("1 of 9 training queries have no relevant sample")
    model = APSVM().fit(X[qid != 4], y[qid != 4], qid=qid[qid != 4])
    for _ in range(2):
        said = _said(lambda: model.score(X, y))
        assert said == [(OneQueryWarning, said[0][1], __file__)], said
        assert "ranks all 216 samples as one query, but APSVM was fitted on 8 queries" \
            in said[0][1]


def test_every_search_says_it_again():
    """The record is the search's: the next search, or the same line again, says it again."""
    X, y, qid = queries()
    first = _said(lambda: GridSearchCV(APSVM(), GRID, cv=2).fit(X, y, qid=qid))
    second = _said(lambda: GridSearchCV(APSVM(), GRID, cv=2).fit(X, y, qid=qid))
    assert len(first) == len(second) == 1, (first, second)
    search = GridSearchCV(APSVM(), GRID, cv=2)
    for _ in range(2):
        assert len(_said(lambda: search.fit(X, y, qid=qid))) == 1


def test_filters_that_want_every_occurrence_get_every_one():
    """Under "always" (pytest's ``warns``) the record drops nothing: one per fold and
    candidate; an ignored kind takes no place in it, so the other is still said."""
    X, y, qid = queries(empty=[4])
    said = _said(lambda: GridSearchCV(APSVM(), GRID, cv=2).fit(X, y, qid=qid), "always")
    assert sum(c is OneQueryWarning for c, _, _ in said) == 2 * 3, said
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        warnings.simplefilter("ignore", EmptyQueryWarning)
        GridSearchCV(APSVM(), GRID, cv=2).fit(X, y, qid=qid)
    assert [w.category for w in record] == [OneQueryWarning]


def test_a_thread_pool_says_it_at_most_once_per_thread_and_search():
    """joblib's threading backend runs the folds in threads of a pool made for the search,
    whose frames hold no trace of it: each thread says it at most once, and the next search's
    threads again."""
    X, y, qid = queries()
    for _ in range(2):
        with parallel_backend("threading"):
            said = _said(lambda: GridSearchCV(APSVM(), GRID, cv=3, n_jobs=2).fit(X, y, qid=qid))
        assert 1 <= len(said) <= 2 and {c for c, _, _ in said} == {OneQueryWarning}, said
        assert all(m.startswith(ONE_QUERY_IN_SEARCH) for _, m, _ in said), said


def test_a_latent_search_without_routing_says_the_dropped_bags_once():
    """The latent SVMs' score without bags is the same drop, said the same way."""
    X, y, bags, _ = mil(n_bags=30, size=3, d=4)
    search = GridSearchCV(LatentSVM(max_outer=3), GRID, cv=2)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y, bags=bags)
    said = [(w.category, str(w.message), w.filename) for w in record]
    assert [(c, f) for c, _, f in said] == [(UserWarning, __file__)], said
    assert said[0][1].startswith("LatentSVM.score got no bags, so every row of a test fold"), said


def _run(script: str) -> subprocess.CompletedProcess:
    """``script`` after the data's code, in a fresh interpreter with the default filters."""
    code = DATA + textwrap.dedent(script)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def _warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Warning: " in line]


def test_a_users_script_prints_one_line_per_search():
    """The default filters of a fresh interpreter: the search prints one warning, then a
    direct score its own; nothing attributed to joblib."""
    run = _run("""
        from sklearn.model_selection import GridSearchCV
        from aprank.learn import APSVM
        X, y, qid = queries()
        search = GridSearchCV(APSVM(), {"C": [0.1, 1.0, 10.0]}, cv=2).fit(X, y, qid=qid)
        search.best_estimator_.score(X, y)
    """)
    assert run.returncode == 0, run.stderr
    lines = _warning_lines(run.stderr)
    assert len(lines) == 2, run.stderr
    assert all(line.startswith("<string>:") and "OneQueryWarning" in line for line in lines)
    assert "each test fold" in lines[0] and "all 216 samples" in lines[1]


def test_parallel_folds_say_it_at_most_once_per_worker():
    """``n_jobs=2``: the folds run in two loky worker processes, which print on their own:
    each says it at most once, and the parent's refit adds the count of the whole data."""
    run = _run("""
        from sklearn.model_selection import GridSearchCV
        from aprank.learn import APSVM
        X, y, qid = queries(empty=[4])
        GridSearchCV(APSVM(), {"C": [0.1, 1.0, 10.0]}, cv=3, n_jobs=2).fit(X, y, qid=qid)
    """)
    assert run.returncode == 0, run.stderr
    lines = _warning_lines(run.stderr)
    one_query = [line for line in lines if "OneQueryWarning" in line]
    empty = [line for line in lines if "EmptyQueryWarning" in line]
    assert 1 <= len(one_query) <= 2, run.stderr
    in_folds = [line for line in empty if SKIPPED_IN_SEARCH in line]
    refit = [line for line in empty if "1 of 9 training queries" in line]
    assert 1 <= len(in_folds) <= 2 and len(refit) == 1 and len(empty) == len(in_folds) + 1, \
        run.stderr
