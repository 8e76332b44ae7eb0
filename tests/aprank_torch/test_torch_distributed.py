"""aprank.torch with process_group: two gloo processes on this machine compute the loss of the
global batch, and their gradients give back the single-process gradient of the concatenated
batch (``pytest -k distributed``)."""
import datetime
import os
import socket
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch (the torch extra; README)")
#: an optional package the test extra leaves out: .ci/run's extras lane runs this file
pytestmark = pytest.mark.extras
import aprank.torch as at  # noqa: E402  (only once torch is known to be there)

dist = torch.distributed
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("this torch build has no torch.distributed with the gloo backend",
                allow_module_level=True)
mp = pytest.importorskip("torch.multiprocessing")

WORLD = 2
#: The two processes import torch, aprank and this module, then run every case below: a few
#: seconds; a rank that never finishes fails the test instead of hanging it.
DEADLINE_S = 180
FEATURES = 3


def batches():
    """Global batches (float64 features, labels, qid or None) and how they are split: queries
    cut across the ranks, unequal shares, a rank with no positive, a rank with no sample, a
    score matrix ranked per column, ties."""
    rng = np.random.default_rng(26)
    out = []
    # rank 1 holds no positive: every positive sits in rank 0's 7 samples; queries 3, 8 and 11
    # lie on both ranks, query 20 only on rank 1 (no positive anywhere: skipped)
    q0, q1 = np.array([3, 8, 11, 3, 8, 11, 3]), np.array([8, 3, 11, 20, 20, 3, 8, 11, 3, 8, 11, 3])
    y0 = np.array([1, 1, 1, 0, 0, 1, 0], bool)
    out.append(dict(name="no positive on rank 1", x=rng.standard_normal((19, FEATURES)),
                    y=np.r_[y0, np.zeros(12, bool)], qid=np.r_[q0, q1], sizes=[7, 12]))
    # random queries over both ranks, unequal shares, tied features (hence tied scores)
    n = 43
    q = rng.integers(0, 5, n)
    y = rng.random(n) < 0.3
    for g in np.unique(q):
        y[np.flatnonzero(q == g)[-1]] = True
    x = np.round(rng.standard_normal((n, FEATURES)), 1)
    out.append(dict(name="queries across ranks, ties", x=x, y=y, qid=q, sizes=[30, 13]))
    # rank 0 holds nothing; one query, no qid
    y = rng.random(25) < 0.4
    y[0] = True
    out.append(dict(name="no sample on rank 0", x=rng.standard_normal((25, FEATURES)), y=y,
                    qid=None, sizes=[0, 25]))
    # a (B, L) score matrix: the ranks hold 5 and 9 rows of every column
    y = rng.random((14, 4)) < 0.3
    y[0] = True
    out.append(dict(name="score matrix", x=rng.standard_normal((14, FEATURES)), y=y, qid=None,
                    sizes=[5, 9], columns=4))
    return out


def model(columns=1):
    """The same linear scorer on every rank and in the single process."""
    torch.manual_seed(0)
    return torch.nn.Linear(FEATURES, columns, dtype=torch.float64)


def scores_of(net, x, columns):
    s = net(torch.as_tensor(x))
    return s if columns > 1 else s[:, 0]


def share(batch, rank):
    """This rank's part of a batch: (x, y, qid)."""
    a = sum(batch["sizes"][:rank])
    b = a + batch["sizes"][rank]
    return batch["x"][a:b], batch["y"][a:b], None if batch["qid"] is None else batch["qid"][a:b]


def variants():
    """(loss, backend, reduction) for every batch: both losses and backends, every reduction."""
    return [("ap", "kernels", "mean"), ("ndcg", "kernels", "sum"), ("ap", "torch", "none"),
            ("ndcg", "torch", "mean")]


def run(batch, rank, loss, backend, reduction, group):
    """Loss, gradient of its sum per local score, and of the linear model's parameters."""
    columns = batch.get("columns", 1)
    net = model(columns)
    x, y, q = share(batch, rank) if rank is not None else (batch["x"], batch["y"], batch["qid"])
    scores = scores_of(net, x, columns)
    scores.retain_grad()
    out = at.hinge_loss(scores, torch.tensor(y), None if q is None else torch.tensor(q), reduction,
                        loss=loss, backend=backend, process_group=group)
    out.sum().backward()
    return dict(loss=out.detach(), score_grad=scores.grad,
                param_grads=[p.grad for p in net.parameters()])


def single_process(batch, loss, backend, reduction):
    return run(batch, None, loss, backend, reduction, None)


def _worker(rank, port, outdir):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=datetime.timedelta(seconds=60))
    try:
        results = {"cases": {}, "errors": {}}
        for i, batch in enumerate(batches()):
            for variant in variants():
                results["cases"][i, variant] = run(batch, rank, *variant, True)

        # DDP itself: it averages the replicas' gradients over the ranks
        batch = batches()[1]
        net = torch.nn.parallel.DistributedDataParallel(model())
        x, y, q = share(batch, rank)
        criterion = at.APHingeLoss(process_group=dist.group.WORLD)
        criterion(net(torch.as_tensor(x))[:, 0], torch.tensor(y), torch.tensor(q)).backward()
        results["ddp"] = [p.grad for p in net.module.parameters()]

        # the caller's tensors come back as they went in
        s, yt, qt = torch.tensor(x[:, 0]), torch.tensor(y), torch.tensor(q)
        kept = (s.clone(), yt.clone(), qt.clone())
        at.ndcg_hinge_loss(s, yt, qt, process_group=True)
        results["unchanged"] = all(torch.equal(a, b) for a, b in zip((s, yt, qt), kept))

        # the NDCG module (its discount a buffer) gathers the group's batch as the function does
        results["ndcg module"] = (at.NDCGHingeLoss(process_group=True)(s, yt, qt),
                                  at.ndcg_hinge_loss(s, yt, qt, process_group=True),
                                  at.ndcg_hinge_loss(s, yt, qt))

        # a group of one rank is the loss of that rank's batch alone
        singles = [dist.new_group([r]) for r in range(WORLD)]
        results["group of one"] = [run(batch, rank, "ap", "kernels", "mean", group)
                                   for group in (singles[rank], None)]

        # a check failing on one rank fails on both, naming it (no rank left waiting)
        x, y, q = share(batch, rank)
        s = torch.tensor(x[:, 0])
        bad = {
            "labels shape": (s, torch.tensor(y[:-1] if rank == 1 else y), torch.tensor(q)),
            "dtype": (s.float() if rank == 1 else s, torch.tensor(y), torch.tensor(q)),
            "label value": (s, torch.tensor(np.where(y, 2, 0) if rank == 1 else y),
                            torch.tensor(q)),
            "qid on one rank": (s, torch.tensor(y), torch.tensor(q) if rank == 0 else None),
        }
        for name, (si, yi, qi) in bad.items():
            try:
                at.ap_hinge_loss(si, yi, qi, process_group=True)
            except (TypeError, ValueError) as exc:
                results["errors"][name] = (type(exc).__name__, str(exc))
        torch.save(results, os.path.join(outdir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """What each of the two gloo ranks computed (one spawn for every test here)."""
    outdir = tmp_path_factory.mktemp("distributed")
    start = time.perf_counter()
    context = mp.start_processes(_worker, args=(free_port(), str(outdir)), nprocs=WORLD,
                                 join=False, start_method="spawn")
    deadline = time.monotonic() + DEADLINE_S
    while not context.join(timeout=1):
        if time.monotonic() > deadline:
            for process in context.processes:
                process.kill()
            pytest.fail(f"the {WORLD} gloo ranks did not finish in {DEADLINE_S} s")
    print(f"\n{WORLD} gloo ranks: {time.perf_counter() - start:.1f} s")
    return [torch.load(outdir / f"rank{r}.pt", weights_only=False) for r in range(WORLD)]


@pytest.mark.slow      # the two spawned ranks import torch and aprank: 10-20 s in all
@pytest.mark.parametrize("case", range(len(batches())),
                         ids=[b["name"].replace(" ", "-") for b in batches()])
def test_distributed_loss_and_gradients_equal_one_process(ranks, case):
    """Acceptance b: every rank's loss is the single-process loss of the concatenated batch,
    each rank's score gradient is world_size times that loss's gradient on its samples, and the
    mean of the ranks' parameter gradients (what DDP computes) is the single-process one."""
    batch = batches()[case]
    bounds = np.cumsum([0] + batch["sizes"])
    for variant in variants():
        want = single_process(batch, *variant)
        got = [ranks[r]["cases"][case, variant] for r in range(WORLD)]
        for r in range(WORLD):
            np.testing.assert_allclose(got[r]["loss"].numpy(), want["loss"].numpy(),
                                       rtol=1e-12, atol=1e-12, err_msg=f"{variant} rank {r}")
            np.testing.assert_allclose(got[r]["score_grad"].numpy() / WORLD,
                                       want["score_grad"][bounds[r]:bounds[r + 1]].numpy(),
                                       rtol=1e-12, atol=1e-12, err_msg=f"{variant} rank {r}")
        for k, p in enumerate(want["param_grads"]):
            mean = sum(g["param_grads"][k] for g in got) / WORLD
            np.testing.assert_allclose(mean.numpy(), p.numpy(), rtol=1e-12, atol=1e-12,
                                       err_msg=str(variant))
        assert float(want["loss"].abs().sum()) > 0     # a batch with something to learn


@pytest.mark.slow
def test_distributed_ddp_gradient_is_the_single_process_gradient(ranks):
    """DDP around the model, APHingeLoss(process_group=...) as the criterion: after backward
    every replica holds the single-process gradient of the concatenated batch."""
    want = single_process(batches()[1], "ap", "auto", "mean")["param_grads"]
    for r in range(WORLD):
        for got, p in zip(ranks[r]["ddp"], want):
            np.testing.assert_allclose(got.numpy(), p.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_distributed_ndcg_module_gathers_the_group_batch(ranks):
    for r in range(WORLD):
        module, function, local = ranks[r]["ndcg module"]
        assert torch.equal(module, function)
        assert not torch.equal(module, local)      # the rank's own batch alone differs


@pytest.mark.slow
def test_distributed_group_of_one_rank_is_the_local_loss(ranks):
    for r in range(WORLD):
        grouped, alone = ranks[r]["group of one"]
        assert torch.equal(grouped["loss"], alone["loss"])
        assert torch.equal(grouped["score_grad"], alone["score_grad"])


@pytest.mark.slow
@pytest.mark.parametrize("name, kind, says", [
    ("labels shape", "ValueError", "rank 1: labels has shape"),
    ("dtype", "ValueError", "must share their score dtype"),
    ("label value", "ValueError", "= 2.0: labels must be bool"),
    ("qid on one rank", "ValueError", "must share their qid"),
])
def test_distributed_a_check_failing_on_one_rank_fails_on_every_rank(ranks, name, kind, says):
    for r in range(WORLD):
        assert name in ranks[r]["errors"], f"rank {r} accepted the batch of case {name!r}"
        got_kind, message = ranks[r]["errors"][name]
        assert got_kind == kind and says in message, (r, got_kind, message)


def test_distributed_needs_an_initialised_group():
    """Outside a process group: a clear error, not a silent local loss (group.WORLD is None
    before init_process_group, which is why True names the default group)."""
    if dist.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    s = torch.tensor([1.0, 0.0])
    with pytest.raises(RuntimeError, match="init_process_group"):
        at.ap_hinge_loss(s, torch.tensor([1, 0]), process_group=True)
    with pytest.raises(TypeError, match="process_group must be a torch.distributed.ProcessGroup"):
        at.ap_hinge_loss(s, torch.tensor([1, 0]), process_group="world")


@pytest.mark.slow
def test_distributed_leaves_the_callers_tensors_alone(ranks):
    """The caller's scores, labels and qid are not modified on any rank; process_group=None is
    the loss of this process's batch."""
    assert all(ranks[r]["unchanged"] for r in range(WORLD))
    s = torch.tensor([0.5, 0.5, -1.0, 2.0], dtype=torch.float64)
    y = torch.tensor([1, 0, 0, 1])
    assert torch.equal(at.ap_hinge_loss(s, y, process_group=None), at.ap_hinge_loss(s, y))
