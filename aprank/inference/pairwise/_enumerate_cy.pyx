# distutils: language = c++
"""The maximum and every max-marginal of small linked components by enumeration (the
pairwise kind; paper 002 eqs. 9-10).

A component of k samples has 2^k labellings. Walking them in Gray-code order changes one label
per step, so a step updates the score in O(degree of that sample) and the 2k running
max-marginals in O(k): O(2^k k) per component, with no graph to build. On the components of a
few samples that real groupings have (segments of one recording, boxes of one image) this is
faster than any cut (measured: ``python -m benchmarks --pairwise``).

Labellings are kept as bit codes (bit i: the label of the component's i-th sample). Valid for pair
scores of any sign (enumeration needs no submodularity).

The running score only proposes: it accumulates rounding along the walk, and with pair scores many
binary orders of magnitude above the unary ones (adding and removing -1e16 wipes out a unary score
of 1) it can rank labellings wrongly (issue 24 item 3). So every labelling whose running score comes
within a proven bound of the rounding (``tol``) of a kept maximum is evaluated from scratch
(:func:`_value`, what is compared and reported), and only those exact values decide. At ordinary
scales ``tol`` is ~1e-12 of the scores and only improvements and near-ties are re-evaluated, so the
walk keeps its speed; at extreme scales (``tol`` above the unary scores) nearly every labelling is
re-evaluated: O(2^k (k + m)) for the component, still exact, like brute force. Ties go, as before, to
the first labelling of the walk with the largest value.
"""
from libc.math cimport INFINITY, fabs

from aprank.inference._kernel cimport i64

#: The largest component the kernel takes (codes are 64-bit; 2^k steps).
MAX_SIZE = 24

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


cdef inline i64 _bit(i64 code, i64 i) noexcept nogil:
    return (code >> i) & 1


cdef double _value(i64 code, i64 a, i64 k, const double[::1] s, const i64[::1] ea,
                   const i64[::1] eb, const double[::1] c, i64 e0, i64 e1) noexcept nogil:
    """Score of labelling ``code`` of the component of nodes a..a+k-1 and pairs e0..e1-1."""
    cdef double v = 0.0
    cdef i64 i, e
    for i in range(k):
        if _bit(code, i):
            v += s[a + i]
    for e in range(e0, e1):
        if _bit(code, ea[e] - a) != _bit(code, eb[e] - a):
            v += c[e]
    return v


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
    labelling of the component with p's label flipped, and its value.
    """
    cdef i64 n_comps = comps.shape[0]
    cdef i64 qi, q, a, k, e0, e1, j, node, p, i, r, code, bcode, t, steps, bj
    cdef double score, bval, bthr, v, size, tol, adds
    cdef bint have_v
    # run[2 i + b]: the best value seen with label b at the component's i-th sample (exact, by
    # _value), thr[2 i + b] = run[2 i + b] - tol; indexing by the label, not branching on it,
    # keeps the walk free of unpredictable branches
    cdef double run[128]
    cdef double thr[128]
    cdef i64 run_code[128]
    with nogil:
        for qi in range(n_comps):
            q = comps[qi]
            a = offsets[q]
            k = offsets[q + 1] - a
            e0 = e_off[q]
            e1 = e_off[q + 1]
            # Every partial sum of the walk and of _value is a sum of distinct unary and pair
            # scores, so at most ``size`` in magnitude, and each addition rounds by at most
            # 2^-53 of it: the walk's ``adds`` additions and _value's k + m leave running score
            # and exact value at most (adds + k + m) 2^-53 size apart; twice that covers the
            # rounding of the bound itself and of ``v - tol`` (products of +-1 are exact).
            size = 0.0
            for i in range(k):
                size += fabs(s[a + i])
            for i in range(e0, e1):
                size += fabs(c[i])
            adds = 0.0
            for i in range(k):          # sample i flips 2^(k-1-i) times, each 1 + degree adds
                adds += <double>((<i64>1) << (k - 1 - i)) * (1 + nbr_ptr[a + i + 1] - nbr_ptr[a + i])
            tol = size * (2.0 * (adds + k + (e1 - e0) + 2) * 1.1102230246251565e-16)
            code = 0            # every label 0: no unary score, no pair cut (exactly 0)
            score = 0.0
            bcode = 0
            bval = 0.0
            bthr = -tol
            for i in range(k):
                run[2 * i] = 0.0
                thr[2 * i] = -tol
                run[2 * i + 1] = -INFINITY
                thr[2 * i + 1] = -INFINITY
                run_code[2 * i] = 0
                run_code[2 * i + 1] = 0
            steps = (<i64>1) << k
            for t in range(1, steps):
                j = __builtin_ctzll(<unsigned long long>t)
                node = a + j
                bj = _bit(code, j)
                # flipping y_j adds s_j (0 -> 1) or removes it; a pair to a neighbour with the
                # same label becomes cut (+c), one with the other label uncut (-c). +-1 factors
                # are exact, so this adds the same numbers as branches would.
                score += (1 - 2 * bj) * s[node]
                for p in range(nbr_ptr[node], nbr_ptr[node + 1]):
                    score += (1 - 2 * (_bit(code, nbr[p] - a) ^ bj)) * nbr_c[p]
                code ^= (<i64>1) << j
                have_v = False
                if score > bthr:        # may beat the maximum: decide on the exact value
                    v = _value(code, a, k, s, ea, eb, c, e0, e1)
                    have_v = True
                    if v > bval:
                        bval = v
                        bthr = v - tol
                        bcode = code
                if marginals:
                    for i in range(k):
                        r = 2 * i + _bit(code, i)
                        if score > thr[r]:
                            if not have_v:
                                v = _value(code, a, k, s, ea, eb, c, e0, e1)
                                have_v = True
                            if v > run[r]:
                                run[r] = v
                                thr[r] = v - tol
                                run_code[r] = code
            best_code[q] = bcode
            best[q] = bval
            if marginals:
                for i in range(k):
                    r = 2 * i + 1 - _bit(bcode, i)
                    other_code[a + i] = run_code[r]
                    other[a + i] = run[r]
