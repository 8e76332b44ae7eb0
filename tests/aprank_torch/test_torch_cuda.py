"""aprank.torch on a CUDA device: every backend's value and gradient equal the compiled kernels'
on the host (the tests of test_torch.py, repeated where the tensors live on the GPU), the
results stay on the device, and the compiled torch-ops backend ranks like the kernels.

CI has no GPU: there these tests are skipped with the reason below. They ran on an NVIDIA
H200, torch 2.11.0+cu130, on 2026-11-26, and all of them, "triton" included, on an NVIDIA
H100 the same day, at commit aa7b818 (docs/benchmarks/extras.md has that run). The tests of
the loss tables and of validate=False (no wait for the device under torch's sync debug mode, the
step captured and replayed as a CUDA graph) have not yet run on a GPU."""
import numpy as np
import pytest

import aprank

torch = pytest.importorskip("torch", reason="needs torch (the torch extra; README)")
import aprank.torch as at  # noqa: E402  (only once torch is known to be there)
from aprank_support.torch_batches import random_batch, reference  # noqa: E402  (likewise)

#: .ci/run's extras lane collects these (and skips them there: CI has no GPU)
pytestmark = [pytest.mark.extras,
              pytest.mark.skipif(not torch.cuda.is_available(),
                                 reason="no CUDA device here: these run on a machine with a GPU")]

LOSSES = ["ap", "ndcg"]
#: the backends run eagerly on the device: "triton" where the triton package is installed
EAGER_BACKENDS = ["kernels", "torch"] + (["triton"] if at._loss._triton is not None else [])
DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
#: relative tolerance of value and gradient per dtype: each rounds once from the float64 answer
RTOL = {torch.float32: 1e-6, torch.float64: 1e-12, torch.bfloat16: 2.0 ** -8,
        torch.float16: 2.0 ** -11}


def check_on_cuda(s, y, q, loss, dtype, backend):
    x = torch.tensor(s, dtype=dtype, device="cuda", requires_grad=True)
    out = at.hinge_loss(x, torch.tensor(y, device="cuda"), torch.tensor(q, device="cuda"), "none",
                        loss=loss, backend=backend)
    out.sum().backward()
    # results stay where the scores are, in their dtype
    assert out.device.type == "cuda" and x.grad.device.type == "cuda"
    assert out.dtype == dtype and x.grad.dtype == dtype
    want, want_grad = reference(s, y, q, loss, dtype)
    want = want[np.unique(q)]
    rtol = RTOL[dtype]
    np.testing.assert_allclose(out.detach().double().cpu().numpy(), want, rtol=rtol,
                               atol=rtol * 1e-3 * (1 + np.abs(s).max()))
    np.testing.assert_allclose(x.grad.double().cpu().numpy(), want_grad, rtol=rtol,
                               atol=rtol * 1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("backend", EAGER_BACKENDS)
def test_value_and_gradient_on_cuda_equal_the_kernels(dtype, loss, backend):
    rng = np.random.default_rng([21, LOSSES.index(loss), DTYPES.index(dtype)])
    for _ in range(25):
        s, y, q = random_batch(rng)
        check_on_cuda(s, y, q, loss, dtype, backend)


@pytest.mark.parametrize("loss", LOSSES)
def test_compiled_backend_on_cuda_equals_the_kernels(loss):
    """One input shape (one compile per loss), many score draws of it: ties, scales, and
    different counts of positives (so more than one positives bucket)."""
    rng = np.random.default_rng([22, LOSSES.index(loss)])
    n = 2000
    for trial in range(12):
        q = np.sort(rng.integers(0, 7, n))
        q[:7] = np.arange(7)                      # always 7 queries: the same shapes
        y = rng.random(n) < (0.03 if trial % 2 else 0.4)
        for g in range(7):
            y[np.flatnonzero(q == g)[0]] = True
        s = rng.standard_normal(n) + y
        s = np.round(s, 1) if trial % 3 == 0 else s
        check_on_cuda(s, y, q, loss, torch.float32, "torch-compiled")


def test_compiled_backend_on_a_cuda_score_matrix():
    """The (B, L) layout: equal column blocks, sorted row by row inside the compiled graph."""
    rng = np.random.default_rng(23)
    for digits in (None, 1):
        S = rng.standard_normal((256, 40))
        S = S if digits is None else np.round(S, digits)
        Y = rng.random((256, 40)) < 0.1
        Y[0] = True
        x = torch.tensor(S, dtype=torch.float32, device="cuda", requires_grad=True)
        per_column = at.ap_hinge_loss(x, torch.tensor(Y, device="cuda"), reduction="none",
                                      backend="torch-compiled")
        per_column.sum().backward()
        S32 = x.detach().double().cpu().numpy()
        grad = x.grad.double().cpu().numpy()
        for c in range(40):
            r = aprank.infer(S32[:, c], Y[:, c])
            assert per_column[c].item() == pytest.approx(r.objective, rel=1e-6, abs=1e-6)
            truth = aprank.losses.get_loss("ap").truth_coef(Y[:, c])
            np.testing.assert_allclose(grad[:, c], r.coef - truth, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("loss", LOSSES)
def test_torch_ops_on_a_large_cuda_query(loss):
    rng = np.random.default_rng(24)
    n = 200_000
    for P, shift, digits in [(n // 100, 1.0, None), (n // 10, 0.0, 1)]:
        y = np.zeros(n, dtype=bool)
        y[rng.choice(n, P, replace=False)] = True
        s = rng.standard_normal(n) + shift * y
        if digits is not None:
            s = np.round(s, digits)
        want = aprank.infer(s, y, loss=loss, algorithm="qs")
        got = at.hinge_terms(torch.tensor(s, device="cuda"), torch.tensor(y, device="cuda"),
                             torch.zeros(n, dtype=torch.int64, device="cuda"), 1, loss,
                             n_positives=P)
        assert np.array_equal(got.ranks.cpu().numpy(), want.ranks)
        assert got.objective[0].item() == pytest.approx(want.objective, rel=1e-9)


def test_ndcg_module_moves_its_discount_to_cuda():
    disc = 1.0 / np.arange(1, 400)
    crit = at.NDCGHingeLoss(discount=disc, backend="torch").to("cuda")
    assert dict(crit.named_buffers())["discount"].device.type == "cuda"
    rng = np.random.default_rng(25)
    s, y = rng.standard_normal(300), rng.random(300) < 0.2
    want = aprank.infer(s, y, loss=aprank.losses.NDCG(discount=disc)).objective
    got = crit(torch.tensor(s, device="cuda"), torch.tensor(y, device="cuda"))
    assert got.device.type == "cuda"
    assert got.item() == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_the_loss_tables_on_cuda_are_the_host_sums(loss):
    """AP's harmonic numbers and the default NDCG discount's norms, as the torch search reads
    them on the GPU, equal the host's sums in order to the last bit (a device scan adds in a
    tree and rounds otherwise)."""
    from aprank.losses import KernelLoss
    from aprank.torch._ops import _Loss
    code = KernelLoss.AP if loss == "ap" else KernelLoss.NDCG
    n = 300_000
    on_gpu = _Loss(code, None, n, torch.device("cuda"))
    on_host = _Loss(code, None, n, torch.device("cpu"))
    for name in ("H",) if loss == "ap" else ("D", "Z"):
        assert torch.equal(getattr(on_gpu, name).cpu(), getattr(on_host, name)), name


#: the backends whose step can run without the host reading the batch ("kernels" runs on it)
DEVICE_BACKENDS = ["torch"] + (["triton"] if at._loss._triton is not None else [])


def _step(scores, labels, loss, backend, validate=False):
    scores.grad = None
    out = at.hinge_loss(scores, labels, loss=loss, backend=backend, validate=validate)
    out.backward()
    return out


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("backend", DEVICE_BACKENDS)
@pytest.mark.parametrize("shape", [(256, 40), (20_000,)])
def test_validate_false_step_never_waits_for_the_gpu(loss, backend, shape):
    """Forward and backward with the checks skipped, on a score matrix and on one query:
    torch's sync debug mode raises on any synchronising call (after a first call, which
    compiles the Triton kernels and copies the loss tables to the device once)."""
    rng = np.random.default_rng(27)
    x = torch.tensor(rng.standard_normal(shape), dtype=torch.float32, device="cuda",
                     requires_grad=True)
    y = torch.tensor(rng.random(shape) < 0.1, device="cuda")
    _step(x, y, loss, backend)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        _step(x, y, loss, backend)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("backend", DEVICE_BACKENDS)
@pytest.mark.parametrize("shape", [(256, 40), (20_000,)])
def test_validate_false_step_captures_and_replays_as_a_cuda_graph(loss, backend, shape):
    """The whole step (forward and backward) captured by torch.cuda.graph; replays on new
    scores and labels copied into the captured tensors give the eager checked call's value
    and gradient, bit for bit, ties included."""
    rng = np.random.default_rng(28)
    x = torch.zeros(shape, dtype=torch.float32, device="cuda", requires_grad=True)
    y = torch.zeros(shape, dtype=torch.bool, device="cuda")

    def draw(digits):
        s = rng.standard_normal(shape)
        return (torch.tensor(s if digits is None else np.round(s, digits), dtype=torch.float32),
                torch.tensor(rng.random(shape) < 0.1))

    s0, y0 = draw(None)
    with torch.no_grad():
        x.copy_(s0)
        y.copy_(y0)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):          # warm-up, as torch.cuda.graph asks
        for _ in range(3):
            _step(x, y, loss, backend)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    x.grad = None
    with torch.cuda.graph(graph):
        value = at.hinge_loss(x, y, loss=loss, backend=backend, validate=False)
        value.backward()
    for digits in (None, 1, None, 1):
        s, labels = draw(digits)
        with torch.no_grad():
            x.copy_(s)
            y.copy_(labels)
        graph.replay()
        torch.cuda.synchronize()
        fresh = s.cuda().requires_grad_()
        want = at.hinge_loss(fresh, labels.cuda(), loss=loss, backend=backend)
        want.backward()
        assert torch.equal(value, want) and torch.equal(x.grad, fresh.grad), digits
