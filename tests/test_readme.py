"""The README stays true: its algorithm table and its CI command."""
import re
from pathlib import Path

import pytest

import aprank

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def between(text, start, end):
    return text.split(f"<!-- {start} -->")[1].split(f"<!-- {end} -->")[0].strip()


def test_algorithm_table_is_generated_from_the_registry():
    builtin = aprank.inference.AlgorithmTable(a for a in aprank.algorithms() if a.builtin)
    assert between(README, "algorithms table", "end algorithms table") == builtin.to_markdown()


def test_ci_runs_the_readme_test_command():
    blocks = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
    commands = [line for block in blocks[:2] for line in block.splitlines()
                if line and not line.startswith("#")]
    assert commands[0] == "pip install -e . && python -m aprank bench --quick"
    test_command = commands[1]
    assert "pytest" in test_command and "[test]" in test_command
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci


@pytest.mark.parametrize("name", ["digits", "birds", "yahoo", "cstar", "torch-mlp",
                                  "high-order", "latent"])
def test_experiment_tables_are_in_the_readme(name):
    table = (ROOT / "figures" / "tables" / f"{name}.md").read_text().strip()
    assert between(README, f"table: {name}", f"end table: {name}") == table


def test_readme_shows_every_committed_figure():
    shown = between(README, "figures", "end figures")
    for png in (ROOT / "figures" / "out").glob("fig_*.png"):
        assert f"figures/out/{png.name}" in shown
