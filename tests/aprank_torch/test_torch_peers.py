"""``python -m experiments torch-peers``: the tasks' minibatches, the
peers' adapters, and the quick run on the real data. The peers (libauc,
pytorch-metric-learning) are optional: the tests that run them skip, saying so, where they are
absent (.ci/run installs them)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch (the torch extra; README)")
#: an optional package the test extra leaves out: .ci/run's extras lane runs this file
pytestmark = pytest.mark.extras

from experiments import peer_losses, torch_peers  # noqa: E402
from experiments.peer_tasks import ColumnsTask, QueriesTask  # noqa: E402

LIBAUC = "needs libauc (pip install --no-deps libauc)"
PML = "needs pytorch-metric-learning (pip install --no-deps ...)"


def _columns_task(n=60, L=3, seed=0):
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, L, n)
    Y = classes[:, None] == np.arange(L)
    X = torch.tensor(rng.normal(size=(n, 4)), dtype=torch.float32)
    return ColumnsTask("toy", "toy", X, Y, X[:10], Y[:10], classes)


def _queries_task(seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(12), rng.integers(1, 9, 12))
    Y = (rng.random(qid.size) < 0.4)[:, None]
    X = torch.tensor(rng.normal(size=(qid.size, 4)), dtype=torch.float32)
    return QueriesTask("toy", "toy", X, Y, X, Y, None, qid=qid, qid_test=qid)


def test_columns_task_flattens_one_ranking_per_column_with_distinct_keys():
    task = _columns_task()
    idx = np.array([5, 0, 17, 33])
    out = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    scores, labels, group, key = task.flat(out, idx)
    for c in range(3):
        rows = group == c
        assert torch.equal(scores[rows], out[:, c])
        assert np.array_equal(labels[rows].numpy(), task.Y[idx, c])
        assert np.array_equal(key[rows].numpy(), c * task.n_train + idx)
    assert key.unique().numel() == key.numel() and int(key.max()) < task.n_keys


def test_queries_task_batches_hold_whole_queries_and_every_row_once():
    task = _queries_task()
    batches = task.batches(np.random.default_rng(1), size=10)
    rows = np.concatenate(batches)
    assert np.array_equal(np.sort(rows), np.arange(task.n_train))
    for b in batches:                   # a query is never split between minibatches
        for q in np.unique(task.qid[b]):
            assert set(np.flatnonzero(task.qid == q)) <= set(b)
    assert len(batches) > 1


def test_balanced_batches_have_the_layout_smooth_ap_needs():
    classes = np.r_[np.zeros(50, int), np.ones(7, int), np.full(30, 2)]
    batches = peer_losses.balanced_batches(classes, np.random.default_rng(0), 3)
    assert len(batches) == classes.size // 9
    for b in batches:                   # 3 classes x 3 samples, class after class
        assert np.array_equal(classes[b], np.repeat(np.arange(3), 3))
    # the large class is drawn without repetition within the epoch
    zeros = np.concatenate([b[:3] for b in batches])
    assert np.unique(zeros).size == zeros.size


def test_prototype_scores_rank_each_class_by_its_prototype():
    rng = np.random.default_rng(0)
    classes = np.repeat(np.arange(3), 20)
    emb = torch.tensor(np.eye(3)[classes] + 0.05 * rng.normal(size=(60, 3)), dtype=torch.float32)
    s = peer_losses.prototype_scores(emb, classes, emb, 3)
    assert s.shape == (60, 3)
    assert np.array_equal(s.argmax(1), classes)
    assert np.allclose(s.max(1), 1.0, atol=0.02)


def test_a_loss_whose_package_is_missing_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(peer_losses.importlib.util, "find_spec", lambda name: None)
    reason = peer_losses.LOSSES["LibAUC AP loss (SOAP)"].unavailable(_columns_task())
    assert reason == "not installed: pip install --no-deps libauc"
    assert peer_losses.LOSSES["aprank AP hinge"].unavailable(_columns_task()) is None


def test_metric_learning_losses_do_not_apply_without_classes():
    for name in ("pml FastAP", "pml Smooth-AP"):
        assert peer_losses.LOSSES[name].unavailable(_queries_task()).startswith("does not apply")


def test_libauc_moving_averages_move_at_the_keys_of_the_batch_positives():
    pytest.importorskip("libauc", reason=LIBAUC)
    task = _columns_task()
    fn = peer_losses.LOSSES["LibAUC AP loss (SOAP)"].build(task)
    idx = np.arange(0, 40, 2)
    out = torch.randn(idx.size, 3, requires_grad=True)
    fn(out, idx).backward()
    moved = set(np.flatnonzero(fn.state.u_all[:, 0].numpy() != 0))
    _, labels, _, key = task.flat(out.detach(), idx)
    assert moved == set(key[labels].tolist())
    assert out.grad is not None and bool(out.grad.abs().sum() > 0)


def _smooth_ap_reference(emb, n_classes, tau=0.01):
    """Smooth-AP (Brown et al. 2020) written from its formula: n_classes groups of g samples,
    class after class; the mean over anchors of 1 - the smoothed AP of the anchor's group."""
    B = emb.shape[0]
    g = B // n_classes
    e = torch.nn.functional.normalize(emb, dim=1)
    s = e @ e.t()
    total = 0.0
    for i in range(B):
        pos = range((i // g) * g, (i // g + 1) * g)
        ap = 0.0
        for j in pos:
            over_all = sum(torch.sigmoid((s[i, k] - s[i, j]) / tau) for k in range(B) if k != j)
            over_pos = sum(torch.sigmoid((s[i, k] - s[i, j]) / tau) for k in pos if k != j)
            ap += (1 + over_pos) / (1 + over_all)
        total += 1 - ap / g
    return total / B


def test_pml_smooth_ap_on_our_balanced_batches_is_the_authors_smooth_ap():
    pytest.importorskip("pytorch_metric_learning", reason=PML)
    task = _columns_task(n=200, L=4)
    fn = peer_losses.LOSSES["pml Smooth-AP"].build(task)
    torch.manual_seed(0)
    for idx in peer_losses.balanced_batches(task.classes, np.random.default_rng(0), 4)[:2]:
        emb = torch.randn(idx.size, 4)
        assert float(fn(emb, idx)) == pytest.approx(float(_smooth_ap_reference(emb, 4)),
                                                    rel=1e-5)


@pytest.fixture(scope="module")
def quick_results(real_data_home):
    pytest.importorskip("libauc", reason=LIBAUC)
    pytest.importorskip("pytorch_metric_learning", reason=PML)
    return torch_peers.peer_results(quick=True, log=lambda line: None)


def test_quick_run_trains_every_loss_where_it_applies(quick_results):
    epochs = torch_peers.SETTINGS[True]["epochs"]
    assert set(quick_results["datasets"]) == {"HJA birdsong", "Yahoo LTR"}
    for tname, data in quick_results["datasets"].items():
        assert set(data["losses"]) == set(peer_losses.LOSSES)
        for lname, entry in data["losses"].items():
            if tname == "Yahoo LTR" and lname.startswith("pml"):
                assert entry["skipped"].startswith("does not apply")
                continue
            for run in entry["runs"]:
                assert len(run["curve"]) == epochs
                assert all(math.isfinite(m) and 0.0 <= m <= 1.0 for m in run["curve"])
                assert run["step_s"] > 0 and 0 < run["loss_s"] < run["step_s"]
                assert 0 < run["share"] < 1
    versions = quick_results["versions"]
    assert versions["libauc"] and versions["pytorch-metric-learning"] and versions["torch"]


def test_quick_table_has_a_row_per_loss_and_data_set(quick_results):
    table = torch_peers.results_table(quick_results)
    for tname in quick_results["datasets"]:
        section = table.split(f"**{tname}**")[1].split("**")[0]
        rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
        assert [row.split(" | ")[0][2:] for row in rows] == list(peer_losses.LOSSES)
    assert "libauc 2" in table and "pytorch-metric-learning 2" in table
