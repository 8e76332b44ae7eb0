"""The deep check (``aprank.checks.deep_check``, ``python -m aprank check --deep``): every
algorithm against a slower exact one of the zoo on cases built around each kind's named
switches, and the kinds' relations. CI runs a bounded subset per kind, large enough that every
switch is crossed; ``python -m aprank check --deep`` runs them all up to 10^5 samples."""
import re

import numpy as np
import pytest

import aprank
from aprank import checks
from aprank.__main__ import main
from aprank.inference import get_kind
from aprank.inference._deep import SPREADS
from aprank.inference.pairwise import _maxflow_cy
from aprank.inference.ranking import _driver_cy

#: The largest instance of each kind's CI subset: every named switch is crossed below it.
CI_MAX_N = {"ranking": 5000, "labelling": 5000, "pairwise": 3100, "latent": 2000,
            "topk": 1000}


@pytest.fixture(scope="module")
def reports():
    return {kind: checks.deep_check(kind, max_n=n) for kind, n in CI_MAX_N.items()}


@pytest.mark.parametrize("kind", sorted(CI_MAX_N))
def test_the_ci_subset_of_each_kind_finds_no_disagreement(kind, reports):
    report = reports[kind]
    assert report.n_cases > 10
    assert report.ok, "\n".join(str(d) for d in report.disagreements[:5])
    assert sum(r.cases for r in report.rows) > report.n_cases     # several checks a case


def _checks_of(report, algorithm):
    return {r.check for r in report.rows if r.algorithm == algorithm and r.cases}


@pytest.mark.parametrize("algorithm", ["qs", "auto", "select"])
def test_ranking_cases_take_both_sides_of_every_size_switch(algorithm, reports):
    seen = " | ".join(_checks_of(reports["ranking"], algorithm))
    sw = get_kind("ranking").instances.switches()
    for name in ("WINDOW_MIN", "SMALL_RANGE", "GUIDED_MIN", "BINARY_SEARCH_MIN",
                 "SCAN_BISECT_MIN"):
        for side in ("<=", ">"):
            assert f"{side} {name} = {sw[name]}" in seen, (name, side)
    for name in ("ONE_MAX",):              # on n = P + N
        for side in ("<=", ">"):
            assert f"{side} {name} = {sw[name]}" in seen, (name, side)
    assert "scores beyond SAFE_SCORE (scaled)" in seen
    for relation in ("constant added to every score", "samples permuted", "query duplicated",
                     "query among others", "every partition path", "infer's fast input path",
                     "batch grouping paths"):
        assert f"relation: {relation}" in seen


def test_pairwise_cases_take_every_path_of_graphcut(reports):
    seen = _checks_of(reports["pairwise"], "graphcut")
    for path in ("single samples", "enumerated (k <= ENUMERATE_UP_TO = 3)",
                 f"dense cuts (3 < k <= DENSE_MAX = {_maxflow_cy.DENSE_MAX})",
                 f"one-tree re-cuts (k > {_maxflow_cy.DENSE_MAX})",
                 f"two or more components of k > {_maxflow_cy.DENSE_MAX}",
                 f"restored flows (k > RESTORE_EVERY = {_maxflow_cy.RESTORE_EVERY})",
                 f"pinned re-cuts (k > {_maxflow_cy.DENSE_MAX}: max-marginals at a side's "
                 "whole flip)",
                 "pair scores >= 1e8 x unary", "pair scores <= 1e-8 x unary"):
        assert f"vs graphcut-static: {path}" in seen, path
    assert len({c for c in seen if c.startswith("relation:")}) == 6
    assert "relation: reported objective = the output's, exactly" in seen


def test_every_kind_with_a_tolerance_has_spread_cases_and_the_objective_relation(reports):
    for kind in ("ranking", "topk", "pairwise", "latent"):
        spread = [c for c in get_kind(kind).instances.deep_cases(0, CI_MAX_N[kind])
                  if c.params.get("outliers")]
        assert spread and {c.params["spread"] for c in spread} == set(SPREADS), kind
        assert any(c.params.get("agree") for c in spread), kind
        seen = " | ".join(row.check for row in reports[kind].rows)
        assert "relation: reported objective = the output's, exactly" in seen, kind


def test_latent_and_topk_cases_take_their_paths(reports):
    greedy = " | ".join(_checks_of(reports["latent"], "latent-greedy"))
    for what in ("vs brute: positive slots of both signs", "vs brute: bags of one row",
                 "relation: bags of one row: AP inference's optimum",
                 "relation: constant added to every score"):
        assert what in greedy
    cstar = " | ".join(_checks_of(reports["topk"], "cstar"))
    for what in ("vs cstar-plain: no core", "vs cstar-plain: core of 11+",
                 "vs cstar-plain: k = n (every item)",
                 "vs cstar-plain: k <= C (the core can fill the subset)",
                 "relation: interactions transposed"):
        assert what in cstar


def test_the_named_switches_are_the_codes_constants():
    assert get_kind("pairwise").instances.switches()["DENSE_MAX"] == _maxflow_cy.DENSE_MAX
    assert get_kind("ranking").instances.switches()["GUIDED_MIN"] == \
        _driver_cy.SWITCHES["GUIDED_MIN"]
    sizes = {c.params["N"] for c in get_kind("ranking").instances.deep_cases(0, 10 ** 6)}
    guided = _driver_cy.SWITCHES["GUIDED_MIN"]
    assert {guided - 1, guided, guided + 1} <= sizes


def _wrong_beyond_guided_min(pos, neg, loss):
    """Exact (by AP inference) but for one negative's rank where N crosses GUIDED_MIN: a bug
    that brute force, at a dozen samples, never sees."""
    y = np.r_[np.ones(pos.size, bool), np.zeros(neg.size, bool)]
    r = aprank.infer(np.r_[pos, neg], y, loss=loss.name, algorithm="qs").ranks[pos.size:]
    if neg.size > _driver_cy.SWITCHES["GUIDED_MIN"]:
        r = r.copy()
        r[np.argmax(r)] = max(1, r.max() - 1)
    return r


def test_a_bug_beyond_a_switch_is_found_with_a_reproducer_that_shows_it():
    aprank.register("planted-bug", _wrong_beyond_guided_min, losses="ap", exact=True)
    try:
        assert aprank.crosscheck("ap", n_trials=100).ok     # brute force's sizes: unseen
        report = checks.deep_check("ranking", max_n=5000)
        found = [d for d in report.disagreements if d.algorithm == "planted-bug"]
        assert found and not [d for d in report.disagreements if d.algorithm != "planted-bug"]
        assert any("N > GUIDED_MIN" in d.check for d in found)
        guided = _driver_cy.SWITCHES["GUIDED_MIN"]
        assert all(int(re.search(r"N=(\d+)", d.reproducer).group(1)) > guided for d in found)
        d = next(d for d in found if d.check.startswith("vs yue"))
        env = {"aprank": aprank, "np": np}
        exec(d.reproducer.split("  #")[0].replace("; aprank.checks.solve_instance",
                                                  "; result = aprank.checks.solve_instance"),
             env)
        wrong, right = env["result"], checks.solve_instance(env["i"], "ap", "yue")
        assert wrong.objective < right.objective
    finally:
        aprank.unregister("planted-bug")


def test_a_relation_reproducer_reruns_the_check():
    i = checks.deep_instance("pairwise", "components", shape="chain", sizes=(65, 66), copies=2,
                             ratio=1.0, seed=0)
    for relation in ("samples permuted", "split into its components", "graph duplicated"):
        assert checks.check_relation(i, "pairwise-zero-one", "graphcut", relation, seed=3) is None
    with pytest.raises(ValueError, match="no relation 'nope'"):
        checks.check_relation(i, "pairwise-zero-one", "graphcut", "nope")


def test_an_unknown_kind_or_family_is_refused_before_any_work():
    with pytest.raises(ValueError, match="kind"):
        checks.deep_check("nope")
    with pytest.raises(ValueError, match="no deep-check family 'nope'"):
        checks.deep_instance("ranking", "nope")


def test_the_command_prints_the_table_and_writes_it_where_out_says(tmp_path, capsys):
    out = tmp_path / "deep.md"
    assert main(["check", "--deep", "--kind", "labelling", "--max-n", "300",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| labelling | zero-one | relation: samples permuted |" in printed
    assert "0 disagreements" in printed
    text = out.read_text()
    assert text.startswith("Regenerate: `python -m aprank check --deep --max-n 300 --kind "
                           "labelling --out FILE`.")
    assert "| kind | algorithm | check |" in text


@pytest.mark.parametrize("argv", [["check", "--deep", "--loss", "ap"],
                                  ["check", "--deep", "--n-trials", "3"],
                                  ["check", "--kind", "ranking"]])
def test_the_plain_and_deep_options_do_not_mix(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "--deep" in capsys.readouterr().err
