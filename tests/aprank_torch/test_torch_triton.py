"""aprank.torch's ``backend="triton"``: every negative's rank from one Triton
kernel, equal to the compiled kernels' ranks, values and gradients, ties included. Without a
GPU the kernel runs in Triton's interpreter (TRITON_INTERPRET=1, which conftest.py sets before
anything imports Triton); with one, compiled on it."""
import os

import numpy as np
import pytest

import aprank

torch = pytest.importorskip("torch", reason="needs torch (the torch extra; README)")
#: an optional package the test extra leaves out: .ci/run's extras lane runs this file
pytestmark = pytest.mark.extras
pytest.importorskip("triton", reason="needs triton (pip install triton)")
if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
    # tests/conftest.py sets TRITON_INTERPRET=1 before Triton is imported
    pytest.skip("no CUDA device and TRITON_INTERPRET unset", allow_module_level=True)
import aprank.torch as at  # noqa: E402  (only once torch is known to be there)
from aprank_support.torch_batches import random_batch, reference  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _triton_terms(s, y, group, n_groups, loss):
    from aprank.torch import _triton
    return _triton.hinge_terms(torch.tensor(s, device=DEVICE), torch.tensor(y, device=DEVICE),
                               torch.tensor(group, device=DEVICE), n_groups, loss,
                               blocks=n_groups == 1)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_triton_ranks_equal_the_kernels_on_the_cross_checks(loss):
    """The cross-check instances of the ranking kind (ties of every density, one to hundreds
    of positives): identical ranks and the same objective."""
    for trial in range(80):
        inst = aprank.checks.random_instance("ranking", seed=26, trial=trial, max_n=300)
        want = aprank.infer(inst.scores, inst.labels, loss=loss, algorithm="qs")
        got = _triton_terms(inst.scores, inst.labels, np.zeros(inst.size, dtype=np.int64), 1,
                            loss)
        assert np.array_equal(got.ranks.cpu().numpy(), want.ranks), (trial, inst.description)
        assert got.objective[0].item() == pytest.approx(
            want.objective, rel=1e-9, abs=1e-12 * (1 + np.abs(inst.scores).max()))


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_triton_ranks_on_long_scans_and_searches(loss):
    """Queries where many negatives score above many positives (long scans past the concave
    part, the early stop's search) and where most negatives sit below every positive (the
    binary search alone)."""
    rng = np.random.default_rng([26, 1, loss == "ap"])
    for n, P, shift in [(1200, 120, -1.0), (1500, 30, 0.0), (900, 400, 2.0), (700, 300, 0.5)]:
        y = np.zeros(n, dtype=bool)
        y[rng.choice(n, P, replace=False)] = True
        s = np.round(rng.standard_normal(n) + shift * y, 2)
        want = aprank.infer(s, y, loss=loss, algorithm="qs")
        got = _triton_terms(s, y, np.zeros(n, dtype=np.int64), 1, loss)
        assert np.array_equal(got.ranks.cpu().numpy(), want.ranks), (n, P, shift)


#: relative tolerance of value and gradient per dtype: each rounds once from the float64 answer
RTOL = {torch.float32: 1e-6, torch.float64: 1e-12, torch.bfloat16: 2.0 ** -8,
        torch.float16: 2.0 ** -11}


@pytest.mark.parametrize("dtype", list(RTOL))
def test_triton_backend_value_and_gradient_equal_the_kernels(dtype):
    """Many-query batches through hinge_loss(backend="triton"), both losses, every dtype (the
    sort runs in the scores' dtype, the decisions in float64)."""
    rng = np.random.default_rng([26, 2, list(RTOL).index(dtype)])
    rtol = RTOL[dtype]
    for trial in range(16):
        s, y, q = random_batch(rng, n_max=600)
        loss = ("ap", "ndcg")[trial % 2]
        want, want_grad = reference(s, y, q, loss, dtype)
        x = torch.tensor(s, dtype=dtype, device=DEVICE, requires_grad=True)
        out = at.hinge_loss(x, torch.tensor(y, device=DEVICE), torch.tensor(q, device=DEVICE),
                            "none", loss=loss, backend="triton")
        out.sum().backward()
        np.testing.assert_allclose(out.detach().double().cpu().numpy(), want[np.unique(q)],
                                   rtol=rtol, atol=rtol * 1e-3 * (1 + np.abs(s).max()))
        np.testing.assert_allclose(x.grad.double().cpu().numpy(), want_grad, rtol=rtol,
                                   atol=rtol * 1e-3)


def test_triton_backend_ranks_a_matrix_per_column():
    """Equal blocks (a score matrix ranked per column): the batched-sort layout."""
    rng = np.random.default_rng([26, 3])
    s = np.round(rng.standard_normal((120, 7)), 1)
    y = rng.random((120, 7)) < 0.2
    y[0] = True
    x = torch.tensor(s, device=DEVICE, requires_grad=True)
    out = at.hinge_loss(x, torch.tensor(y, device=DEVICE), reduction="none", backend="triton")
    out.sum().backward()
    x_ref = torch.tensor(s, requires_grad=True)
    want = at.hinge_loss(x_ref, torch.tensor(y), reduction="none", backend="kernels")
    want.sum().backward()
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(x.grad.cpu().numpy(), x_ref.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_triton_backend_without_the_checks_gives_the_checked_call(reduction):
    """validate=False on a score matrix (with a class missing from the batch) and on one
    query: the value and gradient of the checked call, bit for bit."""
    rng = np.random.default_rng([26, 4])
    S = np.round(rng.standard_normal((90, 5)), 1)
    Y = rng.random((90, 5)) < 0.2
    Y[:, 3] = False
    for s, y in [(S, Y), (S[:, 0], Y[:, 0] | (np.arange(90) == 7))]:
        got = []
        for validate in (True, False):
            x = torch.tensor(s, device=DEVICE, requires_grad=True)
            out = at.hinge_loss(x, torch.tensor(y, device=DEVICE), reduction=reduction,
                                backend="triton", validate=validate)
            out.sum().backward()
            got.append((out.detach(), x.grad))
        assert torch.equal(got[0][0], got[1][0]) and torch.equal(got[0][1], got[1][1])


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU the kernel runs on CUDA tensors")
def test_triton_on_cpu_tensors_outside_the_interpreter_is_refused(monkeypatch):
    from aprank.torch import _triton
    monkeypatch.setattr(_triton, "INTERPRETED", False)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        at.hinge_loss(torch.tensor([0.3, 0.1]), torch.tensor([True, False]), backend="triton")
