"""Every negative's interleaving rank in one Triton kernel (``backend="triton"``).

The torch-ops search (:mod:`aprank.torch._ops`) solves the negatives level by level of a
binary tree, a dozen torch operations per level, because a negative's exact search there is
bounded by its solved neighbours. A kernel needs no such bounds: each negative's opt_j (paper
Mohapatra et al. (2018), section 4; see :mod:`aprank.torch._ops`) is found on its own by the
compiled kernels' own search (``opt_rank`` of ``aprank/inference/_kernel.pxd``): a binary search
where f_j is concave (AP: candidates up to min(j, P) + 1), then a scan to the first positive scoring
below the negative, summing the steps from the incumbent. One lane per negative, the same step
arithmetic as the kernels' ``step()``, so ties are decided alike. Two launches bound the
scans: every 64th negative of a query first, over all candidates, then the others between the
ranks of the two pivots around them (opt_j does not decrease with j, Mohapatra et al. 2018,
Observation 4).

A second kernel finishes the job in one pass over the sorted samples: each positive counts the
negatives ranked at or above it by a binary search over its query's negatives' ranks (they do
not decrease), and every sample's gradient coef(R_hat) - coef(R*), rank, share of its query's
score part and loss term are written, the gradient and rank straight to input order. Around
the two kernels only the sort, the per-query counts, two sums per query and the loss's scale
remain torch operations: about twenty of them and three Triton launches, where the torch-ops
path has about 150 operations per search level.

Every launch disables fused multiply-add (``enable_fp_fusion=False``): the kernels' ``step()``
rounds its product and its sum apart, and on an H100 an FMA decided tied steps differently.

Launched on CUDA tensors; on the CPU only under ``TRITON_INTERPRET=1`` (Triton's interpreter,
for tests), which must be set before Triton is imported. Triton is an optional dependency:
:mod:`aprank.torch._loss` imports this module where the triton package is installed.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

from aprank.losses import KernelLoss
from aprank.torch._ops import (
    HingeTerms,
    _kernel_loss,
    _Loss,
    _loss_value,
    _per_group,
    _query_counts,
    _segment_starts,
    _sort_by_query,
)

__all__ = ["hinge_terms", "INTERPRETED"]

#: Whether Triton runs its kernels in the interpreter (NumPy on the CPU): read by Triton when a
#: kernel is defined, so it must be set before this module is imported.
INTERPRETED = os.environ.get("TRITON_INTERPRET", "0") == "1"

#: Below this many candidate ranks the kernels scan instead of searching
#: (BINARY_SEARCH_MIN of _kernel.pxd): kept equal so that both take the same path.
BINARY_SEARCH_MIN = 16
#: A scan longer than this first looks for the first positive below the negative (scan_from's
#: stop_early of _kernel.pxd).
STOP_EARLY_AFTER = 32
#: Negatives per program.
BLOCK = 128
#: Every this many negatives of a query, one is solved first over all candidates; the others
#: then search only between the ranks of the two around them.
PIVOT_EVERY = 64


@triton.jit
def _loss_step(i, j, Pf, d_ptr, zinv, IS_AP: tl.constexpr):
    """delta_j(i + 1) - delta_j(i): the step of :mod:`aprank.losses` (the statement,
    ``increment``), operation for operation and in its order, as the kernels' loss_step;
    d_ptr holds D(0) = 0, D(1), ... and zinv is 1 / sum_{k <= P} D(k) (NDCG)."""
    if IS_AP:
        a = (j + i).to(tl.float64)
        loss = -(i.to(tl.float64)) / (Pf * a * (a - 1.0))
    else:
        loss = (tl.load(d_ptr + i + j) - tl.load(d_ptr + i + j - 1)) * zinv
    return loss


@triton.jit
def _coefficient(positive, P, N, rank):
    """coef(R) of a sample at interleaving rank ``rank`` of a query of P >= 1 positives and
    N >= 1 negatives: the statement's (``RankingLoss.coef``), operation for operation."""
    numerator = tl.where(positive, N, P) + 2 - 2 * rank
    return numerator.to(tl.float64) * (1.0 / (P.to(tl.float64) * N.to(tl.float64)))


@triton.jit
def _pattern_term(r, above, d_ptr, IS_AP: tl.constexpr):
    """The loss term of the r-th positive with ``above`` negatives above it, before the scale:
    the statement's (``pattern_terms``), operation for operation; d_ptr as _loss_step's."""
    if IS_AP:
        term = above.to(tl.float64) / (r + above).to(tl.float64)
    else:
        term = tl.load(d_ptr + r) - tl.load(d_ptr + r + above)
    return term


@triton.jit
def _step(s_ptr, base, i, j, s, Pf, scale, d_ptr, zinv, IS_AP: tl.constexpr):
    """f_j(i + 1) - f_j(i): the kernels' step(), operation for operation."""
    pos = tl.load(s_ptr + base + i - 1)
    return scale * (pos - s) + _loss_step(i, j, Pf, d_ptr, zinv, IS_AP)


@triton.jit
def _loss_steps_kernel(p_ptr, j_ptr, i_ptr, d_ptr, zinv_ptr, out_ptr, n, IS_AP: tl.constexpr,
                       BLOCK: tl.constexpr):
    """out[t] = _loss_step(i[t], j[t]) of a query of p[t] positives, 1 / its NDCG norm at
    zinv[t]: loaded and converted as _negative_ranks loads them."""
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = t < n
    t = tl.where(inside, t, 0)
    Pf = tl.load(p_ptr + t).to(tl.float64)
    zinv = tl.load(zinv_ptr + t)
    out = _loss_step(tl.load(i_ptr + t), tl.load(j_ptr + t), Pf, d_ptr, zinv, IS_AP)
    tl.store(out_ptr + t, out, mask=inside)


@triton.jit
def _coefficients_kernel(pos_ptr, p_ptr, n_ptr, rank_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[t] = _coefficient(positive[t], p[t], n[t], rank[t])."""
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = t < n
    t = tl.where(inside, t, 0)
    out = _coefficient(tl.load(pos_ptr + t) != 0, tl.load(p_ptr + t), tl.load(n_ptr + t),
                       tl.load(rank_ptr + t))
    tl.store(out_ptr + t, out, mask=inside)


@triton.jit
def _pattern_terms_kernel(r_ptr, above_ptr, d_ptr, out_ptr, n, IS_AP: tl.constexpr,
                          BLOCK: tl.constexpr):
    """out[t] = _pattern_term(r[t], above[t])."""
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = t < n
    t = tl.where(inside, t, 0)
    out = _pattern_term(tl.load(r_ptr + t), tl.load(above_ptr + t), d_ptr, IS_AP)
    tl.store(out_ptr + t, out, mask=inside)


@triton.jit
def _negative_ranks(s_ptr, group_ptr, p_ptr, n_ptr, pos_start_ptr, neg_start_ptr,
                    d_ptr, zinv_ptr, out_ptr, n, IS_AP: tl.constexpr, BLOCK: tl.constexpr,
                    SEARCH_MIN: tl.constexpr, EARLY_AFTER: tl.constexpr, EVERY: tl.constexpr,
                    PIVOTS: tl.constexpr):
    """Ranks of the negatives m = EVERY, 2 EVERY, ... of each query over all candidates
    (``PIVOTS``), or of the others between the ranks of the pivots around them (out_ptr holds
    the pivots' ranks then)."""
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)   # 64-bit sample indices
    inside = t < n
    t = tl.where(inside, t, 0)
    q = tl.load(group_ptr + t)
    P = tl.load(p_ptr + q)
    N = tl.load(n_ptr + q)
    neg_start = tl.load(neg_start_ptr + q)
    m = t - neg_start + 1
    pivot = m % EVERY == 0
    # a query's negatives follow its positives: sample t is a negative when m >= 1
    solvable = inside & (m >= 1) & (P > 0)
    if PIVOTS:
        live = solvable & pivot
    else:
        live = solvable & ~pivot
    # lanes that solve nothing still index in range: rank 1 of a query's own samples
    base = tl.load(pos_start_ptr + q)
    j = tl.where(live, m, 1)
    P = tl.where(live, P, 1)
    s = tl.load(s_ptr + t)
    Pf = P.to(tl.float64)
    scale = 2.0 / (Pf * tl.where(live, N, 1).to(tl.float64))
    zinv = tl.load(zinv_ptr + q)
    # opt_j lies between the ranks of the pivots above and below (opt_j does not decrease
    # with j); a pivot, or a negative without a pivot on that side, searches to the end
    lo = tl.full(j.shape, 1, tl.int64)
    hi = P + 1
    if not PIVOTS:
        above = (j // EVERY) * EVERY
        below = above + EVERY
        has_above = live & (above >= 1)
        has_below = live & (below <= N)
        lo = tl.where(has_above,
                      tl.load(out_ptr + tl.where(has_above, neg_start + above - 1, 0)), lo)
        hi = tl.where(has_below,
                      tl.load(out_ptr + tl.where(has_below, neg_start + below - 1, 0)), hi)
    if IS_AP:
        concave = tl.minimum(j, P) + 1
    else:
        concave = tl.full(j.shape, 1, tl.int64)
    # opt_rank(lo, hi): a binary search over the concave part when it is long enough
    searched = live & (concave - lo >= SEARCH_MIN)
    top = tl.minimum(hi, concave)
    a = lo
    b = tl.where(searched, top, a)
    while tl.max((a < b).to(tl.int32), 0) > 0:
        open_ = a < b
        mid = a + (b - a) // 2
        up = _step(s_ptr, base, tl.where(open_, mid, 1), j, s, Pf, scale, d_ptr, zinv,
                   IS_AP) >= 0.0
        a = tl.where(open_ & up, mid + 1, a)
        b = tl.where(open_ & ~up, mid, b)
    best = a
    # scan_from(best, hi, stop_early) unless the search covered every candidate
    scan = live & ~(searched & (top == hi))
    # stop_early: the first candidate in (best, hi] whose positive scores below the negative
    early = scan & (hi - best > EARLY_AFTER)
    a = best
    b = tl.where(early, hi, best)
    while tl.max((a < b).to(tl.int32), 0) > 0:
        open_ = a < b
        mid = a + (b - a) // 2
        below_s = tl.load(s_ptr + base + tl.where(open_, mid, 1) - 1) < s
        b = tl.where(open_ & below_s, mid, b)
        a = tl.where(open_ & ~below_s, mid + 1, a)
    end = tl.where(early, a, tl.where(scan, hi, best))
    # the running gain from the incumbent: f_j(i + 1) - f_j(best)
    i = best
    gain = tl.zeros(j.shape, tl.float64)
    while tl.max((i < end).to(tl.int32), 0) > 0:
        open_ = i < end
        gain = tl.where(open_, gain + _step(s_ptr, base, tl.where(open_, i, 1), j, s, Pf,
                                            scale, d_ptr, zinv, IS_AP), gain)
        up = open_ & (gain >= 0.0)
        best = tl.where(up, i + 1, best)
        gain = tl.where(up, 0.0, gain)
        i = tl.where(open_, i + 1, i)
    # the first pass leaves the others as they are (the second writes them); positives and
    # queries without positives get 0 in the second
    if PIVOTS:
        tl.store(out_ptr + t, best, mask=live)
    else:
        tl.store(out_ptr + t, tl.where(live, best, 0), mask=inside & ~(solvable & pivot))


@triton.jit
def _finish(s_ptr, group_ptr, perm_ptr, rank_ptr, p_ptr, n_ptr, pos_start_ptr, d_ptr,
            grad_ptr, ranks_ptr, share_ptr, term_ptr, n, IS_AP: tl.constexpr,
            BLOCK: tl.constexpr):
    """Per sorted sample t: its gradient coef(R_hat) - coef(R*) and rank, written at its input
    index perm[t], and its share of its query's score part (grad * (s - centre)) and its loss
    term, written at t; the operations and their order are those of
    :func:`aprank.torch._ops.hinge_terms`, so the values agree to the last bit."""
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)   # 64-bit sample indices
    inside = t < n
    t = tl.where(inside, t, 0)
    q = tl.load(group_ptr + t)
    P = tl.load(p_ptr + q)
    N = tl.load(n_ptr + q)
    pos_start = tl.load(pos_start_ptr + q)
    neg_start = pos_start + P
    both = (P > 0) & (N > 0)
    positive = t < neg_start
    s = tl.load(s_ptr + t)
    # the centre of a query: its (P // 2)-th positive, as the kernels' finish() uses
    centre = tl.where(P > 0, tl.load(s_ptr + tl.where(P > 0, pos_start + P // 2, t)), 0.0)
    # a positive's rank r among positives, and the negatives ranked at or above it: the count
    # of its query's negative ranks <= r, which do not decrease along the negatives
    r = t - pos_start + 1
    counted = inside & positive & both
    lo = tl.where(counted, neg_start, 0)
    hi = tl.where(counted, neg_start + N, 0)
    while tl.max((lo < hi).to(tl.int32), 0) > 0:
        open_ = lo < hi
        mid = lo + (hi - lo) // 2
        at_or_above = tl.load(rank_ptr + tl.where(open_, mid, 0)) <= r
        lo = tl.where(open_ & at_or_above, mid + 1, lo)
        hi = tl.where(open_ & ~at_or_above, mid, hi)
    above = tl.where(counted, lo - neg_start, 0)
    neg_rank = tl.load(rank_ptr + t)
    rank = tl.where(positive, above + 1, neg_rank)
    # a query lacking a class: placeholder counts, its coefficients masked below
    coef = _coefficient(positive, tl.where(both, P, 1), tl.where(both, N, 1), rank)
    truth = tl.where(positive, 1.0 / tl.maximum(P, 1).to(tl.float64),
                     -1.0 / tl.maximum(N, 1).to(tl.float64))
    grad = tl.where(both, coef - truth, 0.0)
    r = tl.where(counted, r, 1)
    term = tl.where(counted, _pattern_term(r, above, d_ptr, IS_AP), 0.0)
    rank = tl.where(both, rank, 1)
    i = tl.load(perm_ptr + t)
    tl.store(grad_ptr + i, grad, mask=inside)
    tl.store(ranks_ptr + i, rank, mask=inside)
    tl.store(share_ptr + t, grad * (s - centre), mask=inside)
    tl.store(term_ptr + t, term, mask=inside)


def _loss_tables(code: KernelLoss, discount, n: int, P: torch.Tensor, device):
    """(d, z, zinv) as the kernels take them for queries of at most n samples with P positives
    each: the NDCG discount D(0) = 0, D(1), ..., its sums Z[P] = sum_{k <= P} D(k) and
    1 / Z[P], from the torch operations' tables (_Loss); placeholders for AP."""
    if code is KernelLoss.AP:
        d = torch.zeros(1, dtype=torch.float64, device=device)
        return d, d, d
    tables = _Loss(code, discount, n, device)
    assert tables.Z is not None, "an NDCG loss's tables hold its norms"
    return tables.D, tables.Z, 1.0 / tables.Z[P.clamp(min=1)]


def _loss_steps(code, P: torch.Tensor, j: torch.Tensor, i: torch.Tensor, discount=None):
    """delta_j(i + 1) - delta_j(i) of the Triton kernels at each (P[t], j[t], i[t]), P the
    query's positives (int64 tensors of one length on the kernels' device, 1 <= i <= P): their
    step function and tables, launched on their own for tests/test_loss_statement.py to hold
    against the statement (aprank.losses)."""
    code = _kernel_loss(code, "the Triton kernels compute")
    n = j.shape[0]
    reach = int(torch.maximum(P, i + j).max()) if n else 1    # the tables' length
    d, _, zinv = _loss_tables(code, discount, reach, P, j.device)
    if code is KernelLoss.AP:
        zinv = zinv.expand(n)
    out = torch.empty(n, dtype=torch.float64, device=j.device)
    _loss_steps_kernel[(triton.cdiv(n, 1024),)](
        P.contiguous(), j.contiguous(), i.contiguous(), d, zinv.contiguous(), out, n,
        IS_AP=code is KernelLoss.AP, BLOCK=1024, enable_fp_fusion=False)
    return out


def _coefficients(positive: torch.Tensor, P: torch.Tensor, N: torch.Tensor,
                  rank: torch.Tensor) -> torch.Tensor:
    """coef(R) of the Triton kernels at each (positive[t], P[t], N[t], rank[t]) (bool and int64
    tensors of one length on the kernels' device, P and N >= 1): their coefficient function,
    launched on its own for tests/test_loss_statement.py to hold against the statement."""
    n = rank.shape[0]
    out = torch.empty(n, dtype=torch.float64, device=rank.device)
    _coefficients_kernel[(triton.cdiv(n, 1024),)](
        positive.to(torch.uint8).contiguous(), P.contiguous(), N.contiguous(), rank.contiguous(),
        out, n, BLOCK=1024, enable_fp_fusion=False)
    return out


def _pattern_terms(code, r: torch.Tensor, above: torch.Tensor, discount=None) -> torch.Tensor:
    """The loss term of the Triton kernels at each (r[t], above[t]), the r-th positive with
    above[t] negatives above it (int64 tensors of one length on the kernels' device): their
    term function and tables, launched on their own for tests/test_loss_statement.py to hold
    against the statement."""
    code = _kernel_loss(code, "the Triton kernels compute")
    n = r.shape[0]
    reach = int((r + above).max()) if n else 1    # the tables' length
    d, _, _ = _loss_tables(code, discount, reach, r[:1], r.device)
    out = torch.empty(n, dtype=torch.float64, device=r.device)
    _pattern_terms_kernel[(triton.cdiv(n, 1024),)](
        r.contiguous(), above.contiguous(), d, out, n, IS_AP=code is KernelLoss.AP, BLOCK=1024,
        enable_fp_fusion=False)
    return out


def hinge_terms(scores: torch.Tensor, is_pos: torch.Tensor, group: torch.Tensor, n_groups: int,
                code: KernelLoss | str = "ap", discount=None, *, blocks: bool) -> HingeTerms:
    """The structured hinge of every query and its subgradient, as
    :func:`aprank.torch._ops.hinge_terms` computes them (the same ranks, values and gradient),
    with the search and the finish in two Triton kernels.

    Parameters
    ----------
    scores, is_pos, group, n_groups, code, discount
        As :func:`aprank.torch._ops.hinge_terms`; ``scores`` on a CUDA device (on the CPU
        under Triton's interpreter only).
    blocks : bool
        Whether the queries are ``n_groups`` equal consecutive blocks (a score matrix ranked
        per column, or one query): they are then sorted as rows. Required: with it given,
        nothing here waits for the device.

    Returns
    -------
    HingeTerms
        Objective per query (float64), gradient (float64) and ranks (int64) per sample, in
        input order.
    """
    device = scores.device
    if device.type != "cuda" and not INTERPRETED:
        raise ValueError("backend='triton' runs on CUDA tensors (on the CPU only under "
                         "Triton's interpreter, TRITON_INTERPRET=1, for testing); use "
                         "backend='kernels' or 'auto' on the CPU")
    code = _kernel_loss(code, "the Triton kernels compute")
    n = scores.numel()
    x = scores.detach()
    # the sort in the scores' own dtype (each converts to float64 exactly and in order); the
    # decisions in float64
    perm = _sort_by_query(x, is_pos, group, n_groups, blocks)
    s = x.to(torch.float64)[perm]
    sorted_group = group if blocks else group[perm]
    P, N = _query_counts(is_pos, group, n_groups, blocks)
    pos_start = _segment_starts(P + N)
    neg_start = pos_start + P
    d, z, zinv = _loss_tables(code, discount, n, P, device)
    grid = (triton.cdiv(n, BLOCK),)
    options = dict(IS_AP=code is KernelLoss.AP, BLOCK=BLOCK, enable_fp_fusion=False)
    # negatives' ranks in the sorted layout; positives and queries without positives get 0.
    # Two launches: every PIVOT_EVERY-th negative of a query over all candidates, then the
    # others between their pivots' ranks (a full-range scan for every negative would cost
    # O(positives above it) each: O(N P) for NDCG, whose f_j has no concave part to search)
    neg_rank = torch.empty(n, dtype=torch.int64, device=device)
    for pivots in (True, False):
        _negative_ranks[grid](s, sorted_group, P, N, pos_start, neg_start, d, zinv, neg_rank, n,
                              SEARCH_MIN=BINARY_SEARCH_MIN, EARLY_AFTER=STOP_EARLY_AFTER,
                              EVERY=PIVOT_EVERY, PIVOTS=pivots, **options)
    grad = torch.empty(n, dtype=torch.float64, device=device)
    ranks = torch.empty(n, dtype=torch.int64, device=device)
    share = torch.empty(n, dtype=torch.float64, device=device)
    term = torch.empty(n, dtype=torch.float64, device=device)
    _finish[grid](s, sorted_group, perm, neg_rank, P, N, pos_start, d, grad, ranks, share, term,
                  n, **options)
    objective = (_per_group(sorted_group, share, n_groups, blocks)
                 + _loss_value(code, None if code is KernelLoss.AP else z, P.clamp(min=1),
                               _per_group(sorted_group, term, n_groups, blocks)))
    return HingeTerms(objective, grad, ranks)
