"""Every negative's interleaving rank in one Triton kernel (``backend="triton"``).

The torch-ops search (:mod:`aprank.torch._ops`) solves the negatives level by level of a
binary tree, a dozen torch operations per level, because a negative's exact search there is
bounded by its solved neighbours. A kernel needs no such bounds: each negative's opt_j (paper
004 section 4; see :mod:`aprank.torch._ops`) is found on its own by the compiled kernels' own
search (``opt_rank`` of ``aprank/inference/_kernel.pxd``): a binary search where f_j is concave
(AP: candidates up to min(j, P) + 1), then a scan to the first positive scoring below the
negative, summing the steps from the incumbent. One lane per negative, the same step
arithmetic as the kernels' ``step()``, so ties are decided alike. Two launches bound the
scans: every 64th negative of a query first, over all candidates, then the others between the
ranks of the two pivots around them (opt_j does not decrease with j, paper 004 Observation 4).

Launched on CUDA tensors; on the CPU only under ``TRITON_INTERPRET=1`` (Triton's interpreter,
for tests), which must be set before Triton is imported. Triton is an optional dependency:
:mod:`aprank.torch._loss` imports this module where the triton package is installed.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

__all__ = ["negative_ranks", "INTERPRETED"]

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
def _step(s_ptr, base, i, j, s, Pf, scale, d_ptr, zinv, IS_AP: tl.constexpr):
    """f_j(i + 1) - f_j(i): the kernels' step(), operation for operation."""
    pos = tl.load(s_ptr + base + i - 1)
    if IS_AP:
        a = (j + i).to(tl.float64)
        loss = -(i.to(tl.float64)) / (Pf * a * (a - 1.0))
    else:
        loss = (tl.load(d_ptr + i + j) - tl.load(d_ptr + i + j - 1)) * zinv
    return scale * (pos - s) + loss


@triton.jit
def _negative_ranks(s_ptr, group_ptr, negative_ptr, p_ptr, n_ptr, pos_start_ptr, neg_start_ptr,
                    d_ptr, zinv_ptr, out_ptr, n, IS_AP: tl.constexpr, BLOCK: tl.constexpr,
                    SEARCH_MIN: tl.constexpr, EARLY_AFTER: tl.constexpr, EVERY: tl.constexpr,
                    PIVOTS: tl.constexpr):
    """Ranks of the negatives m = EVERY, 2 EVERY, ... of each query over all candidates
    (``PIVOTS``), or of the others between the ranks of the pivots around them (out_ptr holds
    the pivots' ranks then)."""
    t = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = t < n
    t = tl.where(inside, t, 0)
    q = tl.load(group_ptr + t)
    P = tl.load(p_ptr + q)
    N = tl.load(n_ptr + q)
    neg_start = tl.load(neg_start_ptr + q)
    m = t - neg_start + 1
    pivot = m % EVERY == 0
    solvable = inside & (tl.load(negative_ptr + t) != 0) & (P > 0)
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
        lo = tl.where(live & (above >= 1), tl.load(out_ptr + tl.where(live & (above >= 1),
                                                                      neg_start + above - 1, 0)), lo)
        hi = tl.where(live & (below <= N), tl.load(out_ptr + tl.where(live & (below <= N),
                                                                      neg_start + below - 1, 0)), hi)
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


def negative_ranks(Q, loss, blocks: bool, n_groups: int, n_positives: int) -> torch.Tensor:
    """Interleaving ranks of every negative in the sorted layout of ``Q`` (positives get 0):
    what the torch-ops search of :func:`aprank.torch._ops.hinge_terms` finds, in one kernel
    launch (its ``solve_negatives``).

    Parameters
    ----------
    Q : object
        The sorted batch (``_Queries`` of :mod:`aprank.torch._ops`).
    loss : object
        The loss's tables (``_Loss`` of :mod:`aprank.torch._ops`: its code, NDCG's discount
        D and sums Z).
    blocks, n_groups, n_positives
        As for the torch-ops search (unused: one lane per sample needs no bound).
    """
    device = Q.s.device
    if device.type != "cuda" and not INTERPRETED:
        raise ValueError("backend='triton' runs on CUDA tensors (on the CPU only under "
                         "Triton's interpreter, TRITON_INTERPRET=1, for testing); use "
                         "backend='kernels' or 'auto' on the CPU")
    n = Q.s.shape[0]
    out = torch.empty(n, dtype=torch.int64, device=device)
    if n == 0:
        return out
    is_ap = loss.code == "ap"
    if is_ap:
        d = Q.s.new_zeros(1)
        zinv = Q.s.new_zeros(n_groups)
    else:
        d = loss.D
        zinv = 1.0 / loss.Z[Q.P.clamp(min=1)]
    negative = (~Q.is_pos).to(torch.int8)
    # two launches: every PIVOT_EVERY-th negative of a query over all candidates, then the
    # others between their pivots' ranks (a full-range scan for every negative would cost
    # O(positives above it) each: O(N P) for NDCG, whose f_j has no concave part to search)
    for pivots in (True, False):
        _negative_ranks[(triton.cdiv(n, BLOCK),)](
            Q.s, Q.group, negative, Q.P, Q.N, Q.pos_start, Q.neg_start, d, zinv, out, n,
            IS_AP=is_ap, BLOCK=BLOCK, SEARCH_MIN=BINARY_SEARCH_MIN,
            EARLY_AFTER=STOP_EARLY_AFTER, EVERY=PIVOT_EVERY, PIVOTS=pivots,
            # no fused multiply-add: the kernels' step() rounds its product and its sum
            # apart, and an FMA decides ties differently (seen on an H100)
            enable_fp_fusion=False)
    return out
