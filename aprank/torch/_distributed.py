"""The structured hinge over the global batch of a ``torch.distributed`` process group.

AP and NDCG do not decompose over samples: a query's loss depends on how each of its positives
ranks against every negative, wherever those samples live. Averaging per-rank losses (what DDP
does with an ordinary loss) therefore optimises the mean of the ranks' APs, not the AP of the
batch. :func:`gather_batch` gives every rank the whole batch instead, so that the loss-augmented
inference runs once per query over the global batch:

* Each rank says how many samples it holds (an ``all_gather_object`` that also carries the
  local checks' verdicts), pads its scores, labels and query ids to the largest count (an
  ``all_gather`` needs equal shapes), gathers them, and cuts the padding off. The global batch is
  the ranks' samples concatenated in rank order, identical on every rank.
* Query ids are global: the same id on two ranks is one query. A rank may hold any part of a
  query, no positive at all, or no sample at all.
* The gathered scores of the other ranks are detached: the gradient reaches only this rank's
  samples, and through them only this rank's model replica.
* Every rank returns the global batch's loss (the same value on every rank), and the gradient
  that reaches its samples is ``world_size`` times the derivative of that loss with respect to
  them. DDP averages the replicas' gradients over the ranks; each sample belongs to one rank,
  so that average is exactly the gradient of the single-process loss of the concatenated batch.
  Summing the ranks' gradients instead (an ``all_reduce`` with ``SUM``) gives ``world_size``
  times it.
* A check that fails on one rank (a score that is not a tensor, labels of the wrong shape) is
  raised on every rank, naming the rank, instead of leaving the others waiting in a collective
  that never completes. The values (finite scores, binary labels, queries with positives) are
  checked afterwards on the global batch, on every rank alike, so they too fail everywhere; an
  index in such a message counts samples of the global batch.
"""
from __future__ import annotations

import torch
import torch.distributed as dist

__all__ = ["gather_batch"]

_INTEGER_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


class _ScaleGradient(torch.autograd.Function):
    """The identity forward; backward multiplies the incoming gradient by ``factor``."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


def _resolve_group(process_group):
    if not dist.is_available():
        raise RuntimeError("process_group needs torch.distributed, which this torch build lacks")
    if process_group is not True and not isinstance(process_group, dist.ProcessGroup):
        raise TypeError("process_group must be a torch.distributed.ProcessGroup, True (the "
                        f"default group) or None, got {type(process_group).__name__}")
    if not dist.is_initialized():
        # torch.distributed.group.WORLD is None until then: passing it would silently mean
        # "no distribution", which is why True names the default group
        raise RuntimeError("process_group needs an initialised torch.distributed: call "
                           "torch.distributed.init_process_group first")
    return dist.group.WORLD if process_group is True else process_group


def _local_batch(scores, labels, qid):
    """This rank's (scores, labels as float64, qid as int64 or None) and what the other ranks
    need to know of them; or, where a check fails, the error to raise on every rank."""
    if not isinstance(scores, torch.Tensor):
        return None, {"error": ("TypeError", f"scores must be a torch.Tensor, got "
                                             f"{type(scores).__name__}")}
    if not scores.is_floating_point():
        return None, {"error": ("ValueError", f"scores must be a floating-point tensor, got "
                                              f"dtype {scores.dtype}")}
    if scores.ndim not in (1, 2):
        return None, {"error": ("ValueError", "scores must be 1-D (samples) or 2-D (samples x "
                                              f"classes), got shape {tuple(scores.shape)}")}
    try:
        y = torch.as_tensor(labels, device=scores.device)
    except (TypeError, ValueError, RuntimeError) as exc:
        return None, {"error": ("ValueError", f"labels cannot be made a tensor: {exc}")}
    if tuple(y.shape) != tuple(scores.shape):
        return None, {"error": ("ValueError", f"labels has shape {tuple(y.shape)} but scores "
                                              f"has shape {tuple(scores.shape)}")}
    if not (y.dtype == torch.bool or y.is_floating_point() or y.dtype in _INTEGER_DTYPES):
        return None, {"error": ("ValueError", "labels must be bool, {0, 1} or {-1, +1}, got "
                                              f"dtype {y.dtype}")}
    q = None
    if qid is not None:
        try:
            q = torch.as_tensor(qid, device=scores.device)
        except (TypeError, ValueError, RuntimeError) as exc:
            return None, {"error": ("ValueError", f"qid cannot be made a tensor: {exc}")}
        if q.ndim != 1 or q.shape[0] != scores.shape[0] or scores.ndim != 1:
            return None, {"error": ("ValueError", f"qid has shape {tuple(q.shape)}; it gives "
                                                  "one query id per score of 1-D scores")}
        if q.dtype not in _INTEGER_DTYPES:
            return None, {"error": ("ValueError", "qid must hold integer query ids, got dtype "
                                                  f"{q.dtype}")}
        q = q.to(torch.int64)
    # labels travel as float64: every rank may pass its own dtype, and the values (bool, small
    # integers) convert exactly; hinge_loss parses them on the global batch
    info = {"error": None, "n": int(scores.shape[0]), "rest": tuple(scores.shape[1:]),
            "dtype": str(scores.dtype), "qid": q is not None}
    return (scores, y.to(torch.float64), q), info


def _agree(infos):
    """The error every rank raises, or None: a failed local check, or batches that do not fit
    together (the same on every rank, since every rank sees all the infos)."""
    for rank, info in enumerate(infos):
        if info["error"] is not None:
            kind, message = info["error"]
            return {"TypeError": TypeError}.get(kind, ValueError), f"rank {rank}: {message}"
    for key, what in (("dtype", "score dtype"), ("rest", "number of columns"),
                      ("qid", "qid (given or None)")):
        values = [info[key] for info in infos]
        if any(v != values[0] for v in values):
            return ValueError, (f"the ranks' batches must share their {what}; by rank: "
                                + ", ".join(f"{r}: {v}" for r, v in enumerate(values)))
    return None


def _all_gather_rows(tensor, sizes, group):
    """Every rank's ``tensor`` (rows differ in number), in rank order."""
    padded = tensor.new_zeros((max(sizes),) + tuple(tensor.shape[1:]))
    padded[:tensor.shape[0]] = tensor     # a new tensor: the caller's is left as it is
    parts = [torch.empty_like(padded) for _ in sizes]
    dist.all_gather(parts, padded, group=group)
    return [part[:n] for part, n in zip(parts, sizes)]


def gather_batch(scores, labels, qid, process_group):
    """The global batch of a process group, on every one of its ranks.

    Parameters
    ----------
    scores : torch.Tensor
        This rank's scores, 1-D or 2-D (samples x classes), floating point; every rank's share
        the dtype and, for 2-D, the number of columns. A rank may hold no sample.
    labels : tensor or array of the same shape
        This rank's labels (bool, {0, 1} or {-1, +1}; one convention across the ranks).
    qid : tensor or array of shape (n,), optional
        This rank's global query ids (the same id on two ranks is one query); None on every
        rank or on none.
    process_group : torch.distributed.ProcessGroup or True
        The group whose ranks make up the batch (True: the default group).

    Returns
    -------
    scores : torch.Tensor
        The ranks' scores concatenated in rank order; only this rank's part carries a gradient,
        scaled by the group's size (see the module's notes on DDP).
    labels : torch.Tensor
        The labels likewise, float64.
    qid : torch.Tensor or None
        The query ids likewise, int64.

    Raises
    ------
    TypeError, ValueError
        On every rank, where a check fails on any rank or the ranks' batches do not fit
        together; the message names the rank.
    RuntimeError
        Where torch.distributed is not initialised.
    """
    group = _resolve_group(process_group)
    local, info = _local_batch(scores, labels, qid)
    infos = [None] * dist.get_world_size(group)
    dist.all_gather_object(infos, info, group=group)
    failure = _agree(infos)
    if failure is not None:
        kind, message = failure
        raise kind(message)
    scores, y, q = local
    sizes = [info["n"] for info in infos]
    rank, world = dist.get_rank(group), len(sizes)
    score_parts = _all_gather_rows(scores.detach(), sizes, group)
    # this rank's samples keep their graph; world_size x the gradient, so that DDP's average
    # over the ranks is the single-process gradient
    score_parts[rank] = _ScaleGradient.apply(scores, float(world))
    labels_all = torch.cat(_all_gather_rows(y, sizes, group))
    qid_all = None if q is None else torch.cat(_all_gather_rows(q, sizes, group))
    return torch.cat(score_parts), labels_all, qid_all
