"""The command line: one clear line per error (exit 2 for usage, 1 for missing data), the
traceback only with --debug, help texts that say what a command needs, writes and takes, and
tables written where --out says."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import aprank
from aprank import __main__ as cli

CLOSED = "http://127.0.0.1:9"      # nothing listens: a download fails at once


def _usage_error(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    return info.value.code, capsys.readouterr().err


@pytest.mark.parametrize("argv,says", [
    (["check", "--max-n", "0"], "--max-n: must be at least 2"),
    (["check", "--max-n", "1"], "--max-n: must be at least 2"),
    (["check", "--n-trials", "0"], "--n-trials: must be at least 1"),
    (["check", "--n-trials", "ten"], "expected an integer"),
    (["bench", "--cstar", "--repeats", "0"], "--repeats: must be at least 1"),
    (["bench", "--cstar", "--max-seconds", "nan"], "--max-seconds: must be at least 0"),
    (["experiment", "nope"], "invalid choice: 'nope'"),
    (["experiment", "digits", "--jobs", "0"], "--jobs: must be at least 1"),
    (["experiment"], "required: NAME"),
    (["bench", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["nope"], "invalid choice: 'nope'"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_usage_errors_are_one_line_and_exit_2(argv, says, capsys):
    code, err = _usage_error(argv, capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert says in err and "--help" in err


@pytest.fixture
def no_data(tmp_path, monkeypatch):
    """No data in the data home and no network (the environment reaches subprocesses too)."""
    monkeypatch.setenv("APRANK_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("APRANK_DATA_URL", CLOSED)
    monkeypatch.setenv("PYTHONPATH", str(Path(aprank.__file__).resolve().parents[1]))
    return tmp_path


def test_missing_data_is_one_line_and_exit_1(no_data):
    out = subprocess.run([sys.executable, "-m", "aprank", "experiment", "birds", "--quick",
                          "--out", str(no_data / "tables")], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "hja_birdsong" in out.stderr and "export APRANK_DATA=" in out.stderr
    assert not (no_data / "tables").exists()


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(no_data, where):
    from aprank.datasets import DataUnavailableError

    argv = ["experiment", "birds", "--quick", "--out", str(no_data / "tables")]
    argv = ["--debug"] + argv if where == "before" else argv + ["--debug"]
    with pytest.raises(DataUnavailableError, match="APRANK_DATA"):
        cli.main(argv)


def test_an_unexpected_error_is_one_line_too(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("something\nbroke")

    monkeypatch.setattr(cli, "_cmd_algorithms", broken)      # looked up when the parser is built
    assert cli.main(["algorithms"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == ("python -m aprank algorithms: RuntimeError: something broke "
                           "(--debug shows the traceback)")
    with pytest.raises(RuntimeError):
        cli.main(["algorithms", "--debug"])


def test_acceptance_c_no_data_no_network_from_a_clean_directory(tmp_path):
    """A clean clone in a directory with no ../shared and no network: `experiment birds --quick`
    prints one line saying how to point APRANK_DATA at the data, and exits non-zero."""
    env = {k: v for k, v in os.environ.items() if k != "APRANK_DATA"}
    env.update(HOME=str(tmp_path / "home"), APRANK_DATA_URL=CLOSED,
               PYTHONPATH=str(Path(aprank.__file__).resolve().parents[1]))   # this aprank
    out = subprocess.run([sys.executable, "-m", "aprank", "experiment", "birds", "--quick"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    line, = out.stderr.strip().splitlines()
    assert "APRANK_DATA" in line and str(tmp_path / "home" / "aprank_data") in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []     # nothing written


HELP_NEEDS = re.compile(r"\bneeds?\b", re.I)
HELP_WRITES = re.compile(r"\bwrites?\b", re.I)
HELP_TAKES = re.compile(r"\btakes?\b", re.I)
SPHINX = re.compile(r":(func|mod|class|data|meth|attr):`|``")


@pytest.mark.parametrize("command", ["algorithms", "check", "bench", "experiment"])
def test_help_says_what_a_command_needs_writes_and_takes(command, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main([command, "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for what in (HELP_NEEDS, HELP_WRITES, HELP_TAKES):
        assert what.search(text), (what.pattern, text)
    assert not SPHINX.search(text)


def test_top_level_help_has_no_sphinx_markup(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = capsys.readouterr().out
    assert not SPHINX.search(text) and "--debug" in text


def test_experiment_help_names_every_experiments_data(capsys):
    with pytest.raises(SystemExit):
        cli.main(["experiment", "--help"])
    text = capsys.readouterr().out
    for name in cli.EXPERIMENT_NEEDS:
        assert re.search(rf"^\s+{re.escape(name)}\s+needs ", text, re.M), name
    assert set(cli.EXPERIMENT_NEEDS) >= set(cli.EXPERIMENTS)


def test_experiment_writes_where_out_says_and_never_a_figures_folder(monkeypatch, tmp_path,
                                                                     capsys):
    monkeypatch.setitem(cli.EXPERIMENTS, "digits", lambda quick: "| a table |\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["experiment", "digits", "--quick", "--out", str(tmp_path / "mine")]) == 0
    assert (tmp_path / "mine" / "digits-quick.md").read_text() == "| a table |\n"
    assert cli.main(["experiment", "digits"]) == 0                  # the documented default
    assert (tmp_path / cli.experiments.DEFAULT_OUT / "digits.md").exists()
    assert not (tmp_path / "figures").exists()
    assert "written to" in capsys.readouterr().out


def test_jobs_is_refused_for_an_experiment_that_runs_in_one_process(capsys):
    assert cli.main(["experiment", "yahoo", "--jobs", "2", "--out", "unused"]) == 2
    assert capsys.readouterr().err.strip().endswith("--jobs applies to digits, birds only, not yahoo")


def test_before_is_refused_without_fit(capsys):
    # it would otherwise be ignored, and the full benchmark would run instead
    assert cli.main(["bench", "--before", "elsewhere"]) == 2
    assert capsys.readouterr().err.strip().endswith("--before applies to --fit only")
