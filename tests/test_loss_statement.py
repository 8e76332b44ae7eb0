"""One statement of each loss's step, held to the last bit by every implementation.

The step of a ranking loss, delta_j(i+1) - delta_j(i), is stated once, by the loss objects of
aprank.losses (``AveragePrecision.increment``, ``NDCG.increment``), and evaluated again by the
compiled kernels (``loss_step`` of _kernel.pxd), the torch search (``_Loss.step``) and the
Triton kernel (``_loss_step``), each with the statement's operations in its order. The search
decides between candidate ranks by the sign of sums of steps, so one ulp anywhere can move a
rank: these sweeps compare the float64 bits of every implementation with the statement's.
"""
import os

import numpy as np
import pytest

from aprank.inference.ranking import _driver_cy
from aprank.losses import NDCG, AveragePrecision, KernelLoss, KernelSpec

#: (P, N) swept over every (j, i): every small query, and long ones of one class.
SMALL = [(P, N) for P in range(1, 13) for N in range(1, 13)] + [
    (1, 1000), (1000, 1), (37, 211), (211, 37), (300, 300)]
#: (P, N) swept over a sample of (j, i): the corners, every (j, i) of a few values of j + i
#: (ties of j + i: NDCG's step depends on j + i alone, AP's on both) and random ones.
LARGE = [(10_000, 10_000), (10_000, 1), (1, 10_000), (5_000, 9_999), (3, 1_000_000)]
#: Queries so long that a (a - 1), a = j + i, passes 2^53 and rounds: below that every product
#: of AP's step is an exact integer until the last, so any order of the products gives the same
#: bits, and only here does the order the statement fixes matter. AP only (NDCG's discount
#: table would need an entry a position).
HUGE = [(1, 2**40), (9_999, 3 * 10**9)]
SAMPLE = 20_000


def _power(n):
    return 1.0 / np.arange(1, n + 1) ** 0.7


def _linear_then_zero(n):
    # D falls by 1/7 a position to 0 at m = 8, then stays 0: equal steps, then steps of 0
    return np.maximum(0.0, (8.0 - np.arange(1, n + 1)) / 7.0)


def _flat(n):
    # D(2) = D(3) = ...: every step past the first is 0
    return np.r_[1.0, np.full(n - 1, 0.5)]


#: The losses, a discount given as a function of the table's length (None: the default).
LOSSES = {
    "ap": (AveragePrecision, None),
    "ndcg": (NDCG, None),
    "ndcg-power": (NDCG, _power),
    "ndcg-linear-then-zero": (NDCG, _linear_then_zero),
    "ndcg-flat": (NDCG, _flat),
    # discounts near the ends of float64: subnormal differences, norms near 2^1000
    "ndcg-tiny": (NDCG, lambda n: np.ldexp(_power(n), -1000)),
    "ndcg-huge": (NDCG, lambda n: np.ldexp(_power(n), 1000)),
}


def _pairs(P, N, rng):
    """1-based (j, i), j <= N the negative, i <= P the positive (int64 arrays)."""
    if (P, N) in SMALL:
        j, i = np.meshgrid(np.arange(1, N + 1), np.arange(1, P + 1), indexing="ij")
        return j.ravel(), i.ravel()
    j = [np.array([1, 1, N, N]), rng.integers(1, N + 1, SAMPLE)]
    i = [np.array([1, P, 1, P]), rng.integers(1, P + 1, SAMPLE)]
    for total in {2, P + 1, min(P, N) + 1, (P + N) // 2, P + N}:
        tie = np.arange(max(1, total - N), min(P, total - 1) + 1)[:2_000]
        j.append(total - tie)
        i.append(tie)
    return np.concatenate(j).astype(np.int64), np.concatenate(i).astype(np.int64)


def _cases(name):
    """(loss, [(P, N, j, i)]) of a loss of LOSSES, its discount covering every case."""
    cls, table = LOSSES[name]
    rng = np.random.default_rng(sorted(LOSSES).index(name))
    cases = [(P, N, *_pairs(P, N, rng))
             for P, N in SMALL + LARGE + (HUGE if cls is AveragePrecision else [])]
    if table is None:
        return cls(), cases
    return cls(discount=table(max(P + N for P, N, _, _ in cases))), cases


def assert_same_bits(got, want, P, N, j, i, who):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    differ = np.flatnonzero(got.view(np.int64) != want.view(np.int64))
    assert differ.size == 0, (
        f"{who}: {differ.size} of {want.size} steps differ from the statement at P={P}, N={N}; "
        f"first at j={j[differ[0]]}, i={i[differ[0]]}: {float(got[differ[0]])!r} != "
        f"{float(want[differ[0]])!r}")


def test_kernel_loss_is_the_kernels_enum():
    """KernelLoss's members and values are the kernels' LOSS_* codes (the drivers check it at
    import, and refuse to load otherwise), and a KernelSpec takes a label for its member."""
    assert {m.name: m.value for m in KernelLoss} == _driver_cy.LOSS_CODES
    assert [m.label for m in KernelLoss] == KernelLoss.labels() == ["ap", "ndcg"]
    assert KernelSpec("ndcg").code is KernelLoss.NDCG
    assert AveragePrecision().kernel_spec(5).code is KernelLoss.AP
    assert NDCG().kernel_spec(5).code is KernelLoss.NDCG
    assert KernelLoss.lookup("auc") is KernelLoss.lookup(0) is None
    assert KernelSpec("p@2").code == "p@2"      # kept, for the driver to refuse


def test_the_split_kernels_load_with_the_same_codes():
    """The Dask extra's split kernels check the codes at import too (they import here)."""
    pytest.importorskip("dask", reason="needs dask (the dask extra; README)")
    from aprank.dask import _split_cy

    assert _split_cy.opt_ranks is not None


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_compiled_step_is_the_statement(name):
    """The kernels' loss_step, with the discount as the kernels take it (None: their own
    formula; also the statement's table, as ndcg-greedy gets it), and scaled by the powers of
    two the driver gives queries near DBL_MAX (exactly the statement times the weight)."""
    loss, cases = _cases(name)
    for P, N, j, i in cases:
        want = loss.increment(j, i, P, N)
        specs = [loss.kernel_spec(P + N)]
        if getattr(loss, "discount", False) is None:
            specs.append(loss.kernel_spec(P + N, table=True))
        for spec in specs:
            got = _driver_cy._loss_steps(spec.code, P, N, j, i, spec.discount)
            assert_same_bits(got, want, P, N, j, i, f"loss_step ({spec.code!r}, "
                             f"{'formula' if spec.discount is None else 'table'})")
        for weight in (0.5, 2.0 ** -4):
            got = _driver_cy._loss_steps(specs[0].code, P, N, j, i, specs[0].discount, weight)
            assert_same_bits(got, want * weight, P, N, j, i, f"loss_step weighted {weight}")


def test_the_compiled_entry_refuses_what_it_cannot_evaluate():
    one = np.ones(1, dtype=np.int64)
    with pytest.raises(ValueError, match=r"compiled kernels compute the losses \['ap', 'ndcg'\]"):
        _driver_cy._loss_steps("auc", 1, 1, one, one)
    with pytest.raises(ValueError, match="outside"):
        _driver_cy._loss_steps(KernelLoss.AP, 1, 1, one, one + 1)


def _torch():
    return pytest.importorskip("torch", reason="needs torch (the torch extra; README)")


def _concatenated(cases, torch, device):
    P = np.concatenate([np.full(j.size, P) for P, _, j, _ in cases])
    j = np.concatenate([j for _, _, j, _ in cases])
    i = np.concatenate([i for _, _, _, i in cases])
    return [torch.tensor(x, dtype=torch.int64, device=device) for x in (P, j, i)]


def _discount(loss, torch, device):
    d = getattr(loss, "discount", None)
    return None if d is None else torch.tensor(d, dtype=torch.float64, device=device)


def _check_all(loss, cases, got, who):
    at = 0
    for P, N, j, i in cases:
        assert_same_bits(got[at:at + j.size], loss.increment(j, i, P, N), P, N, j, i, who)
        at += j.size


@pytest.mark.extras
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_torch_step_is_the_statement(name):
    """The torch search's step (``_Loss.step``, which ``kernel_step`` adds to the score part),
    on the CPU, with P per slot as the search passes it."""
    torch = _torch()
    from aprank.torch._ops import _Loss
    loss, cases = _cases(name)
    code = loss.kernel_spec(1).code
    P, j, i = _concatenated(cases, torch, "cpu")
    # the tables must reach position i + j; AP's step reads none (its harmonic table, which
    # the search's closed form reads, would take 8 bytes a position of HUGE's queries)
    reach = int((i + j).max()) if code is KernelLoss.NDCG else 1
    tables = _Loss(code, _discount(loss, torch, "cpu"), reach, torch.device("cpu"))
    _check_all(loss, cases, tables.step(P, j, i).numpy(), "torch _Loss.step")


@pytest.mark.extras
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_triton_step_is_the_statement(name):
    """The Triton kernel's step function (``_loss_step``, which its ``_step`` adds to the score
    part), with its tables, in Triton's interpreter without a GPU."""
    torch = _torch()
    pytest.importorskip("triton", reason="needs triton (pip install triton)")
    if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("no CUDA device and TRITON_INTERPRET unset")
    from aprank.torch import _triton
    device = "cuda" if torch.cuda.is_available() else "cpu"
    loss, cases = _cases(name)
    P, j, i = _concatenated(cases, torch, device)
    got = _triton._loss_steps(loss.kernel_spec(1).code, P, j, i, _discount(loss, torch, device))
    _check_all(loss, cases, got.cpu().numpy(), "Triton _loss_step")
