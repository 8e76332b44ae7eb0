// The c-star top-k maximisation of Mensink et al. (2011) (section 4):
//
//     max over subsets t of exactly k items of   sum_i t_i u_i + t'F t,
//
// with F non-zero only in the rows and columns of a core of C items. For a fixed state of the
// core (which core items are in), the other items do not interact with each other, so the best
// completion takes the r = k - |core in| non-core items with the largest
//     g_i = u_i + sum_{c in} (F[c][i] + F[i][c])
// (the printed eq. 7 counts each pair once; t'Ft counts F[c][i] and F[i][c], and the
// brute-force oracle agrees with this form). The 2^C states are visited in Gray-code order, so
// moving to the next state adds or removes one core item and updates every g_i in O(1): with a
// linear-time selection (std::nth_element) the total is O(2^C N), the bound of the paper less
// its k log k for sorting the k chosen items, which the subset does not need.
//
// Items may be clamped (interactive labelling, Mensink et al. 2011, section 5): clamp[i] = 1 forces
// item i in, -1 forces it out, 0 leaves it free. Ties: states are compared strictly in Gray-code
// order (the first best state wins) and equal g_i go to the smaller index, so results are
// deterministic; the value is what every exact method must agree on.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace aprank {

struct CStar {
    int64_t n;            // items of the query
    int64_t C;            // core size
    const int64_t* core;  // C item indices (distinct, validated)
    const double* W;      // C x n: W[c*n + i] = F[core_c][i] + F[i][core_c]
    const double* Fcc;    // C x C: F[core_c][core_d]
    const uint8_t* in_core;  // n flags
};

// A check for a pending stop (Ctrl-C) that the kernel makes every POLL_WORK item updates, about
// 0.05-0.1 s: a core of 20 over 1e6 items is an hour of states. ``pending`` is the caller's
// (the Cython wrapper reacquires the GIL and asks PyErr_CheckSignals); this header knows
// nothing of Python. Not more often: taking the GIL back may wait out another thread's switch
// interval (5 ms). A stopped solve returns at once and its outputs are to be discarded.
struct Poll {
    bool (*pending)() = nullptr;   // nullptr: never asked
    int64_t work = 0;              // item updates since the last check
    bool stopped = false;
};

static const int64_t POLL_WORK = (int64_t)1 << 26;

// Count ``work`` item updates; true when a check found a stop pending (now or earlier).
static inline bool poll_stop(Poll* poll, int64_t work) {
    if (poll == nullptr || poll->pending == nullptr) return false;
    if (poll->stopped) return true;
    poll->work += work;
    if (poll->work < POLL_WORK) return false;
    poll->work = 0;
    poll->stopped = poll->pending();
    return poll->stopped;
}

// Largest-first order of free non-core items: by g descending, ties by ascending index.
struct ByGain {
    const double* g;
    bool operator()(int64_t a, int64_t b) const {
        return (g[a] > g[b]) || (g[a] == g[b] && a < b);
    }
};

// The Gray-code walk's next state ``step`` (> 0): core item b = ctz(step) flips in ``mask``,
// and every item's interaction part gw and gain g = u + gw follow.
static inline void gray_step(const CStar& S, const double* u, uint64_t step, uint64_t& mask,
                             std::vector<double>& gw, std::vector<double>& g) {
    const int64_t n = S.n;
    int64_t b = __builtin_ctzll(step);
    double sign = (mask >> b) & 1 ? -1.0 : 1.0;
    mask ^= (uint64_t)1 << b;
    const double* w = S.W + b * n;
    for (int64_t i = 0; i < n; ++i) {
        gw[i] += sign * w[i];
        g[i] = u[i] + gw[i];
    }
}

// The core's part of state ``mask``: false where it breaks a clamp; else its m items in, their
// unary scores added to uv and their interactions to wv (the terms' magnitudes to mag).
static inline bool add_core(const CStar& S, const double* u, const int8_t* clamp, uint64_t mask,
                            int64_t& m, double& uv, double& wv, double& mag) {
    const int64_t C = S.C;
    for (int64_t c = 0; c < C; ++c) {
        bool in = (mask >> c) & 1;
        int8_t cl = clamp[S.core[c]];
        if ((in && cl < 0) || (!in && cl > 0)) return false;
        if (!in) continue;
        ++m;
        uv += u[S.core[c]];
        mag += std::fabs(u[S.core[c]]);
        for (int64_t d = 0; d < C; ++d)
            if ((mask >> d) & 1) { wv += S.Fcc[c * C + d]; mag += std::fabs(S.Fcc[c * C + d]); }
    }
    return true;
}

// The state's best completion added to uv, wv and mag: the non-core items clamped in, then the
// r free items of largest gain g, which nth_element puts in pool[0..r-1].
static inline void add_completion(const CStar& S, const double* u, const int8_t* clamp,
                                  const std::vector<double>& g, const std::vector<double>& gw,
                                  std::vector<int64_t>& pool, int64_t r, double& uv, double& wv,
                                  double& mag) {
    const int64_t n = S.n, n_free = (int64_t)pool.size();
    for (int64_t i = 0; i < n; ++i)
        if (!S.in_core[i] && clamp[i] > 0) {
            uv += u[i];
            wv += gw[i];
            mag += std::fabs(u[i]) + std::fabs(gw[i]);
        }
    if (r > 0) {
        ByGain by{g.data()};
        if (r < n_free) std::nth_element(pool.begin(), pool.begin() + (r - 1), pool.end(), by);
        // after nth_element the r best are pool[0..r-1] (in some order); with r = n_free all
        for (int64_t q = 0; q < r; ++q) {
            uv += u[pool[q]];
            wv += gw[pool[q]];
            mag += std::fabs(u[pool[q]]) + std::fabs(gw[pool[q]]);
        }
    }
}

// flags[i] = 1 for the items of a state's subset (0 for the others): the non-core items clamped
// in, the free ones pool[0..r-1] and the core items of ``mask``.
static inline void mark_subset(const CStar& S, const int8_t* clamp,
                               const std::vector<int64_t>& pool, int64_t r, uint64_t mask,
                               std::vector<uint8_t>& flags) {
    const int64_t n = S.n, C = S.C;
    for (int64_t i = 0; i < n; ++i) flags[i] = 0;
    for (int64_t i = 0; i < n; ++i)
        if (!S.in_core[i] && clamp[i] > 0) flags[i] = 1;
    for (int64_t q = 0; q < r; ++q) flags[pool[q]] = 1;
    for (int64_t c = 0; c < C; ++c) flags[S.core[c]] = (mask >> c) & 1;
}

// The unary scores of the items in subset ``cur`` only less those in ``best`` only, summed
// (Neumaier: to an ulp of its terms); an item in both cancels exactly.
static inline double unary_difference(const double* u, const std::vector<uint8_t>& cur,
                                      const std::vector<uint8_t>& best, int64_t n) {
    double s = 0.0, comp = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        if (cur[i] == best[i]) continue;
        double x = cur[i] ? u[i] : -u[i];
        double y = s + x;
        comp += std::fabs(s) >= std::fabs(x) ? (s - y) + x : (x - y) + s;
        s = y;
    }
    return s + comp;
}

// The value of subset t summed directly: sum t u + t'F t restricted to the core.
static inline double subset_value(const CStar& S, const double* u, const uint8_t* t) {
    const int64_t n = S.n, C = S.C;
    double value = 0.0;
    for (int64_t i = 0; i < n; ++i)
        if (t[i]) value += u[i];
    for (int64_t c = 0; c < C; ++c) {
        if (!t[S.core[c]]) continue;
        for (int64_t d = 0; d < C; ++d)
            if (t[S.core[d]]) value += S.Fcc[c * C + d];
        const double* w = S.W + c * n;
        for (int64_t i = 0; i < n; ++i)
            if (t[i] && !S.in_core[i]) value += w[i];
    }
    return value;
}

// Solve one query. u: n unary scores; clamp: n values in {-1, 0, 1}; k: subset size.
// Writes t (n flags) and returns the value, or -infinity when no subset meets the clamps (or
// when ``poll`` found a stop pending: then t is left unwritten and poll->stopped is set).
//
// Two states are compared by their values' difference at the scale of the terms that differ:
// a state's value is summed (with the magnitude of its terms) and decides where the two
// differ by more than their rounding; otherwise the unary scores of the items in one subset
// only are summed (an item in both cancels exactly, however far its score from the others)
// plus the difference of the interaction parts (at the scale of F). A score far from the
// others then changes no comparison between subsets that both hold it.
static inline double cstar_solve(const CStar& S, const double* u, const int8_t* clamp, int64_t k,
                                 uint8_t* t, std::vector<double>& g, std::vector<int64_t>& pool,
                                 Poll* poll = nullptr) {
    const int64_t n = S.n, C = S.C;
    const double NEG_INF = -std::numeric_limits<double>::infinity();
    const double EPS = std::numeric_limits<double>::epsilon();
    g.assign(u, u + n);
    std::vector<double> gw(n, 0.0);        // the state's interaction part of each g
    std::vector<uint8_t> cur(n, 0), best_in(n, 0);
    pool.clear();
    int64_t forced = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (S.in_core[i]) continue;
        if (clamp[i] > 0) ++forced;
        else if (clamp[i] == 0) pool.push_back(i);
    }
    const int64_t n_free = (int64_t)pool.size();
    double best = NEG_INF, best_mag = 0.0, best_w = 0.0;
    int64_t best_terms = 0;
    int64_t best_r = -1;
    uint64_t mask = 0;
    const uint64_t n_states = (uint64_t)1 << C;
    for (uint64_t step = 0; step < n_states; ++step) {
        // a state touches every item (and the C x C core) about twice
        if (poll_stop(poll, 2 * n + C * C + 1)) return NEG_INF;
        if (step > 0) gray_step(S, u, step, mask, gw, g);
        int64_t m = 0;
        // value = uv (unary scores) + wv (interactions); mag: the magnitude of their terms
        double uv = 0.0, wv = 0.0, mag = 0.0;
        const bool ok = add_core(S, u, clamp, mask, m, uv, wv, mag);
        int64_t r = k - m - forced;
        if (!ok || r < 0 || r > n_free) continue;
        add_completion(S, u, clamp, g, gw, pool, r, uv, wv, mag);
        const double value = uv + wv;
        const int64_t terms = m * (C + 1) + forced + 2 * r;
        bool take = best_r < 0;
        if (!take) {
            // each sum rounds by at most (terms) eps of its magnitude
            double tol = (double)(terms + best_terms + 2) * EPS * (mag + best_mag);
            double d = value - best;
            if (d > tol) {
                take = true;
            } else if (d >= -tol) {
                // within rounding: the unary scores of the items in one subset only, and the
                // interaction parts' difference
                mark_subset(S, clamp, pool, r, mask, cur);
                take = unary_difference(u, cur, best_in, n) + (wv - best_w) > 0;
            }
        }
        if (take) {
            best = value; best_mag = mag; best_w = wv; best_terms = terms;
            best_r = r;
            mark_subset(S, clamp, pool, r, mask, best_in);
        }
    }
    for (int64_t i = 0; i < n; ++i) t[i] = 0;
    if (best_r < 0) return NEG_INF;
    // The winning state's subset, as compared.
    for (int64_t i = 0; i < n; ++i) t[i] = best_in[i];
    return subset_value(S, u, t);
}

}  // namespace aprank
