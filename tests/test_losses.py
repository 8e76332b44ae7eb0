"""Loss definitions: paper examples, and the decomposition each loss exposes."""
import numpy as np
import pytest

from aprank.losses import LOSSES, NDCG, AveragePrecision, ZeroOne, get_loss


def test_paper_examples():
    # Mohapatra et al. (2018), section 2.2: positives x1..x4, ranking (x1, x3, x8, x4, x5, x2, x6,
    # x7) puts the positives at positions 1, 2, 4, 6: 0 negatives above the first two, 1, then 2
    above = np.array([0, 0, 1, 2])
    assert AveragePrecision().from_pattern(above, 4, 4) == pytest.approx(0.146, abs=5e-4)
    assert NDCG().from_pattern(above, 4, 4) == pytest.approx(0.056, abs=5e-4)


@pytest.mark.parametrize("loss", [AveragePrecision(), NDCG()], ids=["ap", "ndcg"])
def test_increments_delta_and_pattern_agree(loss):
    rng = np.random.default_rng(0)
    for _ in range(50):
        P, N = int(rng.integers(1, 8)), int(rng.integers(1, 8))
        j = np.arange(1, N + 1)[:, None]
        i = np.arange(1, P + 2)[None, :]
        delta = loss.delta(j, i, P, N)                       # (N, P+1)
        np.testing.assert_allclose(np.diff(delta, axis=1), loss.increment(j, i[:, :-1], P, N),
                                   atol=1e-14)
        np.testing.assert_allclose(delta[:, -1], 0.0, atol=1e-15)   # rank P+1 costs nothing
        # (C3): increments do not decrease with j
        inc = loss.increment(j, i[:, :-1], P, N)
        assert np.all(np.diff(inc, axis=0) >= -1e-15)
        # moving a negative down never raises the loss (the kernels' early stop relies on it)
        assert np.all(inc <= 0)
        # (C2): the loss of a pattern is the sum of the negatives' deltas
        ranks = np.sort(rng.integers(1, P + 2, N))
        above = np.searchsorted(ranks, np.arange(1, P + 1), side="right")
        assert loss.from_pattern(above, P, N) == pytest.approx(delta[np.arange(N), ranks - 1].sum(),
                                                               abs=1e-13)


def test_discount_positions_start_at_1():
    for loss in (NDCG(), NDCG(discount=[1.0, 0.5, 0.25])):
        assert loss.D([1, 2, 3]).shape == (3,)
        with pytest.raises(ValueError, match="positions start at 1"):
            loss.D([0, 1])


def test_truth_coefficients():
    y = np.array([1, 0, 0, 1, 0], dtype=bool)
    np.testing.assert_allclose(AveragePrecision().truth_coef(y), np.where(y, 1 / 2, -1 / 3))
    v, z = ZeroOne().weights(y)                  # J = N/P = 1.5
    np.testing.assert_allclose(v, np.where(y, 1.5, 1.0))
    assert z == 6.0
    np.testing.assert_allclose(ZeroOne().truth_coef(y), np.where(y, 1.5, -1.0) / 12)


def test_get_loss():
    assert get_loss("ap") is LOSSES["ap"]
    custom = NDCG(discount=[1.0, 0.5, 0.25])
    assert get_loss(custom) is custom
    with pytest.raises(ValueError, match="unknown loss"):
        get_loss("auc")
    with pytest.raises(ValueError, match="J must be"):
        ZeroOne(J=-1)
