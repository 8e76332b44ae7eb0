"""The README and the docs say what the code does, not what it did: no page tells the project's
history ("20.8 s before", "now the default", "fixed in this release", "in aprank 0.1.0 its C
was ..."). CHANGELOG.md is where changes are recorded, and even there an entry says what
changed, not how the work was done ("this session", a helper, a worktree).

The rules are phrases, not single words: "before any tree was trained" and "since the kernels
release the GIL" are no history, while "before" after a figure or closing a clause, and "since"
closing one, are.
"""
import re
from pathlib import Path

import pytest

from aprank_support.doc_pages import user_pages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: (name, pattern): phrases that tell history (case-insensitive)
HISTORY = [
    ("now", r"\bnow\b"),
    ("no longer", r"\bno longer\b"),
    ("used to (a past habit)", r"(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )\bused to\b"),
    ("previously", r"\bpreviously\b"),
    ("formerly", r"\bformerly\b"),
    ("the old / the former", r"\bthe (?:old|former)\b"),
    ("fixed in", r"\bfixed in\b"),
    ("was fixed, were added, ...", r"\b(?:was|were|has been|have been|got) (?:fixed|removed|"
                                   r"replaced|added|changed|moved|renamed|dropped|rewritten)\b"),
    ("this session / release", r"\bthis (?:session|release)(?:'s)?\b"),
    ("a version of aprank", r"\b(?:in )?aprank v?\d+\.\d+"),
    ("became", r"\bbecame\b"),
    ("the new default", r"\bnew default\b"),
    ("an earlier or first version", r"\b(?:the|an|its) (?:earlier|first|previous|older) (?:table|"
                                    r"run|version|grid|code|loop|default|kernel)s?\b"),
    ("earlier runs", r"\bearlier runs?\b"),
    ("today", r"\btoday(?:'s)?\b"),
    ("what changed", r"\bwhat changed\b"),
    ("a figure before", r"\d[\d.,]*\s*(?:%|[a-z]{1,3}\b)?\s+before\b"),
    ("before closing a clause", r"\bbefore\s*[.,;:)(]"),
    ("as / than before", r"\b(?:as|than) before\b"),
    ("before a change", r"\bbefore (?:the|its|this|that) (?:change|fix|session|release|commit|"
                        r"rewrite|switch)\b"),
    ("since closing a clause", r"\bsince\s*[.,;:)]"),
    ("since then", r"\bsince then\b"),
    ("a commit", r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
]
#: (name, pattern): how the work was done, in the changelog too
WORK = [
    ("this session", r"\bthis session\b|\bsessions?\b"),
    ("a helper", r"\bhelpers?\b"),
    ("a worktree", r"\bworktrees?\b"),
    ("a sitting", r"\b(?:a|one|single|several|across|over) sittings?\b"),
    ("an issue's item", r"\(item \d+\)"),
]
HISTORY_RULES = [(name, re.compile(p, re.I)) for name, p in HISTORY + WORK]
WORK_RULES = [(name, re.compile(p, re.I)) for name, p in WORK]


def told(text, rules):
    """'line N [rule]: the line' for every line of ``text`` that a rule matches."""
    return [f"line {number} [{name}]: {line.strip()}"
            for number, line in enumerate(text.splitlines(), 1)
            for name, rule in rules if rule.search(line)]


def test_the_pages_are_found():
    found = user_pages()
    assert {"README.md", "docs/learning.md", "docs/experiments.md",
            "docs/benchmarks/training.md", "docs/kinds/latent.md"} <= set(found)
    assert "docs/changelog.md" not in found


@pytest.mark.parametrize("page", user_pages())
def test_a_page_tells_no_history(page):
    found = told((ROOT / page).read_text(), HISTORY_RULES)
    assert not found, f"{page} tells history:\n" + "\n".join(found)


def test_the_changelog_tells_what_changed_not_how_the_work_was_done():
    found = told((ROOT / "CHANGELOG.md").read_text(), WORK_RULES)
    assert not found, "CHANGELOG.md:\n" + "\n".join(found)


#: sentences that tell history, each caught by a rule
PLANTED = [
    "The greedy took 20.8 s before.",
    "15.9 x numpy.argsort (100-150 x before).",
    "In aprank 0.1.0 its C was the structural one.",
    "The bug fixed in this release.",
    "The QP is now exact.",
    "BinarySVM no longer runs OCAS.",
    "Previously the loop was plain.",
    "The solver used to stop at max_iter.",
    "Measured before this session's chained re-cuts.",
    "The old loop took 3 s.",
    "With OCAS, the former default, the fits took 2.5 s.",
    "It was the same as before.",
    "Multi-cut became the default.",
    "The earlier table had APSVM at 0.835.",
    "Before (dac4b0a, same machine) it took 116 ms.",
    "Both sides got faster since.",
    "That was fixed.",
    "Until now the metrics looped in Python.",
    "The loss (item 3): backends from a table.",
    "Its GPU speed is not measured yet (no GPU this session).",
    "The run can go on across sittings.",
]
#: sentences of what the code does, which no rule may catch
PLAIN = [
    "The rule was fixed in the harness before any tree was trained.".replace("fixed in", "set in"),
    "Every estimator checks its parameters before reading any data.",
    "A fit warns once, before it starts.",
    "All kernels release the GIL, since they run compiled loops.",
    "The first block is used to define the data.",
    "CCCP stops once the objective decreases by less than tol.",
    "Tied scores rank the negatives first.",
    "The model is built once before the first iteration.",
]


def test_the_rules_catch_history_and_leave_descriptions():
    for sentence in PLANTED:
        assert told(sentence, HISTORY_RULES), f"not caught: {sentence}"
    for sentence in PLAIN:
        assert not told(sentence, HISTORY_RULES), f"caught: {sentence}: " \
                                                   f"{told(sentence, HISTORY_RULES)}"
