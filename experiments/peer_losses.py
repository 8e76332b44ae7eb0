"""The losses of ``python -m experiments torch-peers``: aprank's AP hinge, binary cross-entropy,
LibAUC's AP loss and pytorch-metric-learning's FastAP and Smooth-AP, in one registry
(:data:`LOSSES`).

The peers are optional. Install them without their declared requirements,
``pip install --no-deps libauc pytorch-metric-learning``: libauc declares torchvision,
opencv-python, torch-geometric, transformers and more, which its losses and optimisers never
import, and which would replace the CPU build of torch. An entry whose package is missing says
so instead of running.

How each applies to a network that scores samples:

* the AP hinge, BCE and LibAUC's AP loss act on the scores of each ranking (a species column,
  a query). LibAUC's ``APLoss`` keeps a moving average per positive sample, indexed by the
  sample's position in the training set: here the key of the (ranking, sample) pair, so one
  instance serves every ranking. It is called once per ranking of the minibatch that has a
  positive and two samples (a one-sample ranking's AP is 1 whatever the scores), on the
  sigmoid of the scores (its squared hinge's margin is set for scores in [0, 1]), and trained
  with the library's SOAP optimiser and its defaults (Adam mode, lr 1e-3, weight decay 1e-5,
  gradients clipped to 1), as its documentation prescribes for this loss.
* FastAP and Smooth-AP are metric-learning losses: they rank the other samples of the
  minibatch by their distance to each sample, and a pair is relevant when the two share a
  class. They apply where each sample has one class (HJA: its species): the network's L
  outputs are then an embedding, and a species scores a test segment by the cosine similarity
  of its embedding to the species' prototype (the normalised mean of the normalised training
  embeddings of that species), which the same test AP then evaluates. A query's documents
  share no class with another query's, and one output is no embedding (normalised, it is
  +-1), so they do not apply to the Yahoo LTR task.
* pytorch-metric-learning 2.9.0's ``SmoothAPLoss`` needs every class of the minibatch to hold
  the same number of samples, grouped by class; its reshape is that of the Smooth-AP authors'
  code only when that number equals the number of classes in the minibatch (we measured its
  value against the authors' formula: equal at 3 classes x 3, not at 3 x 4). Its minibatches
  here are class-balanced accordingly: L species x L segments each (:func:`balanced_batches`).
"""
from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import torch

from aprank.torch import ap_hinge_loss

__all__ = ["PeerLoss", "LOSSES", "balanced_batches", "prototype_scores", "versions"]


def _adam(params):
    return torch.optim.Adam(params, lr=1e-3)


def _soap(params):
    from libauc.optimizers import SOAP
    return SOAP(params, lr=1e-3, mode="adam", weight_decay=1e-5, verbose=False)


def _outputs(net, task) -> np.ndarray:
    with torch.no_grad():
        return net(task.X_test).numpy()


def prototype_scores(emb_train: torch.Tensor, classes: np.ndarray, emb_test: torch.Tensor,
                     n_classes: int) -> np.ndarray:
    """(n_test, n_classes): cosine similarity of each test embedding to each class prototype,
    the normalised mean of the normalised training embeddings of the class."""
    unit = torch.nn.functional.normalize(emb_train, dim=1)
    sums = torch.zeros(n_classes, unit.shape[1]).index_add_(0, torch.from_numpy(classes), unit)
    prototypes = torch.nn.functional.normalize(sums, dim=1)
    return (torch.nn.functional.normalize(emb_test, dim=1) @ prototypes.t()).numpy()


def _prototypes(net, task) -> np.ndarray:
    with torch.no_grad():
        return prototype_scores(net(task.X), task.classes, net(task.X_test), task.n_outputs)


def balanced_batches(classes: np.ndarray, rng, n_classes: int) -> list:
    """Minibatches of ``n_classes`` samples of each class, grouped class after class (the
    layout pytorch-metric-learning's SmoothAPLoss computes correctly); about one pass over the
    data per epoch, a class with fewer samples than it needs repeating its samples."""
    rows = [rng.permutation(np.flatnonzero(classes == c)) for c in range(n_classes)]
    n_batches = max(1, classes.size // (n_classes * n_classes))
    need = n_batches * n_classes
    rows = [np.resize(r, need) for r in rows]
    return [np.concatenate([r[i * n_classes:(i + 1) * n_classes] for r in rows])
            for i in range(n_batches)]


# ------------------------------------------------------------------------------ the losses
def _ap_hinge(task):
    def loss(out, idx):
        scores, labels, group, _ = task.flat(out, idx)
        return ap_hinge_loss(scores, labels, qid=group)
    return loss


def _bce(task):
    def loss(out, idx):
        scores, labels, _, _ = task.flat(out, idx)
        return torch.nn.functional.binary_cross_entropy_with_logits(scores, labels.float())
    return loss


def _libauc_ap(task):
    from libauc.losses import APLoss
    state = APLoss(data_len=task.n_keys, margin=1.0, gamma=0.9, device=torch.device("cpu"))

    def loss(out, idx):
        scores, labels, group, key = task.flat(out, idx)
        prob = torch.sigmoid(scores)
        order = torch.argsort(group, stable=True)
        _, counts = torch.unique_consecutive(group[order], return_counts=True)
        terms = [state(prob[rows], labels[rows].float(), key[rows])
                 for rows in torch.split(order, counts.tolist())
                 if rows.numel() > 1 and bool(labels[rows].any())]
        return torch.stack(terms).mean() if terms else prob.sum() * 0.0
    loss.state = state      # its moving averages, for the tests
    return loss


def _fast_ap(task):
    from pytorch_metric_learning.losses import FastAPLoss
    metric = FastAPLoss(num_bins=10)
    return lambda out, idx: metric(out, torch.from_numpy(task.classes[idx]))


def _smooth_ap(task):
    from pytorch_metric_learning.losses import SmoothAPLoss
    metric = SmoothAPLoss(temperature=0.01)
    return lambda out, idx: metric(out, torch.from_numpy(task.classes[idx]))


@dataclass(frozen=True)
class PeerLoss:
    """One loss of the comparison.

    Attributes
    ----------
    build : callable
        ``build(task)`` returns ``loss(out, idx)``: the loss of the network's outputs ``out``
        on the training rows ``idx``.
    package, module : str or None
        The distribution it needs and its import name (None: only torch and aprank).
    optimiser : callable
        ``optimiser(params)``.
    scores : callable
        ``scores(net, task)``: the (n_test, L) test scores the test AP ranks by.
    batches : callable or None
        ``batches(task, rng, size)`` where the loss needs its own minibatches (None: the
        task's).
    single_label : bool
        It needs one class per sample (``task.classes``).
    """

    build: Callable
    package: str | None = None
    module: str | None = None
    optimiser: Callable = _adam
    scores: Callable = _outputs
    batches: Callable | None = None
    single_label: bool = False

    def unavailable(self, task) -> str | None:
        """Why this loss is not run on ``task``, or None where it is."""
        if self.single_label and task.classes is None:
            return ("does not apply: a metric-learning loss needs one class per sample, and a "
                    "query's documents share no class with other queries'")
        if self.module is not None and importlib.util.find_spec(self.module) is None:
            return f"not installed: pip install --no-deps {self.package}"
        return None

    def make_batches(self, task, rng, size: int) -> list:
        return (task.batches(rng, size) if self.batches is None
                else self.batches(task, rng, size))


def _balanced(task, rng, size):
    return balanced_batches(task.classes, rng, task.n_outputs)


#: The losses, in the table's order.
LOSSES = {
    "aprank AP hinge": PeerLoss(_ap_hinge),
    "binary cross-entropy": PeerLoss(_bce),
    "LibAUC AP loss (SOAP)": PeerLoss(_libauc_ap, "libauc", "libauc", optimiser=_soap),
    "pml FastAP": PeerLoss(_fast_ap, "pytorch-metric-learning", "pytorch_metric_learning",
                           scores=_prototypes, single_label=True),
    "pml Smooth-AP": PeerLoss(_smooth_ap, "pytorch-metric-learning", "pytorch_metric_learning",
                              scores=_prototypes, batches=_balanced, single_label=True),
}


def versions() -> dict:
    """The installed versions of torch and the peers (None where one is missing)."""
    out = {}
    for name in ("torch", "libauc", "pytorch-metric-learning"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out
