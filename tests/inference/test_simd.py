"""The partition paths (AVX-512, AVX2, portable) give bit-identical results, and the oracles agree.

Every exact ranking algorithm is run with each vector path forced (``aprank.set_simd``) and
with the portable path, on instances built to stress the vector partitions: heavy ties, all
scores equal, +-0.0 mixed (the tie rule treats them as one score), huge and subnormal scores,
sorted and reverse-sorted input, at sizes around the vector widths and the switch between the
two vector partitions (in place above 128 keys, through a buffer up to 128) and in the
thousands (guided pivots). The ranks, coefficients, loss and objective must be identical bit
for bit; the objective must equal an oracle's: every permutation (n <= 8), the exhaustive
``brute`` (n <= 16), and Yue's greedy written in NumPy from the paper at every size. A path
this CPU lacks is skipped with the reason.
"""
import numpy as np
import pytest

import aprank
from aprank.inference import SIMD_LEVELS
from aprank_support.oracle import best_over_permutations

VECTOR_LEVELS = ["avx512", "avx2"]
ORACLE = "numpy-greedy-oracle"
KINDS = ["ties", "all-equal", "signed-zeros", "extreme", "descending", "ascending",
         "sorted-ties", "continuous"]
#: the kinds the quick lane (pytest -m "not slow") runs on each vector path; every kind takes
#: 3-10 s, and the whole sweep runs in the full suite
QUICK_KINDS = {"ties"}
# (P, N): N around the vector widths and block sizes, around the 128 keys where the vector
# partitions switch scheme, and in the thousands (sampled pivots start at 4096 keys).
SIZES = ([(1, n) for n in range(0, 71, 3)] + [(3, n) for n in range(1, 71, 5)]
         + [(p, n) for p in (1, 4, 40) for n in range(126, 132)]
         + [(p, n) for p in (2, 25, 300) for n in (257, 1000, 1023, 1025, 4095, 4097, 6000)])


@pytest.fixture(params=VECTOR_LEVELS)
def level(request):
    """Force one vector path for the test, restoring the setting afterwards."""
    try:
        previous = aprank.set_simd(request.param)
    except ValueError:
        pytest.skip(f"this CPU has no {request.param} path")
    yield request.param
    aprank.set_simd(previous)


def make_instance(kind, P, N, seed):
    """Scores and labels of P positives and N negatives, shuffled unless the kind is sorted."""
    rng = np.random.default_rng(seed)
    n = P + N
    labels = rng.permutation(np.r_[np.ones(P, bool), np.zeros(N, bool)])
    if kind == "ties":
        scores = rng.integers(0, 4, n).astype(float) + labels * rng.integers(0, 2)
    elif kind == "all-equal":
        scores = np.full(n, float(rng.integers(-2, 3)))
    elif kind == "signed-zeros":       # -0.0 and 0.0 are one score: ties broken by index
        scores = np.where(rng.random(n) < 0.5, -0.0, 0.0)
        scores[rng.random(n) < 0.2] = rng.choice([1.0, -1.0])
    elif kind == "extreme":            # huge, tiny (subnormal) and zero, no NaN
        scores = rng.choice([1e300, -1e300, 5e-324, -5e-324, 2.5e-310, 0.0, -0.0, 1.0], n)
    elif kind in ("descending", "ascending"):
        scores = np.sort(rng.normal(0.0, 1.0, n))
        scores = scores[::-1].copy() if kind == "descending" else scores
    elif kind == "sorted-ties":
        scores = np.sort(rng.integers(0, 5, n)).astype(float)[::-1].copy()
    else:
        scores = rng.normal(labels * 1.0, 1.0)
    return scores, labels


def exact_names(loss, n):
    """The compiled exact algorithms (brute only where it is meant to run)."""
    return [a.name for a in aprank.algorithms(loss=loss, exact=True)
            if (a.max_samples is None or n <= a.max_samples) and a.name != ORACLE]


def solve_all(scores, labels, loss):
    return {name: aprank.infer(scores, labels, loss=loss, algorithm=name)
            for name in exact_names(loss, scores.size)}


def greedy_ranks(pos_scores, neg_scores, loss):
    """Yue's greedy (exact for these losses) in NumPy, from the paper: each negative in rank
    order takes the last rank that maximises the running sum of its steps."""
    P, N = pos_scores.size, neg_scores.size
    s_pos = np.sort(pos_scores)[::-1]
    ranks = np.empty(N, dtype=np.int64)
    i = np.arange(1, P + 1)
    for j, k in enumerate(np.lexsort((np.arange(N), -neg_scores)), start=1):
        steps = 2 * (s_pos - neg_scores[k]) / (P * N) + loss.increment(j, i, P, N)
        f = np.r_[0.0, np.cumsum(steps)]
        ranks[k] = 1 + np.flatnonzero(f >= f.max() - 1e-15)[-1]
    return ranks


@pytest.fixture(scope="module")
def oracle_name():
    """The NumPy greedy, registered as a user algorithm (the driver computes its output)."""
    name = ORACLE
    aprank.register(name, greedy_ranks, losses=("ap", "ndcg"), exact=True, complexity="O(PN)")
    yield name
    aprank.unregister(name)


def bits(a):
    return np.asarray(a, dtype=np.float64).view(np.int64)


def assert_identical(res, ref, where):
    np.testing.assert_array_equal(res.ranks, ref.ranks, err_msg=f"ranks {where}")
    np.testing.assert_array_equal(bits(res.coef), bits(ref.coef), err_msg=f"coef {where}")
    assert bits(res.loss) == bits(ref.loss), f"loss {res.loss!r} != {ref.loss!r} {where}"
    assert bits(res.objective) == bits(ref.objective), \
        f"objective {res.objective!r} != {ref.objective!r} {where}"


def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def test_set_simd_levels():
    """Levels by name, True / False kept, the previous setting returned, errors for the rest."""
    previous = aprank.set_simd(True)
    best = aprank.simd_level()
    try:
        assert best in SIMD_LEVELS and aprank.simd_active() == (best != "portable")
        assert aprank.set_simd(False) is True
        assert aprank.simd_level() == "portable" and not aprank.simd_active()
        assert aprank.set_simd("portable") is False
        for name in VECTOR_LEVELS:
            if SIMD_LEVELS.index(name) <= SIMD_LEVELS.index(best):
                assert aprank.set_simd(name) in ("portable",) + tuple(VECTOR_LEVELS)
                assert aprank.simd_level() == name and aprank.simd_active()
            else:
                with pytest.raises(ValueError, match="runs up to"):
                    aprank.set_simd(name)
        with pytest.raises(ValueError, match="set_simd takes"):
            aprank.set_simd("sse4")
        aprank.set_simd(True)
        assert aprank.simd_level() == best
    finally:
        aprank.set_simd(previous)


@pytest.mark.parametrize("kind", [k if k in QUICK_KINDS else pytest.param(k, marks=pytest.mark.slow)
                                  for k in KINDS])
def test_vector_paths_identical_to_portable_and_oracles(level, kind, oracle_name):
    for seed, (P, N) in enumerate(SIZES):
        scores, labels = make_instance(kind, P, N, seed)
        for loss in ("ap", "ndcg"):
            aprank.set_simd("portable")
            ref = solve_all(scores, labels, loss)
            aprank.set_simd(level)
            got = solve_all(scores, labels, loss)
            for name, res in got.items():
                assert_identical(res, ref[name], f"({level} vs portable, {loss} {name}, "
                                                 f"{kind}, P={P}, N={N}, seed {seed})")
            objective = got["qs"].objective
            if P + N <= 8:
                best = best_over_permutations(scores, labels, loss)
                assert close(objective, best), (kind, P, N, seed, objective, best)
            if kind != "extreme":       # the NumPy oracle's steps overflow at 1e300
                oracle = aprank.infer(scores, labels, loss=loss, algorithm=oracle_name).objective
                assert close(objective, oracle, 1e-9), (kind, P, N, seed, objective, oracle)
            for name, res in got.items():      # every exact algorithm reaches the optimum
                assert close(res.objective, objective), (name, kind, P, N, seed)


@pytest.mark.parametrize("N", [5, 64, 129, 1000, 5000])
def test_signed_zeros_are_one_score(N):
    """-0.0 and 0.0 tie (broken by index) on every path: replacing -0.0 by 0.0 changes nothing."""
    rng = np.random.default_rng(N)
    P = max(1, N // 10)
    labels = rng.permutation(np.r_[np.ones(P, bool), np.zeros(N, bool)])
    scores = np.where(rng.random(P + N) < 0.5, -0.0, 0.0)
    scores[rng.random(P + N) < 0.1] = 1.0
    scores[0] = -0.0
    assert np.signbit(scores).sum() > N // 4
    previous = aprank.set_simd(True)
    best = aprank.simd_level()
    try:
        for name in SIMD_LEVELS[:SIMD_LEVELS.index(best) + 1]:
            aprank.set_simd(name)
            for loss in ("ap", "ndcg"):
                for algo in exact_names(loss, P + N):
                    a = aprank.infer(scores, labels, loss=loss, algorithm=algo)
                    b = aprank.infer(np.abs(scores), labels, loss=loss, algorithm=algo)
                    np.testing.assert_array_equal(a.ranks, b.ranks, err_msg=f"{name} {algo}")
                    assert a.objective == b.objective
    finally:
        aprank.set_simd(previous)


def test_scratch_reused_across_sizes_and_threads():
    """The driver keeps each thread's scratch arrays between calls: calls that grow and shrink,
    on four threads at once, give exactly what each call gives alone."""
    import threading
    rng = np.random.default_rng(7)
    cases = []
    for n in (50_000, 3_000, 120_000, 10, 60_000):
        labels = rng.random(n) < 0.05
        labels[0] = True
        labels[-1] = False
        cases.append((np.round(rng.normal(labels * 1.0, 1.0), 2), labels))
    expected = [aprank.infer(s, y, algorithm="qs") for s, y in cases]
    failures = []

    def work(shift):
        for i in range(2 * len(cases)):
            k = (i + shift) % len(cases)
            got = aprank.infer(*cases[k], algorithm="qs")
            if not (np.array_equal(got.ranks, expected[k].ranks)
                    and np.array_equal(got.coef, expected[k].coef)
                    and got.objective == expected[k].objective):
                failures.append((shift, k))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
