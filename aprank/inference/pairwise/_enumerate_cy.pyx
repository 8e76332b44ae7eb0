# distutils: language = c++
"""The maximum and every max-marginal of small linked components by enumeration (the
pairwise kind; Dokania et al. (2014), eqs. 9-10).

A component of k samples has 2^k labellings. Walking them in Gray-code order changes one label
per step, so a step updates the score in O(degree of that sample) and the 2k running
max-marginals in O(k): O(2^k k) per component, with no graph to build. On the components of a
few samples that real groupings have (segments of one recording, boxes of one image) this is
faster than any cut (measured: ``python -m benchmarks --pairwise``).

Labellings are kept as bit codes (bit i: the label of the component's i-th sample). Valid for pair
scores of any sign (enumeration needs no submodularity).

Exactness at any scale. The running score accumulates rounding along the walk:
with pair scores many binary orders of magnitude above the unary ones (adding and removing -1e16
wipes out a unary score of 1) it can rank labellings wrongly. What is reported is always
:func:`_value`, the score summed from scratch (as brute force does), and the running score decides
only where a proven bound on its rounding (``tol``) says it cannot be wrong:

* the fast walk (:func:`_walk_fast`) keeps the best running score per kept maximum,
  and gives up as soon as a labelling comes within ``tol`` of one. If it never does, every winner
  beats every other labelling of its maximum by more than the rounding, so it is the exact
  winner, and only the k + 1 winners are evaluated from scratch. At ordinary scales ``tol`` is
  ~1e-12 of the scores and only exact ties come that close: the common case costs one
  comparison per kept maximum and step.
* otherwise the component is walked again by :func:`_walk_exact`, which evaluates from scratch
  every labelling whose running score comes within ``tol`` of a kept maximum and compares it
  with the maximum by those values where they differ by more than their own rounding, else by
  the sum (compensated) of the unary and pair scores in which the two labellings differ (a
  sample labelled alike in both adds exactly nothing, so a unary score far from the others,
  1e16 beside ones of order 1, decides nothing it does not change) (ties: the first labelling
  of the walk with the largest value, as in the fast walk). At extreme scales (a labelling and
  its complement cut the same huge pairs) that is many labellings, O(2^k (k + m)) at worst,
  which is why it runs only where the fast walk gave up.

Ctrl-C: a component of 24 samples walks 2^24 labellings (seconds; the exact walk far more), so
the walks count their steps in a poll (``_interrupt.pxd``) and stop on a signal, and the loop
over components asks it between components; the call then raises the handler's exception
(KeyboardInterrupt) within about 0.1 s, its outputs (the call's own arrays) partly written.
"""
from libc.math cimport INFINITY, fabs

from aprank.inference._interrupt cimport Poll, poll_stop, raise_pending, start_poll
from aprank.inference._kernel cimport i64

#: The largest component the kernel takes (codes are 64-bit; 2^k steps).
MAX_SIZE = 24

cdef enum:
    # the walks ask their poll every POLL_STEPS + 1 steps (a mask: 2^12)
    POLL_STEPS = (1 << 12) - 1

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


cdef inline i64 _bit(i64 code, i64 i) noexcept nogil:
    return (code >> i) & 1


cdef double _value(i64 code, i64 a, i64 k, const double[::1] s, const i64[::1] ea,
                   const i64[::1] eb, const double[::1] c, i64 e0, i64 e1) noexcept nogil:
    """Score of labelling ``code`` of the component of nodes a..a+k-1 and pairs e0..e1-1."""
    cdef double v = 0.0
    cdef i64 i, e
    # products with a 0/1 label are exact and adding a zero changes no sum, so this adds what
    # branches on the labels would, without their mispredictions
    for i in range(k):
        v += _bit(code, i) * s[a + i]
    for e in range(e0, e1):
        v += (_bit(code, ea[e] - a) ^ _bit(code, eb[e] - a)) * c[e]
    return v


cdef inline void _add(double* total, double* comp, double x) noexcept nogil:
    cdef double y = total[0] + x
    comp[0] += (total[0] - y) + x if fabs(total[0]) >= fabs(x) else (x - y) + total[0]
    total[0] = y


cdef double _difference(i64 x, i64 y, i64 a, i64 k, const double[::1] s, const i64[::1] ea,
                        const i64[::1] eb, const double[::1] c, i64 e0,
                        i64 e1) noexcept nogil:
    """Score of labelling x less that of y, summed (compensated) over the samples whose label
    and the pairs whose cut differ: a sample or pair the same in both adds exactly nothing,
    however far its score from the others."""
    cdef double total = 0.0, comp = 0.0
    cdef i64 i, e, bx, by
    for i in range(k):
        bx, by = _bit(x, i), _bit(y, i)
        if bx != by:
            _add(&total, &comp, s[a + i] if bx else -s[a + i])
    for e in range(e0, e1):
        bx = _bit(x, ea[e] - a) ^ _bit(x, eb[e] - a)
        by = _bit(y, ea[e] - a) ^ _bit(y, eb[e] - a)
        if bx != by:
            _add(&total, &comp, c[e] if bx else -c[e])
    return total + comp


cdef inline bint _beats(double v, i64 code, double kept, i64 kept_code, double vtol, i64 a,
                        i64 k, const double[::1] s, const i64[::1] ea, const i64[::1] eb,
                        const double[::1] c, i64 e0, i64 e1) noexcept nogil:
    """Whether labelling ``code`` (value v from scratch) beats the kept one: by the values
    where they differ by more than their rounding (vtol), else by the terms that differ."""
    if kept == -INFINITY or v - kept > vtol:
        return True
    if v - kept < -vtol:
        return False
    return _difference(code, kept_code, a, k, s, ea, eb, c, e0, e1) > 0


cdef inline double _flip(double score, i64 code, i64 j, i64 a, const double[::1] s,
                         const i64[::1] nbr_ptr, const i64[::1] nbr,
                         const double[::1] nbr_c) noexcept nogil:
    """The running score after flipping the label of the component's j-th sample in ``code``."""
    cdef i64 node = a + j, p
    cdef i64 bj = _bit(code, j)
    # flipping y_j adds s_j (0 -> 1) or removes it; a pair to a neighbour with the same label
    # becomes cut (+c), one with the other label uncut (-c). +-1 factors are exact, so this adds
    # the same numbers as branches would.
    score += (1 - 2 * bj) * s[node]
    for p in range(nbr_ptr[node], nbr_ptr[node + 1]):
        score += (1 - 2 * (_bit(code, nbr[p] - a) ^ bj)) * nbr_c[p]
    return score


cdef bint _walk_fast(i64 a, i64 k, double tol, const double[::1] s, const i64[::1] nbr_ptr,
                     const i64[::1] nbr, const double[::1] nbr_c, double* run, i64* run_code,
                     i64* bcode, bint marginals, Poll* poll) noexcept nogil:
    """Walk by running scores alone: fills bcode[0] and, when ``marginals``, run_code[2 i + b]
    (the best labelling with label b at sample i). False, as soon as a labelling's running score
    comes within ``tol`` of a kept maximum's (the walk cannot tell them apart), or when ``poll``
    stops it (``poll.stopped``)."""
    cdef i64 code = 0, t, i, j, r, steps = (<i64>1) << k
    cdef double score = 0.0, bval = 0.0, bthr = -tol
    # thr[r] = run[r] - tol: a running score at or below it is beaten by the maximum, exactly
    # too, so the hot path costs one comparison per kept maximum, as a walk without the
    # exactness test would; only improvements and near-ties take the branch
    cdef double thr[128]
    for i in range(k):
        run[2 * i] = 0.0            # code 0: every label 0, no unary score, no pair cut
        thr[2 * i] = -tol
        run[2 * i + 1] = -INFINITY
        thr[2 * i + 1] = -INFINITY
        run_code[2 * i] = 0
        run_code[2 * i + 1] = 0
    bcode[0] = 0
    for t in range(1, steps):
        if (t & POLL_STEPS) == 0 and poll_stop(poll, POLL_STEPS * (k + 1)):
            return False
        j = __builtin_ctzll(<unsigned long long>t)
        score = _flip(score, code, j, a, s, nbr_ptr, nbr, nbr_c)
        code ^= (<i64>1) << j
        if score > bthr:
            if score - bval <= tol:
                return False
            bval = score
            bthr = score - tol
            bcode[0] = code
        if marginals:
            # run[2 i + b] is indexed by the label, not branched on
            for i in range(k):
                r = 2 * i + _bit(code, i)
                if score > thr[r]:
                    if score - run[r] <= tol:
                        return False
                    run[r] = score
                    thr[r] = score - tol
                    run_code[r] = code
    return True


cdef void _walk_exact(i64 a, i64 k, double tol, const double[::1] s, const i64[::1] ea,
                      const i64[::1] eb, const double[::1] c, i64 e0, i64 e1,
                      const i64[::1] nbr_ptr, const i64[::1] nbr, const double[::1] nbr_c,
                      double* run, i64* run_code, i64* bcode, double* bval,
                      bint marginals, Poll* poll) noexcept nogil:
    """Walk deciding on exact values: fills bcode[0], bval[0] and, when ``marginals``,
    run_code[2 i + b], run[2 i + b] (the best labelling with label b at sample i and its
    value), every value by :func:`_value`. Returns early when ``poll`` stops it."""
    cdef i64 code = 0, t, i, j, r, steps = (<i64>1) << k
    cdef double score = 0.0, v, bthr = -tol, size = 0.0, vtol
    cdef double thr[128]            # thr[r] = run[r] - tol
    # two values from scratch (_value: k + m additions of terms of at most ``size`` in all)
    # closer than this may rank their labellings wrongly: then the terms that differ decide
    for i in range(k):
        size += fabs(s[a + i])
    for i in range(e0, e1):
        size += fabs(c[i])
    vtol = size * (4.0 * (k + (e1 - e0) + 2) * 1.1102230246251565e-16)
    cdef bint need
    for i in range(k):
        run[2 * i] = 0.0            # code 0, exactly
        thr[2 * i] = -tol
        run[2 * i + 1] = -INFINITY
        thr[2 * i + 1] = -INFINITY
        run_code[2 * i] = 0
        run_code[2 * i + 1] = 0
    bcode[0] = 0
    bval[0] = 0.0
    for t in range(1, steps):
        # counted at its worst, every step evaluated from scratch
        if (t & POLL_STEPS) == 0 and poll_stop(poll, POLL_STEPS * (2 * k + e1 - e0 + 1)):
            return
        j = __builtin_ctzll(<unsigned long long>t)
        score = _flip(score, code, j, a, s, nbr_ptr, nbr, nbr_c)
        code ^= (<i64>1) << j
        # which kept maxima the labelling may beat, found without branching
        need = score > bthr
        if marginals:
            for i in range(k):
                need |= score > thr[2 * i + _bit(code, i)]
        if need:
            # where the running score was not within tol of a maximum, the exact value cannot
            # beat it either: every maximum is compared with v alone
            v = _value(code, a, k, s, ea, eb, c, e0, e1)
            if _beats(v, code, bval[0], bcode[0], vtol, a, k, s, ea, eb, c, e0, e1):
                bval[0] = v
                bthr = v - tol
                bcode[0] = code
            if marginals:
                for i in range(k):
                    r = 2 * i + _bit(code, i)
                    if _beats(v, code, run[r], run_code[r], vtol, a, k, s, ea, eb, c, e0, e1):
                        run[r] = v
                        thr[r] = v - tol
                        run_code[r] = code


def enumerate_components(const double[::1] s, const i64[::1] offsets, const i64[::1] ea,
                         const i64[::1] eb, const double[::1] c, const i64[::1] e_off,
                         const i64[::1] nbr_ptr, const i64[::1] nbr, const double[::1] nbr_c,
                         const i64[::1] comps, i64[::1] best_code, double[::1] best,
                         i64[::1] other_code, double[::1] other, bint marginals):
    """Solve the components ``comps`` (each of at most MAX_SIZE nodes).

    Component q holds nodes offsets[q]..offsets[q+1]-1 (unary scores s) and pairs
    e_off[q]..e_off[q+1]-1 (ends ea, eb in node indices, scores c); nbr_ptr / nbr / nbr_c list
    each node's neighbours and pair scores (a pair appears at both ends).

    Fills best_code[q], best[q] (the maximising labelling and its value) and, when
    ``marginals``, for every node p of the component other_code[p], other[p]: the best
    labelling of the component with p's label flipped, and its value. Values are sums from
    scratch (:func:`_value`) and exact at any scale of the scores (see the module docstring).
    """
    cdef i64 n_comps = comps.shape[0]
    cdef i64 qi, q, a, k, e0, e1, i, r, bcode
    cdef double bval, size, adds, tol
    cdef double run[128]
    cdef i64 run_code[128]
    cdef Poll poll
    start_poll(&poll)
    with nogil:
        for qi in range(n_comps):
            if poll_stop(&poll, (<i64>1) << (offsets[comps[qi] + 1] - offsets[comps[qi]])):
                break
            q = comps[qi]
            a = offsets[q]
            k = offsets[q + 1] - a
            e0 = e_off[q]
            e1 = e_off[q + 1]
            # Every partial sum of the walk and of _value is a sum of distinct unary and pair
            # scores, so at most ``size`` in magnitude, and each addition rounds by at most
            # 2^-53 of it (products of +-1 and 0/1 are exact): the walk's ``adds`` additions
            # and _value's k + m leave a running score and the exact value of its labelling
            # at most T = (adds + k + m) 2^-53 size apart. Two running scores more than 2T apart
            # rank their labellings' exact values alike; tol = 4 (...) 2^-53 size also covers
            # the rounding of the bound itself and of the differences compared with it.
            size = 0.0
            for i in range(k):
                size += fabs(s[a + i])
            for i in range(e0, e1):
                size += fabs(c[i])
            adds = 0.0
            for i in range(k):          # sample i flips 2^(k-1-i) times, each 1 + degree adds
                adds += (<double>((<i64>1) << (k - 1 - i))
                         * (1 + nbr_ptr[a + i + 1] - nbr_ptr[a + i]))
            tol = size * (4.0 * (adds + k + (e1 - e0) + 2) * 1.1102230246251565e-16)
            if _walk_fast(a, k, tol, s, nbr_ptr, nbr, nbr_c, run, run_code, &bcode, marginals,
                          &poll):
                # each winner beats the rest of its maximum by more than the rounding: only
                # the winners need exact values
                bval = _value(bcode, a, k, s, ea, eb, c, e0, e1)
                if marginals:
                    for i in range(k):
                        r = 2 * i + 1 - _bit(bcode, i)
                        run[r] = _value(run_code[r], a, k, s, ea, eb, c, e0, e1)
            elif not poll.stopped:
                _walk_exact(a, k, tol, s, ea, eb, c, e0, e1, nbr_ptr, nbr, nbr_c, run, run_code,
                            &bcode, &bval, marginals, &poll)
            if poll.stopped:
                break
            best_code[q] = bcode
            best[q] = bval
            if marginals:
                for i in range(k):
                    r = 2 * i + 1 - _bit(bcode, i)
                    other_code[a + i] = run_code[r]
                    other[a + i] = run[r]
    if poll.stopped:
        raise_pending()
