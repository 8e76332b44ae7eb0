"""Figures the pages state agree with the tables and requirements they rest on.

* The deep check's page states, per kind, the largest instance of the table it includes: those
  sizes are the table's.
* Every GPU figure (a section of the README or the docs that times or tests on an NVIDIA H100
  or H200, or includes the GPU benchmark's table) names the torch it was taken with, and where
  that torch is below the minimum the torch extra declares (pyproject.toml), says so, naming
  the minimum.
* The boosted trees on the AP hinge are not claimed level with or ahead of LightGBM's binary
  objective: the README, the boosted-trees page and the experiments page give the held-out
  comparison and say when to prefer the binary objective.
"""
import re
import tomllib
from pathlib import Path

import pytest

from aprank_support.doc_pages import user_pages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def number(text):
    return int(text.replace(",", ""))


# --------------------------------------------------------------------------- the deep check
CROSS_CHECKS = DOCS / "cross-checks.md"
#: the page's kind names as the table writes them
KIND_NAMES = {"ranking": "ranking", "labelling": "labelling", "top-k": "topk",
              "pairwise": "pairwise", "latent": "latent"}
#: the sentence that states the largest instances: "... largest instances: ranking 101,000
#: samples, ..."
LARGEST = re.compile(r"largest instances(?: of (?:its|the) table)?[^:]*:\s*(.*?)\.(?:\s|$)",
                     re.S)


def deep_check_table():
    """The table the page includes: per kind, the largest n of its rows."""
    include = re.search(r"```\{include\} (\S*deep-check\.md)", CROSS_CHECKS.read_text())
    assert include, "docs/cross-checks.md includes no deep-check table"
    table = (CROSS_CHECKS.parent / include.group(1)).resolve().read_text()
    largest = {}
    columns = None
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| kind |"):
            columns = cells
            continue
        if columns and line.startswith("|") and not set(line) <= set("|-: "):
            row = dict(zip(columns, cells))
            largest[row["kind"]] = max(largest.get(row["kind"], 0), number(row["largest n"]))
    return table, largest


def stated_largest():
    """Per kind, the largest instance the page's sentence states."""
    sentence = LARGEST.search(CROSS_CHECKS.read_text())
    assert sentence, "docs/cross-checks.md states no largest instances"
    stated = {}
    for kind, n in re.findall(r"\b(ranking|labelling|top-k|pairwise|latent)\D{0,40}?([\d,]{2,})",
                              sentence.group(1)):
        stated[KIND_NAMES[kind]] = number(n)
    return stated


def test_the_deep_check_page_states_the_largest_instances_of_its_table():
    table, largest = deep_check_table()
    assert set(largest) == set(KIND_NAMES.values()), largest
    assert stated_largest() == largest
    # the table's own first line says up to what size it ran
    up_to = re.search(r"up to (\d+) samples", table.splitlines()[0])
    assert up_to and number(up_to.group(1)) == max(largest.values())


def test_the_deep_check_page_claims_no_other_largest_size():
    """Sizes the page states as a largest ("up to N samples", "(largest)") are the table's."""
    _, largest = deep_check_table()
    text = CROSS_CHECKS.read_text()
    for claim in re.findall(r"up to ([\d,]{4,}|10\^\d+) (?:samples|items|bags|negatives)", text):
        n = 10 ** int(claim.split("^")[1]) if "^" in claim else number(claim)
        assert n in largest.values(), f"docs/cross-checks.md: 'up to {claim}' is no size of " \
                                      f"its table ({largest})"


# --------------------------------------------------------------------------- GPU figures
def torch_minimum():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (requirement,) = pyproject["project"]["optional-dependencies"]["torch"]
    return tuple(int(p) for p in re.search(r">=\s*([\d.]+)", requirement).group(1).split("."))


def sections(text):
    """(heading, body) of every section (any heading level; the text above the first
    heading is the section '')."""
    text = re.sub(r"^```(?!\{include\}).*?^```[^\n]*$", "", text, flags=re.S | re.M)
    parts = re.split(r"^(#{1,6} .+)$", text, flags=re.M)
    return [("", parts[0])] + list(zip(parts[1::2], parts[2::2]))


GPU = re.compile(r"\bH100\b|\bH200\b|torch-gpu\.md")


def gpu_sections():
    return [(page, heading, body) for page in user_pages()
            for heading, body in sections((ROOT / page).read_text()) if GPU.search(body)]


def test_the_gpu_figures_are_found():
    found = {page for page, _, _ in gpu_sections()}
    assert {"README.md", "docs/torch.md", "docs/benchmarks/extras.md"} <= found, found


@pytest.mark.parametrize("page,heading,body", gpu_sections(),
                         ids=[f"{p}:{h.lstrip('# ')}" for p, h, _ in gpu_sections()])
def test_gpu_figures_name_their_torch_and_the_declared_minimum(page, heading, body):
    versions = re.findall(r"\btorch (\d+)\.(\d+)(?:\.\d+)?(?:\+\w+)?", body)
    assert versions, f"{page} {heading!r}: GPU figures without the torch they were taken with"
    minimum = torch_minimum()
    if any((int(a), int(b)) < minimum for a, b in versions):
        floor = ".".join(map(str, minimum))
        assert re.search(rf"torch\s*>=\s*{re.escape(floor)}\b", body), \
            f"{page} {heading!r}: figures taken with a torch below the declared minimum " \
            f"torch>={floor} must say so"


# --------------------------------------------------------------------------- boosted trees
BOOSTER_PAGES = ["README.md", "docs/boost.md", "docs/experiments.md"]
#: a claim that the AP hinge booster matches or beats LightGBM's binary objective
LEVEL_CLAIM = re.compile(r"(?i)\b(?:level with|on a par with|as good as|ahead of|better than|"
                         r"beats?|outperforms?)\s+(?:LightGBM's\s+|the\s+)*binary\b")


@pytest.mark.parametrize("page", BOOSTER_PAGES)
def test_the_booster_is_not_claimed_level_with_the_binary_objective(page):
    text = (ROOT / page).read_text()
    claims = [m.group(0) for m in LEVEL_CLAIM.finditer(text)]
    assert not claims, f"{page}: {claims}"


@pytest.mark.parametrize("page", BOOSTER_PAGES)
def test_the_booster_pages_give_the_held_out_comparison(page):
    """The held-out rows: below LightGBM binary on 17 of 18 (mean -0.010 AP, p = 0.001), 1.49 x
    its CPU time per fit, above one-query lambdarank on all 18; and when to prefer binary."""
    text = re.sub(r"\s+", " ", (ROOT / page).read_text())
    for figure in ("17 of 18", "-0.010", "p = 0.001", "1.49 x", "all 18"):
        assert figure in text, f"{page} lacks the held-out figure {figure!r}"
    assert re.search(r"(?i)prefer LightGBM's binary objective", text), page


def test_the_booster_rule_reads_claims():
    for claim in ("level with LightGBM's binary objective", "ahead of the binary objective",
                  "beats LightGBM's binary"):
        assert LEVEL_CLAIM.search(claim), claim
    assert not LEVEL_CLAIM.search("below LightGBM's binary objective on 17 of 18 rows")


# --------------------------------------------------------------------------- set-up times
def test_the_readme_states_the_set_up_times_as_ranges_on_named_cpus():
    """What the README's set-up commands take varies with the machine and its load: the README
    states the first build, a later install and the whole suite each as a range, and names
    the CPUs they were measured on."""
    readme = (ROOT / "README.md").read_text()
    setup = " ".join(readme.split("**Set-up on a fresh machine**")[1].split("\n## ")[0].split())
    assert re.search(r"\b(?:Intel Xeon|AMD EPYC|Apple M\d|AMD Ryzen|Intel Core)\b", setup), setup
    for what in ("first build", "later install", "whole suite"):
        stated = re.search(rf"\b{what}(?: takes)? (\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) "
                           r"(?:minutes|s)\b", setup)
        assert stated, f"the README states no range for the {what}: {setup}"
        assert float(stated.group(1)) < float(stated.group(2)), stated.group(0)
