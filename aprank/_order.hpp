// Ordering primitives shared by every rank kernel: the tie rule, partition and sort.
//
// Samples of one class live in two parallel arrays: s[] (scores) and x[] (input indices).
// They are ranked by descending score; equal scores are broken by ascending input index. This
// is the deterministic tie rule of aprank (docs/references.md, ties): with it every exact algorithm
// works on the same strict total order, so all of them return the same ranking, ties included.
//
// partition() is where the time goes (OptRanks partitions ~N keys per level, log P levels), so
// it has three implementations that give identical results:
//   * partition_avx512 and partition_avx2: the vectorised in-place scheme of x86-simd-sort
//     (Bramas 2017; Intel's x86-simd-sort), 8 and 4 keys per vector, chosen at run time when the
//     CPU has the instructions and the caller allows them (the `simd` level, see SimdLevel);
//     ranges of at most SHORT_MAX keys out of place, with the same vector steps.
//     They are compiled with target attributes, so the module builds and runs on any x86-64
//     and elsewhere.
//   * partition_block: portable branch-free block partitioning (Edelkamp & Weiss
//     2016, BlockQuicksort).
// All partition around the key at s[hi-1], x[hi-1] and return its final position;
// partition_at() moves the chosen pivot there and dispatches. The same `simd` level chooses how
// sort_keys() orders ranges of at most SORT_SMALL keys, which qs sorts by the thousand: by rank
// (rank_sort_avx512, rank_sort_avx2: each key's count of keys ranked above it, 8 or 4 keys per
// comparison, no branch on the keys) or by insertion sort (portable).
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define APRANK_HAVE_SIMD 1
#endif

namespace aprank {

// True when key (as, ai) is ranked above key (bs, bi).
static inline bool before(double as, int64_t ai, double bs, int64_t bi) {
    return (as > bs) | ((as == bs) & (ai < bi));
}

static inline void swap_at(double* s, int64_t* x, int64_t a, int64_t b) {
    std::swap(s[a], s[b]);
    std::swap(x[a], x[b]);
}

static inline int64_t median3(const double* s, const int64_t* x, int64_t a, int64_t b, int64_t c) {
    if (before(s[a], x[a], s[b], x[b])) {
        if (before(s[b], x[b], s[c], x[c])) return b;
        return before(s[a], x[a], s[c], x[c]) ? c : a;
    }
    if (before(s[a], x[a], s[c], x[c])) return a;
    return before(s[b], x[b], s[c], x[c]) ? c : b;
}

// Median of 3, or of 3 medians of 3 on long ranges: balanced splits on sorted input too.
static inline int64_t choose_pivot(const double* s, const int64_t* x, int64_t lo, int64_t hi) {
    const int64_t n = hi - lo, mid = lo + n / 2;
    if (n < 256) return median3(s, x, lo, mid, hi - 1);
    const int64_t d = n / 8;
    return median3(s, x, median3(s, x, lo, lo + d, lo + 2 * d),
                   median3(s, x, mid - d, mid, mid + d),
                   median3(s, x, hi - 1 - 2 * d, hi - 1 - d, hi - 1));
}

// Longest range lomuto() partitions: partition_block leaves it at most 2 B = 256 keys.
constexpr int64_t LOMUTO_MAX = 256;

// Branch-free partition of [lo, hi) (at most LOMUTO_MAX keys) around (ps, pi); returns the
// number of keys ranked above it plus lo. Every key is written both to the left run (at k, which
// never passes the key being read) and to a buffer of the right run, and only the two counters
// depend on the comparison: no load waits for the comparison before it, as the in-place swap
// of Lomuto's scheme would (a load from position k, just stored to). The buffer then follows
// the left run. Each side keeps the keys' order.
static inline int64_t lomuto(double* s, int64_t* x, int64_t lo, int64_t hi, double ps, int64_t pi) {
    double rs[LOMUTO_MAX];
    int64_t rx[LOMUTO_MAX];
    int64_t k = lo, r = 0;
    for (int64_t t = lo; t < hi; ++t) {
        const double es = s[t];
        const int64_t ei = x[t];
        const bool above = before(es, ei, ps, pi);
        s[k] = es;
        x[k] = ei;
        rs[r] = es;
        rx[r] = ei;
        k += above;
        r += !above;
    }
    for (int64_t j = 0; j < r; ++j) {
        s[k + j] = rs[j];
        x[k + j] = rx[j];
    }
    return k;
}

static inline int64_t partition_block(double* s, int64_t* x, int64_t lo, int64_t hi) {
    constexpr int B = LOMUTO_MAX / 2;  // 128: offsets fit in an unsigned char
    const double ps = s[hi - 1];
    const int64_t pi = x[hi - 1];
    int64_t first = lo, last = hi - 2;  // keys before first belong left, after last right
    unsigned char off_l[B], off_r[B];
    int n_l = 0, n_r = 0, start_l = 0, start_r = 0;
    while (last - first + 1 > 2 * B) {
        if (n_l == 0) {
            start_l = 0;
            for (int j = 0; j < B; ++j) {
                off_l[n_l] = (unsigned char)j;
                n_l += !before(s[first + j], x[first + j], ps, pi);
            }
        }
        if (n_r == 0) {
            start_r = 0;
            for (int j = 0; j < B; ++j) {
                off_r[n_r] = (unsigned char)j;
                n_r += before(s[last - j], x[last - j], ps, pi);
            }
        }
        const int num = n_l < n_r ? n_l : n_r;
        for (int j = 0; j < num; ++j)
            swap_at(s, x, first + off_l[start_l + j], last - off_r[start_r + j]);
        n_l -= num;
        n_r -= num;
        start_l += num;
        start_r += num;
        if (n_l == 0) first += B;
        if (n_r == 0) last -= B;
    }
    const int64_t k = lomuto(s, x, first, last + 1, ps, pi);
    swap_at(s, x, k, hi - 1);
    return k;
}

#ifdef APRANK_HAVE_SIMD
// The vector partitions (Bramas 2017; Intel's x86-simd-sort) classify a vector of W keys
// against the pivot, permute it so that the keys ranked above the pivot come first (in their
// order) and the others last, and store the whole vector twice: at the left write position and
// ending at the right one. Only c keys of the first store and W - c of the second are kept; the
// rest lands in the free gap between the two write positions and is overwritten later. Keys
// set aside at the start (see APRANK_VECTOR_PARTITION) keep at least W free slots on each side
// at every store, so the full-width stores never reach an unread key. Full stores of a permuted register, not
// compress-stores to memory: vcompresspd/vpcompressq with a memory operand are microcoded on
// AMD Zen 4, which makes a compress-store partition slower than the portable one, and the
// permute is faster on Intel too (the figures: docs/benchmarks/inference.md, partition
// paths).

// perm[m], byte j: the lane that output lane j takes when the lanes set in m go left.
template <int W>
struct LanePerm {
    uint64_t perm[1 << W];
    constexpr LanePerm() : perm() {
        for (int m = 0; m < (1 << W); ++m) {
            uint64_t p = 0;
            int j = 0;
            for (int i = 0; i < W; ++i)
                if ((m >> i) & 1) p |= (uint64_t)i << (8 * j++);
            for (int i = 0; i < W; ++i)
                if (!((m >> i) & 1)) p |= (uint64_t)i << (8 * j++);
            perm[m] = p;
        }
    }
};

// AVX2 permutes 32-bit lanes: 64-bit lane i is 32-bit lanes 2i and 2i+1.
struct LanePerm32x8 {
    uint64_t perm[16];
    constexpr LanePerm32x8() : perm() {
        constexpr LanePerm<4> p4{};
        for (int m = 0; m < 16; ++m) {
            uint64_t p = 0;
            for (int j = 0; j < 4; ++j) {
                const uint64_t i = (p4.perm[m] >> (8 * j)) & 0xff;
                p |= (2 * i) << (16 * j) | (2 * i + 1) << (16 * j + 8);
            }
            perm[m] = p;
        }
    }
};

inline constexpr LanePerm<8> kPerm8{};
inline constexpr LanePerm32x8 kPerm4{};

// The loop shared by both widths. V provides W (keys per vector), K (vectors read per step),
// the vector types, loads and stores, and scatter(s, x, lw, rw, vs, vx): classify, permute,
// store twice, advance lw and rw. Reading K vectors per side choice spends one hard-to-predict
// branch per K W keys; 2 K vectors held from the start keep the free space of each side at
// least W before each of the K scatters.
#define APRANK_VECTOR_PARTITION(V)                                                              \
    constexpr int W = V::W, KW = V::K * V::W, HW = 2 * KW;                                    \
    const double ps = s_all[hi - 1];                                                          \
    const int64_t pi = x_all[hi - 1];                                                         \
    double* s = s_all + lo;                                                                   \
    int64_t* x = x_all + lo;                                                                  \
    const int64_t n = hi - 1 - lo; /* keys to place; the pivot stays at hi-1 until the end */ \
    const V v(ps, pi);                                                                        \
    /* n % KW leading keys are set aside and placed last, so the rest is whole steps. */      \
    const int rem = (int)(n % KW);                                                            \
    alignas(64) double held_s[HW];                                                            \
    alignas(64) int64_t held_x[HW];                                                           \
    double rem_s[KW + W];                                                                     \
    int64_t rem_x[KW + W];                                                                    \
    for (int i = 0; i < rem; ++i) {                                                           \
        rem_s[i] = s[i];                                                                      \
        rem_x[i] = x[i];                                                                      \
    }                                                                                         \
    int64_t left = rem, right = n; /* unread keys: [left, right) */                           \
    for (int i = 0; i < KW; ++i) {                                                            \
        held_s[i] = s[left + i];                                                              \
        held_x[i] = x[left + i];                                                              \
        held_s[KW + i] = s[right - KW + i];                                                   \
        held_x[KW + i] = x[right - KW + i];                                                   \
    }                                                                                         \
    left += KW;                                                                               \
    right -= KW;                                                                              \
    int64_t lw = 0, rw = n; /* next write on the left; end of the writes on the right */     \
    while (right != left) {                                                                   \
        typename V::S vs[V::K];                                                               \
        typename V::X vx[V::K];                                                               \
        int64_t at;                                                                           \
        if (left - lw <= rw - right) {                                                        \
            at = left;                                                                        \
            left += KW;                                                                       \
        } else {                                                                              \
            right -= KW;                                                                      \
            at = right;                                                                       \
        }                                                                                     \
        for (int k = 0; k < V::K; ++k) {                                                      \
            vs[k] = V::load_s(s + at + k * W);                                                \
            vx[k] = V::load_x(x + at + k * W);                                                \
        }                                                                                     \
        for (int k = 0; k < V::K; ++k) v.scatter(s, x, &lw, &rw, vs[k], vx[k]);               \
    }                                                                                         \
    /* The gap [lw, rw) has HW + rem slots: held vectors go with disjoint stores while at     \
       least 2 W slots are left; the last W + rem keys are placed one by one. */              \
    for (int k = 0; k + 1 < 2 * V::K; ++k)                                                    \
        v.scatter(s, x, &lw, &rw, V::load_s(held_s + k * W), V::load_x(held_x + k * W));      \
    for (int i = 0; i < W; ++i) {                                                             \
        rem_s[rem + i] = held_s[HW - W + i];                                                  \
        rem_x[rem + i] = held_x[HW - W + i];                                                  \
    }                                                                                         \
    for (int i = 0; i < rem + W; ++i) {                                                       \
        if (before(rem_s[i], rem_x[i], ps, pi)) {                                             \
            s[lw] = rem_s[i];                                                                 \
            x[lw] = rem_x[i];                                                                 \
            ++lw;                                                                             \
        } else {                                                                              \
            --rw;                                                                             \
            s[rw] = rem_s[i];                                                                 \
            x[rw] = rem_x[i];                                                                 \
        }                                                                                     \
    }                                                                                         \
    swap_at(s_all, x_all, lo + lw, hi - 1);                                                   \
    return lo + lw;

#define APRANK_AVX512 __attribute__((target("avx512f,popcnt")))
#define APRANK_AVX2 __attribute__((target("avx2,popcnt")))

struct Avx512Keys {
    static constexpr int W = 8, K = 4;
    using S = __m512d;
    using X = __m512i;
    __m512d vps;
    __m512i vpi;
    APRANK_AVX512 Avx512Keys(double ps, int64_t pi)
        : vps(_mm512_set1_pd(ps)), vpi(_mm512_set1_epi64(pi)) {}
    APRANK_AVX512 static inline S load_s(const double* p) { return _mm512_loadu_pd(p); }
    APRANK_AVX512 static inline X load_x(const int64_t* p) { return _mm512_loadu_si512(p); }
    APRANK_AVX512 static inline void store_s(double* p, S v) { _mm512_storeu_pd(p, v); }
    APRANK_AVX512 static inline void store_x(int64_t* p, X v) { _mm512_storeu_si512(p, v); }
    APRANK_AVX512 inline void scatter(double* s, int64_t* x, int64_t* lw, int64_t* rw, S vs,
                                      X vx) const {
        const __mmask8 gt = _mm512_cmp_pd_mask(vs, vps, _CMP_GT_OQ);
        const __mmask8 eq = _mm512_cmp_pd_mask(vs, vps, _CMP_EQ_OQ);
        const __mmask8 lt = _mm512_cmplt_epi64_mask(vx, vpi);
        const unsigned m = (unsigned)(gt | (eq & lt));
        const int c = __builtin_popcount(m);
        // the maskz forms with all lanes set: GCC 12's unmasked ones warn (a self-initialised
        // "undefined" operand in its headers)
        const __m512i idx =
            _mm512_maskz_cvtepu8_epi64(0xff, _mm_cvtsi64_si128((long long)kPerm8.perm[m]));
        const __m512d ws = _mm512_maskz_permutexvar_pd(0xff, idx, vs);
        const __m512i wx = _mm512_maskz_permutexvar_epi64(0xff, idx, vx);
        _mm512_storeu_pd(s + *lw, ws);
        _mm512_storeu_si512(x + *lw, wx);
        *lw += c;
        *rw -= W - c;
        _mm512_storeu_pd(s + *rw - c, ws);
        _mm512_storeu_si512(x + *rw - c, wx);
    }
};

struct Avx2Keys {
    static constexpr int W = 4, K = 8;
    using S = __m256d;
    using X = __m256i;
    __m256d vps;
    __m256i vpi;
    APRANK_AVX2 Avx2Keys(double ps, int64_t pi)
        : vps(_mm256_set1_pd(ps)), vpi(_mm256_set1_epi64x(pi)) {}
    APRANK_AVX2 static inline S load_s(const double* p) { return _mm256_loadu_pd(p); }
    APRANK_AVX2 static inline X load_x(const int64_t* p) {
        return _mm256_loadu_si256((const __m256i*)p);
    }
    APRANK_AVX2 static inline void store_s(double* p, S v) { _mm256_storeu_pd(p, v); }
    APRANK_AVX2 static inline void store_x(int64_t* p, X v) {
        _mm256_storeu_si256((__m256i*)p, v);
    }
    APRANK_AVX2 inline void scatter(double* s, int64_t* x, int64_t* lw, int64_t* rw, S vs,
                                    X vx) const {
        const __m256d gt = _mm256_cmp_pd(vs, vps, _CMP_GT_OQ);
        const __m256d eq = _mm256_cmp_pd(vs, vps, _CMP_EQ_OQ);
        const __m256d lt = _mm256_castsi256_pd(_mm256_cmpgt_epi64(vpi, vx));
        const unsigned m = (unsigned)_mm256_movemask_pd(_mm256_or_pd(gt, _mm256_and_pd(eq, lt)));
        const int c = __builtin_popcount(m);
        const __m256i idx = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)kPerm4.perm[m]));
        const __m256d ws = _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(vs), idx));
        const __m256i wx = _mm256_permutevar8x32_epi32(vx, idx);
        _mm256_storeu_pd(s + *lw, ws);
        _mm256_storeu_si256((__m256i*)(x + *lw), wx);
        *lw += c;
        *rw -= W - c;
        _mm256_storeu_pd(s + *rw - c, ws);
        _mm256_storeu_si256((__m256i*)(x + *rw - c), wx);
    }
};

// Ranges of more than SHORT_MAX keys are partitioned in place, shorter ones through a buffer
// (below). The in-place loop needs n >= rem + 2 K W keys, rem < K W.
constexpr int64_t SHORT_MAX = 128;
static_assert(3 * Avx512Keys::K * Avx512Keys::W - 1 <= SHORT_MAX, "AVX-512 steps too long");
static_assert(3 * Avx2Keys::K * Avx2Keys::W - 1 <= SHORT_MAX, "AVX2 steps too long");

// Ranges of at most SHORT_MAX keys, too short for the in-place scheme's setup (whole steps of
// K vectors on each side), are partitioned out of place: each vector of keys is classified and
// permuted as above and stored twice into a buffer, the left run growing from its start and the
// right run from its end, and both runs are copied back. Keys past the last whole vector are
// placed one by one, branch-free. The left run keeps its keys' order; the right run keeps it
// within each vector.
#define APRANK_SHORT_PARTITION(V)                                                               \
    constexpr int W = V::W;                                                                   \
    const double ps = s_all[hi - 1];                                                          \
    const int64_t pi = x_all[hi - 1];                                                         \
    const int64_t n = hi - 1 - lo; /* keys to place; the pivot stays at hi-1 until the end */ \
    const V v(ps, pi);                                                                        \
    /* the gap between the runs is at least 2 W before every store: neither store of a     \
       vector reaches the other run */                                                        \
    alignas(64) double bs[SHORT_MAX + 2 * W];                                                 \
    alignas(64) int64_t bx[SHORT_MAX + 2 * W];                                                \
    const int64_t end = n + 2 * W;                                                            \
    int64_t lw = 0, rw = end, t = 0;                                                          \
    for (; t + W <= n; t += W)                                                                \
        v.scatter(bs, bx, &lw, &rw, V::load_s(s_all + lo + t), V::load_x(x_all + lo + t));    \
    for (; t < n; ++t) {                                                                      \
        const double es = s_all[lo + t];                                                      \
        const int64_t ei = x_all[lo + t];                                                     \
        const bool above = before(es, ei, ps, pi);                                            \
        bs[lw] = es;                                                                          \
        bx[lw] = ei;                                                                          \
        bs[rw - 1] = es;                                                                      \
        bx[rw - 1] = ei;                                                                      \
        lw += above;                                                                          \
        rw -= !above;                                                                         \
    }                                                                                         \
    std::memcpy(s_all + lo, bs, (size_t)lw * sizeof(double));                                 \
    std::memcpy(x_all + lo, bx, (size_t)lw * sizeof(int64_t));                                \
    std::memcpy(s_all + lo + lw, bs + rw, (size_t)(end - rw) * sizeof(double));               \
    std::memcpy(x_all + lo + lw, bx + rw, (size_t)(end - rw) * sizeof(int64_t));              \
    swap_at(s_all, x_all, lo + lw, hi - 1);                                                   \
    return lo + lw;

// Partition [lo, hi) (hi - lo >= 3) around the key at hi-1; return its final position.
APRANK_AVX512 static inline int64_t partition_avx512(double* s_all, int64_t* x_all, int64_t lo,
                                                     int64_t hi) {
    if (hi - lo <= SHORT_MAX) {
        APRANK_SHORT_PARTITION(Avx512Keys)
    }
    APRANK_VECTOR_PARTITION(Avx512Keys)
}

APRANK_AVX2 static inline int64_t partition_avx2(double* s_all, int64_t* x_all, int64_t lo,
                                                 int64_t hi) {
    if (hi - lo <= SHORT_MAX) {
        APRANK_SHORT_PARTITION(Avx2Keys)
    }
    APRANK_VECTOR_PARTITION(Avx2Keys)
}

// Short ranges sorted by rank: each key goes to the position given by the number of keys
// ranked above it (distinct keys: the tie rule makes the order strict), counted 8 keys per
// comparison. No branch depends on the keys, where insertion sort mispredicts about once a key.
constexpr int64_t RANK_SORT_MAX = 32;

APRANK_AVX512 static inline void rank_sort_avx512(double* s, int64_t* x, int64_t lo, int64_t hi) {
    const int64_t n = hi - lo;
    double ts[RANK_SORT_MAX];
    int64_t tx[RANK_SORT_MAX];
    for (int64_t j = 0; j < n; ++j) {
        ts[j] = s[lo + j];
        tx[j] = x[lo + j];
    }
    for (int64_t i = 0; i < n; ++i) {
        const __m512d vi = _mm512_set1_pd(ts[i]);
        const __m512i xi = _mm512_set1_epi64(tx[i]);
        int64_t above = 0;
        for (int64_t b = 0; b < n; b += 8) {
            const __mmask8 m = n - b >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - b)) - 1);
            const __m512d vs = _mm512_maskz_loadu_pd(m, ts + b);
            const __m512i vx = _mm512_maskz_loadu_epi64(m, tx + b);
            const __mmask8 gt = _mm512_mask_cmp_pd_mask(m, vs, vi, _CMP_GT_OQ);
            const __mmask8 eq = _mm512_mask_cmp_pd_mask(m, vs, vi, _CMP_EQ_OQ);
            const __mmask8 lt = _mm512_mask_cmplt_epi64_mask(eq, vx, xi);
            above += _mm_popcnt_u32((unsigned)(gt | lt));
        }
        s[lo + above] = ts[i];
        x[lo + above] = tx[i];
    }
}

APRANK_AVX2 static inline void rank_sort_avx2(double* s, int64_t* x, int64_t lo, int64_t hi) {
    const int64_t n = hi - lo;
    // padded to whole vectors with NaN scores, which no comparison counts
    alignas(32) double ts[RANK_SORT_MAX];
    alignas(32) int64_t tx[RANK_SORT_MAX];
    for (int64_t j = 0; j < n; ++j) {
        ts[j] = s[lo + j];
        tx[j] = x[lo + j];
    }
    for (int64_t j = n; j < ((n + 3) & ~int64_t(3)); ++j) {
        ts[j] = __builtin_nan("");
        tx[j] = 0;
    }
    for (int64_t i = 0; i < n; ++i) {
        const __m256d vi = _mm256_set1_pd(ts[i]);
        const __m256i xi = _mm256_set1_epi64x(tx[i]);
        int64_t above = 0;
        for (int64_t b = 0; b < n; b += 4) {
            const __m256d vs = _mm256_load_pd(ts + b);
            const __m256i vx = _mm256_load_si256((const __m256i*)(tx + b));
            const __m256d gt = _mm256_cmp_pd(vs, vi, _CMP_GT_OQ);
            const __m256d eq = _mm256_cmp_pd(vs, vi, _CMP_EQ_OQ);
            const __m256d lt = _mm256_castsi256_pd(_mm256_cmpgt_epi64(xi, vx));
            above += _mm_popcnt_u32((unsigned)_mm256_movemask_pd(
                _mm256_or_pd(gt, _mm256_and_pd(eq, lt))));
        }
        s[lo + above] = ts[i];
        x[lo + above] = tx[i];
    }
}

static inline bool cpu_has_avx512() {
    static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt");
    return has;
}
static inline bool cpu_has_avx2() {
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    return has;
}
#else
static inline bool cpu_has_avx512() { return false; }
static inline bool cpu_has_avx2() { return false; }
#endif

// Partition paths, fastest last. The `simd` argument of the functions below is the highest
// path the caller allows; a path this CPU lacks falls back to the next lower one.
enum SimdLevel : int { SIMD_PORTABLE = 0, SIMD_AVX2 = 1, SIMD_AVX512 = 2 };

// The highest path this CPU runs.
static inline int cpu_simd_level() {
    return cpu_has_avx512() ? SIMD_AVX512 : cpu_has_avx2() ? SIMD_AVX2 : SIMD_PORTABLE;
}

// Partition [lo, hi) (hi - lo >= 3) around the key at position p; return its final position
// m: keys in [lo, m) rank above it, keys in (m, hi) below.
static inline int64_t partition_at(double* s, int64_t* x, int64_t lo, int64_t hi, int64_t p,
                                   int simd) {
    swap_at(s, x, p, hi - 1);
#ifdef APRANK_HAVE_SIMD
    if (simd >= SIMD_AVX512 && cpu_has_avx512()) return partition_avx512(s, x, lo, hi);
    if (simd >= SIMD_AVX2 && cpu_has_avx2()) return partition_avx2(s, x, lo, hi);
#else
    (void)simd;
#endif
    return partition_block(s, x, lo, hi);
}

// Partition around a median-of-3 (or 9) pivot.
static inline int64_t partition(double* s, int64_t* x, int64_t lo, int64_t hi, int simd) {
    return partition_at(s, x, lo, hi, choose_pivot(s, x, lo, hi), simd);
}

static inline void insertion_sort(double* s, int64_t* x, int64_t lo, int64_t hi) {
    for (int64_t t = lo + 1; t < hi; ++t) {
        const double es = s[t];
        const int64_t ei = x[t];
        int64_t u = t;
        for (; u > lo && before(es, ei, s[u - 1], x[u - 1]); --u) {
            s[u] = s[u - 1];
            x[u] = x[u - 1];
        }
        s[u] = es;
        x[u] = ei;
    }
}

static inline void sift_down(double* s, int64_t* x, int64_t lo, int64_t root, int64_t n) {
    // max-heap with respect to "ranked below", so the heap root is the lowest-ranked key
    for (;;) {
        int64_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && before(s[lo + child], x[lo + child], s[lo + child + 1], x[lo + child + 1]))
            ++child;
        if (!before(s[lo + root], x[lo + root], s[lo + child], x[lo + child])) return;
        swap_at(s, x, lo + root, lo + child);
        root = child;
    }
}

static inline void heap_sort(double* s, int64_t* x, int64_t lo, int64_t hi) {
    const int64_t n = hi - lo;
    for (int64_t r = n / 2 - 1; r >= 0; --r) sift_down(s, x, lo, r, n);
    for (int64_t end = n - 1; end > 0; --end) {
        swap_at(s, x, lo, lo + end);
        sift_down(s, x, lo, 0, end);
    }
}

// Ranges of at most this many keys are sorted without partitioning.
constexpr int64_t SORT_SMALL = 24;

// Introsort: quicksort on partition(), short ranges by rank (the vector paths) or insertion
// sort (the portable one), heap sort once the depth budget is spent (worst case O(n log n)).
static inline void sort_within(double* s, int64_t* x, int64_t lo, int64_t hi, int budget, int simd) {
    while (hi - lo > SORT_SMALL) {
        if (budget-- <= 0) {
            heap_sort(s, x, lo, hi);
            return;
        }
        const int64_t m = partition(s, x, lo, hi, simd);
        if (m - lo < hi - m - 1) {  // recurse on the smaller side: stack depth O(log n)
            sort_within(s, x, lo, m, budget, simd);
            lo = m + 1;
        } else {
            sort_within(s, x, m + 1, hi, budget, simd);
            hi = m;
        }
    }
#ifdef APRANK_HAVE_SIMD
    static_assert(SORT_SMALL <= RANK_SORT_MAX, "rank_sort_avx512 sorts at most RANK_SORT_MAX keys");
    if (hi - lo > 1) {
        if (simd >= SIMD_AVX512 && cpu_has_avx512()) return rank_sort_avx512(s, x, lo, hi);
        if (simd >= SIMD_AVX2 && cpu_has_avx2()) return rank_sort_avx2(s, x, lo, hi);
    }
#else
    (void)simd;
#endif
    insertion_sort(s, x, lo, hi);
}

// Sort [lo, hi) into rank order.
static inline void sort_keys(double* s, int64_t* x, int64_t lo, int64_t hi, int simd) {
    int budget = 8;
    for (int64_t n = hi - lo; n > 1; n >>= 1) budget += 2;
    sort_within(s, x, lo, hi, budget, simd);
}

}  // namespace aprank
