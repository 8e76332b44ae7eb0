"""A score that silently drops the queries or the pairs the model was fitted with (a
scikit-learn search without metadata routing, or a call without qid / groups) warns, in one
sentence that links the docs section saying what to pass; a fit without qid is one ranking,
quietly, and the correct calls stay quiet."""
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import Pipeline

from aprank.learn import (
    APSVM,
    HOAPSVM,
    HOBSVM,
    NDCGSVM,
    APSVMAppx,
    BinarySVM,
    LatentAPSVM,
    LatentSSVM,
    LatentSVM,
    OneQueryWarning,
)
from aprank_support.synthetic import grouped, mil

ONE_QUERY = r"score got no qid, so it ranks all \d+ samples as one query, but \w+ was fitted on"
ONE_QUERY_IN_SEARCH = (r"APSVM\.score got no qid, so it ranks each test fold as one query, "
                       r"but APSVM was fitted on the fold's training queries; pass qid=")
#: the docs section a OneQueryWarning links
QUERIES_DOCS = "docs/learning.md#queries-qid"
NO_PAIRS = r"got neither groups nor edges.*fitted with pairs"


def _queries(n_queries=9, size=24, d=5, seed=0):
    """Queries whose relevant samples score higher along a shared direction, shifted per
    query (a global ranking mixes the queries, so its AP is not the per-query mean)."""
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), size)
    X = rng.standard_normal((qid.size, d)) + rng.normal(0, 2, (n_queries, 1))[qid]
    y = (X[:, 0] - X[:, 0].mean() + rng.normal(0, 1, qid.size) > 0.5).astype(int)
    y[::size] = 1
    y[1::size] = 0
    return X, y, qid



def _quiet(pattern, call):
    """``call()`` emits no warning matching ``pattern``; its value."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = call()
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if re.search(pattern, m)], messages
    return value


@pytest.mark.parametrize("cls", [APSVM, NDCGSVM, BinarySVM, APSVMAppx])
def test_score_without_qid_after_a_fit_on_queries_warns(cls):
    X, y, qid = _queries()
    est = cls(C=1.0).fit(X, y, qid=qid)
    with pytest.warns(OneQueryWarning, match=ONE_QUERY + r" 9 queries; pass qid=.*"
                      + re.escape(QUERIES_DOCS)):
        global_score = est.score(X, y)
    per_query = _quiet(ONE_QUERY, lambda: est.score(X, y, qid=qid))
    assert global_score != pytest.approx(per_query)    # what the warning is about
    # one query on purpose: one id for every sample
    assert _quiet(ONE_QUERY, lambda: est.score(X, y, qid=np.zeros(len(y)))) == global_score
    # fitted as one ranking: scoring one ranking is the fit's own setting
    single = _quiet("", lambda: cls(C=1.0).fit(X, y))
    _quiet("", lambda: single.score(X, y))


@pytest.mark.parametrize("cls", [APSVM, NDCGSVM, BinarySVM, APSVMAppx])
def test_the_one_query_warning_is_one_sentence_linking_the_docs(cls):
    """Short enough to read where it is printed: one sentence, then the docs section that
    explains qid and the routing of a search (which must exist)."""
    X, y, qid = _queries()
    est = cls(C=1.0).fit(X, y, qid=qid)
    with pytest.warns(OneQueryWarning) as said:
        est.score(X, y)
    message = str(said[0].message)
    assert len(said) == 1 and len(message) <= 200, message
    assert message.endswith(QUERIES_DOCS) and message.count(". ") == 0, message
    page, anchor = QUERIES_DOCS.split("#")
    headings = [line.lstrip("#").strip() for line in
                (Path(__file__).resolve().parents[2] / page).read_text().splitlines()
                if line.startswith("## ")]
    # MyST's anchor of a heading: lower case, punctuation dropped, spaces as hyphens
    slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}
    assert anchor in slugs, slugs


@pytest.mark.parametrize("cls", [APSVM, NDCGSVM, APSVMAppx])
def test_a_fit_without_qid_is_one_ranking_quietly(cls):
    """No qid is the plain way to say one ranking, as scikit-learn users expect: nothing is
    said, by the fit or by a search over it, and the fit is the one of one id for all."""
    X, y, qid = _queries()
    one = _quiet("", lambda: cls(C=1.0).fit(X, y, qid=np.zeros(len(y))))
    plain = _quiet("", lambda: cls(C=1.0).fit(X, y))
    np.testing.assert_array_equal(one.coef_, plain.coef_)
    _quiet("", lambda: plain.score(X, y))
    search = _quiet("", lambda: GridSearchCV(cls(), {"C": [0.1, 10.0]}, cv=3).fit(X, y))
    assert search.best_estimator_._n_fit_queries == 1
    # the routed search over queries is quiet too
    with sklearn.config_context(enable_metadata_routing=True):
        est = cls().set_fit_request(qid=True).set_score_request(qid=True)
        _quiet("", lambda: GridSearchCV(est, {"C": [0.1, 10.0]}, cv=GroupKFold(3))
               .fit(X, y, groups=qid, qid=qid))


def test_binary_svm_fits_without_qid_quietly():
    """The 0-1 loss is a classifier's on one query as on many: no OneQueryWarning."""
    X, y, _ = _queries()
    _quiet("", lambda: BinarySVM(C=1.0).fit(X, y))


def test_search_with_step_qid_but_no_routing_warns_and_routing_is_quiet():
    X, y, qid = _queries()
    # the old-style fit parameter of a Pipeline step: fit per query, score one global query
    search = GridSearchCV(Pipeline([("apsvm", APSVM())]), {"apsvm__C": [0.1, 10.0]},
                          cv=GroupKFold(3))
    # the folds' scores, in words for all of them
    with pytest.warns(OneQueryWarning, match=ONE_QUERY_IN_SEARCH):
        search.fit(X, y, groups=qid, apsvm__qid=qid)
    # the documented way: metadata routing, qid requested by fit and score
    with sklearn.config_context(enable_metadata_routing=True):
        est = APSVM().set_fit_request(qid=True).set_score_request(qid=True)
        routed = GridSearchCV(est, {"C": [0.1, 10.0]}, cv=GroupKFold(3))
        _quiet(ONE_QUERY, lambda: routed.fit(X, y, groups=qid, qid=qid))
    assert routed.best_score_ != pytest.approx(search.best_score_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("cls,kwargs", [(HOBSVM, {}), (HOAPSVM, {"max_outer": 3})])
def test_high_order_score_without_pairs_after_a_fit_with_pairs_warns(cls, kwargs):
    X, y, groups = grouped(n_groups=14)
    est = cls(C=10.0, eta=1.0, **kwargs).fit(X, y, groups=groups)
    assert np.any(est.coef_pairs_ != 0)
    with pytest.warns(UserWarning, match=NO_PAIRS + r".*pass the samples' pairs as groups=.*"
                      r"set_score_request\(groups=True\)"):
        without = est.score(X, y)
    with_pairs = _quiet(NO_PAIRS, lambda: est.score(X, y, groups=groups))
    assert without != pytest.approx(with_pairs)
    with pytest.warns(UserWarning, match=NO_PAIRS):
        est.predict(X)
    # samples without pairs on purpose
    assert _quiet(NO_PAIRS, lambda: est.score(X, y, edges=[])) == without
    # no pairs at fit: nothing is dropped at prediction
    unpaired = cls(C=10.0, eta=1.0, **kwargs).fit(X, y)
    assert not np.any(unpaired.coef_pairs_ != 0)
    _quiet(NO_PAIRS, lambda: unpaired.score(X, y))


NO_BAGS = r"score got no bags, so every one of its \d+ rows is a bag of its own"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("cls", [LatentAPSVM, LatentSSVM, LatentSVM])
def test_latent_score_without_bags_after_a_fit_on_bags_warns(cls):
    """The latent SVMs' score without bags ranks rows, not bags: after a fit on bags of
    several rows that is the same silent drop as a rank SVM's score without qid."""
    X, y, bags, _ = mil(n_bags=30, size=3, d=4)
    est = cls(C=1.0, max_outer=3).fit(X, y, bags=bags)
    with pytest.warns(UserWarning, match=NO_BAGS + r".*pass bags=.*set_score_request\(bags=True\)"):
        rows = est.score(X, y)
    assert rows != pytest.approx(_quiet(NO_BAGS, lambda: est.score(X, y, bags=bags)))
    one_row_bags = cls(C=1.0, max_outer=3).fit(X, y)        # every row its own bag: nothing lost
    _quiet(NO_BAGS, lambda: one_row_bags.score(X, y))


@pytest.mark.parametrize("name", ["DaskAPSVM", "DaskNDCGSVM", "DaskBinarySVM"])
def test_dask_score_without_qid_after_a_fit_on_queries_warns(name):
    """The Dask estimators' score says it as the single-machine ones do (no cluster needed:
    dask's local scheduler runs the same code)."""
    pytest.importorskip("dask", reason="aprank.dask needs the dask extra")
    import dask.array as da

    import aprank.dask

    X, y, qid = _queries()
    est = getattr(aprank.dask, name)(C=1.0).fit(da.from_array(X, chunks=(72, 5)),
                                                da.from_array(y, chunks=72),
                                                da.from_array(qid, chunks=72))
    with pytest.warns(OneQueryWarning, match=ONE_QUERY + r" 9 queries"):
        global_score = est.score(X, y)
    assert global_score != pytest.approx(_quiet(ONE_QUERY, lambda: est.score(X, y, qid=qid)))
