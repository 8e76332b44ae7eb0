"""One statement of each loss's step, value and coefficients, held to the last bit by every
implementation.

The step of a ranking loss, delta_j(i+1) - delta_j(i), is stated once, by the loss objects of
aprank.losses (``AveragePrecision.increment``, ``NDCG.increment``), and evaluated again by the
compiled kernels (``loss_step`` of _kernel.pxd), the torch search (``_Loss.step``) and the
Triton kernel (``_loss_step``), each with the statement's operations in its order. The search
decides between candidate ranks by the sign of sums of steps, so one ulp anywhere can move a
rank: these sweeps compare the float64 bits of every implementation with the statement's.

The loss of a pattern (``from_pattern``: per-positive ``pattern_terms``, their compensated sum in
order, one scale) and the joint feature's coefficients (``RankingLoss.coef``) are stated there
too, and swept over the same losses and (P, N) against the compiled driver (``finish``, through
``rank_queries`` with the ranks given), the latent greedy's coefficients, the dask split's
outcome, the torch operations and the Triton kernels. Only a device's sum of a query's terms
is held to a tolerance, derived from its number of additions.
"""
import os

import numpy as np
import pytest

from aprank.inference.ranking import _driver_cy
from aprank.losses import NDCG, AveragePrecision, KernelLoss, KernelSpec

#: (P, N) swept over every (j, i): every small query, and long ones of one class.
SMALL = [(P, N) for P in range(1, 13) for N in range(1, 13)] + [
    (1, 1000), (1000, 1), (37, 211), (211, 37), (300, 300)]
#: (P, N) swept over a sample of (j, i): the corners, every (j, i) of a few values of j + i
#: (ties of j + i: NDCG's step depends on j + i alone, AP's on both) and random ones.
LARGE = [(10_000, 10_000), (10_000, 1), (1, 10_000), (5_000, 9_999), (3, 1_000_000)]
#: Queries so long that a (a - 1), a = j + i, passes 2^53 and rounds: below that every product
#: of AP's step is an exact integer until the last, so any order of the products gives the same
#: bits, and only here does the order the statement fixes matter. AP only (NDCG's discount
#: table would need an entry a position).
HUGE = [(1, 2**40), (9_999, 3 * 10**9)]
SAMPLE = 20_000


def _power(n):
    return 1.0 / np.arange(1, n + 1) ** 0.7


def _linear_then_zero(n):
    # D falls by 1/7 a position to 0 at m = 8, then stays 0: equal steps, then steps of 0
    return np.maximum(0.0, (8.0 - np.arange(1, n + 1)) / 7.0)


def _flat(n):
    # D(2) = D(3) = ...: every step past the first is 0
    return np.r_[1.0, np.full(n - 1, 0.5)]


#: The losses, a discount given as a function of the table's length (None: the default).
LOSSES = {
    "ap": (AveragePrecision, None),
    "ndcg": (NDCG, None),
    "ndcg-power": (NDCG, _power),
    "ndcg-linear-then-zero": (NDCG, _linear_then_zero),
    "ndcg-flat": (NDCG, _flat),
    # discounts near the ends of float64: subnormal differences, norms near 2^1000
    "ndcg-tiny": (NDCG, lambda n: np.ldexp(_power(n), -1000)),
    "ndcg-huge": (NDCG, lambda n: np.ldexp(_power(n), 1000)),
}


def _pairs(P, N, rng):
    """1-based (j, i), j <= N the negative, i <= P the positive (int64 arrays)."""
    if (P, N) in SMALL:
        j, i = np.meshgrid(np.arange(1, N + 1), np.arange(1, P + 1), indexing="ij")
        return j.ravel(), i.ravel()
    j = [np.array([1, 1, N, N]), rng.integers(1, N + 1, SAMPLE)]
    i = [np.array([1, P, 1, P]), rng.integers(1, P + 1, SAMPLE)]
    for total in {2, P + 1, min(P, N) + 1, (P + N) // 2, P + N}:
        tie = np.arange(max(1, total - N), min(P, total - 1) + 1)[:2_000]
        j.append(total - tie)
        i.append(tie)
    return np.concatenate(j).astype(np.int64), np.concatenate(i).astype(np.int64)


def _cases(name):
    """(loss, [(P, N, j, i)]) of a loss of LOSSES, its discount covering every case."""
    cls, table = LOSSES[name]
    rng = np.random.default_rng(sorted(LOSSES).index(name))
    cases = [(P, N, *_pairs(P, N, rng))
             for P, N in SMALL + LARGE + (HUGE if cls is AveragePrecision else [])]
    if table is None:
        return cls(), cases
    return cls(discount=table(max(P + N for P, N, _, _ in cases))), cases


def assert_same_bits(got, want, P, N, j, i, who, what="steps", names=("j", "i")):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{who}: shape {got.shape} != the statement's {want.shape}"
    differ = np.flatnonzero(got.view(np.int64).ravel() != want.view(np.int64).ravel())
    assert differ.size == 0, (
        f"{who}: {differ.size} of {want.size} {what} differ from the statement at P={P}, N={N}; "
        f"first at {names[0]}={j[differ[0]]}, {names[1]}={i[differ[0]]}: "
        f"{float(got.ravel()[differ[0]])!r} != {float(want.ravel()[differ[0]])!r}")


def test_kernel_loss_is_the_kernels_enum():
    """KernelLoss's members and values are the kernels' LOSS_* codes (the drivers check it at
    import, and refuse to load otherwise), and a KernelSpec takes a label for its member."""
    assert {m.name: m.value for m in KernelLoss} == _driver_cy.LOSS_CODES
    assert [m.label for m in KernelLoss] == KernelLoss.labels() == ["ap", "ndcg"]
    assert KernelSpec("ndcg").code is KernelLoss.NDCG
    assert AveragePrecision().kernel_spec(5).code is KernelLoss.AP
    assert NDCG().kernel_spec(5).code is KernelLoss.NDCG
    assert KernelLoss.lookup("auc") is KernelLoss.lookup(0) is None
    assert KernelSpec("p@2").code == "p@2"      # kept, for the driver to refuse


def test_the_split_kernels_load_with_the_same_codes():
    """The Dask extra's split kernels check the codes at import too (they import here)."""
    pytest.importorskip("dask", reason="needs dask (the dask extra; README)")
    from aprank.dask import _split_cy

    assert _split_cy.opt_ranks is not None


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_compiled_step_is_the_statement(name):
    """The kernels' loss_step, with the discount as the kernels take it (None: their own
    formula; also the statement's table, as ndcg-greedy gets it), and scaled by the powers of
    two the driver gives queries near DBL_MAX (exactly the statement times the weight)."""
    loss, cases = _cases(name)
    for P, N, j, i in cases:
        want = loss.increment(j, i, P, N)
        specs = [loss.kernel_spec(P + N)]
        if getattr(loss, "discount", False) is None:
            specs.append(loss.kernel_spec(P + N, table=True))
        for spec in specs:
            got = _driver_cy._loss_steps(spec.code, P, N, j, i, spec.discount)
            assert_same_bits(got, want, P, N, j, i, f"loss_step ({spec.code!r}, "
                             f"{'formula' if spec.discount is None else 'table'})")
        for weight in (0.5, 2.0 ** -4):
            got = _driver_cy._loss_steps(specs[0].code, P, N, j, i, specs[0].discount, weight)
            assert_same_bits(got, want * weight, P, N, j, i, f"loss_step weighted {weight}")


def test_the_compiled_entry_refuses_what_it_cannot_evaluate():
    one = np.ones(1, dtype=np.int64)
    with pytest.raises(ValueError, match=r"compiled kernels compute the losses \['ap', 'ndcg'\]"):
        _driver_cy._loss_steps("auc", 1, 1, one, one)
    with pytest.raises(ValueError, match="outside"):
        _driver_cy._loss_steps(KernelLoss.AP, 1, 1, one, one + 1)


def _torch():
    return pytest.importorskip("torch", reason="needs torch (the torch extra; README)")


def _concatenated(cases, torch, device):
    P = np.concatenate([np.full(j.size, P) for P, _, j, _ in cases])
    j = np.concatenate([j for _, _, j, _ in cases])
    i = np.concatenate([i for _, _, _, i in cases])
    return [torch.tensor(x, dtype=torch.int64, device=device) for x in (P, j, i)]


def _discount(loss, torch, device):
    d = getattr(loss, "discount", None)
    return None if d is None else torch.tensor(d, dtype=torch.float64, device=device)


def _check_all(loss, cases, got, who):
    at = 0
    for P, N, j, i in cases:
        assert_same_bits(got[at:at + j.size], loss.increment(j, i, P, N), P, N, j, i, who)
        at += j.size


@pytest.mark.extras
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_torch_step_is_the_statement(name):
    """The torch search's step (``_Loss.step``, which ``kernel_step`` adds to the score part),
    on the CPU, with P per slot as the search passes it."""
    torch = _torch()
    from aprank.torch._ops import _Loss
    loss, cases = _cases(name)
    code = loss.kernel_spec(1).code
    P, j, i = _concatenated(cases, torch, "cpu")
    # the tables must reach position i + j; AP's step reads none (its harmonic table, which
    # the search's closed form reads, would take 8 bytes a position of HUGE's queries)
    reach = int((i + j).max()) if code is KernelLoss.NDCG else 1
    tables = _Loss(code, _discount(loss, torch, "cpu"), reach, torch.device("cpu"))
    _check_all(loss, cases, tables.step(P, j, i).numpy(), "torch _Loss.step")


@pytest.mark.extras
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_triton_step_is_the_statement(name):
    """The Triton kernel's step function (``_loss_step``, which its ``_step`` adds to the score
    part), with its tables, in Triton's interpreter without a GPU."""
    torch = _torch()
    pytest.importorskip("triton", reason="needs triton (pip install triton)")
    if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("no CUDA device and TRITON_INTERPRET unset")
    from aprank.torch import _triton
    device = "cuda" if torch.cuda.is_available() else "cpu"
    loss, cases = _cases(name)
    P, j, i = _concatenated(cases, torch, device)
    got = _triton._loss_steps(loss.kernel_spec(1).code, P, j, i, _discount(loss, torch, device))
    _check_all(loss, cases, got.cpu().numpy(), "Triton _loss_step")


# The loss of a pattern and the joint feature's coefficients.

#: (P, N) of the coefficients' sweep beyond the step's grids: P N past 2^53, where the product
#: that the one reciprocal 1 / (P N) divides by rounds.
COEF_HUGE = [(3, 2**52 + 1), (2**31 - 1, 2**31 + 11)]
#: Queries up to this many samples are built whole for the compiled driver (HUGE's are not).
DRIVER_MAX = 2_000_000


def _patterns(P, N, rng):
    """Patterns neg_above (rows, non-decreasing, in 0..N) of a query of P positives and N
    negatives. Small queries: j negatives above every positive for each j, and every negative
    above the r-th positive on for each r, so that every count of negatives above a positive
    and every rank of a negative occurs, and random patterns; larger ones: the ends, a step,
    a ramp and random patterns."""
    k = np.arange(1, P + 1)
    if (P, N) in SMALL:
        rows = [np.full(P, j) for j in range(N + 1)]
        rows += [np.where(k >= r, N, 0) for r in range(1, P + 2)]
        n_random = 30
    else:
        rows = [np.zeros(P), np.full(P, N), np.where(k >= (P + 1) // 2, N, 0),
                np.floor(k * (N / P))]
        n_random = 3
    rows += list(np.sort(rng.integers(0, N + 1, (n_random, P)), axis=1))
    return np.array(rows, dtype=np.int64)


def _value_cases(name):
    """(loss, [(P, N, patterns)]) of a loss of LOSSES, its discount covering every case."""
    cls, table = LOSSES[name]
    rng = np.random.default_rng(100 + sorted(LOSSES).index(name))
    cases = [(P, N, _patterns(P, N, rng))
             for P, N in SMALL + LARGE + (HUGE if cls is AveragePrecision else [])]
    if table is None:
        return cls(), cases
    return cls(discount=table(max(P + N for P, N, _ in cases))), cases


def _coef_cases(P, N, rng):
    """(positive, rank) of samples of a query of P positives and N negatives: every rank of
    each class for the small queries, the ends and random ranks otherwise."""
    if (P, N) in SMALL:
        pos_r, neg_r = np.arange(1, N + 2), np.arange(1, P + 2)
    else:
        pos_r = np.r_[1, N + 1, rng.integers(1, N + 2, SAMPLE)]
        neg_r = np.r_[1, P + 1, rng.integers(1, P + 2, SAMPLE)]
    positive = np.r_[np.ones(pos_r.size, dtype=bool), np.zeros(neg_r.size, dtype=bool)]
    return positive, np.r_[pos_r, neg_r].astype(np.int64)


def _all_coef_cases():
    rng = np.random.default_rng(7)
    return [(P, N, *_coef_cases(P, N, rng)) for P, N in SMALL + LARGE + HUGE + COEF_HUGE]


def _negative_ranks(patterns, N):
    """Per pattern, its negatives' interleaving ranks: 1 + the positives with fewer than t
    negatives above them, for the t-th negative."""
    t = np.arange(1, N + 1)
    return 1 + np.array([np.searchsorted(above, t, side="left") for above in patterns])


def _positions(patterns):
    """(r, above) of every positive of every pattern, flattened."""
    r = np.broadcast_to(np.arange(1, patterns.shape[1] + 1), patterns.shape)
    return r.ravel(), patterns.ravel()


def _driver(loss, P, N, patterns):
    """(ranks, is_pos, coef, loss) of the compiled driver (``rank_queries`` with the negatives'
    ranks given, as for a user algorithm: only its ``finish`` runs), one query per pattern."""
    m, n = patterns.shape[0], P + N
    is_pos = np.tile(np.r_[np.ones(P, dtype=np.uint8), np.zeros(N, dtype=np.uint8)], m)
    ranks = np.ones((m, n), dtype=np.int64)
    ranks[:, P:] = _negative_ranks(patterns, N)
    ranks = ranks.ravel()
    spec = loss.kernel_spec(n)
    coef, value, objective = np.empty(m * n), np.empty(m), np.empty(m)
    _driver_cy.rank_queries(None, np.zeros(m * n), is_pos, None,
                            np.arange(m + 1, dtype=np.int64) * n, spec.code, spec.discount,
                            m * P, ranks, coef, value, objective)
    return ranks, is_pos.astype(bool), coef, value


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_compiled_value_and_coefficients_are_the_statement(name):
    """The driver's loss of each pattern and coefficients of each sample (its ``finish``: the
    terms' compensated sum in order, one scale; integer numerators times 1 / (P N)), with the
    default discount tabulated (queries up to DISCOUNT_TABLE_MAX samples) and not."""
    loss, cases = _value_cases(name)
    for P, N, patterns in cases:
        if P + N > DRIVER_MAX:
            continue
        ranks, is_pos, coef, value = _driver(loss, P, N, patterns)
        rows = np.arange(patterns.shape[0])
        assert_same_bits(value, loss.from_pattern(patterns, P, N), P, N, rows, rows,
                         "driver loss", "values", ("pattern", "pattern"))
        assert_same_bits(coef, loss.coef(ranks, is_pos, P, N), P, N, ranks, is_pos,
                         "driver coef", "coefficients", ("rank", "positive"))
        assert_same_bits(ranks[is_pos] - 1, patterns.ravel(), P, N, ranks, is_pos,
                         "driver positive ranks", "ranks", ("rank", "positive"))


def test_the_statement_value_is_its_terms_summed_in_order_with_their_errors():
    """_ordered_sum is the driver's two-sum loop, written out term by term (a pattern's terms
    spanning 30 binades, where a plain sum and the compensated one differ)."""
    from aprank.losses import _ordered_sum
    rng = np.random.default_rng(3)
    terms = np.ldexp(rng.random((200, 40)), rng.integers(-30, 1, (200, 40)))
    want = []
    for row in terms:
        hi = lo = 0.0
        for x in row:
            s = hi + x
            b = s - hi
            lo += (hi - (s - b)) + (x - b)
            hi = s
        want.append(hi + lo)
    assert (np.array(want) != terms.sum(axis=1)).any()     # the case tells the two apart
    assert_same_bits(_ordered_sum(terms), want, "-", "-", range(200), range(200),
                     "_ordered_sum", "sums", ("row", "row"))


def test_the_latent_greedy_coefficients_are_the_statement():
    """The latent greedy's slot coefficients (a bag takes one slot's coefficient): as a
    multiset per class, the statement's at the final pattern's ranks."""
    from aprank.inference.latent._greedy_cy import latent_greedy
    rng = np.random.default_rng(11)
    for P, N in [(P, N) for P in range(1, 13) for N in range(1, 13)] + [(40, 300), (300, 40)]:
        for _ in range(3):
            high = rng.normal(size=P + N)
            low = high - rng.exponential(size=P + N) * (rng.random(P + N) < 0.7)
            neg_ranks, pos_coef, neg_coef = latent_greedy(high[:P], low[:P], high[P:], low[P:])
            above = np.searchsorted(np.sort(neg_ranks), np.arange(1, P + 1), side="right")
            loss = AveragePrecision()
            want_neg = loss.coef(neg_ranks, False, P, N)
            want_pos = loss.coef(1 + above, True, P, N)
            assert_same_bits(np.sort(neg_coef), np.sort(want_neg), P, N, neg_ranks, neg_ranks,
                             "latent greedy negative coef", "coefficients", ("rank", "rank"))
            assert_same_bits(np.sort(pos_coef), np.sort(want_pos), P, N, above, above,
                             "latent greedy positive coef", "coefficients", ("above", "above"))


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_dask_split_outcome_is_the_statement(name):
    """A split solve's loss and positives' coefficients (``split_outcome``) and its
    negatives' coefficients (``negative_coef``), from the counts of negatives per rank."""
    pytest.importorskip("dask", reason="the split steps belong to aprank.dask (the dask extra)")
    from aprank.dask._steps import negative_coef, split_outcome
    loss, cases = _value_cases(name)
    for P, N, patterns in cases:
        positives = np.linspace(1.0, 0.0, P)
        for above in patterns:
            count = np.zeros(P + 2, dtype=np.int64)
            count[1:P + 1] = np.diff(np.r_[0, above])
            count[P + 1] = N - above[-1]
            ranks, coef, value, _ = split_outcome(loss, positives, count, 0.0, N)
            assert_same_bits(ranks - 1, above, P, N, above, above, "split ranks", "ranks",
                             ("above", "above"))
            assert_same_bits(value, loss.from_pattern(above, P, N), P, N, [0], [0],
                             "split loss", "values", ("pattern", "pattern"))
            assert_same_bits(coef, loss.coef(ranks, True, P, N), P, N, above, above,
                             "split positive coef", "coefficients", ("above", "above"))
    for P, N, positive, rank in _all_coef_cases():
        neg = rank[~positive]
        assert_same_bits(negative_coef(loss, neg, P, N), loss.coef(neg, False, P, N), P, N,
                         neg, neg, "negative_coef", "coefficients", ("rank", "rank"))


def _sum_tolerance(P, want):
    """How far a device's sum of a query's P terms (>= 0), scaled, may lie from the statement's:
    any order of P - 1 additions errs by at most (P - 1) u times the sum of the terms, u = eps/2
    (Higham 2002, eq. 4.4), the statement's compensated sum by at most 2 u of it, and the
    scale rounds each once more: (P + 3) u of the value (the terms are >= 0, so their sum is
    that of their magnitudes)."""
    return (P + 3) * (np.finfo(np.float64).eps / 2) * np.abs(want)


@pytest.mark.extras
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_torch_value_and_coefficients_are_the_statement(name):
    """The torch operations' coefficients (``_coefficients``), loss terms
    (``_Loss.pattern_terms``) and scale (``_Loss.value``) to the last bit; the value of its
    per-query sum of the terms (``_per_group``, as ``hinge_terms`` sums them) to the rounding
    of the sum (_sum_tolerance)."""
    torch = _torch()
    from aprank.losses import _ordered_sum
    from aprank.torch._ops import _coefficients, _Loss, _per_group
    for P, N, positive, rank in _all_coef_cases():
        want = AveragePrecision().coef(rank, positive, P, N)
        t = [torch.tensor(x) for x in (positive, np.full(rank.size, P), np.full(rank.size, N),
                                       rank)]
        assert_same_bits(_coefficients(*t).numpy(), want, P, N, rank, positive,
                         "torch _coefficients", "coefficients", ("rank", "positive"))
    loss, cases = _value_cases(name)
    code = loss.kernel_spec(1).code
    # the tables must reach position r + above; AP's terms read none (its harmonic table would
    # take 8 bytes a position of HUGE's queries)
    reach = max(P + N for P, N, _ in cases) if code is KernelLoss.NDCG else 1
    tables = _Loss(code, _discount(loss, torch, "cpu"), reach, torch.device("cpu"))
    for P, N, patterns in cases:
        r, above = _positions(patterns)
        want_terms = loss.pattern_terms(patterns, P, N)
        terms = tables.pattern_terms(torch.tensor(r), torch.tensor(above))
        assert_same_bits(terms.numpy().reshape(patterns.shape), want_terms, P, N, r, above,
                         "torch _Loss.pattern_terms", "terms", ("r", "above"))
        want = loss.from_pattern(patterns, P, N)
        Ps = torch.full((patterns.shape[0],), P)
        scaled = tables.value(Ps, torch.tensor(_ordered_sum(want_terms)))
        rows = np.arange(patterns.shape[0])
        assert_same_bits(scaled.numpy(), want, P, N, rows, rows, "torch _Loss.value", "values",
                         ("pattern", "pattern"))
        assert (want_terms >= 0).all()      # _sum_tolerance's premise
        group = torch.arange(patterns.shape[0]).repeat_interleave(P)
        for blocks in (True, False):
            total = _per_group(group, terms, patterns.shape[0], blocks)
            got = tables.value(Ps, total).numpy()
            assert (np.abs(got - want) <= _sum_tolerance(P, want)).all(), (
                f"torch's summed value at P={P}, N={N} (blocks={blocks}) is "
                f"{np.abs(got - want).max()!r} from the statement's")


def _triton_device(torch):
    pytest.importorskip("triton", reason="needs triton (pip install triton)")
    if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("no CUDA device and TRITON_INTERPRET unset")
    return "cuda" if torch.cuda.is_available() else "cpu"


@pytest.mark.extras
def test_the_triton_coefficients_are_the_statement():
    """The Triton kernels' coefficient function (``_coefficient``, which ``_finish`` calls),
    in Triton's interpreter without a GPU."""
    torch = _torch()
    device = _triton_device(torch)
    from aprank.torch import _triton
    cases = _all_coef_cases()
    positive = np.concatenate([x for _, _, x, _ in cases])
    rank = np.concatenate([x for _, _, _, x in cases])
    P = np.concatenate([np.full(x.size, P) for P, _, _, x in cases])
    N = np.concatenate([np.full(x.size, N) for _, N, _, x in cases])
    got = _triton._coefficients(*[torch.tensor(x, device=device) for x in (positive, P, N, rank)])
    at = 0
    for P, N, positive, rank in cases:
        assert_same_bits(got[at:at + rank.size].cpu().numpy(),
                         AveragePrecision().coef(rank, positive, P, N), P, N, rank, positive,
                         "Triton _coefficient", "coefficients", ("rank", "positive"))
        at += rank.size


@pytest.mark.extras
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_triton_terms_are_the_statement(name):
    """The Triton kernels' loss term (``_pattern_term``, which ``_finish`` calls; the sum and
    the scale are the torch operations'), in Triton's interpreter without a GPU."""
    torch = _torch()
    device = _triton_device(torch)
    from aprank.torch import _triton
    loss, cases = _value_cases(name)
    positions = [_positions(patterns) for _, _, patterns in cases]
    r = torch.tensor(np.concatenate([r for r, _ in positions]), device=device)
    above = torch.tensor(np.concatenate([a for _, a in positions]), device=device)
    got = _triton._pattern_terms(loss.kernel_spec(1).code, r, above,
                                 _discount(loss, torch, device)).cpu().numpy()
    at = 0
    for (P, N, patterns), (r, above) in zip(cases, positions):
        assert_same_bits(got[at:at + r.size].reshape(patterns.shape),
                         loss.pattern_terms(patterns, P, N), P, N, r, above,
                         "Triton _pattern_term", "terms", ("r", "above"))
        at += r.size


def _numpy_log2_misses():
    """Positions m <= 500,000 where NumPy's vectorised 1/log2(1 + m) is not C's (on CPUs with
    AVX-512; none elsewhere)."""
    m = np.arange(1, 500_001)
    return m[1.0 / np.log2(m + 1.0) != NDCG().D(m)]


@pytest.mark.parametrize("m", [1620, 287_913, 401_432])
def test_the_ndcg_metric_takes_the_loss_discount(m):
    """One relevant sample at position m: the metric's NDCG is D(m) / D(1) = D(m), the NDCG
    loss's discount, and 1 - it is the loss's value, to the bit. At these m NumPy's vectorised
    log2 misses C's by an ulp on CPUs with AVX-512 (at 287,913 and 401,432 the miss survives
    1 - D(m)), so a metric that took NumPy's would fail here there."""
    from aprank.metrics import ndcg
    y = np.zeros(m, dtype=bool)
    y[-1] = True
    got = ndcg(y, -np.arange(m, dtype=np.float64))
    loss = NDCG()
    assert got.hex() == float(loss.D(m)).hex()
    assert (1.0 - got).hex() == float(loss.from_pattern([m - 1], 1, m - 1)).hex()


def test_the_ndcg_metric_cases_are_numpy_log2_misses_on_this_cpu():
    """Says which of the metric test's positions NumPy's log2 misses here: all on a CPU with
    AVX-512 (where the test tells the two discounts apart), none without."""
    misses = set(_numpy_log2_misses().tolist())
    cases = {1620, 287_913, 401_432}
    assert cases <= misses or not misses & cases, sorted(misses & cases)


def test_the_oracles_report_the_statement():
    """The brute-force oracles of the ranking and latent kinds (and the latent greedy, through
    the latent problem's result) report the statement's coefficients and loss at the ranks
    they choose: they take them from the loss objects, not from copies of their own."""
    import aprank
    from aprank.losses import get_loss
    rng = np.random.default_rng(5)
    for name in ("ap", "ndcg"):
        loss = get_loss(name)
        for P, N in [(P, N) for P in range(1, 6) for N in range(1, 6)]:
            y = rng.permutation(np.r_[np.ones(P, dtype=bool), np.zeros(N, dtype=bool)])
            r = aprank.infer(rng.normal(size=P + N).round(1), y, loss=name, algorithm="brute")
            assert_same_bits(r.coef, loss.coef(r.ranks, y, P, N), P, N, r.ranks, y,
                             "brute coef", "coefficients", ("rank", "positive"))
            assert_same_bits(r.loss, loss.from_pattern(np.sort(r.ranks[y]) - 1, P, N), P, N,
                             [0], [0], "brute loss", "values", ("pattern", "pattern"))
    ap = AveragePrecision()
    for trial in range(30):
        inst = aprank.checks.random_instance("latent", 1, trial)
        _, first = np.unique(inst.bags, return_index=True)
        pos = np.asarray(inst.labels)[first]
        P, N = int(pos.sum()), int((~pos).sum())
        for name, algorithm in (("latent-ssvm", "brute"), ("latent-ap", "brute"),
                                ("latent-ssvm", "latent-greedy")):
            r = aprank.infer(inst.scores, inst.labels, loss=name, algorithm=algorithm,
                             bags=inst.bags)
            if not N:
                continue
            assert_same_bits(r.coef[r.h], ap.coef(r.ranks, pos, P, N), P, N, r.ranks, pos,
                             f"{name} {algorithm} coef", "coefficients", ("rank", "positive"))
            assert_same_bits(r.loss, ap.from_pattern(np.sort(r.ranks[pos]) - 1, P, N), P, N,
                             [0], [0], f"{name} {algorithm} loss", "values",
                             ("pattern", "pattern"))
    # the latent greedy over every small (P, N), two rows a bag
    for P, N in [(P, N) for P in range(1, 9) for N in range(1, 9)]:
        pos = np.r_[np.ones(P, dtype=bool), np.zeros(N, dtype=bool)]
        bags = np.repeat(np.arange(P + N), 2)
        r = aprank.infer(rng.normal(size=2 * (P + N)).round(1), np.repeat(pos, 2),
                         loss="latent-ssvm", algorithm="latent-greedy", bags=bags)
        assert_same_bits(r.coef[r.h], ap.coef(r.ranks, pos, P, N), P, N, r.ranks, pos,
                         "latent-greedy coef", "coefficients", ("rank", "positive"))
        assert_same_bits(r.loss, ap.from_pattern(np.sort(r.ranks[pos]) - 1, P, N), P, N,
                         [0], [0], "latent-greedy loss", "values", ("pattern", "pattern"))
