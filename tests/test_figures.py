"""Every figure script runs with --quick and writes its files (the figures themselves are
checked by eye; the numbers behind them come from the registry and the learners)."""
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import aprank


SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "figures").glob("fig_*.py"))
NEEDS_DATA = {"fig_training_time", "fig_rank_heatmap", "fig_supervision"}   # HJA birdsong


def test_every_figure_is_found():
    assert {p.stem for p in SCRIPTS} >= {"fig_scaling", "fig_training_time", "fig_rank_heatmap"}


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script_runs_quick(script, tmp_path):
    if script.stem in NEEDS_DATA:
        from aprank.datasets import data_dir
        try:
            data_dir()
        except FileNotFoundError as err:
            pytest.skip(f"{script.stem} needs the shared data: {err}")
    out = subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    for suffix in (".json", ".png", ".svg"):
        path = tmp_path / f"{script.stem}-quick{suffix}"
        assert path.exists() and path.stat().st_size > 0, path
    results = json.loads((tmp_path / f"{script.stem}-quick.json").read_text())
    assert results["machine"]
    # a second run plots from the cache without recomputing
    again = subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and json.loads(
        (tmp_path / f"{script.stem}-quick.json").read_text())["seconds"] == results["seconds"]


def test_scaling_series_come_from_the_registry(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS[0].parent))
    module = importlib.import_module("fig_scaling")
    expected = {f"{loss}/{a.name}" for loss in ("ap", "ndcg")
                for a in aprank.algorithms(loss=loss, exact=True) if a.max_samples is None}
    assert {f"{loss}/{name}" for loss, name in module.series()} == expected
