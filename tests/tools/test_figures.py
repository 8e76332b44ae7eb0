"""Every figure script runs with --quick and writes its files (the figures themselves are
checked by eye; the numbers behind them come from the registry and the learners)."""
import importlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import aprank
from aprank import datasets

pytestmark = pytest.mark.min_versions   # also run against the declared minimum versions (.ci/run)


REPOSITORY = Path(__file__).resolve().parents[2]
FIGURES = REPOSITORY / "figures"
SCRIPTS = sorted(FIGURES.glob("fig_*.py"))
#: The data folders each figure reads (the others need none).
NEEDS_DATA = {"fig_training_time": ("mil/birds_hja/",), "fig_rank_heatmap": ("mil/birds_hja/",),
              "fig_supervision": ("mil/birds_hja/",),
              "fig_torch_peers": ("mil/birds_hja/", "ltr/yahoo_ltr_sample_lightgbm/"),
              "fig_nonlinear": ("mil/fox_tiger_elephant/",)}
#: The optional packages a figure needs (import name: why it is missing, for the skip).
NEEDS_PACKAGES = {"fig_torch_peers": {
    "torch": "PyTorch is the optional extra aprank[torch]",
    "libauc": "libauc is optional: pip install --no-deps libauc (.ci/run installs it)",
    "pytorch_metric_learning": "pytorch-metric-learning is optional: pip install --no-deps "
                               "pytorch-metric-learning (.ci/run installs it)"},
                  "fig_nonlinear": {"torch": "PyTorch is the optional extra aprank[torch]",
                                    "lightgbm": "LightGBM is optional (.ci/run installs it)",
                                    "xgboost": "XGBoost is optional (.ci/run installs it)"}}


def test_every_figure_is_found():
    assert {p.stem for p in SCRIPTS} >= {"fig_scaling", "fig_training_time", "fig_rank_heatmap"}


@pytest.mark.slow      # each script computes its figure twice in a subprocess: 5-30 s
@pytest.mark.parametrize("script", [
    # a figure that needs an optional package: .ci/run's extras lane runs it
    pytest.param(p, marks=pytest.mark.extras) if p.stem in NEEDS_PACKAGES else p
    for p in SCRIPTS], ids=[p.stem for p in SCRIPTS])
def test_script_runs_quick(script, tmp_path):
    for module in NEEDS_PACKAGES.get(script.stem, {}):
        pytest.importorskip(module, reason=f"{script.stem} needs {module}")
    if script.stem in NEEDS_DATA:
        try:
            home = datasets.data_dir()
        except FileNotFoundError:
            pytest.skip(f"{script.stem} needs the data home (docs/data.md)")
        missing = [rel for rel in datasets.REMOTE_FILES
                   if rel.startswith(NEEDS_DATA[script.stem]) and not (home / rel).is_file()]
        if missing:
            pytest.skip(f"{script.stem} needs the data home (docs/data.md)")
    out = subprocess.run([sys.executable, "-m", f"figures.{script.stem}", "--quick", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=600,
                         cwd=REPOSITORY)
    assert out.returncode == 0, out.stderr
    # the slow algorithms a figure times on purpose do not warn about it
    assert "SlowAlgorithmWarning" not in out.stderr, out.stderr
    for suffix in (".json", ".png", ".svg"):
        path = tmp_path / f"{script.stem}-quick{suffix}"
        assert path.exists() and path.stat().st_size > 0, path
    results = json.loads((tmp_path / f"{script.stem}-quick.json").read_text())
    assert results["machine"]
    # a second run plots from the cache without recomputing
    again = subprocess.run([sys.executable, "-m", f"figures.{script.stem}", "--quick", "--out",
                            str(tmp_path)], capture_output=True, text=True, timeout=120,
                           cwd=REPOSITORY)
    assert again.returncode == 0 and json.loads(
        (tmp_path / f"{script.stem}-quick.json").read_text())["seconds"] == results["seconds"]


def test_scaling_series_come_from_the_registry(monkeypatch):
    module = importlib.import_module("figures.fig_scaling")
    expected = {f"{loss}/{a.name}" for loss in ("ap", "ndcg")
                for a in aprank.algorithms(loss=loss, exact=True) if a.max_samples is None}
    assert {f"{loss}/{name}" for loss, name in module.series()} == expected


def test_scaling_silences_only_the_slow_algorithm_warning(monkeypatch):
    """fig_scaling times every exact algorithm on purpose, the slow ones at sizes where they
    warn: SlowAlgorithmWarning is silenced around those calls, and only it."""
    module = importlib.import_module("figures.fig_scaling")
    real = module.infer

    def infer(*args, **kwargs):         # what yue does at P = 1e4, N = 1e5, at a tiny size
        warnings.warn("predicted slow", aprank.SlowAlgorithmWarning)
        warnings.warn("something else", RuntimeWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "infer", infer)
    monkeypatch.setattr(module, "panels", lambda quick: {
        key: {"xlabel": key, "points": [(5, 50)]} for key in "abc"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = module.compute(quick=True)
    assert set(results["regimes"]["overlapping"]["a"]["lines"]) == set(results["series"])
    categories = {w.category for w in caught}
    assert aprank.SlowAlgorithmWarning not in categories
    assert RuntimeWarning in categories         # any other warning still shows


def _without_data(tmp_path):
    """The environment of a machine with no data and no network."""
    (tmp_path / "empty").mkdir()
    return {**os.environ, "APRANK_DATA": str(tmp_path / "empty"),
            "APRANK_DATA_URL": "http://127.0.0.1:9",
            "PYTHONPATH": str(Path(aprank.__file__).resolve().parents[1])}   # this aprank


@pytest.mark.slow
def test_make_figures_runs_what_needs_no_data_and_says_what_it_skipped(tmp_path):
    out = subprocess.run([sys.executable, "-m", "figures.make_figures", "--quick", "--out",
                          str(tmp_path / "out"), "--only", "fig_cstar_scaling", "fig_rank_heatmap"],
                         capture_output=True, text=True, timeout=600, env=_without_data(tmp_path),
                         cwd=REPOSITORY)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "out" / "fig_cstar_scaling-quick.png").exists()
    assert not (tmp_path / "out" / "fig_rank_heatmap-quick.png").exists()
    assert "Traceback" not in out.stderr
    assert "fig_rank_heatmap: skipped" in out.stderr and "APRANK_DATA" in out.stderr
    assert out.stderr.splitlines()[-1] == "skipped (data missing): fig_rank_heatmap"


@pytest.mark.slow
def test_a_figure_script_without_its_data_says_so_in_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "figures.fig_rank_heatmap", "--quick",
                          "--out", str(tmp_path / "out")], capture_output=True, text=True,
                         timeout=300, env=_without_data(tmp_path), cwd=REPOSITORY)
    assert out.returncode == 1
    assert len(out.stderr.strip().splitlines()) == 1 and "APRANK_DATA" in out.stderr


def test_figures_go_beside_the_scripts_by_default(monkeypatch, tmp_path):
    """Not into a figures/ under the current directory."""
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module("figures.fig_cstar_scaling")
    assert importlib.import_module("figures._tools").default_out(module) == FIGURES / "out"


def test_a_figure_without_its_packages_says_so_in_one_line(tmp_path, capsys):
    """fig_torch_peers needs optional packages: where one is missing, the script stops with one
    line naming it (exit status 1) and make_figures skips it, saying so."""
    tools = importlib.import_module("figures._tools")
    with pytest.raises(tools.MissingPackageError, match="no_such_module_xyz.*pip install x"):
        tools.require("json", "no_such_module_xyz", install="pip install x")
    tools.require("json", install="nothing")          # present: no error

    fake = type(sys)("figures.fig_fake")
    fake.NAME, fake.__doc__ = "fig_fake", "A figure that needs a missing package."
    fake.__file__ = str(tmp_path / "fig_fake.py")
    fake.compute = lambda quick: tools.require("no_such_module_xyz", install="pip install x")
    assert tools.figure_main(fake, ["--quick", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["fig_fake: needs no_such_module_xyz, not installed: pip install x"]


def test_make_figures_skips_a_figure_whose_packages_are_missing(monkeypatch, tmp_path, capsys):
    make = importlib.import_module("figures.make_figures")
    tools = importlib.import_module("figures._tools")
    fake = type(sys)("figures.fig_fake")
    fake.NAME = "fig_fake"
    fake.compute = lambda quick: tools.require("no_such_module_xyz", install="pip install x")
    monkeypatch.setattr(make, "scripts", lambda: [fake])
    assert make.main(["--quick", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "fig_fake: skipped, it needs no_such_module_xyz" in err
    assert err.strip().splitlines()[-1] == "skipped (packages missing): fig_fake"
