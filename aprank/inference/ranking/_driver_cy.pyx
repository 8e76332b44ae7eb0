# distutils: language = c++
"""The one driver loop shared by every compiled ranking kernel.

For each query it splits the samples into positives and negatives (scores and input indices),
sorts the positives,
pre-fills the negatives' ranks with P+1, calls the algorithm's `solve` (a C function pointer
handed over in a capsule), and then computes the output from the interleaving ranks alone
(Mohapatra et al. 2018, Observation 2): coefficients of the joint feature vector, the loss from the
+/- pattern, and the objective. All of it runs without the GIL.

Ctrl-C: the loop counts each query's samples in a poll (``_interrupt.pxd``), which the kernels
whose work can run long (P N steps: yue, ndcg-greedy; search's and select's P^2) count their
steps in too; a signal stops the call within about 0.1 s with the handler's exception
(KeyboardInterrupt), the outputs (the call's own arrays) partly written.

Scores near DBL_MAX: the kernels subtract scores and sum weighted differences, which overflows
once a query's scores exceed about 2^1020 in magnitude (or, in ``finish``, once P N times them
nears DBL_MAX). Such a query is solved scaled by a power of two, and its loss steps by the
same power (``LossSpec.loss_weight``), which reproduces the unscaled arithmetic bit for bit. A
query whose scaling would round a score (one below about 2^-1018 beside one above 2^1020), or
whose objective exceeds DBL_MAX, is refused with ValueError.
"""
from libc.stdint cimport uint8_t
from libc.math cimport fabs, fma, ilogb, ldexp
import threading

import numpy as np

from aprank.inference._interrupt cimport Poll, poll_stop, raise_pending, start_poll
from aprank.inference._kernel cimport (
    LossSpec, LOSS_AP, LOSS_NDCG, i64, solve_fn, sort_keys, discount_at, capsule_solve,
    cpu_simd_level, SIMD_PORTABLE, BINARY_SEARCH_MIN, SCAN_BISECT_MIN,
    GUIDED_MIN, check_kernel_losses, kernel_loss_codes, loss_step, make_spec,
)
from aprank.losses import KernelLoss

# The losses the kernels compute are KernelLoss's members, by the code of their KernelSpec; any
# other code is refused here, so an unknown loss can never run as one of these.
check_kernel_losses(KernelLoss)
#: The kernels' own codes of the losses (LOSS_* of _kernel.pxd) by KernelLoss member name.
LOSS_CODES = kernel_loss_codes()

cdef enum:
    # Largest query (in samples) whose default NDCG discount rank_queries tabulates: 512 KB.
    # Beyond it the table's memory (8 bytes a sample, a third more than qs's own) buys little.
    TABLE_MAX = 1 << 16

#: TABLE_MAX, for the tests that build queries on both sides of it.
DISCOUNT_TABLE_MAX = TABLE_MAX


#: Names of the vector paths (SimdLevel in _order.hpp: the partition and the sort of short
#: ranges), slowest first.
SIMD_LEVELS = ("portable", "avx2", "avx512")

#: The setting as last given to set_simd (True: the fastest path this CPU runs).
_requested = True
#: The path the kernels use, a SimdLevel.
cdef int _simd = cpu_simd_level()


def set_simd(level=True):
    """Choose the vector path of the kernels (their partition and their sort of short ranges);
    results are identical on every path, so this exists to test and time them.

    Parameters
    ----------
    level : bool or str
        True (the default) for the fastest path this CPU runs, False or ``"portable"`` for
        the portable one, ``"avx2"`` or ``"avx512"`` for that path (ValueError where this CPU,
        or this build, lacks it).

    Returns
    -------
    object
        The previous setting (pass it back to restore it).

    Notes
    -----
    The setting belongs to the process that makes it: worker processes (joblib, Dask,
    multiprocessing) start with the default."""
    global _simd, _requested
    cdef int chosen
    if isinstance(level, str):
        if level not in SIMD_LEVELS:
            raise ValueError(f"set_simd takes True, False or one of {SIMD_LEVELS}, not {level!r}")
        chosen = SIMD_LEVELS.index(level)
        if chosen > cpu_simd_level():
            raise ValueError(f"the {level} partition needs a CPU (and an x86-64 build) with "
                             f"{level.upper()}; this one runs up to "
                             f"{SIMD_LEVELS[cpu_simd_level()]!r}")
    else:
        level = bool(level)
        chosen = cpu_simd_level() if level else SIMD_PORTABLE
    previous = _requested
    _requested = level
    _simd = chosen
    return previous


def simd_active():
    """True when the kernels use a vector partition (AVX2 or AVX-512, see simd_level)."""
    return _simd != SIMD_PORTABLE


def simd_level():
    """The vector path the kernels use: ``"avx512"``, ``"avx2"`` or ``"portable"``."""
    return SIMD_LEVELS[_simd]


def _loss_steps(object loss_code, i64 P, i64 N, const i64[::1] j, const i64[::1] i,
                const double[::1] discount=None, double loss_weight=1.0):
    """loss_step(j[t], i[t]) of the kernels for a query of P positives and N negatives: the
    compiled step, for tests/test_loss_statement.py to hold against the statement
    (aprank.losses). loss_weight: as the driver sets it for a scaled query (a power of two)."""
    kind = KernelLoss.of(loss_code, "the compiled kernels compute")
    if j.shape[0] != i.shape[0] or P < 1 or N < 1:
        raise ValueError("j and i must have one length, and P, N be at least 1")
    out = np.empty(j.shape[0])
    cdef double[::1] steps = out
    cdef LossSpec L
    cdef Py_ssize_t t
    make_spec(&L, <int>kind, P, N, &discount[0] if discount is not None else NULL,
              SIMD_PORTABLE, NULL)
    L.loss_weight = loss_weight
    for t in range(j.shape[0]):
        if not (1 <= j[t] <= N and 1 <= i[t] <= P) or (
                discount is not None and i[t] + j[t] > discount.shape[0]):
            raise ValueError(f"(j, i) = ({j[t]}, {i[t]}) lies outside 1..N x 1..P or the discount")
        steps[t] = loss_step(&L, j[t], i[t])
    return out


#: Largest score magnitude the kernels take unscaled: a difference of two scores (< 2^1021),
#: twice it (a step, P = N = 1) and a search's running sums of steps stay finite.
cdef double SAFE_SCORE = 2.0 ** 1020
cdef double DBL_MAX = 1.7976931348623157e308

#: The size switches of the kernels' shared search (_kernel.pxd) and the score magnitude from
#: which the driver scales a query: the ranking kind's deep check builds cases around them.
SWITCHES = {"BINARY_SEARCH_MIN": BINARY_SEARCH_MIN, "SCAN_BISECT_MIN": SCAN_BISECT_MIN,
            "GUIDED_MIN": GUIDED_MIN, "SAFE_SCORE": SAFE_SCORE}

# Outcomes of one query (rank_queries raises after the loop for the last two).
cdef enum:
    QUERY_OK = 0
    QUERY_INEXACT = 1       # scaling would round a score (a tiny one beside a huge one)
    QUERY_OVERFLOW = 2      # the objective exceeds DBL_MAX


cdef int scale_query(LossSpec* L, double amax, double* pos_s, i64 P, double* neg_s,
                     i64 N) noexcept nogil:
    """Scale a query whose largest |score| amax exceeds SAFE_SCORE by a power of two
    (L.loss_weight) so that it does not. Multiplying by a power of two is exact, so the scaled
    kernels compute exactly what unscaled arithmetic with an unbounded exponent would, except
    where a score would become subnormal and lose bits: that could tie distinct scores and
    change the ranks, so it is QUERY_INEXACT instead.
    """
    cdef i64 t
    cdef double w, v
    if amax <= SAFE_SCORE:
        return QUERY_OK
    # 2^ilogb(amax) <= amax < 2^(ilogb(amax) + 1), so amax w < 2^1020
    w = ldexp(1.0, 1019 - ilogb(amax))
    L.loss_weight = w
    for t in range(P):
        v = pos_s[t] * w
        if v / w != pos_s[t]:
            return QUERY_INEXACT
        pos_s[t] = v
    for t in range(N):
        v = neg_s[t] * w
        if v / w != neg_s[t]:
            return QUERY_INEXACT
        neg_s[t] = v
    return QUERY_OK


cdef inline void _dd_add(double* hi, double* lo, double x) noexcept nogil:
    """hi + lo += x, the rounding error of each addition kept in lo (Knuth's two-sum)."""
    cdef double s = hi[0] + x
    cdef double b = s - hi[0]
    lo[0] += (hi[0] - (s - b)) + (x - b)
    hi[0] = s


cdef inline void _dd_add_product(double* hi, double* lo, double m, double a,
                                 double c) noexcept nogil:
    """hi + lo += m (a - c), m an integer: the difference and the product split into their
    rounded values and exact errors (two-sum, fma), so a term rounds only in lo."""
    cdef double d = a - c
    cdef double b = d - a
    cdef double e = (a - (d - b)) + (-c - b)      # a - c = d + e exactly
    cdef double p = m * d
    _dd_add(hi, lo, p)
    lo[0] += fma(m, d, -p) + m * e


cdef inline double _sum_unit(double amax, i64 P, i64 N) noexcept nogil:
    """The power of two the pair sums are taken in: 1 unless 4 P N amax, a bound on |pairs|,
    would pass DBL_MAX."""
    cdef int need
    if amax > 0.0:
        # ilogb(x) + 1 bounds log2 x from above; + 2 for the factor 4
        need = ilogb(amax) + ilogb(<double>P * <double>N) + 4
        if need > 1021:
            return ldexp(1.0, 1021 - need)
    return 1.0


cdef inline void _negative_terms(const LossSpec* L, const double[:] scores,
                                 const uint8_t[:] is_pos, const i64* order, i64 a, i64 b,
                                 const i64* ranks, double* coef, i64* count, double centre,
                                 double inv_pn, double unit, double* pairs, double* lo,
                                 double* mag) noexcept nogil:
    """Each negative's coefficient, the negatives at each rank (``count``) and the negatives'
    terms of the inverted pairs' sum (each rounded once; ``mag`` sums their sizes)."""
    cdef i64 P = L.P, t, k, r
    cdef double w = L.loss_weight, v
    for r in range(P + 2):
        count[r] = 0
    for t in range(a, b):
        k = order[t] if order != NULL else t
        if not is_pos[k]:
            r = ranks[k]
            count[r] += 1
            # the P - r + 1 positives ranked below this negative are inverted pairs
            if r <= P:
                v = (P - r + 1) * (scores[k] * w * unit - centre * unit)
                _dd_add(pairs, lo, v)
                mag[0] += fabs(v)
            coef[k] = (P + 2 - 2 * r) * inv_pn


cdef inline void _positive_terms(const LossSpec* L, const double* pos_s, const i64* pos_x,
                                 i64* ranks, double* coef, const i64* count, double centre,
                                 double inv_pn, double unit, double* pairs, double* lo,
                                 double* mag, double* lsum, double* llo) noexcept nogil:
    """Each positive's rank and coefficient, the positives' terms of the inverted pairs' sum,
    and the loss's terms (compensated: P terms of up to 1 each, the sum to an ulp or two of its
    own size)."""
    cdef i64 P = L.P, N = L.N, r, k, above = 0
    cdef double v
    for r in range(1, P + 1):
        above += count[r]     # negatives above the r-th positive
        k = pos_x[r - 1]
        ranks[k] = 1 + above
        if above:
            v = above * (pos_s[r - 1] * unit - centre * unit)
            _dd_add(pairs, lo, -v)
            mag[0] += fabs(v)
        coef[k] = (N - 2 * above) * inv_pn
        if L.kind == LOSS_AP:
            _dd_add(lsum, llo, <double>above / <double>(r + above))   # 1 - precision
        else:
            _dd_add(lsum, llo, discount_at(L, r) - discount_at(L, r + above))


cdef inline void _exact_pairs(const LossSpec* L, const double* pos_s, const double[:] scores,
                              const uint8_t[:] is_pos, const i64* order, i64 a, i64 b,
                              const i64* ranks, const i64* count, double centre, double unit,
                              double* pairs, double* lo) noexcept nogil:
    """The inverted pairs' sum again, every difference and product split exactly: what the sum
    is where its rounded terms cancel."""
    cdef i64 P = L.P, t, k, r, above = 0
    cdef double w = L.loss_weight
    pairs[0] = 0.0
    lo[0] = 0.0
    for t in range(a, b):
        k = order[t] if order != NULL else t
        if not is_pos[k] and ranks[k] <= P:
            _dd_add_product(pairs, lo, <double>(P - ranks[k] + 1), scores[k] * w * unit,
                            centre * unit)
    for r in range(1, P + 1):
        above += count[r]
        if above:
            _dd_add_product(pairs, lo, -<double>above, pos_s[r - 1] * unit, centre * unit)


cdef int finish(const LossSpec* L, const double* pos_s, const i64* pos_x, const double[:] scores,
                const uint8_t[:] is_pos, const i64* order, i64 a, i64 b,
                i64* ranks, double* coef, i64* count, double* suffix, double amax,
                double* loss_out, double* objective_out) noexcept nogil:
    """Coefficients, positive ranks, loss and objective from the negatives' ranks.

    The coefficients and the loss are the statement's (aprank.losses: ``RankingLoss.coef``,
    ``from_pattern``), operation for operation and in its order, so that both agree to the last
    bit (tests/test_loss_statement.py sweeps them).

    Objective = loss + (2 / PN) * sum over inverted pairs (positive below negative) of
    (s_neg - s_pos), which equals Delta + w'Psi(R) - w'Psi(R*) (the coefficients corrected as in
    docs/references.md, printing errors): sum over the negatives of (positives below) s_neg
    less sum over the positives of (negatives above) s_pos, each term (s - centre) times its
    count, summed in two doubles with every difference and product split exactly, so the sum
    rounds once however far the scores of the pairs lie from one another (a score outside
    every inverted pair adds exactly nothing), and centred on a positive's score so that a
    large offset shared by all scores costs nothing either.

    pos_s holds the scores as the kernels saw them, scaled by L.loss_weight (scale_query);
    the caller's ``scores`` are scaled alike here; amax is the largest |scaled score|. Where
    4 P N amax, a bound on |pairs|, would pass DBL_MAX, the sums are taken in units of a
    further power of two. The objective is scaled back at the end: QUERY_OVERFLOW when it
    exceeds DBL_MAX.
    """
    cdef i64 P = L.P, N = L.N
    cdef double centre = pos_s[P // 2]
    cdef double inv_pn = 1.0 / (<double>P * <double>N)
    cdef double pairs = 0.0, lsum = 0.0, w = L.loss_weight, lo = 0.0, llo = 0.0, mag = 0.0
    cdef double unit = _sum_unit(amax, P, N)
    _negative_terms(L, scores, is_pos, order, a, b, ranks, coef, count, centre, inv_pn, unit,
                    &pairs, &lo, &mag)
    _positive_terms(L, pos_s, pos_x, ranks, coef, count, centre, inv_pn, unit, &pairs, &lo,
                    &mag, &lsum, &llo)
    lsum += llo
    loss_out[0] = lsum / <double>P if L.kind == LOSS_AP else lsum * L.inv_norm
    # each term rounded once (eps of its size): a few ulps of the sum unless its terms
    # cancel; then the sum again with every term split exactly
    if mag > 4.0 * fabs(pairs + lo):
        _exact_pairs(L, pos_s, scores, is_pos, order, a, b, ranks, count, centre, unit, &pairs,
                     &lo)
    pairs += lo
    if w == 1.0 and unit == 1.0:
        # amax <= 2^1020 and 4 P N amax <= 2^1021: the objective is at most 1 + 2^1022
        objective_out[0] = loss_out[0] + L.score_scale * pairs
        return QUERY_OK
    # the same sum in scaled units (powers of two), then scaled back
    objective_out[0] = (loss_out[0] * (w * unit) + L.score_scale * pairs) / (w * unit)
    return QUERY_OVERFLOW if objective_out[0] > DBL_MAX else QUERY_OK


#: Each thread's scratch arrays, kept between calls (see _scratch).
_thread_scratch = threading.local()
#: Longest scratch pair kept between calls: 16 bytes an entry, 64 MiB per thread at most.
SCRATCH_KEEP = 1 << 22


def _scratch(i64 length):
    """(float64, int64) arrays of at least ``length`` entries: a call's work space.

    One pair, not one array per use: on a small query six fresh NumPy arrays cost more than the
    kernel. And fresh pages are dear: first touching a large new scratch (page faults and
    zeroing) is a sizeable part of a large ``qs`` call (docs/benchmarks/inference.md), so
    pairs of up to SCRATCH_KEEP entries are kept per thread and reused. A thread never uses
    its pair in two calls at once: the arrays are written only inside rank_queries' nogil
    loop, which calls no Python code, and nothing is carried in them from one call to the
    next.
    """
    cached = getattr(_thread_scratch, "pair", None)
    if cached is not None and cached[0].shape[0] >= length:
        return cached
    pair = (np.empty(length, dtype=np.float64), np.empty(length, dtype=np.int64))
    if length <= SCRATCH_KEEP:
        _thread_scratch.pair = pair
    return pair


cdef object _tabulated_discount(const i64[::1] offsets):
    """The default NDCG discount of ranks 1 .. the largest query's size, by the kernels' own
    expression (discount_at); None where a query exceeds TABLE_MAX samples."""
    cdef i64 n_queries = offsets.shape[0] - 1, n_max = 0, m, q
    cdef double[::1] table
    cdef LossSpec L
    for q in range(n_queries):
        if offsets[q + 1] - offsets[q] > n_max:
            n_max = offsets[q + 1] - offsets[q]
    if n_max > TABLE_MAX:
        return None
    table = np.empty(max(n_max, 1), dtype=np.float64)
    make_spec(&L, LOSS_NDCG, 1, 1, NULL, False, NULL)     # L.discount NULL: the formula
    for m in range(1, n_max + 1):
        table[m - 1] = discount_at(&L, m)
    return table


cdef inline double _gather_query(const double[:] scores, const uint8_t[:] is_pos,
                                 const i64* order, i64 a, i64 b, double* pos_s, i64* pos_x,
                                 i64* P, double* neg_s, i64* neg_x, i64* N) noexcept nogil:
    """The scores and indices of samples a .. b-1 (through ``order``) split into positives
    and negatives, their counts in P and N; returns the largest |score|."""
    cdef i64 t, k
    cdef double amax = 0.0
    P[0] = 0
    N[0] = 0
    for t in range(a, b):
        k = order[t] if order != NULL else t
        if fabs(scores[k]) > amax:
            amax = fabs(scores[k])
        if is_pos[k]:
            pos_s[P[0]] = scores[k]
            pos_x[P[0]] = k
            P[0] += 1
        else:
            neg_s[N[0]] = scores[k]
            neg_x[N[0]] = k
            N[0] += 1
    return amax


cdef inline void _one_class_query(const i64* order, i64 a, i64 b, i64* ranks, double* coef,
                                  double* truth) noexcept nogil:
    """The outputs of a query lacking a class: nothing can be inverted, so the only ranking
    is the ground truth (rank 1, coefficients 0)."""
    cdef i64 t, k
    for t in range(a, b):
        k = order[t] if order != NULL else t
        ranks[k] = 1
        coef[k] = 0.0
        if truth != NULL:
            truth[k] = 0.0


cdef inline int _solve_query(solve_fn fn, int kind, const double* discount, int simd,
                             Poll* poll, const double[:] scores, const uint8_t[:] is_pos,
                             const i64* order, i64 a, i64 b, double* pos_s, i64* pos_x, i64 P,
                             double* neg_s, i64* neg_x, i64 N, double amax, i64* ranks,
                             double* coef, double* truth, i64* count, double* suffix,
                             double* loss, double* objective) noexcept nogil:
    """The outputs of one query of P >= 1 positives and N >= 1 negatives, gathered by
    _gather_query; QUERY_OK, or the outcome that refuses it. A kernel the poll stopped
    returns QUERY_OK with poll.stopped set, its outputs unwritten."""
    cdef LossSpec L
    cdef i64 t
    cdef int status
    cdef double tp, tn
    if fn != NULL:
        for t in range(N):
            ranks[neg_x[t]] = P + 1
    sort_keys(pos_s, pos_x, 0, P, simd)
    make_spec(&L, kind, P, N, discount, simd, poll)
    status = scale_query(&L, amax, pos_s, P, neg_s, N)
    if status != QUERY_OK:
        return status
    if fn != NULL:
        fn(&L, pos_s, neg_s, neg_x, N, ranks)
        if poll.stopped:
            return QUERY_OK
    status = finish(&L, pos_s, pos_x, scores, is_pos, order, a, b, ranks, coef, count, suffix,
                    amax * L.loss_weight, loss, objective)
    if status != QUERY_OK:
        return status
    if truth != NULL:
        tp = 1.0 / <double>P
        tn = -1.0 / <double>N
        for t in range(P):
            truth[pos_x[t]] = tp
        for t in range(N):
            truth[neg_x[t]] = tn
    return QUERY_OK


cdef int _refuse_query(int status, i64 bad_query, double amax) except -1:
    """Raise the ValueError of a query that ``status`` refuses (0 where it refuses none)."""
    if status == QUERY_INEXACT:
        raise ValueError(
            f"query {bad_query} (in the order of the groups) holds scores up to {amax!r}, beyond "
            f"2^1020 where score differences overflow float64, beside scores so small that no "
            f"power-of-two scaling keeps them all exact; rescale the scores (e.g. divide them by "
            f"their largest magnitude) before inference")
    if status == QUERY_OVERFLOW:
        raise ValueError(
            f"the objective of query {bad_query} (in the order of the groups) overflows float64: "
            f"its most violated ranking inverts pairs whose score differences add up beyond "
            f"1.8e308 (largest |score| {amax!r}); rescale the scores before inference")
    return 0


def rank_queries(object solve, const double[:] scores, const uint8_t[:] is_pos,
                 const i64[::1] order, const i64[::1] offsets, object loss_code,
                 const double[::1] discount, i64 n_pos,
                 i64[::1] ranks, double[::1] coef, double[::1] loss, double[::1] objective,
                 double[::1] truth=None):
    """Run one ranking algorithm on every query and fill the outputs in place.

    solve: capsule holding the algorithm's solve_fn, or None when `ranks` already holds the
        negatives' ranks (a user-registered algorithm) and only the output is to be computed.
    order: sample indices grouped by query (None: samples are already grouped, in order).
    offsets: query q owns order[offsets[q]:offsets[q+1]].
    loss_code, discount: the loss's KernelSpec; a code KernelLoss does not name is a ValueError.
    n_pos: total number of positives. Inputs are validated by aprank.validation.
    truth: optional output, per sample the ground truth's coefficients of the joint feature
        map, 1/P for a positive and -1/N for a negative (0 in a query lacking either class):
        written here, where P and N are known, it costs one store per sample instead of the
        NumPy passes of ``Loss.truth_coef``.

    For NDCG without a discount given, the default discount is tabulated here when no query
    exceeds TABLE_MAX samples, with the very expression the kernels evaluate otherwise
    (discount_at): the results are those of the formula bit for bit, and n_max logarithms
    replace the two per search step and per positive that the kernels take otherwise (at
    least n in all, so never more).
    """
    kernel_loss = KernelLoss.of(loss_code, "the compiled kernels compute")
    cdef int kind = kernel_loss
    cdef solve_fn fn = NULL
    cdef i64 n = scores.shape[0]
    cdef i64 n_queries = offsets.shape[0] - 1
    cdef const i64* order_p = &order[0] if order is not None and order.shape[0] > 0 else NULL
    cdef double* truth_p = &truth[0] if truth is not None else NULL
    if kind == LOSS_NDCG and discount is None:
        discount = _tabulated_discount(offsets)
    if solve is not None:
        fn = capsule_solve(solve)
    cdef int simd = _simd
    # work space: scores and indices of one query's positives and negatives, and finish's
    # counts and suffix sums, in one pair of arrays kept by this thread (see _scratch)
    cdef i64 n_p = max(n_pos, 1), n_n = max(n - n_pos, 1), size = n_p + n_n + n_pos + 2
    dwork_buf, iwork_buf = _scratch(size)
    cdef double[::1] dwork = dwork_buf
    cdef i64[::1] iwork = iwork_buf
    cdef double* pos_s = &dwork[0]
    cdef double* neg_s = pos_s + n_p
    cdef double* suffix = neg_s + n_n
    cdef i64* pos_x = &iwork[0]
    cdef i64* neg_x = pos_x + n_p
    cdef i64* count = neg_x + n_n
    cdef i64 a, b, P, N, q
    cdef i64 bad_query = -1
    cdef int status = QUERY_OK
    cdef double amax = 0.0
    cdef const double* discount_p = &discount[0] if discount is not None else NULL
    cdef Poll poll
    start_poll(&poll)
    with nogil:
        for q in range(n_queries):
            a = offsets[q]
            b = offsets[q + 1]
            if poll_stop(&poll, b - a):
                break
            amax = _gather_query(scores, is_pos, order_p, a, b, pos_s, pos_x, &P, neg_s,
                                 neg_x, &N)
            if P == 0 or N == 0:
                _one_class_query(order_p, a, b, &ranks[0], &coef[0], truth_p)
                loss[q] = 0.0
                objective[q] = 0.0
                continue
            status = _solve_query(fn, kind, discount_p, simd, &poll, scores, is_pos, order_p,
                                  a, b, pos_s, pos_x, P, neg_s, neg_x, N, amax, &ranks[0],
                                  &coef[0], truth_p, count, suffix, &loss[q], &objective[q])
            if status != QUERY_OK:
                bad_query = q
                break
            if poll.stopped:
                break
    if poll.stopped:
        raise_pending()
    _refuse_query(status, bad_query, amax)


cdef enum:
    # Largest query rank_one takes: its work space lives on the C stack (about 14 KB).
    ONE_LIMIT = 256

#: ONE_LIMIT, for infer's fast path and the tests and deep check that cross it.
ONE_MAX = ONE_LIMIT


cdef int one_query(solve_fn fn, int kind, const double[::1] scores, const uint8_t[::1] labels,
                   bint signed_labels, uint8_t* signed_flags, const uint8_t[::1] is_pos,
                   i64[::1] ranks, double[::1] coef, double* loss_out,
                   double* objective_out, i64* n_pos) noexcept nogil:
    """rank_one's work: 0 when solved, 1 when the input is for the general path. is_pos:
    what the kernels read, the labels' bytes or (signed labels) signed_flags written here."""
    cdef double pos_s[ONE_LIMIT]
    cdef double neg_s[ONE_LIMIT]
    cdef double suffix[ONE_LIMIT + 2]
    cdef i64 pos_x[ONE_LIMIT]
    cdef i64 neg_x[ONE_LIMIT]
    cdef i64 count[ONE_LIMIT + 2]
    cdef i64 n = scores.shape[0], k, t, P = 0, N = 0, zeros = 0, minus = 0
    cdef double v, amax = 0.0
    cdef signed char b
    cdef LossSpec L
    cdef Poll poll
    for k in range(n):
        v = scores[k]
        if not (fabs(v) <= DBL_MAX):        # NaN or an infinity
            return 1
        if fabs(v) > amax:
            amax = fabs(v)
        if signed_labels:
            b = <signed char>labels[k]
            if b == 0:
                zeros += 1
            elif b == -1:
                minus += 1
            elif b != 1:
                return 1
            signed_flags[k] = b == 1
    if (zeros != 0 and minus != 0) or amax > SAFE_SCORE:
        return 1
    for k in range(n):
        if is_pos[k]:
            pos_s[P] = scores[k]
            pos_x[P] = k
            P += 1
        else:
            neg_s[N] = scores[k]
            neg_x[N] = k
            N += 1
    n_pos[0] = P
    if P == 0:
        return 1
    if N == 0:
        for k in range(n):
            ranks[k] = 1
            coef[k] = 0.0
        loss_out[0] = 0.0
        objective_out[0] = 0.0
        return 0
    for t in range(N):
        ranks[neg_x[t]] = P + 1
    sort_keys(pos_s, pos_x, 0, P, _simd)
    start_poll(&poll)
    make_spec(&L, kind, P, N, NULL, _simd, &poll)
    fn(&L, pos_s, neg_s, neg_x, N, &ranks[0])
    if finish(&L, pos_s, pos_x, scores, is_pos, NULL, 0, n, &ranks[0], &coef[0], count,
              suffix, amax, loss_out, objective_out) != QUERY_OK:
        return 1
    return 0


def rank_one(object solve, const double[::1] scores, const uint8_t[::1] labels,
             bint signed_labels, uint8_t[::1] flags, object loss_code, i64[::1] ranks,
             double[::1] coef):
    """One query of at most ONE_MAX samples, as rank_queries solves it (offsets [0, n], no
    order, no truth, the NDCG discount by its formula, which rank_queries' table reproduces
    bit for bit), for ``infer``'s fast path, with the input checks of the general path made
    in the same pass: every score finite, and the labels bool (``signed_labels`` False: any
    non-zero byte positive, as ``validation.as_labels`` reads them) or int8 holding {0, 1} or
    {-1, +1} (``signed_labels`` True; ``flags``, n bytes, receives the positives' flags,
    which the kernels read; with bool labels, None: the kernels read the labels' bytes).

    Returns (loss, objective, P), or None when the input fails a check or needs what only the
    general path does (no positives, a score beyond SAFE_SCORE, more than ONE_MAX samples):
    the caller then takes the general path, whose checks raise their errors.
    """
    kernel_loss = KernelLoss.of(loss_code, "the compiled kernels compute")
    cdef int kind = kernel_loss
    cdef solve_fn fn = capsule_solve(solve)
    cdef i64 n = scores.shape[0]
    cdef double loss_v = 0.0, objective_v = 0.0
    cdef int status
    cdef i64 P = 0
    cdef const uint8_t[::1] is_pos
    cdef uint8_t* written = NULL
    if (n == 0 or n > ONE_LIMIT or labels.shape[0] != n or ranks.shape[0] != n
            or coef.shape[0] != n or (signed_labels and (flags is None or flags.shape[0] != n))):
        return None
    if signed_labels:
        is_pos = flags
        written = &flags[0]
    else:
        is_pos = labels
    with nogil:
        status = one_query(fn, kind, scores, labels, signed_labels, written, is_pos, ranks,
                           coef, &loss_v, &objective_v, &P)
    if status != 0:
        return None
    return loss_v, objective_v, P


def gather(const double[::1] values, const i64[::1] order):
    """values[order] (order a permutation, validated by its maker): a query's samples
    gathered for rank_queries (see _algorithms._rank_grouped)."""
    cdef i64 n = order.shape[0], t
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for t in range(n):
            o[t] = values[order[t]]
    return out


def gather_i64(const i64[::1] values, const i64[::1] order):
    """As gather, for int64 values."""
    cdef i64 n = order.shape[0], t
    out = np.empty(n, dtype=np.int64)
    cdef i64[::1] o = out
    with nogil:
        for t in range(n):
            o[t] = values[order[t]]
    return out


def inverse(const i64[::1] order):
    """The inverse permutation of ``order``: slot[order[t]] = t."""
    cdef i64 n = order.shape[0], t
    out = np.empty(n, dtype=np.int64)
    cdef i64[::1] o = out
    with nogil:
        for t in range(n):
            o[order[t]] = t
    return out


def put_back(const i64[::1] slot, const i64[::1] ranks, const double[::1] coef,
             const double[::1] truth, i64[::1] ranks_out, double[::1] coef_out,
             double[::1] truth_out):
    """The outputs of rank_queries on gathered samples put back in input order, in one
    pass over the samples in input order: out[k] = grouped[slot[k]] for the ranks, the
    coefficients and (when given) the ground truth's coefficients. Written in input order,
    the outputs fill page by page; the reads follow one advancing position per query."""
    cdef i64 n = slot.shape[0], t, k
    cdef bint with_truth = truth is not None and truth_out is not None
    with nogil:
        for k in range(n):
            t = slot[k]
            ranks_out[k] = ranks[t]
            coef_out[k] = coef[t]
            if with_truth:
                truth_out[k] = truth[t]
