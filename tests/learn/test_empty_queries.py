"""Queries without a relevant sample are left out of a fit by default
(counted in ``n_skipped_queries_``, said in one EmptyQueryWarning), ``empty="error"``
refuses them, and the Dask estimators decide both on the client, before anything is persisted;
queries already grouped in the input need no Dask shuffle."""
import logging
import warnings

import numpy as np
import pytest

from aprank.learn import APSVM, NDCGSVM, APSVMAppx, BinarySVM, EmptyQueryWarning
from aprank.metrics import average_precision

ESTIMATORS = [APSVM, NDCGSVM, BinarySVM, APSVMAppx]


@pytest.fixture(scope="module")
def queries_with_empty(unit_digits):
    """300 digits in 10 queries of 30; queries 4 and 7 have no relevant sample."""
    X, digit = unit_digits
    X, y = X[:300], digit[:300] == 1
    qid = np.arange(300) // 30
    return X, y & ~np.isin(qid, [4, 7]), qid


def _empty_query_warnings(record):
    return [w for w in record if issubclass(w.category, EmptyQueryWarning)]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_default_fit_skips_counts_and_warns_once(cls, queries_with_empty):
    X, y, qid = queries_with_empty
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est = cls(C=1.0).fit(X, y, qid=qid)
    said = _empty_query_warnings(record)
    assert len(said) == 1, [str(w.message) for w in said]
    assert str(said[0].message).startswith("2 of 10 training queries have no relevant sample")
    assert "empty='error'" in str(said[0].message)
    assert said[0].filename == __file__       # it points at the line that started the fit
    assert est.n_skipped_queries_ == 2
    kept = ~np.isin(qid, [4, 7])
    same = cls(C=1.0).fit(X[kept], y[kept], qid=qid[kept])
    assert same.n_skipped_queries_ == 0
    if cls is not APSVMAppx:     # whose easy samples of a skipped query still constrain w
        np.testing.assert_allclose(est.coef_, same.coef_, atol=1e-9)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_no_query_left_out_no_warning(cls, queries_with_empty):
    X, y, qid = queries_with_empty
    kept = ~np.isin(qid, [4, 7])
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmptyQueryWarning)
        est = cls(C=1.0).fit(X[kept], y[kept], qid=qid[kept])
    assert est.n_skipped_queries_ == 0


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_empty_error_refuses_the_fit(cls, queries_with_empty):
    X, y, qid = queries_with_empty
    est = cls(C=1.0, empty="error")
    with pytest.raises(ValueError, match=r"query 4 has none; pass empty='skip'"):
        est.fit(X, y, qid=qid)
    assert not hasattr(est, "coef_") and not hasattr(est, "n_skipped_queries_")


def test_default_score_leaves_out_queries_without_a_relevant_sample(queries_with_empty):
    X, y, qid = queries_with_empty
    kept = ~np.isin(qid, [4, 7])
    est = APSVM(C=1.0).fit(X[kept], y[kept], qid=qid[kept])
    # left out, and said, naming the queries: AP is undefined there
    with pytest.warns(EmptyQueryWarning, match=r"left out 2 of 10 queries .*\(4, 7\)"):
        got = est.score(X, y, qid=qid)
    assert got == est.score(X[kept], y[kept], qid=qid[kept])
    # the metric gives the same number with one keyword, and says what the score does
    assert got == average_precision(y, est.decision_function(X), qid=qid, empty="skip")
    with pytest.raises(ValueError, match=r"query 4 .*the estimators' score leaves such "
                       r"queries out: empty='skip' gives its number"):
        average_precision(y, est.decision_function(X), qid=qid)
    with pytest.raises(ValueError, match="query 4"):
        APSVM(C=1.0, empty="error").fit(X[kept], y[kept], qid=qid[kept]).score(X, y, qid=qid)


# --------------------------------------------------------------------------------- Dask
@pytest.fixture(scope="module")
def local_client():
    distributed = pytest.importorskip("distributed", reason="aprank.dask needs the dask extra")
    # one in-process worker: seconds to start
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster,\
            distributed.Client(cluster) as c:
        yield c


class _Records(logging.Handler):
    """The log records of Dask's ``distributed`` logger (which does not propagate to the root
    logger, so caplog misses them): its worker errors and its shuffle's WARNING lines."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(f"{record.name} - {record.levelname} - {record.getMessage()}")


@pytest.fixture
def dask_log():
    handler = _Records()
    logger = logging.getLogger("distributed")
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)


def _on_dask(X, y, qid, rows):
    da = pytest.importorskip("dask.array")
    return (da.from_array(X, chunks=(rows, X.shape[1])), da.from_array(y, chunks=rows),
            da.from_array(qid, chunks=rows))


def test_dask_empty_error_is_one_error_on_the_client(local_client, queries_with_empty, monkeypatch,
                                                     dask_log):
    import aprank.dask._data as dask_data
    from aprank.dask import DaskAPSVM

    def no_persisting(blocks):
        raise AssertionError("blocks were persisted before the queries were checked")

    monkeypatch.setattr(dask_data, "spread", no_persisting)
    X, y, qid = queries_with_empty
    with pytest.raises(ValueError, match=r"query 4 has none \(2 of 10 queries have none\); "
                                         r"pass empty='skip'"):
        DaskAPSVM(C=1.0, empty="error").fit(*_on_dask(X, y, qid, 64))
    assert not dask_log


def test_dask_default_skips_counts_and_warns_once(local_client, queries_with_empty):
    from aprank.dask import DaskAPSVM

    X, y, qid = queries_with_empty
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = DaskAPSVM(C=1.0).fit(*_on_dask(X, y, qid, 64))
    said = _empty_query_warnings(record)
    assert len(said) == 1 and str(said[0].message).startswith("2 of 10 training queries")
    assert said[0].filename == __file__
    assert got.n_skipped_queries_ == 2
    kept = ~np.isin(qid, [4, 7])
    ref = APSVM(C=1.0, solver="ocas").fit(X[kept], y[kept], qid=qid[kept])
    assert np.abs(got.coef_ - ref.coef_).max() <= 1e-6 * np.linalg.norm(ref.coef_)


def test_dask_grouped_queries_need_no_shuffle(local_client, queries_with_empty, dask_log):
    """Queries of consecutive rows cut by the partitions: the boundaries move to query ends
    (no shuffle, so none of the WARNING lines of Dask's p2p shuffle), w as on one machine."""
    import dask

    from aprank.dask import DaskAPSVM
    from aprank.dask._data import as_dask_data

    X, y, qid = queries_with_empty
    got = as_dask_data(*_on_dask(X, y, qid, 64))      # 64 cuts queries of 30 rows
    assert not got.grouped
    blocks = dask.compute(*got.blocks)
    ids = [np.unique(b.qid) for b in blocks]
    assert sum(i.size for i in ids) == 10                      # no query in two blocks
    assert np.array_equal(np.concatenate([b.rows for b in blocks]), np.arange(300))
    # each boundary moved to the nearest query end: by at most half a query (15 rows)
    assert max(b.rows.size for b in blocks) <= 64 + 2 * 15
    fitted = DaskAPSVM(C=1.0, empty="skip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyQueryWarning)
        fitted.fit(*_on_dask(X, y, qid, 64))
        ref = APSVM(C=1.0, solver="ocas").fit(X, y, qid=qid)
    assert np.abs(fitted.coef_ - ref.coef_).max() <= 1e-6 * np.linalg.norm(ref.coef_)
    assert not dask_log
