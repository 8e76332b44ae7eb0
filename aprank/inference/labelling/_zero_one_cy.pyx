# distutils: language = c++
"""Loss-augmented inference for the weighted 0-1 loss of the binary structural SVM.

Dokania et al. (2014), eq. 7:
Delta(Y*, Y) = (J * #positives labelled 0 + #negatives labelled 1) / (J P + N).
With the joint feature Psi(X, Y) = sum_i v_i y~_i psi(x_i) / (2 (J P + N)), where y~ = 2y - 1 and
v_i = J for a positive and 1 for a negative, the problem separates over samples: a sample is
flipped exactly when its margin y~*_i s_i is below 1, and the objective is the class-weighted
hinge loss sum_i v_i max(0, 1 - y~*_i s_i) / (J P + N). O(N + P).

Scores near DBL_MAX: the hinge sum can reach (J P + N)(1 + max |s|). Where that would pass
DBL_MAX, a query's margins, its hinge terms and the 1 they are compared with are all scaled by
one power of two (exact; a score that turns subnormal only rounds a term that is already far
below the scaled 1 beside it), and the objective is scaled back: the result is that of the
unscaled arithmetic, or ValueError when the objective itself exceeds DBL_MAX.
"""
from libc.stdint cimport int8_t, uint8_t
from libc.math cimport fabs, ilogb, ldexp

from aprank.inference._kernel cimport i64


def zero_one_queries(const double[:] scores, const uint8_t[:] is_pos, const i64[::1] order,
                     const i64[::1] offsets, double J, int8_t[::1] labelling,
                     i64[::1] ranks, double[::1] coef, double[::1] loss, double[::1] objective):
    """Fill the outputs for every query. J < 0 means J = N / P per query.

    labelling[k] is 1 when sample k is labelled relevant. The labelling is also reported as a
    ranking with two blocks, samples labelled relevant first, positives first inside a block:
    a true positive has rank 1, a false negative 1 + #false positives, a false positive
    1 + #true positives and a true negative P + 1.
    """
    cdef i64 n_queries = offsets.shape[0] - 1
    cdef const i64* order_p = &order[0] if order is not None and order.shape[0] > 0 else NULL
    cdef i64 q, t, k, a, b, P, N, n_tp, n_fp
    cdef double Jq, z, v, y, margin, lsum, osum, amax, one
    cdef int need
    cdef i64 bad_query = -1
    with nogil:
        for q in range(n_queries):
            a = offsets[q]
            b = offsets[q + 1]
            P = 0
            amax = 1.0
            for t in range(a, b):
                k = order_p[t] if order_p != NULL else t
                P += is_pos[k]
                if fabs(scores[k]) > amax:
                    amax = fabs(scores[k])
            N = (b - a) - P
            Jq = J if J >= 0.0 else (<double>N / <double>P if P > 0 else 0.0)
            z = Jq * P + N
            # one: the scaled 1, a power of two with z (1 + amax) one <= 2^1021
            one = 1.0
            if z > 0.0:
                need = ilogb(z) + ilogb(amax) + 3
                if need > 1021:
                    one = ldexp(1.0, 1021 - need)
            lsum = 0.0
            osum = 0.0
            n_tp = 0
            n_fp = 0
            for t in range(a, b):
                k = order_p[t] if order_p != NULL else t
                y = 1.0 if is_pos[k] else -1.0
                v = Jq if is_pos[k] else 1.0
                margin = y * (scores[k] * one)
                if margin < one and v > 0.0:
                    lsum += v
                    osum += v * (one - margin)
                    y = -y
                coef[k] = v * y / (2.0 * z) if z > 0.0 else 0.0
                labelling[k] = y > 0.0
                if y > 0.0:
                    n_tp += is_pos[k]
                    n_fp += 1 - is_pos[k]
            for t in range(a, b):
                k = order_p[t] if order_p != NULL else t
                if is_pos[k]:
                    ranks[k] = 1 if labelling[k] else 1 + n_fp
                else:
                    ranks[k] = 1 + n_tp if labelling[k] else P + 1
            loss[q] = lsum / z if z > 0.0 else 0.0
            objective[q] = (osum / z) / one if z > 0.0 else 0.0
            if objective[q] > 1.7976931348623157e308:
                bad_query = q
                break
    if bad_query >= 0:
        raise ValueError(
            f"the objective of query {bad_query} (in the order of the groups) overflows float64: "
            f"its hinge terms add up beyond 1.8e308 (largest |score| {amax!r}); rescale the "
            f"scores before inference")
