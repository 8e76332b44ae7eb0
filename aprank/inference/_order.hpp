// Ordering primitives shared by every rank kernel: the tie rule, partition and sort.
//
// Samples of one class live in two parallel arrays: s[] (scores) and x[] (input indices).
// They are ranked by descending score; equal scores are broken by ascending input index. This
// is the deterministic tie rule of aprank (ERRATA item 11): with it every exact algorithm works
// on the same strict total order, so all of them return the same ranking, ties included.
//
// partition() is where the time goes (OptRanks partitions ~N keys per level, log P levels), so
// it has two implementations that give identical results:
//   * partition_avx512: the compress-store scheme of x86-simd-sort (Bramas 2017; Intel's
//     x86-simd-sort), 8 keys per step. Used when the CPU has AVX-512F and the caller allows it.
//   * partition_block: portable branch-free block partitioning (Edelkamp & Weiss,
//     BlockQuicksort, ESA 2016).
// Both partition around the key at s[hi-1], x[hi-1] and return its final position;
// partition_at() moves the chosen pivot there and dispatches.
#pragma once
#include <cstdint>
#include <utility>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define APRANK_HAVE_AVX512 1
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

// Branch-free Lomuto over [lo, hi) around (ps, pi); returns the number of keys ranked above it
// plus lo. The swap is unconditional and only the counter depends on the comparison.
static inline int64_t lomuto(double* s, int64_t* x, int64_t lo, int64_t hi, double ps, int64_t pi) {
    int64_t k = lo;
    for (int64_t t = lo; t < hi; ++t) {
        const double es = s[t];
        const int64_t ei = x[t];
        s[t] = s[k];
        x[t] = x[k];
        s[k] = es;
        x[k] = ei;
        k += before(es, ei, ps, pi);
    }
    return k;
}

static inline int64_t partition_block(double* s, int64_t* x, int64_t lo, int64_t hi) {
    constexpr int B = 128;  // offsets fit in an unsigned char
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

#ifdef APRANK_HAVE_AVX512
__attribute__((target("avx512f"))) static inline __mmask8
avx512_left_mask(__m512d vs, __m512i vx, __m512d vps, __m512i vpi) {
    const __mmask8 gt = _mm512_cmp_pd_mask(vs, vps, _CMP_GT_OQ);
    const __mmask8 eq = _mm512_cmp_pd_mask(vs, vps, _CMP_EQ_OQ);
    const __mmask8 lt = _mm512_cmplt_epi64_mask(vx, vpi);
    return gt | (eq & lt);
}

// Write the 8 keys (vs, vx): those ranked above the pivot at s[*lw], the others ending at s[*rw].
__attribute__((target("avx512f"))) static inline void
avx512_scatter(double* s, int64_t* x, int64_t* lw, int64_t* rw, __m512d vs, __m512i vx,
               __m512d vps, __m512i vpi) {
    const __mmask8 m = avx512_left_mask(vs, vx, vps, vpi);
    const int c = __builtin_popcount((unsigned)m);
    _mm512_mask_compressstoreu_pd(s + *lw, m, vs);
    _mm512_mask_compressstoreu_epi64(x + *lw, m, vx);
    *lw += c;
    *rw -= 8 - c;
    _mm512_mask_compressstoreu_pd(s + *rw, (__mmask8)~m, vs);
    _mm512_mask_compressstoreu_epi64(x + *rw, (__mmask8)~m, vx);
}

// In place: two vectors are held in registers so that a free gap of at least 8 slots always
// exists on the side being written; each step reads 8 keys from the side with less free space.
__attribute__((target("avx512f"))) static inline int64_t
partition_avx512(double* s_all, int64_t* x_all, int64_t lo, int64_t hi) {
    const double ps = s_all[hi - 1];
    const int64_t pi = x_all[hi - 1];
    double* s = s_all + lo;
    int64_t* x = x_all + lo;
    const int64_t n = hi - 1 - lo;  // keys to place (the pivot stays at hi-1 until the end)
    const __m512d vps = _mm512_set1_pd(ps);
    const __m512i vpi = _mm512_set1_epi64(pi);
    // n % 8 leading keys are set aside and placed last, so the rest is whole vectors.
    const int rem = (int)(n % 8);
    double rem_s[8];
    int64_t rem_x[8];
    for (int i = 0; i < rem; ++i) {
        rem_s[i] = s[i];
        rem_x[i] = x[i];
    }
    int64_t left = rem, right = n;  // unread keys: [left, right)
    const __m512d keep_ls = _mm512_loadu_pd(s + left), keep_rs = _mm512_loadu_pd(s + right - 8);
    const __m512i keep_lx = _mm512_loadu_si512(x + left), keep_rx = _mm512_loadu_si512(x + right - 8);
    left += 8;
    right -= 8;
    int64_t lw = 0, rw = n;  // next write on the left; end of the writes on the right
    while (right != left) {
        __m512d vs;
        __m512i vx;
        if (left - lw <= rw - right) {
            vs = _mm512_loadu_pd(s + left);
            vx = _mm512_loadu_si512(x + left);
            left += 8;
        } else {
            right -= 8;
            vs = _mm512_loadu_pd(s + right);
            vx = _mm512_loadu_si512(x + right);
        }
        avx512_scatter(s, x, &lw, &rw, vs, vx, vps, vpi);
    }
    avx512_scatter(s, x, &lw, &rw, keep_ls, keep_lx, vps, vpi);
    avx512_scatter(s, x, &lw, &rw, keep_rs, keep_rx, vps, vpi);
    for (int i = 0; i < rem; ++i) {  // the gap [lw, rw) now has exactly rem slots
        if (before(rem_s[i], rem_x[i], ps, pi)) {
            s[lw] = rem_s[i];
            x[lw] = rem_x[i];
            ++lw;
        } else {
            --rw;
            s[rw] = rem_s[i];
            x[rw] = rem_x[i];
        }
    }
    swap_at(s_all, x_all, lo + lw, hi - 1);
    return lo + lw;
}

static inline bool cpu_has_avx512() {
    static const bool has = __builtin_cpu_supports("avx512f");
    return has;
}
#else
static inline bool cpu_has_avx512() { return false; }
#endif

// Partition [lo, hi) (hi - lo >= 3) around the key at position p; return its final position
// m: keys in [lo, m) rank above it, keys in (m, hi) below. `simd` allows the AVX-512 path.
static inline int64_t partition_at(double* s, int64_t* x, int64_t lo, int64_t hi, int64_t p,
                                   bool simd) {
    swap_at(s, x, p, hi - 1);
#ifdef APRANK_HAVE_AVX512
    if (simd && hi - lo > 64 && cpu_has_avx512()) return partition_avx512(s, x, lo, hi);
#endif
    return partition_block(s, x, lo, hi);
}

// Partition around a median-of-3 (or 9) pivot.
static inline int64_t partition(double* s, int64_t* x, int64_t lo, int64_t hi, bool simd) {
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

// Introsort: quicksort on partition(), insertion sort on short ranges, heap sort once the
// depth budget is spent (worst case O(n log n)).
static inline void sort_within(double* s, int64_t* x, int64_t lo, int64_t hi, int budget, bool simd) {
    while (hi - lo > 24) {
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
    insertion_sort(s, x, lo, hi);
}

// Sort [lo, hi) into rank order.
static inline void sort_keys(double* s, int64_t* x, int64_t lo, int64_t hi, bool simd) {
    int budget = 8;
    for (int64_t n = hi - lo; n > 1; n >>= 1) budget += 2;
    sort_within(s, x, lo, hi, budget, simd);
}

}  // namespace aprank
