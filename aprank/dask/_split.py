"""Exact AP / NDCG inference for one giant query split over the partitions of a Dask array.

Binary retrieval: a few thousand positives among 10^8-10^9 negatives. The positives fit on the
client; the negatives never move. The derivation (``aprank.dask._steps.optimal_ranks``): the
j-th negative in rank order (descending score, ties by index), with score s, gets the
interleaving rank opt_j, a function of s, j and the positives only, and opt_j does not decrease
with j. The solve is OptRanks (``qs``) with a batch of pivots per round instead of one:

1. every part keeps its negatives in buckets, unordered inside: at first one bucket;
2. the client holds *anchors*: negatives whose global position j and rank are known (at first
   two virtual ones, before the first negative with rank 1 and after the last with rank P+1),
   and every part has one bucket per pair of adjacent anchors. Between two anchors of equal
   rank every negative has that rank; between two of different ranks the range is open;
3. a round: every part sends a few negatives of each open bucket (its samples, evenly spaced
   in storage); the client puts them in rank order, every part splits its open buckets at
   them (a counting sort, ``_steps.split_buckets``) and says how many negatives it
   holds at or before each (their sum is the global position j); the client computes their
   ranks (the kernels' own ``opt_rank``, bounded by the anchors around them) and they become
   anchors. A range shrinks about ``samples``-fold per round, so the rounds are about
   log(N) / log(samples), and settled buckets are never touched again: no part ever sorts;
4. every part reads its negatives' ranks off the anchors and reports, for the loss and the
   objective, how many negatives sit at each rank and one sum over them.

Every step computes what the single-machine kernel computes, with the same tie rule, so the
ranks and coefficients are those of ``aprank.infer(..., algorithm="qs")``; the loss and the
objective are the same sums, added in another order (equal to rounding).
"""
from __future__ import annotations

from dataclasses import dataclass

import dask
import dask.array as da
import numpy as np
from dask.sizeof import sizeof

from aprank import validation
from aprank.dask._steps import (
    negative_coef,
    optimal_ranks,
    rank_order,
    split_buckets,
    split_outcome,
)
from aprank.losses import RankingLoss, get_loss

__all__ = ["SplitResult", "SplitPart", "Anchors", "infer", "split_part", "settle", "tally"]

_LAST = np.iinfo(np.int64).max


@dataclass
class SplitPart:
    """One part of the query: its negatives in buckets, one per range between two anchors
    (see ``_steps.split_buckets``), and its positives.

    s, x, local : the negatives' scores, global indices and positions within the part, bucket
        by bucket; bounds : the buckets' offsets, one bucket per pair of adjacent anchors.
    pos_s, pos_x : the positives' scores and global indices (input order).
    start, size : the part's first global index and its number of samples.
    at_or_before : per candidate of the last split, this part's negatives at or before it.
    """

    s: np.ndarray
    x: np.ndarray
    local: np.ndarray
    bounds: np.ndarray
    pos_s: np.ndarray
    pos_x: np.ndarray
    start: int
    size: int
    at_or_before: np.ndarray


@sizeof.register(SplitPart)
def _sizeof_part(part: SplitPart) -> int:
    return sum(sizeof(a) for a in (part.s, part.x, part.local, part.bounds, part.pos_s, part.pos_x))


def split_part(scores, is_pos, start: int) -> SplitPart:
    """A part from its scores and boolean labels (validated by the caller): all its negatives
    in one bucket, between the two virtual anchors."""
    neg = np.flatnonzero(~is_pos)
    pos = np.flatnonzero(is_pos)
    return SplitPart(scores[neg], neg + start, neg, np.array([0, neg.size]), scores[pos],
                     pos + start, start, scores.shape[0], np.zeros(0, dtype=np.int64))


@dataclass
class Anchors:
    """Negatives of known global position j and rank r, in rank order, between two virtual
    ones (score +inf, j = 0, rank 1 and score -inf, j = N+1, rank P+1)."""

    s: np.ndarray
    x: np.ndarray
    j: np.ndarray
    r: np.ndarray
    rounds: int = 0

    @classmethod
    def ends(cls, n_neg: int, n_pos: int) -> Anchors:
        return cls(np.array([np.inf, -np.inf]), np.array([-1, _LAST]), np.array([0, n_neg + 1]),
                   np.array([1, n_pos + 1]))

    def open_ranges(self) -> np.ndarray:
        """Anchor k such that the range between anchors k and k+1 is not settled."""
        return np.flatnonzero((self.r[:-1] < self.r[1:]) & (np.diff(self.j) > 1))

    def add(self, s, x, j, r) -> Anchors:
        order = np.argsort(np.r_[self.j, j], kind="stable")
        return Anchors(np.r_[self.s, s][order], np.r_[self.x, x][order], np.r_[self.j, j][order],
                       np.r_[self.r, r][order], self.rounds + 1)

    def ranks_of(self, part: SplitPart) -> np.ndarray:
        """Ranks of a part's negatives once every range is settled: a bucket's negatives have
        its right anchor's rank (the left one's too, or the bucket holds just that anchor)."""
        return np.repeat(self.r[1:], np.diff(part.bounds))


def _samples(part: SplitPart, buckets, right_s, right_x, per_range: int):
    """Up to per_range negatives of each open bucket, evenly spaced in its (unordered)
    storage, the bucket's right anchor excluded; their scores, indices and bucket numbers."""
    a = part.bounds[buckets]
    b = part.bounds[buckets + 1]
    # the right anchor, when this part holds it, is stored last in its bucket
    held = b > a
    last = b[held] - 1
    held[held] = (part.s[last] == right_s[held]) & (part.x[last] == right_x[held])
    n = b - a - held
    m = np.minimum(n, per_range)
    gap = np.repeat(np.arange(n.size), m)
    k = np.arange(gap.size) - np.repeat(np.cumsum(m) - m, m)
    at = a[gap] + ((2 * k + 1) * n[gap]) // (2 * m[gap])
    return part.s[at], part.x[at], gap


def _split(part: SplitPart, buckets, right_s, right_x, cand_ptr, cand_s, cand_x) -> SplitPart:
    s, x, local, bounds, at_or_before = split_buckets(
        part.s, part.x, part.local, part.bounds, buckets, right_s, right_x, cand_ptr, cand_s,
        cand_x)
    return SplitPart(s, x, local, bounds, part.pos_s, part.pos_x, part.start, part.size,
                     at_or_before)


def _at_or_before(part: SplitPart) -> np.ndarray:
    return part.at_or_before


def settle(parts: list, positives: np.ndarray, n_neg: int, loss, samples: int = 64):
    """Run the rounds until every range of negatives is settled (see the module docstring).

    parts : dask Delayed SplitPart objects (persisted); positives : the P positive scores in
    rank order; samples : pivots per open range and round, over all parts together.
    Returns the anchors and the parts, persisted, with one bucket per pair of anchors.
    """
    anchors = Anchors.ends(n_neg, positives.shape[0])
    per_range = max(1, -(-int(samples) // len(parts)))
    while True:
        gaps = anchors.open_ranges()
        if gaps.size == 0:
            return anchors, parts
        right = (anchors.s[gaps + 1], anchors.x[gaps + 1])
        got = dask.compute(*[dask.delayed(_samples)(p, gaps, *right, per_range) for p in parts])
        s, x, gap = (np.concatenate(a) for a in zip(*got))
        order = rank_order(s, x)       # ranges are disjoint: this also groups them by range
        s, x, gap = s[order], x[order], gap[order]
        cand_ptr = np.r_[0, np.cumsum(np.bincount(gap, minlength=gaps.size))]
        parts = list(dask.persist(*[dask.delayed(_split)(p, gaps, *right, cand_ptr, s, x)
                                    for p in parts]))
        j = np.sum(dask.compute(*[dask.delayed(_at_or_before)(p) for p in parts]), axis=0)
        r = optimal_ranks(positives, s, j, n_neg, loss=loss, lo=anchors.r[gaps][gap],
                          hi=anchors.r[gaps + 1][gap])
        anchors = anchors.add(s, x, j, r)


@dataclass
class Tally:
    """What one part reports once its negatives' ranks are known."""

    ranks: np.ndarray      # its negatives' ranks, in the part's bucket order
    count: np.ndarray      # (P+2,) negatives at each rank
    pairs: float           # sum of (P - r + 1) (s - centre) over its negatives


def tally(part: SplitPart, anchors: Anchors, n_pos: int, centre: float) -> Tally:
    r = anchors.ranks_of(part)
    return Tally(r, np.bincount(r, minlength=n_pos + 2),
                 float(((n_pos - r + 1) * (part.s - centre)).sum()))


@dataclass
class SplitResult:
    """The most violated ranking of a split query (see ``aprank.InferenceResult``).

    Attributes
    ----------
    ranks : dask.array.Array
        The interleaving ranks, one per sample in input order, chunked as the scores.
    coef : dask.array.Array
        Psi's coefficients, one per sample in input order, chunked as the scores.
    loss : float
        Delta(R*, R) of the most violated ranking.
    objective : float
        The constraint violation (>= 0).
    algorithm : str
        "qs", whose result this is.
    n_rounds : int
        Rounds of pivots the solve took.
    n_pivots : int
        Negatives whose rank was computed on the client.
    """

    ranks: da.Array
    coef: da.Array
    loss: float
    objective: float
    algorithm: str
    n_rounds: int
    n_pivots: int


def _checked_part(scores, labels, start: int) -> SplitPart:
    s = validation.as_scores(scores)
    y = validation.as_labels(labels, s.shape[0])
    return split_part(s, y, start)


def _outputs(part: SplitPart, t: Tally, pos_x, pos_ranks, pos_coef, loss, n_pos: int,
             n_neg: int):
    ranks = np.ones(part.size, dtype=np.int64)
    coef = np.zeros(part.size)
    ranks[part.local] = t.ranks
    coef[part.local] = negative_coef(loss, t.ranks, n_pos, n_neg)
    mine = (pos_x >= part.start) & (pos_x < part.start + part.size)
    ranks[pos_x[mine] - part.start] = pos_ranks[mine]
    coef[pos_x[mine] - part.start] = pos_coef[mine]
    return ranks, coef


def _positives_of(part: SplitPart):
    return part.pos_s, part.pos_x


def _sums_of(t: Tally):
    return t.count, t.pairs


def gather_positives(parts: list):
    """(scores, global indices) of every positive, in rank order."""
    got = dask.compute(*[dask.delayed(_positives_of)(p) for p in parts])
    s, x = (np.concatenate(a) for a in zip(*got))
    order = rank_order(s, x)
    return s[order], x[order]


def infer(scores, labels, *, loss="ap", samples: int = 64) -> SplitResult:
    """Exact loss-augmented inference (AP or NDCG) for ONE query split over dask chunks.

    The result of ``aprank.infer(scores, labels, loss=loss, algorithm="qs")`` without
    gathering the negatives (see the module docstring).

    Parameters
    ----------
    scores : dask.array.Array of shape (n,)
        Finite scores (or anything ``dask.array.asarray`` takes).
    labels : dask.array.Array of shape (n,)
        Bool, {0, 1} or {-1, +1}; rechunked like ``scores``.
    loss : str or Loss, default "ap"
        A ranking loss the kernels know: "ap", "ndcg" or an ``NDCG(discount=...)``.
    samples : int, default 64
        Pivots per open range and round (more: fewer rounds, more data per round).

    Returns
    -------
    SplitResult
        Ranks and coefficients as dask arrays, loss and objective as floats.

    Raises
    ------
    ValueError
        For bad input (as ``aprank.infer``) or no positive sample.
    """
    loss = get_loss(loss)
    if loss.kind != "ranking" or not isinstance(loss, RankingLoss):
        raise ValueError(f"split inference serves ranking losses (AP, NDCG), not {loss.name!r}")
    loss.kernel_spec(1)    # before any work: NotImplementedError for a loss the kernels lack
    if int(samples) < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")
    scores = da.asarray(scores)
    labels = da.asarray(labels)
    if scores.ndim != 1 or labels.ndim != 1 or scores.shape[0] != labels.shape[0]:
        raise ValueError(f"scores and labels must be 1-D and equally long, got shapes "
                         f"{scores.shape} and {labels.shape}")
    if scores.shape[0] == 0:
        raise ValueError("scores is empty: there is nothing to rank")
    labels = labels.rechunk(scores.chunks)
    starts = np.r_[0, np.cumsum(scores.chunks[0])[:-1]]
    parts = list(dask.persist(*[
        dask.delayed(_checked_part)(sb, yb, int(start)) for sb, yb, start in
        zip(scores.to_delayed().ravel(), labels.to_delayed().ravel(), starts)]))
    pos_s, pos_x = gather_positives(parts)
    P = pos_s.shape[0]
    N = int(scores.shape[0]) - P
    if P == 0:
        raise ValueError(f"loss {loss.name!r} is undefined without positive samples, and the "
                         f"query has none")
    if N == 0:    # nothing can be inverted: the ground truth, loss 0
        ones = da.ones(scores.shape, chunks=scores.chunks, dtype=np.int64)
        return SplitResult(ones, da.zeros(scores.shape, chunks=scores.chunks), 0.0, 0.0, "qs",
                           0, 0)
    anchors, parts = settle(parts, pos_s, N, loss, samples)
    centre = float(pos_s[P // 2])
    tallies = list(dask.persist(*[dask.delayed(tally)(p, anchors, P, centre) for p in parts]))
    counts = dask.compute(*[dask.delayed(_sums_of)(t) for t in tallies])
    pos_ranks, pos_coef, value, objective = split_outcome(
        loss, pos_s, np.sum([c for c, _ in counts], axis=0), sum(p for _, p in counts), N)
    pieces = [dask.delayed(_outputs, nout=2)(p, t, pos_x, pos_ranks, pos_coef, loss, P, N)
              for p, t in zip(parts, tallies)]
    sizes = scores.chunks[0]
    ranks = da.concatenate([da.from_delayed(r, (m,), np.int64)
                            for (r, _), m in zip(pieces, sizes)])
    coef = da.concatenate([da.from_delayed(c, (m,), np.float64)
                           for (_, c), m in zip(pieces, sizes)])
    return SplitResult(ranks, coef, value, objective, "qs", anchors.rounds, int(anchors.j.size - 2))
