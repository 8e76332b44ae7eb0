"""The repository stands alone: papers are cited by authors and year, each citation resolves on
the references page (docs/references.md), and no text cites a folder outside the repository (a
paper's file number, an errata number) or the number of an issue of the project's tracker."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = ROOT / "docs" / "references.md"
TEXT_SUFFIXES = {".py", ".pyx", ".pxd", ".hpp", ".h", ".cpp", ".md", ".toml", ".txt", ".cfg",
                 ".ini", ".yml", ".yaml", ".sh", ""}
#: Generated or build output (docs/_generated and docs/_build are made by the docs build from the
#: sources checked here).
SKIP_PREFIXES = ("build/", "docs/_build/", "docs/_generated/", "docs/api/generated/")
THIS_FILE = "tests/documentation/test_references.py"

#: Citations of what lies outside the repository. The paper-file numbers run 000-004, so a
#: three-digit number with a leading zero, standing alone (not part of 0.001, 1,000, 10_000 or a
#: hex colour), is a folder citation.
FOLDER_CITATIONS = [
    re.compile(r"(?i)\bpapers?\s+0\d\d\b"),
    re.compile(r"(?<![\w.,#/+:-])0\d\d(?![\w]|[.,]\d)"),
    re.compile(r"(?i)papers/0|shared/papers|shared/ERRATA"),
    re.compile(r"ERRATA"),
]
ISSUE_NUMBERS = re.compile(r"(?i)\bissues?(?:\s+|-|\s*#)\d+")


def tracked_files():
    """The repository's tracked text files (git's list; the checkout's files where git is not
    there), generated output left out."""
    try:
        listing = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listing = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
                   and ".git" not in p.parts]
    for rel in listing:
        path = ROOT / rel
        if rel.startswith(SKIP_PREFIXES) or path.suffix not in TEXT_SUFFIXES \
                or not path.is_file():
            continue
        try:
            yield rel, path.read_text()
        except UnicodeDecodeError:
            continue


FILES = dict(tracked_files())


def offending_lines(patterns, files):
    found = []
    for rel, text in files.items():
        if rel == THIS_FILE:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in patterns):
                found.append(f"{rel}:{number}: {line.strip()}")
    return found


def test_the_file_list_is_read():
    assert "README.md" in FILES and "aprank/__init__.py" in FILES and "CHANGELOG.md" in FILES


def test_no_text_cites_a_paper_or_errata_number():
    """Papers by authors and year ("Mohapatra et al. (2018), eq. 1"), printing errors by what
    they are (docs/references.md explains each): never a folder number or an errata number."""
    found = offending_lines(FOLDER_CITATIONS, FILES)
    assert not found, "folder-number citations:\n" + "\n".join(found)


def test_no_text_names_an_issue_number():
    """Say what the target or the change is, not which issue asked for it."""
    found = offending_lines([ISSUE_NUMBERS], FILES)
    assert not found, "issue numbers:\n" + "\n".join(found)


#: Names that say where a test came from rather than what it pins: an issue or its item, a
#: regression, a hardening pass, bugs that stay fixed (LogisticRegressionCV is a name, not a
#: history).
HISTORY_NAMES = re.compile(
    r"(?i)issue_?\d|item_?\d|(?<!logistic_)regression|hardening|bugs?_stay|stays?_fixed")
#: The same told in a test's text.
HISTORY_PHRASES = re.compile(r"(?i)before the fix|regression tests?\b|stays? fixed|\bold main\b"
                             r"|the issue's|bugs found in review")


def test_test_files_and_tests_are_named_by_what_they_pin():
    """No test file or test named after an issue, its item or the history of a fix (a
    regression, a hardening, bugs that stay fixed), and no test text that tells that history
    instead of the behaviour it pins."""
    names = [rel for rel in FILES if rel.startswith("tests/")]
    assert not [n for n in names if re.search(r"(?i)issue", Path(n).name)
                or HISTORY_NAMES.search(Path(n).name)]
    named = [f"{rel}: {m.group(1)}" for rel in names
             for m in re.finditer(r"def (test_\w+)", FILES[rel])
             if HISTORY_NAMES.search(m.group(1))]
    assert not named, "\n".join(named)
    told = offending_lines([HISTORY_PHRASES], {rel: FILES[rel] for rel in names})
    assert not told, "\n".join(told)


# ------------------------------------------------------------------ author-year citations
#: "Yue et al. (2007)", "Yu & Joachims (2009)", "Joachims, Finley & Yu (2009)", "Behl (2015)";
#: the year may also follow without parentheses ("Yue et al. 2007") or after a venue inside
#: them ("Franc & Sonnenburg, JMLR 2009"). The first author and the year are the key.
NAME = r"[A-Z][A-Za-z'\u00c0-\u017f-]+"
CITATION = re.compile(
    rf"\b(?P<first>{NAME})(?:(?:,\s+{NAME})*,?\s+(?:&|and)\s+{NAME}|\s+et\s+al\.?)"
    rf"(?:'s)?,?\s+\(?(?:[A-Z][A-Za-z]*\s+)?(?P<year>(?:19|20)\d\d)\b"
    rf"|\b(?P<single>{NAME})\s+\((?P<syear>(?:19|20)\d\d)\)")
#: A references page entry opens with its key in bold: **Mohapatra et al. (2018)**.
ENTRY = re.compile(rf"^\*\*(?P<first>{NAME})(?:\s+et\s+al\.|\s+&\s+{NAME})?\s+"
                   rf"\((?P<year>(?:19|20)\d\d)\)\*\*", re.M)
#: Capitalised words followed by a year that are no citation (machines, software, months).
NOT_AUTHORS = {"Python", "NumPy", "SciPy", "November", "December", "January", "EPYC", "Xeon",
               "CPython", "Windows", "Ubuntu", "Intel", "AMD", "GCC", "Clang", "Nov", "Dec",
               "ECCV", "NIPS", "ICML", "KDD", "CVPR", "SIGIR", "ICCV", "ECIR", "JMLR", "ESA",
               "TPAMI", "PAMI", "NeurIPS"}


def citations(text):
    """(first author, year) of every author-year citation in ``text``."""
    keys = set()
    for m in CITATION.finditer(text):
        first, year = (m["first"], m["year"]) if m["first"] else (m["single"], m["syear"])
        if first not in NOT_AUTHORS:
            keys.add((first, year))
    return keys


def reference_keys():
    return {(m["first"], m["year"]) for m in ENTRY.finditer(REFERENCES.read_text())}


def test_citation_pattern_reads_the_forms_in_use():
    text = ("as Mohapatra et al. (2018), eq. 1, and Yu & Joachims (2009); Joachims, Finley & Yu "
            "2009; Behl (2015), appendix A; Franc & Sonnenburg, JMLR 2009; Yue et al. 2007; "
            "an AMD EPYC (2026)")
    assert citations(text) == {("Mohapatra", "2018"), ("Yu", "2009"), ("Joachims", "2009"),
                               ("Behl", "2015"), ("Franc", "2009"), ("Yue", "2007")}


def test_the_references_page_is_in_the_docs_index():
    assert REFERENCES.is_file()
    index = (ROOT / "docs" / "index.md").read_text()
    toctrees = re.findall(r"```\{toctree\}(.*?)```", index, flags=re.S)
    assert any(re.search(r"^references$", t, flags=re.M) for t in toctrees)


def test_the_references_page_lists_the_source_papers():
    """The five papers the package implements, each with its venue and year."""
    keys = reference_keys()
    for key in [("Mohapatra", "2014"), ("Mensink", "2011"), ("Dokania", "2014"),
                ("Behl", "2015"), ("Mohapatra", "2018")]:
        assert key in keys, key


@pytest.mark.parametrize("where", ["docs", "README.md", "CHANGELOG.md", "aprank", "benchmarks",
                                   "experiments", "figures", "tests", "setup.py"])
def test_every_author_year_citation_resolves_on_the_references_page(where):
    keys = reference_keys()
    missing = sorted({f"{rel}: {first} ({year})" for rel, text in FILES.items()
                      if (rel == where or rel.startswith(where + "/")) and rel != THIS_FILE
                      for first, year in citations(text) if (first, year) not in keys})
    assert not missing, "cited but not on docs/references.md:\n" + "\n".join(missing)
