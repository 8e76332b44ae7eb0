"""The structured-hinge AP and NDCG losses as differentiable PyTorch functions."""
from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType

import numpy as np
import torch

from aprank.inference import RankingProblem, resolve
from aprank.losses import LOSSES, NDCG, Loss, RankingLoss, get_loss
from aprank.torch._distributed import gather_batch
from aprank.torch._ops import _equal_blocks, _per_group, hinge_terms

_triton: ModuleType | None
try:  # the optional triton package brings backend="triton"
    from aprank.torch import _triton
except ModuleNotFoundError as missing:
    if missing.name != "triton":
        raise
    _triton = None

__all__ = ["hinge_loss", "ap_hinge_loss", "ndcg_hinge_loss", "APHingeLoss", "NDCGHingeLoss",
           "BACKENDS", "REDUCTIONS"]

#: The values of ``backend=``: compiled kernels for CPU tensors, Triton kernels for CUDA tensors
#: where triton is installed, torch operations elsewhere ("auto"), or one of the four forced
#: ("torch-compiled": the torch operations compiled whole by ``torch.compile``; "triton": the
#: search and the finish in Triton kernels, which needs the optional ``triton`` package and
#: CUDA tensors).
BACKENDS = ("auto", "kernels", "torch", "torch-compiled", "triton")
#: The values of ``reduction=``.
REDUCTIONS = ("mean", "sum", "none")
#: Below this many samples per thread, one thread does the whole batch (threads cost more).
_MIN_SAMPLES_PER_THREAD = 20_000
_INTEGER_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


# ---------------------------------------------------------------------------- validation
def _as_score_tensor(scores) -> torch.Tensor:
    """Scores as they come, checked for type and shape (their values: _check_data)."""
    if not isinstance(scores, torch.Tensor):
        raise TypeError(f"scores must be a torch.Tensor, got {type(scores).__name__}")
    if not scores.is_floating_point():
        raise ValueError(f"scores must be a floating-point tensor, got dtype {scores.dtype}")
    if scores.ndim not in (1, 2):
        raise ValueError(f"scores must be 1-D (samples) or 2-D (samples x classes), "
                         f"got shape {tuple(scores.shape)}")
    if scores.numel() == 0:
        raise ValueError("scores is empty: there is nothing to rank")
    return scores


def _as_is_pos(labels, shape, device, validate: bool) -> torch.Tensor:
    """Labels as bool, {0, 1} or {-1, +1} (as aprank.validation.as_labels) -> bool tensor.
    Without ``validate`` the values are not looked at: positive where a label equals 1."""
    y = torch.as_tensor(labels, device=device)
    if tuple(y.shape) != tuple(shape):
        raise ValueError(f"labels has shape {tuple(y.shape)} but scores has shape {tuple(shape)}")
    if y.dtype == torch.bool:
        return y
    if not (y.is_floating_point() or y.dtype in _INTEGER_DTYPES):
        raise ValueError(f"labels must be bool, {{0, 1}} or {{-1, +1}}, got dtype {y.dtype}")
    positive = y == 1
    if not validate:
        return positive
    for other in (0, -1):
        if bool((positive | (y == other)).all()):
            return positive
    allowed = positive | (y == 0) | (y == -1)
    if not bool(allowed.all()):
        bad = np.unravel_index(int(torch.argmin(allowed.flatten().to(torch.uint8))), y.shape)
        where = ", ".join(str(int(b)) for b in bad)
        raise ValueError(f"labels[{where}] = {y[bad].item()!r}: labels must be bool, {{0, 1}} "
                         "or {-1, +1}")
    raise ValueError("labels mix 0 and -1 as the negative label; use {0, 1} or {-1, +1}")


def _query_groups(qid, scores: torch.Tensor):
    """(group index per sample in [0, Q), query ids) for the flattened samples.

    1-D scores: ``qid`` gives each sample's query (None: one query). 2-D scores (B, L): one
    query per column, flattened column by column."""
    device = scores.device
    if scores.ndim == 2:
        if qid is not None:
            raise ValueError("qid is for 1-D scores; a 2-D (samples x classes) score matrix is "
                             "ranked per column")
        B, L = scores.shape
        group = torch.arange(L, device=device).repeat_interleave(B)
        return group, torch.arange(L, device=device)
    n = scores.shape[0]
    if qid is None:
        return torch.zeros(n, dtype=torch.int64, device=device), None
    q = torch.as_tensor(qid, device=device)
    if q.ndim != 1 or q.shape[0] != n:
        raise ValueError(f"qid has shape {tuple(q.shape)} but there are {n} scores")
    if q.is_floating_point() or q.is_complex() or q.dtype == torch.bool:
        raise ValueError(f"qid must hold integer query ids, got dtype {q.dtype}")
    ids, group = torch.unique(q, return_inverse=True)
    return group, ids


def _check_data(scores, is_pos, group, n_groups, ids, empty, blocks) -> tuple[int, int]:
    """The checks that look at the values, with one wait for the device between them: the
    scores are finite, and queries without positives (which have no AP or NDCG) are refused
    or left out. Returns how many queries have positives and how many positives there are
    (which sizes the torch operations' search)."""
    finite = torch.isfinite(scores.detach())
    positives = _positives_per_query(is_pos, group, n_groups, blocks)
    used = positives > 0
    n_bad, n_used, n_positives = torch.stack([(~finite).sum(), used.sum(),
                                              positives.sum()]).tolist()
    if n_bad:
        bad = np.unravel_index(int(torch.argmin(finite.flatten().to(torch.uint8))), scores.shape)
        where = ", ".join(str(int(b)) for b in bad)
        raise ValueError(f"scores[{where}] = {scores[bad].item()!r} is not finite")
    if n_used == n_groups:
        return n_used, n_positives
    if ids is None:
        raise ValueError("AP and NDCG are undefined without positive samples, and the batch has "
                         "none")
    first = ids[int(torch.argmin(used.to(torch.uint8)))].item()
    if empty == "error" or not n_used:
        raise ValueError(
            f"AP and NDCG are undefined without positive samples, and query {first!r} has none"
            + ("; pass empty='skip' to leave such queries out" if empty == "error"
               else " (nor does any other)"))
    return n_used, n_positives


def _positives_per_query(is_pos, group, n_groups, blocks) -> torch.Tensor:
    """The positives of each query; ``blocks``: True for equal consecutive blocks, None where
    unknown (summed by query index then)."""
    return _per_group(group, is_pos.long(), n_groups, bool(blocks))


def _count_used(is_pos, group, n_groups, blocks) -> torch.Tensor:
    """How many queries have positives, as a tensor on the device (at least 1: the divisor of
    the mean), for a call that does not look at the values."""
    return (_positives_per_query(is_pos, group, n_groups, blocks) > 0).sum().clamp(min=1)


# ---------------------------------------------------------------------------- backends
#: The registry algorithm the compiled-kernel backend solves with: "auto", the name of the
#: fastest exact kernel (qs).
_KERNEL_ALGORITHM = "auto"


def _kernel_chunk(s, is_pos, group, algorithm, loss):
    """objective per group present in the chunk (by group id) and grad per sample."""
    if not is_pos.any():
        # every query here lacks positives (a thread's part of a batch, or an unchecked
        # batch): no hinge and no gradient, which a problem would refuse as having nothing
        # to solve
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(s.shape[0])
    problem = RankingProblem(is_pos, loss, qid=group, empty="skip")
    result = problem.solve(s, algorithm)
    return result.query_ids, result.objective, result.coef - result.truth_coef


def _run_kernels(s, is_pos, group, n_groups, loss, discount, blocks, n_threads, n_positives):
    """The compiled kernels through RankingProblem: one compiled loop over the queries, split
    over threads when the batch is large (the kernels run without the GIL; a problem solves
    all of its queries, so each thread's part is a problem of its own)."""
    # float64 before numpy: numpy has no bfloat16, and the kernels decide in float64 anyway
    s = s.detach().to(device="cpu", dtype=torch.float64).numpy()
    is_pos = is_pos.cpu().numpy()
    group = group.cpu().numpy()
    algorithm = resolve(loss, _KERNEL_ALGORITHM)
    objective = np.zeros(n_groups)
    n_threads = max(1, min(n_threads, n_groups, s.shape[0] // _MIN_SAMPLES_PER_THREAD))
    if n_threads == 1:
        ids, obj, grad = _kernel_chunk(s, is_pos, group, algorithm, loss)
        objective[ids] = obj
    else:
        order = np.argsort(group, kind="stable")
        sizes = np.bincount(group, minlength=n_groups)
        # cut between queries, near equal numbers of samples per thread
        cuts = np.searchsorted(np.cumsum(sizes), np.linspace(0, s.shape[0], n_threads + 1)[1:-1])
        bounds = np.r_[0, np.cumsum(sizes)[cuts], s.shape[0]].astype(np.int64)
        parts = [order[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        grad = np.empty(s.shape[0])
        with ThreadPoolExecutor(len(parts)) as pool:
            results = list(pool.map(
                lambda idx: _kernel_chunk(s[idx], is_pos[idx], group[idx], algorithm, loss), parts))
        for idx, (ids, obj, g) in zip(parts, results):
            objective[ids] = obj
            grad[idx] = g
    return torch.from_numpy(objective), torch.from_numpy(grad)


def _torch_ops(search, s, is_pos, group, n_groups, loss, discount, blocks, **options):
    """(objective per query, gradient per sample) from ``search`` (hinge_terms, it compiled, or
    the Triton kernels' hinge_terms) on the tensors' device; ``discount`` a float64 tensor
    there (or None: 1/log2(1 + m)); ``blocks``: the queries are equal consecutive blocks (None:
    looked up here); ``options``: the search's own (the torch operations' n_positives)."""
    if blocks is None:
        blocks = _equal_blocks(group, n_groups)
    terms = search(s, is_pos, group, n_groups, loss.kernel_spec(1).code, discount,
                   blocks=blocks, **options)
    return terms.objective, terms.grad


def _run_torch(s, is_pos, group, n_groups, loss, discount, blocks, n_threads, n_positives):
    """The torch-ops inference; ``n_positives`` (at least the count of positives: the
    validation's count, or the samples' without it) sizes the search's buffers."""
    return _torch_ops(hinge_terms, s, is_pos, group, n_groups, loss, discount, blocks,
                      n_positives=n_positives)


@functools.cache
def _compiled_terms():
    """hinge_terms compiled whole, built on first use (one per process): Dynamo traces it once
    per input shape, dtype, device and positives bucket, seconds to a minute each time."""
    return torch.compile(hinge_terms, fullgraph=True, dynamic=False)


def _positives_bucket(n_positives: int, n: int) -> int:
    """A bound on the positives rounded up to a power of two (at most n, the samples): the
    compiled search is specialised to the buffer size this bound implies, and a bucket rather
    than the count keeps the recompiles to log2(n) per input shape."""
    return min(n, 1 << max(n_positives - 1, 0).bit_length())


def _run_compiled(s, is_pos, group, n_groups, loss, discount, blocks, n_threads, n_positives):
    """The torch-ops inference compiled by torch.compile(fullgraph=True): the same operations
    as _run_torch, fused into few kernels, given a bound on the positives (a power of two)."""
    return _torch_ops(_compiled_terms(), s, is_pos, group, n_groups, loss, discount, blocks,
                      n_positives=_positives_bucket(n_positives, s.numel()))


def _run_triton(s, is_pos, group, n_groups, loss, discount, blocks, n_threads, n_positives):
    """The search and the finish in two Triton kernels (:mod:`aprank.torch._triton`; Triton is
    optional), around a sort and per-query counts in torch operations."""
    if _triton is None:
        raise ModuleNotFoundError("backend='triton' needs the triton package (pip install "
                                  "triton), and CUDA tensors", name="triton")
    return _torch_ops(_triton.hinge_terms, s, is_pos, group, n_groups, loss, discount, blocks)


#: backend name -> the function computing (objective per query, gradient per sample)
_RUNS = {"kernels": _run_kernels, "torch": _run_torch, "torch-compiled": _run_compiled,
         "triton": _run_triton}
#: The oldest GPUs "auto" gives the Triton kernels: Triton supports NVIDIA GPUs of compute
#: capability 8.0 and newer (its README); older ones run the torch operations.
_TRITON_MIN_CAPABILITY = (8, 0)


@functools.cache
def _cuda_auto(device: torch.device) -> str:
    """"triton" where the triton package is installed and the GPU is one Triton supports (on an
    H100 faster than the torch operations in every cell of docs/benchmarks/extras.md), else
    "torch"."""
    if _triton is None or torch.cuda.get_device_capability(device) < _TRITON_MIN_CAPABILITY:
        return "torch"
    return "triton"


#: what "auto" runs on a device type: the compiled kernels on the CPU; on CUDA, the Triton kernels
#: where they can run (_cuda_auto); torch operations on any other device (so its tensors stay
#: there)
_AUTO: dict[str, Callable[[torch.device], str]] = {"cpu": lambda device: "kernels",
                                                   "cuda": _cuda_auto}


def _run_for(backend: str, device: torch.device):
    if backend == "auto":
        backend = _AUTO.get(device.type, lambda device: "torch")(device)
    return _RUNS[backend]


def _flat(scores: torch.Tensor) -> torch.Tensor:
    """The samples in query order: a (B, L) matrix column by column (its L queries), 1-D
    scores as they are."""
    return scores.t().reshape(-1) if scores.ndim == 2 else scores


def _in_shape(grad: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """A per-sample tensor in :func:`_flat`'s order back in the scores' shape, dtype and device
    (contiguous, as autograd accumulates it)."""
    if scores.ndim == 2:
        grad = grad.view(scores.shape[1], scores.shape[0]).t()
    return grad.to(device=scores.device, dtype=scores.dtype, memory_format=torch.contiguous_format)


#: reduction -> (the loss from the per-query hinges and the count of queries with positives
#: (the others hold 0), the incoming gradient as a factor per sample, in the scores' shape)
_REDUCE = {
    "none": (lambda objective, n_used: objective,
             lambda grad_output, scores, group, n_used: (
                 grad_output.expand(scores.shape) if scores.ndim == 2 else grad_output[group])),
    "sum": (lambda objective, n_used: objective.sum(),
            lambda grad_output, scores, group, n_used: grad_output.expand(scores.shape)),
    "mean": (lambda objective, n_used: objective.sum() / n_used,
             lambda grad_output, scores, group, n_used:
             (grad_output / n_used).expand(scores.shape)),
}


class _StructuredHinge(torch.autograd.Function):
    """The reduced hinge of the queries; backward spreads the incoming gradient over the
    samples times coef(R_hat) - coef(R*). The reduction and the matrix's transposition happen
    inside, so that a backward is one multiplication rather than a node per operation.

    In the form with ``setup_context`` (forward without ctx), which torch.func's transforms
    need (``torch.func.grad``, ``jacrev``): forward returns the subgradient beside the value,
    as an output that is not differentiable, and ``setup_context`` saves it."""

    @staticmethod
    def forward(scores, is_pos, group, n_groups, loss, discount, blocks, run, n_threads,
                reduction, n_used, n_positives):
        objective, grad = run(_flat(scores), is_pos, group, n_groups, loss, discount, blocks,
                              n_threads, n_positives)
        value = _REDUCE[reduction][0](objective.to(scores.device), n_used)
        # the subgradient in the scores' shape and dtype: what autograd accumulates into .grad
        return value.to(scores.dtype), _in_shape(grad, scores)

    @staticmethod
    def setup_context(ctx, inputs, output):
        scores, _, group = inputs[:3]
        reduction, n_used = inputs[9:11]
        _, grad = output
        ctx.mark_non_differentiable(grad)
        ctx.save_for_backward(scores, grad, group)
        ctx.reduction, ctx.n_used = reduction, n_used

    @staticmethod
    def backward(ctx, grad_output, _):
        scores, grad, group = ctx.saved_tensors
        factor = _REDUCE[ctx.reduction][1](grad_output, scores, group, ctx.n_used)
        # _Spread only where a graph of this backward is built (create_graph=True): it is a
        # second autograd node, whose cost each plain backward would pay for nothing
        spread = (_Spread.apply(scores, grad, factor) if torch.is_grad_enabled()
                  else grad * factor)
        return spread, None, None, None, None, None, None, None, None, None, None, None


class _Spread(torch.autograd.Function):
    """grad * factor (the incoming gradient per sample), differentiable once more: the hinge is
    piecewise linear in the scores, so its second derivative with respect to them is zero
    wherever the gradient is defined (returned as zeros), and the gradient is linear in the
    factor (autograd carries that on to the incoming gradient). Torch operations only, so
    that vmap batches it by its own rules (``torch.func.jacrev`` vmaps the backward)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(scores, grad, factor):
        return grad * factor

    @staticmethod
    def setup_context(ctx, inputs, output):
        scores, grad, _ = inputs
        ctx.save_for_backward(grad)
        ctx.shape = scores.shape

    @staticmethod
    def backward(ctx, gg):
        grad, = ctx.saved_tensors
        return gg.new_zeros(ctx.shape), None, gg * grad


def _refuse_vmap(scores) -> None:
    """RuntimeError, saying what to do instead, for scores batched by ``torch.func.vmap``:
    the loss reads the batch's values (validation, and a compiled inference over them), which
    vmap's batched tensors hide (torch said only that a tensor has no storage)."""
    functorch = getattr(torch._C, "_functorch", None)
    if functorch is None or not hasattr(functorch, "is_batchedtensor"):
        return
    t = scores
    # under grad(vmap(f)) or vmap(grad(f)) the batched tensor may be wrapped for grad
    while True:
        if functorch.is_batchedtensor(t):
            raise RuntimeError(
                "aprank.torch's hinge losses do not support torch.func.vmap: the loss-augmented "
                "inference reads the batch's values (as its validation does), which vmap's "
                "batched tensors do not give. Pass the batch whole instead: a (B, L) tensor is "
                "L queries of B samples, one per column, and 1-D scores with qid= are any "
                "queries, in one call (reduction='none' gives one value per query); "
                "torch.func.grad and jacrev are supported")
        if not functorch.is_functorch_wrapped_tensor(t):
            return
        t = functorch.get_unwrapped(t)


def _refuse_loss(name: str, options: dict) -> None:
    """TypeError for ``loss=`` given to the hinge of one loss (Python's own said only that
    hinge_loss got the keyword twice)."""
    if "loss" in options:
        raise TypeError(f"{name}() is the hinge of one loss and takes no loss= (got "
                        f"{options['loss']!r}); for another loss call "
                        f"aprank.torch.hinge_loss(scores, labels, qid, loss=...), which takes "
                        f"{_hinge_losses()} or a Loss of the ranking kind")


# ---------------------------------------------------------------------------- public
def hinge_loss(scores, labels, qid=None, reduction: str = "mean", *, loss="ap",
               backend: str = "auto", empty: str = "skip", n_threads=None,
               process_group=None, validate: bool = True) -> torch.Tensor:
    """The exact structured hinge of a ranking loss: per query,

        max_R [Delta(R*, R) + sum_k coef_k(R) s_k] - sum_k coef_k(R*) s_k,

    the ``objective`` of :func:`aprank.infer` (>= Delta of the ranking the scores induce, 0 only
    when every positive outscores every negative by the loss's margin). Its subgradient with
    respect to the scores is coef(R_hat) - coef(R*), R_hat the most violated ranking.

    Parameters
    ----------
    scores : tensor of shape (n,) or (B, L)
        Floating point, any device. 1-D: samples of the queries given by ``qid``. 2-D: L
        queries, one per column (a multi-label batch: each class ranks the B samples).
    labels : tensor or array of the same shape
        Bool, {0, 1} or {-1, +1}.
    qid : tensor or array of shape (n,), optional
        Integer query ids (1-D scores only; None: one query).
    reduction : {"mean", "sum", "none"}, default "mean"
        "mean" over the queries that have positives, "sum", or "none" (one value per query,
        in the order of ``torch.unique(qid)``, or per column).
    loss : str or Loss, default "ap"
        "ap", "ndcg", or an ``aprank.losses`` instance such as ``NDCG(discount=...)``.
    backend : {"auto", "kernels", "torch", "torch-compiled", "triton"}, default "auto"
        "auto" (compiled kernels for CPU tensors, "triton" for CUDA tensors where the
        triton package is installed and the GPU has compute capability 8.0 or newer, torch
        operations on any other device), "kernels"
        (compiled kernels; tensors on another device are copied to the host and back),
        "torch" (torch operations on the tensors' device; also runs on CPU),
        "torch-compiled" (the same operations compiled whole by
        ``torch.compile(fullgraph=True)``: fused kernels, but each new input shape, dtype
        or power-of-two bucket of the positives' count is compiled first, which takes
        seconds to a minute; for many steps of one shape), or "triton" (the negatives'
        search and the gradient in two Triton kernels around a torch sort; needs the
        ``triton`` package and CUDA tensors, or Triton's interpreter,
        ``TRITON_INTERPRET=1``, on the CPU).
    empty : {"skip", "error"}, default "skip"
        "skip": a query without positives contributes 0 and is left out of the mean, as a
        class missing from a minibatch should be; "error": ValueError naming it. A batch with
        no positive at all is a ValueError (AP and NDCG are undefined) unless
        ``validate=False``.
    n_threads : int, optional
        Threads for the compiled kernels on large batches (default
        ``torch.get_num_threads()``).
    process_group : torch.distributed.ProcessGroup or True, optional
        None (default): this process's batch alone. A group (True: the default group): the
        loss of the global batch, every rank's samples gathered, ``qid`` global across ranks;
        every rank gets the same value, and a gradient only for its own samples, scaled so
        that DDP's average over the ranks is the single-process gradient (see the Notes).
    validate : bool, default True
        Check the values: finite scores, labels in {0, 1} or {-1, +1}, and queries without
        positives (``empty``). The checks read the batch on the host: one wait for the device
        per call. False skips them: a label is positive where it is True or equals 1, a query
        without positives contributes 0 and leaves the mean (``empty="skip"``; "error" needs
        the checks), a batch without positives gives 0, and non-finite scores give undefined
        values. With a (B, L) score matrix or one query (``qid=None``), and AP or NDCG's
        default discount, nothing in the call then reads the batch on the host (see the
        Notes).

    Returns
    -------
    torch.Tensor
        A scalar, or with ``reduction="none"`` one value per query, in the scores' dtype.

    Notes
    -----
    Both backends compute the same ranks (ties follow the rule of :func:`aprank.infer`) and
    decide in float64; the result has the scores' dtype. Under ``torch.compile`` the loss runs
    eagerly (``torch.compiler.disable``): the model around it compiles, with one graph break.

    With ``process_group``, each rank passes its own samples (any number, none included); the
    loss-augmented inference runs once per query over the ranks' samples concatenated in rank
    order, on every rank. The gradient reaching a rank's samples is ``world_size`` times the
    derivative of the global loss with respect to them, so that DDP, which averages the
    replicas' gradients, trains on exactly the gradient of the concatenated batch. A check
    that fails on one rank is raised on every rank.

    ``validate=False`` is for a step that must not wait for the device (a step captured as a
    CUDA graph, or one whose host runs ahead of the GPU). What still reads the batch on the
    host: ``qid`` (its distinct ids), a user's NDCG discount (its norms are summed in order on
    the host), ``process_group`` (the ranks exchange their batch sizes), and the
    ``"kernels"`` backend (it runs on the host). The ``"torch"`` backend then sizes its search
    for every sample being positive, which is slower when positives are few.
    """
    return _hinge(scores, labels, qid, reduction, loss, None, backend, empty, n_threads,
                  process_group, validate)


# Under torch.compile the loss runs eagerly (a graph break; the model around it compiles):
# the compiled kernels are opaque to Dynamo, and the validation looks at the data (finite
# scores, label values, queries without positives). The torch-ops inference itself,
# hinge_terms, has static shapes and compiles whole (fullgraph=True). The public functions
# stay undecorated, plain functions that call this one (their signatures and docstrings are
# what the API reference shows).
@torch.compiler.disable
def _hinge(scores, labels, qid, reduction, loss, discount, backend, empty, n_threads,
           process_group, validate):
    """:func:`hinge_loss` with ``discount``, the NDCG discount as a float64 tensor (a module's
    buffer, on the scores' device) or None (built from ``loss`` when the torch operations
    need it)."""
    if process_group is not None:
        # before any other check: every rank then reaches the same collectives, and the
        # checks below run on the global batch, failing on every rank alike
        scores, labels, qid = gather_batch(scores, labels, qid, process_group)
    if isinstance(scores, torch.Tensor):
        _refuse_vmap(scores)
    scores = _as_score_tensor(scores)
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction={reduction!r} must be one of {REDUCTIONS}")
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r} must be one of {BACKENDS}")
    if empty not in ("error", "skip"):
        raise ValueError(f"empty={empty!r} must be 'error' or 'skip'")
    if validate not in (True, False):
        raise ValueError(f"validate={validate!r} must be True or False")
    if empty == "error" and not validate:
        raise ValueError("empty='error' looks for queries without positives, which "
                         "validate=False does not; pass validate=True, or empty='skip'")
    if not isinstance(loss, Loss) and not (isinstance(loss, str) and loss in LOSSES):
        # get_loss would list every loss, most of which the hinge here refuses
        raise ValueError(f"unknown loss {loss!r}; choose one of {_hinge_losses()} or pass a "
                         "Loss of the ranking kind (e.g. aprank.losses.NDCG(discount=...))")
    loss = get_loss(loss)
    if loss.kind != "ranking":
        raise NotImplementedError(f"the structured hinge here is for ranking losses (AP, NDCG), "
                                  f"not {loss.name!r}")
    if not isinstance(loss, RankingLoss):
        # the kind is the loss's own word; the kernels need a RankingLoss's kernel_spec
        raise TypeError(f"loss {loss.name!r} says it is of the ranking kind but is a "
                        f"{type(loss).__name__}, not an aprank.losses.RankingLoss")
    loss.kernel_spec(1)    # a loss the exact implementations know, or NotImplementedError
    if n_threads is None:
        n_threads = torch.get_num_threads()
    if int(n_threads) < 1:
        raise ValueError(f"n_threads={n_threads!r} must be a positive integer")
    is_pos = _as_is_pos(labels, scores.shape, scores.device, validate)
    group, ids = _query_groups(qid, scores)
    is_pos = _flat(is_pos)
    n_groups = 1 if ids is None else int(ids.numel())
    # a matrix's columns, and a single query, are equal consecutive blocks; for other qid the
    # backends check (None)
    blocks = True if scores.ndim == 2 or ids is None else None
    if validate:
        n_used, n_positives = _check_data(scores, is_pos, group, n_groups, ids, empty, blocks)
    else:
        # nothing read on the host: the mean's divisor stays on the device, and the samples
        # bound the positives
        n_used, n_positives = _count_used(is_pos, group, n_groups, blocks), is_pos.numel()
    user_discount = getattr(loss, "discount", None)
    if user_discount is not None:
        # the discount must reach the largest query's last position: equal blocks tell it by
        # their shape, other queries by one look at the data
        loss.kernel_spec(is_pos.numel() // n_groups if blocks
                         else int(torch.bincount(group).max()))
        if discount is None:
            discount = torch.tensor(user_discount, dtype=torch.float64, device=scores.device)
    value, _ = _StructuredHinge.apply(scores, is_pos, group, n_groups, loss, discount, blocks,
                                      _run_for(backend, scores.device), int(n_threads),
                                      reduction, n_used, int(n_positives))
    return value


def ap_hinge_loss(scores, labels, qid=None, reduction: str = "mean", **options) -> torch.Tensor:
    """The structured hinge of the AP loss (1 - AP); see :func:`hinge_loss`.

    Parameters
    ----------
    scores : tensor of shape (n,) or (B, L)
        Floating point, any device. 1-D: samples of the queries given by ``qid``. 2-D: L
        queries, one per column (a multi-label batch: each class ranks the B samples).
    labels : tensor or array of the same shape
        Bool, {0, 1} or {-1, +1}.
    qid : tensor or array of shape (n,), optional
        Integer query ids (1-D scores only; None: one query).
    reduction : {"mean", "sum", "none"}, default "mean"
        "mean" over the queries that have positives, "sum", or "none" (one value per query,
        in the order of ``torch.unique(qid)``, or per column).
    **options
        ``backend``, ``empty``, ``n_threads``, ``process_group``, ``validate`` of
        :func:`hinge_loss` (a ``loss=`` is a TypeError: :func:`hinge_loss` takes the others).

    Returns
    -------
    torch.Tensor
        A scalar, or with ``reduction="none"`` one value per query, in the scores' dtype.
    """
    _refuse_loss("ap_hinge_loss", options)
    return hinge_loss(scores, labels, qid, reduction, loss="ap", **options)


def ndcg_hinge_loss(scores, labels, qid=None, reduction: str = "mean", *, discount=None,
                    **options) -> torch.Tensor:
    """The structured hinge of the NDCG loss (1 - NDCG, binary relevance); see
    :func:`hinge_loss`.

    Parameters
    ----------
    scores : tensor of shape (n,) or (B, L)
        Floating point, any device. 1-D: samples of the queries given by ``qid``. 2-D: L
        queries, one per column (a multi-label batch: each class ranks the B samples).
    labels : tensor or array of the same shape
        Bool, {0, 1} or {-1, +1}.
    qid : tensor or array of shape (n,), optional
        Integer query ids (1-D scores only; None: one query).
    reduction : {"mean", "sum", "none"}, default "mean"
        "mean" over the queries that have positives, "sum", or "none" (one value per query,
        in the order of ``torch.unique(qid)``, or per column).
    discount : array-like, optional
        The discount, as ``aprank.losses.NDCG`` takes it (default 1/log2(1 + i)).
    **options
        ``backend``, ``empty``, ``n_threads``, ``process_group``, ``validate`` of
        :func:`hinge_loss` (a ``loss=`` is a TypeError: :func:`hinge_loss` takes the others).

    Returns
    -------
    torch.Tensor
        A scalar, or with ``reduction="none"`` one value per query, in the scores' dtype.
    """
    _refuse_loss("ndcg_hinge_loss", options)
    return hinge_loss(scores, labels, qid, reduction, loss=_ndcg(discount), **options)


def _hinge_losses() -> list:
    """Names of the registered losses :func:`hinge_loss` takes: the ranking kind's, those with a
    compiled kernel."""
    names = []
    for name, loss in LOSSES.items():
        if loss.kind != "ranking" or not isinstance(loss, RankingLoss):
            continue
        try:
            loss.kernel_spec(1)
        except NotImplementedError:
            continue
        names.append(name)
    return sorted(names)


def _ndcg(discount):
    return NDCG(discount=discount)


class _HingeModule(torch.nn.Module):
    def __init__(self, reduction="mean", *, backend="auto", empty="skip", n_threads=None,
                 process_group=None, validate=True):
        super().__init__()
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction={reduction!r} must be one of {REDUCTIONS}")
        if backend not in BACKENDS:
            raise ValueError(f"backend={backend!r} must be one of {BACKENDS}")
        self.reduction, self.backend = reduction, backend
        self.empty, self.n_threads = empty, n_threads
        self.process_group, self.validate = process_group, validate

    def _options(self):
        return dict(backend=self.backend, empty=self.empty, n_threads=self.n_threads,
                    process_group=self.process_group, validate=self.validate)


class APHingeLoss(_HingeModule):
    """``nn.Module`` form of :func:`ap_hinge_loss`: ``APHingeLoss()(scores, labels, qid=None)``.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}, default "mean"
        As :func:`hinge_loss`.
    backend : {"auto", "kernels", "torch", "torch-compiled", "triton"}, default "auto"
        As :func:`hinge_loss`.
    empty : {"skip", "error"}, default "skip"
        As :func:`hinge_loss`.
    n_threads : int, optional
        As :func:`hinge_loss`.
    process_group : torch.distributed.ProcessGroup or True, optional
        The loss of the group's global batch (True: the default group), as
        :func:`hinge_loss`; None (default): this process's batch alone.
    validate : bool, default True
        As :func:`hinge_loss`: False skips the checks that read the batch on the host.
    """

    def forward(self, scores, labels, qid=None):
        return ap_hinge_loss(scores, labels, qid, self.reduction, **self._options())


class NDCGHingeLoss(_HingeModule):
    """``nn.Module`` form of :func:`ndcg_hinge_loss`.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}, default "mean"
        As :func:`hinge_loss`.
    discount : array-like, optional
        The discount, as ``aprank.losses.NDCG`` takes it; checked when the module is made.
    **options
        ``backend``, ``empty``, ``n_threads``, ``process_group``, ``validate`` of
        :func:`hinge_loss`.
    """

    def __init__(self, reduction="mean", *, discount=None, **options):
        super().__init__(reduction, **options)
        self.loss = _ndcg(discount)    # checks the discount at construction, not at the first batch
        # A buffer: it follows the module's .to(device) and is not copied to the device at
        # every call. None (the default 1/log2(1 + m)): the torch operations build it from
        # the batch's shape on the device, no transfer either.
        self.register_buffer("discount", None if self.loss.discount is None else
                             torch.tensor(self.loss.discount, dtype=torch.float64),
                             persistent=False)

    def forward(self, scores, labels, qid=None):
        # a module cast with .half() casts its buffers too: a rounded table would rank
        # differently from the kernels, so then the discount comes from the loss again
        discount = self.discount
        if discount is not None and discount.dtype != torch.float64:
            discount = None
        return _hinge(scores, labels, qid, self.reduction, self.loss, discount,
                      self.backend, self.empty, self.n_threads, self.process_group,
                      self.validate)
