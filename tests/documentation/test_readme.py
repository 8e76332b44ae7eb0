"""The README stays true and short: its algorithm table, its CI command, every ```python block
(which runs as written), and at most 250 lines (the rest lives in docs/, which
tests/documentation/test_docs.py checks)."""
import importlib.util
import re
from pathlib import Path

import pytest

import aprank
from aprank_support.named_warnings import only_the_warnings_named_in

pytestmark = pytest.mark.min_versions   # also run against the declared minimum versions (.ci/run)

ROOT = Path(__file__).resolve().parents[2]
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


def test_readme_is_a_landing_page():
    """At most 250 lines: tables, benchmarks and the user guide live in docs/."""
    n_lines = len(README.splitlines())
    assert n_lines <= 250, f"README.md has {n_lines} lines; move detail into docs/"


def test_readme_links_resolve():
    """Every relative link of the README names a file or folder of the repository."""
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def python_sections():
    """(heading, code) per README section (## or ###) with ```python blocks: the blocks of a
    section in order, since later ones use what earlier ones define."""
    parts = re.split(r"^(#{2,3} .+)$", README, flags=re.M)
    sections = []
    for heading, body in zip(parts[1::2], parts[2::2]):
        blocks = re.findall(r"^```python\n(.*?)^```", body, flags=re.S | re.M)
        if blocks:
            sections.append((heading.lstrip("# ").strip(), blocks))
    return sections


SECTIONS = python_sections()
#: optional extras a block may import; without them its section skips, saying so
EXTRAS = {"torch": "aprank[torch]", "dask": "aprank[dask]"}


def test_python_blocks_are_found():
    assert len(SECTIONS) >= 2
    assert sum(len(blocks) for _, blocks in SECTIONS) == README.count("```python\n")


@pytest.mark.parametrize("heading,blocks", SECTIONS, ids=[h for h, _ in SECTIONS])
def test_readme_python_blocks_run_as_written(heading, blocks):
    """Every ```python block runs as written, its data defined in the README (scikit-learn's
    load_digits, random arrays, or aprank.datasets, which needs the data home); blocks meant
    only as illustrations are tagged ```text or ```console instead."""
    from aprank.datasets import DataUnavailableError

    code = "\n".join(blocks)
    for module, extra in EXTRAS.items():
        if re.search(rf"^\s*(import|from) {module}\b", code, flags=re.M) and \
                importlib.util.find_spec(module) is None:
            pytest.skip(f"{heading!r} needs {extra}")
    namespace = {"__name__": "__main__"}     # the dask example guards its cluster by this
    try:
        with only_the_warnings_named_in(code):
            for k, block in enumerate(blocks):
                exec(compile(block, f"README {heading} block {k + 1}", "exec"), namespace)
    except DataUnavailableError:
        pytest.skip(f"{heading!r} needs the data home (docs/data.md)")


def test_pytest_reports_why_a_test_skipped(tmp_path):
    """The README's `pytest` shows skip reasons (pyproject's addopts has -rs), so a data test
    that skips says which folder or file it missed."""
    import subprocess
    import sys

    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\ndef test_needs_data():\n    pytest.skip('no data here')\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"),
                          "--rootdir", str(tmp_path), "-p", "no:cacheprovider",
                          str(tmp_path / "test_skips.py")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout
    assert "SKIPPED" in out.stdout and "no data here" in out.stdout


def test_a_skip_is_one_short_line(tmp_path):
    """A skip reason over one short line fails the test (tests/conftest.py), so the README's
    `pytest` never prints skip lines of hundreds of characters; a short one skips."""
    import shutil
    import subprocess
    import sys

    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n"
        "def test_short():\n    pytest.skip('needs the data home (docs/data.md)')\n\n"
        "def test_long():\n    pytest.skip('the data home /somewhere lacks ' + 'x' * 80)\n\n"
        "def test_xfail_says_anything():\n    pytest.xfail('y' * 200)\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"),
                          "--rootdir", str(tmp_path), "-p", "no:cacheprovider",
                          str(tmp_path / "test_skips.py")],
                         capture_output=True, text=True, timeout=120)
    assert "1 failed, 1 skipped, 1 xfailed" in out.stdout, out.stdout
    assert "a skip reason of 111 characters, over the 72" in out.stdout, out.stdout


#: the README section that shows a real use: real data, defaults, a grid search, Dask
YAHOO = "Learning to rank: the Yahoo sample"


@pytest.mark.slow
def test_yahoo_block_runs_clean_in_a_fresh_interpreter():
    """The Yahoo block, as a user runs it: its own process, ``empty`` at its default (27 of the
    201 training queries have no relevant document). It fits and scores, in GridSearchCV with
    GroupKFold and routing and in DaskAPSVM on a LocalCluster, and prints no traceback and no
    WARNING line (no Dask shuffle or worker log); skips naming a data file it lacks."""
    import subprocess
    import sys

    from aprank import datasets

    for module in ("dask", "distributed"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{YAHOO!r} needs aprank[dask]")
    try:
        home = datasets.data_dir()
    except FileNotFoundError:
        pytest.skip(f"{YAHOO!r} needs the data home (docs/data.md)")
    missing = [rel for rel in datasets.REMOTE_FILES
               if rel.startswith("ltr/yahoo") and not (home / rel).is_file()]
    if missing:
        pytest.skip(f"{YAHOO!r} needs the data home (docs/data.md)")
    code = "\n".join(dict(SECTIONS)[YAHOO])
    # from the repository root, so that the checkout is the aprank imported
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "Traceback" not in output
    assert not [line for line in output.splitlines() if "WARNING" in line], output
    printed = run.stdout.splitlines()
    assert len(printed) == 3, output
    skipped, ap = printed[0].split()
    assert int(skipped) == 27 and 0.5 < float(ap) <= 1.0     # mean AP of the test queries
    assert printed[1].startswith("{'C': ") and 0.5 < float(printed[1].split()[-1]) <= 1.0
    # Dask's default OCAS and APSVM's multi-cut solve the same problem: objectives within tol
    dask_ap, same_objective = printed[2].split()
    assert 0.5 < float(dask_ap) <= 1.0 and same_objective == "True"
    # the one warning of the default: said once, before the filter the block then sets
    assert run.stderr.count("EmptyQueryWarning: 27 of 201 training queries") == 1, output


# ------------------------------------------------------------------ the first example
FIRST = "Loss-augmented inference"


def test_the_first_example_shows_a_violated_constraint_and_prints_it(capsys):
    """The scores rank a negative above a positive, so the most violated ranking has a loss and
    an objective above 0, and the block prints its results instead of leaving bare names."""
    namespace = {"__name__": "__main__"}
    exec(compile("\n".join(dict(SECTIONS)[FIRST]), "README first example", "exec"), namespace)
    res = namespace["res"]
    assert res.loss > 0 and res.objective > 0
    printed = capsys.readouterr().out
    for value in (res.loss, res.objective):
        assert f"{value:.4g}" in printed or repr(float(value)) in printed or str(value) in printed
    assert not re.search(r"^res\.\w+\s*(#.*)?$", dict(SECTIONS)[FIRST][0], flags=re.M)


# ------------------------------------------------------------------ the PyTorch note
def test_the_torch_note_names_the_cpu_wheel_index():
    """As PyTorch's own install selector gives it for a CPU build with pip."""
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in README


# ------------------------------------------------------------------ links into docs/
#: MyST markup that GitHub shows as code instead of rendering: directives and roles.
MYST = re.compile(r"^```\{[\w-]+\}|\{[\w:-]+\}`", re.M)
DOCS_HEADING = "## Documentation"


def test_the_readme_says_how_to_build_and_open_the_docs():
    section = README.split(DOCS_HEADING)[1]
    build = re.search(r"`(sphinx-build [^`]*docs docs/_build/html)`", section)
    assert build, section[:400]
    assert build.group(1) in (ROOT / "docs" / "development.md").read_text()
    assert "docs/_build/html/index.html" in section


def test_links_above_the_docs_section_point_to_pages_that_read_on_their_own():
    """Above "Documentation" (which says how to build the docs), a link into docs/ goes to a
    page without MyST directives or roles, which GitHub would show as raw code."""
    head = README.split(DOCS_HEADING)[0]
    for target in re.findall(r"\]\((docs/[^)#]+\.md)(?:#[^)]*)?\)", head):
        page = (ROOT / target).read_text()
        assert not MYST.search(page), f"README links {target}, which renders only once built"
