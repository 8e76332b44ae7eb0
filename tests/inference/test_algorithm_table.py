"""The printed registry, ``print(aprank.algorithms())``: at most 100 columns, whatever the
filter, with every algorithm's kind, name, losses, exactness, complexity and reference in it,
words whole (the README's Markdown table is tests/documentation/test_readme.py's)."""
import dataclasses

import pytest

import aprank
from aprank.inference import AlgorithmTable, get_algorithm
from aprank.losses import LOSSES

WIDTH = 100


def _filtered():
    """The full table and every one-filter view of it (kind, loss, exactness)."""
    tables = {"all": aprank.algorithms()}
    tables.update({f"kind={k.name}": aprank.algorithms(kind=k.name) for k in aprank.kinds()})
    tables.update({f"loss={name}": aprank.algorithms(loss=name) for name in LOSSES})
    tables.update({f"exact={e}": aprank.algorithms(exact=e) for e in (True, False)})
    return tables


TABLES = _filtered()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _assert_fits_and_keeps_every_field(table, text):
    lines = text.splitlines()
    assert max(map(len, lines)) <= WIDTH, max(lines, key=len)
    assert lines[0].split() == ["kind", "name", "losses", "exact"]
    flat = _flat(text)
    words = {word.rstrip(",") for word in text.split()}
    firsts = [line.split() for line in lines if line and not line[0].isspace()]
    for a in table:
        # the algorithm's own line: its kind and name, then its exactness
        assert any(cells[:2] == [a.kind, a.name]
                   and cells[-1] == ("exact" if a.exact else "approximate")
                   for cells in firsts), (a.kind, a.name)
        # a long list of losses wraps within its column: each loss a whole word
        for loss in ("any",) if a.losses is None else a.losses:
            assert loss in words, (a.name, loss)
        for field in (a.complexity, a.reference):
            assert _flat(field) in flat, (a.name, field)


@pytest.mark.parametrize("name", list(TABLES))
def test_the_printed_table_fits_100_columns_and_keeps_every_field(name):
    table = TABLES[name]
    _assert_fits_and_keeps_every_field(table, str(table))
    assert repr(table) == str(table)


def test_the_full_table_prints_every_algorithm_once():
    text = str(aprank.algorithms())
    firsts = [line.split()[:2] for line in text.splitlines()[2:] if not line[0].isspace()]
    assert firsts == [[a.kind, a.name] for a in aprank.algorithms()]


def test_an_empty_view_prints_its_header():
    empty = aprank.algorithms(kind="topk", exact=False)
    assert len(empty) == 0
    assert str(empty).splitlines()[0].split() == ["kind", "name", "losses", "exact"]


def test_a_user_algorithm_with_long_fields_stays_within_100_columns():
    """Text of any length wraps, the reference and complexity under the row, a long list of
    losses within its column."""
    long = dataclasses.replace(
        get_algorithm("qs"), name="user-long-fields", builtin=False,
        losses=tuple(f"made-up-loss-{k}" for k in range(12)),
        complexity="O(N log N) " + "and a long remark on the constants " * 6,
        reference="A. Author and B. Author, " + "a long title of a paper, " * 12 + "2026")
    table = AlgorithmTable([*aprank.algorithms(kind="ranking"), long])
    text = str(table)
    _assert_fits_and_keeps_every_field(table, text)
    row = text.splitlines().index(next(line for line in text.splitlines()
                                       if "user-long-fields" in line))
    # the losses' continuation lines keep to the losses column, under its first entries
    column = text.splitlines()[0].index("losses")
    assert text.splitlines()[row + 1][:column].strip() == ""
    assert text.splitlines()[row + 1][column:].startswith("made-up-loss-")


def test_to_text_takes_another_width():
    text = aprank.algorithms().to_text(width=80)
    assert max(map(len, text.splitlines())) <= 80
    assert _flat(get_algorithm("latent-greedy").reference) in _flat(text)
