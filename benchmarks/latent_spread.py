"""Bags of one row with a few scores far from the others: the latent greedy against AP's optimum.

``python -m benchmarks.latent_spread`` draws one-row-bag problems (P up to 500 positives, N up
to 5,000 negatives, log-uniform), puts one to three scores at +-10^e (e from 3 to 300) and
solves each with ``latent-greedy`` (loss ``latent-ssvm``) and with exact AP inference. With one
row per bag the greedy reaches AP's optimum (Behl 2015, appendix A: a slot's best rank is
Yue et al. 2007's), so its objective must equal AP's to within 1e-12 of it; a tolerance on the
scores' spread or magnitude instead makes every rank a tie and falls below it. ``--exact``
also recomputes each reported objective from its output in rational arithmetic. One row per
decade of the spread; the exit status is 1 when a case falls outside.
"""
from __future__ import annotations

import sys
import time
import warnings
from fractions import Fraction

import numpy as np

import aprank
from benchmarks.cli import Parser, at_least, run

__all__ = ["draw", "solve", "table", "main"]

#: The decades of the spread, one row each: 10^3 ... 10^300.
DECADES = ((3, 9), (10, 30), (31, 100), (101, 200), (201, 300))


def draw(rng, max_p: int = 500, max_n: int = 5000):
    """One case: (scores, labels, exponent) with P and N log-uniform up to ``max_p`` and
    ``max_n``, scores ~ N(0, 1) and one to three of them at +-10^e times a factor in [1, 2).

    Parameters
    ----------
    rng : numpy.random.Generator
    max_p, max_n : int

    Returns
    -------
    tuple
    """
    P = int(np.exp(rng.uniform(0, np.log(max_p + 1))))
    N = int(np.exp(rng.uniform(0, np.log(max_n + 1))))
    P, N = max(P, 1), max(N, 1)
    s = rng.standard_normal(P + N)
    labels = np.zeros(P + N, dtype=bool)
    labels[rng.choice(P + N, P, replace=False)] = True
    count = int(rng.integers(1, 4))
    e = int(rng.integers(3, 301))
    at = rng.choice(P + N, min(count, P + N), replace=False)
    s[at] = rng.choice([-1.0, 1.0], at.size) * (1.0 + rng.random(at.size)) * 10.0 ** e
    return s, labels, e


def exact_objective(s, labels, result) -> Fraction:
    """The objective of a one-row-bag result's output in rational arithmetic."""
    pos = labels.astype(bool)
    P, N = int(pos.sum()), int((~pos).sum())
    if N == 0:
        return Fraction(0)
    r = result.ranks
    num = np.where(pos, N + 2 - 2 * r, P + 2 - 2 * r) - np.where(pos, N, -P)
    total = Fraction(0)
    for a, x in zip(num.tolist(), s.tolist()):
        if a:
            total += a * Fraction(x)
    above = np.sort(r[pos] - 1).tolist()
    loss = sum((Fraction(a, i + 1 + a) for i, a in enumerate(above)), Fraction(0)) / P
    return loss + total / (P * N)


def solve(s, labels, exact: bool = False) -> dict:
    """The greedy's and AP's objectives on one case (and, with ``exact``, how many ulps the
    reported objective is from its output's exact value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = aprank.infer(s, labels, loss="latent-ssvm", bags=np.arange(s.size))
        a = aprank.infer(s, labels, loss="ap")
    out = {"greedy": g.objective, "ap": a.objective, "ulps": None}
    if exact:
        x = exact_objective(s, labels, g)
        scale = max(abs(float(x)), g.loss, 2.0 ** -1022)
        out["ulps"] = float(abs(Fraction(g.objective) - x) / Fraction(float(np.spacing(scale))))
    return out


def table(rows: list, exact: bool) -> str:
    """The markdown table of per-case rows (decade, P, N, greedy, ap, ulps)."""
    head = ("| spread | cases | largest P | largest N | below AP's optimum | above it | "
            "worst relative gap |" + (" worst ulps (reported vs exact) |" if exact else ""))
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if exact else "")]
    for lo, hi in DECADES:
        sel = [r for r in rows if lo <= r["e"] <= hi]
        if not sel:
            continue
        gap = [(r["ap"] - r["greedy"]) / max(abs(r["ap"]), 1e-300) for r in sel]
        below = sum(x > 1e-12 for x in gap)
        above = sum(x < -1e-12 for x in gap)
        worst = max(abs(x) for x in gap)
        line = (f"| 1e{lo} - 1e{hi} | {len(sel)} | {max(r['P'] for r in sel)} | "
                f"{max(r['N'] for r in sel)} | {below} | {above} | {worst:.2g} |")
        if exact:
            line += f" {max(r['ulps'] for r in sel):.1f} |"
        lines.append(line)
    return "\n".join(lines)


def _command(args) -> int:
    rng = np.random.default_rng(args.seed)
    rows = []
    t0 = time.perf_counter()
    for _ in range(args.cases):
        s, labels, e = draw(rng, args.max_p, args.max_n)
        r = solve(s, labels, args.exact)
        rows.append(dict(e=e, P=int(labels.sum()), N=int((~labels).sum()), **r))
    seconds = time.perf_counter() - t0
    cmd = (f"python -m benchmarks.latent_spread --cases {args.cases} --seed {args.seed} "
           f"--max-p {args.max_p} --max-n {args.max_n}" + (" --exact" if args.exact else ""))
    bad = sum(abs(r["ap"] - r["greedy"]) > 1e-12 * max(abs(r["ap"]), 1e-300) for r in rows)
    text = (f"Regenerate: `{cmd}`. {len(rows)} cases, {bad} outside 1e-12 of AP's optimum, "
            f"{seconds:.0f} s.\n\n" + table(rows, args.exact) + "\n")
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)
    return 1 if bad else 0


def main(argv=None) -> int:
    """The command line (see the module docstring)."""
    parser = Parser("python -m benchmarks.latent_spread", __doc__)
    parser.add_argument("--cases", type=at_least(1), default=1000, help="cases (1000)")
    parser.add_argument("--seed", type=at_least(0), default=0, help="seed (0)")
    parser.add_argument("--max-p", type=at_least(1), default=500, help="largest P (500)")
    parser.add_argument("--max-n", type=at_least(1), default=5000, help="largest N (5000)")
    parser.add_argument("--exact", action="store_true",
                        help="also recompute each reported objective in rational arithmetic")
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args(argv)
    return run(_command, args, "python -m benchmarks.latent_spread")


if __name__ == "__main__":
    sys.exit(main())
