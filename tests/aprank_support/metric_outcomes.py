"""Comparing a metric call's outcome with a reference's: value, per-query pair, or the
ValueError's message (errors must match too). Shared by the metrics tests."""
import numpy as np

#: values agree to this (absolute): both sides sum the same terms, in another order
TOL = 1e-12


class Raised(str):
    """The message of a ValueError a call raised."""


def outcome(fn):
    """A call's result, or its ValueError's message."""
    try:
        return fn()
    except ValueError as e:
        return Raised(e)


def assert_same(got, want):
    if isinstance(want, Raised):
        assert isinstance(got, Raised) and got == want, (got, want)
    elif isinstance(want, tuple):
        assert isinstance(got, tuple), got
        assert got[0].dtype == want[0].dtype and np.array_equal(got[0], want[0])
        np.testing.assert_allclose(got[1], want[1], rtol=0, atol=TOL)
    else:
        assert isinstance(got, float), got
        assert abs(got - want) <= TOL, (got, want)
