"""The command lines: one clear line per error (exit 2 for usage, 1 for missing data), the
traceback only with --debug, help texts that say what a command needs, writes and takes, and
tables written where --out says. The package's own (``python -m aprank``: algorithms, check,
bench --quick) and the repository's tools beside it (``python -m benchmarks``, ``python -m
experiments``), which the package's help and its bench command point to."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import aprank
from aprank import __main__ as cli
from benchmarks import __main__ as bench_cli
from experiments import __main__ as experiment_cli

CLOSED = "http://127.0.0.1:9"      # nothing listens: a download fails at once
REPOSITORY = Path(__file__).resolve().parents[1]
MAINS = {"aprank": cli.main, "benchmarks": bench_cli.main, "experiments": experiment_cli.main}


def _usage_error(main, argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code, capsys.readouterr().err


@pytest.mark.parametrize("tool,argv,says", [
    ("aprank", ["check", "--max-n", "0"], "--max-n: must be at least 2"),
    ("aprank", ["check", "--max-n", "1"], "--max-n: must be at least 2"),
    ("aprank", ["check", "--n-trials", "0"], "--n-trials: must be at least 1"),
    ("aprank", ["check", "--n-trials", "ten"], "expected an integer"),
    ("aprank", ["bench", "--quick", "--repeats", "0"], "--repeats: must be at least 1"),
    ("aprank", ["bench", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    ("aprank", ["bench", "--cstar"], "python -m benchmarks"),      # where the sections went
    ("aprank", ["nope"], "invalid choice: 'nope'"),
    ("aprank", ["experiment"], "invalid choice: 'experiment'"),   # python -m experiments NAME
    ("benchmarks", ["--cstar", "--repeats", "0"], "--repeats: must be at least 1"),
    ("benchmarks", ["--cstar", "--max-seconds", "nan"], "--max-seconds: must be at least 0"),
    ("benchmarks", ["--frobnicate"], "unrecognized arguments: --frobnicate"),
    ("benchmarks", ["--before", "elsewhere"], "--before applies to --fit and --targets only"),
    ("experiments", ["nope"], "invalid choice: 'nope'"),
    ("experiments", ["digits", "--jobs", "0"], "--jobs: must be at least 1"),
    ("experiments", [], "required: NAME"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_usage_errors_are_one_line_and_exit_2(tool, argv, says, capsys):
    code, err = _usage_error(MAINS[tool], argv, capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert says in err and "--help" in err


def test_bench_without_quick_is_one_line_naming_the_full_benchmark(capsys):
    """The full benchmark is a repository tool: exit 2, and the command that runs it."""
    assert cli.main(["bench"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "python -m benchmarks" in err and "repository tool" in err


def test_the_quick_bench_times_every_kind_but_latent():
    from aprank import _quick_bench
    rows = _quick_bench.timing_rows(cells=((5, 60),), repeats=1)
    kinds = {kind.name for kind in aprank.kinds()} - set(_quick_bench.LEFT_OUT)
    timed = {loss for _, _, _, loss, _, _, _ in rows}
    assert timed == {"-"} | {loss for kind in aprank.kinds() if kind.name in kinds
                             for loss in kind.losses()}
    assert rows[0][4] == "numpy.argsort" and rows[0][6] == 1.0
    assert all(seconds > 0 and ratio > 0 for *_, seconds, ratio in rows)
    table = _quick_bench.format_rows(rows)
    assert table.count("\n") == len(rows) + 1 and "| overlapping | 5 | 60 | ap | qs |" in table


@pytest.fixture
def no_data(tmp_path, monkeypatch):
    """No data in the data home and no network (the environment reaches subprocesses too)."""
    monkeypatch.setenv("APRANK_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("APRANK_DATA_URL", CLOSED)
    monkeypatch.setenv("PYTHONPATH", str(Path(aprank.__file__).resolve().parents[1]))
    return tmp_path


@pytest.mark.slow       # a few seconds: the quick lane stays under two minutes
def test_missing_data_is_one_line_and_exit_1(no_data):
    out = subprocess.run([sys.executable, "-m", "experiments", "birds", "--quick",
                          "--out", str(no_data / "tables")], capture_output=True, text=True,
                         timeout=300, cwd=REPOSITORY)
    assert out.returncode == 1
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "hja_birdsong" in out.stderr and "export APRANK_DATA=" in out.stderr
    assert not (no_data / "tables").exists()


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(no_data, where):
    from aprank.datasets import DataUnavailableError

    argv = ["birds", "--quick", "--out", str(no_data / "tables")]
    argv = ["--debug"] + argv if where == "before" else argv + ["--debug"]
    with pytest.raises(DataUnavailableError, match="APRANK_DATA"):
        experiment_cli.main(argv)


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


@pytest.mark.slow       # a few seconds: the quick lane stays under two minutes
def test_acceptance_c_no_data_no_network_from_a_clean_directory(tmp_path):
    """A clean clone in a directory with no ../shared and no network: `python -m experiments
    birds --quick` prints one line saying how to point APRANK_DATA at the data, and exits
    non-zero."""
    env = {k: v for k, v in os.environ.items() if k != "APRANK_DATA"}
    # this aprank, and the tools beside it (the current directory is elsewhere)
    env.update(HOME=str(tmp_path / "home"), APRANK_DATA_URL=CLOSED,
               PYTHONPATH=os.pathsep.join([str(Path(aprank.__file__).resolve().parents[1]),
                                           str(REPOSITORY)]))
    out = subprocess.run([sys.executable, "-m", "experiments", "birds", "--quick"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    line, = out.stderr.strip().splitlines()
    assert "APRANK_DATA" in line and str(tmp_path / "home" / "aprank_data") in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []     # nothing written


HELP_NEEDS = re.compile(r"\bneeds?\b", re.I)
HELP_WRITES = re.compile(r"\bwrites?\b", re.I)
HELP_TAKES = re.compile(r"\btakes?\b", re.I)
SPHINX = re.compile(r":(func|mod|class|data|meth|attr):`|``")


@pytest.mark.parametrize("tool,argv", [("aprank", ["algorithms"]), ("aprank", ["check"]),
                                       ("aprank", ["bench"]),
                                       ("benchmarks", []), ("experiments", [])],
                         ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_help_says_what_a_command_needs_writes_and_takes(tool, argv, capsys):
    with pytest.raises(SystemExit) as info:
        MAINS[tool](argv + ["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for what in (HELP_NEEDS, HELP_WRITES, HELP_TAKES):
        assert what.search(text), (what.pattern, text)
    assert not SPHINX.search(text)


@pytest.mark.parametrize("tool", ["aprank", "benchmarks", "experiments"])
def test_top_level_help_has_no_sphinx_markup(tool, capsys):
    with pytest.raises(SystemExit):
        MAINS[tool](["--help"])
    text = capsys.readouterr().out
    assert not SPHINX.search(text) and "--debug" in text


def test_the_package_help_names_the_tools_commands(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "python -m benchmarks" in text and "python -m experiments NAME" in text


def test_experiment_help_names_every_experiments_data(capsys):
    with pytest.raises(SystemExit):
        experiment_cli.main(["--help"])
    text = capsys.readouterr().out
    for name in experiment_cli.EXPERIMENT_NEEDS:
        assert re.search(rf"^\s+{re.escape(name)}\s+needs ", text, re.M), name
    assert set(experiment_cli.EXPERIMENT_NEEDS) >= set(experiment_cli.EXPERIMENTS)


def test_experiment_writes_where_out_says_and_by_default_into_figures_tables(monkeypatch,
                                                                              tmp_path, capsys):
    """The default is the folder the README includes the tables from, whatever the current
    directory: nothing is written under the current directory."""
    assert experiment_cli.DEFAULT_OUT == REPOSITORY / "figures" / "tables"
    monkeypatch.setitem(experiment_cli.EXPERIMENTS, "digits", lambda quick: "| a table |\n")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert experiment_cli.main(["digits", "--quick", "--out", str(tmp_path / "mine")]) == 0
    assert (tmp_path / "mine" / "digits-quick.md").read_text() == "| a table |\n"
    # the documented default, pointed away from the checkout's own tables for the test
    monkeypatch.setattr(experiment_cli, "DEFAULT_OUT", tmp_path / "figures" / "tables")
    assert experiment_cli.main(["digits"]) == 0
    assert (tmp_path / "figures" / "tables" / "digits.md").exists()
    assert sorted(work.iterdir()) == []
    assert "written to" in capsys.readouterr().out


def test_jobs_is_refused_for_an_experiment_that_runs_in_one_process(capsys):
    assert experiment_cli.main(["yahoo", "--jobs", "2", "--out", "unused"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "--jobs applies to digits, birds, nonlinear, nonlinear-explore only, not yahoo")


def test_before_is_refused_without_fit(capsys):
    # it would otherwise be ignored, and the full benchmark would run instead
    code, err = _usage_error(bench_cli.main, ["--before", "elsewhere"], capsys)
    assert code == 2 and "--before applies to --fit and --targets only" in err


def test_a_benchmark_section_writes_its_table_where_out_says(tmp_path, capsys):
    out = tmp_path / "iteration.md"
    argv = ["--iteration", "--n", "20000", "--n-queries", "20", "--d", "4", "--out", str(out)]
    assert bench_cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert out.read_text() == printed and "x inference" in printed


def test_a_benchmark_section_writes_its_results_file_headed_by_its_command(tmp_path, capsys):
    """--results DIR: DIR/<section>.md, first line the command that regenerates it and the
    machine, then what the section printed (the docs include benchmarks/results/*.md)."""
    argv = ["--iteration", "--n", "20000", "--n-queries", "20", "--d", "4",
            "--results", str(tmp_path / "results")]
    assert bench_cli.main(argv) == 0
    printed = capsys.readouterr().out
    header, blank, *body = (tmp_path / "results" / "iteration.md").read_text().splitlines()
    assert header.startswith("Regenerate: `python -m benchmarks --iteration`. Measured on ")
    assert blank == "" and "\n".join(body) + "\n" == printed


@pytest.mark.parametrize("tool,argv,command", [
    ("aprank", ["check", "--nope"], "python -m aprank check"),
    ("aprank", ["algorithms", "--nope"], "python -m aprank algorithms"),
    ("aprank", ["bench", "--quick", "--nope"], "python -m aprank bench"),
    ("benchmarks", ["--cstar", "--nope"], "python -m benchmarks"),
    ("experiments", ["birds", "--nope"], "python -m experiments"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_an_unknown_option_shows_the_usage_of_the_command_it_was_given_to(tool, argv, command,
                                                                         capsys):
    """`python -m aprank check --nope` once pointed to the top-level help; the line names
    the option and shows the usage and the help of the command that refused it."""
    code, err = _usage_error(MAINS[tool], argv, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"{command}: error: unrecognized arguments: --nope")
    assert f"usage: {command} [-h]" in err and err.rstrip().endswith(f"(see {command} --help)")


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"aprank {aprank.__version__}\n"


def test_the_console_script_is_declared_and_documented():
    """pyproject installs `aprank` (the same as `python -m aprank`); the README's command
    section and the command-line page say so."""
    text = (REPOSITORY / "pyproject.toml").read_text()
    scripts = re.search(r"^\[project\.scripts\]\n(.*?)(?:\n\[|\Z)", text, re.M | re.S).group(1)
    assert re.search(r'^aprank = "aprank\.__main__:main"$', scripts, re.M), scripts
    for page in ("README.md", "docs/cli.md"):
        assert "`aprank` console script" in (REPOSITORY / page).read_text(), page


# ------------------------------------------------------------- what a new user meets first
def _run(code_or_args, *, module=None, timeout=120):
    """Run ``python -c CODE`` or ``python -m MODULE ARGS`` from the repository root."""
    argv = [sys.executable, "-m", module, *code_or_args] if module else \
        [sys.executable, "-c", code_or_args]
    return subprocess.run(argv, cwd=REPOSITORY, capture_output=True, text=True, timeout=timeout)


def test_the_algorithm_table_fits_100_columns_and_keeps_every_field():
    out = _run(["algorithms"], module="aprank")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    flat = " ".join(out.stdout.split())
    for a in aprank.algorithms():
        for field in (a.name, a.complexity, a.reference):
            assert " ".join(field.split()) in flat, (a.name, field)


def test_help_names_the_figures_command_that_works(capsys):
    """`python figures/make_figures.py` fails (its imports need the repository root on the
    path); `python -m figures.make_figures` runs."""
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "python -m figures.make_figures" in text and "figures/make_figures.py" not in text
    assert "figures/make_figures.py" not in cli.__doc__


@pytest.mark.parametrize("argv0,prog", [("/usr/local/bin/aprank", "aprank"),
                                        ("/repo/aprank/__main__.py", "python -m aprank")])
def test_the_usage_line_names_the_command_as_it_was_run(argv0, prog):
    code = (f"import sys; sys.argv[0] = {argv0!r}; from aprank.__main__ import main; "
            f"sys.exit(main(['check', '--help']))")
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"usage: {prog} check "), out.stdout[:80]


def test_the_usage_line_of_python_m_aprank():
    out = _run(["--help"], module="aprank")
    assert out.stdout.startswith("usage: python -m aprank "), out.stdout[:80]


@pytest.mark.parametrize("argv,takes", [
    # measured on a 2-core AMD EPYC under load: check 13-15 s of CPU time (28-32 s wall), bench
    # --quick 35 s of CPU time (98-111 s wall); the help said 30 s and "a minute or two"
    (["check"], "takes about 15 s with the defaults"),
    (["bench"], "takes about 40 s"),
])
def test_help_states_the_measured_durations(argv, takes, capsys):
    with pytest.raises(SystemExit):
        cli.main(argv + ["--help"])
    assert takes in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("module", ["benchmarks", "experiments", "figures.make_figures"])
def test_the_tools_help_does_not_import_torch(module):
    """--help answers without importing PyTorch (seconds): the tools import it only in the
    commands that need it."""
    code = (f"import runpy, sys; sys.argv = [{module!r}, '--help']\n"
            f"try:\n    runpy.run_module({module!r}, run_name='__main__')\n"
            f"except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
            f"print('torch' in sys.modules, file=sys.stderr)")
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "False", out.stderr
    assert "usage:" in out.stdout


def test_make_figures_help_gives_its_whole_description():
    from figures import make_figures

    out = _run(["--help"], module="figures.make_figures")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    first = " ".join(make_figures.__doc__.split("\n\n")[0].split())
    assert first.replace("``", "") in text, text
    assert "skipped" in text        # the docstring's last paragraph: what happens without data
