"""Losses of the rank SVM family and their per-negative decompositions.

Notation (as in docs/references.md): P positives, N negatives; positives and negatives are
each taken in rank order; the *interleaving rank* of a negative is 1 + the number of positives
ranked above it (1 ... P+1).

Ranking losses (:class:`AveragePrecision`, :class:`NDCG`) are QS-suitable (Mohapatra et al. 2018,
section 4.1): the loss of a ranking is sum_j delta_j(rank of the j-th negative). Each exposes

* :meth:`~RankingLoss.delta` -- delta_j(i), from the definition;
* :meth:`~RankingLoss.increment` -- delta_j(i+1) - delta_j(i) in O(1), condition (C4);
* :meth:`~RankingLoss.from_pattern` -- the loss from the +/- pattern (condition (C1)).

These methods are the statement of each loss. The increment (the *step*) is evaluated again by
the compiled kernels (``loss_step`` of ``aprank/inference/_kernel.pxd``), by the torch search
(``_Loss.step`` of ``aprank/torch/_ops.py``) and by the Triton kernel (``_loss_step`` of
``aprank/torch/_triton.py``), each with the statement's operations in the statement's order, so
that all of them agree to the last bit: ties between candidate ranks are decided by the sign of
sums of steps, and one ulp can move a rank. The loss of a pattern
(:meth:`~RankingLoss.from_pattern`: its per-positive :meth:`~RankingLoss.pattern_terms`, added
in order from the first positive with each addition's rounding error kept, then scaled once) is
the compiled driver's (``finish`` of ``aprank/inference/ranking/_driver_cy.pyx``) to the last
bit, and its terms and scale are the torch and Triton implementations' (which add the terms in
their own order).
``tests/test_loss_statement.py`` sweeps every implementation against the statement, bit for bit.
The kernels name the loss they compute by a :class:`KernelLoss`.

The ranking losses share the joint feature map of Mohapatra et al. (2018), eq. 1, whose
coefficients for the ground-truth ranking are 1/P for a positive and -1/N for a negative, and
for any ranking :meth:`~RankingLoss.coef`: an integer numerator times the one reciprocal
1 / (P N), as every implementation computes them.

Each loss names the *problem kind* it belongs to (``kind``: "ranking" or "labelling"), which
decides the algorithms of the registry that may serve it, and hands the compiled driver its own
kernel specification (:meth:`RankingLoss.kernel_spec`). A ranking loss the kernels do not know
has none, so no compiled algorithm can run it by mistake; the brute-force oracle and user
algorithms that work from its Python methods still can.

:class:`ZeroOne` is the weighted 0-1 loss of the binary structural SVM (Dokania et al. 2014, eq. 7).
Its output is a labelling, not a ranking, and its joint feature map is its own.

:class:`PrecisionAtK` is 1 - precision@k of a subset of k items (Mensink et al. 2011, kind "topk");
its score function is the c-star model's t's + t'Ft.

:class:`LatentAP` and :class:`LatentSSVMAP` are the AP loss of a ranking of bags with latent
rows (Behl 2015, kind "latent"), one per formulation of the constraint.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

__all__ = ["Loss", "RankingLoss", "AveragePrecision", "NDCG", "ZeroOne", "PairwiseZeroOne",
           "PrecisionAtK", "LatentAP", "LatentSSVMAP", "KernelLoss", "KernelSpec",
           "get_loss",
           "register_loss", "unregister_loss", "LOSSES"]


class KernelLoss(IntEnum):
    """The losses the compiled kernels, the torch search and the Triton kernel compute.

    A :class:`KernelSpec`'s ``code``. The values are the kernels' own (``LOSS_AP``,
    ``LOSS_NDCG`` in ``aprank/inference/_kernel.pxd``, whose code runs without Python objects):
    the compiled modules check at import that the two agree. A loss joins by a member here, its
    kernel value there, and its step in every implementation (see the module's docstring).

    Parameters
    ----------
    value : int
        ``KernelLoss(value)`` is the member of that value (``KernelLoss(1)`` is ``NDCG``);
        ValueError for any other.
    names, module, qualname, type, start, boundary
        The functional API of :class:`enum.Enum`, which makes another enumeration; not for
        use here.
    """

    #: :class:`AveragePrecision` (kernel code ``LOSS_AP``).
    AP = 0
    #: :class:`NDCG`, with the default discount or a given one (kernel code ``LOSS_NDCG``).
    NDCG = 1

    @property
    def label(self) -> str:
        """The loss's registered name ("ap", "ndcg"), by which error messages name it."""
        return self.name.lower()

    @classmethod
    def lookup(cls, code) -> KernelLoss | None:
        """The member a code names: a member itself, or its label ("ap", "ndcg"); None for
        anything else (the caller refuses it in its own words)."""
        if isinstance(code, cls):
            return code
        if isinstance(code, str):
            return _KERNEL_LOSS_LABELS.get(code)
        return None

    @classmethod
    def of(cls, code, refusal: str) -> KernelLoss:
        """The member ``code`` names (as :meth:`lookup`); a ValueError that starts with
        ``refusal`` (e.g. "the compiled kernels compute") and lists the labels otherwise."""
        member = cls.lookup(code)
        if member is None:
            raise ValueError(f"{refusal} the losses {cls.labels()}, not {code!r}")
        return member

    @classmethod
    def labels(cls) -> list:
        """Every member's label, in value order."""
        return [member.label for member in cls]


_KERNEL_LOSS_LABELS = {member.label: member for member in KernelLoss}


@dataclass(frozen=True)
class KernelSpec:
    """What the compiled ranking driver needs to know of a loss.

    Attributes
    ----------
    code : KernelLoss
        The loss the kernels compute. Its label ("ap", "ndcg") is taken for it; any other
        value is kept as given, and the driver refuses it.
    discount : ndarray or None
        NDCG discount table D(m) = discount[m-1] (None: the kernels compute 1/log2(1+m)).
    """

    code: KernelLoss
    discount: np.ndarray | None = None

    def __post_init__(self):
        member = KernelLoss.lookup(self.code)
        if member is not None:
            object.__setattr__(self, "code", member)


class Loss:
    """Base class. ``name`` is the key used by the algorithm registry."""

    name: str = ""
    #: The problem kind the loss belongs to (see ``aprank.kinds()``).
    kind: str = ""
    #: True when the loss is undefined without positives (AP, NDCG).
    needs_positives: bool = True
    #: True when the structured output is a labelling rather than a ranking (the 0-1 loss).
    labelling: bool = False

    @property
    def class_mean_truth(self) -> bool:
        """Whether :meth:`truth_coef` is 1/P for a positive and -1/N for a negative of its
        query (0 where a class is missing): the joint feature map of Mohapatra et al. (2018), eq. 1,
        which the compiled driver writes in its own pass instead of calling :meth:`truth_coef`."""
        return False

    def truth_coef(self, is_pos, n_pos=None, n_neg=None) -> np.ndarray:
        """Coefficients c* with Psi(X, R*) = sum_k c*_k psi(x_k) for the ground truth.

        ``is_pos`` describes one query; for several queries pass, per sample, the number of
        positives ``n_pos`` and negatives ``n_neg`` of its query.
        """
        is_pos = np.asarray(is_pos, dtype=bool)
        if n_pos is None:
            n_pos = np.full(is_pos.shape, is_pos.sum())
            n_neg = is_pos.size - n_pos
        return self._truth_coef(is_pos, np.asarray(n_pos, dtype=float),
                                np.asarray(n_neg, dtype=float))

    def _truth_coef(self, is_pos, n_pos, n_neg) -> np.ndarray:
        raise NotImplementedError

    def identity(self) -> tuple:
        """Everything that defines the loss: its class and parameters. Two losses with equal
        identities give equal values everywhere (used for equality, hashing and to tell whether
        cutting-plane constraints can be reused)."""
        return (type(self).__module__, type(self).__qualname__, self.name)

    def __eq__(self, other) -> bool:
        return isinstance(other, Loss) and self.identity() == other.identity()

    def __hash__(self) -> int:
        return hash(self.identity())

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RankingLoss(Loss):
    """A QS-suitable ranking loss (Mohapatra et al. 2018, section 4.1).

    A loss of your own subclasses this with a ``name`` of its own and implements ``delta``,
    ``increment`` and ``from_pattern``; the oracle ``brute`` and user algorithms registered for
    its name can then serve it. The compiled algorithms serve only the losses whose
    :meth:`kernel_spec` they know.
    """

    kind = "ranking"

    @property
    def class_mean_truth(self) -> bool:
        # a subclass overriding _truth_coef has a joint feature map of its own
        return type(self)._truth_coef is RankingLoss._truth_coef

    def _truth_coef(self, is_pos, n_pos, n_neg):
        # 1/P for a positive, -1/N for a negative; nothing when a class is missing
        both = (n_pos > 0) & (n_neg > 0)
        with np.errstate(divide="ignore"):
            return np.where(both, np.where(is_pos, 1.0 / n_pos, -1.0 / n_neg), 0.0)

    def coef(self, ranks, is_pos, P, N) -> np.ndarray:
        """Coefficients c with Psi(X, R) = sum_k c_k psi(x_k) for the ranking R whose samples
        have the interleaving ranks ``ranks`` (as ``aprank.infer`` reports them: a positive's is
        1 + the negatives above it, a negative's 1 + the positives above it).

        The statement of the coefficients: (N + 2 - 2 r) for a positive and (P + 2 - 2 r) for
        a negative (Mohapatra et al. 2018, eq. 1, corrected as docs/references.md says), each an
        exact integer, times the one reciprocal 1 / (P N); every implementation computes them
        with these operations in this order, so that all agree to the last bit.

        Parameters
        ----------
        ranks : array-like of int
            Interleaving ranks, 1 ... N + 1 for a positive and 1 ... P + 1 for a negative.
        is_pos : array-like of bool
            Which samples are positive (broadcast against ``ranks``).
        P, N : int or array-like of int
            The positives and negatives of each sample's query (both at least 1).

        Returns
        -------
        ndarray of float64
        """
        ranks = np.asarray(ranks, dtype=np.int64)
        P, N = np.asarray(P, dtype=np.int64), np.asarray(N, dtype=np.int64)
        numerator = np.where(is_pos, N, P) + 2 - 2 * ranks
        return numerator * (1.0 / (P.astype(np.float64) * N.astype(np.float64)))

    def delta(self, j, i, P: int, N: int) -> np.ndarray:
        """delta_j(i): loss contributed by the j-th negative at interleaving rank i (1-based)."""
        raise NotImplementedError

    def increment(self, j, i, P: int, N: int) -> np.ndarray:
        """delta_j(i+1) - delta_j(i), for 1 <= i <= P."""
        raise NotImplementedError

    def from_pattern(self, neg_above, P: int, N: int) -> np.ndarray:
        """Loss of the ranking whose k-th positive has ``neg_above[..., k-1]`` negatives above it.

        ``neg_above`` is non-decreasing along its last axis; leading axes are batch axes.
        """
        raise NotImplementedError

    def pattern_terms(self, neg_above, P: int, N: int) -> np.ndarray:
        """Per positive, its term of the loss of the pattern ``neg_above`` (as
        :meth:`from_pattern` takes it), before the loss's one scaling: :meth:`from_pattern`
        adds them in order (the compiled driver's compensated sum) and scales the sum once. A
        loss whose :meth:`from_pattern` is not of that form need not have them."""
        raise NotImplementedError(
            f"the loss {self.name!r} ({type(self).__name__}) states no per-positive terms")

    def kernel_spec(self, n_max: int, table: bool = False) -> KernelSpec:
        """The compiled driver's specification of this loss for queries of up to ``n_max``
        samples (``table``: precompute per-position constants, worth it for O(PN) scans).

        NotImplementedError for a loss the compiled kernels do not know."""
        raise NotImplementedError(
            f"the compiled kernels do not know the loss {self.name!r} ({type(self).__name__}); "
            "only algorithms that work from its Python methods (the oracle 'brute', or a user "
            "algorithm) can serve it")


def _ordered_sum(terms) -> np.ndarray:
    """Sum along the last axis, added in order from the first term with every addition's
    rounding error kept apart and added at the end (Knuth's two-sum): the compiled driver's
    sum of a pattern's loss terms, to the last bit.

    The running sum hi_k = hi_{k-1} + x_k is a cumulative sum (NumPy's adds in order), and
    each addition's error, (hi_{k-1} - (hi_k - b)) + (x_k - b) with b = hi_k - hi_{k-1}, is
    then known at once; the errors are added in order too, and hi + lo rounds once. Both
    cumulative sums start from 0.0, as the driver's sums do.

    Parameters
    ----------
    terms : array-like of float64
        The terms along the last axis; leading axes are batch axes.

    Returns
    -------
    ndarray of float64
        The sums, one per batch entry (0-d for 1-d terms).
    """
    x = np.asarray(terms, dtype=np.float64)
    zero = np.zeros(x.shape[:-1] + (1,))
    run = np.cumsum(np.concatenate([zero, x], axis=-1), axis=-1)
    before, hi = run[..., :-1], run[..., 1:]
    b = hi - before
    error = (before - (hi - b)) + (x - b)
    lo = np.cumsum(np.concatenate([zero, error], axis=-1), axis=-1)
    return run[..., -1] + lo[..., -1]


class AveragePrecision(RankingLoss):
    """1 - AP (non-interpolated average precision) of a ranking, Mohapatra et al. (2018), section
    2.2."""

    name = "ap"

    def delta(self, j, i, P, N):
        # Yue et al. (2007): delta_j(i) = (1/P) sum_{k=i}^{P} (j/(j+k) - (j-1)/(j+k-1))
        j, i = np.broadcast_arrays(np.asarray(j, dtype=float), np.asarray(i, dtype=float))
        k = np.arange(1, P + 1, dtype=float)
        terms = j[..., None] / (j[..., None] + k) - (j[..., None] - 1) / (j[..., None] + k - 1)
        return np.where(k >= i[..., None], terms, 0.0).sum(axis=-1) / P

    def increment(self, j, i, P, N):
        # -(1/P) i / ((j+i)(j+i-1)): the printed derivative drops the factor 1/P
        # (docs/references.md). The statement of the step: every implementation divides the
        # negated i by (P a)(a - 1), a = j + i, in this order (see the module's docstring).
        i = np.asarray(i, dtype=float)
        a = np.asarray(j, dtype=float) + i
        return -i / (P * a * (a - 1.0))

    def pattern_terms(self, neg_above, P, N):
        # 1 - precision at the k-th positive is n_k / (k + n_k); no cancellation near AP = 1
        n = np.asarray(neg_above, dtype=float)
        k = np.arange(1, P + 1, dtype=float)
        return n / (k + n)

    def from_pattern(self, neg_above, P, N):
        # The statement of the value: the terms' ordered sum divided by P, as every
        # implementation computes it (see the module's docstring).
        return _ordered_sum(self.pattern_terms(neg_above, P, N)) / P

    def kernel_spec(self, n_max, table=False):
        return _AP_SPEC


#: The specifications that depend on nothing (one object each: a small query's call costs less
#: than building one).
_AP_SPEC = KernelSpec(KernelLoss.AP)
_NDCG_SPEC = KernelSpec(KernelLoss.NDCG)

#: D(1), D(2), ... of the default discount, as far as a call has needed it (read-only; a longer
#: table replaces it, never changes it).
_DEFAULT_TABLE = np.zeros(0)
_DEFAULT_TABLE.setflags(write=False)


def _default_discount(m) -> np.ndarray:
    """D(m) = 1/log2(1 + m) at 1-based positions m.

    Each value comes from C's log2 (``math.log2``), the function the compiled kernels call:
    NumPy's and torch's vectorised log2 differ from it in the last bit at some m (NumPy's on
    CPUs with AVX-512), and one ulp of the discount is one ulp of a step."""
    global _DEFAULT_TABLE
    m = np.asarray(m)
    need = int(m.max(initial=0))
    table = _DEFAULT_TABLE
    if table.size < need:
        size = max(need, 2 * table.size)
        grown = np.empty(size)
        grown[:table.size] = table
        grown[table.size:] = [1.0 / math.log2(1.0 + k) for k in range(table.size + 1, size + 1)]
        grown.setflags(write=False)
        _DEFAULT_TABLE = table = grown
    return table[m - 1]


class NDCG(RankingLoss):
    """1 - NDCG with binary relevance, Mohapatra et al. (2018), section 2.2.

    Parameters
    ----------
    discount : array-like, optional
        ``discount[m-1]`` is D(m), the discount at position m. Default D(m) = 1/log2(1+m).
        A user discount must be finite, non-negative, non-increasing and convex with D(1) > 0:
        the exact algorithms rely on convexity (docs/references.md; Mohapatra et al. 2018, Remark 1
        shows the greedy failing without it). It must cover every position of the queries it scores.
    """

    name = "ndcg"

    def __init__(self, discount=None):
        self.discount = None if discount is None else self._check_discount(discount)

    def __repr__(self) -> str:
        if self.discount is None:
            return "NDCG()"
        return f"NDCG(discount=<{self.discount.size} values>)"

    def identity(self) -> tuple:
        # the whole discount, not its repr: two discounts of equal length must not compare equal
        return super().identity() + (None if self.discount is None else self.discount.tobytes(),)

    @staticmethod
    def _check_discount(discount) -> np.ndarray:
        d = np.array(discount, dtype=np.float64)  # a private copy: later caller edits can't leak in
        if d.ndim != 1 or d.size == 0:
            raise ValueError("discount must be a non-empty 1-D array: discount[m-1] = D(m)")
        if not np.isfinite(d).all():
            raise ValueError("discount must be finite")
        if d[0] <= 0 or (d < 0).any():
            raise ValueError("discount must be non-negative with D(1) > 0")
        tol = 4 * np.finfo(float).eps * float(np.abs(d).max())
        rises = np.flatnonzero(np.diff(d) > tol)
        if rises.size:
            m = int(rises[0]) + 1
            raise ValueError(
                f"discount must be non-increasing: D({m + 1}) = {d[m]} > D({m}) = {d[m - 1]}; "
                "the exact NDCG algorithms need a non-increasing, convex discount"
            )
        dips = np.flatnonzero(d[2:] - 2 * d[1:-1] + d[:-2] < -tol)
        if dips.size:
            m = int(dips[0]) + 2
            raise ValueError(
                f"discount must be convex: D({m - 1}) + D({m + 1}) < 2 D({m}); the greedy and "
                "quicksort algorithms are exact only for convex discounts ("
                "Mohapatra et al. (2018), Remark 1)"
            )
        d.setflags(write=False)
        return d

    def D(self, m) -> np.ndarray:
        """The discount at 1-based positions m (integers)."""
        m = np.asarray(m)
        if m.size and int(m.min()) < 1:
            raise ValueError(f"discount positions start at 1, got {int(m.min())}")
        if self.discount is None:
            return _default_discount(m)
        if m.size and int(m.max()) > self.discount.size:
            raise ValueError(
                f"discount has {self.discount.size} values but position {int(m.max())} is needed"
            )
        return self.discount[m - 1]

    def _norm(self, P):
        # sum_{k<=P} D(k), added in order from D(1) as the kernels add it (np.sum adds pairwise)
        return float(np.cumsum(self.D(np.arange(1, P + 1)))[-1])

    def delta(self, j, i, P, N):
        # Mohapatra et al. (2018), Prop. 7: delta_j(i) = (D(i+j-1) - D(P+j)) / sum_{k<=P} D(k)
        j, i = np.broadcast_arrays(np.asarray(j), np.asarray(i))
        return (self.D(i + j - 1) - self.D(P + j)) / self._norm(P)

    def increment(self, j, i, P, N):
        # The statement of the step: the difference of discounts times the reciprocal of the
        # norm, as every implementation computes it (see the module's docstring).
        j, i = np.broadcast_arrays(np.asarray(j), np.asarray(i))
        return (self.D(i + j) - self.D(i + j - 1)) * (1.0 / self._norm(P))

    def pattern_terms(self, neg_above, P, N):
        n = np.asarray(neg_above)
        k = np.arange(1, P + 1)
        return self.D(k) - self.D(k + n)

    def from_pattern(self, neg_above, P, N):
        # The statement of the value: the terms' ordered sum times the reciprocal of the norm,
        # as the step scales by it and every implementation computes it (see the module's
        # docstring).
        return _ordered_sum(self.pattern_terms(neg_above, P, N)) * (1.0 / self._norm(P))

    def kernel_spec(self, n_max, table=False):
        """The user discount, checked to cover n_max positions; with ``table=True`` also the
        default discount as a table (worth it for O(PN) scans, not for the O(N log P) ones)."""
        if self.discount is not None:
            if self.discount.size < n_max:
                raise ValueError(
                    f"discount has {self.discount.size} values but a query has {n_max} samples"
                )
            return KernelSpec(KernelLoss.NDCG, self.discount)
        if table:
            return KernelSpec(KernelLoss.NDCG, _default_discount(np.arange(1, n_max + 1)))
        return _NDCG_SPEC


class ZeroOne(Loss):
    """Weighted 0-1 loss of the binary structural SVM, Dokania et al. (2014), eq. 7.

    Delta = (J * #positives labelled 0 + #negatives labelled 1) / (J P + N), J = N / P by default
    (per query). The joint feature map is Psi(X, Y) = sum_i v_i (2 y_i - 1) psi(x_i) / (2 (J P + N))
    with v_i = J for positives and 1 for negatives, which makes the 1-slack structural SVM the
    class-weighted hinge-loss SVM.

    Parameters
    ----------
    J : float >= 0, optional
        The weight of a positive; None (the default) for N / P per query.
    """

    name = "zero-one"
    kind = "labelling"
    labelling = True

    def __init__(self, J=None):
        if J is not None:
            J = float(J)
            if not np.isfinite(J) or J < 0:
                raise ValueError(f"J must be a finite number >= 0, got {J}")
        self.J = J
        self.needs_positives = J is None

    def __repr__(self) -> str:
        return "ZeroOne()" if self.J is None else f"ZeroOne(J={self.J})"

    def identity(self) -> tuple:
        return super().identity() + (self.J,)

    def weights(self, is_pos, n_pos=None, n_neg=None):
        """Per-sample weights v and normalisers J P + N (scalars for one query, or per sample
        when the per-sample query counts ``n_pos``, ``n_neg`` are given)."""
        is_pos = np.asarray(is_pos, dtype=bool)
        if n_pos is None:
            n_pos = float(is_pos.sum())
            n_neg = is_pos.size - n_pos
        n_pos, n_neg = np.asarray(n_pos, dtype=float), np.asarray(n_neg, dtype=float)
        if self.J is not None:
            J = np.full(n_pos.shape, self.J)
        else:   # J = N / P per query; a query without positives only weighs its negatives
            J = np.divide(n_neg, n_pos, out=np.zeros(n_pos.shape), where=n_pos > 0)
        return np.where(is_pos, J, 1.0), J * n_pos + n_neg

    def _truth_coef(self, is_pos, n_pos, n_neg):
        v, z = self.weights(is_pos, n_pos, n_neg)
        signed = v * np.where(is_pos, 1.0, -1.0)
        return np.divide(signed, 2 * z, out=np.zeros(signed.shape), where=z > 0)


class PairwiseZeroOne(ZeroOne):
    """The weighted 0-1 loss of Dokania et al. (2014), eq. 7 over one labelling of linked samples.

    Kind "pairwise" (HOB-SVM). The same Delta as :class:`ZeroOne`; the joint feature and
    inference belong to the pairwise model (pair terms make the labelling one joint problem).

    Parameters
    ----------
    J : float >= 0, optional
        The weight of a positive; None (the default) for N / P. The default needs a negative
        sample: with every sample positive, J = N / P = 0 and J P + N = 0 make the loss 0/0,
        and :meth:`weights` raises a ValueError rather than call every labelling loss-free.
        Pass J explicitly there (``PairwiseZeroOne(J=1)``: the plain 0-1 loss, the fraction
        of samples labelled wrong).
    """

    name = "pairwise-zero-one"
    kind = "pairwise"

    def __repr__(self) -> str:
        return "PairwiseZeroOne()" if self.J is None else f"PairwiseZeroOne(J={self.J})"

    def weights(self, is_pos, n_pos=None, n_neg=None):
        """Per-sample weights v and the normaliser J P + N, as :meth:`ZeroOne.weights`.

        Parameters
        ----------
        is_pos : array-like of bool (n,)
            The labelling's positives.
        n_pos, n_neg : array-like, optional
            Per-sample counts of the positives and negatives of its labelling (default: those
            of ``is_pos``, one labelling).

        Returns
        -------
        v : ndarray of float64 (n,)
            J for a positive, 1 for a negative.
        z : float or ndarray
            J P + N.

        Raises
        ------
        ValueError
            With the default J = N / P and every sample positive (the loss would be 0/0).
        """
        v, z = super().weights(is_pos, n_pos, n_neg)
        if self.J is None and np.any(np.asarray(z) == 0) and np.any(is_pos):
            raise ValueError("the pairwise 0-1 loss with its default J = N / P needs a negative "
                             "sample: with every sample positive J P + N is 0 and the loss 0/0; "
                             "pass J explicitly (PairwiseZeroOne(J=1) is the plain 0-1 loss)")
        return v, z


class LatentAP(AveragePrecision):
    """The AP loss of a ranking of bags whose scoring rows are latent (Behl 2015, kind
    "latent"), with latent AP-SVM's constraint (eq. 3.3): the positives' rows fixed, the
    negatives' rows free and shared by the loss-augmented and ground-truth terms."""

    name = "latent-ap"
    kind = "latent"

    def kernel_spec(self, n_max, table=False):
        return RankingLoss.kernel_spec(self, n_max, table)


class LatentSSVMAP(LatentAP):
    """The AP loss of a ranking of bags with the latent SSVM's constraint (Behl 2015, eq. A.1):
    every row free in the loss-augmented term, the ground truth at the positives' imputed rows
    and the negatives' least favourable ones."""

    name = "latent-ssvm"


class PrecisionAtK(Loss):
    """1 - precision@k of a subset of k items (Mensink et al. 2011).

    Delta(t, z) = <t, 1 - z> / k, with t the indicator of the k chosen items and z the
    relevance (Mensink et al. 2011, section 4). The output is a subset, not a ranking (kind "topk"):
    the loss depends only on which items are in the top k, and the score function of Mensink et al.
    (2011), eq. 6 is invariant to the order within and outside the top k.

    Parameters
    ----------
    k : int >= 1, optional
        The subset size; None (the default) for the break-even point: k = the number of
        relevant items of each query, so that the only loss-free subset is the relevant set.
    """

    name = "precision@k"
    kind = "topk"
    labelling = True

    def __init__(self, k=None):
        if k is not None:
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
                raise ValueError(f"k must be an integer >= 1 or None (break-even), got {k!r}")
            k = int(k)
        self.k = k
        self.needs_positives = k is None

    def __repr__(self) -> str:
        return "PrecisionAtK()" if self.k is None else f"PrecisionAtK(k={self.k})"

    def identity(self) -> tuple:
        return super().identity() + (self.k,)

    def k_of(self, n_relevant) -> np.ndarray:
        """k per query, from the queries' numbers of relevant items."""
        n_relevant = np.asarray(n_relevant, dtype=np.int64)
        return n_relevant.copy() if self.k is None else np.full(n_relevant.shape, self.k)

    def delta(self, t, z, k) -> float:
        """Delta(t, z) = <t, 1 - z> / k for one query (t, z 0/1 vectors)."""
        t, z = np.asarray(t, dtype=float), np.asarray(z, dtype=float)
        return float(t @ (1.0 - z)) / k


#: Losses by name, as accepted by ``aprank.infer(..., loss=...)``; see :func:`register_loss`.
LOSSES = {"ap": AveragePrecision(), "ndcg": NDCG(), "zero-one": ZeroOne(),
          "precision@k": PrecisionAtK(), "pairwise-zero-one": PairwiseZeroOne(),
          "latent-ap": LatentAP(), "latent-ssvm": LatentSSVMAP()}
_BUILTIN_LOSSES = frozenset(LOSSES)


def get_loss(loss) -> Loss:
    """A Loss from a name in :data:`LOSSES` or a Loss instance.

    An instance whose name is registered must be of the registered loss's own class: the
    algorithms serving that name compute that loss, so an impostor (a subclass, or another class
    reusing the name) would get its answer silently. A loss of your own takes a name of its own.

    Parameters
    ----------
    loss : str or Loss
        A name in :data:`LOSSES` or a Loss instance.

    Returns
    -------
    Loss
        The registered loss of that name, or ``loss`` itself.

    Raises
    ------
    ValueError
        For an unknown name, or an instance that takes a registered name but is not that
        loss's class.
    """
    if isinstance(loss, Loss):
        known = LOSSES.get(loss.name)
        if known is not None and type(loss) is not type(known):
            raise ValueError(
                f"a loss named {loss.name!r} must be a {type(known).__name__}, got "
                f"{type(loss).__name__}: the algorithms serving {loss.name!r} compute that loss; "
                "give your loss a name of its own")
        return loss
    try:
        return LOSSES[loss]
    except (KeyError, TypeError):
        raise ValueError(f"unknown loss {loss!r}; choose one of {sorted(LOSSES)} or pass a "
                         "Loss") from None


def register_loss(loss: Loss) -> Loss:
    """Make ``loss`` known by its name (``infer(..., loss=name)``, ``crosscheck``, user
    algorithms).

    The name must be new: built-in losses are never replaced. Per process, like every
    registration.

    Parameters
    ----------
    loss : Loss
        An instance with a non-empty ``name`` of its own and its problem ``kind``.

    Returns
    -------
    Loss
        ``loss``.
    """
    if not isinstance(loss, Loss):
        raise TypeError(f"register_loss takes a Loss instance, got {type(loss).__name__}")
    if not isinstance(loss.name, str) or not loss.name:
        raise ValueError(f"a loss needs a non-empty string name, got {loss.name!r}")
    if not isinstance(loss.kind, str) or not loss.kind:
        raise ValueError(f"loss {loss.name!r} must say its problem kind (e.g. kind = 'ranking')")
    if loss.name in LOSSES:
        raise ValueError(f"a loss named {loss.name!r} is already registered")
    LOSSES[loss.name] = loss
    return loss


def unregister_loss(name: str) -> None:
    """Forget a loss added by :func:`register_loss` (built-in losses stay).

    Parameters
    ----------
    name : str
        The loss's name.
    """
    if name in _BUILTIN_LOSSES:
        raise ValueError(f"{name!r} is a built-in loss and cannot be removed")
    if name not in LOSSES:
        raise ValueError(f"no loss named {name!r} is registered")
    del LOSSES[name]
