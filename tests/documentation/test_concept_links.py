"""The terms of the trade are explained once, on docs/concepts.md, and every other page (the
README and every page under docs/) links to the term's section there where it first uses the
term, so that a reader meeting "OCAS" or "the structural C" is one click from what it means.

A use is one in the page's prose: code blocks (fenced), HTML comments and headings do not count
(a title names its subject; the first use in the text below it carries the link). The link may
be on the term itself or come earlier on the page; it must point at the term's section
(``concepts.md#<anchor>``), and that anchor must be a heading of the Concepts page.
"""
import re
from pathlib import Path

import pytest

from aprank_support.doc_pages import user_pages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CONCEPTS = DOCS / "concepts.md"
#: the pages that link to the Concepts page: all but the changelog and the Concepts page itself
PAGES = user_pages(("docs/changelog.md", "docs/concepts.md"))

#: term: (its pattern in prose, the section of docs/concepts.md that explains it)
TERMS = {
    "loss-augmented inference": (r"(?i)\bloss-augmented\b", "loss-augmented-inference"),
    "the structured hinge": (r"(?i)\bstructur(?:ed|al) hinge"
                             r"|\b(?:AP|NDCG)(?: and NDCG)?[- ]hinges?\b",
                             "the-structured-hinge"),
    "qid": (r"\bqid\b", "queries-and-qid"),
    "the 1-slack cutting plane": (r"(?i)\bcutting[- ]planes?\b|\b1-slack\b",
                                  "the-1-slack-cutting-plane"),
    "OCAS": (r"\bOCAS\b", "ocas"),
    "multi-cut": (r"\bmulti-cut\b", "multi-cut"),
    "dual coordinate descent": (r"(?i)\bdual[- ]coordinate[- ]descent\b|\bdual-cd\b",
                                "dual-coordinate-descent"),
    "CCCP": (r"\bCCCP\b", "cccp-for-latent-models"),
    "structural C": (r"\bstructural C\b", "structural-c"),
    "bags": (r"\bbags?\b", "bags"),
    "c-star": (r"(?i)\bc-star\b", "the-c-star-core"),
    "HOB/HOAP-SVM": (r"\bHOB\b|\bHOAP\b", "hob-svm-and-hoap-svm"),
}

#: a link to a section of the Concepts page, from the README (docs/concepts.md), a page of
#: docs/ (concepts.md) or of a folder below it (../concepts.md)
CONCEPT_LINK = re.compile(r"\[[^\]]*\]\((?:\.\./)*(?:docs/)?concepts\.md#([\w-]+)\)")


def masked(text):
    """The text with code blocks, HTML comments and headings blanked out (same length, so that
    positions still point into the original)."""
    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))

    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", blank, text, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.S)
    return re.sub(r"^#{1,6} [^\n]*$", blank, text, flags=re.M)


def slug(heading):
    """The anchor MyST (myst_heading_anchors) and GitHub give a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def concept_anchors():
    return {slug(h) for h in re.findall(r"^#{1,3} (.+)$",
                                        masked_headings_only(CONCEPTS.read_text()), flags=re.M)}


def masked_headings_only(text):
    """The text without its code blocks (whose comment lines would read as headings)."""
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.S | re.M)


def first_use_problems(text, terms=TERMS):
    """For each term the text uses: a message where no link to its Concepts section starts at
    or before its first use."""
    prose = masked(text)
    links = [(m.start(), m.group(1)) for m in CONCEPT_LINK.finditer(text)]
    problems = []
    for term, (pattern, anchor) in terms.items():
        use = re.search(pattern, prose)
        if use is None:
            continue
        if not any(start <= use.start() and a == anchor for start, a in links):
            line = text.count("\n", 0, use.start()) + 1
            problems.append(f"line {line}: first use of {term!r} ({use.group(0)!r}) without a "
                            f"link to concepts.md#{anchor} at or before it")
    return problems


def test_the_concepts_page_is_in_the_user_guide():
    index = (DOCS / "index.md").read_text()
    toctree = re.search(r"```\{toctree\}\n:caption: User guide\n(.*?)```", index, flags=re.S)
    assert toctree and re.search(r"^concepts$", toctree.group(1), flags=re.M)


def test_every_term_has_its_section_on_the_concepts_page():
    anchors = concept_anchors()
    missing = {term: anchor for term, (_, anchor) in TERMS.items() if anchor not in anchors}
    assert not missing, f"docs/concepts.md has no section for {missing}; its anchors: {anchors}"


def test_the_concepts_page_reads_without_the_build():
    """The README links it above its Documentation section, where GitHub shows it: no MyST
    directive or role, which GitHub would print as raw code."""
    assert not re.search(r"^```\{[\w-]+\}|\{[\w:-]+\}`", CONCEPTS.read_text(), flags=re.M)


def test_the_pages_are_found():
    found = list(PAGES)
    assert {"README.md", "docs/learning.md", "docs/kinds/topk.md",
            "docs/benchmarks/training.md"} <= set(found)
    assert "docs/concepts.md" not in found


@pytest.mark.parametrize("page", PAGES)
def test_a_page_links_each_term_to_its_concept_at_first_use(page):
    text = (ROOT / page).read_text()
    problems = first_use_problems(text)
    assert not problems, f"{page}:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", PAGES)
def test_links_into_the_concepts_page_name_a_section_of_it(page):
    anchors = concept_anchors()
    wrong = sorted({a for a in CONCEPT_LINK.findall((ROOT / page).read_text()) if a not in anchors})
    assert not wrong, f"{page} links concepts.md#{wrong}, which is no heading there"


def test_the_rule_reads_a_link_on_the_term_or_before_it():
    terms = {"OCAS": TERMS["OCAS"]}
    linked = "Trained by [OCAS](concepts.md#ocas); OCAS again."
    earlier = "See [the solvers](concepts.md#ocas).\n\nTrained by OCAS."
    late = "Trained by OCAS, explained [there](concepts.md#ocas)."
    in_code = "```python\nsolver = 'OCAS'\n```\n\nTrained by [OCAS](../concepts.md#ocas)."
    heading = "# OCAS\n\nTrained by [OCAS](docs/concepts.md#ocas)."
    wrong_anchor = "Trained by [OCAS](concepts.md#multi-cut)."
    for good in (linked, earlier, in_code, heading):
        assert not first_use_problems(good, terms), good
    for bad in (late, wrong_anchor):
        assert first_use_problems(bad, terms), bad
