"""Property-based checks of inference, with Hypothesis.

Over score dtypes, strides, scales from 1e-308 to 1e308, ties and label encodings: every exact
algorithm returns a finite objective >= 0, all exact algorithms agree with the brute-force
oracle (objective; ranks where no two scores are equal), and the caller's arrays are left as
they were. Where the true objective exceeds the float64 range, every algorithm refuses it with
the same ValueError instead. Derandomized and bounded, so CI runs the same examples each time
in a few seconds.
"""
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import aprank  # noqa: E402

LOSSES = ("ap", "ndcg", "zero-one")
BOUNDED = settings(max_examples=300, deadline=None, derandomize=True, database=None)


def exact_algorithms(loss):
    return [a.name for a in aprank.algorithms(loss=loss, exact=True)]


@st.composite
def queries(draw):
    n = draw(st.integers(2, 9))
    labels = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    labels[draw(st.integers(0, n - 1))] = True            # AP and NDCG need a positive
    dtype = draw(st.sampled_from(["float64"] * 4 + ["float32", "float16", "int64", "int32",
                                                      "uint8"]))
    if dtype in ("float64", "float32", "float16"):
        tie_heavy = draw(st.booleans())
        base = (draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)) if tie_heavy else
                draw(st.lists(st.floats(-4, 4, allow_nan=False, width=32), min_size=n, max_size=n)))
        info = np.finfo(dtype)
        # the dtype's whole range, its ends (subnormals, the largest binade) drawn often
        lowest, highest = int(np.log2(info.tiny)) - info.nmant, int(np.log2(info.max))
        exponent = draw(st.one_of(
            st.sampled_from([lowest, lowest + 8, int(np.log2(info.tiny)), 0, highest - 4,
                             highest - 1, highest]),
            st.integers(lowest, highest)))
        with np.errstate(over="ignore", under="ignore"):
            # |base| / 4 <= 1 (exact), so even the largest exponent stays finite
            values = np.ldexp(np.asarray(base, np.float64) / 4, exponent).astype(dtype)
        hypothesis.assume(np.isfinite(values).all())
    else:
        info = np.iinfo(dtype)
        lo, hi = (info.min, info.max) if draw(st.booleans()) else (max(info.min, -3), 3)
        values = np.asarray(draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), dtype)
    encoding = draw(st.sampled_from(["bool", "int01", "pm1", "float01", "uint8-bool"]))
    y = np.asarray(labels)
    encoded = {"bool": y, "int01": y.astype(np.int64), "pm1": np.where(y, 1, -1).astype(np.int8),
               "float01": y.astype(np.float32),
               # bool data whose bytes are not 0/1: read by truth value
               "uint8-bool": np.where(y, 7, 0).astype(np.uint8).view(bool)}[encoding]
    stride = draw(st.sampled_from([1, 2, -1, -3]))
    scores = _strided(values, stride)
    if draw(st.booleans()):
        scores.setflags(write=False)
    return scores, _strided(encoded, stride), y


def _strided(a, step):
    """``a`` as a view with the given step into a larger array (negative: reversed)."""
    big = np.zeros(a.size * abs(step), dtype=a.dtype)
    view = big[::step][:a.size]
    view[...] = a
    return view


def _raw(a):
    """Bool arrays as their bytes (a byte 7 must stay 7), others as they are."""
    return a.view(np.uint8) if a.dtype == np.bool_ else a


def _solve_all(scores, labels, loss):
    out = {}
    for name in exact_algorithms(loss):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", aprank.validation.PrecisionWarning)
            try:
                out[name] = aprank.infer(scores, labels, loss=loss, algorithm=name)
            except ValueError as err:
                out[name] = err
    return out


@BOUNDED
@given(queries(), st.sampled_from(LOSSES))
@example((np.array([1e308, -1e308]), np.array([1, 0]), np.array([True, False])), "ap")
@example((np.array([1e308, -1e308]), np.array([1, 0]), np.array([True, False])), "ndcg")
@example((np.array([-1e308, 1e308, 1e308]), np.array([1, 0, 0]), np.array([True, False, False])),
         "zero-one")
@example((np.array([-1e308, 1e308]), np.array([1, 0]), np.array([True, False])), "ap")
@example((np.linspace(1, -1, 8), np.array([1, 0, 2, 0, 0, 255, 0, 1], np.uint8).view(bool),
          np.array([1, 0, 1, 0, 0, 1, 0, 1], bool)), "zero-one")
def test_exact_algorithms_agree_finite_nonnegative_and_leave_inputs_alone(query, loss):
    scores, labels, truth = query
    before = (scores.copy(), labels.copy(), scores.flags.writeable)
    results = _solve_all(scores, labels, loss)
    np.testing.assert_array_equal(scores, before[0])
    np.testing.assert_array_equal(_raw(labels), _raw(before[1]))
    assert scores.flags.writeable == before[2]

    ref = results["brute"]
    if isinstance(ref, ValueError):
        # only a true objective beyond float64 is refused, and then by every algorithm
        assert "overflow" in str(ref)
        assert all(isinstance(r, ValueError) and "overflow" in str(r) for r in results.values())
        return
    s = scores.astype(np.float64)
    distinct = np.unique(s).size == s.size
    for name, r in results.items():
        assert not isinstance(r, Exception), f"{name}: {r}"
        assert np.isfinite(r.objective) and r.objective >= 0.0, (name, r)
        assert abs(r.objective - ref.objective) <= 1e-12 * max(1.0, abs(ref.objective)), (
            name, r.objective, ref.objective)
        assert r.ranks.min() >= 1
        if distinct:
            np.testing.assert_array_equal(r.ranks, ref.ranks, err_msg=name)
    # the result is the one of clean inputs: float64 scores, bool labels
    clean = aprank.infer(s, truth, loss=loss, algorithm="brute")
    assert clean.objective == ref.objective


@BOUNDED
@given(queries(), st.sampled_from(("ap", "ndcg")), st.integers(2, 4))
def test_batches_equal_their_queries_solved_alone(query, loss, n_queries):
    scores, labels, truth = query
    s = np.tile(scores.astype(np.float64), n_queries)
    y = np.tile(truth, n_queries)
    qid = np.repeat(np.arange(n_queries), scores.size)[::-1].copy()     # groups, not in order
    one = _solve_all(scores, labels, loss)["qs"]
    try:
        batch = aprank.infer_batch(s, y, qid, loss=loss)
    except ValueError as err:
        assert isinstance(one, ValueError) and "overflow" in str(err)
        return
    assert not isinstance(one, ValueError)
    np.testing.assert_array_equal(batch.objective, np.full(n_queries, one.objective))
