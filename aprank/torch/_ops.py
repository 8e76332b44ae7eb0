"""Exact loss-augmented inference for AP and NDCG in torch operations (any device).

The compiled kernels walk the negatives one by one; a GPU wants a few wide operations instead.
The same decomposition serves both (Mohapatra et al. 2018, section 4, corrected as
docs/references.md says): the j-th negative in rank order, with score s, gets the interleaving rank
opt_j, the largest maximiser over i in 1..P+1 of

    f_j(i) = (2 / PN) * (sum_{k < i} s+_k - (i - 1) s) + delta_j(i) - delta_j(1),

and opt_j does not decrease with j (Mohapatra et al. 2018, Observation 4). That monotonicity is what
a parallel search needs: solve a negative exactly over the rank interval its solved neighbours
leave, then the negatives above it lie in [rl, opt] and those below in [opt, rh] (OptRanks
without the partition: the negatives are sorted once by ``torch.sort``). The negatives are
solved along a fixed binary tree, all nodes of one level at once, so there are bit_length(n)
levels (n a shape: the batch, or the block size of equal blocks) and a level evaluates f at
most P + (its number of nodes) times per query, whatever the ties; no shape depends on the
data, so the whole inference compiles with ``torch.compile(fullgraph=True)``. f has a closed
form, so each evaluation is O(1):

    AP:   delta_j(i) - delta_j(1) = -(1/P) [j/(j+i-1) - 1 + H(j+i-2) - H(j-1)]   (H harmonic)
    NDCG: delta_j(i) - delta_j(1) = (D(j+i-1) - D(j)) / sum_{k<=P} D(k)

Decisions are taken in float64 whatever the scores' dtype (bfloat16, float16 and float32
convert exactly), with scores centred on a positive of their query, so rounding stays relative
to the differences being compared. Ties follow the kernels' rule: equal scores in input-index
order (stable sort), and the largest maximiser.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from aprank.losses import NDCG, KernelLoss

__all__ = ["HingeTerms", "hinge_terms"]


@dataclass
class HingeTerms:
    """What :func:`hinge_terms` returns.

    Attributes
    ----------
    objective : torch.Tensor
        Per query, the structured hinge (float64).
    grad : torch.Tensor
        Per sample, coef(R_hat) - coef(R*) (float64, input order).
    ranks : torch.Tensor
        Per sample, the interleaving rank (int64, as ``aprank.infer`` reports them).
    """

    objective: torch.Tensor
    grad: torch.Tensor
    ranks: torch.Tensor


@torch.library.custom_op("aprank::cumsum", mutates_args=())
def _library_cumsum(x: torch.Tensor) -> torch.Tensor:
    """torch.cumsum along dim 0, as an operator that torch.compile calls instead of tracing."""
    return torch.cumsum(x, 0)


@_library_cumsum.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("aprank::cumsum_in_order", mutates_args=())
def _library_cumsum_in_order(x: torch.Tensor) -> torch.Tensor:
    """torch.cumsum along dim 0, summed on the host one term after another (the order of the
    compiled kernels' sums), returned on x's device; an operator that torch.compile calls."""
    return torch.cumsum(x.cpu(), 0).to(x.device)


@_library_cumsum_in_order.register_fake
def _(x):
    return torch.empty_like(x)


#: Under torch.compile, take the cumulative sums from the library's scan (one opaque call)
#: instead of Inductor's generated one. Measured on an NVIDIA H200 (docs/benchmarks/extras.md).
_SCAN_OUTSIDE_INDUCTOR = True


def _cumsum(x: torch.Tensor) -> torch.Tensor:
    if _SCAN_OUTSIDE_INDUCTOR and torch.compiler.is_compiling():
        return _library_cumsum(x)
    return torch.cumsum(x, 0)


def _segment_starts(counts: torch.Tensor) -> torch.Tensor:
    return _cumsum(counts) - counts


def _per_group(group: torch.Tensor, values: torch.Tensor, n_groups: int,
               blocks: bool = False) -> torch.Tensor:
    """Sum of ``values`` per group: a bincount whose length is n_groups whatever the data (a
    bincount's length is its largest entry + 1, a data-dependent shape). Equal consecutive
    blocks sum as rows: no atomic additions, which on a GPU all meet on one address when
    there is one large query."""
    if blocks:
        return values.view(n_groups, -1).sum(1)
    return torch.zeros(n_groups, dtype=values.dtype, device=values.device).index_add_(
        0, group, values)


def _query_counts(is_pos: torch.Tensor, group: torch.Tensor, n_groups: int, blocks: bool):
    """(P, N): the positives and negatives of each query. Equal consecutive blocks: one sum per
    row of the labels, and the rest of a row is negatives."""
    if blocks:
        P = is_pos.view(n_groups, -1).sum(1)
        return P, is_pos.numel() // n_groups - P
    return (_per_group(group, is_pos.long(), n_groups, blocks),
            _per_group(group, (~is_pos).long(), n_groups, blocks))


def _sort_by_query(s: torch.Tensor, is_pos: torch.Tensor, group: torch.Tensor, n_groups: int,
                   blocks: bool):
    """Permutation grouping samples by query, positives before negatives, each in rank order
    (descending score, ties by input index: two stable sorts)."""
    n = s.numel()
    if blocks:
        # Queries of equal size in consecutive blocks (a score matrix ranked per column): sort
        # each block on its own, which is a batched sort of short rows, much cheaper than two
        # sorts of the whole batch.
        rows = torch.arange(n_groups, device=s.device)[:, None]
        by_score = torch.sort(s.view(n_groups, -1), dim=1, descending=True, stable=True).indices
        negative = (~is_pos).view(n_groups, -1).gather(1, by_score).to(torch.uint8)
        within = by_score.gather(1, torch.sort(negative, dim=1, stable=True).indices)
        return (within + rows * (n // n_groups)).flatten()
    by_score = torch.sort(s, descending=True, stable=True).indices
    block = group * 2 + (~is_pos).long()
    return by_score[torch.sort(block[by_score], stable=True).indices]


def _equal_blocks(group: torch.Tensor, n_groups: int) -> bool:
    """Whether the queries are n_groups equal consecutive blocks (one host synchronisation)."""
    n = group.numel()
    if n % n_groups:
        return False
    rows = torch.arange(n_groups, device=group.device)[:, None]
    return bool(torch.equal(group.view(n_groups, -1), rows.expand(n_groups, n // n_groups)))


class _Queries:
    """The sorted layout of a batch: per query P, N, and where its positives and negatives lie
    in the sorted flat array."""

    def __init__(self, s, is_pos, group, n_groups, blocks):
        self.perm = _sort_by_query(s, is_pos, group, n_groups, blocks)
        self.s = s[self.perm]
        self.group = group[self.perm]
        self.is_pos = is_pos[self.perm]
        self.P, self.N = _query_counts(is_pos, group, n_groups, blocks)
        self.pos_start = _segment_starts(self.P + self.N)
        self.neg_start = self.pos_start + self.P
        # the centre of a query: its (P // 2)-th positive, as the kernels' finish() uses
        with_pos = self.P > 0
        centre_at = torch.where(with_pos, self.pos_start + self.P // 2, self.pos_start)
        self.centre = torch.where(with_pos, self.s[centre_at.clamp(max=s.numel() - 1)],
                                  s.new_zeros(n_groups))
        self.sc = self.s - self.centre[self.group]
        # C(i) = sum_{k < i} (s+_k - centre) = cum[pos_start + i - 1] - cum[pos_start - 1]
        self.cum = _cumsum(torch.where(self.is_pos, self.sc, torch.zeros_like(self.sc)))
        self.cum0 = torch.cat([self.cum.new_zeros(1), self.cum])   # cum0[t] = sum of entries < t

    def prefix_gap(self, q, i, i0):
        """C_q(i) - C_q(i0) = sum_{i0 <= k < i} (s+_k - centre), for 1 <= i0 <= i <= P_q + 1."""
        start = self.pos_start[q] - 1
        return self.cum0[start + i] - self.cum0[start + i0]


def _default_discount_sums(size: int) -> tuple[np.ndarray, ...]:
    """(D, Z) of the default discount, ``size`` entries each: D[0] = 0 and D[m] = 1/log2(1 + m)
    as :class:`aprank.losses.NDCG` states it (torch's log2 differs from C's, the kernels', in
    the last bit at some m), Z[m] = D[0] + ... + D[m] added in order, as the kernels add their
    norm."""
    D = np.concatenate([[0.0], NDCG().D(np.arange(1, size))])
    return D, np.cumsum(D)


def _harmonic_numbers(size: int) -> tuple[np.ndarray, ...]:
    """(H,), ``size`` entries: H[0] = 0 and H[m] = 1 + 1/2 + ... + 1/m added in order, so that
    every device ranks with the same table (a GPU's parallel scan rounds otherwise in the last
    bit)."""
    return (np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, size, dtype=np.float64))]),)


#: Per (builder, device), the longest tables a builder has made so far (see _host_tables).
_HOST_TABLES: dict = {}


def _host_tables(build, size: int, device) -> tuple[torch.Tensor, ...]:
    """``build(size)``'s tables on ``device``, ``size`` entries each: made on the host, where
    sums run in order, and copied to the device once per device and length (a longer one
    serves every shorter, and a table grows at least twofold)."""
    have = _HOST_TABLES.get((build, device))
    if have is None or have[0].shape[0] < size:
        grow = max(size, 2 * have[0].shape[0] if have is not None else size)
        have = tuple(torch.from_numpy(table).to(device) for table in build(grow))
        _HOST_TABLES[(build, device)] = have
    return tuple(table[:size] for table in have)


@torch.library.custom_op("aprank::default_discount", mutates_args=())
def _library_default_discount(m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(D, Z) of :func:`_default_discount_sums` for positions 0 ... m.shape[0] on m's device,
    as an operator that torch.compile calls instead of tracing (the values come from the
    host)."""
    D, Z = _host_tables(_default_discount_sums, m.shape[0] + 1, m.device)
    return D.clone(), Z.clone()


@_library_default_discount.register_fake
def _(m):
    return m.new_empty(m.shape[0] + 1), m.new_empty(m.shape[0] + 1)


@torch.library.custom_op("aprank::harmonic_numbers", mutates_args=())
def _library_harmonic_numbers(m: torch.Tensor) -> torch.Tensor:
    """H of :func:`_harmonic_numbers` for 0 ... m.shape[0] on m's device, as an operator that
    torch.compile calls instead of tracing (the values come from the host)."""
    H, = _host_tables(_harmonic_numbers, m.shape[0] + 1, m.device)
    return H.clone()


@_library_harmonic_numbers.register_fake
def _(m):
    return m.new_empty(m.shape[0] + 1)


def _discount_table(discount, n: int, device) -> torch.Tensor:
    """D(1..n) in float64 on ``device`` from the given table, cut or padded with its last
    value to length n (positions past a query's last sample are never reached; the padding
    only keeps indexing in range). Its length comes from n, a shape, never from the data."""
    if isinstance(discount, torch.Tensor):
        D = discount.to(device=device, dtype=torch.float64)[:n]
    else:   # a copy: an array the caller holds may be read-only
        D = torch.tensor(discount, dtype=torch.float64, device=device)[:n]
    if D.shape[0] < n:
        D = torch.cat([D, D[-1:].expand(n - D.shape[0])])
    return D


class _Loss:
    """delta_j(i) - delta_j(1) for a batch of (query, j, i), its steps, and the terms and scale
    of the loss of a pattern, for queries of at most n samples.

    ``code`` is a :class:`aprank.losses.KernelLoss`; ``discount`` the NDCG discount table
    (None: the default, 1/log2(1 + m))."""

    def __init__(self, code: KernelLoss, discount, n, device):
        self.code = code
        n_max = n + 2            # a shape: the largest query has at most n samples
        m = torch.arange(1, n_max + 1, dtype=torch.float64, device=device)
        if code is KernelLoss.AP:
            # H[m] = sum_{t <= m} 1/t, H[0] = 0, summed in order on the host
            self.H = _library_harmonic_numbers(m)
            self.Z = None
        elif discount is None:
            self.D, self.Z = _library_default_discount(m)
        else:
            self.D = torch.cat([m.new_zeros(1), _discount_table(discount, n_max, device)])
            # Z[P] = sum_{k <= P} D(k), summed in order as the kernels sum it: a GPU's parallel
            # scan rounds otherwise in the last bit, and Z scales every loss step a tie is
            # decided on (the default discount's sums come from the host too)
            self.Z = _library_cumsum_in_order(self.D)

    def relative(self, P, j, i, i0):
        """delta_j(i) - delta_j(i0) (float64)."""
        if self.code is KernelLoss.AP:
            jf = j.double()
            return -(jf / (j + i - 1) - jf / (j + i0 - 1)
                     + self.H[j + i - 2] - self.H[j + i0 - 2]) / P
        return (self.D[j + i - 1] - self.D[j + i0 - 1]) / self.Z[P]

    def step(self, P, j, i):
        """delta_j(i + 1) - delta_j(i) (float64): the step of :mod:`aprank.losses` (the
        statement, ``increment``), operation for operation and in its order, so that it agrees
        with the statement and the kernels' loss_step to the last bit."""
        if self.code is KernelLoss.AP:
            a = (j + i).double()
            return -(i.double()) / (P.double() * a * (a - 1.0))
        return (self.D[i + j] - self.D[i + j - 1]) * (1.0 / self.Z[P])

    def kernel_step(self, Q: _Queries, q, P, N, j, s, i):
        """f_j(i + 1) - f_j(i) with the operations, in the order, of the kernels' step()
        (aprank/inference/_kernel.pxd), on uncentred scores."""
        at = (Q.pos_start[q] + i - 1).clamp(0, Q.s.shape[0] - 1)   # masked slots stay in range
        return 2.0 / (P.double() * N.double()) * (Q.s[at] - s) + self.step(P, j, i)

    def pattern_terms(self, r, above):
        """Per positive (rank r among positives, ``above`` negatives above it): its term of the
        loss before the scale (:meth:`value`), the statement's ``pattern_terms``, operation for
        operation."""
        if self.code is KernelLoss.AP:
            return above.double() / (r + above).double()
        return self.D[r] - self.D[r + above]

    def value(self, P, total):
        """The loss of a query of P positives whose terms add up to ``total``
        (:func:`_loss_value`)."""
        return _loss_value(self.code, self.Z, P, total)


def _loss_value(code: KernelLoss, Z, P, total):
    """The loss of a query of P positives whose terms add up to ``total``, Z[P] its NDCG norm
    (None for AP): the statement's one scale of the sum (``from_pattern``), operation for
    operation. The statement adds the terms in order; a device adds them in its own (a tree),
    so the values agree to the rounding of the sum, the scale to the last bit."""
    if code is KernelLoss.AP:
        return total / P.double()
    return total * (1.0 / Z[P])


def _coefficients(is_pos, P, N, ranks):
    """coef(R) per sample at its interleaving rank, P and N its query's (a query lacking a class
    gets a finite placeholder, for the caller to mask): the statement's ``RankingLoss.coef``,
    operation for operation."""
    numerator = torch.where(is_pos, N, P) + 2 - 2 * ranks
    return numerator.double() * (1.0 / (P.double() * N.double()).clamp(min=1.0))


def _kernel_loss(code, refusal: str) -> KernelLoss:
    """The KernelLoss ``code`` names; a ValueError that starts with ``refusal`` otherwise."""
    kernel_loss = KernelLoss.lookup(code)
    if kernel_loss is None:
        labels = " and ".join(repr(label) for label in KernelLoss.labels())
        raise ValueError(f"{refusal} the losses {labels}, not {code!r}")
    return kernel_loss


def _level_nodes(Q: _Queries, h: int, blocks: bool, n_groups: int, largest: int):
    """The negatives level h solves: (sorted position, query, 1-based index m among the query's
    negatives, whether it is one), in a tensor whose length comes from shapes.

    Equal blocks: each query's candidates m = h, 3h, 5h, ... <= the block size, so a level
    costs its own number of nodes. Otherwise every sorted position, masked."""
    n = Q.s.shape[0]
    if blocks:
        per_query = (largest - h) // (2 * h) + 1
        m = (h * (2 * torch.arange(per_query, device=Q.s.device) + 1)).repeat(n_groups)
        q = torch.arange(n_groups, device=Q.s.device).repeat_interleave(per_query)
        node = (m <= Q.N[q]) & (Q.P[q] > 0)
        t = Q.neg_start[q] + m - 1
    else:
        t = torch.arange(n, device=Q.s.device)
        q = Q.group
        m = t - Q.neg_start[q] + 1
        node = ~Q.is_pos & (Q.P[q] > 0) & (m % (2 * h) == h)
    # a node past the data writes to the sink entry n of the rank array
    return torch.where(node, t, n), q, m, node


def _solve_negatives(Q: _Queries, loss: _Loss, blocks: bool, n_groups: int,
                     n_positives: int) -> torch.Tensor:
    """Interleaving ranks of every negative, in the sorted layout (positives get 0).

    The search runs on a fixed binary tree over each query's negatives, numbered m = 1..N in
    rank order: level l (from 0) solves the m with m mod 2h = h, h = 2^(L-1-l), whose nearest
    solved neighbours m - h and m + h (or rank 1 and P + 1 past the ends) bound their ranks.
    L = bit_length(largest) levels cover any query of at most ``largest`` samples (n, or the
    block size of equal blocks), so the loop's length and every tensor's shape come from
    shapes and the caller's ints: no host synchronisation, no data-dependent shape, and
    torch.compile(fullgraph=True) traces it whole. Per query the bounded intervals of one
    level overlap only at their ends, so a level's candidates number at most P + (its nodes)
    per query, and never more than the query's samples: at most
    min(n, n_positives + nodes) slots in all.
    """
    n = Q.s.shape[0]
    device = Q.s.device
    largest = n // n_groups if blocks else n
    ranks = torch.zeros(n + 1, dtype=torch.int64, device=device)     # [n]: the sink
    scale = 2.0 / (Q.P * Q.N).double().clamp(min=1.0)
    levels = max(1, largest.bit_length())
    for level in range(levels):
        h = 1 << (levels - 1 - level)
        t, q, m, node = _level_nodes(Q, h, blocks, n_groups, largest)
        P, N = Q.P[q], Q.N[q]
        rl = torch.where(m - h >= 1, ranks[(t - h).clamp(min=0)], torch.ones_like(m))
        rh = torch.where(m + h <= N, ranks[(t + h).clamp(max=n)], P + 1)
        count = torch.where(node, rh - rl + 1, torch.zeros_like(m))
        end = _cumsum(count)
        slot = torch.arange(min(n, n_positives + t.shape[0]), device=device)
        # the node whose candidate slots [end - count, end) hold each slot
        seg = torch.searchsorted(end, slot, right=True)
        valid = seg < t.shape[0]
        seg = seg.clamp(max=t.shape[0] - 1)
        i0 = rl[seg]
        # slots past the last node's are padding: give them an index that stays in range
        i = torch.where(valid, i0 + slot - (end - count)[seg], i0)
        qs, ts = q[seg], t[seg].clamp(max=n - 1)
        js = torch.where(valid, m[seg], torch.ones_like(slot))
        # f_j(i) - f_j(rl): the score part from prefix sums of centred positives
        gain = scale[qs] * (Q.prefix_gap(qs, i, i0) - (i - i0) * Q.sc[ts]) \
            + loss.relative(Q.P[qs], js, i, i0)
        gain = torch.where(valid, gain, torch.full_like(gain, -torch.inf))
        best = torch.full(t.shape, -torch.inf, dtype=gain.dtype, device=device)
        best = best.scatter_reduce(0, seg, gain, "amax")
        pick = torch.where(valid & (gain == best[seg]), i, torch.zeros_like(i))
        r = torch.zeros_like(m).scatter_reduce(0, seg, pick, "amax")   # largest maximiser
        step = loss.kernel_step(Q, qs, Q.P[qs], Q.N[qs], js, Q.s[ts], i)
        r = _settle_ties(step, seg, valid, i, r, rl, rh)
        ranks = ranks.scatter(0, t, torch.where(node, r, ranks[t]))
    return ranks[:n]


def _settle_ties(step, seg, valid, i, r, rl, rh):
    """Move each rank across adjacent candidates whose f values tie up to rounding, the way
    the compiled kernels decide them; ``step`` is the kernels' step(j, i) at each slot.

    Scores such as 0.9 and 0.4 can make f_j(i + 1) - f_j(i) exactly zero in real arithmetic
    (AP is rational), and then rounding decides which of the two candidates a float
    computation sees as larger: the closed form above and the kernels' step sums may decide
    differently. The kernels take i + 1 exactly when their step(j, i) >= 0; recomputing that
    step with the same operations here (IEEE arithmetic is deterministic) makes both agree on
    such ties. Only ties move a rank: at a true maximiser r, step(j, r) < 0 <= step(j, r - 1)
    up to rounding.

    The walk "up while step(r) >= 0, else down while step(r - 1) < 0" never turns, so it ends
    at the first candidate i >= r with step(i) < 0 (or rh) when it goes up, and at the last
    i <= r with step(i - 1) >= 0 (or rl) when it goes down: two segmented reductions over the
    level's candidate slots, in place of a loop whose length the data would decide.
    """
    at_r = r[seg]
    stops_up = valid & (i >= at_r) & (i < rh[seg]) & (step < 0.0)
    big = torch.full_like(i, torch.iinfo(torch.int64).max)
    r_up = rh.scatter_reduce(0, seg, torch.where(stops_up, i, big), "amin")
    stops_down = valid & (i >= rl[seg]) & (i < at_r) & (step >= 0.0)
    r_down = rl.scatter_reduce(0, seg, torch.where(stops_down, i + 1, torch.zeros_like(i)), "amax")
    return torch.where(r_up > r, r_up, r_down)


def hinge_terms(scores: torch.Tensor, is_pos: torch.Tensor, group: torch.Tensor, n_groups: int,
                code: KernelLoss | str = "ap", discount=None, *, blocks=None,
                n_positives=None) -> HingeTerms:
    """The structured hinge of every query, in torch operations, and its subgradient.

    The objective is max_R [Delta + w'Psi(R) - w'Psi(R*)], its subgradient with respect to the
    scores coef(R_hat) - coef(R*). Inputs are trusted (aprank.torch validates them). A query
    without positives or without negatives has objective 0 and gradient 0.

    Parameters
    ----------
    scores : torch.Tensor
        1-D, floating point, any device.
    is_pos : torch.Tensor
        Bool, one per sample.
    group : torch.Tensor
        int64 query indices in [0, n_groups), one per sample.
    n_groups : int
        The number of queries.
    code : KernelLoss or {"ap", "ndcg"}, default "ap"
        The loss: a :class:`aprank.losses.KernelLoss`, or its label.
    discount : torch.Tensor or array-like, optional
        The NDCG discount table (default 1/log2(1 + i)).
    blocks : bool, optional
        Whether the queries are ``n_groups`` equal consecutive blocks (``group`` is
        ``arange(n_groups).repeat_interleave(n // n_groups)``, a score matrix ranked per
        column); they are then sorted as one batched sort of short rows. None: checked here,
        which is the one host synchronisation; pass it to trace the whole function with
        ``torch.compile(fullgraph=True)``.
    n_positives : int, optional
        At least the number of positive samples, when the caller knows it: the search sizes
        its candidate buffers from it (a level needs at most this plus its number of nodes)
        instead of from n, which is what makes a query with few positives cheap.

    Returns
    -------
    HingeTerms
        Objective per query, gradient and ranks per sample.

    Notes
    -----
    Every shape and the number of search levels come from the number of samples, none from
    the data: with ``blocks`` given there is no host synchronisation (no ``.item()``, no
    ``nonzero``), and the function compiles with ``torch.compile(fullgraph=True)``.
    """
    kernel_loss = _kernel_loss(code, "the torch implementation computes")
    if blocks is None:
        blocks = _equal_blocks(group, n_groups)
    s = scores.detach().to(torch.float64)
    Q = _Queries(s, is_pos, group, n_groups, blocks)
    loss = _Loss(kernel_loss, discount, s.shape[0], s.device)
    neg_rank = _solve_negatives(Q, loss, blocks, n_groups,
                                s.shape[0] if n_positives is None else n_positives)

    P, N = Q.P[Q.group], Q.N[Q.group]
    both = (P > 0) & (N > 0)
    # positives: the r-th has (negatives with rank <= r) above it; counts per (query, rank)
    slot_start = _segment_starts(Q.P + 2)
    slots = s.shape[0] + 2 * n_groups              # >= sum(P + 2), a shape
    neg_slot = slot_start[Q.group] + neg_rank
    counts = torch.zeros(slots, dtype=torch.int64, device=s.device).index_add_(
        0, neg_slot, (~Q.is_pos & both).long())
    cum = _cumsum(counts)
    within = torch.arange(s.numel(), device=s.device) - Q.pos_start[Q.group]  # 0-based position
    r_pos = within + 1                                    # a positive's rank among positives
    above = (cum[slot_start[Q.group] + r_pos.clamp(max=Q.P[Q.group] + 1)]
             - cum[slot_start[Q.group]] + counts[slot_start[Q.group]])
    ranks = torch.where(Q.is_pos, above + 1, neg_rank)
    coef = _coefficients(Q.is_pos, P, N, ranks)
    truth = torch.where(Q.is_pos, 1.0 / P.double().clamp(min=1), -1.0 / N.double().clamp(min=1))
    grad = torch.where(both, coef - truth, torch.zeros_like(coef))
    counted = Q.is_pos & both
    r_pos = torch.where(counted, r_pos, torch.ones_like(r_pos))    # keep the tables in range
    above = torch.where(counted, above, torch.zeros_like(above))
    term = torch.where(counted, loss.pattern_terms(r_pos, above), torch.zeros_like(coef))
    # a query lacking a class has no terms: its loss is 0 whatever P it is scaled by
    objective = (_per_group(Q.group, grad * Q.sc, n_groups, blocks)
                 + loss.value(Q.P.clamp(min=1), _per_group(Q.group, term, n_groups, blocks)))

    out_grad = torch.empty_like(grad)
    out_grad[Q.perm] = grad
    ranks = torch.where(both, ranks, torch.ones_like(ranks))
    out_ranks = torch.empty_like(ranks)
    out_ranks[Q.perm] = ranks
    return HingeTerms(objective, out_grad, out_ranks)
