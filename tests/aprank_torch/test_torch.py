"""aprank.torch: the structured hinge equals the kernels' objective, its gradient equals
coef(R_hat) - coef(R*), and the torch-ops implementation (the GPU path) equals the kernels."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aprank
from aprank.losses import NDCG

torch = pytest.importorskip("torch", reason="needs torch (the torch extra; README)")
#: an optional package the test extra leaves out: .ci/run's extras lane runs this file
pytestmark = pytest.mark.extras
import aprank.torch as at  # noqa: E402  (only once torch is known to be there)
from aprank_support.torch_batches import random_batch, reference  # noqa: E402  (likewise)

DTYPES = [torch.float32, torch.float64]
LOSSES = ["ap", "ndcg"]


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """torch's own operations on one thread here: the tensors are small, and on a loaded
    machine idle intra-op threads spin (with both cores busy, gradcheck of the torch backend
    took 10 s instead of 2, the 1500-instance sweep 40 s instead of 3). The kernels' threads
    are tested with n_threads given."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def value_and_grad(s, y, q, loss, dtype, backend, reduction="none"):
    x = torch.tensor(s, dtype=dtype, requires_grad=True)
    out = at.hinge_loss(x, torch.tensor(y), torch.tensor(q), reduction, loss=loss, backend=backend)
    out.sum().backward()
    return out.detach().double().numpy(), x.grad.double().numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("backend", ["kernels", "torch"])
def test_value_and_gradient_equal_the_kernels(dtype, loss, backend):
    """Acceptance a: per-query value = infer_batch objective, gradient = coef - truth_coef."""
    rng = np.random.default_rng([11, LOSSES.index(loss), DTYPES.index(dtype)])
    rtol = 1e-6 if dtype == torch.float32 else 1e-12
    for _ in range(60):
        s, y, q = random_batch(rng)
        want, want_grad = reference(s, y, q, loss, dtype)
        got, grad = value_and_grad(s, y, q, loss, dtype, backend)
        # the objective is Delta (<= 1) plus score terms (<= 2 max |s|); coefficients are
        # multiples of 1 / PN of size up to 1 / min(P, N) <= 1
        np.testing.assert_allclose(got, want[np.unique(q)], rtol=rtol,
                                   atol=rtol * 1e-3 * (1 + np.abs(s).max()))
        np.testing.assert_allclose(grad, want_grad, rtol=rtol, atol=rtol * 1e-3)


@pytest.mark.slow      # 1500 instances per loss: 3-4 s each on one thread, more when loaded
@pytest.mark.parametrize("loss", LOSSES)
def test_torch_ops_rank_like_the_kernels_on_thousands_of_instances(loss):
    """Acceptance b: the torch-ops implementation returns the kernels' ranks (so the same
    gradient) and objective on the cross-check instances, ties included."""
    for trial in range(1500):
        inst = aprank.checks.random_instance("ranking", seed=5, trial=trial, max_n=3000)
        want = aprank.infer(inst.scores, inst.labels, loss=loss, algorithm="qs")
        n = inst.size
        got = at.hinge_terms(torch.tensor(inst.scores), torch.tensor(inst.labels),
                             torch.zeros(n, dtype=torch.int64), 1, loss)
        assert np.array_equal(got.ranks.numpy(), want.ranks), (trial, inst.description)
        assert got.objective[0].item() == pytest.approx(
            want.objective, rel=1e-9, abs=1e-12 * (1 + np.abs(inst.scores).max()))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("n", [10_000, 100_000])
def test_torch_ops_on_large_queries(loss, n):
    rng = np.random.default_rng(n)
    for P, shift, digits in [(n // 100, 1.0, None), (n // 10, 0.0, 1), (n // 2, 3.0, 0)]:
        y = np.zeros(n, dtype=bool)
        y[rng.choice(n, P, replace=False)] = True
        s = rng.standard_normal(n) + shift * y
        if digits is not None:
            s = np.round(s, digits)
        want = aprank.infer(s, y, loss=loss, algorithm="qs")
        got = at.hinge_terms(torch.tensor(s), torch.tensor(y), torch.zeros(n, dtype=torch.int64), 1,
                             loss, n_positives=P)
        assert np.array_equal(got.ranks.numpy(), want.ranks)
        assert got.objective[0].item() == pytest.approx(want.objective, rel=1e-9)


@pytest.mark.slow       # a few seconds: the quick lane stays under two minutes
def test_torch_ops_on_many_query_batches():
    rng = np.random.default_rng(3)
    for trial in range(200):
        s, y, q = random_batch(rng, n_max=2000, n_queries=int(rng.integers(1, 60)))
        if trial % 4 == 0:
            # equal queries in consecutive blocks: the batched-sort layout
            size = int(rng.integers(1, min(40, s.size) + 1))
            s, y = s[: size * (s.size // size)], y[: size * (s.size // size)]
            q = np.repeat(np.arange(s.size // size), size)
            y[::size] = True
        for loss in LOSSES:
            r = aprank.infer_batch(s, y, q, loss=loss)
            ids, group = np.unique(q, return_inverse=True)
            got = at.hinge_terms(torch.tensor(s), torch.tensor(y), torch.tensor(group), ids.size,
                                 loss)
            assert np.array_equal(got.ranks.numpy(), r.ranks)
            np.testing.assert_allclose(got.grad.numpy(), r.coef - r.truth_coef, rtol=1e-12,
                                       atol=1e-15)


def test_user_discount_reaches_both_backends():
    rng = np.random.default_rng(4)
    s, y = rng.standard_normal(300), rng.random(300) < 0.2
    disc = 1.0 / np.arange(1, 301)        # convex and decreasing
    want = aprank.infer(s, y, loss=NDCG(discount=disc)).objective
    for backend in ["kernels", "torch"]:
        got = at.ndcg_hinge_loss(torch.tensor(s), torch.tensor(y), discount=disc, backend=backend)
        assert got.item() == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="discount has 10 values"):
        at.ndcg_hinge_loss(torch.tensor(s), torch.tensor(y), discount=disc[:10], backend="torch")


@pytest.mark.parametrize("backend", ["kernels", "torch"])
def test_gradcheck_where_the_subgradient_is_unique(backend):
    rng = np.random.default_rng(5)
    for loss in LOSSES:
        for _ in range(5):
            s = torch.tensor(rng.standard_normal(40), dtype=torch.float64, requires_grad=True)
            y = torch.tensor(rng.random(40) < 0.3)
            y[0] = True
            q = torch.tensor(rng.integers(0, 3, 40))
            fn = lambda x: at.hinge_loss(x, y, q, "sum", loss=loss, backend=backend, empty="skip")  # noqa: E731
            assert torch.autograd.gradcheck(fn, (s,), eps=1e-7, atol=1e-6)


@pytest.mark.parametrize("backend", ["kernels", "torch"])
@pytest.mark.parametrize("digits", [None, 1])
def test_matrix_input_ranks_each_column(backend, digits):
    """The (B, L) layout, whose equal column blocks the torch-ops path sorts row by row."""
    rng = np.random.default_rng(6)
    S = rng.standard_normal((64, 5))
    S = S if digits is None else np.round(S, digits)
    Y = rng.random((64, 5)) < 0.3
    Y[0] = True
    x = torch.tensor(S, requires_grad=True)
    per_column = at.ap_hinge_loss(x, torch.tensor(Y), reduction="none", backend=backend)
    per_column.sum().backward()
    for c in range(5):
        r = aprank.infer(S[:, c], Y[:, c])
        assert per_column[c].item() == pytest.approx(r.objective, rel=1e-12)
        np.testing.assert_allclose(x.grad[:, c].numpy(), r.coef - aprank.losses.get_loss("ap")
                                   .truth_coef(Y[:, c]), atol=1e-15)


def test_reductions_and_skipped_queries():
    s = torch.tensor([2.0, 1.0, 0.5, 3.0, -1.0, 0.0], requires_grad=True)
    y = torch.tensor([0, 1, 0, 0, 0, 1])
    q = torch.tensor([0, 0, 0, 1, 1, 2])     # query 1 has no positive, query 2 no negative
    none = at.ap_hinge_loss(s, y, q, "none")
    assert none[1].item() == 0.0 and none[2].item() == 0.0
    want0 = aprank.infer(s[:3].detach().numpy(), y[:3].numpy()).objective
    assert none[0].item() == pytest.approx(want0)
    # mean over the queries with positives (0 and 2)
    assert at.ap_hinge_loss(s, y, q).item() == pytest.approx(want0 / 2)
    assert at.ap_hinge_loss(s, y, q, "sum").item() == pytest.approx(want0)
    at.ap_hinge_loss(s, y, q).backward()
    assert torch.all(s.grad[3:] == 0)
    with pytest.raises(ValueError, match="query 1 has none; pass empty='skip'"):
        at.ap_hinge_loss(s, y, q, empty="error")


def test_reduction_none_follows_sorted_query_ids():
    s, y = np.array([0.3, 1.0, 0.2, 0.9]), np.array([1, 0, 1, 0])
    q = np.array([7, 2, 2, 7])
    out = at.ap_hinge_loss(torch.tensor(s), y, q, "none")
    r = aprank.infer_batch(s, y, q)
    assert out.tolist() == pytest.approx(r.objective[np.argsort(r.query_ids)].tolist())


@pytest.mark.parametrize("kwargs, match", [
    (dict(scores=[1.0, 2.0]), "must be a torch.Tensor"),
    (dict(scores=torch.tensor([1, 2])), "floating-point"),
    (dict(scores=torch.tensor([1.0, float("nan")])), r"scores\[1\] = nan is not finite"),
    (dict(scores=torch.zeros(2, 2, 2)), "1-D .* or 2-D"),
    (dict(labels=torch.tensor([1, 2])), r"labels\[1\] = 2"),
    (dict(labels=torch.tensor([1, 0, 1])), "shape"),
    (dict(labels=torch.tensor([0, 0])), "without positive samples, and the batch has none"),
    (dict(labels=torch.tensor([0, -1])), "mix 0 and -1"),
    (dict(qid=torch.tensor([0.5, 1.0])), "integer query ids"),
    (dict(reduction="max"), "reduction"),
    (dict(backend="cuda"), "backend"),
    (dict(empty="drop"), "empty"),
    (dict(n_threads=0), "n_threads"),
    (dict(validate="no"), "validate"),
    (dict(validate=False, empty="error"), "empty='error' looks for queries without positives"),
])
def test_bad_input_is_refused_clearly(kwargs, match):
    args = dict(scores=torch.tensor([1.0, 0.0]), labels=torch.tensor([1, 0]))
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        at.ap_hinge_loss(**args)


def test_unknown_loss_is_refused():
    with pytest.raises(ValueError, match="unknown loss"):
        at.hinge_loss(torch.tensor([1.0, 0.0]), torch.tensor([1, 0]), loss="auc")
    with pytest.raises(NotImplementedError):
        at.hinge_loss(torch.tensor([1.0, 0.0]), torch.tensor([1, 0]), loss="zero-one")


def test_a_registered_loss_of_the_ranking_kind_that_is_no_ranking_loss_is_refused():
    """A Loss saying kind "ranking" without being a RankingLoss has no kernel_spec: the hinge
    refuses it with a TypeError, and the list of losses in the other errors leaves it out."""
    from aprank.losses import Loss, register_loss, unregister_loss

    class Impostor(Loss):
        name, kind = "impostor-ranking", "ranking"

    register_loss(Impostor())
    try:
        with pytest.raises(TypeError, match="'impostor-ranking' says it is of the ranking kind"):
            at.hinge_loss(torch.tensor([1.0, 0.0]), torch.tensor([1, 0]), loss="impostor-ranking")
        with pytest.raises(ValueError, match=r"unknown loss 'auc'; choose one of \['ap', 'ndcg'\]"):
            at.hinge_loss(torch.tensor([1.0, 0.0]), torch.tensor([1, 0]), loss="auc")
    finally:
        unregister_loss("impostor-ranking")


@pytest.mark.parametrize("function", ["ap_hinge_loss", "ndcg_hinge_loss"])
def test_a_loss_keyword_to_the_hinge_of_one_loss_says_what_to_call(function):
    # Python's own message was "hinge_loss() got multiple values for keyword argument 'loss'"
    with pytest.raises(TypeError, match=rf"^{function}\(\) is the hinge of one loss and takes "
                                        r"no loss= \(got 'zero-one'\); for another loss call "
                                        r"aprank.torch.hinge_loss\(.*\['ap', 'ndcg'\]"):
        getattr(at, function)(torch.tensor([1.0, 0.0]), torch.tensor([1, 0]), loss="zero-one")


@pytest.mark.parametrize("backend", ["kernels", "torch"])
def test_torch_func_grad_and_jacrev_give_the_backward_gradient(backend):
    rng = np.random.default_rng(3)
    s = torch.tensor(rng.standard_normal(40))
    y, q = torch.tensor(rng.random(40) < 0.3), torch.tensor(rng.integers(0, 3, 40))
    y[:3] = True
    q[:3] = torch.arange(3)

    def loss(scores, reduction="mean"):
        return at.ap_hinge_loss(scores, y, q, reduction, backend=backend)

    leaf = s.clone().requires_grad_(True)
    loss(leaf).backward()
    torch.testing.assert_close(torch.func.grad(loss)(s), leaf.grad)
    rows = []
    for k in range(3):
        leaf = s.clone().requires_grad_(True)
        loss(leaf, "none")[k].backward()
        rows.append(leaf.grad)
    torch.testing.assert_close(torch.func.jacrev(lambda t: loss(t, "none"))(s), torch.stack(rows))


@pytest.mark.parametrize("transform", ["vmap", "vmap(grad)", "grad(vmap)"])
def test_vmap_is_refused_saying_what_to_pass_instead(transform):
    # torch said "Cannot access data pointer of Tensor that doesn't have storage"
    y = torch.tensor([True, False, False, True])
    S = torch.randn(3, 4)
    one = lambda t: at.ap_hinge_loss(t, y)      # noqa: E731
    call = {"vmap": lambda: torch.func.vmap(one)(S),
            "vmap(grad)": lambda: torch.func.vmap(torch.func.grad(one))(S),
            "grad(vmap)": lambda: torch.func.grad(lambda t: torch.func.vmap(one)(t).sum())(S)}
    with pytest.raises(RuntimeError, match=r"do not support torch.func.vmap.*a \(B, L\) tensor "
                                           r"is L queries"):
        call[transform]()


def test_caller_tensors_are_not_modified():
    s = torch.tensor([0.5, 2.0, 0.5, -1.0])
    y = torch.tensor([1, 0, 1, 0])
    before = s.clone(), y.clone()
    for backend in ["kernels", "torch"]:
        at.ap_hinge_loss(s, y, backend=backend)
    assert torch.equal(s, before[0]) and torch.equal(y, before[1])


def test_threads_give_the_same_answer():
    rng = np.random.default_rng(8)
    n = 60_000
    s, y, q = rng.standard_normal(n), rng.random(n) < 0.1, rng.integers(0, 50, n)
    one = at.ap_hinge_loss(torch.tensor(s), y, q, "none", n_threads=1)
    two = at.ap_hinge_loss(torch.tensor(s), y, q, "none", n_threads=2)
    assert torch.equal(one, two)


def test_a_thread_given_only_queries_without_positives():
    """Two large queries, the second without positives: the threads split between them, and
    the second thread's part (nothing to solve) gives 0 and no gradient."""
    rng = np.random.default_rng(9)
    n = 30_000
    s, q = rng.standard_normal(2 * n), np.repeat([0, 1], n)
    y = np.zeros(2 * n, dtype=bool)
    y[rng.choice(n, 100, replace=False)] = True
    got = []
    for n_threads in (1, 2):
        x = torch.tensor(s, requires_grad=True)
        out = at.ap_hinge_loss(x, y, q, "none", n_threads=n_threads)
        out.sum().backward()
        got.append((out.detach(), x.grad))
    assert got[1][0][1] == 0.0 and torch.equal(got[1][1][n:], torch.zeros(n, dtype=x.dtype))
    assert torch.equal(got[0][0], got[1][0]) and torch.equal(got[0][1], got[1][1])


def test_modules_and_float32_training_step():
    torch.manual_seed(0)
    X, Y = torch.randn(128, 8), torch.rand(128, 3) < 0.3
    Y[0] = True
    for crit in [at.APHingeLoss(), at.NDCGHingeLoss(discount=1.0 / np.log2(np.arange(2, 200)))]:
        net = torch.nn.Linear(8, 3)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        first = crit(net(X), Y).item()
        for _ in range(30):
            opt.zero_grad()
            loss = crit(net(X), Y)
            loss.backward()
            opt.step()
        assert crit(net(X), Y).item() < first
    with pytest.raises(ValueError, match="convex"):
        at.NDCGHingeLoss(discount=[1.0, 0.9, 0.2])


def test_importing_aprank_does_not_import_torch():
    code = "import sys, aprank, aprank.learn, aprank.models; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("backend", ["kernels", "torch"])
def test_torch_compile_runs_the_loss_eagerly(backend):
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    X, Y = torch.randn(64, 8), torch.rand(64, 3) < 0.3
    Y[0] = True

    def step():
        net.zero_grad()
        loss = at.ap_hinge_loss(net(X), Y, backend=backend)
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in net.parameters()]

    want, want_grads = step()
    torch._dynamo.reset()
    got, grads = torch.compile(step, backend="aot_eager")()
    assert got.item() == pytest.approx(want.item(), rel=1e-6)
    for g, w in zip(grads, want_grads):
        torch.testing.assert_close(g, w)


def test_docs_example_runs():
    page = (Path(__file__).resolve().parents[2] / "docs" / "torch.md").read_text()
    block = page.split("<!-- torch example -->")[1].split("<!-- end torch example -->")[0]
    code = block.split("```python\n")[1].split("```")[0]
    namespace = {}
    exec(compile(code, "docs/torch.md example", "exec"), namespace)
    assert namespace["scores"].grad.shape == (256, 10)
    assert namespace["per_query"].shape == (20,)


def test_training_experiment_runs_at_a_small_size():
    """Acceptance c: the docs' experiment (docs/experiments.md), quick (3 epochs, one seed), on
    the real data."""
    from aprank.datasets import data_dir
    from experiments.torch_mlp import mlp_experiment
    try:
        data_dir()
    except FileNotFoundError:
        pytest.skip("needs the data home (docs/data.md)")
    table = mlp_experiment(quick=True, log=lambda line: None)
    rows = [line for line in table.splitlines() if line.startswith("| AP hinge |")]
    assert len(rows) == 1
    mean_ap = float(rows[0].split("|")[2].split("+-")[0])
    assert 0.0 < mean_ap <= 1.0


@pytest.mark.slow      # the torch benchmark's table
def test_bench_rows_are_measured():
    from benchmarks.torch_bench import REFERENCE, UNCHECKED, bench
    # the CPU's rows (a GPU adds its own backends' rows after them)
    rows = bench(devices=["cpu"], repeats=1, budget=0.0)
    assert {r[3] for r in rows} == {"kernels", "torch", UNCHECKED, REFERENCE}
    # per device, input and dtype: the backends, "auto" unchecked, then the cross-entropy
    assert [r[3] for r in rows[:4]] == ["kernels", "torch", UNCHECKED, REFERENCE]
    assert len(rows) == 4 * 4 and all(r[4] > 0 and r[5] > 0 for r in rows)


def test_loss_modules_pickle():
    import pickle
    s, y = torch.randn(50), torch.rand(50) < 0.3
    y[0] = True
    for m in [at.APHingeLoss(reduction="sum"), at.NDCGHingeLoss(discount=1.0 / np.arange(1, 60))]:
        back = pickle.loads(pickle.dumps(m))
        assert back(s, y).item() == m(s, y).item()


@pytest.mark.parametrize("loss", LOSSES)
def test_torch_ops_inference_compiles_whole(loss):
    """The torch-ops inference has no host synchronisation and no
    data-dependent shape, so Dynamo traces it as one graph (fullgraph=True raises at the first
    graph break), and the traced function still returns the kernels' ranks, ties included."""
    rng = np.random.default_rng(9)
    n = 24                        # bit_length(24) = 5 levels: a few seconds of tracing
    for blocks in (False, True):
        s = torch.tensor(np.round(rng.standard_normal(n), 1))     # ties
        y = torch.tensor(rng.random(n) < 0.4)
        q = torch.arange(3).repeat_interleave(8) if blocks else torch.tensor(rng.integers(0, 3, n))
        for g in range(3):
            y[torch.nonzero(q == g)[0]] = True
        torch._dynamo.reset()
        fn = torch.compile(lambda s, y, q: at.hinge_terms(s, y, q, 3, loss, blocks=blocks),
                           fullgraph=True, backend="eager")
        got = fn(s, y, q)
        want = aprank.infer_batch(s.numpy(), y.numpy(), q.numpy(), loss=loss)
        assert np.array_equal(got.ranks.numpy(), want.ranks)
        np.testing.assert_allclose(got.grad.numpy(), want.coef - want.truth_coef, atol=1e-15)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("backend", ["kernels", "torch"])
def test_half_precision_scores_on_every_backend(dtype, backend):
    """bfloat16 and float16 scores are ranked in float64 as the tensor holds
    them, and value and gradient come back in the input dtype, each one rounding from the
    float64 answer (bfloat16 keeps 8 significant bits, float16 11)."""
    rng = np.random.default_rng([12, DTYPES.index(torch.float32)])
    rtol = 2.0 ** -8 if dtype == torch.bfloat16 else 2.0 ** -11
    for loss in LOSSES:
        for _ in range(15):
            s, y, q = random_batch(rng, n_max=1500)
            want, want_grad = reference(s, y, q, loss, dtype)
            x = torch.tensor(s, dtype=dtype, requires_grad=True)
            out = at.hinge_loss(x, torch.tensor(y), torch.tensor(q), "none", loss=loss,
                                backend=backend)
            out.sum().backward()
            assert out.dtype == dtype and x.grad.dtype == dtype
            # float16's smallest normal is 6e-5; smaller gradients are subnormal (absolute
            # spacing 6e-8)
            np.testing.assert_allclose(out.detach().double().numpy(), want[np.unique(q)],
                                       rtol=rtol, atol=1e-7)
            np.testing.assert_allclose(x.grad.double().numpy(), want_grad, rtol=rtol, atol=1e-7)


@pytest.mark.parametrize("backend", ["kernels", "torch"])
def test_double_backward_gives_the_zero_second_derivative(backend):
    """The hinge is piecewise linear in the scores, so differentiating its
    gradient again gives zeros with respect to the scores, and a gradient penalty through a
    model gets the model's own second-order terms."""
    rng = np.random.default_rng(13)
    x = torch.tensor(rng.standard_normal(30), requires_grad=True)
    y = torch.tensor(rng.random(30) < 0.3)
    y[0] = True
    g, = torch.autograd.grad(at.ap_hinge_loss(x * 2.0, y, backend=backend), x, create_graph=True)
    h, = torch.autograd.grad((g * torch.arange(30.0)).sum(), x)
    assert torch.equal(h, torch.zeros_like(x))
    # through a model s = w * v**2 with c = dL/ds, constant in w: a penalty on
    # dL/dv = 2 w c v has d/dw sum (2 w c v)^2 = 8 w sum (c v)^2
    w = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    v = x.detach().clone().requires_grad_()
    gv, = torch.autograd.grad(at.ap_hinge_loss(w * v ** 2, y, backend=backend), v,
                              create_graph=True)
    dw, = torch.autograd.grad((gv ** 2).sum(), w)
    c = at.hinge_terms(w.detach() * v.detach() ** 2, y, torch.zeros(30, dtype=torch.int64), 1).grad
    assert dw.item() == pytest.approx(8 * 1.5 * float(((c * v.detach()) ** 2).sum()), rel=1e-12)


def test_ndcg_module_holds_its_discount_as_a_buffer():
    """The discount moves with the module (.to(device)) instead of being
    copied to the scores' device at each call, and rank as the loss's own table does."""
    disc = 1.0 / np.arange(1, 400)
    crit = at.NDCGHingeLoss(discount=disc, backend="torch")
    buffers = dict(crit.named_buffers())
    assert torch.equal(buffers["discount"], torch.tensor(disc))
    rng = np.random.default_rng(14)
    s, y = torch.tensor(rng.standard_normal(300)), torch.tensor(rng.random(300) < 0.2)
    want = aprank.infer(s.numpy(), y.numpy(), loss=NDCG(discount=disc)).objective
    assert crit(s, y).item() == pytest.approx(want, rel=1e-12)
    assert crit.half()(s, y).item() == pytest.approx(want, rel=1e-12)   # table not rounded


@pytest.mark.slow      # one compile of the torch operations by Inductor: about a minute on a CPU
def test_compiled_backend_equals_the_kernels_on_cpu():
    """The "torch-compiled" backend (hinge_terms under torch.compile(fullgraph=True)): one input
    shape, several score draws of it (ties, few and many positives: two positives buckets),
    value and gradient equal to the kernels'. Its CUDA twin is in test_torch_cuda.py."""
    rng = np.random.default_rng(26)
    n = 60
    for trial in range(6):
        q = np.sort(rng.integers(0, 3, n))
        q[:3] = np.arange(3)
        y = rng.random(n) < (0.05 if trial % 2 else 0.5)
        for g in range(3):
            y[np.flatnonzero(q == g)[0]] = True
        s = rng.standard_normal(n) + y
        s = np.round(s, 1) if trial % 3 == 0 else s
        want, want_grad = reference(s, y, q, "ap", torch.float64)
        got, grad = value_and_grad(s, y, q, "ap", torch.float64, "torch-compiled")
        np.testing.assert_allclose(got, want[np.unique(q)], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-15)


def test_positives_bucket_bounds_the_count_in_powers_of_two():
    from aprank.torch._loss import _positives_bucket
    for n, P, want in [(10, 1, 1), (10, 2, 2), (10, 3, 4), (10, 5, 8), (10, 9, 10), (100, 0, 1)]:
        y = torch.zeros(n, dtype=torch.bool)
        y[:P] = True
        assert _positives_bucket(int(y.sum()), n) == want


@pytest.mark.parametrize("capability, installed, want", [
    ((9, 0), True, "_run_triton"), ((8, 0), True, "_run_triton"),
    ((7, 5), True, "_run_torch"), ((9, 0), False, "_run_torch")])
def test_auto_on_cuda_gives_triton_only_where_it_can_run(monkeypatch, capability, installed, want):
    """"auto" on a CUDA device: the Triton kernels where the triton package is installed and
    the GPU has compute capability 8.0 or newer (what Triton supports), else the torch
    operations; the CPU keeps the compiled kernels. No GPU is needed: the capability is
    stubbed."""
    from aprank.torch import _loss
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(_loss, "_triton", _loss._triton if installed else None)
    if installed and _loss._triton is None:
        pytest.skip("needs triton (pip install triton)")
    _loss._cuda_auto.cache_clear()
    try:
        assert _loss._run_for("auto", torch.device("cuda", 0)).__name__ == want
        assert _loss._run_for("auto", torch.device("cpu")).__name__ == "_run_kernels"
    finally:
        _loss._cuda_auto.cache_clear()


def test_the_ap_harmonic_table_is_summed_in_order():
    """The closed form of AP's search reads H[m] = 1 + 1/2 + ... + 1/m; the table is summed one
    term after another, as the host does, whatever device it serves (a parallel scan rounds
    otherwise in the last bit), and a longer table built first serves shorter ones."""
    from aprank.losses import KernelLoss
    from aprank.torch._ops import _Loss
    want, total = [0.0], 0.0
    for m in range(1, 5003):
        total += 1.0 / m
        want.append(total)
    for n in (5000, 37, 5000):
        H = _Loss(KernelLoss.AP, None, n, torch.device("cpu")).H
        assert H.dtype == torch.float64 and H.shape == (n + 3,)
        assert H.tolist() == want[:n + 3]


def _batches_to_trust(rng):
    """(scores, labels, qid) of every layout the loss takes, with queries lacking positives
    (left out of the mean) and labels in each convention."""
    S = np.round(rng.standard_normal((40, 6)), 1)
    Y = rng.random((40, 6)) < 0.2
    Y[:, 2] = False                                   # a class missing from the minibatch
    yield S, Y, None
    yield S, np.where(Y, 1, -1), None                 # {-1, +1}
    s, y, q = random_batch(rng)
    yield s, y.astype(np.float32), q                  # {0, 1}, many queries
    yield s, y, None                                  # one query


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("backend", ["kernels", "torch"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_validate_false_gives_the_checked_call_to_the_last_bit(loss, backend, reduction):
    """On valid batches, skipping the checks changes nothing: the same value and gradient,
    bit for bit, in every layout and reduction (the mean's divisor counted on the device)."""
    rng = np.random.default_rng([31, LOSSES.index(loss)])
    for _ in range(4):
        for s, y, q in _batches_to_trust(rng):
            got = []
            for validate in (True, False):
                x = torch.tensor(s, requires_grad=True)
                out = at.hinge_loss(x, torch.tensor(y), None if q is None else torch.tensor(q),
                                    reduction, loss=loss, backend=backend, validate=validate)
                out.sum().backward()
                got.append((out.detach(), x.grad))
            assert torch.equal(got[0][0], got[1][0]) and torch.equal(got[0][1], got[1][1])


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("shape", [(64, 5), (300,)])
def test_validate_false_reads_nothing_on_the_host(loss, shape):
    """With the checks skipped, a score matrix or one query goes through the loss and its
    backward without the host reading a value: the call runs on fake tensors, which have
    none (with the checks, the same call must read them)."""
    from torch._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode
    for validate in (False, True):
        with FakeTensorMode():
            scores = torch.randn(*shape, requires_grad=True)
            labels = torch.rand(*shape) < 0.3
            if validate:
                with pytest.raises(DataDependentOutputException):
                    at.hinge_loss(scores, labels, loss=loss, backend="torch")
                continue
            for criterion in (at.APHingeLoss(backend="torch", validate=False),
                              at.NDCGHingeLoss(backend="torch", validate=False),
                              lambda s, y: at.hinge_loss(s, y.long(), loss=loss,
                                                         backend="torch", validate=False)):
                criterion(scores, labels).backward()
                assert scores.grad.shape == scores.shape


def test_validate_false_trusts_the_labels_and_skips_empty_batches():
    """Without the checks: a label is positive where it equals 1, so {0, 1} and {-1, +1} read
    alike; a batch without positives gives 0 and a zero gradient, where the checks refuse it."""
    s = torch.tensor([0.3, 1.0, -0.2, 0.9], requires_grad=True)
    want = at.ap_hinge_loss(s, [1, 0, 1, 0])
    for labels in ([1, -1, 1, -1], [1.0, 0.0, 1.0, 0.0], [True, False, True, False]):
        assert torch.equal(at.ap_hinge_loss(s, torch.tensor(labels), validate=False), want)
    for reduction in ("mean", "sum"):
        s.grad = None
        out = at.ap_hinge_loss(s, torch.zeros(4), reduction=reduction, validate=False)
        out.backward()
        assert out.item() == 0.0 and torch.equal(s.grad, torch.zeros(4))
    with pytest.raises(ValueError, match="the batch has none"):
        at.ap_hinge_loss(s, torch.zeros(4))
