"""The Dask estimators say what the single-machine ones say about labels and queries: which
class a fit on labels that do not say it ranks as relevant (RelevantClassWarning), and which
queries a score leaves out for having no relevant sample (EmptyQueryWarning)."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array",
                         reason="the dask extra (pip install 'aprank[dask]') is absent")

from aprank.dask import DaskAPSVM  # noqa: E402  (only once dask is known to be there)
from aprank.learn import EmptyQueryWarning, RelevantClassWarning  # noqa: E402


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] + 0.3 * rng.normal(size=n) > 0.4
    return X, y


def test_a_dask_fit_on_string_labels_says_which_class_it_ranks():
    X, y = _data()
    labels = np.where(y, "hit", "miss")
    with pytest.warns(RelevantClassWarning, match="'miss'"):
        DaskAPSVM(C=1.0).fit(da.from_array(X, chunks=60), da.from_array(labels, chunks=60))


def test_a_dask_score_names_the_queries_it_leaves_out():
    X, y = _data()
    qid = np.repeat(np.arange(4), 30)
    model = DaskAPSVM(C=1.0).fit(da.from_array(X, chunks=60), da.from_array(y, chunks=60),
                                 da.from_array(qid, chunks=60))
    y_test = y.copy()
    y_test[qid == 2] = False
    with pytest.warns(EmptyQueryWarning, match=r"left out 1 of 4 queries .*\(2\)"):
        model.score(X, y_test, qid=qid)
